"""Work a cluster run does once, not once per graph or per training record: the typed partitions
are held on the cluster for the run (read and typed once), and the interpolation leak rows' nearest
training records are searched for their few sources only. The numbers stay one process's."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
import pytest

from synthguard import evaluate

from ...helpers import without_seconds
from .test_distributed_equality import META, _frame

pytest.importorskip("dask.dataframe", reason="dask is not installed: pip install 'synthguard[dask]'")
pytest.importorskip("distributed", reason="distributed is not installed: pip install 'synthguard[dask]'")


def _typings(monkeypatch) -> list[int]:
    """A counter of the partitions typed (the in-process cluster runs the tasks in this process)."""
    from synthguard.distributed import _tables

    seen: list[int] = []
    inner = _tables._type_partition

    def counted(frame, *args, **kwargs):
        seen.append(len(frame))
        return inner(frame, *args, **kwargs)

    monkeypatch.setattr(_tables, "_type_partition", counted)
    return seen


def test_typed_partitions_are_read_once_per_run_not_once_per_graph(dask_client, monkeypatch):
    from synthguard.distributed import cluster_backend
    from synthguard.distributed._tables import load_tables

    seen = _typings(monkeypatch)
    orig, syn, ctl = _frame(300, 1), _frame(250, 2), _frame(200, 3)
    dt = load_tables(orig, syn, ctl, META, client=dask_client, npartitions=3)
    assert all(t.persisted for t in dt.tables.values())
    seen.clear()
    backend = cluster_backend(dt, "auto")
    backend.ranges(["a", "c"], ("original", "control"))
    backend.take("synthetic", np.arange(0, 250, 7), ["b", "c"])
    backend.row_ids(["a", "b", "c", "d", "e"])
    assert seen == []  # every graph read the persisted partitions: none typed again


def test_the_partition_measured_for_the_memory_share_is_typed_once(dask_client, monkeypatch):
    """Whether the typed tables fit is measured on each table's first partition: that partition
    is held from then on and kept in the persist, not typed once to be measured and once more to
    be held (9 partitions of 67-100 rows: each typed once for the label kinds, whose sample needs
    them all here, and once to be held; on main the 3 measured partitions a third time)."""
    from synthguard.distributed._tables import load_tables

    seen = _typings(monkeypatch)
    dt = load_tables(_frame(300, 1), _frame(250, 2), _frame(200, 3), META, client=dask_client,
                     npartitions=3)
    assert all(t.persisted for t in dt.tables.values())
    assert len(seen) == 9 + 9, seen


def test_tables_past_the_memory_share_are_typed_per_graph_with_the_same_numbers(dask_client, monkeypatch):
    from synthguard.distributed import _tables, cluster_backend

    seen = _typings(monkeypatch)
    orig, syn, ctl = _frame(300, 1), _frame(250, 2), _frame(200, 3)
    with monkeypatch.context() as m:
        m.setattr(_tables, "PERSIST_SHARE", 1e-12)  # no table fits: read again by each graph
        dt = _tables.load_tables(orig, syn, ctl, META, client=dask_client, npartitions=3)
    assert not any(t.persisted for t in dt.tables.values())
    seen.clear()
    ids = cluster_backend(dt, "auto").row_ids(["a", "b", "c", "d", "e"])
    assert seen  # typed again in this graph
    del dt
    held = _tables.load_tables(orig, syn, ctl, META, client=dask_client, npartitions=3)
    assert all(t.persisted for t in held.tables.values())
    expected = cluster_backend(held, "auto").row_ids(["a", "b", "c", "d", "e"])
    assert set(ids) == set(expected) and all(np.array_equal(ids[r], expected[r]) for r in expected)


def test_interpolation_partners_search_only_their_sources_on_a_cluster(dask_client, monkeypatch):
    """The interpolation family's leak rows read each source's nearest other training record: on a
    cluster the sources (a few rows) are the queries, never every training record (the whole-table
    search cost 70 s at 100,000 rows for a few thousand sources); the entries and the detection
    limits are one process's."""
    from synthguard.distributed._backend import DaskBackend

    searched: list[tuple[str, str, int | None]] = []
    whole, block = DaskBackend.kneighbors, DaskBackend.kneighbors_block

    def whole_search(self, query, reference, *args, **kwargs):
        searched.append((query, reference, None))
        return whole(self, query, reference, *args, **kwargs)

    def block_search(self, query, reference, *args, **kwargs):
        searched.append(("block", reference, query.n_rows))
        return block(self, query, reference, *args, **kwargs)

    from synthguard.metrics import _leakrows

    monkeypatch.setattr(_leakrows, "MIN_CANDIDATES", 40)  # 40 sources a family, in both runs
    monkeypatch.setattr(DaskBackend, "kneighbors", whole_search)
    monkeypatch.setattr(DaskBackend, "kneighbors_block", block_search)
    orig = _frame(400, 11)
    syn = pd.concat([_frame(360, 12), orig.iloc[:4]], ignore_index=True)
    ctl = _frame(400, 13)
    single = evaluate(orig, syn, ctl, META, metrics=["exact_matches"], seed=7)
    dist = evaluate(orig, syn, ctl, META, metrics=["exact_matches"], seed=7, client=dask_client)
    assert ("original", "original", None) not in searched
    blocks = [n for q, r, n in searched if q == "block" and r == "original"]
    assert blocks == [40]  # the interpolation family's sources, not the 400 training records
    a, b = (json.dumps(without_seconds(dict(r["exact_matches"])), sort_keys=True, default=str)
            for r in (single, dist))
    assert a == b
    limits = [json.dumps(r.to_dict()["verdict"]["detection_limits"], sort_keys=True, default=str)
              for r in (single, dist)]
    assert limits[0] == limits[1]
    assert "interpolation" in single.to_dict()["verdict"]["detection_limits"]


