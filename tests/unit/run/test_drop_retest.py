"""Issue #30 points 1-2: the drop list names the leaked release rows, and dropping them works.

Releases built from the shared tables (``synthguard.calibration`` splits, leak rows from
``synthguard.data.leaks``): a fresh sample of real people the generator never saw, with some of
its rows replaced by verbatim copies of training rows and by copies with one cell changed. The
ground truth is which release rows are those copies, and which one-cell copies *identify* their
training record (no other training or control record shares its untouched cells).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import synthguard
from synthguard.calibration import calibration_split
from synthguard.data.leaks import LeakSpec, build_leak_rows
from synthguard.stats import make_rng

#: The presence tests of the verdict (the copies' risk), kept small so each table takes seconds.
PRESENCE = ["exact_matches", "near_copies", "near_copies_2", "close_neighbours", "dcr"]
#: table -> (rows, columns) read (small sizes: seconds per table); acs12 repeats rows (15 % of its
#: rows have an identical twin; 9 % repeat an earlier row), so fresh people equal or near training records by chance
TABLES = {"diabetes_raw": (442, 11), "anes96": (944, 11), "nhefs": (500, 20), "acs12": (1200, 13)}
#: Tables whose fresh rows match copied records' rows so often that a drop list at 95 % precision
#: cannot hold every copy (see the recall test's mark).
CROWDED = {"acs12"}


def _identifies(near: pd.DataFrame, sources: pd.DataFrame, real: pd.DataFrame) -> np.ndarray:
    """Per one-cell copy: is its training record the only real record with its untouched cells?
    (one pass per column; missing equals missing)."""
    a, b = near.reset_index(drop=True), sources.reset_index(drop=True)
    changed = ~(a.eq(b) | (a.isna() & b.isna())).to_numpy()
    assert (changed.sum(axis=1) == 1).all()
    col = changed.argmax(axis=1)
    out = np.zeros(len(a), dtype=bool)
    text = real.astype(str)
    for j, name in enumerate(real.columns):  # loop over columns
        at = np.flatnonzero(col == j)
        if not at.size:
            continue
        rest = [c for c in real.columns if c != name]
        counts = text.groupby(rest, dropna=False).size().rename("n").reset_index()
        hit = b.iloc[at][rest].astype(str).merge(counts, on=rest, how="left")["n"]
        out[at] = hit.to_numpy() == 1
    return out


def _leaky_release(table: str, shared_data) -> dict:
    rows, cols = TABLES[table]
    frame = pd.read_csv(shared_data / f"{table}.csv").iloc[:rows, :cols]
    parts = calibration_split(frame, 0, (0.4, 0.3, 0.3))
    o, c, f = parts["original"], parts["control"], parts["fresh"]
    rng = make_rng(0, "test-drop-retest", table)
    src = rng.permutation(len(o))
    n_exact, n_near = len(o) // 20, len(o) // 10  # 5 % of the training records copied, 10 % near
    pool = pd.concat([o, c], ignore_index=True)
    exact = build_leak_rows("exact", o, src[:n_exact], pool=pool, spec=LeakSpec(), rng=rng)
    near_src = src[n_exact:n_exact + n_near]
    near = build_leak_rows("near1", o, near_src, pool=pool, spec=LeakSpec(), rng=rng)
    base = f.iloc[: len(f) - n_exact - n_near]
    release = pd.concat([base, exact, near], ignore_index=True)
    kind = np.array(["fresh"] * len(base) + ["exact"] * n_exact + ["near"] * n_near, dtype=object)
    ident = np.zeros(len(release), dtype=bool)
    ident[len(base) + n_exact:] = _identifies(near, o.iloc[near_src], pool)
    order = rng.permutation(len(release))
    return {"original": o, "control": c, "release": release.iloc[order].reset_index(drop=True),
            "kind": kind[order], "identifying": ident[order]}


@pytest.fixture(scope="module", params=sorted(TABLES))
def leaky(request, shared_data):
    table = request.param
    data = _leaky_release(table, shared_data)
    rep = synthguard.evaluate(data["original"], data["release"], control=data["control"],
                              metrics=PRESENCE, seed=0, retest_columns=0)
    return table, data, rep


def _dropped(rep) -> np.ndarray:
    recs = rep.records()
    return np.unique(recs.loc[recs["action"] == "drop", "release_row"].astype(int).to_numpy())


def _drop_mask(data, rep) -> np.ndarray:
    drop = np.zeros(len(data["kind"]), dtype=bool)
    drop[_dropped(rep)] = True
    return drop


def test_the_drop_list_names_fresh_rows_at_most_one_in_twenty(leaky):
    """Precision: a fresh person who equals or nears a training record by chance is no copy (on
    acs12 24 of the 86 rows dropped before the chance baseline were fresh people)."""
    table, data, rep = leaky
    kind, drop = data["kind"], _drop_mask(data, rep)
    assert drop.sum() >= 10, table
    precision = (kind[drop] != "fresh").mean()
    assert precision >= 0.95, (table, precision, int(drop.sum()))


#: Why the recall test fails on the crowded tables (measured; strict: it fails, or the mark goes).
CROWDED_WHY = ("acs12 (1200 rows): before the chance baseline 24 of the 86 rows dropped were fresh "
               "people, 12 equal to a training record (children's rows, no income or job, that "
               "real people share but for age and birth quarter) and 12 identifying one within a "
               "cell; 11 of the 24 exact copies have other real records within one cell, as those "
               "fresh twins do, and a twin of a record is the same bytes as a copy of it: at 95 % "
               "precision the list holds 58 % of the exact and 56 % of the identifying copies")


def test_drop_list_holds_every_exact_copy_and_the_identifying_one_cell_copies(leaky, request):
    table, data, rep = leaky
    if table in CROWDED:
        request.applymarker(pytest.mark.xfail(strict=True, reason=CROWDED_WHY))
    kind, ident, drop = data["kind"], data["identifying"], _drop_mask(data, rep)
    assert (kind == "exact").any() and ident.sum() >= 10, table
    assert drop[kind == "exact"].all(), (table, drop[kind == "exact"].mean())
    assert drop[ident].mean() >= 0.9, (table, drop[ident].mean())


#: Why presence stays high after the drop on the crowded tables (measured at seed 0; strict: it
#: stays high, or the mark goes).
CROWDED_AFTER = ("acs12 (1200 rows): at 95 % precision the list drops 38 rows and leaves for review "
                 "10 exact and 14 one-cell copies among 36 fresh rows that are the same bytes; "
                 "without the dropped rows the release still holds 24 one-cell and 10 exact copies, "
                 "and near_copies sees them (5.2 % of the training records against 1.4 % of the "
                 "control records flagged): presence stays high because the leak is still there")


def test_presence_is_not_high_after_the_in_run_drop_and_retest(leaky, request):
    table, _, rep = leaky
    if table in CROWDED:
        request.applymarker(pytest.mark.xfail(strict=True, reason=CROWDED_AFTER, raises=AssertionError))
    presence = {r["risk"]: r for r in rep.risks()}["presence"]
    assert presence["level"] == "high", table  # the release leaks
    after = presence["drop_retest"]
    assert after["level_after"] != "high", (table, after["text"])
    assert after["rows_dropped"] == len(_dropped(rep))
    assert str(after["rows_dropped"]) in after["text"]


def test_a_release_still_leaking_after_the_drop_says_which_test_still_alarms(leaky):
    """Where copies stay under review (the crowded tables), the level after the drop is what the
    release without the dropped rows reads, and the sentence names the test that still alarms."""
    table, _, rep = leaky
    after = {r["risk"]: r for r in rep.risks()}["presence"]["drop_retest"]
    if after["level_after"] == "high":
        assert "still alarming: near_copies" in after["text"], (table, after["text"])
    else:
        assert table not in CROWDED


def test_evaluating_the_release_without_the_dropped_rows_reads_the_levels_of_the_in_run_retest(
        leaky):
    table, data, rep = leaky
    keep = np.setdiff1d(np.arange(len(data["release"])), _dropped(rep))
    again = synthguard.evaluate(data["original"], data["release"].iloc[keep], control=data["control"],
                                metrics=PRESENCE, seed=0, retest_columns=0, retest_rows=0)
    in_run = rep.to_dict()["actions"]["drop_retest"]["rounds"][-1]["levels_after"]
    assert {r["risk"]: r["level"] for r in again.risks()} == in_run, table
    presence = {r["risk"]: r for r in rep.risks()}["presence"]["drop_retest"]
    fresh = {r["risk"]: r for r in again.risks()}["presence"]
    assert (presence["level_after"], presence["effect_after"]) == (fresh["level"], fresh["effect"])


def test_a_fresh_row_equal_to_a_training_record_in_a_crowd_is_reviewed_and_a_lone_copy_dropped():
    """Half the people share a dozen rows (``z`` missing): a fresh one equals a training record by
    chance, as often as it equals a control record; the copies of the others (``z`` unique) are
    dropped, the crowd's rows only reviewed."""
    rng = make_rng(0, "test-drop-crowd")

    def people(n: int) -> pd.DataFrame:
        crowd = rng.random(n) < 0.5
        return pd.DataFrame({"a": rng.integers(0, 2, n), "b": rng.integers(0, 2, n),
                             "c": rng.integers(0, 3, n),
                             "z": np.where(crowd, np.nan, rng.normal(size=n).round(6))})

    o, c, f = people(300), people(300), people(300)
    lone = o.index[o["z"].notna()][:30]
    release = pd.concat([f[f["z"].isna()], o.loc[lone]], ignore_index=True)
    rep = synthguard.evaluate(o, release, control=c, metrics=["exact_matches"], seed=0,
                              retest_columns=0, retest_rows=0)
    recs = rep.records()
    action = dict(zip(recs["release_row"].astype(int), recs["action"], strict=True))
    n_fresh = int(f["z"].isna().sum())
    assert [action.get(r) for r in range(n_fresh, len(release))] == ["drop"] * len(lone)
    fresh_named = [action[r] for r in range(n_fresh) if r in action]
    assert len(fresh_named) > 50 and set(fresh_named) == {"review"}


