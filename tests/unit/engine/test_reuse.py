"""The drop-and-retest answers searches from the run it re-tests (synthguard.engine.reuse), with
the numbers a re-test that searches everything again gives, byte for byte."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import synthguard
import synthguard.engine.reuse as reuse
import synthguard.run.runner as runner
from synthguard.data.encoding import EncodedView
from synthguard.data.tables import prepare_tables
from synthguard.engine.backend import LocalBackend
from synthguard.engine.neighbors import gower
from synthguard.run.actions import _without_rows


def _frame(n: int, seed: int, cats: str = "abcd") -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x": rng.integers(0, 12, n).astype(float),  # coarse: many ties
                         "y": np.where(rng.random(n) < 0.05, np.nan, rng.normal(size=n).round(1)),
                         "g": rng.choice(list(cats), n)})


def _tables(release: pd.DataFrame, seed: int = 0):
    o, c = _frame(300, seed + 1), _frame(200, seed + 2)
    return prepare_tables(o, release, c).in_canonical_order()


def _metric(tables) -> object:
    view = EncodedView(tables)
    return gower(view.ranges(["g", "x", "y"], ("original",)), clip=True, normalise=True)


def _counted(monkeypatch) -> list:
    """Every re-test answer ``_reuse`` gives: (query, reference, reused?)."""
    seen: list = []
    real = reuse._reuse

    def spy(*args, **kwargs):
        got = real(*args, **kwargs)
        seen.append((args[3], args[4], got is not None))
        return got

    monkeypatch.setattr(reuse, "_reuse", spy)
    return seen


def _run_and_retest(release: pd.DataFrame, dropped: np.ndarray, ask):
    """``ask(backend)`` on the run's tables (searches kept), then on the tables without the
    ``dropped`` release rows twice: answered from the run's searches, and searched afresh."""
    tables = _tables(release)
    parent = EncodedView(tables)
    reuse.keep_searches(parent)
    ask(LocalBackend(tables, parent))
    mask = np.zeros(len(tables.synthetic), dtype=bool)
    mask[dropped] = True
    new, kept, _ = _without_rows(tables, mask)
    child = EncodedView(new)
    assert reuse.derive_searches(child, parent, kept)
    return ask(LocalBackend(new, child)), ask(LocalBackend(new, EncodedView(new)))


def _release_with_twins(n: int = 400) -> pd.DataFrame:
    base = _frame(n, 9)
    return pd.concat([base, base.iloc[:60]], ignore_index=True)  # 60 rows twice: tied neighbours


@pytest.mark.parametrize("k", [1, 2, 5])
def test_the_release_as_reference_reads_what_a_fresh_search_reads(monkeypatch, k):
    seen = _counted(monkeypatch)
    release = _release_with_twins()

    def ask(b):
        metric = _metric(b.tables)
        return [b.kneighbors(q, "synthetic", ["g", "x", "y"], metric, k) for q in ("original", "control")]

    dropped = np.random.default_rng(3).choice(len(release), 45, replace=False)
    got, fresh = _run_and_retest(release, dropped, ask)
    for (d1, i1), (d2, i2) in zip(got, fresh, strict=True):
        np.testing.assert_array_equal(d1, d2)
        np.testing.assert_array_equal(i1, i2)
    assert [s[2] for s in seen] == [True, True], seen  # answered from the run, not searched in full


def _kept_run(tables) -> tuple[EncodedView, object]:
    """A run's encoded view keeping its searches, and the run's distance."""
    parent = EncodedView(tables)
    reuse.keep_searches(parent)
    return parent, _metric(tables)


def test_the_release_as_reference_searches_again_only_the_queries_that_lost_a_neighbour():
    tables = _tables(_release_with_twins())
    parent, metric = _kept_run(tables)
    before = LocalBackend(tables, parent).kneighbors("original", "synthetic", ["g", "x", "y"], metric, 2)
    dropped = np.array([0, 7, 100])
    mask = np.zeros(len(tables.synthetic), dtype=bool)
    mask[dropped] = True
    new, kept, _ = _without_rows(tables, mask)
    child = EncodedView(new)
    reuse.derive_searches(child, parent, kept)
    asked: list[np.ndarray | None] = []

    def run(q_rows, r_rows):
        asked.append(q_rows)
        return LocalBackend(new, EncodedView(new)).kneighbors("original", "synthetic", ["g", "x", "y"],
                                                              metric, 2, query_rows=q_rows)

    reuse.search(child, "days", "original", "synthetic", ["g", "x", "y"], metric, 2, run)
    lost = np.flatnonzero(np.isin(before[1], dropped).any(axis=1))
    assert len(asked) == 1 and lost.size and np.array_equal(asked[0], lost)


def test_the_release_as_queries_reads_the_run_at_the_kept_rows(monkeypatch):
    seen = _counted(monkeypatch)
    release = _release_with_twins()

    def ask(b):
        metric = _metric(b.tables)
        return [b.kneighbors("synthetic", r, ["g", "x", "y"], metric, 2) for r in ("original", "control")] + \
            [b.kneighbors_seconds("synthetic", "original", ["g", "x", "y"], metric, 1)]

    got, fresh = _run_and_retest(release, np.arange(0, 400, 9), ask)
    for (d1, i1), (d2, i2) in zip(got, fresh, strict=True):
        np.testing.assert_array_equal(d1, d2)
        np.testing.assert_array_equal(i1, i2)
    assert all(s[2] for s in seen) and len(seen) == 3


def test_a_retest_answered_from_the_run_keeps_no_block_of_its_release():
    # the re-test checks its release rows against the run's a row block at a time: a search
    # answered from the run leaves no block of the whole release in the re-test's cache (at 10M
    # rows, a block per column set held to the end of the re-test)
    tables = _tables(_release_with_twins())
    parent, metric = _kept_run(tables)
    cols = ["g", "x", "y"]
    LocalBackend(tables, parent).kneighbors("synthetic", "original", cols, metric, 2)
    mask = np.zeros(len(tables.synthetic), dtype=bool)
    mask[np.arange(0, 400, 9)] = True
    new, kept, _ = _without_rows(tables, mask)
    child = EncodedView(new)
    assert reuse.derive_searches(child, parent, kept)
    got = LocalBackend(new, child).kneighbors("synthetic", "original", cols, metric, 2)
    fresh = LocalBackend(new, EncodedView(new)).kneighbors("synthetic", "original", cols, metric, 2)
    np.testing.assert_array_equal(got[0], fresh[0])
    np.testing.assert_array_equal(got[1], fresh[1])
    assert child.cached_block("synthetic", cols) is None  # checked, answered, not encoded whole
    assert child.cached_block("original", cols) is None


