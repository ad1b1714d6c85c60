"""split_rules / split_leaves: the queries' home leaves by one comparison per level (a k-d tree's
descent) in place of two bounds over every column; the search's results do not depend on it."""

from __future__ import annotations

import numpy as np
import pytest

from synthguard.data.encoding import Block
from synthguard.engine.neighbors import _numba, engine, gower, kneighbors, lp


def _block(rng: np.random.Generator, n: int) -> Block:
    num = np.round(rng.normal(size=(n, 3)), 1)
    num[rng.random((n, 3)) < 0.05] = np.nan
    return Block(num, rng.integers(0, 4, (n, 2)), ("a", "b", "c"), ("d", "e"))


def _keys(tree) -> np.ndarray:  # noqa: ANN001
    """Every reference row's key per column (tree order): a value (missing: inf), then the codes."""
    num = np.where(np.isnan(tree.rn), np.inf, tree.rn)
    return np.hstack([num, tree.rc.astype(np.float64)])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_split_rule_separates_the_children_rows(seed):
    rng = np.random.default_rng(seed)
    metric = gower(np.full(3, 4.0), clip=True)
    wn, wc = metric.weights(3, 2)
    tree = engine._build_tree(_block(rng, 3000), metric, wn, wc)
    keys = _keys(tree)
    inner = np.flatnonzero(tree.left >= 0)
    assert (tree.split_col[inner] >= 0).mean() > 0.9  # nearly every node has one
    for node in inner[tree.split_col[inner] >= 0]:  # a test tree's few hundred nodes
        a, b, c = tree.left[node], tree.right[node], tree.split_col[node]
        assert (keys[tree.start[a]:tree.end[a], c] < tree.split_cut[node]).all()
        assert (keys[tree.start[b]:tree.end[b], c] >= tree.split_cut[node]).all()


@pytest.mark.parametrize("kind", ["gower", "lp"])
def test_a_reference_row_descends_to_its_own_leaf(kind):
    rng = np.random.default_rng(3)
    metric = gower(np.full(3, 4.0), clip=True) if kind == "gower" else lp(np.full(3, 4.0), p=2.0)
    wn, wc = metric.weights(3, 2)
    tree = engine._build_tree(_block(rng, 3000), metric, wn, wc)
    leaves = _numba.split_leaves(tree.rn, tree.rc, tree.left, tree.right, tree.split_col, tree.split_cut, tree.lo,
                                 tree.hi, tree.has_nan, tree.clo, tree.chi, tree.cmask, *engine._params(metric, wn, wc))
    own = np.empty(tree.rn.shape[0], dtype=np.int64)
    for node in np.flatnonzero(tree.left < 0):
        own[tree.start[node]:tree.end[node]] = node
    # a row equal to a row of another leaf may go there; every other row reaches its own leaf
    assert (leaves == own).mean() > 0.95
    assert (tree.left[leaves] < 0).all()


def test_queries_are_ordered_by_the_split_rules_not_the_bounds(monkeypatch):
    rng = np.random.default_rng(4)
    ref, q = _block(rng, 3000), _block(rng, 2000)
    metric = gower(np.full(3, 4.0), clip=True, normalise=True)
    want = kneighbors(q, ref, metric, 3, backend="numpy")

    def bounded(*a):  # noqa: ANN002, ANN202
        raise AssertionError("the home leaves were found by the bounds")

    monkeypatch.setattr(_numba, "home_leaves", bounded)
    got = kneighbors(q, ref, metric, 3, backend="numba")
    assert got.distances.tobytes() == want.distances.tobytes()
    assert got.indices.tobytes() == want.indices.tobytes()


def test_one_tree_serves_every_metric_of_its_kind_with_the_results_of_its_own(monkeypatch):
    """A reference searched under two Gower metrics (ranges of different tables) is built once;
    each search gives the neighbours of a tree built for its own metric (and of the brute force)."""
    rng = np.random.default_rng(6)
    ref, q = _block(rng, 3000), _block(rng, 500)
    m1, m2 = gower(np.full(3, 4.0), clip=True, normalise=True), gower(np.array([1.0, 9.0, 3.0]), clip=True)
    engine._TREES.clear()
    built = []
    real = engine._build_tree
    monkeypatch.setattr(engine, "_build_tree", lambda *a, **k: built.append(1) or real(*a, **k))
    for m in (m1, m2, m1):
        got = kneighbors(q, ref, m, 4, backend="numba")
        want = kneighbors(q, ref, m, 4, backend="numpy")
        assert got.distances.tobytes() == want.distances.tobytes()
        assert got.indices.tobytes() == want.indices.tobytes()
    assert len(built) == 1
    other = _block(rng, 3000)  # a second reference, then the first again: the last used comes first
    kneighbors(q, other, m1, 1, backend="numba")
    kneighbors(q, ref, m2, 1, backend="numba")
    kneighbors(q, _block(rng, 3000), m1, 1, backend="numba")
    kneighbors(q, ref, m1, 1, backend="numba")
    assert len(built) == 3
