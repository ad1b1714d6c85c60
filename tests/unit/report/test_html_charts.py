"""The HTML draws the results' typed charts by kind, never by metric name or details key."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

import synthguard
from synthguard.core.results import Chart, MetricResult, to_jsonable
from synthguard.report import svg
from synthguard.report.console import fmt_number
from synthguard.report.html import charts_html

NO_CHARTS = '<p class="small">No metric in this report carries chart data.</p>'


def _charts() -> tuple[Chart, ...]:
    hist = {"edges": np.linspace(0, 1, 6), "synthetic": [5, 3, 1, 1, 0], "control": [2, 2, 2, 2, 2]}
    return (Chart("bars", "made-up bars", "score", [("a", 0.25), ("b", None)], max=1.0),
            Chart.roc([[0, 0], [0.1, 0.5], [1, 1]], 0.8123),
            Chart.histogram(hist, "made-up distance"))


def test_a_result_carrying_only_charts_is_drawn_whatever_its_name():
    res = MetricResult("zz_never_registered", "privacy", 0.8, "lower is safer", charts=_charts())
    html = charts_html({"zz_never_registered": res})
    assert html.count("<svg") == 3
    assert '<title>zz_never_registered: synthetic vs control rows</title>' in html
    assert ">made-up distance</text>" in html
    assert "<title>ROC curves of the attacks</title>" in html
    assert ">zz_never_registered (AUC 0.812)</text>" in html
    assert "<title>zz_never_registered: made-up bars</title>" in html and ">n/a</text>" in html
    # histograms first, then the ROC overlay, then bars
    order = [html.index(t) for t in ("synthetic vs control", "ROC curves", "made-up bars")]
    assert order == sorted(order)


def test_chart_data_left_in_details_alone_draws_nothing():
    """The report no longer sniffs details keys or metric names for chart data."""
    det = {"histogram": {"edges": [0, 1, 2], "synthetic": [1, 2]}, "roc_curve": [[0, 0], [1, 1]],
           "column_shapes_table": [{"column": "a", "score": 0.5}],
           "columns": [{"column": "a", "distance": 0.5}]}
    res = MetricResult("anonymisation_score", "distortion", 1.0, "lower is better", details=det)
    assert charts_html({"nndr": res, "anonymisation_score": res}) == NO_CHARTS


def test_roc_charts_of_one_title_share_one_box_each_curve_named_by_its_metric():
    a = MetricResult("a", "attacks", 0.6, "lower is safer",
                     charts=(Chart.roc([[0, 0], [0.5, 0.6], [1, 1]], 0.6),))
    b = MetricResult("b", "attacks", 0.7, "lower is safer",
                     charts=(Chart.roc([[0, 0], [0.5, 0.8], [1, 1]], None),
                             Chart.roc([[0, 0], [0.2, 0.9], [1, 1]], 0.9, title="other overlay")))
    html = charts_html({"a": a, "b": b})
    assert html.count("<svg") == 2 and "<title>other overlay</title>" in html
    assert ">a (AUC 0.6)</text>" in html and ">b</text>" in html and ">b (AUC 0.9)</text>" in html


def _legacy_charts_html(results: Mapping[str, MetricResult]) -> str:
    """main's drawer before charts were typed (it read details keys and metric names); kept
    here only to prove the typed charts draw the same page."""
    def det_of(res: MetricResult) -> dict[str, Any]:
        return to_jsonable(dict(res.details))

    boxes = []
    for name, res in results.items():
        hist = det_of(res).get("histogram")
        if isinstance(hist, Mapping):
            label = "distance ratio" if "nndr" in name else "distance to closest record"
            series = [k for k in ("synthetic", "control", "original") if k in hist]
            series += [k for k in hist if k not in series and k != "edges"]
            boxes.append(svg.histogram_chart(hist, f"{name}: {' vs '.join(series)} rows", label))
    curves = {}
    for name, res in results.items():
        det = det_of(res)
        roc = det.get("roc_curve")
        if isinstance(roc, (list, tuple)) and roc:
            auc = det.get("auc", res.value if res.family != "fidelity" else None)
            curves[f"{name} (AUC {fmt_number(auc, 3)})" if auc is not None else name] = roc
    if curves:
        boxes.append(svg.roc_chart(curves))
    for name, res in results.items():
        det = det_of(res)
        shapes = det.get("column_shapes_table")
        if isinstance(shapes, (list, tuple)):
            items = [(str(r.get("column", "?")), r.get("score")) for r in shapes]
            if items:
                boxes.append(svg.bar_chart(items, f"{name}: per-column fidelity (column shapes)",
                                           "score (1 = same distribution)", 1.0, "#009E73"))
        cols = det.get("columns")
        if name == "anonymisation_score" and isinstance(cols, (list, tuple)):
            items = [(str(r.get("column", "?")), r.get("distance")) for r in cols]
            if items:
                boxes.append(svg.bar_chart(items, f"{name}: distortion by column",
                                           "distance (0 = unchanged, 1 = fully changed)", 1.0,
                                           "#CC79A7"))
    boxes = [b for b in boxes if b]
    return '<div class="charts">' + "".join(f'<div class="chartbox">{b}</div>' for b in boxes) + "</div>"


@pytest.mark.parametrize("with_control", [True, False])
def test_the_metrics_charts_draw_what_details_sniffing_drew(demo_data, demo_metadata, with_control):
    d = {k: v.head(200) for k, v in demo_data.items()}
    names = ["dcr", "nndr", "closest_distance_mia", "distinguishability", "quality_report",
             "anonymisation_score"]
    rep = synthguard.evaluate(d["original"], d["leaky"], d["control"] if with_control else None,
                              demo_metadata, metrics=names, seed=0)
    results = {n: rep.result(n) for n in rep.metrics if rep.result(n) is not None}
    assert all(results[n].charts for n in results)
    if with_control:
        assert set(results) == set(names)
    html = charts_html(results)
    assert html == _legacy_charts_html(results)
    charts = [c for r in results.values() for c in r.charts]
    rocs = sum(c.kind == "roc" for c in charts)
    assert rocs >= 1 and html.count("<svg") == len(charts) - rocs + 1  # the ROCs share one box


def test_attack_audit_results_carry_their_roc():
    from synthguard.attacks.audit import summary_to_result
    from synthguard.attacks.scoring import AttackSummary

    rng = np.random.default_rng(0)
    y = np.r_[np.ones(40, bool), np.zeros(40, bool)]
    s = rng.normal(size=80) + y
    res = summary_to_result(AttackSummary(y, s, s > 0.5, 0.5, "closest_distance", 0), "mia_t0",
                            n_boot=20)
    (roc,) = res.charts
    assert roc.kind == "roc" and roc.data == to_jsonable(res.details["roc_curve"])
    assert roc.label == f"AUC {fmt_number(res.details['auc'], 3)}"
    assert charts_html({"mia_t0": res}) == _legacy_charts_html({"mia_t0": res})
