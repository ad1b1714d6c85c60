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
from typing import Any

import numpy as np

from ...data.encoding import Block
from ...engine.cells import most_equal_cells, near_counts, one_cell_counts
from ...engine.neighbors import DistanceMetric, kneighbors

__all__ = ["ATTACKS", "AttackScores", "BlockRows", "RoleRows", "attack_scores", "classifier_features",
           "classifier_scores", "one_cell_counts", "pooled_distances", "without_self"]

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


def _rows_and_ranks(idx: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct valid entries of ``idx`` (row numbers below ``n``; ``-1``: none), ascending,
    and each entry's position among them (``-1`` where none): ``np.unique`` of the valid entries
    and ``np.searchsorted`` into it, from a mark per row instead of two sorts of every entry."""
    valid = idx >= 0
    seen = np.zeros(n, dtype=bool)
    seen[idx[valid]] = True
    rank = np.cumsum(seen, dtype=np.int64) - 1
    return np.flatnonzero(seen), np.where(valid, rank[np.where(valid, idx, 0)], -1)


def _lse_kernel(d: np.ndarray, h: float) -> np.ndarray:
    """``log sum_j exp(-(d_j / h)^2 / 2)`` per row (inf distances add nothing)."""
    a = -0.5 * (d / h) ** 2
    top = np.max(a, axis=1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(under="ignore"):
        return top[:, 0] + np.log(np.sum(np.exp(a - top), axis=1) + 1e-300)


def _one_cell_share(exact: np.ndarray, within: np.ndarray, p: int) -> np.ndarray:
    """Per query row: 1 if the release holds an exact copy, ``(p - 1) / p`` if it holds a row equal
    on every cell but one, else 0, from :func:`~synthguard.engine.cells.near_counts` of the query
    against the release (exact up to 64-bit hash collisions)."""
    if p == 0:
        return np.zeros(exact.size)
    return np.where(exact > 0, 1.0, np.where(within > 0, (p - 1) / p, 0.0))


class BlockRows:
    """A table the attacks search and read, held as a :class:`Block` (one process).

    :class:`RoleRows` is the same table asked of a backend (one process or a cluster): the
    attacks use either through ``n_rows``, :meth:`kneighbors`, :meth:`take`, :meth:`near_counts`
    and :meth:`most_equal_cells`.
    """

    def __init__(self, block: Block, backend: str = "auto") -> None:
        self.block, self.backend = block, backend
        self.n_rows = block.n_rows

    def kneighbors(self, query: Block, metric: DistanceMetric, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The exact ``k`` nearest rows of every ``query`` row, ties by the lower index."""
        nb = kneighbors(query, self.block, metric, k, backend=self.backend)
        return nb.distances, nb.indices

    def take(self, rows: np.ndarray | None) -> Block:
        """The rows at ``rows`` (positions; ``None``: all)."""
        return self.block if rows is None else self.block.take(rows)

    def near_counts(self, query: Block) -> tuple[np.ndarray, np.ndarray]:
        """:func:`~synthguard.engine.cells.near_counts` of ``query`` against these rows."""
        return near_counts(query, self.block)

    def most_equal_cells(self, query: Block, idx: np.ndarray) -> np.ndarray:
        """Per ``query`` row, the most cells it shares with one of these rows at ``idx[i]``
        (positions; ``-1``: none): :func:`~synthguard.engine.cells.most_equal_cells`."""
        return most_equal_cells(query, self.block, idx)

    def rows_kneighbors(self, rows: np.ndarray, reference: Block, metric: DistanceMetric,
                        k: int) -> tuple[np.ndarray, np.ndarray]:
        """The exact ``k`` nearest ``reference`` rows of these rows at ``rows`` (positions)."""
        nb = kneighbors(self.block.take(rows), reference, metric, k, backend=self.backend)
        return nb.distances, nb.indices

    def held_kneighbors(self, query: Block, reference: Block, metric: DistanceMetric,
                        k: int) -> tuple[np.ndarray, np.ndarray]:
        """The exact ``k`` nearest ``reference`` rows of every ``query`` row (two blocks the
        caller holds), with this table's neighbour engine."""
        nb = kneighbors(query, reference, metric, k, backend=self.backend)
        return nb.distances, nb.indices


class RoleRows:
    """The rows of ``role`` encoded on ``columns``, asked of a backend (``ctx.data``): neighbour
    searches against the whole table (:meth:`Backend.kneighbors_block`), rows by position
    (:meth:`Backend.encoded_rows`), near-copy counts (:meth:`Backend.near_counts`) and the cells
    its rows share with query rows (:meth:`Backend.most_equal_cells`); nothing more of the table
    is read."""

    def __init__(self, data: Any, role: str, columns: Sequence[str]) -> None:
        self.data, self.role, self.columns = data, role, list(columns)
        self.n_rows = int(data.n_rows(role))

    def kneighbors(self, query: Block, metric: DistanceMetric, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self.data.kneighbors_block(query, self.role, self.columns, metric, k)

    def take(self, rows: np.ndarray | None) -> Block:
        rows = np.arange(self.n_rows) if rows is None else np.asarray(rows, dtype=np.int64)
        return self.data.encoded_rows(self.role, self.columns, rows)

    def near_counts(self, query: Block) -> tuple[np.ndarray, np.ndarray]:
        return self.data.near_counts(self.role, self.columns, query)

    def most_equal_cells(self, query: Block, idx: np.ndarray) -> np.ndarray:
        """:meth:`Backend.most_equal_cells`: the pairs compared where the rows lie, only the
        counts fetched."""
        return self.data.most_equal_cells(self.role, self.columns, query, idx)

    def rows_kneighbors(self, rows: np.ndarray, reference: Block, metric: DistanceMetric,
                        k: int) -> tuple[np.ndarray, np.ndarray]:
        """The rows of the role at ``rows`` as queries of a ``reference`` the caller holds
        (:meth:`Backend.kneighbors_rows_held`: a re-test reads the rows it shares with the run)."""
        return self.data.kneighbors_rows_held(self.role, self.columns, np.asarray(rows, dtype=np.int64),
                                              reference, metric, k)

    def held_kneighbors(self, query: Block, reference: Block, metric: DistanceMetric,
                        k: int) -> tuple[np.ndarray, np.ndarray]:
        """Two blocks the caller holds, searched through the backend
        (:meth:`Backend.kneighbors_held`: a re-test on the same blocks reads the run's answer)."""
        return self.data.kneighbors_held(query, reference, metric, k)


def pooled_distances(pools: Sequence[BlockRows | RoleRows], query: Block, metric: DistanceMetric,
                     k: int) -> np.ndarray:
    """The ``k`` nearest distances (ascending; fewer when the pools hold fewer rows) of every
    ``query`` row over the rows of ``pools`` together: one search of the pool when the pools are
    roles of one backend (:meth:`Backend.kneighbors_block_pooled`), else each pool's ``k``
    nearest, sorted together (the same numbers).

    Examples
    --------
    >>> import numpy as np
    >>> from synthguard.data.encoding import Block
    >>> from synthguard.engine.neighbors import gower
    >>> def mk(x):
    ...     return Block(np.array(x, float)[:, None], np.zeros((len(x), 0), np.int64), ["x"], [])
    >>> pooled_distances([BlockRows(mk([0, 5])), BlockRows(mk([1]))], mk([0.5]), gower(np.ones(1)), 2)
    array([[0.5, 0.5]])
    """
    live = [b for b in pools if b.n_rows]
    first = live[0] if live else None
    if len(live) > 1 and all(isinstance(b, RoleRows) and b.data is first.data and b.columns == first.columns
                             for b in live):
        k = int(min(k, sum(b.n_rows for b in live)))
        return first.data.kneighbors_block_pooled(query, [b.role for b in live], first.columns, metric, k)[0]
    return np.sort(np.concatenate([b.kneighbors(query, metric, int(min(k, b.n_rows)))[0] for b in live],
                                  axis=1), axis=1)[:, :k]


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


def attack_scores(query: Block, release: Block | RoleRows, reference: Block, metric: DistanceMetric, *,
                  k: int = 10, attacks: Sequence[str] = ATTACKS, seed: int = 0,
                  classifier_fit_rows: tuple[np.ndarray, np.ndarray] | None = None,
                  real: Block | RoleRows | Sequence[Block | RoleRows] | None = None,
                  query_in_reference: np.ndarray | None = None, reference_is_real: bool = False,
                  backend: str = "auto", clock: Callable[[], float] = time.perf_counter
                  ) -> AttackScores:
    """Every attack's score on the ``query`` records.

    Parameters
    ----------
    query : Block
        The records to score (members and non-members, in any order; the labels are not used).
    release : Block or RoleRows
        The release ``S``: a block, or a role of a backend (:class:`RoleRows`: searched where it
        lies, only the rows the attacks read fetched).
    reference : Block
        The reference sample ``R`` (real records disjoint from the queries).
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
    real : Block, RoleRows or a sequence of them, optional
        Every real record (training and control, unlabelled; several blocks or roles are counted
        as one pool without copying them), the queries among them: the
        near-copy score is lowered where another real record lies within one cell (rarity).
    query_in_reference : ndarray of int, optional
        Each query row's position in ``reference`` (-1 = not there): the reference may then hold
        the queries themselves (every real record, unlabelled), and each record is scored against
        the reference without itself (leave-one-out), so the score stays label-free.
    reference_is_real : bool
        ``reference`` holds every record of ``real`` (in any order), so the population density's
        nearest real records are read from the reference search instead of one more search of
        each of ``real``'s blocks: the same distances (the smallest of the pooled distances are
        the smallest of each block's smallest), one search fewer per block.
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
    release = release if isinstance(release, RoleRows) else BlockRows(release, backend)
    n_s, n_r = release.n_rows, reference.n_rows
    k = int(max(1, min(k, n_r)))
    k_s = int(max(1, min(n_s, max(k, min(50, round(k * n_s / max(n_r, 1)))))))
    scores: dict[str, np.ndarray] = {}
    seconds: dict[str, float] = {}
    notes: dict[str, str] = {}
    pools = [] if real is None else ([real] if isinstance(real, (Block, RoleRows)) else list(real))
    pools = [b if isinstance(b, RoleRows) else BlockRows(b, backend) for b in pools]
    need_knn = any(a in attacks for a in ("closest_distance", "near_copy", "dcr_diff", "domias",
                                          "plagiarism", "gen_lra"))
    h = float("nan")
    if need_knn:
        t0 = clock()
        ds, s_idx = release.kneighbors(query, metric, k_s)
        t1 = clock()
        self_pos = query_in_reference
        k_r = k if self_pos is None else int(min(k + 1, n_r))
        nr_d, nr_i = release.held_kneighbors(query, reference, metric, k_r)
        t2 = clock()
        dr, _ = without_self(nr_d, nr_i, self_pos, k)
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
            if reference_is_real and nr_d.shape[1] >= k + 1:
                dp = nr_d[:, 1:k + 1]  # ascending, as the sorted union below
            else:
                dp = pooled_distances(pools, query, metric, k + 1)[:, 1:k + 1]
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
            idx = s_idx[:, :m]
            uniq, inv = _rows_and_ranks(idx, n_s)
            inv = inv[idx >= 0]  # np.unique(idx[idx >= 0], return_inverse=True)
            lse_r = np.full(idx.shape, 0.0)
            if uniq.size:
                # the release rows at uniq (s_rows' rows), searched as release rows: a re-test
                # reads the answers of the rows it shares with the run
                nrs_d, nrs_i = release.rows_kneighbors(uniq, reference, metric, k_r)
                if self_pos is None:
                    lse_r[idx >= 0] = _lse_kernel(nrs_d, h)[inv]
                else:  # the reference's density without the record itself (leave-one-out)
                    own = np.broadcast_to(self_pos[:, None], idx.shape)[idx >= 0]
                    d_q, _ = without_self(nrs_d[inv], nrs_i[inv], own, k)
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
            p = query.num.shape[1] + query.cat.shape[1]
            # the largest share of cells equal to one of its k_s nearest release rows (0 without
            # columns): counted where the rows lie, none fetched
            shared = release.most_equal_cells(query, s_idx) / p if p else np.zeros(query.n_rows)
            near = np.maximum(shared, _one_cell_share(*release.near_counts(query), p))
            notes["near_copy"] = (f"largest share of cells equal to one of the {k_s} closest "
                                  "release rows, or to any release row equal on all cells but "
                                  "one (exact, by hashing) (Hamming similarity)")
            if pools:
                # weighted by rarity: a near-copy of a record that has a real near-twin is what
                # chance gives (common patterns); label-free, the same pool for every record
                p = max(query.num.shape[1] + query.cat.shape[1], 1)
                within = sum(b.near_counts(query)[1] for b in pools)  # the record itself: 1
                twins = np.maximum(within - 1, 0) > 0
                near = near - twins * (p - 1) / p
                notes["near_copy"] += (f", minus {p - 1}/{p} where another real record (of the "
                                       f"{sum(b.n_rows for b in pools)} training and control rows, "
                                       "unlabelled) is within one cell")
            scores["near_copy"] = near
            seconds["near_copy"] = clock() - t
    if "classifier" in attacks:
        t = clock()
        # only the rows it is fitted on taken (the whole release fetched and dropped, on a
        # cluster at 10M rows, took every worker past its memory limit)
        if classifier_fit_rows is not None:
            s_fit, r_fit = release.take(classifier_fit_rows[0]), reference.take(classifier_fit_rows[1])
        else:
            s_fit, r_fit = release.take(None), reference
        scores["classifier"] = classifier_scores(s_fit, r_fit, query, seed=seed)
        seconds["classifier"] = clock() - t
        notes["classifier"] = (f"HistGradientBoosting (100 trees, balanced classes) fitted on "
                               f"{s_fit.n_rows} release vs {r_fit.n_rows} reference rows")
    ordered = {a: scores[a] for a in ATTACKS if a in scores}
    return AttackScores(ordered, {a: seconds[a] for a in ordered}, h, notes)
