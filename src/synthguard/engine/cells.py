"""Rows equal on every cell but at most one, found by hashing (no distances): the near-copy
counts of the membership attacks, on one block or on each partition of a table (the counts add up).

A cell's hash is a 64-bit hash keyed by its column (numeric values by their bit pattern, ``-0.0`` =
``0.0``, every NaN equal; categorical codes as they are); a row's hash is the XOR of its cells', so
leaving column ``j`` out is one XOR. Exact up to 64-bit hash collisions (about ``n m / 2**64``).
"""

from __future__ import annotations

import numpy as np

from ..data.encoding import Block

__all__ = ["column_hash", "near_counts", "one_cell_counts"]


def column_hash(b: Block, j: int) -> np.ndarray:
    """The 64-bit cell hashes of column ``j`` of ``b`` (numeric columns first), one column at a
    time (memory: one column)."""
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


def _count(keys: np.ndarray, keys_pool: np.ndarray) -> np.ndarray:
    keys_pool = np.sort(keys_pool)
    return (np.searchsorted(keys_pool, keys, side="right")
            - np.searchsorted(keys_pool, keys, side="left")).astype(np.int64)


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
    for j in range(p):  # row hashes: XOR of the cells' column-keyed hashes
        rq ^= column_hash(query, j)
        rs ^= column_hash(pool, j)
    exact = _count(rq, rs)
    if p <= 1:
        return exact, np.full(query.n_rows, pool.n_rows, dtype=np.int64)
    total = (1 - p) * exact
    for j in range(p):  # loop over the column left out, vectorised over rows
        total += _count(rq ^ column_hash(query, j), rs ^ column_hash(pool, j))
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
