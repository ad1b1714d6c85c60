"""``text_style_outliers``: documents whose style sets them apart (SynEval's ``stylistic_outliers``).

A Word2Vec model is trained locally (gensim, seeded, one worker: reproducible) on the tokens of the
original and synthetic documents together (lower-cased words, English stop words removed), in sorted
text order so the row order of the inputs does not matter. A document's
embedding is the mean of its word vectors. Within each table, a document's score is its mean cosine
distance to every other document of that table, computed without an n x n matrix:
with unit vectors ``u_i`` and ``s = sum_j u_j``, ``mean_dist_i = 1 - (u_i . s - u_i . u_i) / (n - 1)``
(an empty document has the zero vector, distance 1 to all). Scores are z-scored within the table;
``z > z_threshold`` (2) marks an outlier.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...core.results import Baseline, MetricResult, level_from_thresholds
from ...registry import Context, Interval, Param, RecordsCard, register
from ...stats import difference_ci, wilson_interval
from ._cache import TextCache, cache_key
from ._common import (
    check_columns,
    collect_docs,
    combine_levels,
    sample_indices,
    text_columns,
    texts_digest,
    word_tokens,
)

__all__ = ["text_style_outliers", "mean_cosine_distance", "doc_embeddings"]


def _crc_hash(s: str) -> int:
    """Process-independent string hash for gensim's vector initialisation (Python's is salted)."""
    return zlib.crc32(s.encode("utf-8"))


def mean_cosine_distance(emb: np.ndarray) -> np.ndarray:
    """Mean cosine distance of each row to every other row, in O(n d) memory and time.

    Zero rows count as distance 1 to everything (their similarity is 0). Needs ``n >= 2``.
    """
    emb = np.asarray(emb, dtype=np.float64)
    n = emb.shape[0]
    norms = np.linalg.norm(emb, axis=1)
    unit = np.divide(emb, norms[:, None], out=np.zeros_like(emb), where=norms[:, None] > 0)
    total = unit.sum(axis=0)
    self_sim = (norms > 0).astype(np.float64)
    return 1.0 - (unit @ total - self_sim) / (n - 1)


def doc_embeddings(tokens: Sequence[list[str]], model: Any) -> np.ndarray:
    """Mean word vector of each token list (zero vector when no token is in the vocabulary)."""
    from scipy import sparse

    index = model.wv.key_to_index
    lengths = np.fromiter((len(t) for t in tokens), dtype=np.int64, count=len(tokens))
    ids = np.fromiter((index.get(w, -1) for t in tokens for w in t), dtype=np.int64, count=int(lengths.sum()))
    rows = np.repeat(np.arange(len(tokens)), lengths)
    keep = ids >= 0
    counts = sparse.csr_matrix((np.ones(int(keep.sum())), (rows[keep], ids[keep])),
                               shape=(len(tokens), len(index)))
    sums = counts @ model.wv.vectors.astype(np.float64)
    n_in = np.asarray(counts.sum(axis=1)).ravel()
    return np.divide(sums, n_in[:, None], out=np.zeros_like(sums), where=n_in[:, None] > 0)


@register(
    "text_style_outliers", family="text", direction="lower is safer",
    params=[
        Param("columns", None, "text columns to analyse (default: the schema's text columns)",
              (str, list, tuple), check=check_columns),
        Param("vector_size", 100, "Word2Vec dimensions", "positive int"),
        Param("window", 5, "Word2Vec context window", "positive int"),
        Param("min_count", 1, "Word2Vec minimum word count", "positive int"),
        Param("epochs", 5, "Word2Vec training epochs", "positive int"),
        Param("z_threshold", 2.0, "z-score above which a document is an outlier", float,
              interval=Interval(0, closed="neither")),
        Param("max_docs", None, "documents per table (seeded sample; null = all)", int, interval=Interval(10)),
        Param("top_k", 10, "synthetic outliers listed", "positive int"),
        Param("cache", True, "reuse scores from the cache", bool),
        Param("cache_dir", None, "cache folder (default $SYNTHGUARD_CACHE_DIR or ~/.cache/synthguard)", str),
    ],
    thresholds={"high": 0.1, "difference_high": 0.1},
    description="share of synthetic documents that are stylistic outliers (Word2Vec mean cosine "
                "distance z > 2), beside the same share in the original",
    risk='presence',
    knowledge=('the release only; looks for documents whose style stands out like a real '
               "person's writing"),
    presets=('full',),
    order=290,
    records=RecordsCard(row="synthetic", meaning="a release document whose style stands out"),
    explainer=('Release documents whose writing style stands out from the rest (a copied '
               "person's style).")
)
def text_style_outliers(ctx: Context, *, columns: str | Sequence[str] | None = None, vector_size: int = 100,
                        window: int = 5, min_count: int = 1, epochs: int = 5, z_threshold: float = 2.0,
                        max_docs: int | None = None, top_k: int = 10, cache: bool = True,
                        cache_dir: str | None = None) -> MetricResult:
    """Outlier percentage of each table and their ratio.

    Returns
    -------
    MetricResult
        ``value`` = share of synthetic outliers (Wilson interval), ``baseline`` = share of original
        outliers. Details: ``original``/``synthetic`` (``documents``, ``outliers``,
        ``outlier_percentage``, ``ci``), ``outlier_ratio`` (synthetic / original share),
        ``difference`` with its Newcombe interval, ``difference_risk_level``, ``embedding`` settings;
        records: the most extreme synthetic outliers.
    """
    from ...errors import MetricError

    cols = text_columns(ctx, columns, "text_style_outliers")
    docs = {}
    sampled = False
    for role in ("original", "synthetic"):
        d = collect_docs(ctx.tables.get(role), cols)
        docs[role] = d.take(sample_indices(len(d), max_docs, ctx.rng("sample", role)))
        sampled = sampled or len(docs[role]) < len(d)
        if len(docs[role]) < 3:
            raise MetricError(f"text_style_outliers needs at least 3 {role} documents in {cols}, "
                              f"got {len(docs[role])}: give more text")
    seed = int(ctx.rng("word2vec").integers(0, 2**31 - 1))
    settings = {"vector_size": vector_size, "window": window, "min_count": min_count, "epochs": epochs,
                "seed": seed, "workers": 1, "tokens": "lower-case words minus English stop words"}
    store = TextCache(cache, cache_dir)
    key = cache_key(kind="style", v=2, settings=settings, o=texts_digest(docs["original"].texts),
                    s=texts_digest(docs["synthetic"].texts))
    scores = store.get(key)
    if scores is None:
        scores = _scores(docs["original"].texts, docs["synthetic"].texts, settings)
        store.put(key, scores)
    th = ctx.thresholds
    side: dict[str, dict[str, Any]] = {}
    flags = {}
    for role in ("original", "synthetic"):
        m = np.asarray(scores[role], dtype=np.float64)
        sd = m.std()
        z = (m - m.mean()) / sd if sd > 0 else np.zeros_like(m)
        flags[role] = (z, z > z_threshold)
        k, n = int(flags[role][1].sum()), int(m.size)
        side[role] = {"documents": n, "outliers": k, "outlier_share": k / n,
                      "outlier_percentage": 100.0 * k / n, "ci": wilson_interval(k, n),
                      "mean_distance": float(m.mean()), "std_distance": float(sd),
                      "risk_level": level_from_thresholds(k / n, {"high": th.get("high", 0.1)},
                                                          "lower is safer")}
    ko, no = side["original"]["outliers"], side["original"]["documents"]
    ks, ns = side["synthetic"]["outliers"], side["synthetic"]["documents"]
    diff = difference_ci(ks, ns, ko, no)
    diff_level = "high" if abs(diff["value"]) > th.get("difference_high", 0.1) else "low"
    z_s, out_s = flags["synthetic"]
    order = np.flatnonzero(out_s)[np.argsort(-z_s[out_s], kind="mergesort")][:top_k]
    sdocs = docs["synthetic"]
    records = [{"row": int(sdocs.rows[i]), "column": str(sdocs.columns[i]), "z": float(z_s[i]),
                "text": sdocs.texts[i][:160]} for i in order]
    value = side["synthetic"]["outlier_share"]
    warn = "computed on a seeded sample of documents (max_docs)" if sampled else None
    return MetricResult(
        name="text_style_outliers", family="text", value=value, direction="lower is safer",
        baseline=Baseline(side["original"]["outlier_share"],
                          f"share of original documents that are stylistic outliers (z > {z_threshold})",
                          side["original"]["ci"]),
        ci=side["synthetic"]["ci"], n=ns,
        risk_level=combine_levels(side["synthetic"]["risk_level"], diff_level), warning=warn,
        details={"original": side["original"], "synthetic": side["synthetic"],
                 "outlier_ratio": (ks / ns) / (ko / no) if ko else None,
                 "difference": diff["value"], "difference_ci": diff["ci"],
                 "difference_risk_level": diff_level, "z_threshold": z_threshold,
                 "embedding": settings, "columns": cols},
        records=records)


def _scores(orig: list[str], syn: list[str], settings: dict[str, Any]) -> dict[str, list[float]]:
    try:
        from gensim.models import Word2Vec
    except ImportError:
        from ...errors import MetricUnavailable

        raise MetricUnavailable("text_style_outliers needs gensim: pip install 'synthguard[text]'") from None
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    stop = ENGLISH_STOP_WORDS
    texts = list(orig) + list(syn)
    tokens = [[w for w in t if w not in stop] for t in word_tokens(texts)]
    # train in a canonical (sorted) document order: the row order of the inputs cannot change the model
    order = sorted(range(len(texts)), key=texts.__getitem__)
    corpus = [tokens[i] for i in order if tokens[i]]
    if not corpus:
        from ...errors import MetricError

        raise MetricError("text_style_outliers: the documents hold no words after removing stop words")
    model = Word2Vec(sentences=corpus, vector_size=settings["vector_size"], window=settings["window"],
                     min_count=settings["min_count"], epochs=settings["epochs"], workers=1,
                     seed=settings["seed"], hashfxn=_crc_hash)
    emb = doc_embeddings(tokens, model)
    n_o = len(orig)
    return {"original": mean_cosine_distance(emb[:n_o]).tolist(),
            "synthetic": mean_cosine_distance(emb[n_o:]).tolist()}
