"""The config's ``data:`` block (inputs named in the config) and named metric runs (one metric several
times with different parameters, each reported under its name)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from synthguard import evaluate
from synthguard.cli import main
from synthguard.errors import ConfigError
from synthguard.run.config import build_config


@pytest.fixture
def files(tmp_path, demo_data):
    demo_data["original"].head(400).to_csv(tmp_path / "ori.csv", index=False)
    demo_data["leaky"].head(400).to_csv(tmp_path / "syn.csv", index=False)
    demo_data["control"].head(400).to_csv(tmp_path / "ctl.csv", index=False)
    return tmp_path


def test_named_runs_are_two_entries(demo_data):
    cfg = {"metrics": [{"name": "link_k1", "metric": "linkability", "n_neighbors": 1, "n_attacks": 200},
                       {"name": "link_k10", "metric": "linkability", "n_neighbors": 10, "n_attacks": 200},
                       "exact_matches"]}
    rc = build_config(None, cfg)
    assert list(rc.metrics) == ["link_k1", "link_k10", "exact_matches"]
    assert rc.runs == {"link_k1": "linkability", "link_k10": "linkability"}
    assert rc.metrics["link_k1"]["n_neighbors"] == 1 and rc.metrics["link_k10"]["n_neighbors"] == 10
    rep = evaluate(demo_data["original"].head(400), demo_data["leaky"].head(400),
                   control=demo_data["control"].head(400), config=cfg)
    k1, k10 = rep.result("link_k1"), rep.result("link_k10")
    assert k1.name == "link_k1" and k10.name == "link_k10"
    assert k1.details["n_neighbors"] == 1 and k10.details["n_neighbors"] == 10
    # more neighbours can only link more targets (same targets, same seed)
    assert k10.details["n_success"] >= k1.details["n_success"]
    d = rep.to_dict()["metrics"]
    assert list(d) == ["link_k1", "link_k10", "exact_matches"]
    assert d["link_k1"]["metric"] == "linkability" and d["link_k1"]["result"]["name"] == "link_k1"
    assert d["link_k10"]["params"]["n_neighbors"] == 10


def test_named_run_errors():
    with pytest.raises(ConfigError, match="'name' and 'metric'"):
        build_config(None, {"metrics": [{"metric": "linkability"}]})
    with pytest.raises(ConfigError, match="used twice"):
        build_config(None, {"metrics": [{"name": "a", "metric": "dcr"}, {"name": "a", "metric": "dcr"}]})
    with pytest.raises(ConfigError, match="has no parameter"):
        build_config(None, {"metrics": [{"name": "a", "metric": "linkability", "k": 3}]})
    with pytest.raises(ConfigError, match="is a metric name but runs"):
        build_config(None, {"metrics": [{"name": "dcr", "metric": "linkability"}]})
    rc = build_config(None, {"metrics": [{"name": "strict_em", "metric": "exact_matches"}],
                             "thresholds": {"strict_em": {"high": 0.01}}})
    assert rc.thresholds["strict_em"] == {"high": 0.01}


def test_data_block_drives_evaluate_cli(files):
    cfg = files / "cfg.yaml"
    cfg.write_text("data:\n  original: ori.csv\n  synthetic: syn.csv\n  control: ctl.csv\n"
                   "metrics:\n  - exact_matches\n  - {name: dcr_p1, metric: dcr, percentile: 1}\n")
    out = files / "r.json"
    res = CliRunner().invoke(main, ["evaluate", "--config", str(cfg), "--json", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    rep = json.loads(out.read_text())
    assert list(rep["metrics"]) == ["exact_matches", "dcr_p1"]
    assert rep["metrics"]["dcr_p1"]["params"]["percentile"] == 1
    assert rep["config"]["data"]["original"].endswith("ori.csv")
    # the config's folder is the base of relative paths, whatever the working directory
    rc = build_config(None, cfg)
    assert rc.data["synthetic"] == str(files / "syn.csv")


def test_data_block_errors(files):
    res = CliRunner().invoke(main, ["evaluate", "--metrics", "exact_matches"])
    assert res.exit_code == 2 and "and --synthetic, or a --config" in res.output
    with pytest.raises(ConfigError, match="unknown key"):
        build_config(None, {"data": {"orig": "x.csv"}})
    with pytest.raises(Exception, match="no synthetic"):
        evaluate(config={"data": {"original": str(files / "ori.csv")}, "metrics": ["exact_matches"]})


def test_named_runs_share_the_searches_their_metrics_share(demo_data, monkeypatch):
    """dcr and nndr share one k=2 search of the release against the original whatever the names
    they run under: a run's context knows its metrics, not its entry names."""
    from synthguard.engine.backend import LocalBackend

    asked: list[tuple[str, str, int]] = []
    real = LocalBackend.kneighbors

    def spy(self, query, reference, columns, metric, k, **kw):
        asked.append((query, reference, k))
        return real(self, query, reference, columns, metric, k, **kw)

    monkeypatch.setattr(LocalBackend, "kneighbors", spy)
    cfg = {"metrics": [{"name": "dcr_p1", "metric": "dcr", "percentile": 1},
                       {"name": "ratio", "metric": "nndr"}]}
    evaluate(demo_data["original"].head(300), demo_data["leaky"].head(300),
             control=demo_data["control"].head(300), config=cfg, retest_rows=0, retest_columns=0)
    assert asked.count(("synthetic", "original", 2)) == 1
    assert ("synthetic", "original", 1) not in asked
