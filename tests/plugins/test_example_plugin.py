"""A third-party privacy test is a first-class citizen (issue 32): the example plugin, a package of its
own that declares its module in the entry-point group ``synthguard.metrics``, reads high on a leaky
release and takes part in the verdict, the HTML report, the dossier and the records export, and no
file of synthguard names it. (Its refusal on a Dask cluster: ``tests/integration/dask``.)"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import synthguard

from .conftest import PACKAGE, PLUGIN

SRC = Path(__file__).resolve().parents[2] / "src" / "synthguard"
META = {"quasi_identifiers": ["age", "zip", "sex"], "sensitive": ["income"]}


def _people(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(18, 90, n), "zip": rng.integers(10000, 10400, n),
                         "sex": rng.choice(["f", "m"], n), "income": rng.integers(1, 200, n) * 500.0})


@pytest.fixture(scope="module")
def tables() -> dict[str, pd.DataFrame]:
    """Training, control, a leaky release (a fifth of it copies of training rows) and a fresh one
    (rows of other people only)."""
    original, control, other = _people(400, 1), _people(400, 2), _people(400, 3)
    leaky = pd.concat([original.iloc[:80], other.iloc[80:]], ignore_index=True)
    return {"original": original, "control": control, "leaky": leaky, "fresh": other}


def _run(tables, release: str, **kw) -> synthguard.Report:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return synthguard.evaluate(tables["original"], tables[release], tables["control"], META,
                                   seed=0, **kw)


def test_the_plugin_is_found_through_its_entry_point(plugin_installed):
    from synthguard.registry import get_metric, metric_infos

    assert plugin_installed == f"{PLUGIN} = {PACKAGE}.{PLUGIN}"
    assert PLUGIN in {i.name for i in metric_infos()}
    spec = get_metric(PLUGIN)
    assert spec.func.__module__ == f"{PACKAGE}.{PLUGIN}"
    assert (spec.risk, spec.sees, spec.backend) == ("singling_out", ("exact", "rare"), "local")
    assert "privacy" in spec.presets and spec.knowledge and spec.explainer and spec.records


def test_it_joins_the_preset_its_card_names(plugin_installed):
    from synthguard.run.config import PRESETS

    assert PLUGIN in PRESETS["privacy"] and PLUGIN not in PRESETS["quick"]


def test_on_a_leaky_release_it_reads_high_and_drives_the_verdict(plugin_installed, tables):
    rep = _run(tables, "leaky", metrics=[PLUGIN])
    res = rep.result(PLUGIN)
    assert res.risk_level == "high" and res.evidence.level == "high"
    assert res.value > 0.05 and res.evidence.p_value < 0.01
    assert rep.verdict.level == "high"
    d = rep.to_dict()["verdict"]
    assert [t["metric"] for t in d["tests"]] == [PLUGIN]
    assert [t["metric"] for t in d["drivers"]] == [PLUGIN]
    singling = next(r for r in d["risks"] if r["risk"] == "singling_out")
    assert singling["level"] == "high"
    fresh = _run(tables, "fresh", metrics=[PLUGIN])
    assert fresh.result(PLUGIN).evidence.level != "high" and fresh.verdict.level != "high"


def test_it_appears_in_the_html_the_dossier_and_the_records_export(plugin_installed, tables):
    rep = _run(tables, "leaky", metrics=["exact_matches", PLUGIN])
    assert PLUGIN in rep.to_html()
    dossier = rep.to_dossier()
    assert PLUGIN in dossier
    assert "looks for a release row with the same rare combination" in dossier  # its knowledge
    rows = rep.records(tables["original"], tables["leaky"], META)
    # the records it flags are listed: beside the release rows another test ties to them (it is
    # one of that row's tests), or on their own, marked for review with its reason
    mine = rows[rows["tests"].astype(str).str.split(", ").map(lambda t: PLUGIN in t)]
    assert len(mine) > 0
    own = rows[rows["metric"] == PLUGIN]
    assert set(own["action"]) <= {"review"} and own["reason"].str.contains(PLUGIN).all()
    copied = set(range(80))  # the training rows copied into the release
    assert set(mine["training_row"].astype(int)) <= copied


def test_no_file_of_synthguard_names_the_plugin(plugin_installed):
    named = [str(p.relative_to(SRC)) for p in SRC.rglob("*") if p.is_file()
             and p.suffix in (".py", ".md", ".txt", ".json", ".yaml", ".html", ".js", ".css")
             and (PLUGIN in p.read_text(encoding="utf-8", errors="ignore")
                  or PACKAGE in p.read_text(encoding="utf-8", errors="ignore"))]
    assert not named, f"synthguard's own files name the plugin: {named}"
