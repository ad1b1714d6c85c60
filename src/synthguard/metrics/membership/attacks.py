"""No-box membership attacks with a reference sample: one score per record, from the files alone.

Every attack scores a target record ``x`` (a training record or a held-out non-member) from the
release ``S`` and a reference sample ``R`` of real records: records the generator never saw
(disjoint from the non-members scored), or every real record unlabelled with the record itself
left out (``query_in_reference``); higher = more likely a member. All of them read the shared encoding
(:mod:`synthguard.data.encoding`) and the one neighbour engine (:mod:`synthguard.engine.neighbors`); none uses
which records are members, so members and non-members stay exchangeable under the null and the
label-permutation tests of :mod:`synthguard.stats` are exact.

Attacks (see ``docs/attacks.md`` for the papers):

``closest_distance``
    minus the Gower distance to the closest release row.
``near_copy``
    the largest share of cells equal to one of the closest release rows, or to any release row
    that differs in at most one cell (found exactly by hashing; Hamming similarity), lowered by
    ``(p - 1) / p`` where another real record (training or control, unlabelled) lies within one
    cell: weighted by rarity, since near-copies of common patterns are what chance gives.
``dcr_diff``
    distance to the closest reference row minus distance to the closest release row.
``domias``
    ``log p_S(x) - log p_R(x)``: kernel density of the release over that of the reference, Gaussian
    kernel on the Gower distance summed over the nearest rows (a truncated KDE; the far rows add
    nothing at the bandwidth used). With ``real`` (every real record, unlabelled) the population's
    density is that of the other real records, the record itself left out: the same pool for every
    record (exchangeable), several times the rows of the reference sample.
``plagiarism``
    data plagiarism index: among the ``k`` nearest rows of ``S u R``, release rows per release row
    over reference rows per reference row (log, with half-counts).
``gen_lra``
    local likelihood ratio: how much better a KDE fitted to ``R u {x}`` explains the release rows
    closest to ``x`` than the KDE fitted to ``R``.
``classifier``
    the log-odds of "release row" from a gradient-boosted classifier trained to tell release rows
    from reference rows (scikit-learn ``HistGradientBoostingClassifier``, seeded).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ...data.encoding import Block
from ...engine.neighbors import DistanceMetric, kneighbors

ATTACKS = ("closest_distance", "near_copy", "dcr_diff", "domias", "plagiarism", "gen_lra",
           "classifier")


@dataclass(frozen=True)
class AttackScores:
    """Per-record scores of every attack on the same query records (higher = member).

    Attributes
    ----------
    scores : dict of str to ndarray
        Attack name -> one score per query record.
    seconds : dict of str to float
        Wall time per attack (shared neighbour searches are charged to the first user).
    bandwidth : float
        Kernel bandwidth (Gower units) of the density attacks.
    notes : dict of str to str
        How each score was computed (sizes, subsamples).
    """

    scores: dict[str, np.ndarray]
    seconds: dict[str, float] = field(default_factory=dict)
    bandwidth: float = float("nan")
    notes: dict[str, str] = field(default_factory=dict)


def concat_blocks(*blocks: Block) -> Block:
    """Rows of several blocks with the same columns, stacked in order."""
    return Block(np.concatenate([b.num for b in blocks], axis=0),
                 np.concatenate([b.cat for b in blocks], axis=0),
                 blocks[0].num_columns, blocks[0].cat_columns)


def _lse_kernel(d: np.ndarray, h: float) -> np.ndarray:
    """``log sum_j exp(-(d_j / h)^2 / 2)`` per row (inf distances add nothing)."""
    a = -0.5 * (d / h) ** 2
    top = np.max(a, axis=1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(under="ignore"):
        return top[:, 0] + np.log(np.sum(np.exp(a - top), axis=1) + 1e-300)


def _equal_cells(query: Block, release: Block, idx: np.ndarray) -> np.ndarray:
    """Per query row, the largest share of cells equal (missing = missing) to one of the release
    rows ``idx`` (its nearest ones): a near-copy changes a cell or two and keeps the rest."""
    n_cols = query.num.shape[1] + query.cat.shape[1]
    best = np.zeros(query.n_rows)
    if n_cols == 0:
        return best
    for j in range(idx.shape[1]):  # loop over neighbours, vectorised over rows
        ok = idx[:, j] >= 0
        r = np.maximum(idx[:, j], 0)
        sn, qn = release.num[r], query.num
        eq = np.sum((sn == qn) | (np.isnan(sn) & np.isnan(qn)), axis=1)
        eq = eq + np.sum(release.cat[r] == query.cat, axis=1)
        best = np.maximum(best, np.where(ok, eq / n_cols, 0.0))
    return best


def _cell_hashes(b: Block) -> np.ndarray:
    """``(n, p)`` uint64: a 64-bit hash of every cell, keyed by its column (numeric values by their
    bit pattern, ``-0.0`` = ``0.0``, every NaN equal; categorical codes as they are)."""
    parts = []
    if b.num.shape[1]:
        v = b.num + 0.0
        bits = np.ascontiguousarray(v).view(np.int64)
        parts.append(np.where(np.isnan(v), np.int64(np.iinfo(np.int64).min), bits))
    if b.cat.shape[1]:
        parts.append(b.cat)
    codes = np.concatenate(parts, axis=1).view(np.uint64) if parts else \
        np.zeros((b.n_rows, 0), dtype=np.uint64)
    col = (np.arange(codes.shape[1], dtype=np.uint64) + np.uint64(1)) * np.uint64(0xD1B54A32D192ED03)
    with np.errstate(over="ignore"):
        x = codes * np.uint64(0x9E3779B97F4A7C15) + col
        for shift, mult in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)):  # splitmix64
            x ^= x >> np.uint64(shift)
            x *= np.uint64(mult)
        x ^= x >> np.uint64(31)
    return x


def _column_hash(b: Block, j: int) -> np.ndarray:
    """The 64-bit cell hashes of column ``j`` (numeric columns first), as :func:`_cell_hashes`
    computes them, for one column at a time (memory: one column)."""
    n_num = b.num.shape[1]
    if j < n_num:
        v = b.num[:, j] + 0.0
        code = np.where(np.isnan(v), np.int64(np.iinfo(np.int64).min),
                        np.ascontiguousarray(v).view(np.int64))
    else:
        code = np.ascontiguousarray(b.cat[:, j - n_num], dtype=np.int64)
    with np.errstate(over="ignore"):
        x = code.view(np.uint64) * np.uint64(0x9E3779B97F4A7C15) \
            + np.uint64(j + 1) * np.uint64(0xD1B54A32D192ED03)
        for shift, mult in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)):  # splitmix64
            x ^= x >> np.uint64(shift)
            x *= np.uint64(mult)
        x ^= x >> np.uint64(31)
    return x


def one_cell_counts(query: Block, pool: Block) -> np.ndarray:
    """Per query row, the number of ``pool`` rows equal to it on every cell but at most one
    (exact copies included, each counted once). Exact up to 64-bit hash collisions: one sorted
    count per column left out, vectorised over rows, hashing one column at a time (memory: a few
    arrays of one value per row); a row equal on all cells matches every left-out key, so
    ``sum_j count_j - (p - 1) * count_exact`` counts each pool row once.

    Examples
    --------
    >>> import numpy as np
    >>> from synthguard.data.encoding import Block
    >>> mk = lambda a: Block(np.asarray(a, float), np.zeros((len(a), 0), np.int64), ("a", "b"), ())
    >>> one_cell_counts(mk([[1, 2], [5, 5]]), mk([[1, 2], [1, 3], [4, 4]])).tolist()
    [2, 0]
    """
    p = query.num.shape[1] + query.cat.shape[1]
    if p <= 1 or pool.n_rows == 0:
        return np.full(query.n_rows, pool.n_rows if p <= 1 else 0, dtype=np.int64)

    def count(keys: np.ndarray, keys_pool: np.ndarray) -> np.ndarray:
        keys_pool = np.sort(keys_pool)
        return (np.searchsorted(keys_pool, keys, side="right")
                - np.searchsorted(keys_pool, keys, side="left")).astype(np.int64)

    rq = np.zeros(query.n_rows, dtype=np.uint64)
    rs = np.zeros(pool.n_rows, dtype=np.uint64)
    for j in range(p):  # row hashes: XOR of the cells' column-keyed hashes
        rq ^= _column_hash(query, j)
        rs ^= _column_hash(pool, j)
    total = (1 - p) * count(rq, rs)
    for j in range(p):  # loop over the column left out, vectorised over rows
        total += count(rq ^ _column_hash(query, j), rs ^ _column_hash(pool, j))
    return total


def _one_cell_matches(query: Block, release: Block) -> np.ndarray:
    """Per query row: 1 if the release holds an exact copy, ``(p - 1) / p`` if it holds a row equal
    on every cell but one, else 0. Exact up to 64-bit hash collisions (about ``n m / 2**64``): a
    row's hash is the XOR of its cells' column-keyed hashes, so leaving column ``j`` out is one XOR;
    one sorted lookup per column, vectorised over rows."""
    p = query.num.shape[1] + query.cat.shape[1]
    out = np.zeros(query.n_rows)
    if p == 0 or release.n_rows == 0:
        return out
    hq, hs = _cell_hashes(query), _cell_hashes(release)
    rq, rs = np.bitwise_xor.reduce(hq, axis=1), np.bitwise_xor.reduce(hs, axis=1)
    def found(keys: np.ndarray, pool: np.ndarray) -> np.ndarray:
        pool = np.sort(pool)
        pos = np.minimum(np.searchsorted(pool, keys), pool.size - 1)
        return pool[pos] == keys

    if p > 1:
        for j in range(p):  # loop over the column left out, vectorised over rows
            out = np.where(found(rq ^ hq[:, j], rs ^ hs[:, j]), (p - 1) / p, out)
    return np.where(found(rq, rs), 1.0, out)


def without_self(dist: np.ndarray, idx: np.ndarray, self_pos: np.ndarray | None,
                 k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest of ``k + 1`` neighbours without the query itself: its own row
    (``self_pos``, its position in the searched block; -1 = not there) where it is among them,
    else the farthest one. Label-free: members and non-members alike.

    Examples
    --------
    >>> import numpy as np
    >>> d, i = np.array([[0., 1., 2.], [0., 0., 3.]]), np.array([[4, 2, 9], [7, 5, 1]])
    >>> [a.tolist() for a in without_self(d, i, np.array([4, 3]), 2)]
    [[[1.0, 2.0], [0.0, 0.0]], [[2, 9], [7, 5]]]
    """
    if self_pos is None:
        return dist[:, :k], idx[:, :k]
    n, width = dist.shape
    is_self = (idx == self_pos[:, None]) & (self_pos >= 0)[:, None]
    first = is_self & (np.cumsum(is_self, axis=1) == 1)
    drop = np.where(first.any(axis=1), np.argmax(first, axis=1), width - 1)
    keep = np.ones((n, width), dtype=bool)
    keep[np.arange(n), drop] = False
    return dist[keep].reshape(n, width - 1)[:, :k], idx[keep].reshape(n, width - 1)[:, :k]


