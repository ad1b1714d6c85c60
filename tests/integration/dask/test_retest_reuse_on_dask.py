"""A drop-and-retest on a cluster reads what cannot have changed from the run it re-tests
(:mod:`synthguard.engine.reuse`, issue #31): the near-copy pairs of the release rows it keeps
and the results of the training and control records alone, with the same report as when it asks
the cluster again; and asks again where the tables say a column is coded otherwise.

Every test here runs in both venvs (pandas 2 and 3): the re-test's tables are retyped and hashed
on the workers, which the pandas version reaches."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from synthguard import evaluate

from ...helpers import without_seconds

pytest.importorskip("dask.dataframe", reason="dask is not installed: pip install 'synthguard[dask]'")
pytest.importorskip("distributed", reason="distributed is not installed: pip install 'synthguard[dask]'")

METRICS = ["near_copies", "near_copies_2", "exact_matches"]


def _table(n: int, rng: np.random.Generator) -> pd.DataFrame:
    return pd.DataFrame({"a": rng.normal(size=n).round(2), "b": rng.normal(size=n).round(2),
                         "c": rng.choice(list("pqrs"), n), "d": rng.integers(0, 60, n)})


def _tables(new_label: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """300 training and 300 control records; a release of 300 fresh rows and 40 training rows
    with one cell changed (``b`` moved far; with ``new_label``, ``c`` set to a label no other row
    holds), so that the near-copy tests alarm and the advice drops those rows."""
    rng = np.random.default_rng(3)
    original, control = _table(300, rng), _table(300, rng)
    control.loc[:9, "c"] = "t"  # a label of the control table alone: coded after the release's
    near = original.iloc[:40].copy()
    if new_label is None:
        near["b"] = near["b"] + 50.0
    else:
        near["c"] = new_label
    return original, pd.concat([_table(300, rng), near], ignore_index=True), control


def _dumps(value) -> str:
    return json.dumps(without_seconds(value), sort_keys=True, default=str)


def _counting(monkeypatch) -> list[str]:
    """Counts the release's near-copy joins, the copies' crowds and the real records' chance
    crowds asked of the cluster (the near-copy tests' pairs and the copy tests' crowds of release
    rows, and a result of the training and control records alone: each read from the run by a
    re-test where it cannot have changed)."""
    from synthguard.metrics.privacy import _copies
    from synthguard.metrics.privacy import near_copies as module

    asked: list[str] = []
    joins, crowds, copy_crowds = module.backend_matches, _copies.backend_chance_crowds, _copies._crowds

    def join(*args, **kwargs):
        asked.append("release join")
        return joins(*args, **kwargs)

    def crowd(*args, **kwargs):
        asked.append("chance crowds")
        return crowds(*args, **kwargs)

    def copy_crowd(*args, **kwargs):
        asked.append("copy crowds")
        return copy_crowds(*args, **kwargs)

    monkeypatch.setattr(module, "backend_matches", join)
    monkeypatch.setattr(_copies, "backend_chance_crowds", crowd)
    monkeypatch.setattr(_copies, "_crowds", copy_crowd)
    return asked


def _no_reuse(monkeypatch) -> None:
    import synthguard.engine.reuse as reuse

    monkeypatch.setattr(reuse, "derive_searches", lambda *args, **kwargs: False)


def _run(tables, client=None) -> dict:
    original, release, control = tables
    return evaluate(original, release, control, metrics=METRICS, seed=0, retest_columns=0,
                    client=client).to_dict()


def test_a_cluster_retest_reads_the_runs_near_copy_pairs_and_real_results_with_the_same_report(
        dask_client, monkeypatch):
    tables = _tables()
    asked = _counting(monkeypatch)
    reused = _run(tables, dask_client)
    rounds = reused["actions"]["drop_retest"]["rounds"]
    assert rounds and rounds[0]["rows_dropped"] > 0
    # the run asked the chance crowds of the copy tests' k = 0 and 1, the crowds of near_copies'
    # copies (no release row is an exact copy) and the near-copy joins at k = 1 and 2; the
    # re-test none
    assert sorted(asked) == ["chance crowds"] * 2 + ["copy crowds"] + ["release join"] * 2
    asked.clear()
    _no_reuse(monkeypatch)
    again = _run(tables, dask_client)
    assert sorted(asked) == ["chance crowds"] * 4 + ["copy crowds"] * 2 + ["release join"] * 4
    one = _run(tables)
    for part in ("verdict", "records", "actions", "metrics"):
        assert _dumps(reused[part]) == _dumps(again[part]), part
        assert _dumps(reused[part]) == _dumps(one[part]), part


def test_a_cluster_retest_asks_again_when_the_dropped_rows_held_a_label_of_their_own(
        dask_client, monkeypatch):
    """The copies' label ``z`` is coded before the control table's ``t``: once they are dropped
    ``t`` takes another code, so nothing on ``c`` is read from the run (the pairs and crowds on
    the columns with ``c`` are asked again), and the report is one process's."""
    tables = _tables(new_label="z")
    asked = _counting(monkeypatch)
    many = _run(tables, dask_client)
    assert many["actions"]["drop_retest"]["rounds"][0]["rows_dropped"] == 40  # every z
    assert sorted(asked) == ["chance crowds"] * 4 + ["copy crowds"] * 2 + ["release join"] * 4
    one = _run(tables)
    for part in ("verdict", "records", "actions", "metrics"):
        assert _dumps(many[part]) == _dumps(one[part]), part