def test_the_real_rows_the_kept_release_rows_reach_are_those_a_fresh_search_finds(monkeypatch):
    """nearest_reached (dcr_overfitting's evidence): the kept release rows' nearest real rows and
    their ties from the run, the won rows and tied flags as a fresh search gives them; the release
    holds copies of real rows, so some of its rows have several real rows at their nearest."""
    seen = _counted(monkeypatch)
    release = _release_with_twins()
    o, c = _frame(300, 1), _frame(200, 2)
    release = pd.concat([release, o.iloc[:30], c.iloc[:20], o.iloc[:5]], ignore_index=True)

    def ask(b):
        return b.nearest_reached("synthetic", ("original", "control"), ["g", "x", "y"], _metric(b.tables))

    got, fresh = _run_and_retest(release, np.arange(0, len(release), 7), ask)
    for a, b in zip([*got[0], got[1]], [*fresh[0], fresh[1]], strict=True):
        np.testing.assert_array_equal(a, b)
    assert got[1].any() and seen == [("synthetic", "original+control", True)]


def test_a_search_answered_from_the_run_cannot_be_changed_in_place():
    release = _release_with_twins()
    got, _ = _run_and_retest(release, np.array([1, 2]), lambda b: b.kneighbors(
        "control", "original", ["g", "x", "y"], _metric(b.tables), 1))
    with pytest.raises(ValueError):
        got[0][0, 0] = 99.0


def test_an_encoding_that_moved_is_searched_in_full(monkeypatch):
    """The only release row holding category "z" is dropped: the control's own category "q" (learnt
    after the release's) takes another code, so nothing involving the control is reused; the
    answers still equal a fresh search."""
    seen = _counted(monkeypatch)
    release = _release_with_twins()
    release.loc[5, "g"] = "z"
    orig_control = _frame(200, 2)
    orig_control.loc[3, "g"] = "q"

    def build(rel):
        return prepare_tables(_frame(300, 1), rel, orig_control).in_canonical_order()

    tables = build(release)
    z = int(np.flatnonzero(tables.synthetic["g"].astype(str).to_numpy() == "z")[0])
    parent, metric = _kept_run(tables)
    roles = [("control", "synthetic"), ("original", "synthetic"), ("control", "original")]
    for q, r in roles:
        LocalBackend(tables, parent).kneighbors(q, r, ["g", "x", "y"], metric, 2)
    mask = np.zeros(len(tables.synthetic), dtype=bool)
    mask[z] = True
    new, kept, _ = _without_rows(tables, mask)
    child = EncodedView(new)
    reuse.derive_searches(child, parent, kept)
    for q, r in roles:
        a = LocalBackend(new, child).kneighbors(q, r, ["g", "x", "y"], metric, 2)
        b = LocalBackend(new, EncodedView(new)).kneighbors(q, r, ["g", "x", "y"], metric, 2)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
    assert {(s[0], s[1]): s[2] for s in seen} == {
        ("control", "synthetic"): False, ("original", "synthetic"): True, ("control", "original"): False}


def test_kept_rows_out_of_order_reuse_nothing_of_the_release_as_reference():
    tables = _tables(_release_with_twins())
    parent, metric = _kept_run(tables)
    LocalBackend(tables, parent).kneighbors("original", "synthetic", ["g", "x", "y"], metric, 1)
    child = EncodedView(tables)
    reuse.derive_searches(child, parent, np.arange(len(tables.synthetic))[::-1])
    ran: list[int] = []

    def run(q_rows, r_rows):
        ran.append(1)
        return np.zeros((1, 1)), np.zeros((1, 1), dtype=np.int64)

    reuse.search(child, "days", "original", "synthetic", ["g", "x", "y"], metric, 1, run)
    assert ran == [1]


def _rich_frame(n: int, seed: int) -> pd.DataFrame:
    """Rows rarely equal by chance (a copy of a training row stands out)."""
    r = np.random.default_rng(seed)
    return pd.DataFrame({"x": r.integers(0, 50, n).astype(float), "y": r.normal(size=n).round(3),
                         "g": r.choice(list("abcdefgh"), n), "h": r.choice(list("uvw"), n)})