def _plagiarism(ds: np.ndarray, dr: np.ndarray, k: int, n_s: int, n_r: int) -> np.ndarray:
    """Data plagiarism index from the ``k`` nearest release and reference distances (sorted)."""
    both = np.concatenate([ds[:, :k], dr[:, :k]], axis=1)
    t = np.sort(both, axis=1)[:, k - 1:k]  # the k-th nearest of the union
    below_s = np.sum(ds[:, :k] < t, axis=1)
    below_r = np.sum(dr[:, :k] < t, axis=1)
    at_s = np.sum(ds[:, :k] == t, axis=1)
    at_r = np.sum(dr[:, :k] == t, axis=1)
    free = k - below_s - below_r  # slots for the rows tied at the k-th distance, shared pro rata
    c_s = below_s + free * at_s / np.maximum(at_s + at_r, 1)
    return np.log((c_s + 0.5) / n_s) - np.log((k - c_s + 0.5) / n_r)


def classifier_features(blocks: Sequence[Block], fit_rows: int = 2) -> tuple[list[np.ndarray], np.ndarray]:
    """Feature matrices for the classifier attack: numeric values as they are (NaN kept: the model
    handles it), categorical codes remapped to the dense rank of their count over the first
    ``fit_rows`` blocks (the model's training rows; equal counts share a rank, whatever the
    codes), capped at 254 ("rarer"), missing = NaN.

    Returns the matrices (one per block) and the categorical-column mask.
    """
    first = blocks[:fit_rows]
    q = blocks[0].cat.shape[1]
    maps = []
    for j in range(q):
        codes = np.concatenate([b.cat[:, j] for b in first])
        vals, counts = np.unique(codes[codes >= 0], return_counts=True)
        # dense rank of the count, most frequent first: equal counts share a rank, so the feature
        # never depends on the codes' order (codes follow the tables' order, training rows first:
        # a tie broken by code would set members apart from non-members under the null)
        levels = np.unique(-counts)
        rank = np.minimum(np.searchsorted(levels, -counts), 254).astype(float)
        maps.append((vals, rank))
    out = []
    for b in blocks:
        cat = np.empty(b.cat.shape, dtype=float)
        for j, (vals, rank) in enumerate(maps):  # loop over columns, vectorised over rows
            c = b.cat[:, j]
            col = np.where(c < 0, np.nan, 254.0)  # missing, or a value unseen in the fit rows
            if vals.size:
                pos = np.minimum(np.searchsorted(vals, c), vals.size - 1)
                known = (c >= 0) & (vals[pos] == c)
                col = np.where(known, rank[pos], col)
            cat[:, j] = col
        out.append(np.concatenate([b.num, cat], axis=1))
    mask = np.r_[np.zeros(blocks[0].num.shape[1], bool), np.ones(q, bool)]
    return out, mask


