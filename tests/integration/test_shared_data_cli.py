"""End to end on every real CSV of the shared data folder: split, synthesise, `synthguard evaluate`."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from synthguard.cli import main
from synthguard.generators import GaussianCopula

METRICS = ["exact_matches", "ims", "dcr", "nndr", "distinguishability"]
MAX_ROWS = 600  # rows read from each CSV, to keep the suite fast
CONFIG = {"metrics": {"dcr": {"n_boot": 200}, "nndr": {"n_boot": 200},
                      "distinguishability": {"max_rows": 400, "n_estimators": 30, "n_permutations": 1,
                                             "n_boot": 200, "max_text_features": 200}}}


def _csvs():
    from pathlib import Path

    folder = Path(__file__).resolve().parents[2].parent / "shared" / "data"
    return sorted(p.name for p in folder.glob("*.csv")) or ["<none>"]


@pytest.mark.parametrize("name", _csvs())
def test_evaluate_cli_on_shared_csv(name, shared_data, tmp_path):
    path = shared_data / name
    if not path.exists():
        pytest.skip(f"{name} not present")
    data = pd.read_csv(path, nrows=MAX_ROWS)
    rng = np.random.default_rng(11)
    perm = rng.permutation(len(data))
    half = len(data) // 2
    original = data.iloc[perm[:half]].reset_index(drop=True)
    control = data.iloc[perm[half:]].reset_index(drop=True)
    synthetic = GaussianCopula(seed=0).fit(original).generate(len(original))
    files = {}
    for role, frame in (("original", original), ("control", control), ("synthetic", synthetic)):
        files[role] = tmp_path / f"{role}.csv"
        frame.to_csv(files[role], index=False)
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(CONFIG))
    out = tmp_path / "out.json"
    res = CliRunner().invoke(main, ["evaluate", "--original", str(files["original"]),
                                    "--synthetic", str(files["synthetic"]),
                                    "--control", str(files["control"]), "--metrics", ",".join(METRICS),
                                    "--config", str(cfg), "--json", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    report = json.loads(out.read_text())
    for key in ("synthguard_version", "seed", "inputs", "inferred_metadata", "metrics"):
        assert key in report, key
    assert report["seed"] == 0
    for role in ("original", "synthetic", "control"):
        fp = report["inputs"][role]
        assert {"rows", "columns", "sha256"} <= set(fp), role
    assert report["inputs"]["original"]["rows"] == len(original)
    assert set(report["metrics"]) == set(METRICS)
    for metric, entry in report["metrics"].items():
        assert {"status", "reason", "params", "seconds", "result"} <= set(entry), metric
        if entry["status"] == "skipped":
            assert entry["reason"], metric
            continue
        assert entry["status"] == "ok", (metric, entry.get("reason"), entry.get("traceback"))
        result = entry["result"]
        assert result["name"] == metric and result["family"] == "privacy"
        assert result["n"] and result["risk_level"] in ("low", "medium", "high", "not meaningful",
                                                         "inconclusive", "not assessed")
        assert result["baseline"] is not None and result["baseline"]["description"]
    assert report["metrics"]["ims"]["result"]["passed"] in (True, False)  # control given
    hist = report["metrics"]["dcr"]["result"]["histogram"]
    assert sum(hist["synthetic"]) == len(synthetic) and hist["control"] is not None