def _with_copies(seed: int, frames: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``(original, release, control)``: 600 training and 400 control rows; a release of 50
    training rows copied, 40 with one cell changed and 510 fresh rows."""
    rng = np.random.default_rng(seed)
    o, c, fresh = _rich_frame(600, frames), _rich_frame(400, frames + 1), _rich_frame(600, frames + 2)
    near1 = o.iloc[rng.choice(600, 40, replace=False)].reset_index(drop=True)
    near1["y"] = near1["y"] + 1000.0  # one cell changed
    return o, pd.concat([o.iloc[rng.choice(600, 50, replace=False)], near1, fresh.iloc[90:]],
                        ignore_index=True), c


def _normalised(report) -> str:
    def norm(x):
        if isinstance(x, dict):
            return {k: norm(v) for k, v in x.items()
                    if not (k == "seconds" or k.endswith("_seconds") or k.startswith("elapsed"))}
        if isinstance(x, list):
            return [norm(v) for v in x]
        return x
    return json.dumps(norm(report.to_dict()), sort_keys=True, default=str)


def test_a_retest_from_the_runs_searches_writes_the_report_of_a_full_retest(monkeypatch):
    """A release of 8 % verbatim training rows: presence reads high, the copies are dropped and
    every test runs again; answered from the run's searches, the report is byte for byte the one
    a re-test searching everything again writes, and the re-test did reuse searches."""
    rng = np.random.default_rng(4)
    o, c, fresh = _rich_frame(600, 11), _rich_frame(400, 12), _rich_frame(600, 13)
    release = pd.concat([o.iloc[rng.choice(600, 50, replace=False)], fresh.iloc[50:]], ignore_index=True)
    metrics = ["exact_matches", "near_copies", "dcr", "nndr", "close_neighbours",
               "dcr_overfitting_protection", "membership_attacks"]
    seen = _counted(monkeypatch)
    with_reuse = synthguard.evaluate(o, release, control=c, metrics=metrics, seed=0, retest_columns=0)
    assert with_reuse.to_dict()["actions"]["drop_retest"]["rounds"]
    assert sum(s[2] for s in seen) >= 5, seen
    monkeypatch.setattr(runner, "keep_searches", lambda view: None)
    seen.clear()
    without = synthguard.evaluate(o, release, control=c, metrics=metrics, seed=0, retest_columns=0)
    assert not any(s[2] for s in seen)
    assert _normalised(with_reuse) == _normalised(without)


def test_real_rows_reaching_the_release_as_their_nearest_are_searched_again_not_renumbered(monkeypatch):
    """nearest_reached with the release as the only reference (a real query): its answer holds
    positions among the release's distinct rows and a tie count, not release positions, so a
    re-test must not renumber it; the won release rows and tied flags are a fresh search's."""
    seen = _counted(monkeypatch)
    release = _release_with_twins()
    o = _frame(300, 1)
    release = pd.concat([release, o.iloc[:30], o.iloc[:30]], ignore_index=True)  # copies: ties

    def ask(b):
        return b.nearest_reached("original", ("synthetic",), ["g", "x", "y"], _metric(b.tables))

    got, fresh = _run_and_retest(release, np.arange(0, len(release), 7), ask)
    for a, b in zip([*got[0], got[1]], [*fresh[0], fresh[1]], strict=True):
        np.testing.assert_array_equal(a, b)
    assert seen == [("original", "synthetic", False)]


def test_a_run_that_cannot_drop_and_retest_keeps_no_searches(monkeypatch):
    """Without a control table there is no drop-and-retest: the run's search answers are not
    kept for one (they would live as long as the run, for nothing)."""
    kept: list = []
    monkeypatch.setattr(runner, "keep_searches", lambda view: kept.append(view))
    o, s = _frame(200, 1), _frame(200, 2)
    synthguard.evaluate(o, s, metrics=["dcr", "nndr"], seed=0, retest_columns=0)
    assert kept == []
    synthguard.evaluate(o, s, control=_frame(150, 3), metrics=["dcr", "nndr"], seed=0, retest_columns=0)
    assert len(kept) == 1  # with a control the run keeps them (what the test above measures)


def test_the_run_stops_keeping_its_searches_once_its_drop_rounds_are_over(monkeypatch):
    """The coarsen-and-retest and the caller get the memory back: after the drop rounds no search
    of the run is kept (the views are held here, so only forgetting them empties the ledger)."""
    views: list = []
    real = reuse.keep_searches

    def keep(view):
        views.append(view)
        real(view)

    monkeypatch.setattr(runner, "keep_searches", keep)
    o, c = _rich_frame(400, 1), _rich_frame(300, 3)
    release = pd.concat([o.iloc[:40], _rich_frame(360, 2)], ignore_index=True)
    rep = synthguard.evaluate(o, release, control=c, metrics=["exact_matches", "dcr", "nndr"], seed=0,
                              retest_columns=0)
    assert rep.to_dict()["actions"]["drop_retest"]["rounds"] and len(views) == 1
    assert views[0] not in reuse._LEDGERS


def _query_rows_of(monkeypatch, module, name: str) -> list[int]:
    """The query rows of every call of ``module.name`` (a search taking the query block first),
    appended to the list returned as the calls happen."""
    searched: list[int] = []
    real = getattr(module, name)

    def counting(q, *args, **kwargs):
        searched.append(q.n_rows)
        return real(q, *args, **kwargs)

    monkeypatch.setattr(module, name, counting)
    return searched


def test_a_sample_of_the_release_as_queries_reads_the_rows_it_shares_with_the_runs_sample(monkeypatch):
    """A sampled run asks a seeded content sample of the release rows (``balanced_rows``); the
    re-test the same rule over the rows it keeps. The rows both samples hold are read from the
    run's search, only the others are searched, and every answer is a fresh search's."""
    import synthguard.engine.neighbors as neighbors

    seen = _counted(monkeypatch)
    searched = _query_rows_of(monkeypatch, neighbors, "kneighbors")
    release = _release_with_twins()

    def ask(b):
        rows = b.balanced_rows("synthetic", ["g", "x", "y"], 150, 7)
        searched.clear()
        metric = _metric(b.tables)
        got = [b.kneighbors("synthetic", "original", ["g", "x", "y"], metric, 2, query_rows=rows),
               b.kneighbors_seconds("synthetic", "control", ["g", "x", "y"], metric, 1, query_rows=rows)]
        return got, list(searched)

    (got, searched_retest), (fresh, searched_fresh) = _run_and_retest(release, np.arange(0, 400, 9), ask)
    for (d1, i1), (d2, i2) in zip(got, fresh, strict=True):
        assert d1.dtype == d2.dtype and i1.dtype == i2.dtype
        np.testing.assert_array_equal(d1, d2)
        np.testing.assert_array_equal(i1, i2)
    assert seen == [("synthetic", "original", True), ("synthetic", "control", True)]
    assert searched_fresh == [150, 150]
    # the dropped rows left the sample: the rows that came in instead are all that is searched
    assert len(searched_retest) == 2 and 0 < searched_retest[0] == searched_retest[1] < 20


def test_a_sampled_retest_from_the_runs_searches_writes_the_report_of_a_full_retest(monkeypatch):
    """As above with ``max_records`` below the release's size: the tests whose queries are
    release rows ask a sample of them, the re-test reads them from the run's searches, and the
    report is byte for byte the one a re-test searching everything again writes."""
    rng = np.random.default_rng(4)
    o, c, fresh = _rich_frame(600, 11), _rich_frame(400, 12), _rich_frame(600, 13)
    release = pd.concat([o.iloc[rng.choice(600, 50, replace=False)], fresh.iloc[50:]], ignore_index=True)
    metrics = ["exact_matches", "near_copies", "dcr", "nndr", "dcr_overfitting_protection", "linkability",
               "inference"]
    seen = _counted(monkeypatch)
    kw = dict(control=c, metrics=metrics, seed=0, retest_columns=0, max_records=300)
    with_reuse = synthguard.evaluate(o, release, **kw)
    assert with_reuse.to_dict()["actions"]["drop_retest"]["rounds"]
    assert with_reuse.to_dict()["sample"]["release_queries"]["rows"] == 300
    assert any(s[0] == "synthetic" and s[2] for s in seen), seen
    assert ("original+control", "synthetic", True) in seen, seen
    monkeypatch.setattr(runner, "keep_searches", lambda view: None)
    seen.clear()
    without = synthguard.evaluate(o, release, **kw)
    assert not any(s[2] for s in seen)
    assert _normalised(with_reuse) == _normalised(without)


@pytest.mark.parametrize("k", [1, 3])
def test_the_pooled_real_rows_among_the_distinct_release_rows_renumber_the_runs_answers(monkeypatch, k):
    """The trio's pooled search (every training and control row among the release's distinct
    rows, :meth:`LocalBackend.kneighbors_among`): a re-test renumbers the run's neighbours and
    searches again only the real rows that lost one; every answer is a fresh search's."""
    import synthguard.engine.neighbors.distinct as distinct

    seen = _counted(monkeypatch)
    searched = _query_rows_of(monkeypatch, distinct, "kneighbors_distinct")
    o = _frame(300, 1)
    release = pd.concat([_release_with_twins(), o.iloc[:40]], ignore_index=True)  # copies: lost nearest

    def ask(b):
        searched.clear()
        canon = b.distinct_order("synthetic", ["g", "x", "y"])
        got = b.kneighbors_among([("original", None), ("control", None)], "synthetic", canon,
                                 ["g", "x", "y"], _metric(b.tables), k)
        return got, list(searched)

    # rows of content no other release row has (a distinct row whose first row is dropped while
    # another stays moves: searched in full, as a test above shows for the release as reference)
    syn = _tables(release).synthetic[["g", "x", "y"]]
    alone = np.flatnonzero(~syn.duplicated(keep=False).to_numpy())
    (got, again), (fresh, full) = _run_and_retest(release, alone[::15], ask)
    np.testing.assert_array_equal(got[0], fresh[0])
    np.testing.assert_array_equal(got[1], fresh[1])
    assert seen == [("original+control", "synthetic", True)]
    assert len(again) == 1 and 0 < again[0] < full[0]  # only the rows that lost a neighbour


def test_a_distinct_release_row_whose_first_row_is_dropped_is_searched_in_full(monkeypatch):
    """Dropping the first of two equal release rows moves that distinct row to the second one's
    position: the trio's pooled search is not renumbered but searched again in full, with a fresh
    search's answers."""
    seen = _counted(monkeypatch)
    release = _release_with_twins()

    def ask(b):
        canon = b.distinct_order("synthetic", ["g", "x", "y"])
        return b.kneighbors_among([("original", None), ("control", None)], "synthetic", canon,
                                  ["g", "x", "y"], _metric(b.tables), 2)

    syn = _tables(release).synthetic[["g", "x", "y"]]
    firsts = np.flatnonzero(syn.duplicated(keep=False).to_numpy() & ~syn.duplicated().to_numpy())
    got, fresh = _run_and_retest(release, firsts[:5], ask)
    np.testing.assert_array_equal(got[0], fresh[0])
    np.testing.assert_array_equal(got[1], fresh[1])
    assert seen == [("original+control", "synthetic", False)]


def test_searches_of_blocks_the_caller_holds_read_the_runs_answers(monkeypatch):
    """membership_attacks' searches of rows it holds: its scored records against its reference
    sample (both held: the run's answer read whole) and release rows against that reference (the
    rows the re-test shares with the run's are read, only the others searched). Every answer is a
    fresh search's, ties included."""
    import synthguard.engine.neighbors as neighbors

    seen = _counted(monkeypatch)
    searched = _query_rows_of(monkeypatch, neighbors, "kneighbors")
    release = _release_with_twins()
    cols = ["g", "x", "y"]

    def ask(b):
        metric = _metric(b.tables)
        query = b.encoded_rows("original", cols, np.arange(0, 300, 2))
        reference = b.encoded_rows("control", cols, np.arange(200))
        n_rel = b.n_rows("synthetic")
        # the same 120 release rows of the run whichever rows were dropped before them
        rows = np.arange(n_rel - 120, n_rel)
        searched.clear()
        got = [b.kneighbors_held(query, reference, metric, 3),
               b.kneighbors_rows_held("synthetic", cols, rows, reference, metric, 3)]
        return got, list(searched)

    dropped = np.arange(0, 300, 7)
    (got, searched_retest), (fresh, searched_fresh) = _run_and_retest(release, dropped, ask)
    for (d1, i1), (d2, i2) in zip(got, fresh, strict=True):
        assert d1.dtype == d2.dtype and i1.dtype == i2.dtype
        np.testing.assert_array_equal(d1, d2)
        np.testing.assert_array_equal(i1, i2)
    assert [s[2] for s in seen] == [True, True]
    assert searched_fresh == [150, 120]
    assert searched_retest == []  # every row the re-test asked was the run's


def test_release_rows_a_retest_asks_beyond_the_runs_are_searched_against_the_held_reference(monkeypatch):
    """Release rows the run did not ask (here: the re-test asks more rows) are searched, the
    others read; the answers are a fresh search's."""
    import synthguard.engine.neighbors as neighbors

    searched = _query_rows_of(monkeypatch, neighbors, "kneighbors")
    release = _release_with_twins()
    cols = ["g", "x", "y"]
    state = {"n": 80}

    def ask(b):
        metric = _metric(b.tables)
        reference = b.encoded_rows("control", cols, np.arange(0, 200, 3))
        n_rel = b.n_rows("synthetic")
        rows = np.arange(n_rel - state["n"], n_rel)
        state["n"] = 130  # the re-tests ask 50 rows more (the run's last 80 among them)
        searched.clear()
        return b.kneighbors_rows_held("synthetic", cols, rows, reference, metric, 2), list(searched)

    ((d1, i1), searched_retest), ((d2, i2), _) = _run_and_retest(release, np.arange(0, 300, 5), ask)
    np.testing.assert_array_equal(d1, d2)
    np.testing.assert_array_equal(i1, i2)
    assert searched_retest == [50]


@pytest.mark.parametrize("k_run,k_retest", [(4, 2), (3, 1)])
def test_a_retest_asking_fewer_neighbours_reads_the_first_columns_of_the_runs_search(monkeypatch, k_run,
                                                                                      k_retest):
    """membership_attacks asks the release for k x release rows / reference rows neighbours, so
    a re-test of a smaller release asks fewer than the run did: the first k columns of the
    run's wider search are the k nearest (ties to the lower row either way). The release as
    reference (renumbered), as queries, and rows the caller holds: every answer a fresh search's,
    and each read from the run's."""
    seen = _counted(monkeypatch)
    release = _release_with_twins()
    cols = ["g", "x", "y"]
    state = {"k": k_run}

    def ask(b):
        metric = _metric(b.tables)
        k = state["k"]
        held = b.encoded_rows("original", cols, np.arange(0, 300, 3))
        reference = b.encoded_rows("control", cols, np.arange(150))
        got = [b.kneighbors("original", "synthetic", cols, metric, k),
               b.kneighbors("synthetic", "control", cols, metric, k),
               b.kneighbors_block(held, "synthetic", cols, metric, k),
               b.kneighbors_held(held, reference, metric, k)]
        state["k"] = k_retest
        return got

    got, fresh = _run_and_retest(release, np.arange(0, 400, 11), ask)
    for (d1, i1), (d2, i2) in zip(got, fresh, strict=True):
        assert d1.shape == d2.shape == (d2.shape[0], k_retest)
        assert d1.dtype == d2.dtype and i1.dtype == i2.dtype
        np.testing.assert_array_equal(d1, d2)
        np.testing.assert_array_equal(i1, i2)
    assert [s[2] for s in seen] == [True] * 4, seen


def test_the_pooled_real_rows_nearest_other_row_reads_the_runs_search(monkeypatch):
    """close_neighbours' nearest other real record (one search of training and control pooled):
    a re-test that dropped release rows only reads the run's answer, the one a fresh search gives."""
    seen = _counted(monkeypatch)
    got, fresh = _run_and_retest(_release_with_twins(), np.arange(0, 400, 5),
                                 lambda b: b.nearest_other(("original", "control"), ["g", "x", "y"],
                                                           _metric(b.tables)))
    np.testing.assert_array_equal(got, fresh)
    assert seen == [("original+control", "original+control", True)]


def test_a_held_block_against_the_pooled_real_rows_reads_the_runs_search(monkeypatch):
    """The membership attacks' density of the other real records (their scored records against
    training and control pooled): a re-test reads the run's answer, the one a fresh search gives."""
    seen = _counted(monkeypatch)
    cols = ["g", "x", "y"]

    def ask(b):
        held = b.encoded_rows("original", cols, np.arange(0, 300, 4))
        return b.kneighbors_block_pooled(held, ("original", "control"), cols, _metric(b.tables), 6)

    got, fresh = _run_and_retest(_release_with_twins(), np.arange(0, 400, 5), ask)
    for a, b in zip(got, fresh, strict=True):
        np.testing.assert_array_equal(a, b)
    assert [s[1:] for s in seen] == [("original+control", True)]


def test_a_query_holding_k_of_the_runs_wider_nearest_is_not_searched_again():
    """The run searched the k' = 4 nearest release rows, the re-test asks k = 2 (membership's
    release search asks fewer of a smaller release): a query that lost one of its first 2 but
    still holds 2 of its 4 reads them (the first 2 kept, in the run's order), and only the
    queries holding fewer are searched again; every answer is a fresh search's."""
    tables = _tables(_release_with_twins())
    parent, metric = _kept_run(tables)
    cols = ["g", "x", "y"]
    before = LocalBackend(tables, parent).kneighbors("original", "synthetic", cols, metric, 4)
    dropped = np.unique(before[1][::3, 0])  # the nearest release row of every third query
    mask = np.zeros(len(tables.synthetic), dtype=bool)
    mask[dropped] = True
    new, kept, _ = _without_rows(tables, mask)
    child = EncodedView(new)
    reuse.derive_searches(child, parent, kept)
    fresh = LocalBackend(new, EncodedView(new))
    asked: list[np.ndarray] = []

    def run(q_rows, r_rows):
        asked.append(q_rows)
        return fresh.kneighbors("original", "synthetic", cols, metric, 2, query_rows=q_rows)

    got = reuse.search(child, "days", "original", "synthetic", cols, metric, 2, run)
    want = fresh.kneighbors("original", "synthetic", cols, metric, 2)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    gone = np.isin(before[1], dropped)
    lost_first = np.flatnonzero(gone[:, :2].any(axis=1))
    holding_fewer = np.flatnonzero((~gone).sum(axis=1) < 2)
    assert lost_first.size > holding_fewer.size  # some queries lost a neighbour yet hold 2 of 4
    assert len(asked) == (1 if holding_fewer.size else 0)
    if asked:
        np.testing.assert_array_equal(asked[0], holding_fewer)


def test_the_pooled_real_rows_holding_k_of_the_runs_wider_nearest_among_the_release_read_them(
        monkeypatch):
    """The trio's pooled search among the release's distinct rows, asked with fewer neighbours
    than the run searched: the real rows that lost one of their k nearest but hold k of the
    run's k' read them, the others are searched again; every answer is a fresh search's."""
    import synthguard.engine.neighbors.distinct as distinct

    seen = _counted(monkeypatch)
    searched = _query_rows_of(monkeypatch, distinct, "kneighbors_distinct")
    o = _frame(300, 1)
    release = pd.concat([_release_with_twins(), o.iloc[:40]], ignore_index=True)
    state = {"k": 5}

    def ask(b):
        searched.clear()
        canon = b.distinct_order("synthetic", ["g", "x", "y"])
        got = b.kneighbors_among([("original", None), ("control", None)], "synthetic", canon,
                                 ["g", "x", "y"], _metric(b.tables), state["k"])
        return got, list(searched)

    syn = _tables(release).synthetic[["g", "x", "y"]]
    alone = np.flatnonzero(~syn.duplicated(keep=False).to_numpy())
    tables = _tables(release)
    parent = EncodedView(tables)
    reuse.keep_searches(parent)
    (_, wide), _ = ask(LocalBackend(tables, parent))
    mask = np.zeros(len(tables.synthetic), dtype=bool)
    mask[alone[::4]] = True
    new, kept, _ = _without_rows(tables, mask)
    child = EncodedView(new)
    assert reuse.derive_searches(child, parent, kept)
    state["k"] = 2
    (got, again) = ask(LocalBackend(new, child))
    (fresh, _) = ask(LocalBackend(new, EncodedView(new)))
    np.testing.assert_array_equal(got[0], fresh[0])
    np.testing.assert_array_equal(got[1], fresh[1])
    assert seen == [("original+control", "synthetic", True)]
    # the run's reference positions of the dropped distinct rows
    canon = LocalBackend(tables, EncodedView(tables)).distinct_order("synthetic", ["g", "x", "y"])
    gone = np.isin(wide, np.flatnonzero(np.isin(canon, alone[::4])))
    lost_first = int(gone[:, :2].any(axis=1).sum())
    holding_fewer = int(((~gone) & (wide >= 0)).sum(axis=1).__lt__(2).sum())
    assert lost_first > holding_fewer
    assert sum(again) <= holding_fewer  # distinct query rows are searched once
    assert holding_fewer == 0 or len(again) == 1


def test_a_search_asked_twice_in_a_retest_is_answered_once(monkeypatch):
    """Two tests of a re-test that ask the same search (linkability and inference ask the pooled
    real rows among the release on the same columns) read the first answer: the run's answers
    renumbered and the lost queries searched again once, not twice; the answer a fresh search's."""
    tables = _tables(_release_with_twins())
    parent, metric = _kept_run(tables)
    cols = ["g", "x", "y"]
    before = LocalBackend(tables, parent).kneighbors("original", "synthetic", cols, metric, 2)
    mask = np.zeros(len(tables.synthetic), dtype=bool)
    mask[np.unique(before[1][::4, 0])] = True
    new, kept, _ = _without_rows(tables, mask)
    child = EncodedView(new)
    reuse.derive_searches(child, parent, kept)
    fresh = LocalBackend(new, EncodedView(new))
    asked: list[np.ndarray] = []

    def run_k(k):
        def run(q_rows, r_rows):
            asked.append(q_rows)
            return fresh.kneighbors("original", "synthetic", cols, metric, k, query_rows=q_rows)
        return run

    first = reuse.search(child, "days", "original", "synthetic", cols, metric, 2, run_k(2))
    second = reuse.search(child, "days", "original", "synthetic", cols, metric, 2, run_k(2))
    want = fresh.kneighbors("original", "synthetic", cols, metric, 2)
    for got in (first, second):
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    assert len(asked) == 1 and asked[0].size
    # another k is another search
    reuse.search(child, "days", "original", "synthetic", cols, metric, 1, run_k(1))
    assert len(asked) == 2


def _with_and_without_reuse(monkeypatch, metrics: list[str], seeds: tuple[int, int, int, int],
                            copied: int, between):
    """Two evaluations of one release (``copied`` training rows, then fresh ones; control rows
    beside): with the re-test reading the run's results, then with it computing everything again;
    ``between()`` is called between the two (its return is handed back). Returns
    ``(report with reuse, between's return, report without)``; the first has a drop round."""
    rng = np.random.default_rng(seeds[0])
    o, c, fresh = _rich_frame(600, seeds[1]), _rich_frame(400, seeds[2]), _rich_frame(600, seeds[3])
    release = pd.concat([o.iloc[rng.choice(600, copied, replace=False)], fresh.iloc[copied:]],
                        ignore_index=True)
    with_reuse = synthguard.evaluate(o, release, control=c, metrics=metrics, seed=0, retest_columns=0)
    assert with_reuse.to_dict()["actions"]["drop_retest"]["rounds"]
    got = between()
    monkeypatch.setattr(runner, "keep_searches", lambda view: None)
    without = synthguard.evaluate(o, release, control=c, metrics=metrics, seed=0, retest_columns=0)
    return with_reuse, got, without


def test_a_retest_reads_the_runs_results_of_the_real_rows_and_writes_the_report_of_a_full_retest(
        monkeypatch):
    """The leak rows, their responses, the real records' identifiability and the control's chance
    crowds read no release row: a re-test reads the run's (each computed once, by the run), and
    the report is byte for byte the one of a re-test computing them again."""
    import synthguard.metrics._leakrows as leakrows
    import synthguard.metrics.privacy._copies as copies
    import synthguard.metrics.privacy.near_copies as near

    calls: dict[str, int] = {}

    def counted(module, name):
        real = getattr(module, name)

        def spy(*args, **kwargs):
            calls[name] = calls.get(name, 0) + 1
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, spy)

    for module, name in ((leakrows, "_build"), (leakrows, "leak_block"), (copies, "chance_crowds"),
                         (near, "identifiable_share")):
        counted(module, name)
    def between():
        once = dict(calls)
        calls.clear()
        return once

    with_reuse, once, without = _with_and_without_reuse(
        monkeypatch, ["exact_matches", "near_copies", "near_copies_2"], (4, 11, 12, 13), 50, between)
    assert once["_build"] == 1 and set(once) == {"_build", "leak_block", "chance_crowds",
                                                 "identifiable_share"}, once
    assert calls == {k: 2 * v for k, v in once.items()}  # the re-test computes them again
    assert _normalised(with_reuse) == _normalised(without)


