"""The near-copy joins with the release's keys on the workers (issue #31): ``key_counts_rows``
joins the asked rows of a role held on the cluster with the pooled roles by hash buckets; the
same counts and lowest positions as ``key_counts`` of the same rows sent from the driver, and the
same near-copy entries."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from synthguard import evaluate
from synthguard.distributed._backend import (  # before a test spies on them
    _join_bucket,
    _pooled_groups,
    _set_rows,
)

from .test_distributed_equality import (
    META,
    _assert_same,
    _both_backends,
    _entries,
    _frame,
    _with_texts,
)


def _tables():
    """Real tables with duplicates within and across partitions (shuffled, so the lowest position
    of a key is not the first met), missing values, -0.0 and a text column; a release holding
    copies and one-cell changes of real rows (keys several real rows hold) and fresh rows."""
    orig = _with_texts(_frame(300, 91), 3)
    orig = pd.concat([orig, orig.iloc[:40], orig.iloc[:5]], ignore_index=True).sample(frac=1.0, random_state=4)
    ctl = pd.concat([_with_texts(_frame(150, 92), 4), orig.iloc[:25]], ignore_index=True)
    syn = pd.concat([_with_texts(_frame(120, 93), 5), orig.iloc[:30],
                     orig.iloc[30:50].assign(d="q")], ignore_index=True)
    meta = {**META, "columns": {**META["columns"], "t": {"sdtype": "text"}}}
    return orig, syn, ctl, meta


COLS = ["a", "b", "c", "d", "e", "t"]
SETS = [[c for j, c in enumerate(COLS) if j not in m] for d in range(3)
        for m in combinations(range(len(COLS)), d)] + [[]]


def _same(got, want) -> None:
    got = list(got)
    assert len(got) == len(want)
    for (gc, gf), (wc, wf) in zip(got, want, strict=True):
        np.testing.assert_array_equal(gc, wc)
        np.testing.assert_array_equal(gf, wf)


def test_release_rows_joined_on_the_workers_equal_their_keys_sent_from_the_driver(dask_client, monkeypatch):
    """``key_counts_rows`` of the release (all rows, and a shuffled subset with a row twice) against
    the pooled real roles (both orders) equals ``key_counts`` of the same rows taken to the driver
    and one process's: counts and lowest pooled positions, in one batch and bucket, in many
    batches and buckets, and from hashed partitions when the cells are not held."""
    import synthguard.distributed._backend as backend

    orig, syn, ctl, meta = _tables()
    local, dist = _both_backends(dask_client, orig, syn, ctl, meta, npartitions=4)
    n = len(syn)
    subset = np.r_[np.random.default_rng(5).permutation(n)[:60], 7, 7]
    for roles in (("original", "control"), ("control", "original")):
        for rows in (None, subset):
            at = np.arange(n) if rows is None else rows
            taken = dist.take("synthetic", at, COLS)
            want = [per[0] for per in dist.key_counts([taken], SETS, roles)]
            _same([per[0] for per in local.key_counts([local.take("synthetic", at, COLS)], SETS, roles)], want)
            assert any((c >= 2).any() for c, _ in want)  # keys several real rows hold: the lowest asked
            assert any(((c == 1) & (f >= 0)).any() for c, f in want)
            _same(dist.key_counts_rows("synthetic", rows, SETS, roles), want)  # the pooled keys sent
            with monkeypatch.context() as m:  # the bucket join: one batch and bucket
                m.setattr(backend, "POOLED_BROADCAST_KEYS", 0)
                _same(dist.key_counts_rows("synthetic", rows, SETS, roles), want)
            with monkeypatch.context() as m:  # many batches and buckets
                m.setattr(backend, "POOLED_BROADCAST_KEYS", 0)
                m.setattr(backend, "SET_BATCH_KEYS", 4_000)
                m.setattr(backend, "SET_BUCKET_KEYS", 300)
                m.setattr(backend, "HELD_QUERY_KEYS", 500)
                _same(dist.key_counts_rows("synthetic", rows, SETS, roles), want)
                m.setattr(dist, "held_cells", lambda role, columns: None)  # the partitions hashed
                _same(dist.key_counts_rows("synthetic", rows, SETS, roles), want)
            with monkeypatch.context() as m:  # the pooled keys sent in batches of 3 sets, then 1
                m.setattr(backend, "POOLED_BROADCAST_KEYS", 3 * (len(orig) + len(ctl)))
                _same(dist.key_counts_rows("synthetic", rows, SETS, roles), want)
                m.setattr(backend, "SET_READ_BYTES", 8 * len(np.unique(at)))  # 2 sets' answers a trip
                m.setattr(backend, "_set_rows", _counted_set_rows)
                _READS.clear()
                _same(dist.key_counts_rows("synthetic", rows, SETS, roles), want)
                assert max(_READS) == 2 and min(_READS) == 1  # batches of 3 sets: read 2, then 1
                m.setattr(backend, "BROADCAST_ANSWERS", 1)
                m.setattr(dist, "held_cells", lambda role, columns: None)  # the partitions hashed
                _same(dist.key_counts_rows("synthetic", rows, SETS, roles), want)
    none = list(dist.key_counts_rows("synthetic", np.zeros(0, np.int64), SETS[:2], ("original",)))
    assert len(none) == 2 and all(c.size == 0 and f.size == 0 for c, f in none)  # nothing asked


#: the sets read in each partition's answer reads (:func:`_counted_set_rows`)
_READS: list[int] = []


def _counted_set_rows(part, j0: int, j1: int):
    """:func:`_set_rows`, its number of sets counted (module level: the task's function travels
    pickled by reference)."""
    _READS.append(j1 - j0)
    return _set_rows(part, j0, j1)


def test_lowest_positions_are_asked_of_the_pooled_keys_sent(dask_client, monkeypatch):
    """The same of the pooled keys sent to the asked partitions: with the lowest position of a
    pooled key replaced by the highest the answers differ, the counts not."""
    import synthguard.distributed._backend as backend

    orig, syn, ctl, meta = _tables()
    _, dist = _both_backends(dask_client, orig, syn, ctl, meta, npartitions=4)
    roles = ("original", "control")
    want = [per[0] for per in dist.key_counts([dist.take("synthetic", np.arange(len(syn)), COLS)], SETS, roles)]
    monkeypatch.setattr(backend, "_pooled_groups", _highest_groups)
    got = list(dist.key_counts_rows("synthetic", None, SETS, roles))
    assert any(not np.array_equal(g[1], w[1]) for g, w in zip(got, want, strict=True))
    assert all(np.array_equal(g[0], w[0]) for g, w in zip(got, want, strict=True))


def _highest_groups(pieces, n_sets):
    """:func:`_pooled_groups` answering each key's highest pooled position (module level: the
    task's function travels pickled by reference)."""
    return tuple((k, c, -low) for k, c, low in _pooled_groups([(p[0], p[1], -p[2]) for p in pieces], n_sets))


