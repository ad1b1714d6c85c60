"""``text_nominals``: mentions of people, roles and relationships (SynEval's ``nominal_mentions``).

A token is a nominal mention when it is a proper noun, a noun in subject position (``nsubj`` /
``nsubjpass``), or a noun from the family / role / relationship lexicons; it must be 2 to 30
characters, contain a letter or digit, not be digits only, not be a stop word or a generic review
word, and (for common nouns) be at least 3 characters. Mentions are compared case-folded.
The rule backend has no tagger or parser: it counts capitalised words that do not start a sentence
and lexicon words only (``degraded``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...core.results import MetricResult
from ...registry import Context, register
from ._backends import load_backend
from ._cache import TextCache
from ._common import (
    Mentions,
    collect_docs,
    corpus_params,
    entity_key,
    flatten,
    input_params,
    overlap_summary,
    role_outputs,
    role_summary,
    sample_indices,
    text_columns,
)
from .entities import build_result

__all__ = ["text_nominals", "FAMILY", "ROLES", "RELATIONSHIPS", "GENERIC_WORDS"]

FAMILY = frozenset("""mother father mom mum dad sister brother daughter son wife husband spouse partner
grandmother grandfather grandma grandpa grandson granddaughter aunt uncle cousin niece nephew family
relative parent parents child children kid kids baby fiance fiancee stepmother stepfather""".split())
ROLES = frozenset("""teacher student doctor nurse patient client employee employer manager director
officer agent representative consultant advisor adviser expert specialist professional worker staff
member participant user boss coworker landlord tenant lawyer attorney pharmacist dentist therapist
physician surgeon pastor coach trainer nanny caregiver vet veterinarian""".split())
RELATIONSHIPS = frozenset("""friend colleague neighbor neighbour associate companion acquaintance
contact connection ally supporter follower leader mentor mentee supervisor subordinate peer
roommate classmate girlfriend boyfriend""".split())
# generic words of review/feedback text that are never a person (SynEval skips a similar list)
GENERIC_WORDS = frozenset("""nan none null n/a na no yes ok okay good bad great nice fine well five
star stars rating review reviews product products item items price quality size sizes color colors
colour colours shipping delivery order orders buy bought purchase purchased seller sellers buyer
buyers customer customers thank thanks please help helpful unhelpful recommend recommended""".split())
_LIGHT_VERBS = frozenset("be have do get make take go come".split())


def _mentions(outputs: list[list[Any]]) -> Mentions:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS as STOP_WORDS

    doc, items, n_tokens = flatten(outputs)
    if not items:
        empty = np.empty(0, dtype=object)
        return Mentions(np.empty(0, np.int64), empty, empty, empty, n_tokens)
    text = pd.Series([it[0] for it in items], dtype=object).astype(str)
    pos = pd.Series([it[1] for it in items], dtype=object)
    subj = np.fromiter((it[2] for it in items), dtype=bool, count=len(items))
    low = text.str.lower()
    n = text.str.len()
    is_noun = (pos == "NOUN").to_numpy()
    in_lex = low.isin(FAMILY | ROLES | RELATIONSHIPS).to_numpy()
    # no in-place ``&=``: under pandas copy-on-write (the default from pandas 3) ``to_numpy()``
    # returns a read-only view
    ok = ((n >= 2) & (n <= 30) & ~text.str.isdigit() & text.str.contains(r"[^\W_]", regex=True)
          & ~low.isin(STOP_WORDS) & ~low.isin(GENERIC_WORDS)).to_numpy()
    ok = ok & ~(is_noun & (n < 3).to_numpy() & ~text.str[:1].str.isupper().to_numpy())
    ok = ok & ~(is_noun & low.isin(_LIGHT_VERBS).to_numpy())
    nominal = (pos == "PROPN").to_numpy() | subj | (is_noun & in_lex)
    keep = ok & nominal
    text = text[keep]
    kind = np.where(pos[keep] == "PROPN", "proper noun",
                    np.where(in_lex[keep], "role/relationship", "subject noun"))
    return Mentions(doc[keep], entity_key(text).to_numpy(dtype=object), text.to_numpy(dtype=object),
                    kind.astype(object), n_tokens)


@register(
    "text_nominals", family="text", direction="lower is safer",
    params=[
        *input_params(),
        *corpus_params("leaked mentions listed"),
    ],
    thresholds={"high": 0.5, "density_high": 0.15},
    description="share of the original's distinct person/role/relationship mentions (proper nouns, "
                "subject nouns, role words) that reappear in the synthetic text; density = mentions per token",
    risk='presence',
    knowledge=("a person's document; looks for its nominal mentions (people, roles) in the "
               "release's documents"),
    presets=('privacy', 'full'),
    order=240,
    explainer=("Nominal mentions of people and roles from training documents in the release's "
               'documents.')
)
def text_nominals(ctx: Context, *, columns: str | Sequence[str] | None = None, backend: str = "auto",
                  model: str | None = None, device: str = "auto", max_docs: int | None = None,
                  top_k: int = 20, n_process: int | None = None, batch_size: int = 256,
                  cache: bool = True, cache_dir: str | None = None) -> MetricResult:
    """Nominal-mention density of each table and the overlap of original mentions with the synthetic text.

    Returns
    -------
    MetricResult
        Same shape as ``text_entities``: ``value`` = overlap, ``baseline`` = control overlap,
        per-table ``density`` (mentions per token) and ``distinct_density`` (SynEval's), the
        ``top_leaked`` mentions with their kind (proper noun, subject noun, role/relationship).
    """
    cols = text_columns(ctx, columns, "text_nominals")
    be = load_backend(backend, model, device)
    store = TextCache(cache, cache_dir)
    density_high = float(ctx.thresholds.get("density_high", 0.15))
    lexicon = sorted(FAMILY | ROLES | RELATIONSHIPS)
    sampled = {}
    texts: dict[str, list[str]] = {}
    for role in ctx.tables.roles:
        docs = collect_docs(ctx.tables.get(role), cols)
        idx = sample_indices(len(docs), max_docs, ctx.rng("sample", role))
        sampled[role] = {"documents": len(docs), "analysed": int(idx.size)}
        texts[role] = docs.take(idx).texts
    outputs = role_outputs("nominals", ctx, be, texts, store, n_process=n_process, batch_size=batch_size,
                           extra=lexicon if be.name == "rules" else None)
    mentions = {role: _mentions(out) for role, out in outputs.items()}
    summaries = {role: role_summary(m, ctx.rng("density", role), density_high) for role, m in mentions.items()}
    ov = overlap_summary(mentions["original"], mentions["synthetic"], mentions.get("control"), top_k)
    for rec in ov["top_leaked"]:
        rec["kind"] = rec.pop("label")
    return build_result("text_nominals", "nominal mentions", ctx, be, cols, summaries, ov, sampled,
                        density_high)