def test_the_check_of_the_kept_rows_reads_the_runs_codes_and_each_column_once(monkeypatch):
    """A re-test checks that its blocks are the run's at the kept rows a column at a time, each
    column once whatever blocks hold it, the run's categorical codes read from the factorisation
    its encoder keeps (no value of the run's release looked up again: at 10M release rows the
    check encoded the run's rows of every block again); a moved category still says changed."""
    from synthguard.data.encoding import Encoder

    release = _release_with_twins()
    release.loc[5, "g"] = "z"  # the only "z": its row dropped, the control's "q" takes another code
    control = _frame(200, 2)
    control.loc[3, "g"] = "q"
    tables = prepare_tables(_frame(300, 1), release, control).in_canonical_order()
    parent = EncodedView(tables)
    reuse.keep_searches(parent)
    mask = np.zeros(len(tables.synthetic), dtype=bool)
    mask[int(np.flatnonzero(tables.synthetic["g"].astype(str).to_numpy() == "z")[0])] = True
    mask[::7] = True
    new, kept, _ = _without_rows(tables, mask)
    child = EncodedView(new)
    assert reuse.derive_searches(child, parent, kept)
    d = reuse._DERIVED[child]
    looked_up: list = []
    encoded: list = []
    real_factorize, real_encode = Encoder._factorize, EncodedView.encode

    def factorize(self, series):
        looked_up.append(series.name)
        return real_factorize(self, series)

    def encode(self, frame, columns=None, **kw):
        encoded.append(tuple(columns))
        return real_encode(self, frame, columns, **kw)

    monkeypatch.setattr(Encoder, "_factorize", factorize)
    monkeypatch.setattr(EncodedView, "encode", encode)
    assert reuse._unchanged(d, child, "synthetic", ("g", "x", "y"), False)
    assert reuse._unchanged(d, child, "synthetic", ("x", "y"), True)
    assert reuse._unchanged(d, child, "original", ("g", "x"), False)
    assert not reuse._unchanged(d, child, "control", ("g", "x"), False)  # "q" moved
    assert reuse._unchanged(d, child, "control", ("x",), False)
    assert looked_up == []  # every categorical code read from the kept factorisations
    # each numeric column once per role and side (the parent's and the child's): not per block
    assert sorted(encoded) == sorted([("x",), ("x",), ("y",), ("y",)] * 1 + [("x",), ("x",)] * 2)