def test_near_copy_key_counts_hash_every_cell_once_per_run(dask_client, monkeypatch):
    """The near-copy joins ask ``key_counts`` batch after batch (leave-one-out, leave-two-out sets,
    crowds) of the same release rows against the same real partitions: each cell of both is hashed
    once (the release rows' cells kept while the frame lives, the real partitions' held on the
    cluster), and the counts are those of a backend hashing them in every call."""
    from synthguard.distributed import _tables, cluster_backend

    orig, syn, ctl = _frame(300, 1), _frame(250, 2), _frame(200, 3)
    dt = _tables.load_tables(orig, syn, ctl, META, client=dask_client, npartitions=3)
    cols = ["a", "b", "c", "d", "e"]
    rel = cluster_backend(dt, "auto").take("synthetic", np.arange(250), cols)
    one = [[c for c in cols if c != left] for left in cols]
    two = [[c for c in cols if c not in pair] for pair in (("a", "b"), ("c", "e"), ("b", "d"))]
    hashed: list[int] = []
    inner = _tables.cell_hashes

    def counted(codes, *args, **kwargs):
        hashed.append(codes.size)
        return inner(codes, *args, **kwargs)

    monkeypatch.setattr(_tables, "cell_hashes", counted)
    backend = cluster_backend(dt, "auto")
    first = backend.key_counts([rel], one, ("original", "control"))
    cells = sum(hashed)
    assert cells == 2 * (250 + 300 + 200) * len(cols), str(hashed)  # two chains, every cell once
    again = backend.key_counts([rel], two, ("original", "control"))
    assert sum(hashed) == cells  # no cell hashed again
    monkeypatch.undo()
    with monkeypatch.context() as m:  # nothing held: every call hashes as it goes, same counts
        m.setattr(_tables, "PERSIST_SHARE", 1e-12)
        fresh = cluster_backend(dt, "auto")
        for got, sets in ((first, one), (again, two)):
            want = fresh.key_counts([rel.copy()], sets, ("original", "control"))
            assert [[(c.tolist(), p.tolist()) for c, p in per] for per in got] == \
                [[(c.tolist(), p.tolist()) for c, p in per] for per in want]


