"""k nearest neighbours and radius counts between two encoded tables: exact, chunked, one engine.

Every metric that needs a distance calls :func:`kneighbors`, :func:`nearest_distances` or
:func:`count_within` here. Backends: ``"numba"`` (compiled, pruned, parallel; used when numba is
installed) and ``"numpy"`` (chunked brute force). Both return identical results.
Memory: the outputs (n_query x k) plus O(chunk) work space, never an n x m matrix.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib.util import find_spec

import numpy as np

from ..encoding import Block
from ..errors import ConfigError
from . import _numpy
from .metric import DistanceMetric

_HAS_NUMBA = find_spec("numba") is not None
BACKENDS = ("auto", "numba", "numpy")
_QUERY_CHUNK = 16_384


@dataclass(frozen=True)
class Neighbors:
    """Result of a k-NN search: ``distances`` and ``indices`` of shape (n_query, k), nearest first.

    Where fewer than ``k`` reference rows exist, the missing slots hold ``inf`` and ``-1``.
    """

    distances: np.ndarray
    indices: np.ndarray


def available_backends() -> list[str]:
    """Backends usable on this machine."""
    return ["numba", "numpy"] if _HAS_NUMBA else ["numpy"]


def _resolve(backend: str) -> str:
    if backend not in BACKENDS:
        raise ConfigError(f"unknown neighbour backend {backend!r}; use one of {BACKENDS}")
    if backend == "auto":
        return "numba" if _HAS_NUMBA else "numpy"
    if backend == "numba" and not _HAS_NUMBA:
        raise ConfigError("backend 'numba' needs numba: pip install 'synthguard[fast]'")
    return backend


def _check(q: Block, r: Block, k: int | None = None) -> None:
    if q.num_columns != r.num_columns or q.cat_columns != r.cat_columns:
        raise ConfigError("query and reference blocks must hold the same columns in the same order "
                          f"({q.columns} vs {r.columns})")
    if k is not None and k < 1:
        raise ConfigError(f"k (n_neighbors) must be at least 1, got {k}")


def _pivot(r: Block, metric: DistanceMetric, wn: np.ndarray) -> int:
    """The numeric column with the most distinct values (on a sample): the best pruning bound."""
    best, best_n = -1, 1
    if r.num.shape[1] == 0 or r.n_rows < 256:
        return -1
    sample = r.num[:: max(1, r.n_rows // 20_000)]
    for j in range(r.num.shape[1]):
        if wn[j] <= 0 or metric.scale[j] <= 0:
            continue
        n = np.unique(sample[:, j][~np.isnan(sample[:, j])]).size
        if n > best_n:
            best, best_n = j, n
    return best


def _prepare(r: Block, metric: DistanceMetric, wn: np.ndarray):
    pivot = _pivot(r, metric, wn)
    if pivot < 0:
        return pivot, np.arange(r.n_rows, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.int64)
    col = r.num[:, pivot]
    nan_rows = np.flatnonzero(np.isnan(col)).astype(np.int64)
    ok = np.flatnonzero(~np.isnan(col))
    order = ok[np.argsort(col[ok], kind="stable")].astype(np.int64)
    return pivot, order, np.ascontiguousarray(col[order]), nan_rows


def kneighbors(query: Block, reference: Block, metric: DistanceMetric, k: int = 1, *,
               exclude_self: bool = False, backend: str = "auto",
               progress: Callable[[int], None] | None = None) -> Neighbors:
    """Exact k nearest reference rows of every query row.

    Parameters
    ----------
    query, reference : Block
        Encoded rows with the same columns (from one :class:`~synthguard.encoding.EncodedView`).
    metric : DistanceMetric
        The distance (see :mod:`synthguard.neighbors.metric`).
    k : int
        Number of neighbours.
    exclude_self : bool
        Query and reference are the same table: never return row ``i`` as a neighbour of row ``i``
        (other rows equal to it are still neighbours at distance 0).
    backend : {"auto", "numba", "numpy"}
        Kernel; results are identical.
    progress : callable, optional
        Called with the number of query rows finished, for progress bars.

    Returns
    -------
    Neighbors
        Distances and indices, nearest first; ties broken by the lower reference index.
    """
    _check(query, reference, k)
    if exclude_self and query.n_rows != reference.n_rows:
        raise ConfigError("exclude_self needs the query and reference to be the same table")
    backend = _resolve(backend)
    wn, wc = metric.weights(query.num.shape[1], query.cat.shape[1])
    total = float(wn.sum() + wc.sum())
    if backend == "numpy":
        s, idx = _numpy.kneighbors_sums(query, reference, metric, k, exclude_self=exclude_self,
                                        progress=progress)
    else:
        from . import _numba

        pivot, order, pivot_vals, nan_rows = _prepare(reference, metric, wn)
        nq = query.n_rows
        s = np.full((nq, k), np.inf)
        idx = np.full((nq, k), np.iinfo(np.int64).max, dtype=np.int64)
        nan_rule = 0 if metric.nan_rule == "max" else 1
        for start in range(0, nq, _QUERY_CHUNK):
            stop = min(nq, start + _QUERY_CHUNK)
            qb = query.take(np.arange(start, stop)) if (start, stop) != (0, nq) else query
            _numba.knn_kernel(qb.num, qb.cat, reference.num, reference.cat,
                              np.ascontiguousarray(metric.scale, dtype=np.float64), wn, wc,
                              bool(metric.clip), float(metric.p), nan_rule, int(k), bool(exclude_self),
                              start, order, pivot_vals, nan_rows, pivot, s[start:stop], idx[start:stop])
            if progress is not None:
                progress(stop - start)
        idx[idx == np.iinfo(np.int64).max] = -1
    d = metric.finish(s, total)
    d[idx < 0] = np.inf
    return Neighbors(d, idx)


def nearest_distances(query: Block, reference: Block, metric: DistanceMetric, *,
                      exclude_self: bool = False, backend: str = "auto") -> np.ndarray:
    """Distance from each query row to its closest reference row (DCR)."""
    return kneighbors(query, reference, metric, 1, exclude_self=exclude_self, backend=backend).distances[:, 0]


def count_within(query: Block, reference: Block, metric: DistanceMetric, radius: float, *,
                 exclude_self: bool = False, backend: str = "auto") -> np.ndarray:
    """Number of reference rows at distance ``<= radius`` from each query row."""
    _check(query, reference)
    backend = _resolve(backend)
    wn, wc = metric.weights(query.num.shape[1], query.cat.shape[1])
    total = float(wn.sum() + wc.sum())
    # radius in distance units -> weighted-sum units (inverse of metric.finish)
    r = float(radius) ** metric.p
    if metric.normalise and total > 0:
        r *= total
    r *= 1 + 1e-12  # distances equal to the radius count, despite rounding in the inversion
    if backend == "numpy":
        return _numpy.count_within_sums(query, reference, metric, r, exclude_self=exclude_self)
    from . import _numba

    pivot, order, pivot_vals, nan_rows = _prepare(reference, metric, wn)
    out = np.zeros(query.n_rows, dtype=np.int64)
    nan_rule = 0 if metric.nan_rule == "max" else 1
    _numba.count_kernel(query.num, query.cat, reference.num, reference.cat,
                        np.ascontiguousarray(metric.scale, dtype=np.float64), wn, wc, bool(metric.clip),
                        float(metric.p), nan_rule, r, bool(exclude_self), 0, order, pivot_vals, nan_rows,
                        pivot, out)
    return out


def pairwise_distances(query: Block, reference: Block, metric: DistanceMetric) -> np.ndarray:
    """Full distance matrix, for small inputs (tests, per-target attacks). Memory O(n x m)."""
    _check(query, reference)
    return _numpy.pairwise_distances(query, reference, metric)
