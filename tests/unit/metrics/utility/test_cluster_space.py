"""ml_utility_cluster measures both silhouettes in one space: a broken release no longer scores
more clustering utility than a fresh real sample (each training table's own scaling made the two
silhouettes incomparable; found by a review in session 46)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import synthguard


@pytest.mark.parametrize("seed", [0, 1])
def test_a_broken_release_scores_below_a_fresh_sample(shared_data, seed):
    df = pd.read_csv(shared_data / "acs12.csv")
    n = min(len(df) // 3, 600)
    idx = np.random.default_rng(100 + seed).permutation(len(df))
    o, c, fresh = (df.iloc[idx[i * n:(i + 1) * n]].reset_index(drop=True) for i in range(3))
    broken = fresh.assign(income=fresh["income"] * 10, gender=fresh["gender"].iloc[0],
                          race=fresh["race"].replace({"black": "white"}))
    diff = {name: synthguard.evaluate(o, rel, control=c, metrics=["ml_utility_cluster"], seed=0)
            .result("ml_utility_cluster").value for name, rel in (("fresh", fresh), ("broken", broken))}
    assert diff["broken"] < diff["fresh"], diff


def test_the_original_as_release_loses_nothing(shared_data):
    df = pd.read_csv(shared_data / "acs12.csv").iloc[:1200]
    o, c = df.iloc[:600].reset_index(drop=True), df.iloc[600:].reset_index(drop=True)
    res = synthguard.evaluate(o, o.copy(), control=c, metrics=["ml_utility_cluster"],
                              seed=0).result("ml_utility_cluster")
    assert res.value == 0.0