def _relations(backend) -> list:
    """Every key relation's answer, as plain lists (compared between backends)."""
    roles = ("original", "synthetic", "control")
    groups = backend.key_groups(["a", "b"], roles)
    many = backend.key_groups_many([["a", "b"], ["b", "d"], ["a", "c", "e"]], ("original", "synthetic"))
    rows = backend.key_rows("synthetic", {"same": (["a", "b"], ("original", "control")),
                                          "spread": (["a"], ("original",), ["d", "e"])})
    distinct = backend.key_distinct("original", ["a", "b"], ["d"])
    out = [groups.sums(lambda f: f["n_synthetic"] * (f["n_original"] > 0), lambda f: f["n_original"]),
           groups.top(5, ["n_synthetic", "first_original"], [False, True],
                      where=lambda f: f["n_original"] > 0)[["n_synthetic", "first_original"]].values.tolist(),
           many.counts(lambda f: f[["set", "n_original", "n_synthetic"]]).to_dict(),
           {k: v.tolist() for k, v in rows.flags(same=lambda f: f["same"] > 1,
                                                 spread=lambda f: f["spread"] > 1).items()},
           {k: v.tolist() for k, v in distinct.flags(alone=lambda f: f["size"] == 1,
                                                     mixed=lambda f: f["distinct"] > 1).items()},
           {k: v.tolist() for k, v in backend.row_ids(["a", "b", "d"]).items()},
           {k: v.tolist() for k, v in backend.key_ids(["a", "c"], ("original", "control")).items()}]
    return out


def test_key_relations_sum_held_cells_instead_of_hashing_the_partitions_again(dask_client, monkeypatch):
    """Each key relation (groups, lookups, distinct values, row ids) hashed its columns of every
    partition again (at 1M rows 530 task seconds in 590 tasks): now every cell is hashed once for
    the run and held, each relation sums its groups from the held cells, and the answers are those
    of a backend hashing every partition as it goes."""
    from synthguard.distributed import _backend, _tables, cluster_backend

    orig, syn, ctl = _frame(300, 1), _frame(250, 2), _frame(200, 3)
    dt = _tables.load_tables(orig, syn, ctl, META, client=dask_client, npartitions=3)
    hashed: list[int] = []
    identities: list[int] = []
    inner, ident = _tables.cell_hashes, _backend.identity_hashes

    def counted(codes, *args, **kwargs):
        hashed.append(codes.size)
        return inner(codes, *args, **kwargs)

    def counted_ids(encoder, frame, columns):
        identities.append(len(frame))
        return ident(encoder, frame, columns)

    monkeypatch.setattr(_tables, "cell_hashes", counted)
    monkeypatch.setattr(_backend, "identity_hashes", counted_ids)
    got = _relations(cluster_backend(dt, "auto"))
    assert identities == []  # no relation hashed a partition's identities
    assert sum(hashed) == 2 * (300 + 250 + 200) * 5, str(hashed)  # two chains, every cell once
    monkeypatch.undo()
    with monkeypatch.context() as m:  # nothing held: every relation hashes its partitions
        m.setattr(_tables, "PERSIST_SHARE", 1e-12)
        m.setattr(_backend, "identity_hashes", counted_ids)
        want = _relations(cluster_backend(dt, "auto"))
    assert identities  # the other path did hash them
    assert got == want
    binned = cluster_backend(dt, "auto").key_groups(["a", "c"], ("original",), bins={"c": np.array([0.0])})
    assert binned.sums(lambda f: f["n_original"])[0] == 300  # cut at bins: hashed, not summed


def _parquet_reads(client) -> Any:
    """A scheduler plugin counting the Parquet partitions read (tasks of a ``read_parquet`` prefix
    run) on the in-process cluster; remove it with ``client.cluster.scheduler.remove_plugin``."""
    from dask.utils import key_split
    from distributed.diagnostics.plugin import SchedulerPlugin

    class Reads(SchedulerPlugin):
        name = "parquet-reads"

        def __init__(self) -> None:
            self.n = 0

        def transition(self, key, start, finish, *args, **kwargs) -> None:
            if start == "processing" and finish == "memory" and key_split(key).startswith("read_parquet"):
                self.n += 1

    plugin = Reads()
    client.cluster.scheduler.add_plugin(plugin)
    return plugin


