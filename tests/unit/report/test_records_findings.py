"""The records export lists the records of tests that found nothing beyond chance apart, as
``context``: never counted as rows to drop or review; a test of the release as a whole names the
rows behind its finding for review (``closest_distance_mia``; its rows in
tests/unit/run/test_export_every_row.py) (issue #30)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import synthguard
from synthguard.report.records import facts
from synthguard.run import wording


def _people(rng: np.random.Generator, n: int) -> pd.DataFrame:
    return pd.DataFrame({"a": rng.integers(0, 40, n).astype(str), "b": rng.choice(list("pqrs"), n),
                         "x": rng.normal(size=n).round(2), "y": rng.normal(size=n).round(2)})


@pytest.fixture(scope="module")
def safe():
    rng = np.random.default_rng(4)
    o, c, f = _people(rng, 400), _people(rng, 400), _people(rng, 400)
    rep = synthguard.evaluate(o, f, control=c, metrics=["exact_matches", "dcr",
                                                        "dcr_overfitting_protection"],
                              retest_rows=0, retest_columns=0)
    return o, f, c, rep


def test_records_of_tests_without_a_finding_are_context_and_never_counted(safe):
    o, f, _, rep = safe
    assert all(t["level"] not in ("high", "medium") for t in rep.verdict.tests)
    rows = rep.records(o, f)
    assert len(rows) and set(rows["action"]) == {"context"}
    assert rows["reason"].str.match(r"not a finding \((exact_matches|dcr|dcr_overfitting_protection)"
                                    r" reads [a-z ]+\): ").all()
    got = facts(rep.model)
    assert got.review_all == 0 and got.review_presence == 0 and not got.drops
    assert got.listed == (0, 0, len(rows))
    # the dossier says what the export holds, with the same count (it said 'review' before)
    said = wording.export_line(got.listed)
    assert f"its {len(rows)} record(s) marked 'context'" in said
    dossier = " ".join(rep.to_dossier().split())
    assert said in dossier and "'review'" not in dossier
    html = rep.to_html()
    assert f"{len(rows)} record(s) in the records export (0 to drop, 0 to review, {len(rows)} " \
           "context: not findings)" in html


def test_the_records_out_line_and_the_dossier_say_the_same(safe, tmp_path):
    from click.testing import CliRunner

    from synthguard.cli import main

    files = {}
    for role, frame in zip("osc", safe[:3], strict=True):
        files[role] = tmp_path / f"{role}.csv"
        frame.to_csv(files[role], index=False)
    out = tmp_path / "rows.csv"
    res = CliRunner().invoke(main, ["evaluate", "-o", str(files["o"]), "-s", str(files["s"]),
                                    "-c", str(files["c"]), "--metrics",
                                    "exact_matches,dcr,dcr_overfitting_protection",
                                    "--retest-rows", "0", "--records-out", str(out),
                                    "--dossier", str(tmp_path / "d.md"), "--no-progress"])
    assert res.exit_code == 0, res.output
    written = pd.read_csv(out)
    assert len(written) and set(written["action"]) == {"context"}
    line = wording.export_line((0, 0, len(written)))
    assert line in " ".join(res.output.split())
    assert line in " ".join((tmp_path / "d.md").read_text().split())


def test_after_the_drop_a_whole_release_test_says_it_names_rows_to_review():
    """Verbatim copies are dropped; the moved copies keep closest_distance_mia high: the
    drop-and-retest says it names rows to review (its ties), not that its finding is untied."""
    rng = np.random.default_rng(5)
    o, c, f = _people(rng, 500), _people(rng, 500), _people(rng, 150)
    moved = o.iloc[100:300].copy()
    moved["y"] = moved["y"] + 0.05
    rel = pd.concat([o.head(100), moved, f], ignore_index=True)
    rep = synthguard.evaluate(o, rel, control=c, metrics=["exact_matches", "closest_distance_mia"],
                              retest_columns=0)
    presence = {r["risk"]: r for r in rep.risks()}["presence"]
    why = presence["drop_retest"]["why"]
    assert presence["drop_retest"]["rows_dropped"] >= 90
    assert why["closest_distance_mia"] == wording.still_alarming(
        "review", "a close neighbour (within the distance cut of the pooled 1 % of real records "
                  "closest to the release)")