def test_a_cluster_retest_reads_the_runs_crowds_as_the_cluster_counts_them(dask_client, monkeypatch):
    """The crowds a re-test reads of the run are those the cluster counts for its kept copies."""
    import synthguard.engine.reuse as reuse
    from synthguard.distributed import cluster_backend
    from synthguard.metrics.privacy._copies import backend_crowds

    read: list = []
    memo = reuse.release_pairs_memo

    def seen(view, key, compute, columns):
        out = memo(view, key, compute, columns)
        if key[0] == "copy-crowd" and reuse._DERIVED.get(view) is not None:
            read.append((view.tables, key, out))
        return out

    monkeypatch.setattr(reuse, "release_pairs_memo", seen)
    _run(_tables(), dask_client)
    assert read
    for tables, (_, cols, k), (rows, crowds) in read:
        data = cluster_backend(tables)
        fresh = backend_crowds(data, data.take("synthetic", rows, list(cols)), list(cols), k)
        assert rows.size and np.array_equal(crowds, fresh)


def test_a_cluster_run_lets_its_backend_go_and_keeps_results_within_its_byte_budget(
        dask_client, monkeypatch):
    """What a re-test reads is keyed by the run's tables, not its backend: the backend (its held
    partitions and query tables) is gone when the re-test runs. Past the budget of bytes kept on
    the driver nothing is kept, the re-test asks again, and the report is the same."""
    import gc
    import weakref

    import synthguard.distributed._backend as backend
    import synthguard.run.cluster as cluster

    made: list = []
    init = backend.DaskBackend.__init__

    def remembered(self, *args, **kwargs):
        init(self, *args, **kwargs)
        made.append(weakref.ref(self))

    alive: list[bool] = []
    run_tables = cluster.run_tables_on_cluster

    def retested(*args, retest=False, **kwargs):
        if retest:
            gc.collect()
            alive.append(made[0]() is not None)
        return run_tables(*args, retest=retest, **kwargs)

    monkeypatch.setattr(backend.DaskBackend, "__init__", remembered)
    monkeypatch.setattr(cluster, "run_tables_on_cluster", retested)
    tables = _tables()
    kept = _run(tables, dask_client)
    assert alive == [False]  # the run's backend, at the re-test
    asked = _counting(monkeypatch)
    monkeypatch.setattr(cluster, "CLUSTER_KEPT_BYTES", 0)
    again = _run(tables, dask_client)
    assert sorted(asked) == ["chance crowds"] * 4 + ["copy crowds"] * 2 + ["release join"] * 4
    for part in ("verdict", "records", "actions", "metrics"):
        assert _dumps(kept[part]) == _dumps(again[part]), part


NEIGHBOUR_TESTS = ["near_copies", "close_neighbours", "dcr", "nndr", "closest_distance_mia",
                   "membership_attacks", "dcr_baseline_protection", "dcr_overfitting_protection",
                   "linkability", "inference"]


def _searching(monkeypatch) -> list[tuple[str, int]]:
    """Records, for every partitioned neighbour search asked of the cluster, the phase (``run``,
    or ``retest`` once a drop-and-retest starts) and its number of query rows."""
    import synthguard.distributed._backend as backend
    import synthguard.run.cluster as cluster

    searched: list[tuple[str, int]] = []
    phase = ["run"]
    search, run_tables = backend.kneighbors_distributed, cluster.run_tables_on_cluster

    def counted(*args, **kwargs):
        out = search(*args, **kwargs)
        searched.append((phase[0], int(out[0].shape[0])))
        return out

    def tables(*args, retest=False, **kwargs):
        phase[0] = "retest" if retest else "run"
        return run_tables(*args, retest=retest, **kwargs)

    monkeypatch.setattr(backend, "kneighbors_distributed", counted)
    monkeypatch.setattr(cluster, "run_tables_on_cluster", tables)
    return searched


