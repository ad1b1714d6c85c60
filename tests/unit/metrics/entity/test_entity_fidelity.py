"""Sequential and multi-table fidelity: control ceilings, known degradations, and SDMetrics'
multi-table QualityReport (Cardinality, Intertable Trends) as an oracle."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import synthguard as sg

from ._scenarios import run_kwargs, split

SEQ = ["sequence_length", "inter_event_time", "category_shares", "transitions",
       "context_sequence_dependence", "cardinality_shape"]


@pytest.fixture(scope="module")
def parts():
    return split(seed=0)


def test_fresh_release_sits_at_the_control_ceiling(parts):
    p, e = parts["fresh"]
    rep = sg.evaluate(**run_kwargs(parts, p, e), metrics=SEQ)
    for m in SEQ:
        r = rep[m]["result"]
        assert rep[m]["status"] == "ok", (m, rep[m]["reason"])
        assert r["family"] == "fidelity" and rep[m]["unit"] == "entity"
        assert r["baseline"]["value"] is not None
        assert abs(r["value"] - r["baseline"]["value"]) < 0.05, m
    dist = rep["sequence_length"]["result"]["synthetic"]["distribution"]
    assert sum(dist["original"]) == pytest.approx(1.0) and len(dist["lengths"]) == len(dist["synthetic"])
    assert rep["transitions"]["result"]["synthetic"]["columns"]["event"]["largest_differences"]


def test_degraded_releases_score_lower(parts):
    p, e = parts["fresh"]
    kw = run_kwargs(parts, p, e)
    good = sg.evaluate(**kw, metrics=SEQ).to_dict()["metrics"]
    rng = np.random.default_rng(0)
    # every person keeps only their first event; event kinds shuffled across rows; gaps stretched
    bad_e = e.sort_values(["id", "days"]).groupby("id").head(1).copy()
    bad_e["event"] = rng.permutation(bad_e["event"].to_numpy())
    bad = sg.evaluate(**run_kwargs(parts, p, bad_e), metrics=SEQ).to_dict()["metrics"]
    for m in ("sequence_length", "cardinality_shape", "category_shares"):
        assert bad[m]["result"]["value"] < good[m]["result"]["value"] - 0.1, m
    shuffled = e.copy()
    shuffled["event"] = rng.permutation(shuffled["event"].to_numpy())
    shuffled["days"] = shuffled["days"] * 3
    sh = sg.evaluate(**run_kwargs(parts, p, shuffled), metrics=SEQ).to_dict()["metrics"]
    assert sh["transitions"]["result"]["value"] < good["transitions"]["result"]["value"] - 0.02
    assert sh["inter_event_time"]["result"]["value"] < good["inter_event_time"]["result"]["value"] - 0.1


def _multi(parts):
    def with_age(persons, events):
        ev = events.merge(persons[["id", "age"]], on="id", how="left")
        ev["age_at_event"] = ev["age"] + ev["days"] / 365.25
        ev["late"] = np.where(ev["days"] > 0, "after", "before")
        return ev.drop(columns="age")

    meta = {"tables": {
        "persons": {"primary_key": "id", "columns": {
            "id": {"sdtype": "id"}, "age": {"sdtype": "numerical"}, "male": {"sdtype": "categorical"},
            "weight": {"sdtype": "numerical"}, "height": {"sdtype": "numerical"}, "bmi": {"sdtype": "numerical"},
            "futime": {"sdtype": "numerical"}, "status": {"sdtype": "categorical"}}},
        "events": {"columns": {"id": {"sdtype": "id"}, "days": {"sdtype": "numerical"},
                               "event": {"sdtype": "categorical"}, "age_at_event": {"sdtype": "numerical"},
                               "late": {"sdtype": "categorical"}}}},
        "relationships": [{"parent_table_name": "persons", "parent_primary_key": "id",
                           "child_table_name": "events", "child_foreign_key": "id"}]}
    op, oe = parts["original"]
    fp, fe = parts["fresh"]
    rng = np.random.default_rng(3)
    fe = fe.sample(frac=0.8, random_state=1)  # some persons lose events, some all of them
    syn_e = with_age(fp, fe)
    syn_e["age_at_event"] += rng.normal(0, 5, len(syn_e))
    real = {"persons": op, "events": with_age(op, oe)}
    syn = {"persons": fp, "events": syn_e}
    ctl = {"persons": parts["control"][0], "events": with_age(*parts["control"])}
    return real, syn, ctl, meta


def test_multi_table_end_to_end(parts):
    real, syn, ctl, meta = _multi(parts)
    metrics = ["cardinality_shape", "intertable_trends", "entity_copies", "dcr", "quality_report",
               "singling_out_univariate", "sequence_length", "transitions"]
    rep = sg.evaluate(real, syn, ctl, metadata=meta, metrics=metrics)
    d = rep.to_dict()
    assert d["entities"]["parent_table"] == "persons" and d["entities"]["child_table"] == "events"
    for m in metrics:
        assert d["metrics"][m]["status"] == "ok", (m, d["metrics"][m]["reason"])
    assert d["metrics"]["dcr"]["result"]["n"] == len(syn["persons"])
    assert d["metrics"]["quality_report"]["unit"] == "row"
    assert "Cardinality" not in d["metrics"]  # SDMetrics' names live in the docs, ours in the JSON


@pytest.mark.oracle("sdmetrics")
@pytest.mark.conformance
def test_multi_table_quality_matches_sdmetrics(parts):
    pytest.importorskip("sdmetrics")
    from sdmetrics.reports import QualityReport

    real, syn, _, meta = _multi(parts)
    qr = QualityReport()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        qr.generate(real, syn, meta, verbose=False)
    props = qr.get_properties().set_index("Property")["Score"]
    rep = sg.evaluate(real, syn, None, metadata=meta,
                      metrics=["cardinality_shape", "intertable_trends", "multi_table_quality"])
    assert rep["cardinality_shape"]["result"]["value"] == pytest.approx(props["Cardinality"], abs=1e-9)
    mt = rep["multi_table_quality"]["result"]
    assert mt["value"] == pytest.approx(qr.get_score(), abs=1e-9)
    for ours_key, theirs_key in (("column_shapes", "Column Shapes"), ("column_pair_trends", "Column Pair Trends"),
                                 ("cardinality", "Cardinality"), ("intertable_trends", "Intertable Trends")):
        assert mt["synthetic"]["properties"][ours_key] == pytest.approx(props[theirs_key], abs=1e-9)
    assert rep["intertable_trends"]["result"]["value"] == pytest.approx(props["Intertable Trends"], abs=1e-9)
    # the same pairs, ours in the canonical (sorted) column order, SDMetrics' in the metadata's
    ours = pd.DataFrame(rep["intertable_trends"]["result"]["synthetic"]["pairs"])
    ours = ours.set_index(["column_1", "column_2"]).sort_index()
    theirs = qr.get_details("Intertable Trends").set_index(["Column 1", "Column 2"]).sort_index()
    assert list(ours.index) == list(theirs.index)
    np.testing.assert_allclose(ours.score.to_numpy(dtype=float), theirs["Score"].to_numpy(dtype=float),
                               atol=1e-9, equal_nan=True)
    assert list(ours.meets_threshold) == list(theirs["Meets Threshold?"])
