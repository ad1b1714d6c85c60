"""A PETsARD 1.10.1 notebook flow and a PETsARD YAML, run unchanged through synthguard (only the import
line differs), giving PETsARD's frame layouts and report files (fixtures recorded from PETsARD
1.10.1 by ``benchmarks/oracles/record_petsard.py``)."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from synthguard.cli import main

from .petsard_cases import load_case, read_csv_exact

ORACLES = Path(__file__).parent / "recorded"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def data_dir(shared_data) -> Path:
    """The real tables (tests/conftest.py's ``shared_data``: ``$SYNTHGUARD_SHARED_DATA`` or ../shared/data)."""
    return shared_data


def _layout(df: pd.DataFrame) -> tuple:
    return list(df.index.names), [str(c) for c in df.columns]


@pytest.mark.conformance
def test_quickstart_notebook_flow(data_dir):
    """The PETsARD 1.10 quickstart evaluators, written as in PETsARD's notebooks."""
    from synthguard.compat.petsard.evaluator import Evaluator  # was: from petsard import Evaluator

    rec = json.loads((ORACLES / "petsard_acs12.json").read_text())["runs"]
    d = load_case("acs12", data_dir)
    ori, syn, control = d["ori"], d["syn"], d["control"]
    results = {}
    configs = {
        "singlingout": ("anonymeter-singlingout", {"n_attacks": 300, "n_cols": 3, "max_attempts": 100000}),
        "linkability": ("anonymeter-linkability",
                        {"aux_cols": [["age", "gender", "race", "edu"],
                                      ["married", "citizen", "lang", "hrs_work"]]}),
        "inference": ("anonymeter-inference", {"secret": "income"}),
        "quality": ("default", {}),
        "diagnostic": ("sdmetrics-diagnosticreport", {}),
        "mlu_classification": ("mlutility-classification",
                               {"target": "gender", "experiment_design": "dual_model_control"}),
        "mlu_cluster": ("mlutility-cluster", {"n_clusters": 4}),
    }
    for name, (method, params) in configs.items():
        evaluator = Evaluator(method, **params)
        evaluator.create()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results[name] = evaluator.eval({"ori": ori, "syn": syn, "control": control})
    oracle_of = {"singlingout": "singlingout_multi", "linkability": "linkability", "inference": "inference",
                 "quality": "quality", "diagnostic": "diagnostic", "mlu_classification": "ml_classification",
                 "mlu_cluster": "ml_cluster_k4"}
    for name, out in results.items():
        o = rec[oracle_of[name]]
        assert list(out) == o["keys"], name
        for g in ("global", "columnwise", "pairwise"):
            if o.get(g):
                assert _layout(out[g]) == (o[g]["index_names"], o[g]["columns"]), (name, g)
                assert [str(t) for t in out[g].dtypes] == o[g]["dtypes"], (name, g)
    assert list(results["quality"]["global"].index) == ["result"]
    assert set(results["singlingout"]["details"]) == {"attack_queries", "baseline_queries"}
    assert set(results["linkability"]["details"]) == {"attack_links", "baseline_links", "control_links"}
    assert results["inference"]["details"] is None
    assert list(results["mlu_classification"]["global"]["metric"]) == [
        "f1_score", "roc_auc", "accuracy", "precision", "recall", "specificity", "mcc", "pr_auc",
        "tp", "tn", "fp", "fn"]
    # the legacy calls keep working
    legacy = Evaluator("sdmetrics-qualityreport")
    legacy.create(data={"ori": ori, "syn": syn})
    legacy.eval()
    pd.testing.assert_frame_equal(legacy.get_global(), results["quality"]["global"])


def _yaml_setup(tmp_path: Path, data_dir: Path) -> Path:
    sys.path.insert(0, str(REPO / "benchmarks" / "oracles"))
    try:
        from record_petsard import YAML
    finally:
        sys.path.pop(0)
    d = load_case("anes96", data_dir)
    read_csv_exact(data_dir / "anes96.csv").to_csv(tmp_path / "ori.csv", index=False)
    d["syn"].to_csv(tmp_path / "syn.csv", index=False)
    cfg = tmp_path / "petsard.yaml"
    cfg.write_text(YAML.format(ori="ori.csv", syn="syn.csv"))
    return cfg


@pytest.mark.conformance
def test_yaml_through_synthguard_run(tmp_path, data_dir, monkeypatch):
    """PETsARD's file names, columns and rows; quality and ML utility numbers identical (the
    Splitter draws PETsARD's rows), linkability within its confidence interval."""
    rec = json.loads((ORACLES / "petsard_yaml.json").read_text())
    cfg = _yaml_setup(tmp_path, data_dir)
    out = tmp_path / "out"
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(main, ["run", str(cfg), "--output-dir", str(out)])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.glob("*.csv")) == rec["files"]
    for fname, o in rec["reports"].items():
        mine = pd.read_csv(out / fname)
        assert list(mine.columns) == o["columns"], fname
        assert len(mine) == o["rows"], fname
        # str() per cell: pandas 3's astype(str) keeps a missing value missing (NaN, not "nan")
        head = [[str(v) for v in row] for row in mine.head(3).astype(object).values.tolist()]
        key_cols = [i for i, c in enumerate(o["columns"]) if not c.startswith("link_")]
        for a, b in zip(head, o["head"], strict=True):
            for i in key_cols:
                x, y = a[i], b[i]
                try:
                    assert float(x) == pytest.approx(float(y), abs=1e-12) or (x == y), (fname, o["columns"][i])
                except ValueError:
                    assert x == y, (fname, o["columns"][i])
    g = pd.read_csv(out / "petsard_Reporter[global].csv").iloc[0]
    theirs = dict(zip(rec["reports"]["petsard_Reporter[global].csv"]["columns"],
                      rec["reports"]["petsard_Reporter[global].csv"]["head"][0], strict=True))
    lo, hi = float(theirs["link_risk_CI_btm"]), float(theirs["link_risk_CI_top"])
    assert not (g["link_risk_CI_top"] + 0.011 < lo or hi + 0.011 < g["link_risk_CI_btm"])


