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


def _assert_index_counts_equal_the_scan(X, index, qcol, qop, qval):
    """The index's counts equal the plain scan's, uncapped and capped at 2, and so do the first
    matching rows where the count stays below the cap."""
    for cap in (None, 2):
        c0, f0 = Q.count_matches(X, qcol, qop, qval, cap=cap)
        c1, f1 = Q.count_matches(index, qcol, qop, qval, cap=cap)
        assert np.array_equal(c0, c1)
        below = c0 < (cap or np.iinfo(np.int64).max)
        assert np.array_equal(f0[below], f1[below])


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


def test_counts_through_the_bucket_codes_equal_the_plain_scan_on_a_larger_table():
    # thousands of rows: many rows per bucket code, so predicates are decided on codes and, at a
    # bucket's edge, on values; ties, -0.0 and 0.0, missing values and missing query values
    rng = np.random.default_rng(7)
    n = 5000
    X = np.column_stack([rng.integers(0, 4, n), rng.integers(0, 60, n), rng.normal(size=n).round(2),
                         rng.integers(-3, 4, n) * 0.0 + rng.integers(0, 2, n)]).astype(float)
    X[rng.random(X.shape) < 0.05] = np.nan
    X[rng.random(n) < 0.1, 3] = -0.0
    m, k = 2000, 3
    qcol = np.stack([rng.choice(4, k, replace=False) for _ in range(m)]).astype(np.int64)
    qop = rng.integers(0, 8, (m, k)).astype(np.int64)
    qval = X[rng.integers(0, n, (m, k)), qcol]
    qval[rng.random((m, k)) < 0.02] = np.nan
    index = Q.ColumnIndex(X)
    # few-valued columns coded by their values' ranks (decided on codes alone), the rounded
    # normal one by buckets of its order (values tested at a bucket's edge)
    assert index.shift > 0 and index.ranked.tolist() == [True, True, False, True]
    _assert_index_counts_equal_the_scan(X, index, qcol, qop, qval)
    counts, _ = Q.count_matches(X, qcol, qop, qval)
    assert counts.max() > 100 and (counts == 1).any() and (counts == 0).any()
    want = Q.match_lists(X, qcol, qop, qval, counts)
    got = Q.match_lists(index, qcol, qop, qval, counts)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


def test_an_index_without_bucket_codes_counts_the_same(monkeypatch):
    # a wide table's index keeps no codes (CODES_BYTES): every predicate is tested on its value
    X, qcol, qop, qval = _problem(np.random.default_rng(3), 3, n=2000, levels=40)
    with_codes = Q.ColumnIndex(X)
    monkeypatch.setattr(Q, "CODES_BYTES", 0)
    without = Q.ColumnIndex(X)
    assert with_codes.codes.strides[1] > 0 and without.codes.strides == (0, 0, 0)
    for cap in (None, 2):
        want = Q.count_matches(with_codes, qcol, qop, qval, cap=cap)
        got = Q.count_matches(without, qcol, qop, qval, cap=cap)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    counts = Q.count_matches(X, qcol, qop, qval)[0]
    want = Q.match_lists(with_codes, qcol, qop, qval, counts)
    got = Q.match_lists(without, qcol, qop, qval, counts)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


