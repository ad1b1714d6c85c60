"""Groundhog and the set features on every column type: ordered categoricals (TAPAS crashes),
datetimes, booleans and missing values; plus the generators on such data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthguard.attacks import (
    AuxiliaryDataKnowledge,
    BlackBoxKnowledge,
    CorrSetFeature,
    GroundhogAttack,
    HistSetFeature,
    NaiveSetFeature,
    RandomTargetedQueryFeature,
    TargetedAIA,
    TargetedMIA,
)
from synthguard.generators import GaussianCopula, IndependentMarginals, Raw
from synthguard.stats import make_rng


def awkward_frame(n: int = 600, seed: int = 0) -> pd.DataFrame:
    rng = make_rng(seed, "awkward")
    grade = pd.Categorical(rng.choice(["low", "mid", "high"], n), categories=["low", "mid", "high"],
                           ordered=True)
    when = pd.Series(pd.to_datetime("2021-01-01") + pd.to_timedelta(rng.integers(0, 700, n), unit="D"))
    when[rng.random(n) < 0.1] = pd.NaT
    x = rng.normal(0, 1, n)
    x[rng.random(n) < 0.1] = np.nan
    cat = pd.Series(rng.choice(list("abcd"), n), dtype=object)
    cat[rng.random(n) < 0.1] = None
    return pd.DataFrame({"grade": grade, "when": when, "x": x, "cat": cat,
                         "flag": rng.random(n) < 0.4, "count": rng.integers(0, 9, n)})


@pytest.fixture(scope="module")
def awkward() -> pd.DataFrame:
    return awkward_frame()


@pytest.mark.parametrize("gen", [Raw(), IndependentMarginals(), GaussianCopula()],
                         ids=["raw", "marginals", "copula"])
def test_groundhog_runs_on_ordered_categoricals_datetimes_and_nan(awkward, gen):
    tm = TargetedMIA(AuxiliaryDataKnowledge(awkward, num_training_records=150), BlackBoxKnowledge(gen, 150),
                     "auto:1", seed=1)
    view = tm.view(0)
    ds, _ = view.generate_training_samples(2)
    assert isinstance(ds[0]["grade"].dtype, pd.CategoricalDtype) and ds[0]["grade"].dtype.ordered
    assert pd.api.types.is_datetime64_any_dtype(ds[0]["when"].dtype)
    att = GroundhogAttack(use_queries=True).train(view, num_samples=16)
    s = view.test(att, num_samples=16)
    assert np.isfinite(s.scores).all() and ((s.scores >= 0) & (s.scores <= 1)).all()
    m = s.metrics(n_boot=20)
    assert 0.0 <= m["auc"] <= 1.0


def test_set_features_have_fixed_length_and_see_every_column(awkward):
    tm = TargetedMIA(AuxiliaryDataKnowledge(awkward, num_training_records=100),
                     BlackBoxKnowledge(IndependentMarginals(), 100), [3])
    view = tm.view(0)
    ds, _ = view.generate_training_samples(3)
    small = ds[0].iloc[:5]  # fewer rows, missing categories: same feature length
    for feat in (NaiveSetFeature(), HistSetFeature(5), CorrSetFeature(), RandomTargetedQueryFeature(2, 4)):
        feat.fit(view)
        x = feat.extract(ds + [small])
        assert x.shape[0] == 4 and np.isfinite(x).all()
    hist = HistSetFeature(5).fit(view).extract(ds[:1])[0]
    # numeric/datetime: 6 bins each (5 + missing); categorical: capped vocab + other + missing
    n_num = 3  # when, x, count
    assert hist[: 6 * n_num].reshape(n_num, 6).sum(axis=1) == pytest.approx(np.ones(n_num))


def test_groundhog_is_deterministic_and_sees_a_raw_leak():
    df = awkward_frame(500, seed=2)
    def run():
        tm = TargetedMIA(AuxiliaryDataKnowledge(df, num_training_records=60), BlackBoxKnowledge(Raw(), 60),
                         "auto:1", seed=4)
        view = tm.view(0)
        att = GroundhogAttack(use_queries=True).train(view, num_samples=60)
        return view.test(att, num_samples=60)

    a, b = run(), run()
    assert np.array_equal(a.scores, b.scores)
    assert a.metrics(n_boot=50)["auc"] > 0.6  # an isolated target in a 60-row copy moves the features


def test_groundhog_supports_attribute_inference(awkward):
    tm = TargetedAIA(AuxiliaryDataKnowledge(awkward, num_training_records=100), BlackBoxKnowledge(Raw(), 100),
                     [5], "cat", ["a", "b"])
    view = tm.view(0)
    s = view.test(GroundhogAttack().train(view, num_samples=12), num_samples=12)
    assert s.kind == "AIA" and np.isfinite(s.scores).all()
