"""Rows equal on every cell but at most one, found by hashing (no distances): the near-copy
counts of the membership attacks, on one block or on each partition of a table (the counts add up).

The cells are hashed as every masked row is (:mod:`synthguard.data.hashing`): a cell's hash is the
64-bit cell hash (chain 0) of its code (numeric values by their bits, ``-0.0`` = ``0.0``, every NaN
equal; categorical codes as they are) keyed by its column's position; a row's hash is the wrapping
sum of its cells', so leaving column ``j`` out is one subtraction. Exact up to 64-bit hash
collisions (about ``n m / 2**64``). Beside them, the cells two given rows share
(:func:`equal_cells`, compared directly): the near-copy attack's share of a record's cells its
nearest release rows keep.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ..data.encoding import Block
from ..data.hashing import cell_hashes, float_codes

__all__ = ["best_of_pairs", "column_hash", "equal_cells", "fibonacci_slot", "most_equal_cells", "near_counts",
           "one_cell_counts"]

#: Row pairs compared at a time by :func:`equal_cells` (a few arrays of this many values)
_PAIR_CHUNK = 1 << 20


def column_hash(b: Block, j: int) -> np.ndarray:
    """The 64-bit cell hashes of column ``j`` of ``b`` (numeric columns first), one column at a
    time (memory: one column): :func:`~synthguard.data.hashing.cell_hashes` of its codes, keyed
    by ``j``.

    Examples
    --------
    >>> import numpy as np
    >>> b = Block(np.array([[0.0], [-0.0], [np.nan]]), np.array([[3], [3], [4]]), ("x",), ("c",))
    >>> h = column_hash(b, 0)
    >>> bool(h[0] == h[1]), bool(h[0] == h[2]), bool(column_hash(b, 1)[0] == h[0])
    (True, False, False)
    """
    n_num = b.num.shape[1]
    code = float_codes(b.num[:, j]) if j < n_num else b.cat[:, j - n_num]
    return cell_hashes(code, np.uint64(j))


def equal_cells(query: Block, rows: Block, qi: np.ndarray, ri: np.ndarray) -> np.ndarray:
    """Per pair ``(query row qi[p], row ri[p] of rows)``, how many cells are equal (numbers by
    value, ``-0.0 == 0.0``, missing equal to missing; categorical codes as they are), compared a
    column at a time, vectorised over the pairs (:data:`_PAIR_CHUNK` at a time).

    Examples
    --------
    >>> import numpy as np
    >>> q = Block(np.array([[1.0, np.nan]]), np.array([[2]]), ("x", "y"), ("c",))
    >>> r = Block(np.array([[1.0, np.nan], [0.0, 5.0]]), np.array([[3], [2]]), ("x", "y"), ("c",))
    >>> equal_cells(q, r, np.array([0, 0]), np.array([0, 1])).tolist()
    [2, 1]
    """
    qi = np.asarray(qi, dtype=np.int64)
    ri = np.asarray(ri, dtype=np.int64)
    out = np.zeros(qi.size, dtype=np.int64)
    for a in range(0, qi.size, _PAIR_CHUNK):
        b = min(a + _PAIR_CHUNK, qi.size)
        q, r = qi[a:b], ri[a:b]
        eq = out[a:b]
        for c in range(query.num.shape[1]):  # a few columns: vectorised over the pairs
            x, y = query.num[q, c], rows.num[r, c]
            eq += (x == y) | (np.isnan(x) & np.isnan(y))
        for c in range(query.cat.shape[1]):
            eq += query.cat[q, c] == rows.cat[r, c]
    return out


def most_equal_cells(query: Block, rows: Block, idx: np.ndarray) -> np.ndarray:
    """Per query row, the most cells it shares (:func:`equal_cells`) with one of the rows at
    ``idx[i]`` (positions in ``rows``; ``-1``: none), 0 when none is named.

    Examples
    --------
    >>> import numpy as np
    >>> q = Block(np.array([[1.0], [4.0]]), np.array([[2], [2]]), ("x",), ("c",))
    >>> r = Block(np.array([[1.0], [0.0]]), np.array([[3], [2]]), ("x",), ("c",))
    >>> most_equal_cells(q, r, np.array([[0, 1], [-1, -1]])).tolist()
    [1, 0]
    """
    idx = np.asarray(idx, dtype=np.int64).reshape(query.n_rows, -1)
    valid = idx >= 0
    qi = np.broadcast_to(np.arange(query.n_rows, dtype=np.int64)[:, None], idx.shape)[valid]
    return best_of_pairs(idx.shape, valid, equal_cells(query, rows, qi, idx[valid]))


def best_of_pairs(shape: tuple[int, ...], valid: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per row of a ``shape`` matrix of pairs, the largest of ``counts`` (one per pair where
    ``valid``, in row-major order), 0 when the row names none.

    Examples
    --------
    >>> import numpy as np
    >>> best_of_pairs((2, 2), np.array([[True, True], [False, False]]), np.array([3, 5])).tolist()
    [5, 0]
    """
    full = np.zeros(shape, dtype=np.int64)
    full[valid] = counts
    return full.max(axis=1, initial=0)


