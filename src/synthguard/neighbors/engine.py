"""k nearest neighbours and radius counts between two encoded tables: exact, chunked, one engine.

Every metric that needs a distance calls :func:`kneighbors`, :func:`nearest_distances` or
:func:`count_within` here. Backends: ``"numba"`` (compiled, pruned, parallel; used when numba is
installed) and ``"numpy"`` (chunked brute force). Both return identical results.
Memory: the outputs (n_query x k) plus O(chunk) work space, never an n x m matrix.
"""

from __future__ import annotations

import weakref
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


_LEAF_SIZE = 32
_LEAF_SIZE_MAX = 256


def _leaf_size(n_rows: int, metric: DistanceMetric) -> int:
    """Rows per tree leaf. For Gower-type metrics (``p == 1``, ``nan_rule="max"``, all scales finite and
    > 0: the kernels' fast path, where a categorical pre-check rejects most pairs in a few ns) ``n / 64``
    within [32, 256]: a node bound costs tens of ns, so on weakly structured data (most leaves visited
    anyway) bigger leaves win, and 64+ leaves keep the pruning on structured data. Otherwise 32."""
    scale = np.asarray(metric.scale, dtype=float)
    fast = metric.p == 1.0 and metric.nan_rule == "max" and bool(np.all((scale > 0) & np.isfinite(scale)))
    if not fast:
        return _LEAF_SIZE
    return int(min(_LEAF_SIZE_MAX, max(_LEAF_SIZE, n_rows // 64)))


@dataclass(frozen=True)
class _Tree:
    """The reference rows reordered into a box tree (see :mod:`._numba`)."""

    rn: np.ndarray
    rc: np.ndarray
    perm: np.ndarray
    start: np.ndarray
    end: np.ndarray
    left: np.ndarray
    right: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    has_nan: np.ndarray
    clo: np.ndarray
    chi: np.ndarray
    cmask: np.ndarray
    depth: int

    def arrays(self) -> tuple:
        return (self.rn, self.rc, self.perm, self.start, self.end, self.left, self.right, self.lo, self.hi,
                self.has_nan, self.clo, self.chi, self.cmask, self.depth)


def _params(metric: DistanceMetric, wn: np.ndarray, wc: np.ndarray) -> tuple:
    return (np.ascontiguousarray(metric.scale, dtype=np.float64), np.ascontiguousarray(wn, dtype=np.float64),
            np.ascontiguousarray(wc, dtype=np.float64), bool(metric.clip), float(metric.p),
            0 if metric.nan_rule == "max" else 1)


_TREES: list[tuple[weakref.ref, weakref.ref, tuple, _Tree]] = []  # the last few trees built


def _build(r: Block, metric: DistanceMetric, wn: np.ndarray, wc: np.ndarray) -> _Tree:
    """The tree of ``r`` under ``metric``, reused while the same arrays are searched again (metrics
    such as DCR query one reference with several tables; blocks are never modified in place)."""
    key = (r.num.shape, r.cat.shape, _params(metric, wn, wc)[3:], np.asarray(metric.scale).tobytes(),
           wn.tobytes(), wc.tobytes())
    for num_ref, cat_ref, k, tree in _TREES:
        if num_ref() is r.num and cat_ref() is r.cat and k == key:
            return tree
    tree = _build_tree(r, metric, wn, wc)
    try:
        _TREES.insert(0, (weakref.ref(r.num), weakref.ref(r.cat), key, tree))
    except TypeError:  # arrays that do not support weak references: no caching
        return tree
    del _TREES[2:]
    return tree


def _build_tree(r: Block, metric: DistanceMetric, wn: np.ndarray, wc: np.ndarray) -> _Tree:
    from . import _numba

    rn = np.ascontiguousarray(r.num, dtype=np.float64)
    rc = np.ascontiguousarray(r.cat, dtype=np.int64)
    perm, start, end, left, right, depth = _numba.build_tree(rn, rc, *_params(metric, wn, wc),
                                                               _leaf_size(rn.shape[0], metric))
    rn_s, rc_s = np.ascontiguousarray(rn[perm]), np.ascontiguousarray(rc[perm])
    lo, hi, has_nan, clo, chi, cmask = _numba.node_boxes(rn_s, rc_s, start, end, left, right)
    return _Tree(rn_s, rc_s, perm, start, end, left, right, lo, hi, has_nan, clo, chi, cmask, int(depth))


def _query_order(q: Block, tree: _Tree, metric: DistanceMetric, wn: np.ndarray, wc: np.ndarray) -> np.ndarray:
    """Queries sorted by the tree leaf they fall into: neighbouring queries then visit the same nodes,
    which keeps the tree and the rows they touch in cache. Results do not depend on the order."""
    if q.n_rows < 1024:
        return np.arange(q.n_rows)
    from . import _numba

    leaves = _numba.home_leaves(np.ascontiguousarray(q.num, dtype=np.float64),
                                np.ascontiguousarray(q.cat, dtype=np.int64), tree.left, tree.right, tree.lo,
                                tree.hi, tree.has_nan, tree.clo, tree.chi, tree.cmask, *_params(metric, wn, wc))
    return np.argsort(leaves, kind="stable")


def reference_index(reference: Block, metric: DistanceMetric, backend: str = "auto") -> _Tree | None:
    """The box tree of ``reference`` under ``metric``, built once and passed to :func:`kneighbors`
    (``index=``) for many query blocks (one tree per reference partition in
    :mod:`synthguard.distributed`). ``None`` for the NumPy backend, which builds no tree."""
    if _resolve(backend) != "numba" or reference.n_rows == 0:
        return None
    wn, wc = metric.weights(reference.num.shape[1], reference.cat.shape[1])
    return _build_tree(reference, metric, wn, wc)


def kneighbors(query: Block, reference: Block, metric: DistanceMetric, k: int = 1, *,
               exclude_self: bool = False, backend: str = "auto",
               progress: Callable[[int], None] | None = None, index: _Tree | None = None) -> Neighbors:
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
    index : optional
        The tree of ``reference`` from :func:`reference_index` (same metric), not rebuilt here.

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
    if query.num.shape[1] + query.cat.shape[1] == 0:
        backend = "numpy"  # no columns: every distance is 0, nothing to prune
    if backend == "numpy":
        d, idx = _numpy.kneighbors_distances(query, reference, metric, k, exclude_self=exclude_self,
                                             progress=progress)
        return Neighbors(d, idx)
    from . import _numba

    nq = query.n_rows
    d = np.full((nq, k), np.inf)
    idx = np.full((nq, k), -1, dtype=np.int64)
    if nq == 0 or reference.n_rows == 0:
        return Neighbors(d, idx)
    tree = index if index is not None else _build(reference, metric, wn, wc)
    order = _query_order(query, tree, metric, wn, wc)
    for start in range(0, nq, _QUERY_CHUNK):
        rows = order[start:start + _QUERY_CHUNK]
        qb = query.take(rows)
        od = np.empty((rows.size, k))
        oi = np.empty((rows.size, k), dtype=np.int64)
        _numba.knn_tree(qb.num, qb.cat, *tree.arrays(), *_params(metric, wn, wc), total,
                        bool(metric.normalise), int(k), bool(exclude_self), rows.astype(np.int64), od, oi)
        d[rows] = od
        idx[rows] = oi
        if progress is not None:
            progress(rows.size)
    return Neighbors(d, idx)


def nearest_distances(query: Block, reference: Block, metric: DistanceMetric, *,
                      exclude_self: bool = False, backend: str = "auto") -> np.ndarray:
    """Distance from each query row to its closest reference row (DCR)."""
    return kneighbors(query, reference, metric, 1, exclude_self=exclude_self, backend=backend).distances[:, 0]


def count_within(query: Block, reference: Block, metric: DistanceMetric, radius: float, *,
                 exclude_self: bool = False, backend: str = "auto") -> np.ndarray:
    """Number of reference rows at distance ``<= radius`` from each query row (exactly: a row at a
    finished distance equal to ``radius`` counts, one an ulp above does not)."""
    _check(query, reference)
    backend = _resolve(backend)
    radius = float(radius)
    if np.isnan(radius):
        raise ConfigError("count_within: radius is NaN; give a number >= 0")
    if query.num.shape[1] + query.cat.shape[1] == 0:
        backend = "numpy"
    if backend == "numpy":
        return _numpy.count_within_distances(query, reference, metric, radius, exclude_self=exclude_self)
    from . import _numba

    wn, wc = metric.weights(query.num.shape[1], query.cat.shape[1])
    total = float(wn.sum() + wc.sum())
    out = np.zeros(query.n_rows, dtype=np.int64)
    if query.n_rows == 0 or reference.n_rows == 0 or radius < 0:
        return out
    thr = _sum_threshold(radius, metric, total)
    tree = _build(reference, metric, wn, wc)
    order = _query_order(query, tree, metric, wn, wc)
    for start in range(0, query.n_rows, _QUERY_CHUNK):
        rows = order[start:start + _QUERY_CHUNK]
        qb = query.take(rows)
        o = np.empty(rows.size, dtype=np.int64)
        _numba.count_tree(qb.num, qb.cat, *tree.arrays(), *_params(metric, wn, wc), thr, bool(exclude_self),
                          rows.astype(np.int64), o)
        out[rows] = o
    return out


def _sum_threshold(radius: float, metric: DistanceMetric, total: float) -> float:
    """The largest weighted sum whose finished distance is ``<= radius`` (exact, by stepping ulps)."""
    if radius == np.inf:
        return np.inf
    s = radius ** metric.p
    if metric.normalise and total > 0:
        s *= total

    def fin(x: float) -> float:
        return float(metric.finish(np.array([x]), total)[0])

    for _ in range(10_000):
        if fin(s) <= radius:
            break
        s = float(np.nextafter(s, -np.inf))
    for _ in range(10_000):
        nxt = float(np.nextafter(s, np.inf))
        if fin(nxt) > radius:
            break
        s = nxt
    return s


def pairwise_distances(query: Block, reference: Block, metric: DistanceMetric) -> np.ndarray:
    """Full distance matrix, for small inputs (tests, per-target attacks). Memory O(n x m)."""
    _check(query, reference)
    return _numpy.pairwise_distances(query, reference, metric)
