"""The advice and its counts are those of the one records export (issue #30.1-3): on a release of
30 % verbatim and 30 % one-cell training copies of nhefs (real people, ../shared/data), every
renderer asks to drop exactly the rows the export marks ``drop`` (the rows the in-run re-test
removed), reviews only rows it does not drop, counts the export's records, states a finding that
drives several criteria once, writes the re-test's level before and after in one sentence, and
shows a test contained in another as such, never as "the same statistic"."""

from __future__ import annotations

import re
from html import unescape

import pandas as pd
import pytest

import synthguard
from synthguard.calibration import PUBLIC_TABLE_METADATA, calibration_split, mixed_release
from synthguard.data.loading import CSV_FLOAT_KW
from synthguard.report.dossier import sentences
from synthguard.run import wording


@pytest.fixture(scope="module")
def copies(shared_data):
    real = pd.read_csv(shared_data / "nhefs.csv", **CSV_FLOAT_KW)
    parts = calibration_split(real, 0)
    meta = PUBLIC_TABLE_METADATA["nhefs"]
    leak = mixed_release(parts, {"exact": 0.3, "near1": 0.3}, 0, metadata=meta, of="release")
    rep = synthguard.evaluate(parts["original"], leak.release, control=parts["control"],
                              metadata=meta, preset="privacy", seed=0, retest_columns=0)
    assert rep.verdict.level == "high"
    export = rep.records(parts["original"], leak.release)
    return rep, export


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_every_renderer_asks_to_drop_the_rows_the_export_marks_drop_and_the_retest_dropped(copies):
    rep, export = copies
    drop = export.loc[export["action"] == "drop"]
    n_drop = drop["release_row"].dropna().nunique()
    assert set(drop["family"]) >= {"exact", "near1"}  # the one-cell copies too, not only verbatim
    presence = {r["risk"]: r for r in rep.risks()}["presence"]
    assert presence["drop_retest"]["rows_dropped"] == n_drop
    ask = re.compile(r"Drop the (\d+) release rows the records export marks 'drop'")
    for name, text in (("console", rep.to_console(10_000)), ("html", unescape(rep.to_html())),
                       ("dossier", rep.to_dossier())):
        said = [int(n) for n in ask.findall(_flat(text))]
        assert said == [n_drop], (name, said, n_drop)
        assert "verbatim training rows:" not in _flat(text), name  # no second, smaller count


def test_rows_the_advice_asks_to_review_are_not_rows_it_drops(copies):
    rep, export = copies
    drop = set(export.loc[export["action"] == "drop", "release_row"].dropna().astype(int))
    review = export[(export["action"] == "review") & (export["risk"] == "presence")]
    rows = set(review["release_row"].dropna().astype(int)) - drop
    text = _flat(rep.to_console(10_000))
    m = re.search(r"Review the (\d+) release row\(s\)", text)
    assert (int(m.group(1)) if m else 0) == len(rows)
    near = set(review.loc[review["family"].notna() & (review["family"] != ""),
                          "release_row"].dropna().astype(int)) - drop
    if near:  # the matches of training rows counted as such, apart from a whole-release test's
        said = re.search(r"(\d+) verbatim or near matches", text) or re.search(
            r"Review the (\d+) release row\(s\) listed as verbatim or near matches", text)
        assert said is not None and int(said.group(1)) == len(near)


def test_rows_to_review_split_into_matches_and_a_whole_release_tests_own_rows(shared_data):
    """acs12, a release of 120 verbatim training rows and 280 fresh ones: the review rows under
    presence are near or exact matches (a family named) and ``dcr_overfitting_protection``'s own
    rows (none); the advice counts each from the export, apart."""
    from synthguard.report.records import facts

    d = pd.read_csv(shared_data / "acs12.csv", **CSV_FLOAT_KW).sample(frac=1, random_state=1)
    orig, ctrl, fresh = d.iloc[:800], d.iloc[800:1600], d.iloc[1600:]
    rel = pd.concat([orig.sample(120, random_state=2), fresh.iloc[:280]]).sample(
        frac=1, random_state=3).reset_index(drop=True)
    rep = synthguard.evaluate(orig.reset_index(drop=True), rel, control=ctrl.reset_index(drop=True),
                              metrics=["exact_matches", "near_copies", "dcr_overfitting_protection"],
                              retest_rows=0, retest_columns=0)
    export = rep.records(orig, rel)
    drop = set(export.loc[export["action"] == "drop", "release_row"].dropna().astype(int))
    review = export[(export["action"] == "review") & (export["risk"] == "presence")]
    named = review["family"].notna() & (review["family"] != "")
    near = set(review.loc[named, "release_row"].dropna().astype(int)) - drop
    whole = set(review.loc[~named, "release_row"].dropna().astype(int)) - drop - near
    f = facts(rep)
    assert (f.review_presence, f.review_listed) == (len(near), len(whole)) and near and whole
    text = _flat(rep.to_console(10_000))
    assert (f"Review the {len(near) + len(whole)} release row(s) the records export marks 'review' "
            f"under presence: {len(near)} verbatim or near matches of training rows and "
            f"{len(whole)} a test of the release as a whole lists itself") in text


def test_every_renderer_counts_the_records_of_the_one_export(copies):
    rep, export = copies
    n_review = int((export["action"] == "review").sum())
    m = re.search(r"The records export marks (\d+) record\(s\) 'review'", _flat(rep.to_dossier()))
    assert m is not None and int(m.group(1)) == n_review
    h = re.search(r"(\d+) record\(s\) in the records export \((\d+) to drop", rep.to_html())
    assert h is not None and int(h.group(1)) == len(export)
    assert int(h.group(2)) == int((export["action"] == "drop").sum())


def test_a_finding_that_drives_several_criteria_is_stated_once(copies):
    rep, _ = copies
    risks = rep.risks()
    summaries = [r["summary"] for r in risks if r["level"] == "high"]
    assert len(summaries) > len(set(summaries))  # one test drives several criteria here
    for name, text in (("console", rep.to_console(10_000)), ("dossier", rep.to_dossier())):
        flat = _flat(text)
        for s in set(summaries):
            assert flat.count(s) == 1, (name, s)
    prose = "\n".join(x for x in rep.to_dossier().splitlines() if not x.startswith("|"))
    seen = [re.sub(r"^- [^:]+: ", "", s) for s in sentences(prose) if len(s) > 40]
    assert not {s for s in seen if seen.count(s) > 1}


def test_the_drop_retest_states_what_each_risk_reads_before_and_after_in_one_clause(copies):
    rep, _ = copies
    for r in rep.risks():
        d = r["drop_retest"]
        text = wording.dropped(r)
        assert text.startswith(f"Re-tested without the {d['rows_dropped']} release rows listed to drop")
        assert (f"{r['title'].lower()} reads {d['level_after'].upper()} "
                f"(was {d['level_before'].upper()})") in text
        assert text.count(d["level_before"].upper()) == 1 or d["level_before"] == d["level_after"]


def test_a_test_contained_in_another_is_shown_as_such_not_as_the_same_statistic(copies):
    rep, _ = copies
    tests = {t.metric: t for t in rep.verdict.tests}
    assert tests["closest_distance_mia"].get("contained_in") == "membership_attacks"
    for t in tests.values():  # "the same statistic on the same records": the same numbers
        host = t.get("same_as")
        if host:
            a, b = t, tests[host]
            assert (a.n_member, a.member, a.non_member) == (b.n_member, b.member, b.non_member)
    assert "(one of `membership_attacks`'s attacks)" in rep.to_dossier()
    assert wording.contained_test("membership_attacks").replace("'", "&#x27;") in rep.to_html()