def test_raw_partitions_are_read_once_while_the_tables_load(dask_client, monkeypatch, tmp_path):
    """The loading passes over the raw partitions several times (the first partition, rows and
    missing values, whole-column facts, text samples, label kinds, the typing): each file is now
    read once (held while the tables load; the first one once more for the schema's sample), where
    it was read once per pass; the tables loaded are the same as when every pass reads the files
    again."""
    from synthguard.distributed import _tables, cluster_backend

    frames = {"original": _frame(300, 1), "synthetic": _frame(250, 2), "control": _frame(200, 3)}
    folders = []
    for role, f in frames.items():
        folder = tmp_path / role
        folder.mkdir()
        for j, part in enumerate(np.array_split(np.arange(len(f)), 3)):
            f.iloc[part].to_parquet(folder / f"part.{j}.parquet")
        folders.append(str(folder))

    def load():
        plugin = _parquet_reads(dask_client)
        try:
            dt = _tables.load_tables(*folders, META, client=dask_client)
            got = {r: dask_client.gather(dask_client.compute(list(t.parts))) for r, t in dt.tables.items()}
            ids = cluster_backend(dt, "auto").row_ids(["a", "b", "c", "d", "e"])
        finally:
            dask_client.cluster.scheduler.remove_plugin(name=plugin.name)
        return dt, got, ids, plugin.n

    dt, held, ids, reads = load()
    assert all(t.persisted for t in dt.tables.values())
    assert reads <= 3 * 3 + 3, reads  # 9 files once, each table's first once more
    with monkeypatch.context() as m:  # not held: every pass reads the files again
        m.setattr(_tables, "RAW_PERSIST_SHARE", 0.0, raising=False)
        dt2, fresh, want, again = load()
    assert again > 2 * 9, again
    assert dt2.schema == dt.schema
    assert all(np.array_equal(dt2.row_numbers[r], dt.row_numbers[r]) for r in dt.row_numbers)
    for r in held:
        pd.testing.assert_frame_equal(pd.concat(held[r]), pd.concat(fresh[r]))
    assert all(np.array_equal(ids[r], want[r]) for r in want)


def _indexes_built(monkeypatch) -> list[int]:
    """A counter of the column indexes built (the in-process cluster runs the tasks here)."""
    from synthguard.engine import queries

    seen: list[int] = []
    inner = queries.ColumnIndex.__init__

    def counted(self, X, *args, **kwargs):
        seen.append(X.shape[0])
        inner(self, X, *args, **kwargs)

    monkeypatch.setattr(queries.ColumnIndex, "__init__", counted)
    return seen


def _search_batches(backend, rows, batches: int = 5) -> list[tuple[np.ndarray, np.ndarray]]:
    """A singling-out search's calls: several batches of queries asked of the same release rows."""
    from synthguard.engine import queries as Q

    rng = np.random.default_rng(4)
    out = []
    for _ in range(batches):
        m = 300
        col = np.tile(np.array([0, 1, 2]), (m, 1))
        op = np.column_stack([np.full(m, Q.EQ), rng.choice([Q.GE, Q.LE], m), np.full(m, Q.EQ)])
        val = np.column_stack([rng.integers(0, 5, m), rng.normal(size=m).round(1), rng.integers(0, 3, m)])
        out.append(backend.query_counts("synthetic", ["a", "c", "b"], (col, op.astype(np.int64), val.astype(float)),
                                        cap=2, rows=rows))
    return out


