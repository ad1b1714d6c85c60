"""``text_entities``: named entities and structured PII in the text columns, and how many of the
original's distinct entities reappear in the synthetic text (SynEval's ``named_entities``).

Entities come from an offline backend (spaCy by default, see :mod:`._backends`): persons (``PER``),
organisations (``ORG``), locations (``LOC``) and other names (``MISC``), plus e-mails, URLs, phone
numbers and ID-like codes found by patterns. Model entities pass SynEval's filters: 2 to 50
characters, not digits only, at least one letter or digit, no URL/e-mail look (``http``, ``@``, a dot
in the last word), no fragment (a word ending in ``-`` or ``&``). Entities are compared on their
case-folded text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ...core.results import Baseline, Evidence, MetricResult, RecordFlags, level_from_thresholds
from ...registry import Context, Param, register
from ._backends import load_backend
from ._cache import TextCache
from ._common import (
    Mentions,
    collect_docs,
    combine_levels,
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

__all__ = ["text_entities", "ENTITY_LABELS", "PATTERN_LABELS", "filter_entities", "entity_record_flags"]

ENTITY_LABELS = ("PER", "ORG", "LOC", "MISC")
PATTERN_LABELS = ("EMAIL", "URL", "PHONE", "ID", "NAME")


def _labels(v: Any) -> str | None:
    ok = isinstance(v, (list, tuple)) and v and all(x in ENTITY_LABELS + PATTERN_LABELS for x in v)
    return None if ok else f"must be a non-empty list among {list(ENTITY_LABELS + PATTERN_LABELS)}"


def filter_entities(text: pd.Series, label: pd.Series, *, min_chars: int = 2,
                    max_chars: int = 50) -> np.ndarray:
    """Boolean mask of the mentions kept by SynEval's filters (pattern PII is always kept).

    Dropped: shorter than ``min_chars`` or longer than ``max_chars``; digits only; no letter or
    digit; a URL or e-mail look (``http``, ``@``, or a dot in the last word); a fragment (a word
    ending in ``-`` or ``&``).
    """
    t = text.astype(str)
    n = t.str.len()
    last = t.str.split().str[-1].fillna("")
    bad = ((n < min_chars) | (n > max_chars) | t.str.isdigit() | ~t.str.contains(r"[^\W_]", regex=True)
           | t.str.lower().str.contains("http", regex=False) | t.str.contains("@", regex=False)
           | last.str.contains(".", regex=False) | t.str.contains(r"[-&](?:\s|$)", regex=True))
    return (label.isin(PATTERN_LABELS) | ~bad).to_numpy()


def _mentions(outputs: list[list[Any]], labels: Sequence[str], min_chars: int, max_chars: int) -> Mentions:
    doc, items, n_tokens = flatten(outputs)
    if not items:
        empty = np.empty(0, dtype=object)
        return Mentions(np.empty(0, np.int64), empty, empty, empty, n_tokens)
    text = pd.Series([it[0] for it in items], dtype=object)
    label = pd.Series([it[1] for it in items], dtype=object)
    keep = filter_entities(text, label, min_chars=min_chars, max_chars=max_chars) & label.isin(labels).to_numpy()
    text, label = text[keep], label[keep]
    return Mentions(doc[keep], entity_key(text).to_numpy(dtype=object), text.to_numpy(dtype=object),
                    label.to_numpy(dtype=object), n_tokens)


@register(
    "text_entities", family="text", direction="lower is safer",
    params=[
        *input_params(),
        Param("labels", list(ENTITY_LABELS + PATTERN_LABELS), "entity labels that count", (list, tuple),
              check=_labels),
        Param("min_chars", 2, "shortest entity kept (characters)", "positive int"),
        Param("max_chars", 50, "longest entity kept (characters)", "positive int"),
        *corpus_params("leaked entities listed"),
    ],
    thresholds={"high": 0.5, "density_high": 0.1},
    description="share of the original's distinct named entities (persons, organisations, places, "
                "PII patterns) that reappear in the synthetic text; density = entity mentions per token",
    risk='presence',
    knowledge=("a person's document; looks for the named entities it contains (names, places, "
               "dates) in the release's documents"),
    sees=('text',),
    presets=('privacy', 'full'),
    order=230,
    explainer=('Named entities of training documents (people, places, dates) reproduced in the '
               "release's documents, against held-out documents.")
)
def text_entities(ctx: Context, *, columns: str | Sequence[str] | None = None, backend: str = "auto",
                  model: str | None = None, device: str = "auto",
                  labels: Sequence[str] = ENTITY_LABELS + PATTERN_LABELS, min_chars: int = 2,
                  max_chars: int = 50, max_docs: int | None = None, top_k: int = 20,
                  n_process: int | None = None, batch_size: int = 256, cache: bool = True,
                  cache_dir: str | None = None) -> MetricResult:
    """Entity density of each table and the overlap of original entities with the synthetic text.

    Returns
    -------
    MetricResult
        ``value`` = overlap (share of distinct original entities found among the synthetic
        entities, Wilson interval over those entities), ``baseline`` = the same share for the control
        entities (when a control table is given). Details: ``original``/``synthetic``/``control``
        summaries (``total_mentions``, ``total_distinct``, ``density`` = mentions per token with a
        bootstrap interval, ``distinct_density`` = SynEval's distinct entities per token,
        ``risk_level``), ``overlap_percentage``, ``overlap_risk_level``, ``leaked``,
        ``leaked_not_in_control``, ``leaked_unique_to_one_document``, ``top_leaked``, ``backend``,
        ``model``, ``device``, ``degraded``, ``columns``, ``sampled``.
    """
    cols = text_columns(ctx, columns, "text_entities")
    be = load_backend(backend, model, device)
    store = TextCache(cache, cache_dir)
    th = ctx.thresholds
    density_high = float(th.get("density_high", 0.1))
    sampled = {}
    texts: dict[str, list[str]] = {}
    doc_rows: dict[str, np.ndarray] = {}
    for role in ctx.tables.roles:
        docs = collect_docs(ctx.tables.get(role), cols)
        idx = sample_indices(len(docs), max_docs, ctx.rng("sample", role))
        sampled[role] = {"documents": len(docs), "analysed": int(idx.size)}
        taken = docs.take(idx)
        texts[role] = taken.texts
        doc_rows[role] = taken.rows
    outputs = role_outputs("entities", ctx, be, texts, store, n_process=n_process, batch_size=batch_size)
    mentions = {role: _mentions(out, labels, min_chars, max_chars) for role, out in outputs.items()}
    summaries = {role: role_summary(m, ctx.rng("density", role), density_high) for role, m in mentions.items()}
    ov = overlap_summary(mentions["original"], mentions["synthetic"], mentions.get("control"), top_k)
    result = build_result("text_entities", "entities", ctx, be, cols, summaries, ov, sampled,
                          density_high)
    if "control" not in mentions or not len(ctx.tables.control):
        return result
    if any(sampled[r]["analysed"] < sampled[r]["documents"] for r in ("original", "control")):
        return result  # per-record flags need every training and control document
    flags = entity_record_flags(mentions["original"], doc_rows["original"],
                                len(ctx.tables.original), mentions["control"],
                                doc_rows["control"], len(ctx.tables.control), mentions["synthetic"])
    evidence = Evidence.from_flags(
        "share of records with a named entity found in no other real record that the release "
        "reproduces", flags, sees=("text",), risk="presence",
        baseline="control records' entities against the same release",
        note="only records with an entity no other real record (training or control) mentions can "
             "be flagged: common entities cannot tell members from non-members")
    return replace(result, evidence=evidence)


def entity_record_flags(orig: Mentions, orig_rows: np.ndarray, n_orig: int, ctl: Mentions,
                        ctl_rows: np.ndarray, n_ctl: int, release: Mentions) -> RecordFlags:
    """Per training and control record: does the release reproduce an entity that no other real
    record mentions (unique in the pooled real data, label-free)?

    ``orig_rows[d]`` is the record of document ``d`` (``Mentions.doc`` indexes documents).
    ``responds["text"]``: the record has such an entity (a copy of its text would reproduce it).

    Examples
    --------
    >>> import numpy as np
    >>> from synthguard.metrics.text._common import Mentions
    >>> m = lambda d, k: Mentions(np.array(d), np.array(k, dtype=object), np.array(k, dtype=object),
    ...                           np.array(["PER"] * len(k), dtype=object), np.ones(3, np.int64))
    >>> f = entity_record_flags(m([0, 1], ["ann", "bob"]), np.array([0, 1]), 2,
    ...                         m([0], ["bob"]), np.array([0]), 1, m([0, 0], ["ann", "bob"]))
    >>> f.member.tolist(), f.non_member.tolist(), f.responds["text"].tolist()
    ([True, False], [False], [True, False])
    """
    rec = np.concatenate([orig_rows[orig.doc], n_orig + ctl_rows[ctl.doc]]).astype(np.int64)
    keys = pd.Series(np.concatenate([orig.key, ctl.key]), dtype=object)
    pairs = pd.DataFrame({"rec": rec, "key": keys}).drop_duplicates()
    per_key = pairs.groupby("key", sort=False)["rec"].transform("size").to_numpy()
    unique = pairs[per_key == 1]
    in_release = unique["key"].isin(set(release.key.tolist())).to_numpy()
    n = n_orig + n_ctl
    visible = np.zeros(n, dtype=bool)
    visible[unique["rec"].to_numpy()] = True
    flag = np.zeros(n, dtype=bool)
    flag[unique["rec"].to_numpy()[in_release]] = True
    return RecordFlags(flag[:n_orig], flag[n_orig:], {"text": visible[:n_orig]})


def build_result(name: str, noun: str, ctx: Context, be: Any, cols: list[str],
                 summaries: dict[str, dict[str, Any]], ov: dict[str, Any], sampled: dict[str, Any],
                 density_high: float) -> MetricResult:
    """Assemble the result shared by ``text_entities`` and ``text_nominals``."""
    th = ctx.thresholds
    value = ov["overlap"]
    warnings = [be.warning] if be.warning else []
    ov_level = level_from_thresholds(value, {k: th[k] for k in ("medium", "high") if k in th},
                                     "lower is safer")
    if value is None:
        ov_level = "low"
        warnings.append(f"no {noun} found in the original text: nothing to leak by this measure")
    if "baseline" in ov and ov["baseline"] is not None and value is not None:
        base = Baseline(ov["baseline"], f"share of the control table's distinct {noun} found in the "
                        "synthetic text (what a generator that never saw the original reaches)",
                        ov["baseline_ci"])
        if ov["overlap_ci"][0] <= ov["baseline"]:
            warnings.append(f"{noun} overlap is not above the holdout baseline: the shared {noun} are "
                            "common ones, not evidence of copying")
            ov_level = "low"
    else:
        base = Baseline(None, "no baseline: give a control table (real rows held out from training) "
                              f"to see how many {noun} any text from the population shares")
    syn_level = summaries["synthetic"]["risk_level"]
    if any(s["analysed"] < s["documents"] for s in sampled.values()):
        warnings.append("computed on a seeded sample of documents per table (max_docs): counts and "
                        "overlap are for the samples, and a sampled overlap usually understates the "
                        "full-corpus one; max_docs=null analyses every document")
    details = {
        "original": summaries["original"], "synthetic": summaries["synthetic"],
        "overlap_percentage": None if value is None else 100.0 * value,
        "overlap_risk_level": ov_level, "density_threshold": density_high,
        **{k: v for k, v in ov.items() if k not in ("overlap", "overlap_ci", "baseline", "baseline_ci")},
        **be.describe(), "columns": cols, "sampled": sampled,
    }
    if "control" in summaries:
        details["control"] = summaries["control"]
    return MetricResult(name=name, family="text", value=value, direction="lower is safer",
                        baseline=base, ci=ov["overlap_ci"], n=ov["distinct_original"],
                        risk_level=combine_levels(ov_level, syn_level),
                        warning="; ".join(warnings) or None, details=details)