def test_a_retest_reads_the_runs_near_copy_pairs_of_the_kept_rows_and_writes_the_report_of_a_full_retest(
        monkeypatch):
    """A release row's near-copy pair (the one real record within k cells of it) is its own: a
    re-test reads the run's pairs of the rows it keeps (the near-copy join computed once per k, by
    the run), and the report is byte for byte the one of a re-test joining its release again; the
    pairs read equal a fresh join of the kept rows."""
    import synthguard.metrics.privacy.near_copies as near

    calls: list[int] = []
    got: list = []
    real = near.identifying_matches

    def spy(real_codes, rel, k, **kwargs):
        calls.append(k)
        return real(real_codes, rel, k, **kwargs)

    monkeypatch.setattr(near, "identifying_matches", spy)
    memo = reuse.release_pairs_memo

    def seen(view, key, compute, columns):
        out = memo(view, key, compute, columns)
        if key[0] == "near-copy-matches":  # (the copy tests' crowds are kept alike)
            got.append((view, key, out))
        return out

    monkeypatch.setattr(reuse, "release_pairs_memo", seen)
    o, release, c = _with_copies(4, 11)
    metrics = ["exact_matches", "near_copies", "near_copies_2"]
    with_reuse = synthguard.evaluate(o, release, control=c, metrics=metrics, seed=0, retest_columns=0)
    assert with_reuse.to_dict()["actions"]["drop_retest"]["rounds"]
    assert sorted(calls) == [1, 2]  # by the run only
    from synthguard.metrics.privacy._copies import _code_matrices
    from synthguard.registry import Context

    run_view = got[0][0]
    assert any(out[0].size for v, _, out in got if v is run_view)  # the run's pairs: some
    retest = [(v, key, out) for v, key, out in got if v is not run_view]
    assert sorted(key[2] for _, key, _ in retest) == [1, 2]
    for view, key, out in retest:  # the pairs read equal a fresh join of the kept rows
        ctx = Context(tables=view.tables, encoded=EncodedView(view.tables))
        fresh_pairs = real(*_code_matrices(ctx, list(key[1])), key[2])
        assert all(np.array_equal(a, b) for a, b in zip(out, fresh_pairs, strict=True))
    # read-only, the run's and the re-tests' alike: no reader can change what the next one reads
    assert all(not a.flags.writeable for _, _, out in got for a in out)
    monkeypatch.setattr(runner, "keep_searches", lambda view: None)
    calls.clear()
    without = synthguard.evaluate(o, release, control=c, metrics=metrics, seed=0, retest_columns=0)
    assert sorted(calls) == [1, 1, 2, 2]  # the re-test joins its release again
    assert _normalised(with_reuse) == _normalised(without)


