"""ML utility: copy vs shuffled labels, train-only preprocessing (spy), NaN, target validation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import synthguard.metrics.utility.ml as util
from synthguard.errors import ConfigError
from synthguard.metrics.utility.ml import (
    ml_utility_classification,
    ml_utility_cluster,
    ml_utility_regression,
)
from synthguard.registry import Context

from ....helpers import run

FAST = {"n_estimators": 10}


def _table(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x1 = rng.normal(size=n)
    x2 = rng.normal(size=n)
    grp = rng.choice(["a", "b", "c"], n)
    logit = 2.5 * x1 - 1.5 * x2 + (grp == "a") * 1.0
    df = pd.DataFrame({"x1": x1, "x2": x2, "grp": grp,
                       "y": np.where(logit + rng.logistic(size=n) > 0, "yes", "no"),
                       "amount": 3 * x1 + 2 * x2 + rng.normal(0, 0.5, n)})
    df.loc[rng.random(n) < 0.05, "x2"] = np.nan  # explicit NaN handling
    df.loc[rng.random(n) < 0.05, "grp"] = None
    return df


META = {"columns": {"x1": {"sdtype": "numerical"}, "x2": {"sdtype": "numerical"},
                    "grp": {"sdtype": "categorical"}, "y": {"sdtype": "categorical"},
                    "amount": {"sdtype": "numerical"}}, "target": "y"}


@pytest.fixture(scope="module")
def frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    return _table(600, 0), _table(400, 1)


def test_copy_gives_zero_diff_and_result_contract(frames) -> None:
    ori, ctl = frames
    ctx = Context.from_frames(ori, ori.copy(), ctl, META)
    res = run(ml_utility_classification, ctx=ctx, **FAST)
    assert res.value == pytest.approx(0.0, abs=1e-12)
    d = res.to_dict()
    for key in ("ori_mean", "ori_std", "syn_mean", "syn_std", "diff", "models"):
        assert key in d
    assert d["ori_mean"] > 0.8
    assert [m["model"] for m in d["models"]] == list(util.CLASSIFIERS)
    assert d["baseline"]["value"] == d["ori_mean"]


def test_shuffled_labels_give_large_negative_diff(frames) -> None:
    ori, ctl = frames
    syn = ori.copy()
    syn["y"] = np.random.default_rng(5).permutation(syn["y"].to_numpy())
    res = run(ml_utility_classification, ctx=Context.from_frames(ori, syn, ctl, META), **FAST)
    assert res.value < -0.2
    assert "lower" in res.warning

    syn = ori.copy()
    syn["amount"] = np.random.default_rng(6).permutation(syn["amount"].to_numpy())
    reg = run(ml_utility_regression, ctx=Context.from_frames(ori, syn, ctl, META), target="amount", **FAST)
    assert reg.details["ori_mean"] > 0.8 and reg.value < -0.5


def test_no_control_row_reaches_a_fitted_preprocessor(frames, monkeypatch) -> None:
    ori, ctl = frames
    ctl = ctl.copy()
    ctl["x1"] = ctl["x1"] + 1000.0  # control rows are recognisable by x1 > 500
    fitted: list[pd.DataFrame] = []
    real_factory = util.make_preprocessor

    class Spy:
        def __init__(self, num, cat):
            self.inner = real_factory(num, cat)

        def fit_transform(self, frame, y=None):
            fitted.append(frame.copy())
            return self.inner.fit_transform(frame)

        def fit(self, frame, y=None):
            fitted.append(frame.copy())
            self.inner.fit(frame)
            return self

        def transform(self, frame):
            return self.inner.transform(frame)

    monkeypatch.setattr(util, "make_preprocessor", Spy)
    ctx = Context.from_frames(ori, ori.copy(), ctl, META)
    run(ml_utility_classification, ctx=ctx, models=["logistic_regression"], **FAST)
    run(ml_utility_regression, ctx=ctx, target="amount", models=["linear_regression"], **FAST)
    run(ml_utility_cluster, ctx=ctx, n_clusters=[2])
    assert len(fitted) == 6
    for frame in fitted:
        assert len(frame) in (len(ori),)
        assert frame["x1"].max() < 500
    # the fitted statistics are the training table's
    prep = real_factory(["x1", "x2"], ["grp"])
    feats = util._feature_frame(ctx.tables.original, ["x1", "x2"], ["grp"])
    prep.fit(feats)
    scaler = prep.named_transformers_["num"][-1]
    assert scaler.mean_[0] == pytest.approx(ori["x1"].mean())


def test_cluster_and_determinism(frames) -> None:
    ori, ctl = frames
    ctx = Context.from_frames(ori, ori.copy(), ctl, META, seed=3)
    a = run(ml_utility_cluster, ctx=ctx, n_clusters=[2, 3])
    b = run(ml_utility_cluster, ctx=Context.from_frames(ori, ori.copy(), ctl, META, seed=3), n_clusters=[2, 3])
    assert a.to_dict() == b.to_dict()
    assert a.value == pytest.approx(0.0, abs=1e-12)
    assert [m["model"] for m in a.details["models"]] == ["kmeans_k2", "kmeans_k3"]
    assert -1 <= a.details["ori_mean"] <= 1


def test_cluster_fits_side_by_side_each_on_one_openmp_thread_give_one_result(frames, monkeypatch) -> None:
    # the k-means fits run in a thread pool as wide as the cores. OpenMP's thread count is a
    # per-thread setting and k-means' sums depend on it, so each fit must set one thread in its
    # own worker (as the serial fits of before did); then one worker or six give the same bits
    import sklearn.cluster
    from sklearn.utils._openmp_helpers import _openmp_effective_n_threads

    import synthguard.engine.parallel as parallel

    seen = []

    class Spy(sklearn.cluster.KMeans):
        def fit(self, *args, **kwargs):
            seen.append(_openmp_effective_n_threads())
            return super().fit(*args, **kwargs)

    monkeypatch.setattr(sklearn.cluster, "KMeans", Spy)
    ori, ctl = frames
    syn = _table(len(ori), 9)
    got = []
    for cores in (1, 6):
        monkeypatch.setattr(parallel, "default_jobs", lambda cores=cores: cores)
        ctx = Context.from_frames(ori, syn, ctl, META, seed=5)
        got.append(run(ml_utility_cluster, ctx=ctx, n_clusters=[2, 3, 4]).to_dict())
    assert seen == [1] * 12
    assert got[0] == got[1]
    assert all(m["ori"] != m["syn"] for m in got[0]["models"])  # two tables, six distinct fits


def test_max_rows_subsamples_with_seed(frames) -> None:
    ori, ctl = frames
    ctx = Context.from_frames(ori, ori.copy(), ctl, META)
    res = run(ml_utility_classification, ctx=ctx, max_rows=200, models=["logistic_regression"], **FAST)
    assert res.details["n_train_original"] == 200 and res.details["n_test"] == 200
    assert set(res.details["subsampled"]) == {"original", "synthetic", "control"}
    assert "max_rows" in res.warning


def test_target_validation(frames) -> None:
    ori, ctl = frames
    meta = {k: v for k, v in META.items() if k != "target"}
    ctx = Context.from_frames(ori, ori.copy(), ctl, meta)
    with pytest.raises(ConfigError, match="target"):
        run(ml_utility_classification, ctx=ctx)
    with pytest.raises(ConfigError, match="not a column"):
        run(ml_utility_classification, ctx=ctx, target="nope")
    with pytest.raises(ConfigError, match="regression"):
        run(ml_utility_classification, ctx=ctx, target="amount")
    with pytest.raises(ConfigError, match="numerical target"):
        run(ml_utility_regression, ctx=ctx, target="y")


def test_missing_control_is_skipped(frames) -> None:
    from synthguard import evaluate

    ori, _ = frames
    rep = evaluate(ori, ori.copy(), metadata=META, metrics=["mlutility-classification"])
    assert rep["ml_utility_classification"]["status"] == "skipped"
    assert "control" in rep["ml_utility_classification"]["reason"]


def test_single_class_synthetic_predicts_constant(frames) -> None:
    ori, ctl = frames
    syn = ori.copy()
    syn["y"] = "yes"
    res = run(ml_utility_classification, ctx=Context.from_frames(ori, syn, ctl, META),
                                    models=["logistic_regression"], **FAST)
    assert "single target value" in res.warning
    assert res.details["syn_mean"] == pytest.approx((ctl["y"] == "yes").mean())


def test_diff_has_a_bootstrap_ci(frames) -> None:
    ori, ctl = frames
    syn = ori.copy()
    syn["y"] = np.random.default_rng(5).permutation(syn["y"].to_numpy())
    ctx = Context.from_frames(ori, syn, ctl, META)
    for res in (run(ml_utility_classification, ctx=ctx, models=["logistic_regression", "random_forest"], **FAST),
                run(ml_utility_classification, ctx=ctx, models=["logistic_regression"], f1_average="macro"),
                run(ml_utility_regression, ctx=ctx, target="amount", models=["linear_regression"]),
                run(ml_utility_cluster, ctx=ctx, n_clusters=[2, 3])):
        lo, hi = res.ci
        assert lo <= res.value <= hi, (res.name, res.ci, res.value)
        assert res.to_dict()["diff_ci"] == [lo, hi]
    same = run(ml_utility_classification, ctx=Context.from_frames(ori, ori.copy(), ctl, META),
                                     models=["logistic_regression"])
    assert same.ci == (0.0, 0.0)