def test_singling_out_search_indexes_each_partition_once_not_once_per_batch(dask_client, monkeypatch):
    """The multivariate singling-out search asks the release's counts a hundred times at 1M rows
    (one call per batch of attempts): each partition's query matrix and column index are built at
    the first call and held for the next ones asking of the same rows (on main: once per call and
    partition, 830 of a 1M cluster run's CPU seconds). Past the memory share, built per call, with
    the same counts and positions."""
    from synthguard.distributed import _backend, _tables, cluster_backend

    orig, syn, ctl = _frame(300, 1), _frame(250, 2), _frame(200, 3)
    dt = _tables.load_tables(orig, syn, ctl, META, client=dask_client, npartitions=3)
    rows = np.random.default_rng(0).permutation(250)[:200]
    seen = _indexes_built(monkeypatch)
    held = _search_batches(cluster_backend(dt, "auto"), rows)
    assert len(seen) == 3 and sum(seen) == 200  # each partition's asked rows indexed once
    seen.clear()
    with monkeypatch.context() as m:
        m.setattr(_backend, "QUERY_TABLE_SHARE", 1e-12)  # nothing fits: each call builds its own
        fresh = _search_batches(cluster_backend(dt, "auto"), rows)
    assert len(seen) == 15
    for (c1, f1), (c2, f2) in zip(held, fresh, strict=True):
        assert np.array_equal(c1, c2) and np.array_equal(f1, f2)
    assert any((c == 1).any() for c, _ in held) and any((c == 2).any() for c, _ in held)
    seen.clear()
    other = np.arange(250)  # other rows asked: the held tables are replaced, built once more
    backend = cluster_backend(dt, "auto")
    _search_batches(backend, rows, 2), _search_batches(backend, other, 2)
    assert len(seen) == 6


def test_singling_out_search_reads_its_drawn_cells_from_the_held_query_tables(dask_client, monkeypatch):
    """The search's drawn cells (``query_values``, once a batch) are read from the partitions'
    held query matrices: no row is taken from the partitions again (they were fetched a batch at a
    time: at 10M release rows each batch read and typed all 40 files again). The values equal one
    process's and those of the rows taken when the tables do not fit their share."""
    from synthguard.distributed import _backend, _tables, cluster_backend
    from synthguard.registry import Context

    orig, syn, ctl = _frame(300, 1), _frame(250, 2), _frame(200, 3)
    dt = _tables.load_tables(orig, syn, ctl, META, client=dask_client, npartitions=3)
    cols = ["a", "c", "b"]
    rng = np.random.default_rng(6)
    rows = np.sort(rng.permutation(250)[:200])
    asked = rows[rng.integers(0, 200, (500, 2))]  # repeated rows, across partitions
    at = rng.integers(0, 3, (500, 2))
    local = Context.from_frames(orig, syn, ctl, META).data  # one process, the same canonical rows
    want = local.query_values("synthetic", cols, asked, at, rows=rows)
    taken: list[int] = []
    fetch = _backend.fetch_rows
    monkeypatch.setattr(_backend, "fetch_rows", lambda *a, **k: taken.append(1) or fetch(*a, **k))
    backend = cluster_backend(dt, "auto")
    got = backend.query_values("synthetic", cols, asked, at, rows=rows)
    np.testing.assert_array_equal(want, got)
    # the whole rows of the held matrices (a long search's whole release), one process's
    np.testing.assert_array_equal(local.query_values("synthetic", cols, rows, None, rows=rows),
                                  backend.query_values("synthetic", cols, rows, None, rows=rows))
    assert taken == [] and backend.__dict__.get("_query_held") is not None
    with monkeypatch.context() as m:
        m.setattr(_backend, "QUERY_TABLE_SHARE", 1e-12)  # not held: the rows taken
        np.testing.assert_array_equal(want, cluster_backend(dt, "auto").query_values(
            "synthetic", cols, asked, at, rows=rows))
    assert taken == [1]
    with pytest.raises(RuntimeError, match="not among the held"):
        backend.query_values("synthetic", cols, np.setdiff1d(np.arange(250), rows)[:3], np.zeros(3, int),
                             rows=rows)