def _retest_rows(searched: list[tuple[str, int]]) -> int:
    return sum(n for phase, n in searched if phase == "retest")


def test_a_cluster_retest_searches_only_the_queries_its_run_cannot_answer_with_the_same_report(
        dask_client, monkeypatch):
    """The neighbour tests' re-test on a cluster reads its run's searches (engine.reuse.search,
    as one process's): the real records against each other and the kept release rows as queries
    are the run's answers, the release as reference renumbered, and only the queries that lost a
    neighbour searched again. The report equals a re-test that searches everything again and one
    process's; with no bytes to keep, everything is searched again."""
    import synthguard.run.cluster as cluster

    original, release, control = _tables()
    # the copies' cell changed within the column's values: the distances' ranges are the run's
    # after the drop (a range that moves changes every distance: searched again)
    release.loc[300:, "b"] = original["b"].iloc[:40].to_numpy()
    release.loc[300:, "c"] = original["c"].iloc[:40].map({"p": "q", "q": "r", "r": "s", "s": "p"}).to_numpy()

    def run(client=None) -> dict:
        return evaluate(original, release, control, metrics=NEIGHBOUR_TESTS, seed=0, retest_columns=0,
                        client=client).to_dict()

    searched = _searching(monkeypatch)
    reused = run(dask_client)
    assert reused["actions"]["drop_retest"]["rounds"][0]["rows_dropped"] > 0
    first = _retest_rows(searched)
    searched.clear()
    with monkeypatch.context() as m:
        _no_reuse(m)
        again = run(dask_client)
    full = _retest_rows(searched)
    searched.clear()
    with monkeypatch.context() as m:
        m.setattr(cluster, "CLUSTER_KEPT_BYTES", 0)
        unkept = run(dask_client)
    assert _retest_rows(searched) == full
    assert full > 2000 and first < full / 50, (first, full)
    one = run()
    for part in ("verdict", "records", "actions", "metrics"):
        assert _dumps(reused[part]) == _dumps(again[part]), part
        assert _dumps(reused[part]) == _dumps(unkept[part]), part
        assert _dumps(reused[part]) == _dumps(one[part]), part


def test_a_cluster_retest_searching_among_release_rows_for_two_pooled_roles_answers_as_searching_again(
        dask_client, monkeypatch):
    """The search among some release rows (the anonymeter attacks' distinct rows) with the
    training and control rows pooled as queries: a re-test without some release rows reads the
    run's answers, renumbered, and searches the queries of both roles that lost a neighbour, in
    the pooled order; its answer equals the re-test's own full search."""
    from synthguard.distributed import cluster_backend
    from synthguard.distributed._tables import kept_columns_alike, load_tables, without_rows
    from synthguard.engine.neighbors import gower
    from synthguard.engine.reuse import derive_searches, forget_searches, keep_searches

    original, release, control = _tables()
    dt = load_tables(original, release, control, client=dask_client, npartitions=3)
    cols = ["a", "b", "d"]
    metric = gower(np.array([10.0, 10.0, 60.0]))
    queries = [("original", None), ("control", None)]
    run = cluster_backend(dt)
    keep_searches(run.reuse_key, real_bytes=2**30, trees=False)
    try:
        among = np.arange(0, 340, 2)  # every other release row as the reference
        kept_d, kept_i = run.kneighbors_among(queries, "synthetic", among, cols, metric, 3)
        dropped = np.zeros(340, dtype=bool)
        dropped[kept_i[::7, 0] * 2] = True  # nearest rows of queries of both roles
        new, rows = without_rows(dt, dropped)
        retest = cluster_backend(new)
        assert derive_searches(retest.reuse_key, run.reuse_key, rows, column_same=kept_columns_alike(dt, new))
        places = np.full(340, -1)
        places[rows] = np.arange(rows.size)
        mine = places[among[~dropped[among]]]
        searched = _searching(monkeypatch)
        got = retest.kneighbors_among(queries, "synthetic", mine, cols, metric, 3)
        assert 0 < sum(n for _, n in searched) < 600  # only the queries that lost a neighbour
        fresh = cluster_backend(new)  # no derivation: searched again in full
        want = fresh.kneighbors_among(queries, "synthetic", mine, cols, metric, 3)
    finally:
        forget_searches(run.reuse_key)
    lost = ~np.isin(kept_i * 2, np.flatnonzero(dropped)).any(axis=1)
    assert (~lost[:300]).any() and (~lost[300:]).any()  # queries of both roles searched again
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[0], want[0])