def classifier_scores(release: Block, reference: Block, query: Block, *, seed: int,
                      max_iter: int = 100) -> np.ndarray:
    """Log-odds that each query row is a release row, from a classifier of release vs reference rows.

    ``HistGradientBoostingClassifier`` (no early stopping, so no random validation split; balanced
    class weights; ``random_state=seed``), categorical columns as categorical features.
    """
    from sklearn.ensemble import HistGradientBoostingClassifier

    (xs, xr, xq), mask = classifier_features([release, reference, query])
    x = np.concatenate([xs, xr], axis=0)
    y = np.r_[np.ones(len(xs), dtype=int), np.zeros(len(xr), dtype=int)]
    if x.shape[1] == 0 or len(xs) == 0 or len(xr) == 0:
        return np.zeros(len(xq))
    model = HistGradientBoostingClassifier(
        max_iter=max_iter, learning_rate=0.1, max_leaf_nodes=31, min_samples_leaf=20,
        early_stopping=False, class_weight="balanced", random_state=seed,
        categorical_features=mask if mask.any() else None)
    from threadpoolctl import threadpool_limits

    # one OpenMP thread: on a busy machine sklearn's spinning threads cost 10x; measured 1-3 s at 40k
    with threadpool_limits(limits=1, user_api="openmp"):
        model.fit(x, y)
        return np.asarray(model.decision_function(xq), dtype=float)