def test_ranked_codes_and_distinct_value_searches_count_as_the_plain_scan_at_every_operator():
    # every operator on a ranked column (missing values, -0.0 beside 0.0, a value absent from the
    # column, a missing query value), a column of more than 256 values whose distinct values are
    # searched, and one whose distinct values are not kept (its sorted values are searched)
    rng = np.random.default_rng(11)
    n = 3000
    X = np.column_stack([rng.integers(-2, 3, n) * 1.0, rng.integers(0, 400, n) * 0.5,
                         rng.normal(size=n)]).astype(float)
    X[rng.random(X.shape) < 0.04] = np.nan
    X[rng.random(n) < 0.2, 0] = -0.0
    index = Q.ColumnIndex(X)
    assert index.ranked.tolist() == [True, False, False]
    m = 4000
    qcol = np.stack([rng.permutation(3) for _ in range(m)]).astype(np.int64)
    qop = rng.integers(0, 8, (m, 3)).astype(np.int64)
    qval = X[rng.integers(0, n, (m, 3)), qcol]
    qval[rng.random((m, 3)) < 0.05] = 0.25  # in no column
    for at in np.flatnonzero(rng.random(m) < 0.3):
        qcol[at, 1:] = qcol[at, 0]  # one column only (its predicates decided on its codes)
    for kept in (Q.DISTINCT_KEPT, 1):
        Q_kept = Q.DISTINCT_KEPT
        try:
            Q.DISTINCT_KEPT = kept
            idx = Q.ColumnIndex(X)
        finally:
            Q.DISTINCT_KEPT = Q_kept
        assert (np.diff(idx.distinct_at) > 0).sum() == (3 if kept > 1 else 0)
        _assert_index_counts_equal_the_scan(X, idx, qcol, qop, qval)


def test_an_index_keeps_no_sorted_copy_of_its_values():
    # a column index of a large release is held through a whole singling-out test: besides the
    # matrix, its order (4 bytes a cell), its position codes (1 byte) and its rows' codes (p bytes
    # a row), not a sorted copy of every value (8 bytes a cell); a column whose distinct values are
    # not kept is searched through its order, with the same counts
    rng = np.random.default_rng(5)
    n, p = 20_000, 3
    X = np.column_stack([rng.integers(0, 5, n), rng.integers(0, 300, n), rng.normal(size=n).round(2)]
                        ).astype(float)
    index = Q.ColumnIndex(X)
    held = sum(v.nbytes for k, v in vars(index).items()
               if isinstance(v, np.ndarray) and k not in ("X", "codes") and v.base is None)
    assert held <= n * p * (4 + 1) + 100_000  # + the kept distinct values (under 1,000), their hashes
    kept = Q.DISTINCT_KEPT
    try:
        Q.DISTINCT_KEPT = 1  # no column keeps its distinct values: every slice through the orders
        through_order = Q.ColumnIndex(X)
    finally:
        Q.DISTINCT_KEPT = kept
    m = 2000
    qcol = np.stack([rng.permutation(p)[:2] for _ in range(m)]).astype(np.int64)
    qop = rng.integers(0, 8, (m, 2)).astype(np.int64)
    qval = X[rng.integers(0, n, (m, 2)), qcol]
    _assert_index_counts_equal_the_scan(X, through_order, qcol, qop, qval)


@pytest.mark.parametrize("k", [1, 3, 14])
def test_smallest_columns_equal_numpys_argpartition_ties_included(k):
    # the multivariate search's column draws: the same columns as numpy's argpartition, also for
    # rows where values tie at the k-th smallest (rounded values: many ties)
    rng = np.random.default_rng(k)
    for u in (rng.random((5000, 15)), rng.random((5000, 15)).round(1)):
        want = np.sort(np.argpartition(u, k - 1, axis=1)[:, :k], axis=1)
        assert np.array_equal(Q.smallest_columns(u, k), want)


def test_smallest_columns_equal_numpys_argpartition_where_integer_keys_cannot_order_the_values():
    """Values outside [0, 1), values closer than 2**-53 (one integer key), and more columns than a
    key's low bits hold: the same columns as numpy's argpartition."""
    rng = np.random.default_rng(3)
    u = rng.random((4000, 15))
    u[:1000] = u[:1000] * 4.0 - 2.0  # negative and >= 1
    u[:500] *= 1e6  # beyond what an int64 key holds
    u[1000:2000, 5] = 1e-300  # below 2**-53, beside exact zeros
    u[1000:2000, 6] = 0.0
    u[2000:3000, 1] = np.nextafter(u[2000:3000, 2], 0.0)  # a hair apart: one integer key
    for v, k in ((u, 3), (u, 1), (rng.random((300, 1100)), 7)):
        want = np.sort(np.argpartition(v, k - 1, axis=1)[:, :k], axis=1)
        assert np.array_equal(Q.smallest_columns(v, k), want)


