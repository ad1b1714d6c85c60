"""The ``synthguard attack`` command: built-in and external generators, its JSON, bad options."""

from __future__ import annotations

import json
import sys

from click.testing import CliRunner

from synthguard.cli import main

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
