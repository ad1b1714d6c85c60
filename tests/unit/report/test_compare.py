"""Several releases ranked side by side (API, ``synthguard compare``, ``evaluate`` with several -s)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import synthguard
from synthguard.cli import main
from synthguard.report.compare import _ranks
from tests.console_text import flat


@pytest.fixture
def files(tmp_path, demo_data):
    out = {}
    for k in ("original", "control", "leaky", "safe"):
        out[k] = tmp_path / f"{k}.csv"
        demo_data[k].head(300).to_csv(out[k], index=False)
    return out


def test_ranks_ties():
    assert _ranks({"a": 1.0, "b": 1.0, "c": 3.0}, best_high=False) == {"a": 1.5, "b": 1.5, "c": 3.0}
    assert _ranks({"a": 1.0, "b": 2.0}, best_high=True) == {"b": 1.0, "a": 2.0}


def test_api_ranks_safe_above_leaky(demo_data, demo_metadata):
    d = {k: v.head(300) for k, v in demo_data.items()}
    comp = synthguard.compare(d["original"], {"leaky": d["leaky"], "safe": d["safe"]}, d["control"],
                              demo_metadata, metrics=["exact_matches", "dcr", "quality_report"])
    top = comp.ranking[0]
    assert top["release"] == "safe" and top["privacy_rank"] == 1.0
    assert comp.ranking[1]["high_risk_metrics"] >= 2 and comp.ranking[1]["overall_risk"] == "high"
    # the leaky release copies real rows: its marginals are closer, so it wins on utility
    assert {r["release"]: r["utility_rank"] for r in comp.ranking} == {"leaky": 1.0, "safe": 2.0}
    d2 = comp.to_dict()
    assert {"rule", "ranking", "metrics", "reports"} <= set(d2)
    assert d2["metrics"][0]["leaky"]["status"] == "ok"
    text = flat(comp.to_console(1000))  # a table: its headers stack into lines on a narrow terminal
    assert "privacy rank" in text and "safe" in text


def test_cli_compare_json_html(files, tmp_path):
    j, h = tmp_path / "c.json", tmp_path / "c.html"
    res = CliRunner().invoke(main, ["compare", "-o", str(files["original"]), "-c", str(files["control"]),
                                    "--metrics", "exact_matches,dcr", "--no-progress", "--json", str(j),
                                    "--html", str(h), str(files["leaky"]), str(files["safe"])])
    assert res.exit_code == 0, res.output
    d = json.loads(j.read_text())
    assert [r["release"] for r in d["ranking"]] == ["safe", "leaky"]
    text = h.read_text()
    assert "<script" not in text and "Ranking" in text and "leaky" in text


def test_evaluate_with_several_synthetic(files, tmp_path):
    j = tmp_path / "c.json"
    res = CliRunner().invoke(main, ["evaluate", "-o", str(files["original"]), "-s", str(files["leaky"]),
                                    "-s", str(files["safe"]), "--metrics", "exact_matches",
                                    "--no-progress", "--json", str(j)])
    assert res.exit_code == 0, res.output
    assert set(json.loads(j.read_text())["reports"]) == {"leaky", "safe"}


def test_matrix_carries_baseline_ci_n(demo_data, demo_metadata):
    d = {k: v.head(200) for k, v in demo_data.items()}
    comp = synthguard.compare(d["original"], {"leaky": d["leaky"], "safe": d["safe"]}, d["control"],
                              demo_metadata, metrics=["dcr"])
    res = comp.reports["leaky"].result("dcr")
    cell = comp.metric_matrix()[0]["leaky"]
    assert cell["n"] == res.n and cell["n"] is not None
    assert cell["baseline"] == res.baseline.value
    assert cell["ci"] == synthguard.core.results.to_jsonable(res.ci)
    text = flat(comp.to_console(1000))
    assert f"n={res.n}" in text and "base=" in text
    assert f"n={res.n}" in comp.to_html()
