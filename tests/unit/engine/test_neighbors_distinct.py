"""Searching the distinct reference rows gives exactly the plain search over every row."""

from __future__ import annotations

import numpy as np
import pytest

from synthguard.data.encoding import Block
from synthguard.engine.neighbors import available_backends, gower, kneighbors
from synthguard.engine.neighbors.distinct import distinct_rows, kneighbors_distinct


def _block(rng: np.random.Generator, n: int, levels: int) -> Block:
    num = rng.integers(0, levels, (n, 2)).astype(float)
    num[rng.random((n, 2)) < 0.05] = np.nan
    cat = rng.integers(0, levels, (n, 3)).astype(np.int64)
    return Block(num, cat, ["a", "b"], ["c", "d", "e"])


@pytest.mark.parametrize("backend", available_backends())
@pytest.mark.parametrize("k", [1, 4, 10])
def test_distinct_search_equals_the_plain_search_with_duplicates_and_ties(backend, k):
    rng = np.random.default_rng(k)
    ref = _block(rng, 600, 3)  # few levels: many duplicate rows and many rows tied at every distance
    q = _block(rng, 150, 3)
    metric = gower(np.array([2.0, 3.0]), clip=False, normalise=False, nan_rule="anonymeter")
    assert distinct_rows(ref)[0].size < 0.9 * ref.n_rows  # the distinct search does run
    want = kneighbors(q, ref, metric, k, backend=backend)
    got = kneighbors_distinct(q, ref, metric, k, backend=backend)
    assert np.array_equal(got.indices, want.indices)
    assert np.array_equal(got.distances, want.distances)


def test_distinct_search_with_fewer_groups_than_k_lists_every_row_in_order():
    ref = Block(np.array([[1.0], [0.0], [1.0], [0.0], [1.0]]), np.zeros((5, 0), np.int64), ["x"], [])
    q = Block(np.array([[0.9], [0.0]]), np.zeros((2, 0), np.int64), ["x"], [])
    metric = gower(np.ones(1), clip=False, normalise=False, nan_rule="anonymeter")
    got = kneighbors_distinct(q, ref, metric, 5, max_share=1.0)
    assert got.indices.tolist() == [[0, 2, 4, 1, 3], [1, 3, 0, 2, 4]]
    assert np.array_equal(got.indices, kneighbors(q, ref, metric, 5).indices)


def test_distinct_search_in_small_chunks_equals_the_plain_search(monkeypatch):
    from synthguard.engine.neighbors import distinct

    monkeypatch.setattr(distinct, "_CELLS", 7 * 16)  # 7 queries of 4 x 4 candidates at a time
    rng = np.random.default_rng(8)
    ref, q = _block(rng, 300, 3), _block(rng, 60, 3)
    metric = gower(np.array([2.0, 3.0]), clip=False, normalise=False, nan_rule="anonymeter")
    got = kneighbors_distinct(q, ref, metric, 4, backend="numpy")
    assert np.array_equal(got.indices, kneighbors(q, ref, metric, 4, backend="numpy").indices)