#: Fibonacci hashing's multiplier (2**64 / the golden ratio): a key's slot is the top bits of
#: its product with it
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True, inline="always")
def fibonacci_slot(key, shift):  # pragma: no cover - compiled
    """The first slot of ``key`` (uint64) in a hash table of ``2**(64 - shift)`` slots: the top
    bits of its product with :data:`_GOLDEN` (Fibonacci hashing). The hash tables of this
    package (here, and the column index's of :mod:`synthguard.engine.queries`) place keys with it."""
    return np.int64((key * _GOLDEN) >> shift)


@njit(cache=True, nogil=True)
def _count_kernel(keys, pool, out):  # pragma: no cover - compiled
    """``out[i]``: how many of ``pool`` equal ``keys[i]``, through one hash table of the pool
    (open addressing, linear probing; a slot is taken when its count is not 0; int32 counts:
    one pool, one process or one partition, never holds 2**31 keys)."""
    bits = 1
    while (1 << bits) < pool.size + pool.size // 2:  # at most 2/3 of the slots taken
        bits += 1
    mask = (1 << bits) - 1
    shift = np.uint64(64 - bits)
    slot_key = np.zeros(mask + 1, dtype=np.uint64)
    slot_count = np.zeros(mask + 1, dtype=np.int32)
    for i in range(pool.size):
        k = pool[i]
        s = fibonacci_slot(k, shift)
        while slot_count[s] != 0 and slot_key[s] != k:
            s = (s + 1) & mask
        slot_key[s] = k
        slot_count[s] += 1
    for i in range(keys.size):
        k = keys[i]
        s = fibonacci_slot(k, shift)
        while slot_count[s] != 0:
            if slot_key[s] == k:
                out[i] = slot_count[s]
                break
            s = (s + 1) & mask


def _count(keys: np.ndarray, keys_pool: np.ndarray) -> np.ndarray:
    """Per key of ``keys``, how many of ``keys_pool`` equal it (both uint64): one hash table of
    the pool (about 20 bytes a pool key while it counts), no sort (about 10x fewer CPU seconds
    than a sort of 1M pool keys and a binary search of 400,000 keys in it).

    Examples
    --------
    >>> _count(np.array([5, 7, 9], dtype=np.uint64), np.array([7, 5, 7, 0], dtype=np.uint64)).tolist()
    [1, 2, 0]
    """
    out = np.zeros(keys.size, dtype=np.int64)
    if keys.size and keys_pool.size:
        _count_kernel(np.ascontiguousarray(keys, dtype=np.uint64),
                      np.ascontiguousarray(keys_pool, dtype=np.uint64), out)
    return out


def near_counts(query: Block, pool: Block) -> tuple[np.ndarray, np.ndarray]:
    """Per query row, ``(exact, within)``: how many ``pool`` rows equal it on every cell, and on
    every cell but at most one (exact copies included, each counted once). One sorted count per
    column left out, vectorised over rows, hashing one column at a time; a row equal on all cells
    matches every left-out key, so ``within = sum_j count_j - (p - 1) * exact``. With at most one
    column every pool row is within one cell. Both are sums over the pool's rows: the counts of
    the partitions of a table add up to the table's.

    Examples
    --------
    >>> import numpy as np
    >>> mk = lambda a: Block(np.asarray(a, float), np.zeros((len(a), 0), np.int64), ("a", "b"), ())
    >>> [c.tolist() for c in near_counts(mk([[1, 2], [5, 5]]), mk([[1, 2], [1, 3], [4, 4]]))]
    [[1, 0], [2, 0]]
    """
    p = query.num.shape[1] + query.cat.shape[1]
    if pool.n_rows == 0:
        return np.zeros(query.n_rows, dtype=np.int64), np.zeros(query.n_rows, dtype=np.int64)
    rq = np.zeros(query.n_rows, dtype=np.uint64)
    rs = np.zeros(pool.n_rows, dtype=np.uint64)
    for j in range(p):  # row hashes: wrapping sums of the cells' column-keyed hashes
        rq += column_hash(query, j)
        rs += column_hash(pool, j)
    exact = _count(rq, rs)
    if p <= 1:
        return exact, np.full(query.n_rows, pool.n_rows, dtype=np.int64)
    total = (1 - p) * exact
    for j in range(p):  # loop over the column left out, vectorised over rows
        total += _count(rq - column_hash(query, j), rs - column_hash(pool, j))
    return exact, total


def one_cell_counts(query: Block, pool: Block) -> np.ndarray:
    """Per query row, the number of ``pool`` rows equal to it on every cell but at most one
    (exact copies included, each counted once): ``near_counts(query, pool)[1]``.

    Examples
    --------
    >>> import numpy as np
    >>> mk = lambda a: Block(np.asarray(a, float), np.zeros((len(a), 0), np.int64), ("a", "b"), ())
    >>> one_cell_counts(mk([[1, 2], [5, 5]]), mk([[1, 2], [1, 3], [4, 4]])).tolist()
    [2, 0]
    """
    return near_counts(query, pool)[1]
