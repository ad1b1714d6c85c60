"""``text_exact_matches``: synthetic texts that copy an original text verbatim or almost verbatim.

Texts are normalised (HTML tags removed, case-folded, white space collapsed). A synthetic document is
an *exact* copy when its normalised text equals an original document's of the same column, and a
*near duplicate* when its best original match has an Indel similarity (rapidfuzz ``fuzz.ratio`` / 100:
``1 - edit distance with insertions and deletions / total length``) of at least ``threshold``.
Candidates for the fuzzy comparison are the ``n_candidates`` most similar original documents by
TF-IDF cosine (word unigrams and bigrams, chunked sparse products: no n x m dense matrix is kept),
so a pair that shares almost no words is never compared (it could not reach 0.9 anyway).
Documents with fewer than ``min_words`` words are not matched (too short to be a copy of anyone).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...errors import MetricError
from ...registry import Context, Param, register
from ...results import Baseline, MetricResult, level_from_thresholds
from ...stats import wilson_interval
from ._common import (
    Docs,
    check_columns,
    check_fraction,
    check_positive,
    collect_docs,
    normalise,
    text_columns,
)

__all__ = ["text_exact_matches", "match_documents"]


def _candidates(query: Any, ref: Any, k: int, exclude_self: bool, chunk: int = 512
                ) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` reference rows by cosine for each query row (pairs with a positive score only)."""
    qs, rs = [], []
    ref_t = ref.T.tocsc()
    n_ref = ref.shape[0]
    k = min(k, n_ref - (1 if exclude_self else 0))
    if k <= 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    for start in range(0, query.shape[0], chunk):  # loop over blocks of queries
        sims = (query[start:start + chunk] @ ref_t).toarray()
        rows = np.arange(sims.shape[0])
        if exclude_self:
            sims[rows, start + rows] = -1.0
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k] if k < n_ref else np.tile(np.arange(n_ref),
                                                                                   (sims.shape[0], 1))
        score = np.take_along_axis(sims, top, axis=1)
        keep = score > 0
        qs.append(np.repeat(rows + start, k)[keep.ravel()])
        rs.append(top.ravel()[keep.ravel()])
    return np.concatenate(qs), np.concatenate(rs)


def match_documents(query: list[str], ref: list[str], *, threshold: float, n_candidates: int = 5,
                    same: bool = False) -> pd.DataFrame:
    """Best match of each normalised ``query`` text among the normalised ``ref`` texts.

    Returns a frame with one row per query: ``ref`` (index of the best match, -1 for none),
    ``similarity`` (1.0 for exact) and ``kind`` (``"exact"``, ``"near"`` or ``""``). With
    ``same=True`` the two lists are the same documents and a document never matches itself.
    """
    from rapidfuzz import fuzz, process
    from sklearn.feature_extraction.text import TfidfVectorizer

    nq = len(query)
    best_ref = np.full(nq, -1, dtype=np.int64)
    best_sim = np.zeros(nq)
    kind = np.full(nq, "", dtype=object)
    if nq == 0 or not ref:
        return pd.DataFrame({"ref": best_ref, "similarity": best_sim, "kind": kind})
    ref_s = pd.Series(np.arange(len(ref)), index=pd.Index(ref))
    if same:
        counts = ref_s.index.value_counts()
        dup = pd.Index(query).map(counts).to_numpy() >= 2
        first = ref_s[~ref_s.index.duplicated()]
        # the first other copy: the first occurrence, or for the first occurrence the second one
        second = ref_s[ref_s.index.duplicated(keep="first")]
        second = second[~second.index.duplicated()]
        f = pd.Index(query).map(first).to_numpy()
        s = pd.Index(query).map(second).to_numpy()
        other = np.where(f == np.arange(nq), s, f)
        exact = dup
        best_ref[exact] = np.asarray(other[exact], dtype=np.int64)
    else:
        first = ref_s[~ref_s.index.duplicated()]
        hit = pd.Index(query).map(first)
        exact = ~pd.isna(hit)
        best_ref[exact] = np.asarray(hit[exact], dtype=np.int64)
    best_sim[exact] = 1.0
    kind[exact] = "exact"
    todo = np.flatnonzero(~exact)
    if todo.size and threshold < 1.0:
        vec = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, max_df=0.5, dtype=np.float32,
                              token_pattern=r"(?u)\b\w+\b")
        try:
            vec.fit(list(ref) + ([query[i] for i in todo] if not same else []))
        except ValueError:  # empty vocabulary: nothing to compare
            return pd.DataFrame({"ref": best_ref, "similarity": best_sim, "kind": kind})
        rmat = vec.transform(ref)
        qmat = rmat[todo] if same else vec.transform([query[i] for i in todo])
        if same:
            # exclude self: map the query block position to its own row in ref
            qi, ri = _candidates_same(qmat, rmat, todo, n_candidates)
        else:
            qi, ri = _candidates(qmat, rmat, n_candidates, exclude_self=False)
        if qi.size:
            qtexts = [query[todo[i]] for i in qi]
            rtexts = [ref[j] for j in ri]
            sims = process.cpdist(qtexts, rtexts, scorer=fuzz.ratio, workers=1) / 100.0
            frame = pd.DataFrame({"q": todo[qi], "r": ri, "s": sims})
            frame = frame.sort_values(["q", "s", "r"], ascending=[True, False, True], kind="mergesort")
            frame = frame.drop_duplicates("q")
            frame = frame[frame["s"] >= threshold]
            q = frame["q"].to_numpy()
            best_ref[q] = frame["r"].to_numpy()
            best_sim[q] = frame["s"].to_numpy()
            kind[q] = "near"
    return pd.DataFrame({"ref": best_ref, "similarity": best_sim, "kind": kind})