def test_lowest_positions_are_asked_of_the_bucket_join(dask_client, monkeypatch):
    """A key held by several real rows answers the lowest of their pooled positions: with the
    lowest replaced by the highest in the bucket join the answers differ (the test above would see
    it), so the positions are checked, not only the counts."""
    import synthguard.distributed._backend as backend

    monkeypatch.setattr(backend, "POOLED_BROADCAST_KEYS", 0)  # the bucket join
    orig, syn, ctl, meta = _tables()
    _, dist = _both_backends(dask_client, orig, syn, ctl, meta, npartitions=4)
    roles = ("original", "control")
    want = [per[0] for per in dist.key_counts([dist.take("synthetic", np.arange(len(syn)), COLS)], SETS, roles)]
    real_join = backend._join_bucket

    def highest(query, real):
        s, g, c, f = real_join(query, [(p[0], p[1], -p[2]) for p in real])
        return s, g, c, -f

    monkeypatch.setattr(backend, "_join_bucket", highest)
    got = list(dist.key_counts_rows("synthetic", None, SETS, roles))
    assert any(not np.array_equal(g[1], w[1]) for g, w in zip(got, want, strict=True))
    assert all(np.array_equal(g[0], w[0]) for g, w in zip(got, want, strict=True))


@pytest.mark.metric_on_dask
def test_near_copies_with_the_release_on_the_workers_equal_the_driver_path(dask_client, monkeypatch):
    """near_copies and near_copies_2 on the cluster, the release's keys joined on the workers (in
    several batches and buckets) or sent from the driver (``ASK_ROWS_BY_POSITION`` off): the same
    entries, one process's; on the workers no ``key_counts`` call carries the release's rows."""
    import synthguard.distributed._backend as backend
    import synthguard.metrics.privacy._copies as copies

    orig, syn, ctl, meta = _tables()
    metrics = {"near_copies": {"top_n": 5}, "near_copies_2": {"top_n": 5}}
    single = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=3, retest_columns=0, retest_rows=0)
    sizes: list[int] = []
    real_counts = backend.DaskBackend.key_counts

    def spied(self, frames, column_sets, roles):
        sizes.extend(len(f) for f in frames)
        return real_counts(self, frames, column_sets, roles)

    monkeypatch.setattr(backend.DaskBackend, "key_counts", spied)
    monkeypatch.setattr(backend, "SET_BATCH_KEYS", 5_000)
    monkeypatch.setattr(backend, "SET_BUCKET_KEYS", 400)
    held = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=3, client=dask_client, retest_rows=0)
    assert len(syn) not in sizes  # the release's keys never sent from the driver
    monkeypatch.setattr(copies, "ASK_ROWS_BY_POSITION", False)
    sent = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=3, client=dask_client, retest_rows=0)
    assert len(syn) in sizes
    _assert_same(single, held, list(metrics))
    _assert_same(single, sent, list(metrics))
    assert _entries(held, list(metrics)) == _entries(sent, list(metrics))
    for name in metrics:
        assert single[name]["result"]["value"] > 0, name  # the copies are found


