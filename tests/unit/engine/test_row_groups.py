"""row_groups: distinct_rows' groups of equal rows, ranked by their lowest row (hash + check)."""

from __future__ import annotations

import numpy as np
import pytest

from synthguard.data.encoding import Block
from synthguard.engine.neighbors import distinct as D


def _by_first(first: np.ndarray, inverse: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return first[order], rank[inverse]


def _block(rng: np.random.Generator, n: int, n_cat: int) -> Block:
    num = rng.integers(0, 3, (n, 2)).astype(float)
    num[rng.random((n, 2)) < 0.1] = np.nan
    num[rng.random((n, 2)) < 0.1] = -0.0  # apart from 0.0, as distinct_rows tells them
    cat = rng.integers(0, 3, (n, n_cat))
    return Block(num, cat, ("a", "b"), tuple("cdef"[:n_cat]))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n_cat", [0, 2])
def test_row_groups_are_distinct_rows_groups_ranked_by_their_lowest_row(seed, n_cat):
    rng = np.random.default_rng(seed)
    b = _block(rng, 800, n_cat)
    first, inverse = D.row_groups(b)
    want = _by_first(*D.distinct_rows(b))
    assert np.array_equal(first, want[0]) and np.array_equal(inverse, want[1])
    assert np.all(np.diff(first) > 0)


def test_a_hash_collision_falls_back_to_the_rows_bytes(monkeypatch):
    monkeypatch.setattr(D, "_MIX", np.uint64(0))  # every row hashes to 0: one run of different rows
    called = []
    real = D.distinct_rows
    monkeypatch.setattr(D, "distinct_rows", lambda b: called.append(1) or real(b))
    b = _block(np.random.default_rng(5), 300, 1)
    first, inverse = D.row_groups(b)
    want = _by_first(*real(b))
    assert called and np.array_equal(first, want[0]) and np.array_equal(inverse, want[1])
