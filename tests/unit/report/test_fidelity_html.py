"""The fidelity section of the HTML report: ceilings, overlay charts, heatmap, worst-first tables."""

from __future__ import annotations

import re

from synthguard import evaluate
from synthguard.report import svg


def test_fidelity_section_shows_ceilings_charts_and_tables(wide_frames) -> None:
    orig, syn, ctl = wide_frames(300, 12)
    rep = evaluate(orig, syn, ctl, metrics=["accuracy", "quality_report", "diagnostic_report"], seed=0)
    html = rep.to_html()
    assert "Fidelity against its ceiling" in html
    for m in ("accuracy", "quality_report"):
        assert rep.result(m).details["headline"] in html
    # every column charted (12 <= 24), with the three series overlaid
    charts = re.findall(r'<svg[^>]*aria-label="([^"]*): accuracy', html)
    assert len(charts) == 12
    acc = rep.result("accuracy")
    worst = sorted(acc.details["columns"], key=lambda r: (r["accuracy"] - r["control_accuracy"], r["column"]))
    assert charts == [r["column"] for r in worst]  # furthest from the ceiling first
    assert "association difference" in html and html.count("<title>num_000 x ") >= 1
    # the pair table lists the shuffled columns' pairs first
    table = html.split("</b>: Pairs (")[1]
    first = re.search(r"<td>([^<]+) x ([^<]+)</td>", table).groups()
    shuffled = set(list(orig.columns)[::7])  # num_000 and cat_007: their dependence is broken
    assert shuffled & set(first), first
    section = html.split("Fidelity against its ceiling")[1].split("accuracy by level")[0]
    assert "<b>diagnostic_report</b>" not in section  # its baseline 1.0 is not a control ceiling
    # no fidelity metric -> no section
    assert "Fidelity against its ceiling" not in evaluate(orig, syn, metrics=["exact_matches"]).to_html()


def test_wide_report_caps_charts_and_pair_rows(wide_frames) -> None:
    orig, syn, ctl = wide_frames(200, 60)
    html = evaluate(orig, syn, ctl, metrics=["accuracy"], seed=0).to_html()
    assert len(re.findall(r'aria-label="[^"]*: accuracy', html)) == 24
    assert "36 more column(s)" in html
    pairs = html.split("</b>: Pairs (")[1].split("</details>")[0]
    assert pairs.startswith("1770; the 100 worst shown)") and pairs.count("<tr>") == 101
    assert html.count('class="chart"') == 24 + 1  # + the heatmap


def test_svg_charts_are_defensive() -> None:
    assert svg.overlay_bars([], {}, "t") == ""
    assert svg.overlay_bars(["a", "b"], {"original": [1]}, "t") == ""  # wrong length
    out = svg.overlay_bars(["a", "b"], {"original": [1, 3], "synthetic": [2, 2]}, "x<y")
    assert out.startswith("<svg") and "x&lt;y" in out and out.count("<rect") == 4 + 2  # bars + legend
    assert svg.heatmap(["a"], {}, "t") == ""
    hm = svg.heatmap(["a", "b", "c"], {(1, 0): 0.1, (2, 0): None, (2, 1): 0.9}, "h")
    assert "#d0d3d6" in hm and "#b3261e" in hm  # n/a grey and the saturated end
