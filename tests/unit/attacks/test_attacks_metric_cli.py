"""The fixed-file metric ``closest_distance_mia`` and the ``synthguard attack`` command."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from synthguard import evaluate
from synthguard.cli import main
from synthguard.demo import DEMO_METADATA
from synthguard.metrics.privacy.closest_distance_mia import closest_distance_mia
from synthguard.registry import Context, get_metric


@pytest.fixture(scope="module")
def runs(demo_data):
    out = {}
    for rel in ("leaky", "safe"):
        out[rel] = evaluate(demo_data["original"], demo_data[rel], demo_data["control"], DEMO_METADATA,
                            metrics=["closest_distance_mia"])
    return out


def test_registered_in_the_attacks_family():
    spec = get_metric("closest_distance_mia")
    assert spec.family == "attacks" and set(spec.needs) == {"original", "synthetic", "control"}


def test_leaky_release_is_caught_and_safe_release_sits_at_the_baseline(runs):
    leaky = runs["leaky"]["closest_distance_mia"]["result"]
    safe = runs["safe"]["closest_distance_mia"]["result"]
    assert leaky["value"] > 0.7 and leaky["ci"][0] > 0.5 and leaky["risk_level"] in ("medium", "high")
    assert leaky["tpr_at_fpr_0.01"] > 0.3  # 40 % exact copies: found with almost no false positive
    assert leaky["effective_epsilon"] > 1.0
    assert safe["ci"][0] <= 0.5 <= safe["ci"][1]
    assert safe["reference_level"] == "not meaningful" and safe["warning"]
    assert safe["risk_level"] in ("low", "inconclusive")
    assert leaky["evidence"]["member"] > 0.3 and leaky["evidence"]["p_value"] < 1e-10
    for res in (leaky, safe):
        assert res["baseline"]["value"] == 0.5
        assert res["roc_curve"][0] == [0.0, 0.0] and res["roc_curve"][-1] == [1.0, 1.0]
        assert len(res["roc_curve"]) <= 101
        assert res["n_members"] == res["n_non_members"]
        assert 0 <= res["advantage"] <= 1
        # 1000 control rows: 0.1 % FPR is one false positive, resolvable
        assert res["tpr_at_fpr_0.001"] is not None
    top = leaky["records"]
    assert len(top) == 10 and top[0]["distance"] == 0.0
    assert all(a["distance"] <= b["distance"] for a, b in zip(top, top[1:], strict=False))


def test_row_order_does_not_change_the_result(demo_data):
    d = demo_data
    for cap in (None, 400):  # capped samples are drawn by content, not position
        a = closest_distance_mia(Context.from_frames(d["original"], d["leaky"], d["control"],
                                                     DEMO_METADATA), max_rows=cap, n_boot=30)
        perm = np.random.default_rng(0).permutation(len(d["original"]))
        b = closest_distance_mia(Context.from_frames(d["original"].iloc[perm], d["leaky"].iloc[::-1],
                                                     d["control"].iloc[::-1], DEMO_METADATA),
                                 max_rows=cap, n_boot=30)
        assert a.value == b.value and a.ci == b.ci
        assert a.details["advantage"] == b.details["advantage"]
        assert a.details["effective_epsilon"] == b.details["effective_epsilon"]


def test_max_rows_caps_and_balances_with_a_seed(demo_data):
    d = demo_data
    ctx = Context.from_frames(d["original"], d["leaky"], d["control"].iloc[:300], DEMO_METADATA, seed=3)
    r1 = closest_distance_mia(ctx, max_rows=200, n_boot=30)
    r2 = closest_distance_mia(ctx, max_rows=200, n_boot=30)
    assert r1.details["n_members"] == r1.details["n_non_members"] == 200
    assert r1.value == r2.value and r1.ci == r2.ci
    assert r1.details["tpr_at_fpr_0.001"] is None and "note" in " ".join(r1.details)


def test_missing_control_is_skipped_with_a_reason(demo_data):
    r = evaluate(demo_data["original"], demo_data["safe"], metrics=["closest_distance_mia"])
    assert r["closest_distance_mia"]["status"] == "skipped"
    assert "control" in r["closest_distance_mia"]["reason"]


GEN = """
import argparse, sys
import pandas as pd
p = argparse.ArgumentParser(); p.add_argument("--n", type=int); p.add_argument("--seed", type=int)
a = p.parse_args()
df = pd.read_csv(sys.stdin)
df.sample(a.n, replace=False, random_state=a.seed).to_csv(sys.stdout, index=False)
"""


def test_cli_attack_builtin_generator_writes_the_evaluate_json_format(tmp_path, demo_data):
    data = tmp_path / "pop.csv"
    demo_data["original"].iloc[:600].to_csv(data, index=False)
    out = tmp_path / "r.json"
    args = ["attack", "-d", str(data), "-g", "raw", "--targets", "auto:1", "--attacks",
            "closest_distance,density", "--shadow", "12", "--test", "16", "--train-size", "100",
            "--seed", "2", "--json", str(out), "--no-progress"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    rep = json.loads(out.read_text())
    assert {"synthguard_version", "seed", "inputs", "config", "metrics"} <= set(rep)
    assert rep["config"]["generator"] == "Raw" and len(rep["config"]["targets"]) == 1
    names = list(rep["metrics"])
    assert len(names) == 2 and names[0].startswith("closest_distance@target=")
    entry = rep["metrics"][names[0]]
    assert entry["status"] == "ok" and entry["result"]["family"] == "attacks"
    assert entry["result"]["value"] >= 0.95 and "effective_epsilon" in entry["result"]
    # same seed, same report numbers
    out2 = tmp_path / "r2.json"
    CliRunner().invoke(main, args[:-3] + ["--json", str(out2), "--no-progress"])
    rep2 = json.loads(out2.read_text())
    assert rep2["metrics"][names[0]]["result"] == entry["result"]


def test_cli_attack_external_command_and_aia(tmp_path, demo_data):
    data = tmp_path / "pop.csv"
    demo_data["original"].iloc[:400].to_csv(data, index=False)
    gen = tmp_path / "gen.py"
    gen.write_text(GEN)
    res = CliRunner().invoke(main, [
        "attack", "-d", str(data), "--generator-cmd", f"{sys.executable} {gen}", "--targets", "3",
        "--attacks", "closest_distance", "--shadow", "2", "--test", "4", "--train-size", "80",
        "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "closest_distance@target=3" in res.output
    res = CliRunner().invoke(main, [
        "attack", "-d", str(data), "-g", "marginals", "--threat-model", "aia", "--sensitive", "sex",
        "--attacks", "closest_distance,synthetic_predictor", "--targets", "5", "--shadow", "6",
        "--test", "6", "--train-size", "80", "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "synthetic_predictor@target=5" in res.output


def test_cli_attack_bad_options_exit_2(tmp_path, demo_data):
    data = tmp_path / "pop.csv"
    demo_data["original"].iloc[:100].to_csv(data, index=False)
    res = CliRunner().invoke(main, ["attack", "-d", str(data), "--attacks", "nope", "--no-progress"])
    assert res.exit_code == 2 and "unknown attack" in res.output
    res = CliRunner().invoke(main, ["attack", "-d", str(data), "--targets", "999", "--no-progress"])
    assert res.exit_code == 2 and "outside" in res.output