@pytest.mark.parametrize("block", [1, 7, 4096])
def test_smallest_columns_in_parallel_blocks_equal_the_one_thread_kernel(block):
    """The parallel kernel of the column draws (blocks of rows over the threads) gives exactly the
    one-thread kernel's columns and tie flags, for a row count that is not a multiple of the block,
    with ties at the k-th smallest value."""
    if not Q._HAS_NUMBA:
        pytest.skip("needs numba")
    rng = np.random.default_rng(block)
    for u, k in ((rng.random((9001, 15)), 4), (rng.random((1000, 15)).round(1), 3), (rng.random((3, 5)), 5)):
        want, want_tie = np.empty((u.shape[0], k), dtype=np.int64), np.zeros(u.shape[0], dtype=np.bool_)
        Q._smallest_kernel(u, k, want, want_tie)
        got, got_tie = np.empty_like(want), np.zeros_like(want_tie)
        Q._smallest_parallel(u, k, got, got_tie, block)
        assert np.array_equal(got, want) and np.array_equal(got_tie, want_tie)



def test_is_stable_order_accepts_exactly_numpys_stable_argsort():
    """Ties (-0.0 with 0.0 included) in ascending positions, missing values last and among
    themselves in ascending positions: the stable argsort passes, any other order fails."""
    rng = np.random.default_rng(12)
    for _ in range(30):
        col = rng.integers(-3, 4, 200).astype(float)
        col[rng.random(200) < 0.1] = np.nan
        col[col == 0] = np.where(rng.random(int((col == 0).sum())) < 0.5, -0.0, 0.0)
        o = np.argsort(col, kind="stable")
        assert Q.is_stable_order(col[o], o)
        i, j = sorted(rng.choice(200, 2, replace=False))
        swapped = o.copy()
        swapped[[i, j]] = swapped[[j, i]]
        # a swap keeps a stable order only when it swaps the same position (never here)
        assert not Q.is_stable_order(col[swapped], swapped)


def test_an_index_from_candidate_orders_equals_the_index_it_sorts_itself(monkeypatch):
    """A drop-and-retest hands the index its run's orders without the dropped rows: the right
    ones are used as they are, a wrong one (a value moved) is sorted again; the index is the same
    array for array."""
    import synthguard.engine.queries as queries

    rng = np.random.default_rng(13)
    parent = rng.integers(0, 40, (3500, 5)).astype(float)  # the run's release
    parent[rng.random((3500, 5)) < 0.05] = np.nan
    parent[:, 4] = rng.normal(size=3500).round(2)
    keep = np.sort(rng.choice(3500, 3000, replace=False))  # the rows the re-test keeps
    X = parent[keep]
    run_orders = np.stack([np.argsort(parent[:, j], kind="stable") for j in range(5)])
    new_of = np.full(3500, -1)
    new_of[keep] = np.arange(keep.size)
    moved = X.copy()
    moved[7, 2] = 1000.0  # the re-test's value of a kept row differs from the run's

    def candidate(j):
        o = new_of[run_orders[j]]
        return o[o >= 0]

    want, want_moved = Q.ColumnIndex(X), Q.ColumnIndex(moved)
    sorted_again = []
    real = queries.stable_order
    monkeypatch.setattr(queries, "stable_order", lambda a: sorted_again.append(1) or real(a))
    got = Q.ColumnIndex(X, orders=candidate)
    assert not sorted_again
    got_moved = Q.ColumnIndex(moved, orders=candidate)
    assert sorted_again == [1]  # only the column whose candidate is wrong
    for a, b in ((want, got), (want_moved, got_moved)):
        for name in ("order", "n_valid", "position_codes", "ranked", "distinct", "starts", "distinct_at",
                     "hash_keys", "hash_rows", "hash_at", "codes"):
            assert np.array_equal(getattr(a, name), getattr(b, name)), name