def test_a_cluster_retest_derives_the_row_identities_of_its_tables_from_its_runs(dask_client, monkeypatch):
    """The row identities (each row's first pooled position of a row with its content, over
    training, release and control) of a re-test without some release rows, among them the first
    of several equal rows, are derived from the run's without a pass over the partitions, and
    equal those the cluster computes for the re-test's tables."""
    import synthguard.distributed._backend as backend
    from synthguard.distributed import cluster_backend
    from synthguard.distributed._tables import kept_columns_alike, load_tables, without_rows
    from synthguard.engine.reuse import derive_searches, forget_searches, keep_searches

    rng = np.random.default_rng(5)
    original, control = _table(200, rng), _table(200, rng)
    release = pd.concat([_table(200, rng), original.iloc[:30], control.iloc[:30], original.iloc[:30]],
                        ignore_index=True)  # training rows twice, control rows once: groups over roles
    cols = ["a", "c"]
    dt = load_tables(original, release, control, client=dask_client, npartitions=3)
    run = cluster_backend(dt)
    keep_searches(run.reuse_key, real_bytes=2**30, trees=False)
    try:
        ids = run.row_ids(cols)
        s = ids["synthetic"]
        n_o = len(original)
        # drop the release's first row of each group it starts, and some others
        dropped = np.zeros(len(release), dtype=bool)
        dropped[np.flatnonzero(s == n_o + np.arange(s.size))[::2]] = True
        dropped[::11] = True
        new, rows = without_rows(dt, dropped)
        retest = cluster_backend(new)
        assert derive_searches(retest.reuse_key, run.reuse_key, rows, column_same=kept_columns_alike(dt, new))
        passes: list[int] = []
        first = backend.first_positions
        monkeypatch.setattr(backend, "first_positions", lambda *a, **k: passes.append(1) or first(*a, **k))
        got = retest.row_ids(cols)
        assert passes == []  # derived, not computed
        want = first(new, cols, tuple(new.roles))
    finally:
        forget_searches(run.reuse_key)
    shared = np.isin(s, n_o + np.flatnonzero(dropped)) & (s >= n_o)  # groups whose first row went
    assert shared.any()
    for role in new.roles:
        np.testing.assert_array_equal(got[role], want[role], err_msg=role)


@pytest.mark.parametrize("why", ["not kept", "column coded otherwise"])
def test_a_cluster_retest_computes_its_row_identities_when_it_cannot_derive_them(dask_client, monkeypatch,
                                                                                 why):
    """A re-test computes its row identities with a pass over the partitions (equal to the
    cluster's) when its run kept none (a byte budget too small for them) or when a column of
    them is coded otherwise in its tables: a derivation from the run's would then rest on
    groups that need not hold."""
    import synthguard.distributed._backend as backend
    from synthguard.distributed import cluster_backend
    from synthguard.distributed._tables import kept_columns_alike, load_tables, without_rows
    from synthguard.engine.reuse import derive_searches, forget_searches, keep_searches

    rng = np.random.default_rng(6)
    original, control = _table(150, rng), _table(150, rng)
    release = pd.concat([_table(150, rng), original.iloc[:20], original.iloc[:20]], ignore_index=True)
    cols = ["a", "c"]
    dt = load_tables(original, release, control, client=dask_client, npartitions=3)
    run = cluster_backend(dt)
    # identities (8 bytes a row) that would fit the budget but take more than a quarter of it:
    # not kept (they would crowd out the other results)
    rows_in_all = len(original) + len(release) + len(control)
    keep_searches(run.reuse_key, real_bytes=2 * 8 * rows_in_all if why == "not kept" else 2**30, trees=False)
    try:
        run.row_ids(cols)
        dropped = np.zeros(len(release), dtype=bool)
        dropped[::7] = True
        new, rows = without_rows(dt, dropped)
        retest = cluster_backend(new)
        alike = kept_columns_alike(dt, new)
        same = alike if why == "not kept" else (lambda role, column: column != "c" and alike(role, column))
        assert derive_searches(retest.reuse_key, run.reuse_key, rows, column_same=same)
        passes: list[int] = []
        first = backend.first_positions
        monkeypatch.setattr(backend, "first_positions", lambda *a, **k: passes.append(1) or first(*a, **k))
        got = retest.row_ids(cols)
        assert passes == [1]  # computed on the cluster, not derived
        want = first(new, cols, tuple(new.roles))
    finally:
        forget_searches(run.reuse_key)
    for role in new.roles:
        np.testing.assert_array_equal(got[role], want[role], err_msg=role)
