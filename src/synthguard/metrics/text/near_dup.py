"""``text_exact_matches``: synthetic texts that copy an original text verbatim or almost verbatim.

Texts are normalised (HTML tags removed, case-folded, white space collapsed). A synthetic document is
an *exact* copy when its normalised text equals an original document's of the same column, and a
*near duplicate* when its best original match has an Indel similarity (rapidfuzz ``fuzz.ratio`` / 100:
``1 - edit distance with insertions and deletions / total length``) of at least ``threshold``.
Candidates for the fuzzy comparison are the ``n_candidates`` most similar original documents by
TF-IDF cosine (word unigrams and bigrams, chunked sparse products: no n x m dense matrix is kept),
so a pair that shares almost no words is never compared (it could not reach 0.9 anyway).
Documents with fewer than ``min_words`` words are not matched (too short to be a copy of anyone).
The texts are read through the run's backend (:meth:`~synthguard.engine.backend.Backend.take`, one
text column at a time), so on a Dask cluster the matching runs on the driver over the same strings,
with the same numbers as one process.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...core.results import Baseline, Evidence, MetricResult, RecordFlags
from ...errors import MetricError, MetricUnavailable
from ...registry import LEVEL_FROM_THRESHOLDS, Context, Interval, Param, register
from ...stats import wilson_interval
from ._common import (
    Docs,
    check_columns,
    collect_docs,
    normalise,
    text_columns,
)

__all__ = ["text_exact_matches", "match_documents", "copied_records"]


#: Dense cells (queries x references) of one candidate block: bounds the block's score matrix and
#: its argpartition indices (~12 bytes a cell, ~50 MB) whatever the number of references.
MAX_BLOCK_CELLS = 1 << 22


def _top_candidates(qmat: Any, rmat: Any, k: int, self_col: np.ndarray | None = None,
                    chunk: int = 512) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` reference rows by cosine for each query row (positive scores only), in blocks of
    at most ``chunk`` queries (fewer when there are many references: a block has at most
    ``MAX_BLOCK_CELLS`` dense cells) so memory stays bounded; ``self_col[i]`` is a reference row
    query ``i`` may not match (itself), or -1."""
    qs, rs = [], []
    ref_t = rmat.T.tocsr()
    n_ref = rmat.shape[0]
    chunk = max(1, min(chunk, MAX_BLOCK_CELLS // max(n_ref, 1)))
    k = min(k, n_ref - (1 if self_col is not None else 0))
    if k <= 0 or qmat.shape[0] == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    for start in range(0, qmat.shape[0], chunk):  # loop over blocks of queries
        sims = (qmat[start:start + chunk] @ ref_t).toarray()
        local = np.arange(sims.shape[0])
        if self_col is not None:
            own = self_col[start + local]
            sims[local[own >= 0], own[own >= 0]] = -1.0
        if k < n_ref:
            top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        else:
            top = np.tile(np.arange(n_ref), (sims.shape[0], 1))
        keep = (np.take_along_axis(sims, top, axis=1) > 0).ravel()
        qs.append(np.repeat(local + start, top.shape[1])[keep])
        rs.append(top.ravel()[keep])
    return np.concatenate(qs), np.concatenate(rs)


class Matcher:
    """Best original match of normalised texts: exact by hash join, near by TF-IDF candidates
    verified with rapidfuzz. Works on distinct texts (a corpus full of copies costs no more).

    Parameters
    ----------
    ref : list of str
        Normalised reference (original) texts.
    threshold : float
        Indel similarity from which a pair is a near duplicate.
    n_candidates : int
        TF-IDF candidates verified per distinct query text.
    vocabulary_texts : list of str
        Extra texts the TF-IDF vocabulary is fitted on (the queries), so query words count.
    """

    def __init__(self, ref: list[str], *, threshold: float, n_candidates: int,
                 vocabulary_texts: Sequence[str] = ()) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.threshold = threshold
        self.k = n_candidates
        codes, uniq = pd.factorize(pd.Series(ref, dtype=object))
        self.uniq = list(uniq)
        self.first = np.full(len(uniq), -1, dtype=np.int64)
        self.first[codes[::-1]] = np.arange(len(ref))[::-1]  # first row of each distinct text
        self.second = np.full(len(uniq), -1, dtype=np.int64)
        order = np.argsort(codes, kind="mergesort")
        sc = codes[order]
        prev1 = np.zeros(sc.size, dtype=bool)
        prev2 = np.zeros(sc.size, dtype=bool)
        prev1[1:] = sc[1:] == sc[:-1]
        prev2[2:] = sc[2:] == sc[:-2]
        is_second = prev1 & ~prev2
        self.second[sc[is_second]] = order[is_second]
        self.counts = np.bincount(codes, minlength=len(uniq))
        self.index = pd.Index(self.uniq)
        self.vec = None
        self.rmat = None
        if threshold < 1.0 and self.uniq:
            vocab = list(dict.fromkeys(list(self.uniq) + list(vocabulary_texts)))
            # frequent words only slow the candidate products down; in small corpora keep them all
            vec = TfidfVectorizer(sublinear_tf=True, max_df=0.5 if len(vocab) >= 100 else 1.0,
                                  dtype=np.float32,
                                  token_pattern=r"(?u)\b\w+\b")
            try:
                vec.fit(vocab)
            except ValueError:  # empty vocabulary
                vec = None
            if vec is not None:
                self.vec = vec
                self.rmat = vec.transform(self.uniq)

    def _near(self, texts: list[str], self_col: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """Best distinct reference (or -1) and its similarity for each text (near duplicates only)."""
        from rapidfuzz import fuzz, process

        best = np.full(len(texts), -1, dtype=np.int64)
        sim = np.zeros(len(texts))
        if self.vec is None or not texts:
            return best, sim
        qmat = self.rmat[self_col] if self_col is not None else self.vec.transform(texts)
        qi, ri = _top_candidates(qmat, self.rmat, self.k, self_col)
        if qi.size:
            scores = process.cpdist([texts[i] for i in qi], [self.uniq[j] for j in ri],
                                    scorer=fuzz.ratio, workers=1) / 100.0
            frame = pd.DataFrame({"q": qi, "r": ri, "s": scores})
            frame = frame.sort_values(["q", "s", "r"], ascending=[True, False, True], kind="mergesort")
            frame = frame.drop_duplicates("q")
            frame = frame[frame["s"] >= self.threshold]
            best[frame["q"].to_numpy()] = frame["r"].to_numpy()
            sim[frame["q"].to_numpy()] = frame["s"].to_numpy()
        return best, sim

    def match(self, query: list[str]) -> pd.DataFrame:
        """One row per query text: ``ref`` (first reference row matched, -1), ``similarity``, ``kind``."""
        codes, uq = pd.factorize(pd.Series(query, dtype=object))
        uq = list(uq)
        hit = self.index.get_indexer(uq)
        ref = np.where(hit >= 0, self.first[np.maximum(hit, 0)], -1)
        sim = (hit >= 0).astype(np.float64)
        kind = np.where(hit >= 0, "exact", "").astype(object)
        todo = np.flatnonzero(hit < 0)
        b, s = self._near([uq[i] for i in todo], None)
        ok = b >= 0
        ref[todo[ok]] = self.first[b[ok]]
        sim[todo[ok]] = s[ok]
        kind[todo[ok]] = "near"
        return pd.DataFrame({"ref": ref[codes], "similarity": sim[codes], "kind": kind[codes]})

    def match_self(self) -> pd.DataFrame:
        """Each reference row's best match among the *other* reference rows (duplication)."""
        n_u = len(self.uniq)
        dup = self.counts >= 2
        ref = np.full(n_u, -1, dtype=np.int64)
        sim = dup.astype(np.float64)
        kind = np.where(dup, "exact", "").astype(object)
        todo = np.flatnonzero(~dup)
        b, s = self._near([self.uniq[i] for i in todo], todo)
        ok = b >= 0
        ref[todo[ok]] = self.first[b[ok]]
        sim[todo[ok]] = s[ok]
        kind[todo[ok]] = "near"
        return pd.DataFrame({"similarity": sim, "kind": kind, "count": self.counts, "ref": ref})


def match_documents(query: list[str], ref: list[str], *, threshold: float, n_candidates: int = 5,
                    same: bool = False) -> pd.DataFrame:
    """Best match of each normalised ``query`` text among the normalised ``ref`` texts.

    Returns one row per query: ``ref`` (a matched reference row, -1 for none), ``similarity``
    (1.0 for exact) and ``kind`` (``"exact"``, ``"near"`` or ``""``). With ``same=True`` the lists are
    the same documents and a document never matches itself.
    """
    m = Matcher(ref, threshold=threshold, n_candidates=n_candidates,
                vocabulary_texts=() if same else query)
    if not same:
        return m.match(query)
    per = m.match_self()
    codes = m.index.get_indexer(query)
    out = per.iloc[codes].reset_index(drop=True)
    # an exact duplicate's partner: the first copy, or the second one for the first copy itself
    first = m.first[codes]
    exact = out["kind"].to_numpy() == "exact"
    own = np.arange(len(query))
    partner = np.where(first == own, m.second[codes], first)
    out.loc[exact, "ref"] = partner[exact]
    return out[["ref", "similarity", "kind"]]


def copied_records(release: Sequence[str], real: Sequence[Sequence[str]], *, threshold: float,
                   min_words: int, n_candidates: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Which real documents the release copies verbatim or near-verbatim.

    The release's eligible documents are the reference; each real document (every role in
    ``real``, e.g. training and control, matched by one matcher whose vocabulary holds all of
    them, so no side is favoured) is flagged when its best release match is exact after
    normalisation or has Indel similarity >= ``threshold``.

    Returns
    -------
    flagged, eligible : lists of bool arrays, one per role
        ``eligible``: the document has ``min_words`` words or more (shorter ones are never matched).

    Examples
    --------
    >>> f, e = copied_records(["the cat sat on the mat", "a b"], [["the cat sat on the mat"],
    ...                       ["dogs bark at night here"]], threshold=0.9, min_words=3,
    ...                       n_candidates=5)
    >>> f[0].tolist(), f[1].tolist(), e[1].tolist()
    ([True], [False], [True])
    """
    rel = normalise(release)
    rel = [t for t, ok in zip(rel, _eligible(rel, min_words), strict=True) if ok]
    norms = [normalise(docs) for docs in real]
    elig = [_eligible(n, min_words) for n in norms]
    flagged = [np.zeros(len(n), dtype=bool) for n in norms]
    if not rel:
        return flagged, elig
    queries = [[n[i] for i in np.flatnonzero(e)] for n, e in zip(norms, elig, strict=True)]
    matcher = Matcher(rel, threshold=threshold, n_candidates=n_candidates,
                      vocabulary_texts=[t for q in queries for t in q])
    for f, e, q in zip(flagged, elig, queries, strict=True):
        if q:
            f[np.flatnonzero(e)] = matcher.match(q)["kind"].to_numpy() != ""
    return flagged, elig


class _DocsOf:
    """The documents of a role's text column (:func:`collect_docs`), fetched once per metric call
    through the run's backend (:meth:`~synthguard.engine.backend.Backend.take`: the pandas table of
    one process, or the column gathered from the partitions of a cluster on the driver), so the
    matching runs the same code on the same strings in both."""

    def __init__(self, ctx: Context) -> None:
        self.data = ctx.data
        self._got: dict[tuple[str, str], Docs] = {}

    def __call__(self, role: str, column: str) -> Docs:
        key = (role, column)
        if key not in self._got:
            n = self.data.n_rows(role)
            frame = self.data.take(role, np.arange(n, dtype=np.int64), [column])
            self._got[key] = collect_docs(frame, [column])
        return self._got[key]


def _record_flags(ctx: Context, docs_of: _DocsOf, cols: Sequence[str], *, threshold: float,
                  min_words: int, n_candidates: int) -> RecordFlags:
    """Per training and control record: does the release copy one of its documents (any text
    column)? ``responds["text"]``: the record has an eligible document (a copy of it would match)."""
    roles = ("original", "control")
    n = {r: ctx.data.n_rows(r) for r in roles}
    flag = {r: np.zeros(n[r], dtype=bool) for r in roles}
    visible = {r: np.zeros(n[r], dtype=bool) for r in roles}
    for col in cols:
        syn = docs_of("synthetic", col)
        docs = {r: docs_of(r, col) for r in roles}
        f, e = copied_records(syn.texts, [docs[r].texts for r in roles], threshold=threshold,
                              min_words=min_words, n_candidates=n_candidates)
        for r, fr, er in zip(roles, f, e, strict=True):
            flag[r][docs[r].rows[fr]] = True
            visible[r][docs[r].rows[er]] = True
    score = np.concatenate([flag["original"], flag["control"]]).astype(float)
    leaks = _text_responses(ctx, docs_of, cols, threshold=threshold, min_words=min_words,
                            n_candidates=n_candidates)
    from .._leakrows import family_eligible, family_status

    return RecordFlags(flag["original"], flag["control"], {"text": visible["original"]},
                       scores=score, leaks=leaks, families=family_status(ctx),
                       eligible=family_eligible(ctx))


def _text_responses(ctx: Context, docs_of: _DocsOf, cols: Sequence[str], *, threshold: float,
                    min_words: int, n_candidates: int) -> dict[str, Any]:
    """What the run's near-verbatim document leaks (:mod:`synthguard.metrics._leakrows`, family
    ``text``) do to this test: every real record whose document one of them copies (exact after
    normalisation, or Indel similarity >= ``threshold`` among its ``n_candidates`` nearest leak
    documents by TF-IDF: the test's own matching, with the leak documents as the release)."""
    from .._leakrows import leak_sets, response

    ls = leak_sets(ctx).get("text")
    if ls is None or not ls.available:
        return {}
    roles = ("original", "control")
    n_o = ctx.data.n_rows("original")
    rows_r, targets = [], []
    for col in cols:
        if col not in ls.rows.columns:
            continue
        leak = collect_docs(ls.rows.reset_index(drop=True), [col])
        docs = {r: docs_of(r, col) for r in roles}
        lnorm = normalise(leak.texts)
        keep = np.flatnonzero(_eligible(lnorm, min_words))
        if keep.size == 0:
            continue
        m = Matcher([lnorm[i] for i in keep], threshold=threshold, n_candidates=n_candidates,
                    vocabulary_texts=[t for r in roles for t in normalise(docs[r].texts)])
        for r, offset in (("original", 0), ("control", n_o)):
            norm = normalise(docs[r].texts)
            ok = np.flatnonzero(_eligible(norm, min_words))
            if ok.size == 0:
                continue
            got = m.match([norm[i] for i in ok])
            hit = np.flatnonzero(got["kind"].to_numpy() != "")
            rows_r.append(leak.rows[keep[got["ref"].to_numpy()[hit]]])
            targets.append(docs[r].rows[ok[hit]] + offset)
    if not rows_r:
        return {}
    r_idx, t_idx = np.concatenate(rows_r), np.concatenate(targets)
    got = response(ctx, "text", (r_idx, t_idx, np.ones(t_idx.size)))
    return {"text": got} if got is not None else {}


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
              "(1.0 = exact copies only)", float, interval=Interval(0, 1, closed="right")),
        Param("min_words", 3, "texts with fewer words are not matched", "positive int"),
        Param("n_candidates", 5, "TF-IDF nearest candidates checked per text", "positive int"),
        Param("max_pairs", 100, "matched pairs listed in records", "positive int"),
    ],
    thresholds={"medium": 0.01, "high": 0.05},
    description="share of synthetic texts that copy an original text verbatim or nearly "
                "(normalised exact match, or Indel similarity >= 0.9)",
    risk='presence',
    knowledge=("a person's document; looks for the same or a near-verbatim document in the "
               'release'),
    sees=('text',),
    presets=('quick', 'privacy', 'full'),
    order=250,
    backend="any",
    explainer=('Training documents copied verbatim or nearly (after normalisation) into the '
               'release, against held-out documents.')
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
    try:
        import rapidfuzz  # noqa: F401
    except ImportError:
        raise MetricUnavailable("text_exact_matches needs rapidfuzz: pip install 'synthguard[text]'") from None
    roles = ctx.tables.roles
    docs_of = _DocsOf(ctx)
    totals = {key: [0, 0] for key in ("exact", "near", "syn_n", "orig_dup", "orig_n", "ctl_copy", "ctl_n")}
    per_column: dict[str, Any] = {}
    pairs: list[pd.DataFrame] = []
    for col in cols:
        docs: dict[str, Docs] = {r: docs_of(r, col) for r in roles}
        norm = {r: normalise(d.texts) for r, d in docs.items()}
        ok = {r: _eligible(norm[r], min_words) for r in roles}
        o_idx = np.flatnonzero(ok["original"])
        o_norm = [norm["original"][i] for i in o_idx]
        s_idx = np.flatnonzero(ok["synthetic"])
        s_norm = [norm["synthetic"][i] for i in s_idx]
        c_norm = [norm["control"][i] for i in np.flatnonzero(ok["control"])] if "control" in roles else []
        matcher = Matcher(o_norm, threshold=threshold, n_candidates=n_candidates,
                          vocabulary_texts=s_norm + c_norm)
        m = matcher.match(s_norm)
        selfm = matcher.match_self()
        n_od = int(selfm.loc[selfm["kind"] == "exact", "count"].sum()
                   + (selfm["kind"] == "near").sum())
        n_ex, n_near = int((m["kind"] == "exact").sum()), int((m["kind"] == "near").sum())
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
            mc = matcher.match(c_norm)
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
    level = LEVEL_FROM_THRESHOLDS  # the copy rate against the declared thresholds (the executor)
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
    evidence = None
    if "control" in roles and ctx.data.n_rows("control"):
        flags = _record_flags(ctx, docs_of, cols, threshold=threshold, min_words=min_words,
                              n_candidates=n_candidates)
        evidence = Evidence.from_flags(
            "share of records with a document copied verbatim or near-verbatim (Indel similarity "
            f">= {threshold:g} after normalisation) into the release", flags, sees=("text",),
            risk="presence", baseline="control records' documents against the same release",
            note=f"records without a document of {min_words} words or more cannot be flagged")
    return MetricResult(name="text_exact_matches", family="text", value=copy["rate"],
                        direction="lower is safer", baseline=base, ci=copy["ci"], n=n_syn,
                        risk_level=level, warning="; ".join(warnings) or None, details=details,
                        records=records, evidence=evidence)
