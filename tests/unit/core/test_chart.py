"""Typed chart data on MetricResult: normalised, comparable, picklable, and never in the JSON."""

from __future__ import annotations

import dataclasses
import json
import pickle

import numpy as np
import pytest

from synthguard.core.results import Chart, MetricResult
from synthguard.report.console import fmt_number


def _result(**kw) -> MetricResult:
    return MetricResult("made_up", "privacy", 0.7, "lower is safer", details={"auc": 0.7}, **kw)


def _charts() -> tuple[Chart, ...]:
    hist = {"edges": np.linspace(0, 1, 4), "synthetic": np.array([3, 1, 0]),
            "control": np.array([1, 1, 1])}
    return (Chart.histogram(hist, "distance"), Chart.roc(np.array([[0, 0], [0.2, 0.7], [1, 1]]), 0.7),
            Chart("bars", "by column", "score", [("a", np.float64(0.5)), ("b", float("nan"))],
                  max=1.0, colour="#009E73"))


def test_chart_data_is_normalised_to_plain_json():
    hist, roc, bars = _charts()
    assert hist.data == {"edges": [0.0, 1 / 3, 2 / 3, 1.0], "synthetic": [3, 1, 0],
                         "control": [1, 1, 1]}
    assert roc.data == [[0.0, 0.0], [0.2, 0.7], [1.0, 1.0]]
    assert bars.data == [["a", 0.5], ["b", None]]  # NaN drawn as "n/a"
    json.dumps([c.data for c in (hist, roc, bars)], allow_nan=False)


def test_chart_rejects_an_unknown_kind():
    with pytest.raises(ValueError, match="unknown chart kind"):
        Chart("pie", "t", "x", [])


def test_histogram_title_names_its_series_synthetic_control_original_first():
    c = Chart.histogram({"edges": [0, 1], "original": [1], "extra": [2], "synthetic": [1]}, "d")
    assert c.title == "synthetic vs original vs extra rows" and c.axis == "d"


@pytest.mark.parametrize("auc", [0.5, 0.73456, 0.99996, 1.0, 0.0, 0.0004, 0.1])
def test_roc_legend_writes_the_auc_as_the_report_writes_numbers(auc):
    assert Chart.roc([[0, 0], [1, 1]], auc).label == f"AUC {fmt_number(auc, 3)}"


@pytest.mark.parametrize("auc", [None, float("nan")])
def test_roc_without_a_finite_auc_has_no_legend_suffix(auc):
    assert Chart.roc([[0, 0], [1, 1]], auc).label is None


def test_charts_are_not_part_of_the_json():
    with_charts, without = _result(charts=_charts()), _result()
    assert with_charts.to_dict() == without.to_dict()
    assert json.dumps(with_charts.to_dict()) == json.dumps(without.to_dict())
    assert "charts" not in with_charts.to_dict()


def test_charts_default_to_empty_and_lists_become_tuples():
    assert _result().charts == ()
    assert _result(charts=list(_charts())).charts == _charts()
    with pytest.raises(TypeError, match="Chart objects"):
        _result(charts=({"kind": "roc"},))


def test_charts_survive_pickle_replace_and_compare_by_value():
    res = _result(charts=_charts())
    back = pickle.loads(pickle.dumps(res, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == res and back.charts == _charts()
    renamed = dataclasses.replace(res, name="other", records=[{"row": 1}])
    assert renamed.charts == res.charts
    assert _result(charts=_charts()) == res and _result() != res


def test_a_result_pickled_before_charts_existed_reads_no_charts():
    """Disk-cache entries written by an older synthguard lack the field: they read as ()."""
    res = _result()
    state = dict(res.__dict__)
    del state["charts"]
    old = object.__new__(MetricResult)
    object.__setattr__(old, "__dict__", state)
    back = pickle.loads(pickle.dumps(old))
    assert back.charts == () and back.to_dict() == res.to_dict()