def _candidates_same(qmat: Any, rmat: Any, rows: np.ndarray, k: int, chunk: int = 512
                     ) -> tuple[np.ndarray, np.ndarray]:
    qs, rs = [], []
    ref_t = rmat.T.tocsc()
    n_ref = rmat.shape[0]
    k = min(k, n_ref - 1)
    if k <= 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    for start in range(0, qmat.shape[0], chunk):  # loop over blocks of queries
        sims = (qmat[start:start + chunk] @ ref_t).toarray()
        local = np.arange(sims.shape[0])
        sims[local, rows[start + local]] = -1.0
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k] if k < n_ref else \
            np.tile(np.arange(n_ref), (sims.shape[0], 1))
        score = np.take_along_axis(sims, top, axis=1)
        keep = (score > 0).ravel()
        qs.append(np.repeat(local + start, top.shape[1])[keep])
        rs.append(top.ravel()[keep])
    return np.concatenate(qs), np.concatenate(rs)


def _eligible(norm: list[str], min_words: int) -> np.ndarray:
    return (pd.Series(norm, dtype=object).str.count(r"\S+") >= min_words).to_numpy()


def _rate(k: int, n: int) -> dict[str, Any]:
    return {"k": int(k), "n": int(n), "rate": k / n if n else None,
            "ci": wilson_interval(k, n) if n else None}


