"""The interval a copy or linkage test prints beside its value is the value's own."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import synthguard
from synthguard.stats import wilson_interval

NAMES = ("near_copies", "close_neighbours", "qi_linkage")


def _frame(rng: np.random.Generator, n: int) -> pd.DataFrame:
    return pd.DataFrame({"a": rng.integers(0, 30, n), "b": rng.integers(0, 30, n),
                         "c": rng.integers(0, 30, n), "d": rng.normal(size=n).round(2),
                         "q": rng.choice(list("xyz"), n), "s": rng.choice(list("uv"), n)})


@pytest.fixture(scope="module")
def fresh_report():
    rng = np.random.default_rng(0)
    o, c, s = _frame(rng, 600), _frame(rng, 600), _frame(rng, 300)
    return synthguard.evaluate(o, s, control=c, metrics=list(NAMES),
                               metadata={"quasi_identifiers": ["a", "b", "q"], "sensitive": ["s"]},
                               retest_rows=0, retest_columns=0)


@pytest.mark.parametrize("name", NAMES)
def test_the_training_share_is_printed_with_its_own_interval_not_its_excess(fresh_report, name):
    """A fresh release: chance flags about as many training as control records, so the excess's
    interval straddles 0 below the training share; the metric table prints the share with the
    share's Wilson interval (before: with the excess's, 0.02 beside [-0.014, 0.014])."""
    res = fresh_report.result(name)
    assert res is not None and res.evidence is not None
    k = round(res.value * res.n)
    assert res.ci == pytest.approx(wilson_interval(k, res.n, 0.95))
    assert res.ci[0] <= res.value <= res.ci[1]
    assert res.evidence.effect_ci[0] <= res.evidence.effect <= res.evidence.effect_ci[1]
