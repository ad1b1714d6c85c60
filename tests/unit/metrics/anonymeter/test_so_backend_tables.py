"""Singling out has one path: it asks the run's backend in one process as on a cluster. What the
one-process backend keeps between questions (the last query table, the whole release's values for
the multivariate search) changes no answer."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from synthguard.core.results import to_jsonable
from synthguard.engine.backend import query_counts_of, query_matrix
from synthguard.metrics.anonymeter import singling_out as so

from ....helpers import context, run
from .test_inference_evidence import leaky


@pytest.fixture(scope="module")
def tables():
    ori, syn, ctl = leaky(400, 3, 0.3)
    # repeated rows in every table: distinct rows and every-row counts differ
    return (pd.concat([ori, ori.iloc[:25]], ignore_index=True),
            pd.concat([syn, syn.iloc[:25]], ignore_index=True),
            pd.concat([ctl, ctl.iloc[:10]], ignore_index=True))


def _result(tables, name):
    res = run(name, ctx=context(*tables, metric=name), n_attacks=300)
    return json.dumps(to_jsonable(res.to_dict()), sort_keys=True)


@pytest.mark.parametrize("name", ["singling_out_univariate", "singling_out_multivariate"])
def test_the_result_is_the_same_when_each_batch_asks_for_its_release_rows(tables, name, monkeypatch):
    kept = _result(tables, name)
    monkeypatch.setattr(so, "RELEASE_MATRIX_BYTES", 0)  # no whole release kept: rows asked per batch
    assert _result(tables, name) == kept


def _queries(ctx, columns, n, seed):
    X = query_matrix(ctx.encoded.block("original").select(columns))
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, X.shape[0], n)
    col = np.tile(np.arange(len(columns)), (n, 1))
    op = np.zeros((n, len(columns)), dtype=np.int64)  # == every column's value of a drawn row
    return col, op, X[rows[:, None], col]


def test_query_counts_are_the_same_from_the_kept_table_as_from_a_fresh_one(tables):
    ctx = context(*tables)
    columns = ["age", "edu", "region", "sex"]
    backend = ctx.data
    n = backend.n_rows("original")
    some = np.sort(np.random.default_rng(0).choice(n, n // 2, replace=False))
    for rows in (None, some, None, some, some):  # the one kept table is replaced and reused
        q = _queries(ctx, columns, 200, 0 if rows is None else 1)
        at = np.arange(n) if rows is None else some
        X = query_matrix(ctx.encoded.block("original").take(at).select(columns))
        want = query_counts_of(X, at, q, 2)
        got = backend.query_counts("original", columns, q, cap=2, rows=rows)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])


def test_the_lowest_match_over_every_row_is_the_lowest_over_the_distinct_rows(tables):
    # the records name a query's original row from the every-row table: the first occurrence of
    # the distinct row it matches, as over the canonical distinct rows
    from synthguard.metrics.anonymeter._common import canonical

    ctx = context(*tables)
    columns = ["age", "edu", "region", "sex"]
    q = _queries(ctx, columns, 300, 2)
    every = ctx.data.query_counts("original", columns, q, cap=2)[1]
    distinct = ctx.data.query_counts("original", columns, q, cap=2,
                                     rows=canonical(ctx, "original", columns).rows)[1]
    assert (every >= 0).all()
    np.testing.assert_array_equal(every, distinct)


def test_every_row_asked_in_another_order_shares_the_every_row_table(tables):
    ctx = context(*tables)
    columns = ["age", "edu", "region", "sex"]
    backend = ctx.data
    n = backend.n_rows("original")
    q = _queries(ctx, columns, 200, 3)
    shuffled = np.random.default_rng(1).permutation(n)
    want = backend.query_counts("original", columns, q, cap=2)
    kept = backend._query_table
    for rows in (shuffled, shuffled.copy(), None):  # asked as given, then every row again
        got = backend.query_counts("original", columns, q, cap=2, rows=rows)
        assert backend._query_table is kept
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    some = np.sort(shuffled[: n - 1])
    got = backend.query_counts("original", columns, q, cap=2, rows=some)
    assert backend._query_table is not kept
    X = query_matrix(ctx.encoded.block("original").take(some).select(columns))
    np.testing.assert_array_equal(got[1], query_counts_of(X, some, q, 2)[1])


@pytest.mark.parametrize("order", ["every row", "reordered", "some rows"])
def test_the_query_matrix_by_row_blocks_holds_each_cell_of_the_block(monkeypatch, order):
    """Gathered a block of rows at a time, the singling-out matrix holds every asked row's numeric
    values then its categorical codes, a missing code as NaN: cell by cell what the block holds."""
    import synthguard.engine.backend as backend
    from synthguard.data.encoding import NAN_CODE, Block

    monkeypatch.setattr(backend, "_MATRIX_ROWS", 7)  # many blocks, the last one short
    rng = np.random.default_rng(2)
    n = 60
    num = rng.normal(size=(n, 3))
    num[rng.random((n, 3)) < 0.2] = np.nan
    cat = rng.integers(0, 5, (n, 4)).astype(np.int64)
    cat[rng.random((n, 4)) < 0.2] = NAN_CODE
    block = Block(num, cat, ("a", "b", "c"), ("d", "e", "f", "g"))
    rows = {"every row": None, "reordered": rng.permutation(n), "some rows": rng.choice(n, 23)}[order]
    pick_num, pick_cat = np.array([2, 0]), np.array([3, 1, 2])
    got = backend._query_matrix_of(block, pick_num, pick_cat, rows)
    at = np.arange(n) if rows is None else rows
    want_cat = cat[at][:, pick_cat].astype(float)
    want_cat[cat[at][:, pick_cat] == NAN_CODE] = np.nan
    want = np.concatenate([num[at][:, pick_num], want_cat], axis=1)
    assert got.shape == want.shape and np.array_equal(got, want, equal_nan=True)
    whole = backend.query_matrix(block)
    assert np.array_equal(whole[:, :3], num, equal_nan=True) and np.isnan(whole[:, 3:][cat == NAN_CODE]).all()