def test_a_retest_reads_the_runs_crowds_of_the_kept_copies_and_writes_the_report_of_a_full_retest(
        monkeypatch):
    """A release row's crowd (the real records within k cells of it) is its own: a re-test reads
    the run's crowds of the copies it keeps and counts none again (the kept copies are the run's),
    the crowds read equal fresh counts, and the report is the one of a re-test counting them."""
    import synthguard.metrics.privacy._copies as copies

    counted: list[int] = []
    count = copies._crowds

    def spy(ctx, cols, k, rows):
        counted.append(k)
        return count(ctx, cols, k, rows)

    monkeypatch.setattr(copies, "_crowds", spy)
    o, release, c = _with_copies(5, 21)
    metrics = ["exact_matches", "near_copies"]
    with_reuse = synthguard.evaluate(o, release, control=c, metrics=metrics, seed=0, retest_columns=0)
    rounds = with_reuse.to_dict()["actions"]["drop_retest"]["rounds"]
    assert rounds and 0 < rounds[0]["rows_dropped"] < 90  # some copies kept: crowds to read
    assert sorted(counted) == [1, 2]  # the exact copies' crowds (k = 1) and the one-cell copies' (k = 2)
    memo = reuse.release_pairs_memo
    read: list = []

    def seen(view, key, compute, columns):
        out = memo(view, key, compute, columns)
        if key[0] == "copy-crowd" and reuse._DERIVED.get(view) is not None:
            read.append((view, key, out))
        return out

    monkeypatch.setattr(reuse, "release_pairs_memo", seen)
    again = synthguard.evaluate(o, release, control=c, metrics=metrics, seed=0, retest_columns=0)
    # by the run alone: the re-test keeps no exact copy and reads its one-cell copies' crowds
    assert sorted(counted) == [1, 1, 2, 2] and [key[2] for _, key, _ in read] == [2]
    from synthguard.metrics.privacy._copies import _code_matrices
    from synthguard.registry import Context

    for view, key, (rows, crowds) in read:  # the crowds read equal fresh counts of those rows
        real, rel = _code_matrices(Context(tables=view.tables, encoded=EncodedView(view.tables)),
                                   list(key[1]))
        assert rows.size and np.array_equal(crowds, copies.crowd_counts(real, rel[rows], key[2]))
    monkeypatch.setattr(runner, "keep_searches", lambda view: None)
    counted.clear()
    without = synthguard.evaluate(o, release, control=c, metrics=metrics, seed=0, retest_columns=0)
    assert sorted(counted) == [1, 2, 2]  # the re-test counts the kept copies' crowds again
    assert _normalised(with_reuse) == _normalised(again) == _normalised(without)


