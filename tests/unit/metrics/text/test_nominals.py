"""text_nominals: person, role and relationship mentions with spaCy and with the rule fallback."""

from __future__ import annotations

import pytest

from .conftest import frame, run


def _leaked(res) -> dict[str, str]:
    return {r["text"].casefold(): r["kind"] for r in res.to_dict()["top_leaked"]}


def test_spacy_nominals_known_mentions(texts):
    res = run("text_nominals", frame(texts["original"]), frame(texts["synthetic"]), backend="spacy",
              top_k=100)
    d = res.to_dict()
    assert d["backend"] == "spacy" and d["degraded"] is False
    leaked = _leaked(res)
    # proper nouns and role/relationship words of the copied rows
    for word in ("gonzalez", "helen", "carter", "boston"):
        assert leaked[word] == "proper noun"
    for word in ("teacher", "sister", "husband"):
        assert leaked[word] == "role/relationship"
    # mentions of rows that were not copied stay out
    for word in ("peter", "parker", "neighbor", "costco"):
        assert word not in leaked
    assert res.value == pytest.approx(d["leaked"] / d["distinct_original"])
    assert d["density_threshold"] == 0.15
    o = d["original"]
    assert o["density"] == pytest.approx(o["total_mentions"] / o["tokens"])


def test_clean_synthetic_shares_few_nominals(texts):
    leaky = run("text_nominals", frame(texts["original"]), frame(texts["synthetic"]), backend="spacy")
    clean = run("text_nominals", frame(texts["original"]), frame(texts["clean"]), backend="spacy")
    assert clean.value < leaky.value


def test_rules_nominals_degraded(texts):
    res = run("text_nominals", frame(texts["original"]), frame(texts["synthetic"]), backend="rules",
              top_k=100)
    d = res.to_dict()
    assert d["degraded"] is True and "rule-based" in res.warning
    leaked = _leaked(res)
    assert {"helen", "carter", "gonzalez", "teacher", "sister", "husband"} <= set(leaked)
    assert "peter" not in leaked
    # sentence-initial capitals are not taken for proper nouns
    assert "the" not in leaked and "call" not in leaked


def test_flair_has_no_pos_tagger(texts):
    from synthguard import evaluate

    from .conftest import METADATA

    rep = evaluate(frame(texts["original"]), frame(texts["synthetic"]), metadata=METADATA,
                   metrics={"text_nominals": {"backend": "flair"}})
    assert rep["text_nominals"]["status"] == "skipped"
