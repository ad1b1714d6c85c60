"""The four text metrics through ``evaluate``: statuses, JSON report, thresholds overridable."""

from __future__ import annotations

import json

from synthguard import evaluate

from .conftest import METADATA, frame

TEXT_METRICS = ("text_entities", "text_nominals", "text_style_outliers", "text_exact_matches")


def test_all_text_metrics_in_a_json_report(texts):
    rep = evaluate(frame(texts["original"]), frame(texts["synthetic"]), metadata=METADATA,
                   metrics={"text_entities": {"backend": "rules"}, "text_nominals": {"backend": "rules"},
                            "text_style_outliers": {}, "text_exact_matches": {}},
                   config={"thresholds": {"text_exact_matches": {"high": 0.9, "medium": 0.8}}})
    for name in TEXT_METRICS:
        assert rep[name]["status"] == "ok", rep[name]
    out = json.loads(json.dumps(rep.to_dict()))
    assert out is not None
    # user thresholds replace the defaults: 3/6 copies is now "low"
    assert rep.result("text_exact_matches").reference_level == "low"
    assert rep.result("text_entities").to_dict()["family"] == "text"
