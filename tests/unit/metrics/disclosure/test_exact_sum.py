"""``exact_sum``: the correctly rounded total of many floats, whatever their order or grouping."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from synthguard.metrics.disclosure._cap_analysis import exact_sum


def test_exact_sum_is_the_correctly_rounded_total_in_any_order_or_grouping():
    rng = np.random.default_rng(0)
    for _ in range(50):
        v = rng.integers(0, 9, size=int(rng.integers(1, 3000))) / rng.integers(1, 29, size=1)[0]
        exact = float(sum(Fraction(x) for x in v.tolist()))
        assert exact_sum(v) == exact
        assert exact_sum(rng.permutation(v)) == exact
        uniq, counts = np.unique(v, return_counts=True)
        assert exact_sum(uniq, counts) == exact  # (value, count) tables merged from partitions
    # a case where naive left-to-right summation loses the small terms
    v = np.array([1e16, 1.0, -1e16, 1.0])
    assert exact_sum(v) == 2.0
    assert exact_sum(np.array([0.1]), np.array([3])) == float(Fraction(0.1) * 3)
