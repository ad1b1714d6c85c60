"""The JSON report contract, seeds, thresholds and config shapes, with test-only metrics."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import synthguard
from synthguard.core.results import Baseline, MetricResult, level_from_thresholds
from synthguard.registry import Param, register, unregister


def _random_metric(ctx, *, scale):
    v = float(ctx.rng("x").random()) * scale
    return MetricResult("_test_random", "test", v, "lower is safer", baseline=Baseline(0.5, "coin"),
                        ci=(0.0, 1.0), n=len(ctx.tables.original),
                        risk_level=level_from_thresholds(v, ctx.thresholds, "lower is safer"),
                        details={"thresholds_used": dict(ctx.thresholds)})


@pytest.fixture(autouse=True)
def _test_random():
    """The test-only metric, registered for one test and removed afterwards: registered at import,
    it joined the registry of every later test module (tests/contract runs every registered
    metric)."""
    register("_test_random", family="test", direction="lower is safer", default=False,
             thresholds={"medium": 0.3, "high": 0.6}, params=[Param("scale", 1.0, kind=float)],
             description="test-only: a seeded random number")(_random_metric)
    try:
        yield
    finally:
        unregister("_test_random")


FRAMES = (pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]}), pd.DataFrame({"a": [1, 2, 4], "b": ["x", "y", "y"]}))


def test_json_contract_keys(tmp_path):
    rep = synthguard.evaluate(*FRAMES, metrics=["_test_random"], seed=7)
    d = json.loads(rep.to_json(tmp_path / "r.json"))
    assert json.loads((tmp_path / "r.json").read_text()) == d
    for key in ("synthguard_version", "seed", "inputs", "inferred_metadata", "metrics"):
        assert key in d
    assert d["seed"] == 7
    assert set(d["inputs"]) == {"original", "synthetic"}
    for role in d["inputs"].values():
        assert {"rows", "columns", "sha256"} <= set(role)
    assert d["inferred_metadata"]["a"]["sdtype"] == "numerical"
    entry = d["metrics"]["_test_random"]
    assert set(entry) >= {"status", "reason", "params", "seconds", "result"}
    assert entry["status"] == "ok" and entry["params"] == {"scale": 1.0}
    res = entry["result"]
    for key in ("value", "direction", "baseline", "ci", "n", "risk_level", "warning"):
        assert key in res
    assert rep["_test_random"] == entry
    assert rep.result("_test_random").value == res["value"]


def test_same_seed_same_numbers_other_seed_other_numbers():
    a = synthguard.evaluate(*FRAMES, metrics=["_test_random"], seed=1)["_test_random"]["result"]["value"]
    b = synthguard.evaluate(*FRAMES, metrics=["_test_random"], seed=1)["_test_random"]["result"]["value"]
    c = synthguard.evaluate(*FRAMES, metrics=["_test_random"], seed=2)["_test_random"]["result"]["value"]
    assert a == b != c


def test_params_mapping_and_thresholds_from_config(tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("metrics:\n  _test_random: {scale: 0.0}\nthresholds:\n  _test_random: {high: 0.0}\n")
    rep = synthguard.evaluate(*FRAMES, config=cfg)
    res = rep["_test_random"]["result"]
    assert res["value"] == 0.0
    assert res["thresholds_used"] == {"medium": 0.3, "high": 0.0}
    assert res["reference_level"] == "high"  # thresholds decide the reference rule's level
    assert res["risk_level"] == "not assessed"  # a metric without evidence does not drive the verdict
    assert rep.to_dict()["config"]["thresholds"] == {"_test_random": {"high": 0.0}}


def test_explicit_metrics_override_config_metrics_but_keep_params(tmp_path):
    rep = synthguard.evaluate(*FRAMES, metrics={"_test_random": {"scale": 2.0}},
                              config={"metrics": {"_test_random": {"scale": 0.0}}})
    assert rep["_test_random"]["params"] == {"scale": 2.0}


def test_unknown_threshold_name_is_an_error():
    with pytest.raises(synthguard.ConfigError, match="no threshold 'hihg'"):
        synthguard.evaluate(*FRAMES, metrics=["_test_random"], config={"thresholds": {"_test_random": {"hihg": 1}}})


def test_level_from_thresholds_both_directions():
    th = {"medium": 0.3, "high": 0.5}
    assert level_from_thresholds(0.1, th, "lower is safer") == "low"
    assert level_from_thresholds(0.3, th, "lower is safer") == "medium"
    assert level_from_thresholds(0.9, th, "lower is safer") == "high"
    th2 = {"medium": 0.8, "high": 0.5}
    assert level_from_thresholds(0.9, th2, "higher is safer") == "low"
    assert level_from_thresholds(0.7, th2, "higher is safer") == "medium"
    assert level_from_thresholds(0.2, th2, "higher is safer") == "high"
    assert level_from_thresholds(float("nan"), th, "lower is safer") == "unknown"


def test_result_json_has_no_nan():
    r = MetricResult("x", "test", float("nan"), "lower is safer", ci=(float("nan"), 1.0),
                     details={"arr": __import__("numpy").array([1.0, float("inf")])})
    d = r.to_dict()
    assert d["value"] is None and d["ci"] == [None, 1.0] and d["arr"] == [1.0, None]
    json.dumps(d, allow_nan=False)


def test_details_cannot_shadow_headline():
    r = MetricResult("x", "test", 1.0, "lower is safer", details={"value": 2})
    with pytest.raises(KeyError):
        r.to_dict()