def test_the_records_the_release_matches_are_the_runs_counts_less_the_dropped_rows(monkeypatch):
    """``new_row_synthesis``' evidence (every training and control record against the whole
    release, within a tolerance): a re-test takes the run's per-record counts and joins only the
    dropped release rows against the records they had (not its whole release again); the records
    matched are those of a fresh join of the kept rows, copies dropped and kept alike."""
    import synthguard.engine.backend as backend

    sizes: list[tuple[int, int]] = []
    real = backend.match_counts

    def spy(rn, rc, qn, qc, tol, **kwargs):
        sizes.append((rn.shape[0], qn.shape[0]))
        return real(rn, rc, qn, qc, tol, **kwargs)

    monkeypatch.setattr(backend, "match_counts", spy)
    tables0 = _tables(_frame(10, 0))  # the training and control rows of _tables, for copies
    o = tables0.original
    release = pd.concat([_frame(300, 9), o.iloc[:40], o.iloc[:10], o.iloc[40:60].assign(y=o["y"].iloc[40:60] + 0.01)],
                        ignore_index=True)
    cols = ["g", "x", "y"]

    def ask(b):
        tol = 0.05 * b.ranges(cols, ("original", "control"))
        return [b.rows_matched(q, "synthetic", cols, tol) for q in ("original", "control")]

    rng = np.random.default_rng(5)
    dropped = rng.choice(len(release), 60, replace=False)
    got, fresh = _run_and_retest(release, dropped, ask)
    for a, b in zip(got, fresh, strict=True):
        np.testing.assert_array_equal(a, b)
    assert any(a.any() for a in got) and not all(a.all() for a in got)
    n_rel = len(release)
    assert [s for s in sizes if s[0] == n_rel] == [(n_rel, len(o)), (n_rel, 200)]  # the run's joins
    assert [s[0] for s in sizes if s[0] == 60] == [60, 60]  # the re-test's: the dropped rows only
    # a re-test of the same view without a run behind it joins its whole release
    assert all(s[0] in (n_rel, 60, n_rel - 60) for s in sizes)


