"""Shared helpers of the text metrics: choosing text columns, collecting documents, normalising,
sampling and a few parameter checks.

A *document* is one non-missing cell of a text column. Metrics pool the documents of every chosen
column; matching (copies) only compares documents of the same column.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ...errors import ConfigError, MetricError
from ...registry import Context, Interval, Param

__all__ = ["input_params", "corpus_params", "Docs", "text_columns", "collect_docs", "normalise", "word_tokens", "sample_indices",
           "texts_digest", "check_columns", "combine_levels", "nlp_outputs", "role_outputs", "shared_outputs"]

_TAG = re.compile(r"<[^>]{0,40}>")
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"[0-9a-z]+(?:'[a-z]+)?")
_LEVELS = ("unknown", "not meaningful", "low", "medium", "high")


@dataclass(frozen=True)
class Docs:
    """The documents of one role: texts with their row index and column name."""

    texts: list[str]
    rows: np.ndarray
    columns: np.ndarray
    n_rows: int

    def __len__(self) -> int:
        return len(self.texts)

    def take(self, idx: np.ndarray) -> Docs:
        idx = np.asarray(idx, dtype=np.int64)
        return Docs([self.texts[i] for i in idx], self.rows[idx], self.columns[idx], self.n_rows)


def check_columns(v: Any) -> str | None:
    if isinstance(v, str):
        return None
    if isinstance(v, (list, tuple)) and v and all(isinstance(c, str) for c in v):
        return None
    return "must be a column name or a non-empty list of column names, e.g. ['review']"


def text_columns(ctx: Context, columns: str | Sequence[str] | None, metric: str) -> list[str]:
    """The text columns a metric works on: ``columns`` if given, else the schema's text columns.

    Raises
    ------
    ConfigError
        A named column is not in the data.
    MetricError
        There is no text column at all.
    """
    names = list(ctx.tables.schema.columns)  # the tables' columns, in one process or on a cluster
    if columns is not None:
        chosen = [columns] if isinstance(columns, str) else list(columns)
        missing = [c for c in chosen if c not in names]
        if missing:
            raise ConfigError(f"metric {metric!r}: parameter 'columns' names {missing[0]!r}, which is not "
                              f"a column of the data; choose among {names}")
        return list(dict.fromkeys(chosen))
    found = list(ctx.tables.schema.text_columns)
    if not found:
        raise MetricError("no text column: declare one under 'text_columns' (or sdtype 'text') in the "
                          "metadata, or pass the parameter columns=[...]")
    return found


def collect_docs(frame: pd.DataFrame, columns: Sequence[str]) -> Docs:
    """Every non-missing cell of ``columns`` as a string document (loops over columns only)."""
    texts: list[str] = []
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    for c in columns:
        s = frame[c]
        mask = s.notna().to_numpy()
        vals = s[mask].astype(str)
        keep = (vals.str.strip() != "").to_numpy()
        idx = np.flatnonzero(mask)[keep]
        texts.extend(vals[keep].tolist())
        rows.append(idx.astype(np.int64))
        cols.append(np.full(idx.size, c, dtype=object))
    return Docs(texts, np.concatenate(rows) if rows else np.empty(0, np.int64),
                np.concatenate(cols) if cols else np.empty(0, object), int(len(frame)))


def normalise(texts: Sequence[str]) -> list[str]:
    """Case-folded text with HTML tags removed and white space collapsed (for copy detection)."""
    s = pd.Series(list(texts), dtype=object).astype(str)
    s = s.str.replace(_TAG, " ", regex=True).str.casefold().str.replace(_SPACE, " ", regex=True).str.strip()
    return s.tolist()


def word_tokens(texts: Sequence[str]) -> list[list[str]]:
    """Lower-case word tokens (letters/digits, inner apostrophes kept) after removing HTML tags."""
    s = pd.Series(list(texts), dtype=object).astype(str)
    s = s.str.replace(_TAG, " ", regex=True).str.lower()
    return s.str.findall(_WORD).tolist()


def sample_indices(n: int, max_docs: int | None, rng: np.random.Generator) -> np.ndarray:
    """All of ``range(n)`` or a sorted seeded sample of ``max_docs`` of them."""
    if max_docs is None or n <= max_docs:
        return np.arange(n, dtype=np.int64)
    return np.sort(rng.choice(n, size=max_docs, replace=False)).astype(np.int64)


def texts_digest(texts: Sequence[str]) -> str:
    """SHA-256 of a list of texts (order matters), for cache keys."""
    h = hashlib.sha256()
    for t in texts:
        b = t.encode("utf-8", "surrogatepass")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


def combine_levels(*levels: str) -> str:
    """The worst of several risk levels (``high`` > ``medium`` > ``low`` > ``not meaningful``)."""
    known = [lv for lv in levels if lv in _LEVELS]
    if not known:
        return "unknown"
    return max(known, key=_LEVELS.index)


# ------------------------------------------------------------------------------- NLP outputs + mentions
def nlp_outputs(kind: str, backend: Any, texts: Sequence[str], cache: Any, *, n_process: int | None,
                batch_size: int, extra: Any = None) -> list[list[Any]]:
    """Per-text NLP outputs (``kind`` = ``"entities"`` or ``"nominals"``), computed once per distinct
    text and cached under a key made of the distinct texts, the backend signature and ``extra``."""
    from ._backends import extract_entities, extract_nominal_candidates
    from ._cache import cache_key

    uniq = sorted(set(texts))
    key = cache_key(kind=kind, backend=backend.signature(), texts=texts_digest(uniq), extra=extra)
    got = cache.get(key)
    if got is None or len(got) != len(uniq):
        n_process = _auto_n_process(backend, len(uniq), n_process)
        if kind == "entities":
            got = extract_entities(backend, uniq, batch_size=batch_size, n_process=n_process)
        else:
            got = extract_nominal_candidates(backend, uniq, batch_size=batch_size, n_process=n_process,
                                             lexicon=frozenset(extra or ()))
        cache.put(key, got)
    pos = {t: i for i, t in enumerate(uniq)}
    return [got[pos[t]] for t in texts]


def _auto_n_process(backend: Any, n_texts: int, n_process: int | None) -> int:
    """``n_process`` if given, else 2 workers for >= 1500 texts on a CPU spaCy backend with >= 2 cores."""
    import os

    if n_process is not None:
        return n_process
    cpus = os.cpu_count() or 1
    return 2 if (backend.name == "spacy" and backend.device == "cpu" and cpus >= 2 and n_texts >= 1500) else 1


def role_outputs(kind: str, ctx: Context, backend: Any, texts: dict[str, list[str]], cache: Any, *,
                 n_process: int | None, batch_size: int, extra: Any = None) -> dict[str, list[list[Any]]]:
    """Per-text NLP outputs of every role (``kind`` = ``"entities"`` or ``"nominals"``).

    With the spaCy backend both kinds come from ONE shared pass per distinct text (see
    :func:`shared_outputs`), so when ``text_entities`` and ``text_nominals`` run in the same
    evaluation the second costs no NLP at all. Other backends run their own extraction per role.
    """
    if backend.name == "spacy":
        shared = shared_outputs(ctx, backend, texts, cache, n_process=n_process, batch_size=batch_size)
        j = 0 if kind == "entities" else 1
        return {role: [pair[j] for pair in pairs] for role, pairs in shared.items()}
    return {role: nlp_outputs(kind, backend, t, cache, n_process=n_process, batch_size=batch_size, extra=extra)
            for role, t in texts.items()}


def shared_outputs(ctx: Context, backend: Any, texts: dict[str, list[str]], cache: Any, *,
                   n_process: int | None, batch_size: int) -> dict[str, list[list[Any]]]:
    """``[entities output, nominals output]`` per text of every role, from one spaCy pass per
    distinct text over ALL roles (texts shared by two tables are analysed once).

    Three layers: a per-text entry of the run's ``ctx.memo`` (shared by the metrics of one run, also
    with ``cache=False``, which only turns the next layer off), the disk cache (one entry per role, keyed by the role's distinct texts and the backend signature, so
    a later run with the same original table reuses it), then the NLP pass on the texts still missing.
    """
    import json

    from ._backends import extract_shared
    from ._cache import cache_key

    sig = backend.signature()
    memo: dict[str, Any] = ctx.memo("text_nlp:" + json.dumps(sig, sort_keys=True), dict)
    pending: list[tuple[str, list[str]]] = []
    for t in texts.values():
        uniq = sorted(set(t))
        if all(x in memo for x in uniq):
            continue
        key = cache_key(kind="shared", backend=sig, texts=texts_digest(uniq))
        got = cache.get(key)
        if got is not None and len(got) == len(uniq):
            memo.update(zip(uniq, got, strict=True))
        else:
            pending.append((key, uniq))
    missing = sorted({x for _, uniq in pending for x in uniq} - memo.keys())
    if missing:
        ents, noms = extract_shared(backend, missing, batch_size=batch_size,
                                    n_process=_auto_n_process(backend, len(missing), n_process))
        memo.update((x, [e, n]) for x, e, n in zip(missing, ents, noms, strict=True))
    for key, uniq in pending:
        cache.put(key, [memo[x] for x in uniq])
    return {role: [memo[x] for x in t] for role, t in texts.items()}


@dataclass(frozen=True)
class Mentions:
    """Flattened mentions of one role: document index, normalised key, surface text and label."""

    doc: np.ndarray
    key: np.ndarray
    text: np.ndarray
    label: np.ndarray
    n_tokens: np.ndarray

    @property
    def n_docs(self) -> int:
        return int(self.n_tokens.size)


def flatten(outputs: Sequence[list[Any]]) -> tuple[np.ndarray, list[Any], np.ndarray]:
    """``(doc index per item, items, tokens per doc)`` from per-document ``[n_tokens, items]``."""
    n_tokens = np.fromiter((o[0] for o in outputs), dtype=np.int64, count=len(outputs))
    sizes = np.fromiter((len(o[1]) for o in outputs), dtype=np.int64, count=len(outputs))
    items = [it for o in outputs for it in o[1]]
    return np.repeat(np.arange(len(outputs), dtype=np.int64), sizes), items, n_tokens


def entity_key(texts: pd.Series) -> pd.Series:
    """Normalised mention key: case-folded, white space collapsed."""
    return texts.str.casefold().str.replace(_SPACE, " ", regex=True).str.strip()


def _ratio(num: np.ndarray, den: np.ndarray) -> float:
    d = float(den.sum())
    return float(num.sum()) / d if d > 0 else float("nan")


def _ratio_ci(num: np.ndarray, den: np.ndarray, rng: np.random.Generator, n_boot: int = 400,
              confidence_level: float = 0.95) -> tuple[float, float] | None:
    """Percentile bootstrap interval of ``sum(num) / sum(den)`` resampling documents jointly
    (``synthguard.stats.bootstrap_ci``); None when undefined (fewer than 2 documents, no tokens)."""
    from ...stats import bootstrap_ci

    if num.size < 2 or den.sum() <= 0:
        return None
    lo, hi = bootstrap_ci(_ratio, [np.asarray(num, np.float64), np.asarray(den, np.float64)],
                          n_boot=n_boot, confidence_level=confidence_level, seed=rng)
    return None if np.isnan(lo) else (lo, hi)


def role_summary(m: Mentions, rng: np.random.Generator, density_high: float) -> dict[str, Any]:
    """Counts, densities (with a bootstrap interval) and the density risk level of one role."""
    from ...core.results import level_from_thresholds

    tokens = int(m.n_tokens.sum())
    per_doc = np.bincount(m.doc, minlength=m.n_docs) if m.n_docs else np.zeros(0, np.int64)
    mentions = int(m.doc.size)
    distinct = int(pd.unique(m.key).size) if m.key.size else 0
    density = mentions / tokens if tokens else float("nan")
    level = level_from_thresholds(density if tokens else None, {"high": density_high}, "lower is safer")
    return {"documents": m.n_docs, "tokens": tokens, "total_mentions": mentions,
            "total_distinct": distinct, "density": density,
            "density_ci": _ratio_ci(per_doc, m.n_tokens, rng) if tokens else None,
            "distinct_density": distinct / tokens if tokens else float("nan"),
            "risk_level": level}


def overlap_summary(orig: Mentions, syn: Mentions, control: Mentions | None, top_k: int,
                    confidence_level: float = 0.95) -> dict[str, Any]:
    """Share of distinct original keys found among the synthetic keys, its Wilson interval, the
    holdout baseline (control keys found in synthetic) and the top leaked keys."""
    from ...stats import wilson_interval

    def doc_freq(m: Mentions) -> pd.Series:
        if not m.key.size:
            return pd.Series(dtype=np.int64)
        return pd.DataFrame({"k": m.key, "d": m.doc}).drop_duplicates().groupby("k").size()

    fo, fs = doc_freq(orig), doc_freq(syn)
    fc = doc_freq(control) if control is not None else None
    o_keys = fo.index
    found = o_keys.isin(fs.index)
    k, n = int(found.sum()), int(o_keys.size)
    out: dict[str, Any] = {"distinct_original": n, "leaked": k,
                           "overlap": k / n if n else None,
                           "overlap_ci": wilson_interval(k, n, confidence_level) if n else None}
    if fc is not None:
        kc, nc = int(fc.index.isin(fs.index).sum()), int(fc.index.size)
        out["baseline"] = kc / nc if nc else None
        out["baseline_ci"] = wilson_interval(kc, nc, confidence_level) if nc else None
        out["baseline_n"] = nc
        in_control = o_keys.isin(fc.index)
        out["leaked_not_in_control"] = int((found & ~in_control).sum())
    else:
        in_control = np.zeros(n, dtype=bool)
    out["leaked_unique_to_one_document"] = int((found & (fo.to_numpy() == 1)).sum())
    # the top leaked keys, then their surface form and most frequent label (only for those listed)
    if n:
        leaked = pd.DataFrame({"key": o_keys, "original_documents": fo.to_numpy(),
                               "in_control": np.asarray(in_control)})[found]
        leaked["synthetic_documents"] = fs.reindex(leaked["key"]).to_numpy()
        leaked = leaked.sort_values(["in_control", "original_documents", "synthetic_documents", "key"],
                                    ascending=[True, True, False, True], kind="mergesort").head(top_k)
        frame = pd.DataFrame({"k": orig.key, "t": orig.text, "l": orig.label})
        frame = frame[frame["k"].isin(leaked["key"])]
        counts = frame.groupby(["k", "l"]).size().rename("c").reset_index()
        label = counts.sort_values(["k", "c", "l"], ascending=[True, False, True],
                                   kind="mergesort").drop_duplicates("k").set_index("k")["l"]
        text = frame.drop_duplicates("k").set_index("k")["t"]
        leaked["text"] = text.reindex(leaked["key"]).to_numpy()
        leaked["label"] = label.reindex(leaked["key"]).to_numpy()
        cols = ["text", "label", "original_documents", "synthetic_documents"]
        if control is not None:
            cols.append("in_control")
        out["top_leaked"] = leaked[cols].to_dict("records")
    else:
        out["top_leaked"] = []
    return out


def input_params() -> list[Param]:
    """Parameters choosing the text columns and the NLP backend (shared by the spaCy-based metrics)."""
    return [
        Param("columns", None, "text columns to analyse (default: the schema's text columns)",
              (str, list, tuple), check=check_columns),
        Param("backend", "auto", "NLP backend: auto (spaCy, else rules), spacy, rules or flair", str,
              choices=("auto", "spacy", "rules", "flair")),
        Param("model", None, "spaCy package name or model folder tried first (or a Flair model path)", str),
        Param("device", "auto", "auto (GPU when present), cpu or cuda", str, choices=("auto", "cpu", "cuda")),
    ]


def corpus_params(listed: str) -> list[Param]:
    """Parameters of the corpus pass: sampling, listing, workers, batching and the NLP cache."""
    return [
        Param("max_docs", None, "documents analysed per table: null (default) = every document; an "
              "integer = a seeded sample of that many, faster but the sampled overlap usually "
              "understates the full-corpus one", int,
              interval=Interval(10)),
        Param("top_k", 20, listed, "positive int"),
        Param("n_process", None, "spaCy worker processes (null = 2 for large inputs on >= 2 cores)", "positive int"),
        Param("batch_size", 256, "documents per spaCy batch", "positive int"),
        Param("cache", True, "reuse NLP outputs from the cache", bool),
        Param("cache_dir", None, "cache folder (default $SYNTHGUARD_CACHE_DIR or ~/.cache/synthguard)", str),
    ]
