"""The checks one process runs again on the tables it coarsens (``prepare_tables``) run on the
cluster's coarsened tables too (``distributed/_recheck.py``, ``_tables.with_columns``): the same
control-check error, and the same labels written as strings, without gathering a table."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from synthguard.errors import InputError

from .test_coarsen_on_dask import _gathered, _uneven

pytest.importorskip("dask.dataframe", reason="dask is not installed: pip install 'synthguard[dask]'")
pytest.importorskip("distributed", reason="distributed is not installed: pip install 'synthguard[dask]'")

META = {"columns": {"x": {"sdtype": "numerical"}, "cat": {"sdtype": "categorical"},
                    "k": {"sdtype": "categorical"}}}


def _rows(n: int, rare: int, seed: int, prefix: str) -> pd.DataFrame:
    """``n`` rows: distinct ``x``, ``cat`` one of ten frequent labels, except ``rare`` rows whose
    label is their own (``prefix`` and a number), and ``k`` a number."""
    r = np.random.default_rng(seed)
    cat = r.choice([f"k{i}" for i in range(10)], n).astype(object)
    cat[:rare] = [f"{prefix}{i}" for i in range(rare)]
    return pd.DataFrame({"x": r.permutation(n) * 1.0 + seed * 10_000, "cat": cat,
                         "k": r.integers(0, 5, n)})


def _both(orig, syn, ctl, client):
    """One process's prepared tables and the cluster's (uneven partitions, an empty one; object
    columns kept as objects, as a pandas frame with numbers beside strings is partitioned),
    labelled alike, and their column-values providers."""
    import dask

    from synthguard.data.tables import prepare_tables
    from synthguard.distributed._coarsen import ClusterValues
    from synthguard.distributed._tables import load_tables
    from synthguard.run.actions import local_values

    with dask.config.set({"dataframe.convert-string": False}):
        dt = load_tables(_uneven(orig, [40, 200]), _uneven(syn, [100]), _uneven(ctl, [1, 150]),
                         META, client=client)
    one = prepare_tables(orig, syn, ctl, META, labels=dt.labels, canonical_columns=True,
                         strict_control=True).in_canonical_order()
    return one, dt, local_values(one), ClusterValues(dt)


def _coarse_schema(schema, column: str):
    spec = dataclasses.replace(schema.columns[column], sdtype="categorical", inferred=False,
                               reason="coarsened", datetime_format=None, unit=None)
    return dataclasses.replace(schema, columns={**schema.columns, column: spec})


@pytest.mark.parametrize("case", ["control is the original", "control is the release"])
def test_control_check_refuses_the_coarsened_tables_on_dask_as_in_one_process(dask_client, case):
    """Tables the control check passes (the control differs from the original, or from the
    release, in its rare labels only) whose coarsened ``cat`` (the ten frequent labels kept, the
    rare ones merged) makes the control the original's rows, or the release's: one process's
    preparation refuses them, and the cluster's coarsened tables are refused with the same
    message (labels of the run's tables)."""
    from synthguard.data.coarsening import plan_coarsening

    if case == "control is the original":
        orig = _rows(300, 40, 1, "r")
        ctl = orig.assign(cat=np.where(orig["cat"].str.startswith("r"),
                                       "s" + orig["cat"].str[1:], orig["cat"]))
        syn = _rows(250, 0, 3, "t")
        want = "control dask DataFrame holds the same rows as original dask DataFrame"
    else:
        orig, ctl = _rows(300, 0, 1, "r"), _rows(300, 200, 2, "s")
        syn = ctl.assign(cat=np.where(ctl["cat"].str.startswith("s"), "t" + ctl["cat"].str[1:],
                                      ctl["cat"]))
        want = "control dask DataFrame holds the same rows as the release synthetic dask DataFrame"
    one, dt, local, dist = _both(orig, syn, ctl, dask_client)
    plan = plan_coarsening(local, "cat", "categorical")
    assert plan is not None and plan.keep == frozenset(f"k{i}" for i in range(10))
    schema = _coarse_schema(one.schema, "cat")
    with pytest.raises(InputError) as in_one:
        local.coarsened(plan, schema)
    with pytest.raises(InputError) as on_dask:
        dist.coarsened(plan_coarsening(dist, "cat", "categorical"), schema)
    assert str(in_one.value).startswith(want)
    assert str(on_dask.value) == str(in_one.value)
    # coarsening another column changes no row's identity: no error, the same tables
    coarse_one = local.coarsened(plan_coarsening(local, "x", "numerical"), _coarse_schema(one.schema, "x"))
    coarse_dist = dist.coarsened(plan_coarsening(dist, "x", "numerical"), _coarse_schema(one.schema, "x"))
    for role in ("original", "synthetic", "control"):
        pd.testing.assert_frame_equal(_gathered(coarse_dist, role).astype(object),
                                      coarse_one.get(role).astype(object))


def test_labels_mixed_in_the_coarsened_tables_order_are_strings_on_dask_as_in_one_process(dask_client):
    """``k`` holds numbers in the first 1,000 labels of every table in input order, and strings
    after them (no table's first labels mix them: kept as loaded). One process prepares the
    coarsened tables in canonical order, where strings are among the first 1,000: it writes
    ``k``'s labels as strings in every table. The cluster's coarsened tables are the same
    (values, canonical order, vocabularies), on uneven partitions with an empty one."""
    from synthguard.data.coarsening import plan_coarsening
    from synthguard.data.encoding import Encoder

    orig = _rows(1_300, 0, 1, "r")
    orig["k"] = orig["k"].astype(object)
    orig.loc[1_100:, "k"] = "a"
    syn, ctl = _rows(300, 0, 2, "s"), _rows(280, 0, 3, "t")
    one, dt, local, dist = _both(orig, syn, ctl, dask_client)
    assert {type(v) for v in one.original["k"]} == {int, str}  # as loaded: not relabelled
    assert set(dt.first_values["original"]["k"]) == {0, 1, 2, 3, 4, "a"}
    schema = _coarse_schema(one.schema, "x")
    coarse_one = local.coarsened(plan_coarsening(local, "x", "numerical"), schema)
    coarse_dist = dist.coarsened(plan_coarsening(dist, "x", "numerical"), schema)
    assert {type(v) for v in coarse_one.original["k"]} == {str}  # relabelled in one process
    assert {type(v) for v in coarse_one.control["k"]} == {str}
    enc = Encoder(schema)
    for role in ("original", "synthetic", "control"):
        pd.testing.assert_frame_equal(_gathered(coarse_dist, role).astype(object),
                                      coarse_one.get(role).astype(object))
        enc.learn(coarse_one.get(role))
    for c in ("cat", "k", "x"):
        assert coarse_dist.encoder.labels(c) == enc.labels(c), c
