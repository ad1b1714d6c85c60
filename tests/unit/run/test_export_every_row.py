"""The records export lists every release row behind a high or medium finding (no metric's top-N
list stands in for them), and nothing of a metric that decides no level."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import synthguard


def _people(rng: np.random.Generator, n: int) -> pd.DataFrame:
    return pd.DataFrame({"k1": rng.integers(0, 30, n).astype(str),
                         "k2": rng.integers(0, 10, n).astype(str),
                         "s": rng.choice(["a", "b", "c"], n), "x": rng.normal(size=n).round(3)})


@pytest.fixture(scope="module")
def leaky():
    """400 training rows with their key and secret kept (``x`` moved), 400 fresh rows."""
    rng = np.random.default_rng(0)
    o, c, f = _people(rng, 800), _people(rng, 800), _people(rng, 400)
    copies = o.head(400).copy()
    copies["x"] = copies["x"] + 10.0
    rel = pd.concat([copies, f], ignore_index=True)
    meta = {"quasi_identifiers": ["k1", "k2"], "sensitive": ["s"]}
    rep = synthguard.evaluate(o, rel, control=c, metadata=meta, metrics=["cap", "k_anonymity"],
                              retest_rows=0, retest_columns=0)
    return o, rel, rep


def _cap_rows(o: pd.DataFrame, rel: pd.DataFrame) -> set[int]:
    """The release rows behind CAP's flags, by its rule: a training record is exposed when more
    than half of the release rows with its key carry its secret; behind it, every release row with
    its key and its secret."""
    key = ["k1", "k2"]
    share = rel.groupby(key + ["s"]).size() / rel.groupby(key).size()
    p = o.join(share.rename("p"), on=key + ["s"])["p"].fillna(0.0)
    exposed = o[p.to_numpy() > 0.5][key + ["s"]].drop_duplicates()
    behind = rel.reset_index().merge(exposed, on=key + ["s"])["index"]
    return set(behind.astype(int))


def test_export_lists_every_release_row_behind_an_alarming_cap_test(leaky):
    o, rel, rep = leaky
    assert {t["metric"]: t["level"] for t in rep.verdict.tests}["cap"] == "high"
    rows = rep.records()
    cap = rows[rows["tests"].fillna("").str.contains("cap")]
    expected = _cap_rows(o, rel)
    assert len(expected) > 100  # more than the metric's own list holds (max_records=100)
    assert set(cap["release_row"].astype(int)) == expected
    # each with its training row, ranked
    assert cap["training_row"].notna().all()
    assert rows["rank"].tolist() == list(range(1, len(rows) + 1))


def test_export_leaves_out_the_records_of_a_metric_that_decides_no_level(leaky):
    _, _, rep = leaky
    assert "k_anonymity" in rep.verdict.not_assessed
    assert "k_anonymity" not in set(rep.records()["metric"])


@pytest.fixture(scope="module")
def near():
    """300 training rows copied with ``x`` moved by a hair (within new_row_synthesis's
    tolerance, not verbatim), 300 fresh rows."""
    rng = np.random.default_rng(1)
    o, c, f = _people(rng, 600), _people(rng, 600), _people(rng, 300)
    copies = o.head(300).copy()
    copies["x"] = copies["x"] + 0.001
    rel = pd.concat([copies, f], ignore_index=True)
    rep = synthguard.evaluate(o, rel, control=c, metrics=["new_row_synthesis",
                                                          "closest_distance_mia"],
                              retest_rows=0, retest_columns=0)
    return o, rel, rep


def test_export_lists_every_training_record_a_test_flags_without_naming_release_rows(near):
    o, rel, rep = near
    assert {t["metric"]: t["level"] for t in rep.verdict.tests}["new_row_synthesis"] == "high"
    rows = rep.records()
    nrs = rows[rows["metric"] == "new_row_synthesis"]
    # every training record a release row reproduces (every one of the 300 moved copies; a
    # fresh row may reproduce a record too), not the metric's own list of 100 release rows: on
    # its own, or among the tests of the release row another test ties to it
    named = rows[rows["tests"].fillna("").str.contains("new_row_synthesis")]
    assert set(range(300)) <= set(named["training_row"].astype(int))
    assert nrs["release_row"].isna().all()
    assert nrs["reason"].str.contains("does not name the release rows").all()


def test_export_names_the_release_rows_behind_a_membership_test(near):
    """closest_distance_mia names every release row within its tail's cut of a training record it
    flags (not its own top 10 records, not marked as a test of the release as a whole)."""
    _, _, rep = near
    assert {t["metric"]: t["level"] for t in rep.verdict.tests}["closest_distance_mia"] in ("high",
                                                                                   "medium")
    rows = rep.records()
    mia = rows[rows["tests"].fillna("").str.contains("closest_distance_mia")]
    ties = rep.result("closest_distance_mia").evidence.ties
    assert int(ties.member.sum()) == rep.result("closest_distance_mia").evidence.k_member
    train = ties.pairs.record < ties.member.size
    assert set(ties.pairs.record[train]) == set(np.flatnonzero(ties.member))  # each has a row
    # (the ties are in canonical positions, the export in input row numbers: as many rows)
    assert mia["release_row"].notna().all() and mia["training_row"].notna().all()
    assert mia["release_row"].nunique() == np.unique(ties.pairs.row[train]).size > 0
    assert (mia["family"] != "key").all()  # close neighbours of a presence test
    assert not rows["reason"].str.contains("no list of rows accounts for its finding").any()


def test_a_copy_differing_only_in_its_id_column_says_so():
    """A release row equal to its training row on every compared column but its row id (a column
    no test compares) is a verbatim copy for every test; its reason says the id differs."""
    rng = np.random.default_rng(2)
    o, c, f = (_people(rng, 300) for _ in range(3))
    o["id"], c["id"], f["id"] = np.arange(300), np.arange(300, 600), np.arange(600, 900)
    copies = o.head(60).copy()
    copies["id"] = copies["id"] + 1000  # only the id differs
    rel = pd.concat([copies, o.iloc[60:90], f.head(110)], ignore_index=True)
    rep = synthguard.evaluate(o, rel, control=c, metrics=["exact_matches"],
                              retest_rows=0, retest_columns=0)
    assert rep.header["inferred_metadata"]["id"]["sdtype"] == "id"
    rows = rep.records()
    by_row = rows.set_index("release_row")["reason"]
    moved = by_row.loc[list(range(60))]
    assert moved.str.startswith("verbatim copy of its training row on every compared column; "
                                "only 'id', a column no test compares (an identifier), "
                                "differs").all()
    same = by_row.loc[list(range(60, 90))]
    assert same.str.startswith("verbatim copy of its training row (").all()
