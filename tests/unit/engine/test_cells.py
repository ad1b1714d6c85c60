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