def test_a_retest_reads_the_runs_canonical_orders_of_the_real_rows_and_writes_the_report_of_a_full_retest(
        monkeypatch):
    """The anonymeter trio's distinct-row orders of the training and control rows read no release
    row: a re-test reads the run's (the release's own is computed again), and the report is byte
    for byte the one of a re-test computing them again."""
    from synthguard.engine.backend import LocalBackend

    asked: list[str] = []
    real = LocalBackend.distinct_order

    def spy(self, role, columns):
        asked.append(role)
        return real(self, role, columns)

    monkeypatch.setattr(LocalBackend, "distinct_order", spy)
    def between():
        once = {r: asked.count(r) for r in ("original", "control", "synthetic")}
        asked.clear()
        return once

    with_reuse, once, without = _with_and_without_reuse(
        monkeypatch, ["exact_matches", "singling_out_univariate", "linkability"], (5, 21, 22, 23), 60,
        between)
    assert once["original"] == once["control"] >= 1, once  # one per column order asked
    # the re-test computes them again; the release's are computed in both rounds either way
    assert {r: asked.count(r) for r in once} == {"original": 2 * once["original"],
                                                 "control": 2 * once["control"],
                                                 "synthetic": once["synthetic"]}
    assert _normalised(with_reuse) == _normalised(without)


@pytest.mark.parametrize("kept", [True, False])
def test_a_retests_singling_out_search_starts_from_the_runs_partners(monkeypatch, kept):
    """The multivariate singling-out search of a drop-and-retest takes its partners from the
    run's (the kept rows renumbered, their masks compared again on the re-test's values and
    medians: no sort of the release for partners), and the report is byte for byte the one of a
    re-test building them again. Partners past the run's memory bound for what it keeps
    (``kept=False``: a bound of 0 bytes) are not kept, and the re-test builds its own."""
    import synthguard.metrics.anonymeter.singling_out as S

    monkeypatch.setattr(S, "PARTNERS_MIN_LEFT", 0)  # partners for a search of a few thousand attempts
    if not kept:
        monkeypatch.setattr(reuse, "STRUCTURE_BYTES", 0)
    built: list[tuple] = []

    def logged(name: str):
        real = getattr(S, name)
        return lambda *a: (built.append((name,)), real(*a))[1]

    for name in ("release_partners", "partners_of"):
        monkeypatch.setattr(S, name, logged(name))
    with_reuse, run_and_retest, without = _with_and_without_reuse(
        monkeypatch, ["exact_matches", "singling_out_multivariate"], (4, 11, 12, 13), 50,
        lambda: list(built))
    assert _normalised(with_reuse) == _normalised(without)
    if not kept:  # the re-test builds its partners again
        assert run_and_retest == [("release_partners",)] * 2, run_and_retest
        return
    assert run_and_retest == [("release_partners",), ("partners_of",)], run_and_retest
    assert built[len(run_and_retest):] == [("release_partners",)] * 2  # without reuse: built twice


def test_a_retests_release_column_index_starts_from_the_runs_column_orders(monkeypatch):
    """The singling-out searches' column index of the whole release: a drop-and-retest reads its
    run's column orders without the dropped rows (checked, not sorted again) and the report is
    byte for byte the one of a re-test sorting every column again."""
    import synthguard.engine.queries as queries

    built: list[tuple[bool, int]] = []  # per index: given candidate orders?, columns sorted
    sorts = [0]
    real, real_sort = queries.ColumnIndex.__init__, queries.stable_order

    def sort(a):
        sorts[0] += 1
        return real_sort(a)

    def spy(self, X, orders=None):
        before = sorts[0]
        real(self, X, orders=orders)
        built.append((orders is not None, sorts[0] - before))

    monkeypatch.setattr(queries, "stable_order", sort)
    monkeypatch.setattr(queries.ColumnIndex, "__init__", spy)
    with_reuse, seen, without = _with_and_without_reuse(
        monkeypatch, ["exact_matches", "singling_out_multivariate"], (4, 11, 12, 13), 50,
        lambda: list(built))
    assert _normalised(with_reuse) == _normalised(without)
    # the re-test's release index: its run's orders, no column sorted again
    assert [b for b in seen if b[0]] == [(True, 0)], seen
    assert not any(given for given, _ in built[len(seen):])  # without the run's: every index sorts


def test_a_retests_search_of_its_release_reads_the_runs_tree_without_the_dropped_rows(monkeypatch):
    """The run keeps the trees of its whole release its searches read; a drop-and-retest's search
    of its release (the real records' nearest release rows, queries that lost a neighbour) reads
    them without the dropped rows instead of building a tree of its release, and the report is
    byte for byte the one of a re-test building every tree again."""
    from synthguard.engine.neighbors import engine

    monkeypatch.setattr(engine, "_SPARE", [])
    built: list[int] = []
    real = engine._build_tree
    monkeypatch.setattr(engine, "_build_tree", lambda r, *a, **kw: built.append(r.n_rows) or real(r, *a, **kw))
    def between() -> list[int]:
        engine._SPARE.clear()  # the second evaluation's trees are its own
        return list(built)

    with_reuse, run_built, without = _with_and_without_reuse(
        monkeypatch, ["exact_matches", "close_neighbours", "dcr"], (4, 11, 12, 13), 50, between)
    assert _normalised(with_reuse) == _normalised(without)
    n_release = 600
    dropped = with_reuse.to_dict()["actions"]["drop_retest"]["rows_dropped"]
    assert dropped > 0
    assert n_release in run_built and n_release - dropped not in run_built, run_built
    # a re-test without the run's searches builds its release's tree
    assert n_release - dropped in built[len(run_built):]


def test_no_tree_of_a_runs_rows_outlives_the_run():
    """The spare trees (copies of the run's encoded rows) are dropped when the evaluation ends."""
    from synthguard.engine.neighbors import engine

    o, c, fresh = _rich_frame(300, 1), _rich_frame(200, 2), _rich_frame(300, 3)
    release = pd.concat([o.iloc[:30], fresh.iloc[30:]], ignore_index=True)
    synthguard.evaluate(o, release, control=c, metrics=["exact_matches", "close_neighbours", "dcr"], seed=0)
    assert not engine._SPARE