@register(
    "text_exact_matches", family="text", direction="lower is safer",
    params=[
        Param("columns", None, "text columns to compare (default: the schema's text columns)",
              (str, list, tuple), check=check_columns),
        Param("threshold", 0.9, "Indel similarity (0-1) from which a text is a near duplicate "
              "(1.0 = exact copies only)", float, check=check_fraction),
        Param("min_words", 3, "texts with fewer words are not matched", int, check=check_positive),
        Param("n_candidates", 5, "TF-IDF nearest candidates checked per text", int, check=check_positive),
        Param("max_pairs", 100, "matched pairs listed in records", int, check=check_positive),
    ],
    thresholds={"medium": 0.01, "high": 0.05},
    description="share of synthetic texts that copy an original text verbatim or nearly "
                "(normalised exact match, or Indel similarity >= 0.9)",
)
def text_exact_matches(ctx: Context, *, columns: str | Sequence[str] | None = None, threshold: float = 0.9,
                       min_words: int = 3, n_candidates: int = 5, max_pairs: int = 100) -> MetricResult:
    """Verbatim and near-duplicate synthetic texts, with the original's own duplication rate.

    Returns
    -------
    MetricResult
        ``value`` = copy rate (exact + near) over the synthetic documents with ``min_words`` words
        or more (Wilson interval); ``baseline`` = the control documents' copy rate against the original
        when a control table is given, else the original's own duplication rate. Details:
        ``exact_match_rate``, ``near_duplicate_rate``, ``original_duplication_rate``,
        ``control_copy_rate``, ``per_column``; records: the matched pairs (most similar first).
    """
    cols = text_columns(ctx, columns, "text_exact_matches")
    roles = ctx.tables.roles
    totals = {key: [0, 0] for key in ("exact", "near", "syn_n", "orig_dup", "orig_n", "ctl_copy", "ctl_n")}
    per_column: dict[str, Any] = {}
    pairs: list[pd.DataFrame] = []
    for col in cols:
        docs: dict[str, Docs] = {r: collect_docs(ctx.tables.get(r), [col]) for r in roles}
        norm = {r: normalise(d.texts) for r, d in docs.items()}
        ok = {r: _eligible(norm[r], min_words) for r in roles}
        o_idx = np.flatnonzero(ok["original"])
        o_norm = [norm["original"][i] for i in o_idx]
        s_idx = np.flatnonzero(ok["synthetic"])
        m = match_documents([norm["synthetic"][i] for i in s_idx], o_norm, threshold=threshold,
                            n_candidates=n_candidates)
        od = match_documents(o_norm, o_norm, threshold=threshold, n_candidates=n_candidates, same=True)
        n_ex, n_near = int((m["kind"] == "exact").sum()), int((m["kind"] == "near").sum())
        n_od = int((od["kind"] != "").sum())
        entry: dict[str, Any] = {
            "synthetic_documents": int(s_idx.size), "too_short": int((~ok["synthetic"]).sum()),
            "exact_match_rate": _rate(n_ex, s_idx.size)["rate"],
            "near_duplicate_rate": _rate(n_near, s_idx.size)["rate"],
            "original_duplication_rate": _rate(n_od, o_idx.size)["rate"]}
        for key, val in (("exact", n_ex), ("near", n_near), ("syn_n", s_idx.size), ("orig_dup", n_od),
                         ("orig_n", o_idx.size)):
            totals[key][0] += int(val)
        if "control" in roles:
            c_idx = np.flatnonzero(ok["control"])
            mc = match_documents([norm["control"][i] for i in c_idx], o_norm, threshold=threshold,
                                 n_candidates=n_candidates)
            n_cc = int((mc["kind"] != "").sum())
            entry["control_copy_rate"] = _rate(n_cc, c_idx.size)["rate"]
            totals["ctl_copy"][0] += n_cc
            totals["ctl_n"][0] += int(c_idx.size)
        per_column[col] = entry
        hit = np.flatnonzero(m["kind"].to_numpy() != "")
        if hit.size:
            si = s_idx[hit]
            oi = o_idx[m["ref"].to_numpy()[hit]]
            pairs.append(pd.DataFrame({
                "column": col, "synthetic_row": docs["synthetic"].rows[si],
                "original_row": docs["original"].rows[oi], "kind": m["kind"].to_numpy()[hit],
                "similarity": m["similarity"].to_numpy()[hit],
                "synthetic_text": [docs["synthetic"].texts[i][:160] for i in si],
                "original_text": [docs["original"].texts[i][:160] for i in oi]}))
    n_syn = totals["syn_n"][0]
    if n_syn == 0:
        raise MetricError(f"text_exact_matches: no synthetic text in {cols} has {min_words} words or more: "
                          "lower min_words or check the columns")
    k = totals["exact"][0] + totals["near"][0]
    copy = _rate(k, n_syn)
    orig_dup = _rate(totals["orig_dup"][0], totals["orig_n"][0])
    th = ctx.thresholds
    level = level_from_thresholds(copy["rate"], {x: th[x] for x in ("medium", "high") if x in th},
                                  "lower is safer")
    warnings = []
    if totals["ctl_n"][0]:
        ctl = _rate(totals["ctl_copy"][0], totals["ctl_n"][0])
        base = Baseline(ctl["rate"], "share of control (held-out real) texts that copy an original text "
                        "as closely: the natural rate of boilerplate/duplicate texts", ctl["ci"])
        if copy["ci"][0] <= ctl["rate"]:
            level = "low"
            warnings.append("copy rate is not above the holdout baseline: matches look like common "
                            "boilerplate, not memorisation")
    else:
        ctl = None
        base = Baseline(orig_dup["rate"], "no control table: the original's own duplication rate "
                        "(share of original texts that duplicate another original text)", orig_dup["ci"])
    records: list[dict[str, Any]] = []
    n_pairs = 0
    if pairs:
        allp = pd.concat(pairs, ignore_index=True)
        n_pairs = len(allp)
        allp = allp.sort_values(["similarity", "column", "synthetic_row"], ascending=[False, True, True],
                                kind="mergesort")
        records = allp.head(max_pairs).to_dict("records")
    details = {
        "exact_matches": totals["exact"][0], "near_duplicates": totals["near"][0],
        "exact_match_rate": totals["exact"][0] / n_syn, "near_duplicate_rate": totals["near"][0] / n_syn,
        "copy_rate_percentage": 100.0 * copy["rate"],
        "original_duplication_rate": orig_dup["rate"], "original_duplication_ci": orig_dup["ci"],
        "control_copy_rate": ctl["rate"] if ctl else None,
        "threshold": threshold, "min_words": min_words, "matched_pairs": n_pairs,
        "per_column": per_column, "columns": cols,
        "similarity": "Indel (rapidfuzz fuzz.ratio / 100) on normalised text; TF-IDF candidates",
    }
    return MetricResult(name="text_exact_matches", family="text", value=copy["rate"],
                        direction="lower is safer", baseline=base, ci=copy["ci"], n=n_syn,
                        risk_level=level, warning="; ".join(warnings) or None, details=details,
                        records=records)
