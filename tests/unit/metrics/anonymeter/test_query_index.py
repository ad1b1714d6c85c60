"""Singling-out match lists and counts through a column index equal the plain scans."""

from __future__ import annotations

import numpy as np
import pytest

from synthguard.engine import queries as Q


def _problem(rng: np.random.Generator, k: int, n: int = 400, m: int = 300, levels: int = 6):
    X = rng.integers(0, levels, (n, 4)).astype(float)
    X[rng.random((n, 4)) < 0.1] = np.nan
    qcol = np.stack([rng.choice(4, k, replace=False) for _ in range(m)]).astype(np.int64)
    qop = rng.integers(0, 8, (m, k)).astype(np.int64)
    qval = rng.integers(0, levels, (m, k)).astype(float)
    return X, qcol, qop, qval


@pytest.mark.parametrize("k", [1, 2, 3])
def test_match_lists_through_a_column_index_equal_the_plain_scan(k):
    X, qcol, qop, qval = _problem(np.random.default_rng(k), k)
    counts, _ = Q.count_matches(X, qcol, qop, qval)
    assert counts.max() > 1 and (counts == 0).any()
    want = Q.match_lists(X, qcol, qop, qval, counts)
    got = Q.match_lists(Q.ColumnIndex(X), qcol, qop, qval, counts)
    assert np.array_equal(got[0], want[0])
    assert np.array_equal(got[1], want[1])


@pytest.mark.parametrize("k", [1, 2])
def test_counts_and_single_matches_through_a_column_index_equal_the_plain_scan(k):
    X, qcol, qop, qval = _problem(np.random.default_rng(10 + k), k, n=300, levels=300)  # rare values
    c0, f0 = Q.count_matches(X, qcol, qop, qval, cap=2)
    c1, f1 = Q.count_matches(Q.ColumnIndex(X), qcol, qop, qval, cap=2)
    assert np.array_equal(c0, c1)
    one = c0 == 1
    assert one.sum() > 5
    assert np.array_equal(f0[one], f1[one])
