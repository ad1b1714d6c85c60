"""Presets, config files and the recorded configuration."""

from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner

import synthguard
from synthguard.cli import main
from synthguard.errors import ConfigError
from synthguard.run import config as cfgmod
from synthguard.run.config import PRESETS, build_config

from ..conftest import FAKE_ALL


@pytest.fixture
def small(demo_data):
    return {k: v.head(200) for k, v in demo_data.items()}


@pytest.fixture
def ui_preset(fake_metrics):
    cfgmod.register_preset("uitest", ["uitest_distance", "uitest_attack", "no_such_metric_here"])
    try:
        yield "uitest"
    finally:
        PRESETS.pop("uitest", None)


def test_three_presets_defined_and_nested():
    assert {"quick", "privacy", "full"} <= set(PRESETS)
    assert set(PRESETS["quick"]) <= set(PRESETS["privacy"]) <= set(PRESETS["full"])
    assert "linkability" in PRESETS["privacy"] and "quality_report" in PRESETS["full"]
    assert "quality_report" not in PRESETS["privacy"]


def test_preset_metric_not_installed_is_skipped_not_fatal(small, ui_preset):
    rep = synthguard.evaluate(small["original"], small["leaky"], small["control"], preset=ui_preset)
    assert rep.status("uitest_distance") == "ok"
    entry = rep["no_such_metric_here"]
    assert entry["status"] == "skipped"
    assert entry["reason"].startswith("not available in this installation")
    assert rep.header["config"]["unavailable"]["no_such_metric_here"].startswith("not available")


def test_every_builtin_preset_builds_whatever_is_installed():
    for name in ("quick", "privacy", "full"):
        rc = build_config(preset=name)
        assert set(rc.metrics) | set(rc.unavailable) >= {synthguard.registry.canonical_name(m)
                                                         if cfgmod.is_registered(m) else m
                                                         for m in PRESETS[name]}
        for reason in rc.unavailable.values():
            assert "not available in this installation" in reason


def test_explicit_unknown_metric_is_still_an_error(fake_metrics):
    with pytest.raises(ConfigError, match="unknown metric 'no_such_metric_here'"):
        build_config(metrics=["uitest_distance", "no_such_metric_here"])
    with pytest.raises(ConfigError, match="unknown preset"):
        build_config(preset="paranoid")


def test_yaml_config_params_thresholds_seed_recorded(tmp_path, small, ui_preset):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump({
        "preset": ui_preset,
        "metrics": {"uitest_distance": {"percentile": 10}, "uitest_quality": None},
        "thresholds": {"uitest_attack": {"high": 0.9}},
        "seed": 7}), encoding="utf-8")
    rep = synthguard.evaluate(small["original"], small["leaky"], small["control"], config=cfg)
    c = rep.header["config"]
    assert c["preset"] == ui_preset and c["source"] == str(cfg)
    assert c["metrics"]["uitest_distance"] == {"percentile": 10.0}
    assert "uitest_quality" in c["metrics"]  # the config adds metrics to the preset
    assert c["thresholds"] == {"uitest_attack": {"high": 0.9}}
    assert rep.header["seed"] == 7
    # threshold raised to 0.9: an AUC of 0.8 is no longer high
    assert rep.result("uitest_attack").reference_level == "medium"
    assert rep.result("uitest_distance").details["percentile"] == 10.0


def test_config_errors_name_the_problem(tmp_path, fake_metrics):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"metrics": {"uitest_distance": {"pct": 3}}}), encoding="utf-8")
    with pytest.raises(ConfigError, match="has no parameter 'pct'"):
        build_config(config=bad)
    bad.write_text(json.dumps({"seed": "x"}), encoding="utf-8")
    with pytest.raises(ConfigError, match="'seed' must be a non-negative integer"):
        build_config(config=bad)


def test_cli_evaluate_preset_and_config(tmp_path, small, ui_preset):
    paths = {}
    for k in ("original", "leaky", "control"):
        paths[k] = tmp_path / f"{k}.csv"
        small[k].to_csv(paths[k], index=False)
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("metrics:\n  uitest_distance: {percentile: 20}\nthresholds:\n"
                   "  uitest_distance: {high: 0.2}\n", encoding="utf-8")
    out = tmp_path / "r.json"
    res = CliRunner().invoke(main, ["evaluate", "-o", str(paths["original"]), "-s", str(paths["leaky"]),
                                    "-c", str(paths["control"]), "--preset", ui_preset, "--config",
                                    str(cfg), "--json", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    d = json.loads(out.read_text())
    assert d["config"]["preset"] == ui_preset
    assert d["config"]["metrics"]["uitest_distance"] == {"percentile": 20.0}
    assert d["metrics"]["no_such_metric_here"]["status"] == "skipped"
    assert set(FAKE_ALL[:2]) <= set(d["metrics"])