def test_petsard_split_semantics():
    """PETsARD's Splitter rows for random_state=42, ratio 0.7 on 944 rows (recorded)."""
    from synthguard.compat.petsard.yaml_runner import petsard_split

    rec = json.loads((ORACLES / "petsard_yaml.json").read_text())
    (train, val), = petsard_split(944, train_split_ratio=0.7, random_state=42)
    assert [len(train), len(val)] == rec["split_sizes"]
    assert train[:20] == rec["split_train_head"] and val[:20] == rec["split_validation_head"]


def test_default_synthesizer_is_the_named_copula_and_bad_blocks_fail(tmp_path, data_dir):
    d = load_case("diabetes_raw", data_dir)
    d["ori"].to_csv(tmp_path / "ori.csv", index=False)
    cfg = tmp_path / "p.yaml"
    cfg.write_text("Loader:\n  data:\n    filepath: ori.csv\nSplitter:\n  s:\n    train_split_ratio: 0.8\n"
                   "    random_state: 1\nPreprocessor:\n  p:\n    method: default\nSynthesizer:\n  d:\n"
                   "    method: default\nEvaluator:\n  q:\n    method: default\nReporter:\n  r:\n"
                   "    method: save_report\n    granularity: global\n")
    res = CliRunner().invoke(main, ["run", str(cfg), "--output-dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "synthguard-gaussian_copula" in res.output
    assert (tmp_path / "petsard_Reporter[global].csv").exists()
    # Reporter naming: an eval filter and the compact strategy
    cfg.write_text("Loader:\n  data:\n    filepath: ori.csv\nSplitter:\n  s:\n    random_state: 1\n"
                   "Synthesizer:\n  d:\n    method: default\nEvaluator:\n  q:\n    method: default\n"
                   "  dg:\n    method: sdmetrics-diagnosticreport\nReporter:\n  r1:\n"
                   "    method: save_report\n    granularity: [global, columnwise]\n    eval: [q]\n"
                   "  r2:\n    method: save_report\n    granularity: global\n"
                   "    naming_strategy: compact\n")
    out = tmp_path / "named"
    res = CliRunner().invoke(main, ["run", str(cfg), "--output-dir", str(out)])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.glob("*.csv")) == [
        "petsard.report.Rp.global.G.csv", "petsard_Reporter[q_columnwise].csv",
        "petsard_Reporter[q_global].csv"]
    g = pd.read_csv(out / "petsard_Reporter[q_global].csv")
    assert list(g.columns) == ["full_expt_name", "Loader", "Splitter", "Synthesizer", "Evaluator",
                               "q_Score", "q_Column Shapes", "q_Column Pair Trends"]
    assert "dg_Score" in pd.read_csv(out / "petsard.report.Rp.global.G.csv").columns
    for bad, msg in (("Constrainer:\n  c:\n    method: default\n", "not supported"),
                     ("Synthesizer:\n  s:\n    method: sdv-single_table-ctgan\n", "not supported"),
                     ("Evaluator:\n  e:\n    method: anonymeter-nope\n", "anonymeter-nope"),
                     ("Nonsense:\n  x: {}\n", "unknown module")):
        cfg.write_text("Loader:\n  data:\n    filepath: ori.csv\n" + bad)
        res = CliRunner().invoke(main, ["run", str(cfg)])
        assert res.exit_code == 2 and msg in res.output, res.output
