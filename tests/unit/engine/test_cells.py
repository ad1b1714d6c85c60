"""The hash-table count behind the near-copy counts (``engine.cells``): the same counts as a sort
of the pool and a search of every key, on keys that crowd the table's slots."""

from __future__ import annotations

import numpy as np
import pytest

from synthguard.engine.cells import _count


def _sorted_count(keys: np.ndarray, pool: np.ndarray) -> np.ndarray:
    pool = np.sort(pool)
    return np.searchsorted(pool, keys, side="right") - np.searchsorted(pool, keys, side="left")


@pytest.mark.parametrize("kind", ["random", "clustered", "repeated", "zero"])
def test_the_hash_table_counts_equal_a_sorted_count(kind):
    rng = np.random.default_rng(3)
    if kind == "random":
        pool = rng.integers(0, 2**64 - 1, 50_000, dtype=np.uint64)
    elif kind == "clustered":  # every key's product with the multiplier is small: one slot for all
        inverse = pow(0x9E3779B97F4A7C15, -1, 2**64)
        pool = np.array([j * inverse % 2**64 for j in range(3000)], dtype=np.uint64)
    elif kind == "repeated":  # few distinct keys, many copies of each
        pool = rng.integers(0, 40, 30_000).astype(np.uint64)
    else:
        pool = np.zeros(1000, dtype=np.uint64)
    keys = np.concatenate([pool[rng.integers(0, pool.size, 5_000)],
                           rng.integers(0, 2**64 - 1, 5_000, dtype=np.uint64), np.zeros(3, np.uint64)])
    got = _count(keys, pool)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, _sorted_count(keys, pool))


def test_no_pool_or_no_keys_counts_nothing():
    assert _count(np.array([1, 2], dtype=np.uint64), np.zeros(0, np.uint64)).tolist() == [0, 0]
    assert _count(np.zeros(0, np.uint64), np.array([1], dtype=np.uint64)).tolist() == []


def test_the_cells_a_row_shares_with_its_named_rows_equal_a_cell_by_cell_comparison(monkeypatch):
    """``most_equal_cells``: per query row the most cells equal to one of the rows it names (numbers
    by value, -0.0 equal to 0.0, missing equal to missing; empty slots skipped), in chunks of pairs
    as in one pass."""
    import synthguard.engine.cells as cells
    from synthguard.data.encoding import Block

    rng = np.random.default_rng(4)
    num = rng.integers(0, 3, (300, 3)).astype(float)
    num[rng.random(num.shape) < 0.2] = np.nan
    num[rng.random(num.shape) < 0.1] = -0.0
    cat = rng.integers(0, 3, (300, 2))
    rows = Block(num, cat, ("a", "b", "c"), ("d", "e"))
    query = rows.take(rng.integers(0, 300, 40))
    query.num[query.num == 0] = 0.0  # -0.0 in the rows, 0.0 in the queries
    idx = rng.integers(0, 300, (40, 5))
    idx[::3, 2:] = -1
    idx[5] = -1

    def by_cells(i: int, j: int) -> int:
        a, b = query.num[i], rows.num[j]
        return int(sum(x == y or (x != x and y != y) for x, y in zip(a, b, strict=True))
                   + (query.cat[i] == rows.cat[j]).sum())

    want = [max([by_cells(i, j) for j in idx[i] if j >= 0], default=0) for i in range(40)]
    assert cells.most_equal_cells(query, rows, idx).tolist() == want
    monkeypatch.setattr(cells, "_PAIR_CHUNK", 7)
    assert cells.most_equal_cells(query, rows, idx).tolist() == want
    assert want[5] == 0 and max(want) == 5
