"""k nearest neighbours and radius counts between two encoded tables: exact, chunked, one engine.

Every metric that needs a distance calls :func:`kneighbors`, :func:`nearest_distances` or
:func:`count_within` here. Backends: ``"numba"`` (compiled, pruned, parallel; used when numba is
installed) and ``"numpy"`` (chunked brute force). Both return identical results.
Memory: the outputs (n_query x k) plus O(chunk) work space, never an n x m matrix.
"""

from __future__ import annotations

import dataclasses
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.util import find_spec

import numpy as np

from ...core.arrays import stable_order
from ...data.encoding import Block
from ...errors import ConfigError
from ..parallel import PARALLEL_KERNELS, fit_threads
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
        raise ConfigError("backend 'numba' needs numba (a core dependency): pip install numba")
    return backend


def _check(q: Block, r: Block, k: int | None = None) -> None:
    if q.num_columns != r.num_columns or q.cat_columns != r.cat_columns:
        raise ConfigError("query and reference blocks must hold the same columns in the same order "
                          f"({q.columns} vs {r.columns})")
    if k is not None and k < 1:
        raise ConfigError(f"k (n_neighbors) must be at least 1, got {k}")


_LEAF_SIZE = 32
_LEAF_SIZE_MAX = 256


def _gower_fast(metric: DistanceMetric) -> bool:
    """Whether the kernels' Gower fast path applies (``p == 1``, ``nan_rule="max"``, all scales finite
    and > 0): the kernels' own test, ``_numba._is_gower``, on the parameters they are given."""
    from . import _numba  # lazily, as the tree's builder does

    scale, _, _, _, p, nan_rule = _params(metric, np.zeros(0), np.zeros(0))
    return bool(_numba._is_gower(scale, p, nan_rule))


