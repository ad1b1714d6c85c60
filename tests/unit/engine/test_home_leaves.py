"""home_leaves: the leaf each query reaches stepping into the child of smaller bound, the right
child's bound stopped once it exceeds the left one's: the leaves of the whole bounds."""

from __future__ import annotations

import numpy as np
import pytest

from synthguard.data.encoding import Block
from synthguard.engine.neighbors import _numba, engine, gower, lp


def _whole_bound_leaves(q: Block, tree, args: tuple) -> np.ndarray:
    """Every query's leaf from both children's whole bounds (the compiled bound, called per node)."""
    qn = np.ascontiguousarray(q.num, dtype=np.float64)
    qc = np.ascontiguousarray(q.cat, dtype=np.int64)
    out = np.empty(q.n_rows, dtype=np.int64)
    for t in range(q.n_rows):  # a test's few hundred queries
        node = 0
        while tree.left[node] >= 0:
            a, b = tree.left[node], tree.right[node]
            la, lb = (_numba._node_bound(qn, qc, t, c, tree.lo, tree.hi, tree.has_nan, tree.clo, tree.chi,
                                         tree.cmask, *args, np.inf, _numba._NO_LB) for c in (a, b))
            node = a if la <= lb else b
        out[t] = node
    return out


@pytest.mark.parametrize("kind", ["gower", "gower_anonymeter", "lp"])
@pytest.mark.parametrize("seed", [0, 1])
def test_home_leaves_equal_the_leaves_of_the_whole_bounds(kind, seed):
    rng = np.random.default_rng(seed)

    def block(n: int) -> Block:
        num = np.round(rng.normal(size=(n, 3)), 1)
        num[rng.random((n, 3)) < 0.05] = np.nan
        return Block(num, rng.integers(0, 4, (n, 2)), ("a", "b", "c"), ("d", "e"))

    ref, q = block(3000), block(400)
    metric = {"gower": gower(np.full(3, 4.0), clip=True),
              "gower_anonymeter": gower(np.full(3, 4.0), normalise=False, nan_rule="anonymeter"),
              "lp": lp(np.full(3, 4.0), p=2.0)}[kind]
    wn, wc = metric.weights(3, 2)
    tree = engine._build_tree(ref, metric, wn, wc)
    args = engine._params(metric, wn, wc)
    got = _numba.home_leaves(np.ascontiguousarray(q.num), np.ascontiguousarray(q.cat, dtype=np.int64), tree.left,
                             tree.right, tree.lo, tree.hi, tree.has_nan, tree.clo, tree.chi, tree.cmask, *args)
    assert np.array_equal(got, _whole_bound_leaves(q, tree, args))