def test_the_release_rows_are_never_taken_whole_to_the_driver(dask_client, monkeypatch):
    """The near-copy join of the whole release (the sampled run's full-table join and the near-copy
    tests) reads only the candidate rows the cell check needs (issue #31: taking the 10M-row
    release held its typed rows on the workers until gathered, past 3 GB a worker, then 8 GB on
    the driver): the same pairs as with the release taken, one process's, and no ``take`` of
    every release row."""
    from synthguard.distributed._backend import DaskBackend
    from synthguard.metrics.privacy._copies import backend_matches
    from synthguard.run.cluster import full_table_copies

    orig, syn, ctl, meta = _tables()
    local, dist = _both_backends(dask_client, orig, syn, ctl, meta, npartitions=4)
    n = len(syn)
    rows = np.r_[np.random.default_rng(6).permutation(n)[:70], 3, 3]
    want = {k: backend_matches(local, [local.take("synthetic", np.arange(n), COLS)], COLS, k)[0] for k in (1, 2)}
    assert all(q.size for q, _ in want.values())  # the release holds near copies
    taken: list[int] = []
    real_take = DaskBackend.take

    def spied(self, role, at, columns):
        taken.append(len(at))
        return real_take(self, role, at, columns)

    monkeypatch.setattr(DaskBackend, "take", spied)
    for k in (1, 2):
        got = backend_matches(dist, [None], COLS, k, rows_of=[("synthetic", None)])[0]
        for g, w in zip(got, want[k], strict=True):
            np.testing.assert_array_equal(g, w)
        sub = backend_matches(dist, [None], COLS, k, rows_of=[("synthetic", rows)])[0]
        whole = backend_matches(local, [local.take("synthetic", rows, COLS)], COLS, k)[0]
        for g, w in zip(sub, whole, strict=True):
            np.testing.assert_array_equal(g, w)
    assert taken and max(taken) < n  # the candidates only
    taken.clear()
    full_table_copies(dist.dt, np.arange(0, len(orig), 2), near=True)
    assert taken and max(taken) < n


#: per computation of a spied ``key_counts_rows`` (one pass), the keys of each bucket joined
#: (module level: the tasks' functions travel pickled by reference, so the workers append here)
_JOINED: list[list[int]] = []


def _counted_join(query, real):
    _JOINED[-1].append(sum(p[0].size for p in [*query, *real]))
    return _join_bucket(query, real)