@pytest.mark.parametrize("table", ["anes96", "acs12"])
def test_the_drop_list_is_the_same_when_the_crowds_exceed_the_join_budget(table, shared_data,
                                                                           monkeypatch):
    """Over the block join's budget one process counts the copies' crowds and chance baselines by
    the backend's hash counts, as a cluster does: the same crowds, so the same rows dropped and
    reviewed, in the same order (acs12: crowded, where the strata decide the split)."""
    from synthguard.metrics.privacy import _copies

    data = _leaky_release(table, shared_data)

    def records() -> pd.DataFrame:
        rep = synthguard.evaluate(data["original"], data["release"], control=data["control"],
                                  metrics=["exact_matches", "near_copies"], seed=0,
                                  retest_columns=0, retest_rows=0)
        return rep.records()

    joined = records()
    asked = []
    real_backend_crowds = _copies.backend_crowds
    monkeypatch.setattr(_copies, "CROWD_BUDGET", 0)
    monkeypatch.setattr(_copies, "PAIR_BUDGET", 0)
    monkeypatch.setattr(_copies, "backend_crowds",
                        lambda *a, **k: asked.append(1) or real_backend_crowds(*a, **k))
    counted = records()
    assert asked  # the hash counts ran
    assert (joined["action"] == "drop").sum() >= 10
    pd.testing.assert_frame_equal(counted, joined)


