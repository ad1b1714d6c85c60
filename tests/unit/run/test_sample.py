"""Sampled queries (``max_records``, issue 31 point 2): above N training or control records the tests
run on a seeded uniform sample of N of each against the whole release; the report states it, the
input row order cannot change it, and every exact copy of the full training table is still listed."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import synthguard
from synthguard.errors import ConfigError
from synthguard.run.options import EvaluateOptions

METRICS = ["exact_matches", "near_copies"]


def _people(n: int, rng: np.random.Generator) -> pd.DataFrame:
    return pd.DataFrame({"age": rng.integers(18, 90, n), "income": rng.normal(5e4, 1e4, n).round(0),
                         "city": rng.choice(list("abcdefgh"), n), "job": rng.choice(list("pqrstu"), n)})


@pytest.fixture(scope="module")
def frames():
    rng = np.random.default_rng(11)
    original, control, fresh = _people(200, rng), _people(150, rng), _people(100, rng)
    # 20 verbatim copies of training rows 0, 10, ..., 190 among 100 fresh rows
    release = pd.concat([fresh, original.iloc[::10]], ignore_index=True)
    return original, release, control


def _json(rep, *, moved_rows: bool = False) -> str:
    """The JSON report without its timings; with ``moved_rows`` also without the input fingerprints
    and row numbers (shuffled inputs move rows; lists of records are then sorted)."""
    def keep(k: str) -> bool:
        return k != "seconds" and not (moved_rows and (k == "row" or k.endswith(("_row", "_rows"))))

    def clean(obj):
        if isinstance(obj, list):
            items = [clean(v) for v in obj]
            sort = moved_rows and items and all(isinstance(v, dict) for v in items)
            return sorted(items, key=json.dumps) if sort else items
        return {k: clean(v) for k, v in obj.items() if keep(k)} if isinstance(obj, dict) else obj

    d = json.loads(rep.to_json())
    if moved_rows:
        d.pop("inputs")
    return json.dumps(clean(d), sort_keys=True)


def test_max_records_at_or_above_the_table_sizes_gives_the_same_json_as_no_option(frames):
    original, release, control = frames
    plain = synthguard.evaluate(original, release, control, metrics=METRICS, seed=2)
    assert "sample" not in plain.model.header
    for n in (200, 10**6, 0):  # 200 = the larger table's size; 0 = never sample
        same = synthguard.evaluate(original, release, control, metrics=METRICS, seed=2,
                                   max_records=n)
        assert _json(same) == _json(plain), n


def test_the_tests_run_on_the_sample_and_the_header_and_verdict_state_it(frames):
    original, release, control = frames
    plans = []
    rep = synthguard.evaluate(original, release, control, metrics=METRICS, seed=2, max_records=60,
                              on_plan=plans.append)
    assert "sample of 60 of 200 training records and 60 of 150 control" in plans[0].render()
    sample = rep.model.header["sample"]
    assert sample["original"] == {"rows": 60, "of": 200}
    assert sample["control"] == {"rows": 60, "of": 150}
    assert sample["seed"] == 2 and sample["max_records"] == 60
    assert sample["exact_copies"]["release_rows"] == 20
    test = next(t for t in rep.verdict.tests if t["metric"] == "exact_matches")
    assert (test["n_member"], test["n_non_member"]) == (60, 60)
    said = "sample of 60 of 200 training and 60 of 150 control records"
    assert said in rep.verdict.summary and "the sample's" in rep.verdict.summary
    for text in (rep.to_console(), rep.to_html(), rep.to_dossier(fmt="markdown")):
        assert said in " ".join(text.split())  # the console wraps its lines
    # the release is never sampled
    assert json.loads(rep.to_json())["inputs"]["synthetic"]["rows"] == 120
    other = synthguard.evaluate(original, release, control, metrics=METRICS, seed=3, max_records=60)
    assert _json(other, moved_rows=True) != _json(rep, moved_rows=True)  # another seed, another sample


def test_a_sampled_run_is_the_same_whatever_the_input_row_order(frames):
    original, release, control = frames
    a = synthguard.evaluate(original, release, control, metrics=METRICS, seed=5, max_records=70)
    shuffled = [x.sample(frac=1, random_state=i).reset_index(drop=True)
                for i, x in enumerate((original, release, control))]
    b = synthguard.evaluate(*shuffled, metrics=METRICS, seed=5, max_records=70)
    assert _json(a, moved_rows=True) == _json(b, moved_rows=True)


def test_every_exact_copy_of_the_full_table_is_listed_even_outside_the_sample(frames):
    original, release, control = frames
    rep = synthguard.evaluate(original, release, control, metrics=METRICS, seed=2, max_records=60)
    rec = rep.records()
    copies = rec[(rec["metric"] == "exact_matches") & rec["release_row"].notna()]
    truth = set(range(100, 120))  # the planted copies (the fresh rows copy no training row)
    assert truth <= set(copies["release_row"].astype(int))
    listed = copies.drop_duplicates("release_row").set_index("release_row")
    # each copy names the training row it copies
    for r in truth:
        assert listed.loc[r, "training_row"] == (r - 100) * 10
    outside = listed["reason"].str.contains("not among the sampled records")
    assert int(outside.sum()) == rep.model.header["sample"]["exact_copies"]["outside_sample"]
    assert 0 < int(outside.sum()) < 20  # some records sampled, some not (60 of 200)
    # in the unsampled export's words; the sample's copy test found nothing beyond chance here,
    # so they are listed apart, as context, not as findings
    level = {t["metric"]: t["level"] for t in rep.verdict.tests}["exact_matches"]
    assert level not in ("high", "medium")
    joined = listed[listed["reason"].str.contains("found by the join of the release")]
    assert set(joined["action"]) == {"context"}
    assert joined["reason"].str.startswith(f"not a finding (exact_matches reads {level}): "
                                           "verbatim copy of its training row (exact_matches); "
                                           "found by the join of the release against every "
                                           "training record: its training row is").all()


def _one_cell_copies(original: pd.DataFrame, control: pd.DataFrame, fresh: pd.DataFrame):
    """A release of ``fresh`` rows and 20 copies of training rows 5, 15, ..., 195 with their income
    moved by 1, and every release row that copies a training record with one cell changed and
    identifies it: that record is the only real record (training or control) within one cell of
    the row (counted here cell by cell over all pairs, as the definition says; fresh rows may
    qualify by chance)."""
    copies = original.iloc[5::10].copy()
    copies["income"] = copies["income"] + 1
    release = pd.concat([fresh, copies], ignore_index=True)
    real = pd.concat([original, control], ignore_index=True).to_numpy(dtype=object)
    differ = (release.to_numpy(dtype=object)[:, None, :] != real[None, :, :]).sum(axis=2)
    alone = (differ <= 1).sum(axis=1) == 1
    record = np.argmin(differ, axis=1)
    one = alone & (differ[np.arange(len(release)), record] == 1) & (record < len(original))
    return release, {int(r): int(record[r]) for r in np.flatnonzero(one)}


def test_every_identifying_one_cell_copy_of_the_full_table_is_listed_even_outside_the_sample(frames):
    original, _, control = frames
    fresh = _people(100, np.random.default_rng(5))
    release, truth = _one_cell_copies(original, control, fresh)
    assert sum(r >= 100 for r in truth) >= 10  # most planted copies identify their record
    rep = synthguard.evaluate(original, release, control, metrics=METRICS, seed=2, max_records=60)
    rec = rep.records()
    near = rec[(rec["metric"] == "near_copies") & (rec["family"] == "near1")]
    listed = near.drop_duplicates("release_row").set_index("release_row")["training_row"]
    assert {int(r): int(t) for r, t in listed.items()} == truth  # every one, each with its record
    said = rep.model.header["sample"]["one_cell_copies"]
    outside = near.drop_duplicates("release_row")["reason"].str.contains(
        "not among the sampled records")
    assert said == {"release_rows": len(truth), "outside_sample": int(outside.sum())}
    assert 0 < said["outside_sample"] < len(truth)  # 60 of 200 records sampled
    assert f"and {len(truth)} that copy one with 1 cell changed" in rep.verdict.summary


def test_a_sampled_run_without_the_one_cell_test_joins_no_one_cell_copies(frames):
    original, _, control = frames
    release, _ = _one_cell_copies(original, control, _people(100, np.random.default_rng(5)))
    rep = synthguard.evaluate(original, release, control, metrics=["exact_matches"], seed=2,
                              max_records=60)
    assert "one_cell_copies" not in rep.model.header["sample"]
    assert not (rep.records()["family"] == "near1").any()


@pytest.mark.parametrize("copy_test", ["exact_matches", {"name": "copies", "metric": "exact_matches"}])
def test_a_sampled_run_names_each_test_once_and_lists_a_copy_once_per_test(frames, copy_test):
    """The full-table copies join the copy test's rows under the name the run gives that test: a
    named run of exact_matches is not listed a second time under the registered name."""
    original, release, control = frames
    rep = synthguard.evaluate(original, release, control, metrics=[copy_test, "near_copies"],
                              seed=2, max_records=60)
    run_names = {t["metric"] for t in rep.verdict.tests}
    rec = rep.records()
    names = {n for cell in rec["tests"].fillna(rec["metric"]) for n in str(cell).split(", ")}
    assert set(rec["metric"]) | names <= run_names, (set(rec["metric"]) | names) - run_names
    copier = copy_test if isinstance(copy_test, str) else copy_test["name"]
    rows = rec[(rec["metric"] == copier) & rec["release_row"].notna()]
    assert set(range(100, 120)) <= set(rows["release_row"].astype(int))  # every planted copy
    assert not rows["release_row"].duplicated().any()  # ... listed once


@pytest.mark.parametrize("value", [-1, 1.5, True, "300"])
def test_a_bad_max_records_is_refused_in_one_line(value):
    with pytest.raises(ConfigError) as err:
        EvaluateOptions(max_records=value)
    assert "max_records" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("value", ["-3", "1.5", "many"])
def test_a_bad_max_records_on_the_command_line_exits_2_with_one_line(tmp_path, value):
    from synthguard.cli import main

    path = tmp_path / "t.csv"
    pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]}).to_csv(path, index=False)
    res = CliRunner().invoke(main, ["evaluate", "-o", str(path), "-s", str(path),
                                    f"--max-records={value}", "--no-progress"])
    assert res.exit_code == 2
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert len(lines) == 1 and "max_records" in lines[0], res.output


def test_entity_runs_refuse_max_records(frames):
    original, release, control = frames
    with pytest.raises(ConfigError, match="max_records"):
        synthguard.evaluate(original.assign(pid=np.arange(200) // 2), release.assign(pid=0),
                            metrics=["exact_matches"], entity_key="pid", max_records=10)


def test_a_cached_result_of_the_whole_table_is_not_read_for_a_sample(frames, tmp_path):
    original, release, control = frames
    whole = synthguard.evaluate(original, release, control, metrics=["exact_matches"], seed=2,
                                max_records=0, cache=tmp_path)
    part = synthguard.evaluate(original, release, control, metrics=["exact_matches"], seed=2,
                               max_records=60, cache=tmp_path)
    n = {rep: next(t for t in rep.verdict.tests if t["metric"] == "exact_matches")["n_member"]
         for rep in (whole, part)}
    assert (n[whole], n[part]) == (200, 60)
    again = synthguard.evaluate(original, release, control, metrics=["exact_matches"], seed=2,
                                max_records=60, cache=tmp_path)
    assert again.to_dict()["metrics"]["exact_matches"].get("cached") is True  # the sample's own


def test_the_full_table_joins_find_the_same_copies_from_codes_encoded_once(frames):
    from synthguard.data.tables import prepare_tables
    from synthguard.run.sample import _compared_codes, exact_copies, near_copies_of

    original, release, control = frames
    fresh = _people(100, np.random.default_rng(5))
    one_cell, truth = _one_cell_copies(original, control, fresh)
    both = pd.concat([release, one_cell], ignore_index=True)  # verbatim and one-cell copies
    t = prepare_tables(original, both, control).in_canonical_order()
    at = np.arange(0, len(original), 3)
    codes = _compared_codes(t, True)
    assert set(codes) == {"real", "original", "control", "synthetic", "distinct"}
    assert set(_compared_codes(t, False)) == {"original", "synthetic"}
    for join in (exact_copies, near_copies_of):
        alone, shared = join(t, at), join(t, at, codes)
        assert alone["release"].size > 0
        for key in ("release", "training", "outside"):
            np.testing.assert_array_equal(shared[key], alone[key])
    assert len(truth) and near_copies_of(t, at, codes)["release"].size >= len(truth)


#: the tests whose queries are release rows (shares of release rows), and a copy test beside them
RELEASE_QUERIES = ["dcr", "nndr", "dcr_overfitting_protection", "dcr_baseline_protection",
                   "new_row_synthesis", "exact_matches"]


def test_tests_with_release_rows_as_queries_ask_of_a_seeded_sample_of_the_release_and_say_so(frames):
    original, release, control = frames  # 120 release rows, 20 of them verbatim copies
    plans = []
    rep = synthguard.evaluate(original, release, control, metrics=RELEASE_QUERIES, seed=2,
                              max_records=60, on_plan=plans.append)
    assert "on 60 of the 120 release rows as queries" in " ".join(plans[0].render().split())
    said = rep.model.header["sample"]["release_queries"]
    assert said == {"rows": 60, "of": 120, "tests": sorted(RELEASE_QUERIES[:-1])}
    res = {m: e["result"] for m, e in rep.to_dict()["metrics"].items()}
    assert res["dcr"]["synthetic_original"]["n"] == 60
    assert res["nndr"]["synthetic_original"]["n"] == 60
    assert res["dcr_overfitting_protection"]["n"] == 60
    assert res["dcr_baseline_protection"]["n_synthetic"] == 60
    assert res["new_row_synthesis"]["n"] == 60
    assert res["dcr_overfitting_protection"]["evidence_won_records"]["release_rows"] == 60
    # every listed release row is one of the sampled ones, and they are the same for every test
    rows = {m: {r["synthetic_row"] for r in res[m]["records"]}
            for m in ("dcr_overfitting_protection", "dcr_baseline_protection", "new_row_synthesis")}
    assert all(rows.values()) and len(set().union(*rows.values())) <= 60
    text = " ".join(rep.verdict.summary.split())
    assert "asked of a seeded sample of 60 of the 120 release rows" in text
    assert "new_row_synthesis" in text and "exact_matches" not in text.split("asked of")[0][-200:]


def test_real_records_are_still_matched_against_the_whole_release_when_release_queries_are_sampled(
        frames):
    """new_row_synthesis's evidence asks each sampled training record against every release row:
    each sampled record with a verbatim copy in the release is flagged, as exact_matches flags it
    (with the 60-row release sample as reference about half of them would be missed)."""
    original, release, control = frames
    rep = synthguard.evaluate(original, release, control, metrics=RELEASE_QUERIES, seed=2,
                              max_records=60)
    tests = {t["metric"]: t for t in rep.verdict.tests}
    flagged = {m: round(t["member"] * t["n_member"]) for m, t in tests.items()}
    assert flagged["exact_matches"] >= 3  # some of the 20 copied records are among the 60 sampled
    assert flagged["new_row_synthesis"] >= flagged["exact_matches"]
    assert tests["new_row_synthesis"]["n_member"] == 60


def test_the_release_queries_do_not_depend_on_the_input_row_order(frames):
    original, release, control = frames
    a = synthguard.evaluate(original, release, control, metrics=RELEASE_QUERIES, seed=5,
                            max_records=70)
    shuffled = [x.sample(frac=1, random_state=i).reset_index(drop=True)
                for i, x in enumerate((original, release, control))]
    b = synthguard.evaluate(*shuffled, metrics=RELEASE_QUERIES, seed=5, max_records=70)
    assert a.model.header["sample"]["release_queries"]["rows"] == 70
    assert _json(a, moved_rows=True) == _json(b, moved_rows=True)


def _drop_consistency(rep) -> tuple[set[int], int]:
    """The export's rows to drop and the rows the in-run drop-and-retest dropped; each test's
    full-table copies (records outside the sample) are to drop exactly when the test drops its own
    copies of that family."""
    rec = rep.records()
    drop = set(rec.loc[rec["action"] == "drop", "release_row"].dropna().astype(int))
    joined = rec[rec["reason"].fillna("").str.contains("found by the join of the release against every training record")]
    cost = json.loads(rep.to_json())["actions"]["drop_retest"]
    for family, part in joined.groupby("family"):  # to drop when the re-test dropped them
        want = "drop" if cost["full_table_copies"][family] else "review"
        assert set(part["action"]) == {want}, family
        assert set(part["round"].dropna()) == ({1} if want == "drop" else set())
    return drop, int(cost["rows_dropped"])


def test_a_sampled_run_re_tests_without_every_row_its_export_marks_to_drop(frames):
    """The full-table copies of records outside the sample are marked to drop as the run's own
    copies are, and the in-run drop-and-retest drops them too: the level after is that of the
    release without every row listed to drop (not only the sampled records' copies)."""
    original, release, control = frames
    # 100 fresh rows and verbatim copies of every other training row: the sample alarms
    release = pd.concat([release.head(100), original.iloc[::2]], ignore_index=True)
    rep = synthguard.evaluate(original, release, control, metrics=METRICS, seed=2, max_records=60)
    assert rep.model.header["sample"]["exact_copies"]["outside_sample"] > 30
    drop, dropped = _drop_consistency(rep)
    assert set(range(100, 200)) <= drop  # every planted verbatim copy, in the sample or not
    assert dropped == len(drop)
    presence = {r["risk"]: r for r in rep.risks()}["presence"]
    assert presence["drop_retest"]["rows_dropped"] == len(drop)
    assert f"without the {len(drop)} release rows" in presence["drop_retest"]["text"]


def test_one_cell_copies_outside_the_sample_take_the_action_of_the_runs_own(frames):
    original, _, control = frames
    copies = original.iloc[1::2].copy()
    copies["income"] = copies["income"] + 1  # one-cell copies of every other training row
    release = pd.concat([_people(100, np.random.default_rng(5)), copies], ignore_index=True)
    rep = synthguard.evaluate(original, release, control, metrics=METRICS, seed=2, max_records=60)
    assert rep.model.header["sample"]["one_cell_copies"]["outside_sample"] > 30
    drop, dropped = _drop_consistency(rep)
    assert dropped == len(drop) > 0


def test_which_tests_ask_of_release_rows_is_read_from_each_card():
    from synthguard.core.results import MetricResult
    from synthguard.registry import register
    from synthguard.registry.spec import _REGISTRY
    from synthguard.run.sample import release_query_tests

    assert release_query_tests(RELEASE_QUERIES + ["exact_matches"]) == sorted(RELEASE_QUERIES[:-1])

    @register("share_of_release_rows", family="privacy", direction="lower is safer",
              risk="presence", queries="release")
    def share_of_release_rows(ctx):  # pragma: no cover - never run
        return MetricResult("share_of_release_rows", "privacy", 0.0, "lower is safer")

    try:
        assert release_query_tests(["share_of_release_rows", "exact_matches"]) == ["share_of_release_rows"]
    finally:
        _REGISTRY.pop("share_of_release_rows")
    with pytest.raises(ValueError, match="queries must be 'records' or 'release'"):
        register("bad_queries", family="privacy", direction="lower is safer", queries="rows")


def test_the_exact_join_numbers_only_the_rows_whose_hash_the_other_table_holds(frames, monkeypatch):
    """The full-table exact join's row identities are those of the candidate rows alone (a row
    whose cell-hash sum the other table lacks equals none of its rows), and its copies are those of
    the identities over every row, duplicated training rows and the sampled ones preferred included."""
    import synthguard.data.encoding as encoding
    from synthguard.data.tables import prepare_tables
    from synthguard.metrics.privacy.matching import first_copies
    from synthguard.run.sample import _compared_cells, _compared_codes, exact_copies, near_copies_of

    original, release, control = frames
    # a training row three times (the release copies it): the sampled one is named before the first
    training = pd.concat([original, original.iloc[[10, 10]]], ignore_index=True)
    t = prepare_tables(training, release, control).in_canonical_order()
    at = np.arange(1, len(training), 2)
    codes = _compared_codes(t, True)
    numbered = []
    real = encoding.row_identities

    def counted(*blocks):
        numbered.append(sum(b.n_rows for b in blocks))
        return real(*blocks)

    monkeypatch.setattr(encoding, "row_identities", counted)
    cells = _compared_cells(codes)
    for held in (None, cells):
        got = exact_copies(t, at, codes, held)
        in_sample = np.zeros(len(training), dtype=bool)
        in_sample[at] = True
        release_at, training_at = first_copies(t, in_sample)  # every row's identity
        np.testing.assert_array_equal(got["release_at"], release_at)
        np.testing.assert_array_equal(got["training"], np.asarray(t.row_numbers["original"])[training_at])
        assert got["release"].size == 20
    # 20 verbatim copies (the release rows) and their 22 training rows, not the 402 + 120 rows
    assert numbered[0::2] == [42, 42], numbered
    assert set(near_copies_of(t, at, codes, cells)) == {"release", "training", "outside", "release_at"}


def test_the_one_cell_join_reads_the_cell_hashes_it_is_given(frames, monkeypatch):
    """Both full-table joins of a sampled run read one hashing of the release's and the real
    records' cells: the one-cell join's block join hashes no cell of its own."""
    import synthguard.data.hashing as hashing
    import synthguard.metrics.privacy._copies as copies_mod
    from synthguard.data.tables import prepare_tables
    from synthguard.run.sample import sample_tables

    original, release, control = frames
    t = prepare_tables(original, release, control).in_canonical_order()
    hashed = []
    real = hashing.cell_hashes

    def counted(codes, ids, chain=0):
        hashed.append(np.asarray(codes).shape[0])
        return real(codes, ids, chain)

    monkeypatch.setattr(hashing, "cell_hashes", counted)
    monkeypatch.setattr(copies_mod, "cell_hashes", counted)
    _, info, copies = sample_tables(t, 100, 0, near=True)
    assert info["exact_copies"]["release_rows"] == copies["exact"]["release"].size > 0
    assert sorted(hashed) == sorted([len(release), len(original) + len(control)])


def test_the_one_cell_join_reads_the_distinct_codes_of_the_vocabularies(frames, monkeypatch):
    """The sampled run's one-cell join takes each column's number of distinct codes from the
    encoder's vocabularies (values only in the release or the control and missing values counted),
    equal to counting the codes; the block join counts none itself."""
    import synthguard.metrics.privacy._copies as copies_mod
    from synthguard.data.tables import prepare_tables
    from synthguard.run.sample import _compared_codes, sample_tables

    original, release, control = frames
    release, control = release.copy(), control.copy()
    release.loc[[3, 5], "income"] = np.nan
    release.loc[7, "city"] = "zz"  # a value of the release alone
    control.loc[[0, 1], "city"] = None
    t = prepare_tables(original, release, control).in_canonical_order()
    codes = _compared_codes(t, True)
    counted = copies_mod._cardinalities(codes["synthetic"], codes["real"])
    np.testing.assert_array_equal(codes["distinct"], counted)
    calls = []
    real = copies_mod._cardinalities
    monkeypatch.setattr(copies_mod, "_cardinalities", lambda a, b: calls.append(1) or real(a, b))
    _, info, copies = sample_tables(t, 100, 0, near=True)
    assert calls == [] and info["one_cell_copies"]["release_rows"] == copies["near1"]["release"].size
