"""Unit tests of the fidelity reports' building blocks (the SDMetrics comparison lives in
tests/oracles/test_sdmetrics_reports_conformance.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.stats.contingency import association

from synthguard.core.results import to_jsonable
from synthguard.metrics.fidelity._association import cramers_v
from synthguard.metrics.fidelity._pairs import bin_separately, bin_shared
from synthguard.metrics.fidelity._shapes import ks_complement, ks_statistic, tv_complement
from synthguard.metrics.fidelity._validity import (
    boundary_adherence,
    category_adherence,
    key_uniqueness,
    table_structure,
)
from synthguard.metrics.fidelity.diagnostic import diagnostic_report
from synthguard.metrics.fidelity.quality import quality_report
from synthguard.registry import Context, get_metric

from ....helpers import run


def test_ks_matches_scipy() -> None:
    rng = np.random.default_rng(0)
    for _ in range(5):
        a = rng.normal(size=rng.integers(5, 300)).round(1)
        b = rng.normal(0.2, 1.3, size=rng.integers(5, 300)).round(1)
        assert ks_statistic(a, b) == pytest.approx(stats.ks_2samp(a, b).statistic, abs=1e-12)


def test_ks_complement_drops_missing_and_handles_datetimes() -> None:
    s = pd.Series([1.0, 2.0, np.nan, 3.0])
    assert ks_complement(s, pd.Series([1.0, 2.0, 3.0])) == 1.0
    d = pd.Series(pd.to_datetime(["2020-01-01", "2020-01-02", None]))
    assert ks_complement(d, pd.Series(pd.to_datetime(["2021-01-01"]))) == 0.0


def test_tv_complement_pseudo_count() -> None:
    # real {a: 1/2, b: 1/2}; synthetic {a: 1/3, c: 2/3}: c gets 1e-6 in real (SDMetrics quirk)
    real = pd.Series(["a", "b"])
    syn = pd.Series(["a", "c", "c"])
    pr = np.array([1, 1, 1e-6]) / (2 + 1e-6)
    ps = np.array([1, 0, 2]) / 3
    assert tv_complement(real, syn) == pytest.approx(1 - 0.5 * np.abs(pr - ps).sum(), abs=1e-15)
    assert tv_complement(real, pd.Series(["b", "a", None])) == 1.0


def test_cramers_v_matches_scipy() -> None:
    rng = np.random.default_rng(1)
    a = rng.integers(0, 4, 500)
    b = (a + rng.integers(0, 3, 500)) % 5
    table = pd.crosstab(a, b).to_numpy()
    assert cramers_v(a, b) == pytest.approx(association(table, method="cramer"), abs=1e-12)
    assert np.isnan(cramers_v(np.zeros(10, int), b[:10]))


def test_binning_separate_and_shared() -> None:
    x = np.array([0.0, 1.0, 5.0, 10.0, np.nan])
    assert bin_separately(x).tolist() == [1, 2, 6, 11, 11]  # max and NaN share bin 11
    r, s = bin_shared(x, np.array([-5.0, 100.0, 5.0, np.nan]))
    assert r.tolist() == [0, 0, 4, 9, 10]
    assert s.tolist() == [0, 9, 4, 10]


def test_validity_checks() -> None:
    assert key_uniqueness(pd.Series(["a", "a", "b", None])) == 0.5
    # synthetic NaN is a violation unless the real column has NaN
    assert boundary_adherence(pd.Series([0.0, 10.0]), pd.Series([5.0, 11.0, np.nan, 0.0])) == 0.5
    assert boundary_adherence(pd.Series([0.0, 10.0, np.nan]), pd.Series([5.0, 11.0, np.nan])) == 0.5
    assert category_adherence(pd.Series(["a", "b"]), pd.Series(["a", "c", None, "b"])) == 0.5
    assert category_adherence(pd.Series(["a", None]), pd.Series(["a", None, "c", "c"])) == 0.5
    real = pd.DataFrame({"a": [1], "b": [1.0]})
    assert table_structure(real, pd.DataFrame({"a": [1.0], "b": [1.0]})) == pytest.approx(1 / 3)


@pytest.fixture(scope="module")
def demo_ctx(demo_data, demo_metadata) -> Context:
    return Context.from_frames(demo_data["original"], demo_data["safe"], demo_data["control"],
                               demo_metadata)


def test_quality_result_contract(demo_ctx: Context) -> None:
    res = run(quality_report, ctx=demo_ctx)
    d = res.to_dict()
    for key in ("score", "column_shapes", "column_pair_trends", "column_shapes_table",
                "column_pair_trends_table"):
        assert key in d
    assert d["value"] == pytest.approx((d["column_shapes"] + d["column_pair_trends"]) / 2)
    assert set(d["column_shapes_table"][0]) == {"column", "metric", "score"}
    assert {"column_1", "column_2", "metric", "score", "real_correlation",
            "synthetic_correlation"} <= set(d["column_pair_trends_table"][0])
    assert d["baseline"]["value"] > d["value"]  # real holdout data is more faithful than a copula
    assert to_jsonable(d) == d


def test_identical_tables_score_one(demo_data, demo_metadata) -> None:
    o = demo_data["original"]
    ctx = Context.from_frames(o, o.copy(), metadata=demo_metadata)
    assert run(quality_report, ctx=ctx).value == pytest.approx(1.0)
    assert run(diagnostic_report, ctx=ctx).value == pytest.approx(1.0)


def test_row_order_does_not_matter(demo_data, demo_metadata) -> None:
    o, s = demo_data["original"], demo_data["safe"]
    a = run(quality_report, ctx=Context.from_frames(o, s, metadata=demo_metadata))
    b = run(quality_report, ctx=Context.from_frames(o.sample(frac=1, random_state=1),
                                           s.sample(frac=1, random_state=2), metadata=demo_metadata))
    assert a.value == pytest.approx(b.value, abs=1e-12)


def test_petsard_aliases() -> None:
    for alias, name in [("sdmetrics-qualityreport", "quality_report"),
                        ("sdmetrics-diagnosticreport", "diagnostic_report"),
                        ("mlutility-classification", "ml_utility_classification"),
                        ("mlutility-regression", "ml_utility_regression"),
                        ("mlutility-cluster", "ml_utility_cluster")]:
        assert get_metric(alias).name == name
    assert get_metric("quality_report").family == "fidelity"
    assert get_metric("ml_utility_cluster").family == "utility"
    assert get_metric("anonymisation_score").family == "distortion"


def test_runner_runs_the_reports(demo_data, demo_metadata) -> None:
    from synthguard import evaluate

    rep = evaluate(demo_data["original"], demo_data["safe"], metadata=demo_metadata,
                   metrics={"sdmetrics-qualityreport": {"real_association_threshold": 0},
                            "diagnostic_report": {}})
    assert rep.result("quality_report").value > 0.5
    assert rep.result("diagnostic_report").value == pytest.approx(1.0)