def test_a_retest_stopped_by_rows_to_review_says_so_not_that_its_rounds_ran_out(shared_data):
    """acs12, three rounds allowed: after the first, the copies near_copies still names lie among
    records the control's copies crowd as often (rows to review), so no round drops them; the
    reason says that, with their number, and every one of them is in the export to review."""
    data = _leaky_release("acs12", shared_data)
    rep = synthguard.evaluate(data["original"], data["release"], control=data["control"],
                              metrics=PRESENCE, seed=0, retest_columns=0, retest_rows=3)
    after = {r["risk"]: r for r in rep.risks()}["presence"]["drop_retest"]
    assert after["rounds"] < 3 and after["level_after"] == "high", after["text"]
    why = after["why"]["near_copies"]
    assert "rounds ran out" not in why and "listed to review, not to drop" in why, why
    named = int(why.split("the ", 1)[1].split(" release row", 1)[0])
    recs = rep.records()
    review = recs[(recs["action"] == "review") & recs["tests"].str.contains("near_copies")]
    assert 0 < named <= len(review), (named, len(review))


def test_the_retests_verdict_is_read_for_levels_and_the_runs_verdict_in_full(shared_data, monkeypatch):
    """The run's report states every limit; its re-test's verdict (read for levels, effects and
    tests) measures limits only where they decide a level (``assess(levels_only=True)``)."""
    import synthguard.run.verdict as verdict_mod

    data = _leaky_release("diabetes_raw", shared_data)
    calls = []
    real = verdict_mod.assess

    def spy(*args, **kw):
        calls.append(bool(kw.get("levels_only", False)))
        return real(*args, **kw)

    monkeypatch.setattr(verdict_mod, "assess", spy)
    rep = synthguard.evaluate(data["original"], data["release"], control=data["control"],
                              metrics=PRESENCE, seed=0, retest_columns=0)
    assert calls == [False, True]
    presence = {r["risk"]: r for r in rep.risks()}["presence"]
    assert presence["level"] == "high" and presence["drop_retest"]["rows_dropped"] > 0
    assert rep.to_dict()["verdict"]["detection_limits"]


def test_a_report_whose_retests_read_levels_only_is_the_report_of_full_retest_verdicts(shared_data,
                                                                                       monkeypatch):
    """The re-tests' verdicts measure limits only where they decide a level; the report, its
    drop-and-retest and coarsen-and-retest entries included, is byte for byte the report whose
    re-tests decide full verdicts (a release whose re-test leaves some risks alarming and one not)."""
    import json

    import synthguard.run.verdict as verdict_mod

    data = _leaky_release("anes96", shared_data)
    metrics = ["exact_matches", "dcr", "close_neighbours", "linkability", "inference"]

    def normalised(rep) -> str:
        def norm(x):
            if isinstance(x, dict):
                return {k: norm(v) for k, v in x.items() if not (k == "seconds" or k.endswith("_seconds"))}
            return [norm(v) for v in x] if isinstance(x, list) else x
        return json.dumps(norm(rep.to_dict()), sort_keys=True, default=str)

    fast = synthguard.evaluate(data["original"], data["release"], control=data["control"], metrics=metrics,
                               seed=0)
    after = {r["risk"]: r["drop_retest"]["level_after"] for r in fast.risks() if r.get("drop_retest")}
    assert "high" in after.values() and set(after.values()) - {"high", "medium"}, after
    assert "coarsen_retest" in fast.to_dict()["actions"]  # decided on the re-test's verdict
    real = verdict_mod.assess
    monkeypatch.setattr(verdict_mod, "assess", lambda *a, **k: real(*a, **{**k, "levels_only": False}))
    full = synthguard.evaluate(data["original"], data["release"], control=data["control"], metrics=metrics,
                               seed=0)
    assert normalised(fast) == normalised(full)
