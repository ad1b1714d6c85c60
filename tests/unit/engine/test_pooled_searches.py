"""Searches of roles pooled give, bit for bit, what one search per role gives: Backend.nearest_other
(close_neighbours' nearest other real record) and Backend.kneighbors_block_pooled (the membership
attacks' density of the other real records)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthguard.data.encoding import EncodedView
from synthguard.data.tables import prepare_tables
from synthguard.engine.backend import LocalBackend
from synthguard.engine.neighbors import gower
from synthguard.engine.neighbors.engine import merge_neighbours
from synthguard.metrics.membership.attacks import BlockRows, RoleRows, pooled_distances

COLS = ["g", "x", "y"]


def _frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x": rng.integers(0, 6, n).astype(float),  # coarse: ties and equal rows
                         "y": np.where(rng.random(n) < 0.1, np.nan, rng.normal(size=n).round(1)),
                         "g": rng.choice(list("abc"), n)})


def _backend(n_o: int, n_c: int) -> tuple[LocalBackend, object]:
    o = _frame(n_o, 1)
    c = pd.concat([_frame(n_c, 2), o.iloc[:min(5, n_o)]], ignore_index=True).iloc[:n_c]  # copies
    tables = prepare_tables(o, _frame(50, 3), c).in_canonical_order()
    view = EncodedView(tables)
    metric = gower(view.ranges(COLS, ("original", "control")), clip=True, normalise=True)
    return LocalBackend(tables, view), metric


def _per_role(b: LocalBackend, metric: object) -> np.ndarray:
    """The nearest other real row by one search per pair of roles, the smaller distance."""
    out = []
    for role in ("original", "control"):
        best = np.full(b.n_rows(role), np.inf)
        for ref in ("original", "control"):
            if b.n_rows(ref) - (ref == role) > 0:
                best = np.minimum(best, b.kneighbors(role, ref, COLS, metric, 1)[0][:, 0])
        out.append(best)
    return np.concatenate(out)


@pytest.mark.parametrize(("n_o", "n_c"), [(400, 250), (1, 1), (1, 30), (30, 1)])
def test_the_pooled_search_gives_the_nearest_other_row_of_the_searches_per_role(n_o, n_c):
    b, metric = _backend(n_o, n_c)
    got = b.nearest_other(("original", "control"), COLS, metric)
    want = _per_role(b, metric)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    if n_c > 5:  # the control holds copies of training rows
        assert (got == 0).any() and (got > 0).any()  # copies at 0, others farther: itself excluded


def test_a_single_pooled_row_has_no_other_row():
    o = _frame(1, 1)
    tables = prepare_tables(o, _frame(5, 3)).in_canonical_order()  # no control
    view = EncodedView(tables)
    metric = gower(view.ranges(COLS, ("original",)), clip=True, normalise=True)
    got = LocalBackend(tables, view).nearest_other(("original",), COLS, metric)
    assert got.tolist() == [np.inf]


@pytest.mark.parametrize("k", [1, 6, 40])
def test_a_search_of_the_pool_gives_the_per_role_searches_merged(k):
    b, metric = _backend(400, 250)
    query = b.encoded_rows("original", COLS, np.arange(0, 400, 3))
    d, idx = b.kneighbors_block_pooled(query, ("original", "control"), COLS, metric, k)
    parts, start = [], 0
    for role in ("original", "control"):
        rd, ri = b.kneighbors_block(query, role, COLS, metric, k)
        parts.append((rd, ri + start))
        start += b.n_rows(role)
    want_d, want_i = merge_neighbours(k, *parts)
    np.testing.assert_array_equal(d, want_d)
    np.testing.assert_array_equal(idx, want_i)
    assert (idx >= 400).any() == (k > 1)  # itself first: more than one neighbour reaches the control


@pytest.mark.parametrize(("n_o", "n_c", "k"), [(400, 250, 7), (3, 2, 7), (1, 30, 4)])
def test_the_attacks_pooled_distances_are_the_pools_searched_one_by_one(n_o, n_c, k):
    b, metric = _backend(n_o, n_c)
    query = b.encoded_rows("original", COLS, np.arange(n_o))
    roles = [RoleRows(b, r, COLS) for r in ("original", "control")]
    held = [BlockRows(b.encoded_rows(r, COLS, np.arange(b.n_rows(r)))) for r in ("original", "control")]
    got = pooled_distances(roles, query, metric, k)
    want = pooled_distances(held, query, metric, k)  # each pool searched, sorted together
    assert got.shape == want.shape == (n_o, min(k, n_o + n_c))
    np.testing.assert_array_equal(got, want)
