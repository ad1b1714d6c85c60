"""dcr and nndr: hand-computed answers, duplicates, NaN, baselines, known answers, order invariance."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from synthguard import evaluate
from synthguard.errors import ConfigError, MetricError
from synthguard.metrics.privacy.distance import balanced_rows, dcr, nndr

from ....helpers import run as run_metric

NUM = {"columns": {"x": {"sdtype": "numerical"}}}


def run(func, o, s, c=None, meta=NUM, **params):
    return run_metric(func, o, s, c, meta, **params)  # through the executor


def frame(xs):
    return pd.DataFrame({"x": np.asarray(xs, dtype=float)})


def test_dcr_hand_computed_one_column():
    # range of original x = 4; Gower = |a - b| / 4
    o, s = frame([0, 1, 2, 4]), frame([0, 3])
    r = run(dcr, o, s, percentile=50)
    # synthetic -> original: 0 -> 0 (0), 3 -> 2 or 4 (0.25); median = 0.125
    assert r.value == pytest.approx(0.125)
    d = r.to_dict()
    # original -> original, self excluded: 0.25, 0.25, 0.25, 0.5 -> median 0.25
    assert d["baselines"]["original_original"]["value"] == pytest.approx(0.25)
    assert d["baselines"]["control_original"] is None
    assert r.baseline.value == pytest.approx(0.25)
    assert "original vs original" in r.baseline.description
    assert d["passed"] is False
    assert d["mean"]["synthetic"] == pytest.approx(0.125)
    assert d["share_closer_to_original"] is None
    assert d["synthetic_original"]["zero_share"]["k"] == 1
    assert r.records == [{"original_row": 0, "synthetic_rows_at_zero_distance": 1}]
    h = d["histogram"]
    assert sum(h["synthetic"]) == 2 and sum(h["original"]) == 4 and h["control"] is None
    assert len(h["edges"]) == 21
    json.dumps(d)


def test_dcr_default_percentile_is_numpy_linear():
    r = run(dcr, frame([0, 1, 2, 4]), frame([0, 3]))
    assert r.value == pytest.approx(0.05 * 0.25)


def test_duplicates_are_real_neighbours_and_nan_rule():
    # an identical OTHER original row is a neighbour at distance 0 (self excluded, twin kept)
    r = run(dcr, frame([0, 0, 5]), frame([5]), percentile=50)
    assert r.to_dict()["baselines"]["original_original"]["zero_share"]["k"] == 2
    # NaN: one side missing -> term 1, both missing -> 0; categorical missing = own category
    meta = {"columns": {"x": {"sdtype": "numerical"}, "c": {"sdtype": "categorical"}}}
    o = pd.DataFrame({"x": [0.0, 4.0, np.nan], "c": ["a", "b", "a"]})
    s = pd.DataFrame({"x": [np.nan, 2.0], "c": ["a", "a"]})
    r = run(dcr, o, s, meta=meta, percentile=50)
    # (nan, a) -> (nan, a): 0; (2, a) -> (0, a): (0.5 + 0) / 2 = 0.25
    assert r.to_dict()["synthetic_original"]["median"] == pytest.approx(0.125)
    assert r.to_dict()["mean"]["synthetic"] == pytest.approx(0.125)


def test_share_closer_same_metric_and_ranges():
    o, c = frame([0, 10]), frame([1, 9])
    s = frame([0.2, 8.9])  # 0.2 is closer to original 0; 8.9 is closer to control 9
    r = run(dcr, o, s, c)
    sc = r.to_dict()["share_closer_to_original"]
    assert sc["k"] == 1 and sc["n"] == 2 and sc["value"] == 0.5
    assert r.baseline.description.startswith("control vs original")
    # control -> original with the original's range (10): 1 -> 0 (0.1), 9 -> 10 (0.1)
    assert r.to_dict()["baselines"]["control_original"]["value"] == pytest.approx(0.1)


def test_nndr_hand_computed_and_zero_over_zero():
    o, s = frame([0, 1, 2, 4]), frame([0, 3])
    r = run(nndr, o, s, percentile=50)
    # synthetic 0: d1 = 0, d2 = 0.25 -> 0; synthetic 3: d1 = d2 = 0.25 -> 1
    assert r.value == pytest.approx(0.5)
    # original -> original (k = 2, self excluded): 0.5, 1, 0.5, 2/3 -> median 0.5833
    assert r.baseline.value == pytest.approx((0.5 + 2 / 3) / 2)
    # 0/0: a synthetic row equal to two original rows has ratio 0 (an exact copy)
    r = run(nndr, frame([0, 0, 5]), frame([0]), percentile=50)
    assert r.value == 0.0
    assert r.to_dict()["histogram"]["edges"][-1] == 1.0
    with pytest.raises(MetricError):
        run(nndr, frame([0, 1]), frame([0]))


def _mixed(n, seed):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.normal(0, 1, n), "b": rng.gamma(2, 2, n),
                         "c": rng.choice(list("abcd"), n), "d": rng.integers(0, 50, n).astype(float)})


@pytest.fixture(scope="module")
def gen_data():
    return {"original": _mixed(500, 1), "control": _mixed(500, 2), "independent": _mixed(500, 3)}


def test_copy_is_maximally_risky(gen_data):
    g = gen_data
    rep = evaluate(g["original"], g["original"], g["control"], metrics=["dcr", "nndr"])
    for name in ("dcr", "nndr"):
        r = rep.result(name)
        assert r.value == 0.0 and r.risk_level == "high" and r.to_dict()["passed"] is False, name
    assert rep.result("dcr").to_dict()["share_closer_to_original"]["value"] == 1.0
    assert len(rep.result("dcr").records) == 20


def test_independent_sample_sits_at_baseline(gen_data):
    g = gen_data
    rep = evaluate(g["original"], g["independent"], g["control"], metrics=["dcr", "nndr"])
    for name in ("dcr", "nndr"):
        r = rep.result(name)
        lo, hi = r.ci
        blo, bhi = r.baseline.ci
        assert lo <= bhi and blo <= hi, name  # intervals overlap
        assert r.reference_level == "low", name
        assert r.risk_level in ("low", "inconclusive"), name  # never an alarm on unseen people
    sc = rep.result("dcr").to_dict()["share_closer_to_original"]
    assert sc["ci"][0] <= 0.5 <= sc["ci"][1]


def test_row_order_and_seed(gen_data, demo_data, demo_metadata):
    d = demo_data
    kw = dict(metadata=demo_metadata, metrics=["dcr", "nndr"], seed=4)
    a = evaluate(d["original"], d["leaky"], d["control"], **kw)
    sh = {k: d[k].sample(frac=1.0, random_state=9).reset_index(drop=True)
          for k in ("original", "leaky", "control")}
    b = evaluate(sh["original"], sh["leaky"], sh["control"], **kw)
    for name in ("dcr", "nndr"):
        ra, rb = a.result(name).to_dict(), b.result(name).to_dict()
        for key in ("value", "ci", "baseline", "n", "risk_level", "passed", "histogram", "mean",
                    "median", "baselines"):
            assert ra[key] == rb[key], (name, key)
    assert a.result("dcr").to_dict()["share_closer_to_original"] == \
        b.result("dcr").to_dict()["share_closer_to_original"]
    c = evaluate(d["original"], d["leaky"], d["control"], **kw)
    assert c.to_dict()["metrics"]["dcr"]["result"] == a.to_dict()["metrics"]["dcr"]["result"]
    assert a.result("dcr").risk_level == "high" and a.result("nndr").risk_level == "high"


def test_balanced_rows_depend_on_content_not_order():
    f = _mixed(50, 0)
    rows = balanced_rows(f, 10, 0, "x")
    perm = np.random.default_rng(1).permutation(50)
    rows2 = balanced_rows(f.iloc[perm].reset_index(drop=True), 10, 0, "x")
    key = lambda fr: sorted(map(tuple, fr.to_numpy().tolist()))  # noqa: E731
    assert key(f.iloc[rows]) == key(f.iloc[perm].reset_index(drop=True).iloc[rows2])


@pytest.mark.parametrize("name", ["dcr", "nndr"])
@pytest.mark.parametrize("params", [{"percentile": 0}, {"percentile": 100}, {"percentile": -3},
                                    {"bins": 0}, {"n_boot": 0}, {"confidence_level": 1.0}])
def test_bad_params_raise_config_error(name, params):
    o, s = frame([0, 1, 2, 4]), frame([0, 3])
    with pytest.raises(ConfigError):
        evaluate(o, s, metadata=NUM, metrics={name: params})
    with pytest.raises(ConfigError):
        run({"dcr": dcr, "nndr": nndr}[name], o, s, **params)


def test_text_only_tables_are_skipped():
    meta = {"columns": {"t": {"sdtype": "text"}}}
    o = pd.DataFrame({"t": ["a b c d e", "f g h i j", "k l m n o"]})
    rep = evaluate(o, o, metadata=meta, metrics=["dcr"])
    assert rep["dcr"]["status"] == "skipped" and "text" in rep["dcr"]["reason"]


@pytest.mark.parametrize("func", [dcr, nndr])
def test_evidence_flags_every_record_with_label_free_ranges(func):
    rng = np.random.default_rng(7)
    o = pd.DataFrame({"x": rng.uniform(0, 1, 60), "y": rng.uniform(0, 1, 60)})
    c = pd.DataFrame({"x": rng.uniform(0, 10, 60), "y": rng.uniform(0, 1, 60)})  # wider x range
    s = pd.DataFrame({"x": rng.uniform(0, 10, 50), "y": rng.uniform(0, 1, 50)})
    meta = {"columns": {"x": {"sdtype": "numerical"}, "y": {"sdtype": "numerical"}}}
    ev = run(func, o, s, c, meta=meta).evidence
    swapped = run(func, c, s, o, meta=meta).evidence
    assert ev.flags.member.size == 60 and ev.flags.non_member.size == 60
    assert ev.k_member == ev.flags.member.sum() and ev.k_non_member == ev.flags.non_member.sum()
    # ranges from original and control together: swapping the labels swaps the flags exactly
    assert np.array_equal(ev.flags.member, swapped.flags.non_member)
    assert np.array_equal(ev.flags.non_member, swapped.flags.member)
    assert ev.sees == () and ev.risk == "presence"  # a pooled-tail share is capped
