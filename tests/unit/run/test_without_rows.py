"""The release without the rows to drop, as the drop-and-retest re-tests it
(:func:`synthguard.run.actions._without_rows`): the run's typed rows taken, not typed again.

What it must equal: the reduced release typed afresh under the run's schema and put in canonical
order, every column and dtype, with each kept row's position in the run's release. Where the
fewer rows type a column otherwise (row numbers, surrogate identifiers), the tables are typed
again under the changed schema, as a new evaluation (and a cluster: without_rows_retyped) does.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import synthguard
from synthguard.data.tables import prepare_tables
from synthguard.demo import make_demo
from synthguard.run.actions import _without_rows

from ...helpers import coded_copies, coded_table


def _mixed(seed: int) -> dict[str, pd.DataFrame]:
    """The demo tables with the quirks typing handles: padded labels, spelled booleans, missing
    values, and release rows repeated (identical rows tie in the canonical order)."""
    d = make_demo(300, seed=seed)
    rng = np.random.default_rng(seed)
    out = {}
    for role in ("original", "leaky", "control"):
        f = d[role].copy()
        n = len(f)
        f["smoker"] = rng.choice(["yes", "no", " Yes"], n)
        f["zip"] = f["zip"].where(rng.random(n) > 0.1, None)
        f["occupation"] = f["occupation"].astype(object) + np.where(rng.random(n) < 0.2, " ", "")
        f["income"] = f["income"].where(rng.random(n) > 0.05)
        out[role] = f
    out["leaky"] = pd.concat([out["leaky"], out["leaky"].iloc[:15], out["original"].iloc[:10]],
                             ignore_index=True)
    return out


def _drop_masks(release: pd.DataFrame, seed: int) -> list[np.ndarray]:
    """Some rows, all rows but one, the first and the last, none. The one row left is the middle
    one of the rows with no missing cell: a release of one row with a missing cell has an empty
    column, which typing refuses (which row is in the middle of the canonical order follows the
    demo's values, whose last digits differ between numpy/pandas versions: a row with a missing
    cell came to the middle under pandas 3.1.1 and numpy 2.4.6)."""
    n = len(release)
    rng = np.random.default_rng(seed)
    some = rng.random(n) < 0.2
    whole = np.flatnonzero(release.notna().all(axis=1).to_numpy())
    one_left = np.ones(n, dtype=bool)
    one_left[whole[whole.size // 2]] = False
    first_and_last = np.zeros(n, dtype=bool)
    first_and_last[[0, n - 1]] = True
    return [some, one_left, first_and_last, np.zeros(n, dtype=bool)]


@pytest.mark.parametrize("seed", [0, 1])
def test_release_without_rows_equals_the_reduced_release_typed_afresh_under_the_runs_schema(seed):
    d = _mixed(seed)
    tables = prepare_tables(d["original"], d["leaky"], d["control"],
                            canonical_columns=True).in_canonical_order()
    assert tables.schema.sdtype("smoker") == "boolean"
    for dropped in _drop_masks(tables.synthetic, seed):
        new, pos, training = _without_rows(tables, dropped)
        kept = np.flatnonzero(~dropped)
        fresh = prepare_tables(tables.original, tables.synthetic.iloc[kept].reset_index(drop=True),
                               tables.control, tables.schema, canonical_columns=True
                               ).in_canonical_order()
        assert new.schema == fresh.schema
        for role in ("original", "synthetic", "control"):
            pd.testing.assert_frame_equal(new.get(role), fresh.get(role), check_exact=True)
            np.testing.assert_array_equal(new.row_numbers[role], fresh.row_numbers[role])
        # each kept row's position in the run's release, as a fresh typing's row numbers give it
        np.testing.assert_array_equal(pos, kept[np.asarray(fresh.row_numbers["synthetic"])])
        assert training is None and np.array_equal(fresh.row_numbers["original"],
                                                   np.arange(len(tables.original)))
        assert new.fingerprints["synthetic"]["rows"] == kept.size
        assert new.fingerprints["original"] == tables.fingerprints["original"]


def test_release_without_rows_has_its_own_fingerprint_per_set_of_rows():
    d = _mixed(0)
    tables = prepare_tables(d["original"], d["leaky"], d["control"]).in_canonical_order()
    n = len(tables.synthetic)
    a, b = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    a[3], b[4] = True, True
    sha = {_without_rows(tables, m)[0].fingerprints["synthetic"]["sha256"] for m in (a, b)}
    assert len(sha) == 2 and tables.fingerprints["synthetic"]["sha256"] not in sha


def test_release_without_rows_is_typed_again_where_fewer_rows_type_a_column_otherwise():
    """A whole-number code that differs on every row overlaps the training table only through the
    copied rows: the run compares it (not a surrogate identifier); once the copies are dropped, a
    new evaluation reads it as an identifier and leaves it out, and so does the re-test (nhefs'
    ``seqn`` in the drop-and-retest tests)."""
    n = 60
    rng = np.random.default_rng(0)

    def table(keys: range) -> pd.DataFrame:
        return coded_table(keys, rng, x_values=5, noise=False)

    original, control = table(range(n)), table(range(1000, 1000 + n))
    release = pd.concat([table(range(2000, 2000 + n)), original.iloc[:5]], ignore_index=True)
    tables = prepare_tables(original, release, control, canonical_columns=True).in_canonical_order()
    assert tables.schema.sdtype("code") == "numerical"
    copies = tables.synthetic["code"].isin(original["code"]).to_numpy()
    assert copies.sum() == 5
    new, pos, _ = _without_rows(tables, copies)
    fresh = prepare_tables(original, tables.synthetic[~copies], control, canonical_columns=True
                           ).in_canonical_order()
    assert new.schema.sdtype("code") == fresh.schema.sdtype("code") == "id"
    pd.testing.assert_frame_equal(new.synthetic, fresh.synthetic)
    np.testing.assert_array_equal(pos, np.flatnonzero(~copies)[fresh.row_numbers["synthetic"]])


def test_a_round_says_which_columns_the_release_without_its_rows_types_otherwise():
    """The drop-and-retest's round names the column a new evaluation of the release without the
    dropped copies reads as an identifier (nothing silent); a round that types nothing otherwise
    says nothing."""
    original, release, control = coded_copies()
    rep = synthguard.evaluate(original, release, control, metrics=["exact_matches"], seed=0,
                              retest_columns=0).to_dict()
    (round_1,) = rep["actions"]["drop_retest"]["rounds"]
    assert round_1["rows_dropped"] == 40
    assert [(c["column"], c["sdtype_before"], c["sdtype_after"]) for c in round_1["typed_otherwise"]] \
        == [("code", "numerical", "id")]
    # declared, the code is typed as declared before and after: the round says nothing
    declared = {"columns": {"code": {"sdtype": "numerical"}}}
    plain = synthguard.evaluate(original, release, control, declared, metrics=["exact_matches"],
                                seed=0, retest_columns=0).to_dict()
    (round_1,) = plain["actions"]["drop_retest"]["rounds"]
    assert round_1["rows_dropped"] == 40 and "typed_otherwise" not in round_1


def test_each_risk_retested_without_the_copies_names_the_column_it_no_longer_compares():
    """The level after the drop is a test without the code (read as an identifier once the copies
    are gone): every alarming risk's drop-and-retest sentence says so, with the round's columns
    (the JSON's ``typed_otherwise``, the same entries); declared, the code is compared after as
    before and no sentence speaks of it."""
    original, release, control = coded_copies()
    rep = synthguard.evaluate(original, release, control, metrics=["exact_matches"], seed=0,
                              retest_columns=0).to_dict()
    (round_1,) = rep["actions"]["drop_retest"]["rounds"]
    alarmed = [r for r in rep["verdict"]["risks"] if r["level"] in ("high", "medium")]
    assert [r["risk"] for r in alarmed][:1] == ["presence"]
    for r in alarmed:
        d = r["drop_retest"]
        assert d["typed_otherwise"] == round_1["typed_otherwise"]
        assert ("; without those rows, column 'code' reads as an identifier (unique per row, no "
                "value shared between the tables) and is no longer compared") in d["text"], d["text"]
    declared = {"columns": {"code": {"sdtype": "numerical"}}}
    plain = synthguard.evaluate(original, release, control, declared, metrics=["exact_matches"],
                                seed=0, retest_columns=0).to_dict()
    assert any(r.get("drop_retest") for r in plain["verdict"]["risks"])
    for r in plain["verdict"]["risks"]:
        d = r.get("drop_retest") or {}
        assert "typed_otherwise" not in d and "'code'" not in d.get("text", "")


def sampled_case() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """3,000 training and 3,000 control records with a unique code; a release of 300 fresh rows,
    600 training rows copied and two rows (``shared``, the last item) carrying the codes of two
    training records outside a 200-record sample (seed 0), other cells new."""
    rng = np.random.default_rng(0)

    def table(keys: range) -> pd.DataFrame:
        return coded_table(keys, rng)

    original, control = table(range(3000)), table(range(10000, 13000))
    shared = original.iloc[[2500, 2600]].assign(x=9, y="q", z=99.0)
    release = pd.concat([table(range(20000, 20300)), original.iloc[:600], shared], ignore_index=True)
    return original, release, control, shared


def test_a_sampled_run_types_the_release_without_its_rows_as_a_new_sampled_evaluation():
    """The code of two release rows (other cells new) is that of training records outside the
    sample: the whole tables share it, so a new evaluation of the release without the copies
    compares it (``max_records`` samples after typing); the re-test must not read it as an
    identifier either (before, it decided on the sampled training table)."""
    original, release, control, shared = sampled_case()
    fresh = synthguard.evaluate(original, pd.concat([release.iloc[:300], shared]), control,
                                metrics=["exact_matches"], seed=0, retest_columns=0, retest_rows=0,
                                max_records=200).to_dict()
    assert fresh["inferred_metadata"]["code"]["sdtype"] == "numerical"
    rep = synthguard.evaluate(original, release, control, metrics=["exact_matches"], seed=0,
                              retest_columns=0, max_records=200).to_dict()
    (round_1,) = rep["actions"]["drop_retest"]["rounds"]
    assert round_1["rows_dropped"] == 600 and "typed_otherwise" not in round_1


def test_a_sampled_runs_coarsened_tables_compare_the_columns_its_drop_retest_compares():
    """The coarsen-and-retest's tables keep the identifiers the tables it coarsens were typed
    with (review s34: it decided them again on the samples, so a code the whole tables share
    only through training records outside the sample read as an identifier there, and the
    coarsened level was of a test without it, said nowhere; a cluster's coarsened tables keep
    the schema)."""
    import dataclasses

    from synthguard.data.coarsening import FrameValues, plan_coarsening
    from synthguard.run.sample import sample_tables

    original, release, control, _ = sampled_case()
    tables = prepare_tables(original, release, control, canonical_columns=True).in_canonical_order()
    sampled, _, _ = sample_tables(tables, 200, 0)
    copies = np.isin(sampled.synthetic["code"].to_numpy(), original["code"].iloc[:600].to_numpy())
    after, _, _ = _without_rows(sampled, copies)
    assert copies.sum() == 600 and after.schema.sdtype("code") == "numerical"
    values = FrameValues.of_tables(after)
    plan = plan_coarsening(values, "z", "numerical")
    spec = dataclasses.replace(after.schema.columns["z"], sdtype="categorical", inferred=False,
                               reason="coarsened", datetime_format=None, unit=None)
    coarse = values.coarsened(plan, dataclasses.replace(after.schema, columns={**after.schema.columns, "z": spec}))
    assert coarse.schema.sdtype("code") == "numerical"
    assert coarse.schema.sdtype("z") == "categorical" and len(coarse.synthetic) == len(after.synthetic)


def test_a_sampled_run_that_cannot_retest_keeps_none_of_the_whole_tables(monkeypatch):
    """Without a drop round (``retest_rows=0``) nothing re-types the release, so the whole tables'
    candidate columns are neither looked for nor copied (a run that can re-test keeps them)."""
    import synthguard.run.sample as sample_module
    from synthguard.run.sample import sample_tables

    original, release, control, _ = sampled_case()
    tables = prepare_tables(original, release, control, canonical_columns=True).in_canonical_order()
    looked = []
    real = sample_module.identifier_candidates
    monkeypatch.setattr(sample_module, "identifier_candidates",
                        lambda frame, schema: looked.append(len(frame)) or real(frame, schema))
    kept, _, _ = sample_tables(tables, 200, 0, retest=False)
    assert kept.whole_columns == {} and looked == [] and len(kept.original) == 200
    kept, _, _ = sample_tables(tables, 200, 0)
    assert looked == [3000, 3000] and list(kept.whole_columns["original"].columns) == ["code"]
    calls = []
    monkeypatch.setattr(sample_module, "draw_sample",
                        lambda *a, **k: calls.append(k.get("retest")) or (tables, None))
    synthguard.evaluate(original, release, control=control, metrics=["exact_matches"],
                        max_records=200, retest_rows=0, retest_columns=0)
    synthguard.evaluate(original, release, control=control, metrics=["exact_matches"],
                        max_records=200, retest_columns=0)
    assert calls == [False, True]