def attack_scores(query: Block, release: Block, reference: Block, metric: DistanceMetric, *,
                  k: int = 10, attacks: Sequence[str] = ATTACKS, seed: int = 0,
                  classifier_fit_rows: tuple[np.ndarray, np.ndarray] | None = None,
                  real: Block | Sequence[Block] | None = None,
                  query_in_reference: np.ndarray | None = None,
                  backend: str = "auto", clock: Callable[[], float] = time.perf_counter
                  ) -> AttackScores:
    """Every attack's score on the ``query`` records.

    Parameters
    ----------
    query : Block
        The records to score (members and non-members, in any order; the labels are not used).
    release, reference : Block
        The release ``S`` and the reference sample ``R`` (real records disjoint from the queries).
    metric : DistanceMetric
        The row distance (Gower with ranges over the pooled tables, from the caller).
    k : int
        Neighbours per reference search (``k`` times ``|S| / |R|``, at most 50, in the release).
    attacks : sequence of str
        Which attacks to run (subset of :data:`ATTACKS`).
    seed : int
        Seed of the classifier.
    classifier_fit_rows : tuple of ndarray, optional
        Positions of the release and reference rows the classifier is fitted on (a stated
        subsample on large tables); default all.
    real : Block or sequence of Block, optional
        Every real record (training and control, unlabelled; several blocks are counted as one
        pool without copying them), the queries among them: the
        near-copy score is lowered where another real record lies within one cell (rarity).
    query_in_reference : ndarray of int, optional
        Each query row's position in ``reference`` (-1 = not there): the reference may then hold
        the queries themselves (every real record, unlabelled), and each record is scored against
        the reference without itself (leave-one-out), so the score stays label-free.
    backend : str
        Neighbour engine backend.

    Returns
    -------
    AttackScores

    Examples
    --------
    >>> import numpy as np
    >>> from synthguard.data.encoding import Block
    >>> from synthguard.engine.neighbors import gower
    >>> rng = np.random.default_rng(0)
    >>> mk = lambda a: Block(a, np.zeros((len(a), 0), dtype=np.int64), ("a", "b"), ())
    >>> train, ref, out = (rng.random((60, 2)) for _ in range(3))
    >>> res = attack_scores(mk(np.r_[train, out]), mk(train), mk(ref), gower(np.ones(2)),
    ...                     attacks=("closest_distance", "dcr_diff"))
    >>> bool(res.scores["closest_distance"][:60].mean() > res.scores["closest_distance"][60:].mean())
    True
    """
    unknown = [a for a in attacks if a not in ATTACKS]
    if unknown:
        raise ValueError(f"unknown attacks {unknown}; use some of {ATTACKS}")
    n_s, n_r = release.n_rows, reference.n_rows
    k = int(max(1, min(k, n_r)))
    k_s = int(max(1, min(n_s, max(k, min(50, round(k * n_s / max(n_r, 1)))))))
    scores: dict[str, np.ndarray] = {}
    seconds: dict[str, float] = {}
    notes: dict[str, str] = {}
    pools = [] if real is None else ([real] if isinstance(real, Block) else list(real))
    need_knn = any(a in attacks for a in ("closest_distance", "near_copy", "dcr_diff", "domias",
                                          "plagiarism", "gen_lra"))
    h = float("nan")
    if need_knn:
        t0 = clock()
        ns = kneighbors(query, release, metric, k_s, backend=backend)
        t1 = clock()
        self_pos = query_in_reference
        k_r = k if self_pos is None else int(min(k + 1, n_r))
        nr = kneighbors(query, reference, metric, k_r, backend=backend)
        t2 = clock()
        ds = ns.distances
        dr, _ = without_self(nr.distances, nr.indices, self_pos, k)
        if self_pos is not None:
            n_r = max(n_r - 1, 1)  # the reference without the record itself
            k = int(max(1, min(k, dr.shape[1])))
        # bandwidth: median over the (pooled, unlabelled) queries of the distance to their
        # min(5, k)-th nearest reference row, floored at half a cell's mismatch
        n_cols = max(query.num.shape[1] + query.cat.shape[1], 1)
        h = float(max(np.median(dr[:, min(5, k) - 1]), 0.5 / n_cols))
        if "closest_distance" in attacks:
            scores["closest_distance"] = -ds[:, 0]
            seconds["closest_distance"] = t1 - t0
        if "dcr_diff" in attacks:
            scores["dcr_diff"] = dr[:, 0] - ds[:, 0]
            seconds["dcr_diff"] = t2 - t1
        if "domias" in attacks and pools:
            # the population's density from every other real record (training and control,
            # unlabelled, the record itself left out): the same pool for every record, many more
            # rows than the reference sample
            t = clock()
            dp = np.sort(np.concatenate(
                [kneighbors(query, b, metric, int(min(k + 1, b.n_rows)), backend=backend).distances
                 for b in pools if b.n_rows], axis=1), axis=1)[:, 1:k + 1]
            n_p = max(sum(b.n_rows for b in pools) - 1, 1)
            n_cols = max(query.num.shape[1] + query.cat.shape[1], 1)
            h_p = float(max(np.median(dp[:, min(5, dp.shape[1]) - 1]), 0.5 / n_cols))
            scores["domias"] = ((_lse_kernel(ds[:, :k], h_p) - np.log(n_s))
                                - (_lse_kernel(dp, h_p) - np.log(n_p)))
            seconds["domias"] = clock() - t
            notes["domias"] = (f"Gaussian kernel on the Gower distance, bandwidth {h_p:.4g} (median "
                               f"distance to the {min(5, k)}th nearest other real record), over the "
                               f"{k} nearest release rows and the {k} nearest of the other {n_p} "
                               "real records (training and control, unlabelled)")
        elif "domias" in attacks:
            t = clock()
            scores["domias"] = (_lse_kernel(ds, h) - np.log(n_s)) - (_lse_kernel(dr, h) - np.log(n_r))
            seconds["domias"] = clock() - t
            notes["domias"] = (f"Gaussian kernel on the Gower distance, bandwidth {h:.4g}, over the "
                               f"{k_s} nearest release and {k} nearest reference rows")
        if "plagiarism" in attacks:
            t = clock()
            scores["plagiarism"] = _plagiarism(ds, dr, k, n_s, n_r)
            seconds["plagiarism"] = clock() - t
            notes["plagiarism"] = f"{k} nearest rows of release and reference together"
        if "gen_lra" in attacks:
            t = clock()
            m = min(k, k_s)
            idx = ns.indices[:, :m]
            uniq, inv = np.unique(idx[idx >= 0], return_inverse=True)
            lse_r = np.full(idx.shape, 0.0)
            if uniq.size:
                nrs = kneighbors(release.take(uniq), reference, metric, k_r, backend=backend)
                if self_pos is None:
                    lse_r[idx >= 0] = _lse_kernel(nrs.distances, h)[inv]
                else:  # the reference's density without the record itself (leave-one-out)
                    own = np.broadcast_to(self_pos[:, None], idx.shape)[idx >= 0]
                    d_q, _ = without_self(nrs.distances[inv], nrs.indices[inv], own, k)
                    lse_r[idx >= 0] = _lse_kernel(d_q, h)
            a = -0.5 * (ds[:, :m] / h) ** 2 - lse_r
            a = np.where(idx >= 0, a, -np.inf)
            scores["gen_lra"] = np.sum(np.logaddexp(0.0, a), axis=1)
            seconds["gen_lra"] = clock() - t
            notes["gen_lra"] = (f"KDE of the reference with and without the record, at its {m} "
                                f"nearest release rows (bandwidth {h:.4g}); "
                                f"{int(uniq.size)} release rows scored against the reference")
        if "near_copy" in attacks:
            t = clock()
            near = np.maximum(_equal_cells(query, release, ns.indices),
                              _one_cell_matches(query, release))
            notes["near_copy"] = (f"largest share of cells equal to one of the {k_s} closest "
                                  "release rows, or to any release row equal on all cells but "
                                  "one (exact, by hashing) (Hamming similarity)")
            if pools:
                # weighted by rarity: a near-copy of a record that has a real near-twin is what
                # chance gives (common patterns); label-free, the same pool for every record
                p = max(query.num.shape[1] + query.cat.shape[1], 1)
                within = sum(one_cell_counts(query, b) for b in pools)  # the record itself: 1
                twins = np.maximum(within - 1, 0) > 0
                near = near - twins * (p - 1) / p
                notes["near_copy"] += (f", minus {p - 1}/{p} where another real record (of the "
                                       f"{sum(b.n_rows for b in pools)} training and control rows, "
                                       "unlabelled) is within one cell")
            scores["near_copy"] = near
            seconds["near_copy"] = clock() - t
    if "classifier" in attacks:
        t = clock()
        s_fit, r_fit = release, reference
        if classifier_fit_rows is not None:
            s_fit, r_fit = release.take(classifier_fit_rows[0]), reference.take(classifier_fit_rows[1])
        scores["classifier"] = classifier_scores(s_fit, r_fit, query, seed=seed)
        seconds["classifier"] = clock() - t
        notes["classifier"] = (f"HistGradientBoosting (100 trees, balanced classes) fitted on "
                               f"{s_fit.n_rows} release vs {r_fit.n_rows} reference rows")
    ordered = {a: scores[a] for a in ATTACKS if a in scores}
    return AttackScores(ordered, {a: seconds[a] for a in ordered}, h, notes)
