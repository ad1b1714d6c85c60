"""The HTML report: self-contained, every section present, charts drawn from the results' charts."""

from __future__ import annotations

import re

import numpy as np
import pytest

import synthguard
from synthguard.core.results import MetricResult
from synthguard.report import svg
from synthguard.report.html import render_html
from synthguard.run.verdict import RiskRule, assess

from ..conftest import FAKE_ALL


@pytest.fixture
def report(demo_data, demo_metadata, fake_metrics):
    d = {k: v.head(300) for k, v in demo_data.items()}
    return synthguard.evaluate(d["original"], d["leaky"], d["control"], demo_metadata,
                               metrics=FAKE_ALL + ["exact_matches"])


def _external_refs(text: str) -> list[str]:
    """Every src/href/url() that is not a data: URL or a fragment."""
    refs = re.findall(r'(?:src|href)\s*=\s*["\']([^"\']+)', text) + re.findall(r"url\(([^)]+)\)", text)
    return [r for r in refs if not r.startswith(("data:", "#"))]


def test_self_contained(report, tmp_path):
    path = tmp_path / "r.html"
    text = report.to_html(path)
    assert path.read_text(encoding="utf-8") == text
    assert "<script" not in text.lower() and "@import" not in text and "@font-face" not in text
    assert _external_refs(text) == []
    assert "default-src 'none'" in text  # the CSP forbids any fetch
    # the only URL is the SVG namespace (an identifier, never fetched)
    assert set(re.findall(r"https?://[^\s\"'<>]+", text)) <= {"http://www.w3.org/2000/svg"}


def test_sections_and_content(report):
    text = report.to_html()
    assert "Verdict" in text and "uitest_attack" in text
    for anchor, title in (("privacy", "Privacy tests"), ("fidelity", "Fidelity"),
                          ("utility", "Utility"), ("records", "Records behind the findings"),
                          ("inputs", "Inputs")):
        assert f'<h2 id="{anchor}">{title}</h2>' in text
    assert "<summary>Skipped metrics (" in text
    assert '<details id="config"><summary><b>Configuration used</b></summary>' in text
    # registry descriptions are the one-line meanings
    assert "Stand-in: AUC of an attack telling members from non-members." in text
    # skipped metric with its reason
    assert "no text column: declare one with sdtype &#x27;text&#x27;" in text
    # fingerprints and configuration
    fp = report.header["inputs"]["original"]["sha256"][:16]
    assert fp in text and "&quot;percentile&quot;: 5.0" in text
    # one chart per kind: histogram, ROC, column shapes, distortion
    assert text.count('<svg xmlns="http://www.w3.org/2000/svg"') == 4
    assert "ROC curves of the attacks" in text and "per-column fidelity" in text
    assert "distortion by column" in text and "uitest_distance: synthetic vs control rows" in text
    # the one records table lists the rows behind the findings (the copies exact_matches ties);
    # uitest_distance tests nothing against the control (informative only): its records are not
    # rows to act on
    records = text.split('id="records"', 1)[1].split('id="inputs"', 1)[0]
    assert "<td>exact_matches</td>" in records and "release row" in records
    assert "<td>uitest_distance</td>" not in records


def test_escaping(demo_data, fake_metrics):
    df = demo_data["original"].head(100).copy()
    df = df.rename(columns={"zip": "<b>zip</b>"})
    syn = demo_data["safe"].head(100).rename(columns={"zip": "<b>zip</b>"})
    rep = synthguard.evaluate(df, syn, metrics=["uitest_quality"])
    text = rep.to_html()
    assert "<b>zip</b>" not in text and "&lt;b&gt;zip&lt;/b&gt;" in text


def test_verdict_logic():
    def r(name, fam, lvl, value=0.5):
        return MetricResult(name, fam, value, "lower is safer", risk_level=lvl)

    ref = RiskRule(rule="reference")

    def verdict(results):
        return assess(results, ref)[1]

    v = verdict({"a": r("a", "privacy", "medium"), "b": r("b", "anonymeter", "high"),
                 "c": r("c", "privacy", "high"), "q": r("q", "fidelity", "high")})
    assert v.level == "high" and v.driver == "b"  # attacks first among equals
    assert v.counts["high"] == 2  # fidelity levels are not privacy risks
    assert verdict({"q": r("q", "fidelity", "high")}).level == "inconclusive"
    assert verdict({"a": r("a", "privacy", "not meaningful")}).level == "inconclusive"


def test_malformed_chart_data_does_not_crash(demo_data):
    assert svg.histogram_chart({"edges": [0, 1], "synthetic": [1, 2, 3]}, "x") == ""
    assert svg.histogram_chart({"edges": "nope"}, "x") == ""
    assert svg.roc_chart({"a": [[0, 0], "bad", [None, 1]]}) == ""
    assert svg.bar_chart([], "x") == ""
    assert "n/a" in svg.bar_chart([("a", None), ("b", 0.5)], "x")
    # numpy arrays and NaN in details are read like lists
    ok = svg.histogram_chart({"edges": np.linspace(0, 1, 5), "synthetic": np.array([1, 2, 0, 1]),
                              "control": [np.nan, 1, 1, 1]}, "np")
    assert ok.startswith("<svg") and "polyline" in ok


def test_empty_report_renders(demo_data):
    rep = synthguard.evaluate(demo_data["original"].head(50), demo_data["safe"].head(50),
                              metrics=["exact_matches"])
    text = render_html(rep)
    assert "Verdict" in text


def test_cli_evaluate_html(tmp_path, demo_data, fake_metrics):
    from click.testing import CliRunner

    from synthguard.cli import main

    o, s, c = tmp_path / "o.csv", tmp_path / "s.csv", tmp_path / "c.csv"
    demo_data["original"].head(200).to_csv(o, index=False)
    demo_data["leaky"].head(200).to_csv(s, index=False)
    demo_data["control"].head(200).to_csv(c, index=False)
    h = tmp_path / "r.html"
    res = CliRunner().invoke(main, ["evaluate", "-o", str(o), "-s", str(s), "-c", str(c), "--metrics",
                                    "uitest_distance,uitest_attack", "--html", str(h), "--no-progress"])
    assert res.exit_code == 0, res.output
    text = h.read_text(encoding="utf-8")
    assert "uitest_attack" in text and str(s) in text and _external_refs(text) == []