def test_a_set_past_the_batch_budget_is_joined_in_passes_of_the_budget(dask_client, monkeypatch):
    """One set's keys over :data:`SET_BATCH_KEYS` (at 20M asked and 25M pooled rows, 45M keys
    held at once in the workers' pieces) are joined in passes, each over a slice of the buckets
    and holding about the budget, not every key: the same counts and lowest positions, from
    held cells and from hashed partitions."""
    import synthguard.distributed._backend as backend

    orig, syn, ctl, meta = _tables()
    _, dist = _both_backends(dask_client, orig, syn, ctl, meta, npartitions=4)
    roles = ("original", "control")
    sets = [s for s in SETS if len(s) >= 5]  # keys of many values (the empty set's is one key)
    want = [per[0] for per in dist.key_counts([dist.take("synthetic", np.arange(len(syn)), COLS)], sets, roles)]
    per_set = len(syn) + len(orig) + len(ctl)
    real_compute = dist.dt.compute

    def compute(tasks):
        _JOINED.append([])
        return real_compute(tasks)

    monkeypatch.setattr(backend, "_join_bucket", _counted_join)
    monkeypatch.setattr(dist.dt, "compute", compute)
    monkeypatch.setattr(backend, "POOLED_BROADCAST_KEYS", 0)  # the bucket join
    monkeypatch.setattr(backend, "SET_BATCH_KEYS", per_set // 3)  # 3 passes a set
    monkeypatch.setattr(backend, "SET_BUCKET_KEYS", 100)
    for held in (True, False):
        with monkeypatch.context() as m:
            if not held:
                m.setattr(dist, "held_cells", lambda role, columns: None)  # the partitions hashed
            _JOINED.clear()
            _same(dist.key_counts_rows("synthetic", None, sets, roles), want)
            sizes = [sum(p) for p in _JOINED]
            assert len(sizes) == 3 * len(sets)  # one set a batch, in 3 passes
            assert all(sum(sizes[i:i + 3]) == per_set for i in range(0, len(sizes), 3))  # every key once
            assert max(sizes) < per_set / 2  # a pass holds its slice, not the set


def test_a_hashed_partition_looks_its_rows_up_one_set_at_a_time():
    """A partition whose cells are not held hashes its cells once and sums one set's keys at a
    time while it looks them up among the pooled keys sent (review s34: every set's keys of the
    batch at once, 16 bytes a row and set, four times the answers it keeps): its peak stays below
    the batch's keys, and it answers as from held cells."""
    import tracemalloc

    from synthguard.data.encoding import Encoder
    from synthguard.data.hashing import iter_set_sums
    from synthguard.data.schema import ColumnSpec, Schema
    from synthguard.distributed._backend import _pooled_hits_frame, _pooled_hits_held
    from synthguard.distributed._tables import cell_matrix

    rng = np.random.default_rng(0)
    n, cols = 20_000, [f"c{i}" for i in range(8)]
    frame = pd.DataFrame({c: rng.integers(0, 50, n).astype(float) for c in cols})
    encoder = Encoder(Schema({c: ColumnSpec(c, "numerical") for c in cols}))
    encoder.freeze()
    sets = tuple(tuple(c for j, c in enumerate(cols) if j not in m) for d in range(4)
                 for m in combinations(range(8), d)) + ((),)  # 93 sets and the empty one
    pooled = frame.sample(500, random_state=1)
    real = cell_matrix(encoder, pooled, cols)
    pieces = [(np.full(len(pooled), j, np.int32), h, np.arange(len(pooled), dtype=np.int64))
              for j, h in enumerate(iter_set_sums(real, [[cols.index(c) for c in s] for s in sets]))]
    groups = _pooled_groups(pieces, len(sets))
    pos = np.arange(n, dtype=np.int64)
    got = _pooled_hits_frame(encoder, frame, pos, sets, None, groups)
    held = _pooled_hits_held((cell_matrix(encoder, frame, cols), pos), tuple(cols), sets, None, groups)
    np.testing.assert_array_equal(got[1], held[1])
    assert (got[1] >= 0).sum(axis=1).min() >= 500  # the pooled rows' own keys found
    tracemalloc.start()
    try:
        _pooled_hits_frame(encoder, frame, pos, sets, None, groups)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the answers (4 bytes a row and set) and the cells, well below the keys (16 bytes a row and set)
    assert peak < n * len(sets) * 16 * 0.6, peak
