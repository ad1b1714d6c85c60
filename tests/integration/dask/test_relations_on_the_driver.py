"""The key relations grouped on the driver (below ``DRIVER_GROUP_ROWS``) equal the dask group-bys.

Below the row budget :meth:`DaskBackend.key_groups`, ``key_groups_many``, ``key_rows`` and
``key_distinct`` gather their partitions' identities in one round and group them on the driver
(one sort a grouping); above it (the budget forced to 0 here) they are dask group-bys and joins.
Both must give the same partitions, row for row and in the same order, and the same answers
bit for bit, on tables with ties, missing values, equal rows across roles and several partitions.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from .test_distributed_equality import META, _both_backends, _leaky_tables

pytest.importorskip("dask.dataframe", reason="dask is not installed: pip install 'synthguard[dask]'")
pytest.importorskip("distributed", reason="distributed is not installed: pip install 'synthguard[dask]'")

EVERY = ("original", "synthetic", "control")
BINS = {"f": np.array([20_000.0, 50_000.0, 80_000.0]), "a": np.array([0.0])}


def _relations(b, cut):
    """Every key relation the metrics ask, held cells (``cut`` None) or hashed partitions (binned)."""
    return {
        "groups": b.key_groups(["a", "b"], ("original", "synthetic"), bins=cut),
        "groups_one": b.key_groups(["a", "c"], ("synthetic",), bins=cut),  # no merge: the group-by's order
        "groups_every": b.key_groups(["a", "b", "c", "f"], ("synthetic", "original", "control"), bins=cut),
        "many": b.key_groups_many([["a"], ["a", "b"], ["c", "d"], ["b", "e", "f"]], EVERY, bins=cut),
        "rows": b.key_rows("synthetic", {"same": (["a", "b"], ("original",)),
                                         "pooled": (["a", "f"], ("original", "control")),
                                         "spread": (["a"], ("original", "synthetic"), ["b", "c"])}, bins=cut),
        "distinct": b.key_distinct("original", ["a", "b"], ["c", "f"], bins=cut),
    }


def _partitions(client, rel) -> list[pd.DataFrame]:
    if rel._local is not None:
        return rel._local
    return client.compute(rel.frame.to_delayed(), sync=True)


def _answers(rel):
    """Sums (an integer and a float column: the float sum's order of addition shows), counts,
    the top rows and, per row of a lookup, flags."""
    if rel.role is None:
        roles = [c[2:] for c in rel._meta().columns if c.startswith("n_")]
        head, last = f"n_{roles[0]}", f"n_{roles[-1]}"
        return (rel.sums(lambda f: f[last] * (f[head] > 1), lambda f: f[last] / (1.0 + f[head] + f["h1"] % 7)),
                rel.counts(lambda f: f[list(dict.fromkeys([head, last]))]),
                rel.top(7, [last, f"first_{roles[-1]}"], [False, True], where=lambda f: f[last] > 0))
    names = [c for c in rel._meta().columns if c != "pos"]
    return (rel.sums(*[(lambda f, n=n: f[n] / (1.0 + f["pos"])) for n in names]),
            rel.counts(lambda f: f[names[0]]),
            rel.top(5, [names[-1], "pos"], [False, True]),
            rel.flags(**{n: (lambda f, n=n: f[n] > 1) for n in names}))


@pytest.mark.parametrize("npartitions", [1, 3])
def test_key_relations_grouped_on_the_driver_equal_the_dask_group_bys(dask_client, monkeypatch, npartitions):
    """Every relation's partitions (rows, their order, dtypes) and answers (sums, float ones
    included, counts, top rows, flags) are the same grouped on the driver as by dask, held cells
    or binned; the relations do run on the driver below the budget and by dask at 0. The groups'
    order (first appearance over the partitions, as dask's group-by; pandas 2.0's outer merge
    keeps it) and the rows' order within a lookup's partitions are compared too."""
    from synthguard.distributed import _backend

    orig, syn, ctl = _leaky_tables(5)
    meta = {**META, "columns": {**META["columns"], "f": {"sdtype": "numerical"}}}
    _, dist = _both_backends(dask_client, orig, syn, ctl, meta, npartitions)
    monkeypatch.setattr(_backend, "SETS_PER_TASK", 3)  # key_groups_many's 4 sets in two tasks
    for cut in (None, BINS):
        driver = _relations(dist, cut)
        with monkeypatch.context() as m:
            m.setattr(_backend, "DRIVER_GROUP_ROWS", 0)  # the dask group-bys and joins
            grouped = _relations(dist, cut)
        for name, rel in driver.items():
            assert rel._local is not None and grouped[name]._local is None, name
            a, b = _partitions(dask_client, rel), _partitions(dask_client, grouped[name])
            assert len(a) == len(b) == (1 if rel.role is None else npartitions), name
            for pa, pb in zip(a, b, strict=True):
                pd.testing.assert_frame_equal(pa, pb, check_exact=True, obj=name)
            got, want = _answers(rel), _answers(grouped[name])
            assert got[0] == want[0], name  # the sums, bit for bit
            pd.testing.assert_series_equal(got[1], want[1], check_exact=True, obj=name)
            pd.testing.assert_frame_equal(got[2], want[2], check_exact=True, obj=name)
            if rel.role is not None:
                assert got[3].keys() == want[3].keys()
                for flag in got[3]:
                    np.testing.assert_array_equal(got[3][flag], want[3][flag])
        # ties and equal rows across roles and partitions do occur
        groups = driver["groups"]._local[0]
        assert (groups["n_original"] > 1).sum() >= 5 and ((groups["n_original"] > 0) & (groups["n_synthetic"] > 0)).any()


def test_key_relations_past_the_shuffle_rows_stay_on_dask(dask_client, monkeypatch):
    """Where a dask group-by would hash-partition its output (a role past ``SHUFFLE_ROWS``), the
    relation stays a dask group-by, so its partitions are the same whatever the budget."""
    from synthguard.distributed import _backend, _tables

    orig, syn, ctl = _leaky_tables(5)
    meta = {**META, "columns": {**META["columns"], "f": {"sdtype": "numerical"}}}
    _, dist = _both_backends(dask_client, orig, syn, ctl, meta, 3)
    assert dist.key_groups(["a"], ("original",))._local is not None
    monkeypatch.setattr(_tables, "SHUFFLE_ROWS", 100)
    for rel in _relations(dist, None).values():
        assert rel._local is None
    monkeypatch.setattr(_backend, "DRIVER_GROUP_ROWS", 10**9)
    assert dist.key_distinct("original", ["a"], ["b"])._local is None
