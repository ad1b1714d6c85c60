"""Exact chunked brute-force k-NN in NumPy: the reference implementation and the fallback backend.

Memory is bounded by ``max_cells`` distances per chunk (queries x reference rows).
"""

from __future__ import annotations

import numpy as np

from ...data.encoding import Block
from .metric import DistanceMetric, pair_terms_numeric


def weighted_sums(q: Block, r: Block, metric: DistanceMetric) -> np.ndarray:
    """Weighted term sums ``s`` (before normalising and the root) for every query x reference pair.

    Terms are added in the fixed order numeric columns, then categorical columns, so the numba
    backend produces bitwise-identical sums.
    """
    wn, wc = metric.weights(q.num.shape[1], q.cat.shape[1])
    s = np.zeros((q.n_rows, r.n_rows))
    for j in range(q.num.shape[1]):
        t = pair_terms_numeric(q.num[:, j][:, None], r.num[:, j][None, :], float(metric.scale[j]), metric)
        s += wn[j] * t
    for j in range(q.cat.shape[1]):
        s += wc[j] * (q.cat[:, j][:, None] != r.cat[:, j][None, :])
    return s


def pairwise_distances(q: Block, r: Block, metric: DistanceMetric) -> np.ndarray:
    """Full ``(n_query, n_reference)`` distance matrix: for small inputs and tests only."""
    wn, wc = metric.weights(q.num.shape[1], q.cat.shape[1])
    return metric.finish(weighted_sums(q, r, metric), float(wn.sum() + wc.sum()))


def kneighbors_distances(q: Block, r: Block, metric: DistanceMetric, k: int, *, exclude_self: bool = False,
                         max_cells: int = 4_000_000, progress=None) -> tuple[np.ndarray, np.ndarray]:
    """k smallest distances and their reference indices, ordered by (distance, index).

    Ties are decided on the finished distance (two sums that round to the same distance are tied),
    then the lower reference index; missing slots hold ``inf`` and ``-1``.
    """
    nq, nr = q.n_rows, r.n_rows
    wn, wc = metric.weights(q.num.shape[1], q.cat.shape[1])
    total = float(wn.sum() + wc.sum())
    out_d = np.full((nq, k), np.inf)
    out_i = np.full((nq, k), -1, dtype=np.int64)
    chunk = max(1, min(nq, max_cells // max(nr, 1)))
    kk = min(k, nr - (1 if exclude_self else 0))
    for start in range(0, nq, chunk):
        stop = min(nq, start + chunk)
        if kk <= 0:
            break
        d = metric.finish(weighted_sums(q.take(np.arange(start, stop)), r, metric), total)
        valid = np.ones(d.shape, dtype=bool)
        if exclude_self:
            rows = np.arange(start, stop)
            ok = rows < nr
            valid[np.flatnonzero(ok), rows[ok]] = False
        d_sort = np.where(valid, d, np.inf)
        kth = np.partition(d_sort, kk - 1, axis=1)[:, kk - 1]
        cand = valid & (d_sort <= kth[:, None])
        rr, cc = np.nonzero(cand)
        vals = d_sort[rr, cc]
        order = np.lexsort((cc, vals, rr))
        rr, cc, vals = rr[order], cc[order], vals[order]
        first = np.searchsorted(rr, np.arange(stop - start))
        rank = np.arange(rr.size) - first[rr]
        keep = rank < kk
        out_d[start + rr[keep], rank[keep]] = vals[keep]
        out_i[start + rr[keep], rank[keep]] = cc[keep]
        if progress is not None:
            progress(stop - start)
    return out_d, out_i


def count_within_distances(q: Block, r: Block, metric: DistanceMetric, radius: float | np.ndarray, *,
                           exclude_self: bool = False, max_cells: int = 4_000_000) -> np.ndarray:
    """Number of reference rows at finished distance ``<= radius`` from each query (one radius,
    or one per query)."""
    nq, nr = q.n_rows, r.n_rows
    radii = np.broadcast_to(np.asarray(radius, dtype=float), (nq,))
    wn, wc = metric.weights(q.num.shape[1], q.cat.shape[1])
    total = float(wn.sum() + wc.sum())
    out = np.zeros(nq, dtype=np.int64)
    chunk = max(1, min(nq, max_cells // max(nr, 1)))
    for start in range(0, nq, chunk):
        stop = min(nq, start + chunk)
        hit = metric.finish(weighted_sums(q.take(np.arange(start, stop)), r, metric), total) \
            <= radii[start:stop, None]
        if exclude_self:
            rows = np.arange(start, stop)
            ok = rows < nr
            hit[np.flatnonzero(ok), rows[ok]] = False
        out[start:stop] = hit.sum(axis=1)
    return out


def count_within_sums(q: Block, r: Block, metric: DistanceMetric, radius_sum: float, *,
                      exclude_self: bool = False, max_cells: int = 4_000_000) -> np.ndarray:
    """Number of reference rows whose weighted sum to each query is ``<= radius_sum``."""
    nq, nr = q.n_rows, r.n_rows
    out = np.zeros(nq, dtype=np.int64)
    chunk = max(1, min(nq, max_cells // max(nr, 1)))
    for start in range(0, nq, chunk):
        stop = min(nq, start + chunk)
        s = weighted_sums(q.take(np.arange(start, stop)), r, metric)
        hit = s <= radius_sum
        if exclude_self:
            rows = np.arange(start, stop)
            ok = rows < nr
            hit[np.flatnonzero(ok), rows[ok]] = False
        out[start:stop] = hit.sum(axis=1)
    return out