def _leaf_size(n_rows: int, metric: DistanceMetric) -> int:
    """Rows per tree leaf. For Gower-type metrics (:func:`_gower_fast`: the kernels' fast path, where a
    categorical pre-check rejects most pairs in a few ns) ``n / 64`` within [32, 256]: a node bound
    costs tens of ns, so on weakly structured data (most leaves visited anyway) bigger leaves win, and
    64+ leaves keep the pruning on structured data. Otherwise 32."""
    if not _gower_fast(metric):
        return _LEAF_SIZE
    return int(min(_LEAF_SIZE_MAX, max(_LEAF_SIZE, n_rows // 64)))


#: rows a query's categorical group (or its groups one code away) may hold for the kernel to visit
#: them before the tree (past it the tree's pruning is cheaper than visiting them all)
_GROUP_BUDGET = 4096


@dataclass(frozen=True)
class _Groups:
    """The reference rows grouped by their categorical codes, for the Gower fast path's first steps
    (see ``_numba.knn_tree``). A row's key is its codes in mixed radix (``(code - low) * radix``
    summed over the columns); level 0 sorts the rows by it, level ``c + 1`` by the key without column
    ``c``. ``pos[l]`` holds the rows' tree positions in the order of level ``l``; ``distinct[l]``
    the distinct keys of level ``l`` and ``bound[l]`` where each one's run starts in that order
    (then ``n``): a query's group is found among the distinct keys, a far smaller array than the
    rows' keys (:meth:`ranges`), which are not kept (8 bytes a row and level: 1.3 GB for the two
    trees of a 10M-row reference with 7 categorical columns)."""

    low: np.ndarray
    span: np.ndarray
    radix: np.ndarray
    pos: np.ndarray
    distinct: tuple[np.ndarray, ...] = ()
    bound: tuple[np.ndarray, ...] = ()

    @staticmethod
    def of(rc: np.ndarray) -> _Groups | None:
        """The groups of the codes ``rc`` (tree order); None without categorical columns or when the
        keys would not fit in int64."""
        if rc.shape[0] == 0 or rc.shape[1] == 0:
            return None
        low = rc.min(axis=0)
        span = rc.max(axis=0) - low + 1
        radix = np.ones(rc.shape[1], dtype=np.int64)
        prod = 1
        for c in range(rc.shape[1]):
            radix[c] = prod
            prod *= int(span[c])
            if prod >= 1 << 62:
                return None
        n_lv = rc.shape[1] + 1
        index = np.int32 if rc.shape[0] < 2**31 else np.int64
        pos = np.empty((n_lv, rc.shape[0]), dtype=index)
        groups = _Groups(low, span, radix, pos)
        distinct, bound = [], []
        for lv, key, _ in groups.level_keys(rc):  # one sort per level, vectorised over the rows
            order = stable_order(key)  # np.argsort(key, kind="stable"), by radix passes
            pos[lv] = order
            k = key[order]
            first = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
            distinct.append(k[first])
            bound.append(np.r_[first, k.size].astype(index))
        return dataclasses.replace(groups, distinct=tuple(distinct), bound=tuple(bound))

    def level_keys(self, qc: np.ndarray) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """Per level ``lv`` (0: every code; ``c + 1``: every code but column ``c``'s), each query
        row's key at that level and whether a reference row can share it (its codes outside the
        reference's ranges at most the one column left out)."""
        inside = (qc >= self.low) & (qc < self.low + self.span)
        n_out = qc.shape[1] - inside.sum(axis=1)
        full = _mixed_radix(np.where(inside, qc, self.low), self.low, self.radix)
        yield 0, full, n_out == 0
        for c in range(qc.shape[1]):
            key = full - (np.where(inside[:, c], qc[:, c], self.low[c]) - self.low[c]) * self.radix[c]
            yield c + 1, key, (n_out == 0) | ((n_out == 1) & ~inside[:, c])

    def ranges(self, qc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per query row of codes ``qc`` and level: where its group starts and ends in :attr:`pos`
        (``(n_query, levels)``; empty when no reference row can be in it)."""
        start = np.zeros((qc.shape[0], qc.shape[1] + 1), dtype=np.int64)
        end = np.zeros_like(start)
        for lv, key, ok in self.level_keys(qc):
            # where the key would go among the distinct keys, and whether it is one of them: the
            # same positions as searching the rows' keys (left and right), one search of a short array
            at = np.searchsorted(self.distinct[lv], key, side="left")
            found = self.distinct[lv][np.minimum(at, self.distinct[lv].size - 1)] == key
            start[:, lv] = np.where(ok, self.bound[lv][at], 0)
            end[:, lv] = np.where(ok, self.bound[lv][at + found], 0)
        return start, end


def _mixed_radix(codes: np.ndarray, low: np.ndarray, radix: np.ndarray) -> np.ndarray:
    key = np.zeros(codes.shape[0], dtype=np.int64)
    for c in range(codes.shape[1]):  # a few columns: vectorised over the rows
        key += (codes[:, c] - low[c]) * radix[c]
    return key


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
    groups: _Groups | None = None
    #: per node, a column that separates its children and the right child's smallest key there
    #: (``_numba.split_rules``; column ``-1``: a leaf or none): the queries' home leaves
    split_col: np.ndarray | None = None
    split_cut: np.ndarray | None = None

    def arrays(self) -> tuple:
        return (self.rn, self.rc, self.perm, self.start, self.end, self.left, self.right, self.lo, self.hi,
                self.has_nan, self.clo, self.chi, self.cmask, self.depth)

    @property
    def nbytes(self) -> int:
        """Bytes the tree's arrays hold (its reordered rows, nodes, groups and split rules)."""
        parts = [a for a in self.arrays() if isinstance(a, np.ndarray)]
        parts += [a for a in (self.split_col, self.split_cut) if a is not None]
        if self.groups is not None:
            g = self.groups
            parts += [g.low, g.span, g.radix, g.pos, *g.distinct, *g.bound]
        return int(sum(a.nbytes for a in parts))


def _params(metric: DistanceMetric, wn: np.ndarray, wc: np.ndarray) -> tuple:
    return (np.ascontiguousarray(metric.scale, dtype=np.float64), np.ascontiguousarray(wn, dtype=np.float64),
            np.ascontiguousarray(wc, dtype=np.float64), bool(metric.clip), float(metric.p),
            0 if metric.nan_rule == "max" else 1)


_TREES: list[tuple[weakref.ref, weakref.ref, tuple, _Tree]] = []  # the last few trees built

#: Trees no kept block holds any more (their block was freed, or a larger tree evicted them), most
#: recent first, kept while their bytes total at most :data:`SPARE_TREE_BYTES`: a block of the same
#: rows made again (the training and control rows each test pools, a re-test's unchanged tables)
#: reads its tree, found by content (:func:`_is_reference`: the same rows, bit for bit), instead of
#: building it again. A tree larger than the budget is not kept (as before: dropped with its block);
#: a run drops them all when it ends (:func:`forget_spare_trees`).
_SPARE: list[tuple[tuple, _Tree]] = []
SPARE_TREE_BYTES = 128 * 2**20
#: At most this many spare trees (each a candidate a search checks against its block).
SPARE_TREES = 16
_LOCK = threading.RLock()  # the kept trees, read and written by the metrics' threads

#: A tree of fewer than 1 / ``_SMALL_SHARE`` of the largest kept tree's rows is *small*: it
#: evicts no larger tree (at most ``_KEEP_SMALL`` of them are kept beside the others).
_SMALL_SHARE = 4
_KEEP_SMALL = 4


def _keep(entries: list[tuple[weakref.ref, weakref.ref, tuple, _Tree]]
          ) -> list[tuple[weakref.ref, weakref.ref, tuple, _Tree]]:
    """The trees kept once ``entries[0]`` (the tree just built) joins them (most recent first).

    A tree as large as a quarter of the largest kept one evicts all but the most recent other
    tree (two trees kept, at most one of them old). A small tree evicts no larger one: at 10M
    release rows the searches of the records flagged in a tail (a few thousand rows) and of the
    200,000 sampled records (the DCR tests) came between two searches of the release and, two
    trees being kept, dropped the release's tree, built again for the next test (about 15 CPU s
    each, three times a run). Only the number of small trees beside it is bounded.

    Examples
    --------
    >>> big, small = np.zeros((1000, 1)), np.zeros((10, 1))
    >>> def entry(a):
    ...     return (None, None, (a.shape,), a)
    >>> kept = _keep([entry(small), entry(big), entry(big)])
    >>> [e[3].shape[0] for e in kept]
    [10, 1000, 1000]
    >>> [e[3].shape[0] for e in _keep([entry(big)] + kept)]
    [1000, 10]
    """
    def rows(e: tuple) -> int:
        return int(e[2][0][0])  # the reference block's rows (its numeric part's shape)

    new, old = entries[0], entries[1:]
    largest = max((rows(e) for e in old), default=0)
    if rows(new) * _SMALL_SHARE >= largest:
        return entries[:2]
    small = [e for e in old if rows(e) * _SMALL_SHARE < largest][:_KEEP_SMALL]
    return [new] + [e for e in old if rows(e) * _SMALL_SHARE >= largest or any(e is s for s in small)]


def _spare(key: tuple, tree: _Tree) -> None:
    """Keep ``tree`` among the spare trees (most recent first), the oldest dropped past
    :data:`SPARE_TREE_BYTES` (the caller holds :data:`_LOCK`)."""
    if tree.nbytes > SPARE_TREE_BYTES or any(t is tree for _, t in _SPARE):
        return
    _SPARE.insert(0, (key, tree))
    total = 0
    for at, (_, t) in enumerate(_SPARE):
        total += t.nbytes
        if total > SPARE_TREE_BYTES or at >= SPARE_TREES:
            del _SPARE[at:]
            break


def forget_spare_trees() -> None:
    """Drop every spare tree (a run is over: no copy of its rows is kept past it).

    Examples
    --------
    >>> forget_spare_trees(); len(_SPARE)
    0
    """
    with _LOCK:
        _SPARE.clear()


def _kept_trees(entries: list[tuple[weakref.ref, weakref.ref, tuple, _Tree]]) -> None:
    """``_TREES`` becomes ``entries``; a tree no entry keeps any more is spared (:func:`_spare`)."""
    held = {id(e[3]) for e in entries}
    for e in reversed(list(_TREES)):  # the oldest first: the most recent ends first among the spare
        if id(e[3]) not in held:  # (a copy of the list: a block freed meanwhile calls back here)
            _spare(e[2], e[3])
    _TREES[:] = entries


#: Blocks that may be some rows of a block searched before (a drop-and-retest's release: its
#: run's without the rows dropped): ``(rows, rows of the whole, the whole's rows kept, ascending,
#: weak references to trees of wholes)`` (:func:`searched_subset`).
_SUBSETS: list[tuple[int, int, np.ndarray, tuple[weakref.ref, ...]]] = []

_RECORDING = threading.local()  # the trees a thread's searches read, while it records them


@contextmanager
def recording() -> Iterator[list[_Tree]]:
    """The trees the searches of this thread read (built or kept) while in the block, in order
    (a drop-and-retest's run keeps those of its release: :func:`searched_subset`).

    Examples
    --------
    >>> from synthguard.engine.neighbors import gower
    >>> r = Block(np.arange(6.0).reshape(3, 2), np.zeros((3, 0), np.int64), ("a", "b"), ())
    >>> with recording() as trees:
    ...     _ = kneighbors(r, r, gower(np.array([5.0, 5.0])), 1, backend="numba")
    >>> len(trees) if _HAS_NUMBA else 1
    1
    """
    outer = getattr(_RECORDING, "trees", None)
    _RECORDING.trees = trees = []
    try:
        yield trees
    finally:
        _RECORDING.trees = outer
        if outer is not None:
            outer.extend(trees)


def searched_subset(n_whole: int, kept: np.ndarray, trees: Sequence[_Tree] = ()) -> Callable[[], None]:
    """Declare that a block of ``kept.size`` rows searched from now on may be the rows ``kept``
    (ascending positions) of a block of ``n_whole`` rows whose tree is one of ``trees`` (read
    while their holder keeps them: not held here), kept or spare: its tree is then that tree
    without the other rows
    (:func:`_subset_tree`, checked bit for bit, else built as usual). Returns the function that
    withdraws the declaration.

    Examples
    --------
    >>> withdraw = searched_subset(5, np.array([0, 2, 4]))
    >>> len(_SUBSETS) > 0
    True
    >>> withdraw(); withdraw()  # twice is harmless
    """
    entry = (int(kept.size), int(n_whole), np.asarray(kept, dtype=np.int64),
             tuple(weakref.ref(t) for t in trees))
    with _LOCK:
        _SUBSETS.append(entry)

    def withdraw() -> None:
        with _LOCK:
            _SUBSETS[:] = [e for e in _SUBSETS if e is not entry]

    return withdraw


def _subset_tree(r: Block, key: tuple) -> _Tree | None:
    """The tree of ``r`` from a kept or spare tree of a block ``r`` is some rows of
    (:func:`searched_subset`), or ``None``.

    The whole's tree without the other rows: its rows compacted in tree order, each node's range
    renumbered, the groups' positions likewise; every box, mask and split rule kept (a box of
    the whole's node holds the rows left in it), so the search is exact, its ids the rows of
    ``r`` (the kept rows keep their order: ties go to the lower row as in a tree of ``r``). The
    rows are checked bit for bit against ``r`` first (a chunk at a time)."""
    with _LOCK:
        hints = [h for h in _SUBSETS if h[0] == r.n_rows]
        held = [t for h in hints for t in (ref() for ref in h[3]) if t is not None]
        trees = [(h, t) for h in hints for t in [*held, *[e[3] for e in _TREES], *[t for _, t in _SPARE]]
                 if t.perm.size == h[1] and t.rn.shape[1] == key[0][1] and t.rc.shape[1] == key[1][1]
                 and (t.groups is not None) == (key[2] and r.cat.shape[1] > 0)]
    for (_, n_whole, kept, _), tree in trees:
        new_of = np.full(n_whole, -1, dtype=np.int64)
        new_of[kept] = np.arange(kept.size)
        sub = new_of[tree.perm]  # per tree position: the row of r, -1 where not kept
        stay = sub >= 0
        at = np.flatnonzero(stay)
        sub = sub[at]
        if sub.size != r.n_rows or not _same_rows(r, sub, tree, at):
            continue
        before = np.zeros(tree.perm.size + 1, dtype=np.int64)  # kept positions before each position
        np.cumsum(stay, out=before[1:])
        groups = tree.groups
        if groups is not None:
            pos = np.empty((groups.pos.shape[0], sub.size), dtype=groups.pos.dtype)
            bound = []
            for lv in range(groups.pos.shape[0]):  # a few levels: vectorised over the rows
                p_lv = groups.pos[lv]
                keep_lv = stay[p_lv]
                pos[lv] = before[p_lv[keep_lv]]
                counted = np.zeros(p_lv.size + 1, dtype=np.int64)
                np.cumsum(keep_lv, out=counted[1:])
                bound.append(counted[groups.bound[lv]].astype(groups.bound[lv].dtype))
            groups = dataclasses.replace(groups, pos=pos, bound=tuple(bound))
        return dataclasses.replace(tree, rn=np.ascontiguousarray(tree.rn[at]), rc=np.ascontiguousarray(tree.rc[at]),
                                   perm=sub.astype(tree.perm.dtype), start=before[tree.start],
                                   end=before[tree.end], groups=groups)
    return None


def _same_rows(r: Block, rows: np.ndarray, tree: _Tree, at: np.ndarray | None = None) -> bool:
    """Whether ``r``'s rows ``rows`` are the tree's rows at positions ``at`` (default: its
    positions in order), bit for bit (missing values included), a chunk at a time: no whole copy."""
    step = _QUERY_CHUNK * 16
    for first in range(0, rows.size, step):
        q = rows[first:first + step]
        t = slice(first, first + q.size) if at is None else at[first:first + step]
        if not (np.array_equal(np.ascontiguousarray(r.num[q], dtype=np.float64).view(np.int64),
                               tree.rn[t].view(np.int64))
                and np.array_equal(r.cat[q], tree.rc[t])):
            return False
    return True


def _build(r: Block, metric: DistanceMetric, wn: np.ndarray, wc: np.ndarray) -> _Tree:
    """The tree of ``r``, reused while the same arrays are searched again (metrics such as DCR query
    one reference with several tables; blocks are never modified in place), under any metric of
    the same kind: a tree's boxes, groups and split rules do not depend on the metric (its scales
    and weights only steer the choice of split columns), and every search is exact, so the results
    are those of a tree built for the metric searched (the DCR, membership and copy tests search
    the same release rows under ranges of different tables). The tree used last comes first; a
    small tree does not evict a large one (:func:`_keep`). Other arrays of the same rows, bit for
    bit, read a kept or spare tree of them (:data:`_SPARE`)."""
    key = (r.num.shape, r.cat.shape, _gower_fast(metric))  # the leaf size and the groups follow the kind
    with _LOCK:
        for at, (num_ref, cat_ref, k, tree) in enumerate(_TREES):
            if num_ref() is r.num and cat_ref() is r.cat and k == key:
                _TREES.insert(0, _TREES.pop(at))
                return _recorded(tree)
        same_shape = [e[3] for e in _TREES if e[2] == key] + [t for k, t in _SPARE if k == key]
    found = next((t for t in same_shape if _is_reference(r, t)), None)  # the same rows: its tree
    if found is None and _SUBSETS:
        found = _subset_tree(r, key)  # some rows of a block searched before: its tree without the others
    with _LOCK:
        _forget_dead_trees()  # before a new tree is built: a stale tree is not held beside it
    tree = found if found is not None else _build_tree(r, metric, wn, wc)
    with _LOCK:
        try:
            # a tree whose block is gone can never be asked for again by that block: spared (or
            # dropped) with its block
            entry = (weakref.ref(r.num, _forget_dead_trees), weakref.ref(r.cat, _forget_dead_trees), key, tree)
        except TypeError:  # arrays that do not support weak references: no caching
            return _recorded(tree)
        _SPARE[:] = [e for e in _SPARE if e[1] is not tree]
        _kept_trees(_keep([entry, *_TREES]))
    return _recorded(tree)


def _recorded(tree: _Tree) -> _Tree:
    """``tree``, listed among the trees this thread records (:func:`recording`) if it does."""
    trees = getattr(_RECORDING, "trees", None)
    if trees is not None and not any(t is tree for t in trees):
        trees.append(tree)
    return tree


def _forget_dead_trees(_: object = None) -> None:
    """Drop the kept trees whose reference block was freed (no search of that block can ask for
    them again), sparing them (:func:`_spare`) for a block of the same rows."""
    trees = globals().get("_TREES")  # None while the interpreter shuts down
    lock = globals().get("_LOCK")
    if trees and lock is not None:
        with lock:
            _kept_trees([e for e in trees if e[0]() is not None and e[1]() is not None])


def _build_tree(r: Block, metric: DistanceMetric, wn: np.ndarray, wc: np.ndarray, *,
                owned: bool = False) -> _Tree:
    from . import _numba

    rn = np.ascontiguousarray(r.num, dtype=np.float64)
    rc = np.ascontiguousarray(r.cat, dtype=np.int64)
    perm, start, end, left, right, depth = _numba.build_tree(rn, rc, *_params(metric, wn, wc),
                                                               _leaf_size(rn.shape[0], metric))
    if owned and rn is r.num and rc is r.cat and rn.flags.writeable and rc.flags.writeable:
        for a in (rn, rc):  # reorder the caller's arrays in place, a column at a time: no second copy
            for c in range(a.shape[1]):
                a[:, c] = a[perm, c]
        rn_s, rc_s = rn, rc
    else:
        rn_s, rc_s = np.ascontiguousarray(rn[perm]), np.ascontiguousarray(rc[perm])
    lo, hi, has_nan, clo, chi, cmask = _numba.node_boxes(rn_s, rc_s, start, end, left, right)
    groups = _Groups.of(rc_s) if _gower_fast(metric) else None
    split_col, split_cut = _numba.split_rules(left, right, lo, hi, has_nan, clo, chi)
    return _Tree(rn_s, rc_s, perm, start, end, left, right, lo, hi, has_nan, clo, chi, cmask, int(depth), groups,
                 split_col, split_cut)


def _query_order(q: Block, tree: _Tree, metric: DistanceMetric, wn: np.ndarray, wc: np.ndarray) -> np.ndarray:
    """Queries sorted by the tree leaf they fall into: neighbouring queries then visit the same nodes,
    which keeps the tree and the rows they touch in cache. Results do not depend on the order."""
    if q.n_rows < 1024:
        return np.arange(q.n_rows)
    if _is_reference(q, tree):  # the reference searched against itself: each row's own leaf
        return tree.perm
    from . import _numba

    qn, qc = np.ascontiguousarray(q.num, dtype=np.float64), np.ascontiguousarray(q.cat, dtype=np.int64)
    if tree.split_col is None:
        leaves = _numba.home_leaves(qn, qc, tree.left, tree.right, tree.lo, tree.hi, tree.has_nan, tree.clo,
                                    tree.chi, tree.cmask, *_params(metric, wn, wc))
    else:  # one comparison per level (a k-d tree's descent) in place of two bounds over every column
        leaves = _numba.split_leaves(qn, qc, tree.left, tree.right, tree.split_col, tree.split_cut, tree.lo,
                                     tree.hi, tree.has_nan, tree.clo, tree.chi, tree.cmask, *_params(metric, wn, wc))
    return stable_order(leaves)


def _is_reference(q: Block, tree: _Tree) -> bool:
    """Whether the query rows are the tree's reference rows in their order (bit for bit, missing
    values included): then sorting them by home leaf is the tree's own order, ``tree.perm``."""
    if q.n_rows != tree.perm.size or q.num.shape[1] != tree.rn.shape[1] or q.cat.shape[1] != tree.rc.shape[1]:
        return False
    return _same_rows(q, tree.perm, tree)


def reference_index(reference: Block, metric: DistanceMetric, backend: str = "auto", *,
                    consume: bool = False) -> _Tree | None:
    """The box tree of ``reference`` under ``metric``, built once and passed to :func:`kneighbors`
    (``index=``) for many query blocks (one tree per group of reference partitions in
    :mod:`synthguard.distributed`). ``None`` for the NumPy backend, which builds no tree.

    ``consume=True``: the tree reorders ``reference``'s arrays in place and keeps them (half the
    memory); the block must not be used afterwards."""
    if _resolve(backend) != "numba" or reference.n_rows == 0:
        return None
    wn, wc = metric.weights(reference.num.shape[1], reference.cat.shape[1])
    return _build_tree(reference, metric, wn, wc, owned=consume)


def kneighbors(query: Block, reference: Block, metric: DistanceMetric, k: int = 1, *,
               exclude_self: bool = False, backend: str = "auto",
               progress: Callable[[int], None] | None = None, index: _Tree | None = None) -> Neighbors:
    """Exact k nearest reference rows of every query row.

    Parameters
    ----------
    query, reference : Block
        Encoded rows with the same columns (from one :class:`~synthguard.data.encoding.EncodedView`).
    metric : DistanceMetric
        The distance (see :mod:`synthguard.engine.neighbors.metric`).
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
    d, _, idx = _knn_numba(query, reference, metric, k, wn, wc, total, index=index,
                           exclude_self=exclude_self, progress=progress)
    return Neighbors(d, idx)


def kneighbors_within(query: Block, reference: Block, metric: DistanceMetric, k: int,
                      radius: np.ndarray, *, backend: str = "auto") -> Neighbors:
    """The k nearest reference rows of every query row among those at distance ``<= radius`` (one
    radius per query row): what :func:`kneighbors` lists up to the radius, the slots past it
    ``(inf, -1)``. A row with ``-1`` in its last slot has fewer than ``k`` rows within its radius.

    The compiled search starts each query with ``k`` placeholder neighbours at its radius (an id
    above every row's, so a row exactly at the radius still wins the tie): nothing farther is ever
    visited, far cheaper than a plain search when the radii are small.

    Examples
    --------
    >>> from synthguard.data.encoding import Block
    >>> from synthguard.engine.neighbors import lp
    >>> ref = Block(np.array([[0.0], [1.0], [3.0]]), np.zeros((3, 0), np.int64), ["x"], [])
    >>> q = Block(np.array([[0.0], [2.9]]), np.zeros((2, 0), np.int64), ["x"], [])
    >>> nb = kneighbors_within(q, ref, lp(np.ones(1), p=1), 2, np.array([1.0, 0.5]))
    >>> nb.indices.tolist()
    [[0, 1], [2, -1]]
    """
    _check(query, reference, k)
    radius = np.asarray(radius, dtype=float)
    if radius.shape != (query.n_rows,) or np.isnan(radius).any():
        raise ConfigError("kneighbors_within: one radius (a number) per query row is needed")
    backend = _resolve(backend)
    wn, wc = metric.weights(query.num.shape[1], query.cat.shape[1])
    total = float(wn.sum() + wc.sum())
    if backend == "numpy" or query.num.shape[1] + query.cat.shape[1] == 0 or query.n_rows == 0:
        nb = kneighbors(query, reference, metric, k, backend=backend)
        far = nb.distances > radius[:, None]
        return Neighbors(np.where(far, np.inf, nb.distances), np.where(far, -1, nb.indices))
    placeholder = np.iinfo(np.int64).max - 1  # above every row id, below the kernel's "empty"
    r = np.maximum(radius, 0.0)
    s = r ** metric.p
    if metric.normalise and total > 0:
        s = s * total
    s = np.nextafter(s * (1.0 + 1e-9), np.inf)  # a bound of the sums within the radius
    start = (np.repeat(r[:, None], k, axis=1), np.repeat(s[:, None], k, axis=1),
             np.full((query.n_rows, k), placeholder, dtype=np.int64))
    d, _, idx = _knn_numba(query, reference, metric, k, wn, wc, total, start=start)
    empty = (idx == placeholder) | (radius[:, None] < 0)
    return Neighbors(np.where(empty, np.inf, d), np.where(empty, -1, idx))


def nearest_ties(query: Block, reference: Block, metric: DistanceMetric, *, backend: str = "auto"
                 ) -> tuple[Neighbors, np.ndarray]:
    """The nearest reference row of every query row (``kneighbors(..., 1)``: ties to the lower
    index) and how many reference rows are at that same finished distance (``0`` without
    reference rows): a query with more than one is tied, and only those need
    :func:`kneighbors_within` to list them.

    The compiled search counts them as it goes (every row at the nearest distance is visited, none
    is pruned), so the count costs no second search; the NumPy backend counts in a second pass.

    Examples
    --------
    >>> from synthguard.data.encoding import Block
    >>> from synthguard.engine.neighbors import lp
    >>> ref = Block(np.array([[0.0], [2.0], [2.0], [5.0]]), np.zeros((4, 0), np.int64), ["x"], [])
    >>> q = Block(np.array([[1.0], [4.0]]), np.zeros((2, 0), np.int64), ["x"], [])
    >>> nb, ties = nearest_ties(q, ref, lp(np.ones(1), p=1))
    >>> nb.indices[:, 0].tolist(), ties.tolist()
    ([0, 3], [3, 1])
    """
    _check(query, reference, 1)
    backend = _resolve(backend)
    wn, wc = metric.weights(query.num.shape[1], query.cat.shape[1])
    total = float(wn.sum() + wc.sum())
    if backend == "numpy" or query.num.shape[1] + query.cat.shape[1] == 0:
        nb = kneighbors(query, reference, metric, 1, backend="numpy")
        counts = _numpy.count_within_distances(query, reference, metric, nb.distances[:, 0])
        return nb, np.where(nb.indices[:, 0] >= 0, counts, 0)
    counts = np.zeros(query.n_rows, dtype=np.int64)
    d, _, idx = _knn_numba(query, reference, metric, 1, wn, wc, total, counts=counts)
    return Neighbors(d, idx), counts


def _knn_numba(query: Block, reference: Block, metric: DistanceMetric, k: int, wn: np.ndarray,
               wc: np.ndarray, total: float, *, index: _Tree | None = None, exclude_self: bool = False,
               progress: Callable[[int], None] | None = None, query_ids: np.ndarray | None = None,
               reference_ids: np.ndarray | None = None,
               start: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
               counts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The compiled tree search: ``(distances, weighted sums, ids)``, each ``(n_query, k)``.
    ``counts`` (int64, ``(n_query,)``): filled with the number of reference rows at each query's
    nearest distance (rows of ``start`` not counted)."""
    from . import _numba

    nq = query.n_rows
    if start is not None:
        d, sums, idx = (np.array(a, copy=True) for a in start)
    else:
        d = np.full((nq, k), np.inf)
        sums = np.full((nq, k), np.inf)
        idx = np.full((nq, k), -1, dtype=np.int64)
    if nq == 0 or reference.n_rows == 0:
        return d, sums, idx
    r_ids = np.zeros(0, dtype=np.int64) if reference_ids is None else \
        np.ascontiguousarray(reference_ids, dtype=np.int64)
    q_ids = np.arange(nq, dtype=np.int64) if query_ids is None else np.asarray(query_ids, dtype=np.int64)
    no_seed = np.zeros((0, k))
    no_count = np.zeros(0, dtype=np.int64)
    no_group = np.zeros((0, 0), dtype=np.int64)
    with PARALLEL_KERNELS:  # the kernels use every core: one search at a time (see synthguard.engine.parallel)
        tree = index if index is not None else _build(reference, metric, wn, wc)
        order = _query_order(query, tree, metric, wn, wc)
        for first in range(0, nq, _QUERY_CHUNK):
            fit_threads()  # the share of the cores of the metrics running now
            rows = order[first:first + _QUERY_CHUNK]
            qb = query.take(rows)
            od = np.empty((rows.size, k))
            os_ = np.empty((rows.size, k))
            oi = np.empty((rows.size, k), dtype=np.int64)
            oc = no_count if counts is None else np.empty(rows.size, dtype=np.int64)
            if start is not None:
                seed = (np.ascontiguousarray(d[rows]), np.ascontiguousarray(sums[rows]),
                        np.ascontiguousarray(idx[rows]))
            else:
                seed = (no_seed, no_seed, no_seed.astype(np.int64))
            groups = (no_group, no_group, no_group) if tree.groups is None else \
                (*tree.groups.ranges(qb.cat), tree.groups.pos)
            groups = (*groups, _GROUP_BUDGET)
            _numba.knn_tree(qb.num, qb.cat, *tree.arrays(), *_params(metric, wn, wc), total,
                            bool(metric.normalise), int(k), bool(exclude_self),
                            np.ascontiguousarray(q_ids[rows]), r_ids, *seed, *groups, od, os_, oi, oc)
            d[rows] = od
            sums[rows] = os_
            idx[rows] = oi
            if counts is not None:
                counts[rows] = oc
            if progress is not None:
                progress(rows.size)
    return d, sums, idx


def merge_neighbours(k: int, *results: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest of several partial ``(distances, ids, ...)`` results over disjoint reference
    rows, per query: by distance, then the lower id (``-1`` = no neighbour, last)."""
    d = np.concatenate([r[0] for r in results], axis=1)
    i = np.concatenate([r[1] for r in results], axis=1)
    key = np.where(i < 0, np.iinfo(np.int64).max, i)
    order = np.lexsort((key, d), axis=1)[:, :k]
    return np.take_along_axis(d, order, axis=1), np.take_along_axis(i, order, axis=1)


def kneighbors_step(query: Block, reference: Block | None, metric: DistanceMetric, k: int, *,
                    query_ids: np.ndarray, reference_ids: np.ndarray, exclude_self: bool = False,
                    start: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
                    index: _Tree | None = None, backend: str = "auto", ties: bool = False
                    ) -> tuple[np.ndarray, ...]:
    """One step of an exact k-NN search over reference rows held in several blocks.

    Searching the blocks one after another, each step started from the previous step's result,
    gives exactly the result of one search over their union (ties by the lower id): the compiled
    backend starts with the bound of the rows already found, so a step prunes everything farther
    than the current k-th neighbour; the NumPy backend searches the block and merges.

    Parameters
    ----------
    query, reference : Block
        Encoded rows with the same columns. ``reference`` may be None when ``index`` is given (the
        tree holds the rows; a caller that keeps only the tree saves a copy of the block).
    metric : DistanceMetric
        The distance.
    k : int
        Number of neighbours.
    query_ids, reference_ids : numpy.ndarray
        A global id per query / reference row (int64, distinct within the reference rows of the
        whole search); the result holds reference ids. The NumPy backend needs ``reference_ids``
        increasing.
    exclude_self : bool
        Skip the reference row whose id equals the query's id.
    start : tuple, optional
        The ``(distances, sums, ids)`` returned by the previous step (None for the first block).
    index : optional
        The tree of ``reference`` from :func:`reference_index`.
    backend : {"auto", "numba", "numpy"}
    ties : bool
        Also count, per query, the reference rows of every step so far at its nearest distance
        (as :func:`nearest_ties`): ``start`` and the result then carry these counts (int64,
        ``(n_query,)``) as a fourth array. Not with ``exclude_self``.

    Returns
    -------
    tuple of numpy.ndarray
        ``(distances, sums, ids)``, each ``(n_query, k)`` (and the counts, with ``ties``); pass it
        as ``start`` of the next step. ``sums`` (the weighted sums behind the distances) are only
        meaningful to the next step.
    """
    backend = _resolve(backend)
    if reference is None:
        if index is None:
            raise ConfigError("kneighbors_step: give the reference block or its index")
        reference = Block(index.rn, index.rc, query.num_columns, query.cat_columns)  # tree order: unused
    _check(query, reference, k)
    reference_ids = np.asarray(reference_ids, dtype=np.int64)
    query_ids = np.asarray(query_ids, dtype=np.int64)
    if reference_ids.shape[0] != reference.n_rows or query_ids.shape[0] != query.n_rows:
        raise ConfigError("kneighbors_step: one id per query row and per reference row is needed")
    if ties and exclude_self:
        raise ConfigError("kneighbors_step: ties are not counted with exclude_self")
    wn, wc = metric.weights(query.num.shape[1], query.cat.shape[1])
    total = float(wn.sum() + wc.sum())
    before = None if start is None or not ties else (start[0][:, 0], start[3])  # the counts so far
    if backend == "numba" and query.num.shape[1] + query.cat.shape[1] > 0:
        # the kernel counts this block's rows at the final nearest distance (equal to the start's
        # when the block holds nothing nearer, then the start's rows there add up)
        counts = np.zeros(query.n_rows, dtype=np.int64) if ties else None
        d, sums, ids = _knn_numba(query, reference, metric, k, wn, wc, total, index=index,
                                  exclude_self=exclude_self, query_ids=query_ids, reference_ids=reference_ids,
                                  start=None if start is None else start[:3], counts=counts)
        if counts is None:
            return d, sums, ids
        return d, sums, ids, counts + (0 if before is None else np.where(d[:, 0] == before[0], before[1], 0))
    if reference_ids.size > 1 and np.any(np.diff(reference_ids) <= 0):
        raise ConfigError("kneighbors_step: the NumPy backend needs increasing reference ids")
    extra = 1 if exclude_self else 0
    d, local = _numpy.kneighbors_distances(query, reference, metric, k + extra)
    ids = np.where(local >= 0, reference_ids[np.maximum(local, 0)], -1)
    if exclude_self:
        self_hit = ids == query_ids[:, None]
        d = np.where(self_hit, np.inf, d)
        ids = np.where(self_hit, -1, ids)
    here = None
    if ties:  # this block's rows at its own nearest distance
        here = (d[:, 0], np.where(ids[:, 0] >= 0,
                                  _numpy.count_within_distances(query, reference, metric, d[:, 0]), 0))
    parts = [(d, ids)] if start is None else [(start[0], start[2]), (d, ids)]
    d, ids = merge_neighbours(k, *parts)
    if here is None:
        return d, np.zeros_like(d), ids
    counts = np.where(here[0] == d[:, 0], here[1], 0)
    if before is not None:
        counts = counts + np.where(before[0] == d[:, 0], before[1], 0)
    return d, np.zeros_like(d), ids, counts


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
    with PARALLEL_KERNELS:
        tree = _build(reference, metric, wn, wc)
        order = _query_order(query, tree, metric, wn, wc)
        for start in range(0, query.n_rows, _QUERY_CHUNK):
            fit_threads()
            rows = order[start:start + _QUERY_CHUNK]
            qb = query.take(rows)
            o = np.empty(rows.size, dtype=np.int64)
            _numba.count_tree(qb.num, qb.cat, *tree.arrays(), *_params(metric, wn, wc), thr,
                              bool(exclude_self), rows.astype(np.int64), o)
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