def test_whole_rows_handed_out_are_counted_on_the_driver_with_one_process_counts(dask_client, monkeypatch):
    """Once a cluster backend has handed out every asked row whole (a long singling-out search's
    release, in the search's order, not the canonical one), counts of those rows at most 2 are
    made on the driver over that copy, not sent to the partitions: one process's counts, and its
    first rows wherever a query selects one row; counts without a cap (whose first match must be
    the lowest of many) and counts of other rows still ask the partitions."""
    from synthguard.distributed import _tables, cluster_backend
    from synthguard.engine import queries as Q
    from synthguard.registry import Context

    orig, syn, ctl = _frame(300, 1), _frame(250, 2), _frame(200, 3)
    dt = _tables.load_tables(orig, syn, ctl, META, client=dask_client, npartitions=3)
    cols = ["a", "c", "b"]
    rng = np.random.default_rng(8)
    rows = rng.permutation(250)[:200]  # a search's order (by a hash of the rows), not ascending
    local = Context.from_frames(orig, syn, ctl, META).data
    whole = local.query_values("synthetic", cols, rows, None, rows=rows)
    m = 400
    col = np.stack([rng.permutation(3)[:2] for _ in range(m)])
    op = rng.choice([Q.EQ, Q.LE, Q.GE], (m, 2))
    val = whole[rng.integers(0, rows.size, (m, 1)), col]  # the values of a row: at least one match
    queries = (col, op, val)
    want, want_first = local.query_counts("synthetic", cols, queries, cap=2, rows=rows)
    backend = cluster_backend(dt, "auto")
    trips: list[int] = []
    where_held = _tables.DistTables.compute_where_held
    monkeypatch.setattr(_tables.DistTables, "compute_where_held",
                        lambda self, *a: trips.append(1) or where_held(self, *a))
    np.testing.assert_array_equal(backend.query_values("synthetic", cols, rows, None, rows=rows), whole)
    handed_out = len(trips)
    got, first = backend.query_counts("synthetic", cols, queries, cap=2, rows=rows)
    assert len(trips) == handed_out  # counted on the driver
    np.testing.assert_array_equal(got, want)
    assert {1, 2} <= set(want.tolist())  # queries of one row and of several
    np.testing.assert_array_equal(first[want == 1], want_first[want == 1])
    all_counts = backend.query_counts("synthetic", cols, queries, rows=rows)  # no cap: the partitions
    assert len(trips) == handed_out + 1
    for a, b in zip(all_counts, local.query_counts("synthetic", cols, queries, rows=rows), strict=True):
        np.testing.assert_array_equal(a, b)
    backend.query_counts("original", cols, queries, cap=2)  # other rows: the copy is let go
    assert "_query_whole" not in backend.__dict__
    backend.query_counts("synthetic", cols, queries, cap=2, rows=rows)
    assert len(trips) == handed_out + 3  # the partitions asked again


def test_tasks_on_held_partitions_run_where_they_are_held_and_nothing_held_moves(dask_client):
    """A held partition (a query table: tens of MB a partition at 10M rows) is read where it lies:
    with its worker busy and the other idle, the tasks on it wait for its worker instead of copying
    it to the idle one (a copy is held twice: the workers' memory is the 10M run's limit). Left to
    the scheduler, work stealing moved 4 of 12 such tasks to the idle worker with the holder busy
    1 s and 12 of 12 with it busy 3 s (measured on this cluster; a 1M singling-out search copied
    two of its held query tables, 64 MB). The singling-out search's counts and drawn cells ask
    their held tables this way."""
    import time

    from dask import delayed
    from distributed import get_worker, wait

    from synthguard.distributed import _tables

    dt = _tables.load_tables(_frame(30, 1), _frame(20, 2), None, META, client=dask_client, npartitions=1)
    a = sorted(dask_client.scheduler_info()["workers"])[0]
    held = dask_client.persist([delayed(np.arange, pure=False)(1000 + i) for i in range(12)], workers=[a])
    wait(held)
    assert all(list(w) == [a] for w in dask_client.who_has(held).values())  # all on one worker
    busy = dask_client.submit(time.sleep, 2.0, workers=[a], pure=False)  # the holder is busy a while

    def where(part: np.ndarray) -> tuple[str, int]:
        time.sleep(0.05)
        return get_worker().address, int(part.size)

    got = dt.compute_where_held([delayed(where, pure=False)(h) for h in held], held)
    busy.result()
    assert [n for _, n in got] == [1000 + i for i in range(12)]
    assert {w for w, _ in got} == {a}
    assert all(list(w) == [a] for w in dask_client.who_has(held).values())
