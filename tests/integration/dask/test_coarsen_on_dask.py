"""The coarsen-and-retest on a Dask cluster: the same coarsenings, coarsened tables and report
entries as one process (``run/actions.py``, ``distributed/_coarsen.py``)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest

from synthguard import evaluate

from ...helpers import (
    EXCESS_META,
    excess_people,
    one_real_missing,
    unique_value_excess_by_definition,
    without_seconds,
)

pytest.importorskip("dask.dataframe", reason="dask is not installed: pip install 'synthguard[dask]'")
pytest.importorskip("distributed", reason="distributed is not installed: pip install 'synthguard[dask]'")

META = {"columns": {"n": {"sdtype": "numerical"}, "w": {"sdtype": "numerical"},
                    "t": {"sdtype": "datetime"}, "cat": {"sdtype": "categorical"},
                    "g": {"sdtype": "categorical"}, "m": {"sdtype": "numerical"}}}


def _people(n: int, seed: int) -> pd.DataFrame:
    """Rows with a numerical column of many values (missing and -0.0 among them), one of few
    values, a datetime column, a categorical column of 14 labels (ties in their counts, missing
    values, a label ``other``) and one of two labels."""
    r = np.random.default_rng(seed)
    df = pd.DataFrame({
        "n": r.integers(0, 5_000, n).astype(float),
        "w": r.integers(0, 4, n).astype(float),
        "t": pd.Timestamp("2001-01-01") + pd.to_timedelta(r.integers(0, 9_000, n), unit="D"),
        "cat": r.choice([f"k{i}" for i in range(13)] + ["other"], n),
        "g": r.choice(["a", "b"], n), "m": r.permutation(n) * 2.0 + seed % 2})
    df.loc[r.random(n) < 0.05, "n"] = np.nan
    df.loc[r.random(n) < 0.03, "n"] = -0.0
    df.loc[r.random(n) < 0.05, "cat"] = None
    df["t"] = df["t"].dt.strftime("%Y-%m-%d")
    return df


def _uneven(df: pd.DataFrame, cuts: list[int]):
    """``df`` as a dask DataFrame cut at ``cuts`` (uneven partitions) with an empty one in the middle."""
    import dask.dataframe as dd

    edges = [0, *cuts, len(df)]
    pieces = [df.iloc[a:b] for a, b in zip(edges[:-1], edges[1:], strict=True)]
    pieces.insert(1, df.iloc[:0])
    return dd.concat([dd.from_pandas(p.reset_index(drop=True), npartitions=1, sort=False)
                      for p in pieces])


def _gathered(dt, role: str) -> pd.DataFrame:
    """A partitioned table gathered in canonical order (test only)."""
    table = dt.get(role)
    parts = dt.compute(table.parts)
    pos = dt.compute(table.position_args())
    frame = pd.concat(parts, ignore_index=True)
    return frame.iloc[np.argsort(np.concatenate(pos))].reset_index(drop=True)


def test_cluster_column_values_give_the_coarsening_and_coarsened_tables_of_one_process(dask_client):
    """The cluster's column-values provider decides the same bins (edges from exact quantiles of the
    encoded values), kept categories, unique-value excess and distinct counts as the pandas one, and
    builds the same coarsened tables (values, canonical row order, vocabularies), with a numerical,
    a datetime and a categorical column, on uneven partitions with an empty one."""
    from synthguard.data.coarsening import plan_coarsening
    from synthguard.data.tables import prepare_tables
    from synthguard.distributed._coarsen import ClusterValues
    from synthguard.distributed._tables import load_tables
    from synthguard.run.actions import local_values

    orig, ctl = _people(300, 1), _people(260, 2)
    syn = pd.concat([_people(200, 3), orig.iloc[:40]], ignore_index=True)
    # one real record alone in missing its m, and the release holds a missing m: a value of
    # no other real record held by the release, yet no value: not a hit
    orig.loc[45, "m"] = np.nan
    syn.loc[0, "m"] = np.nan
    ctl.loc[0, ["n", "cat"]] = [17.0, "k1"]  # (a one-row first partition: the schema's sample)
    one = prepare_tables(orig, syn, ctl, META, canonical_columns=True).in_canonical_order()
    dt = load_tables(_uneven(orig, [7, 200]), _uneven(syn, [150]), _uneven(ctl, [1, 2, 100]), META,
                     client=dask_client)
    assert 0 in dt.get("original").lengths.tolist()
    local, dist = local_values(one), ClusterValues(dt)
    cols = ["n", "w", "t", "cat", "g", "m"]
    excess = local.unique_value_excesses(cols)
    assert dist.unique_value_excesses(cols) == excess
    assert dist.unique_value_excesses(["t"]) == {"t": excess["t"]}
    distinct = local.distinct_real(cols)
    assert dist.distinct_real(cols) == distinct
    assert dist.distinct_real(["t", "g"]) == {"t": distinct["t"], "g": distinct["g"]}
    for col in cols:
        # the backends' count is the definition: distinct non-missing values of the real rows pooled
        assert distinct[col] == pd.concat([one.original[col], one.control[col]]).nunique(), col
    assert excess["n"] > 0  # the 40 copies single their records out
    assert plan_coarsening(dist, "w", "numerical") is None  # 4 values: nothing to bin
    assert plan_coarsening(dist, "g", "categorical") is None  # 2 categories: nothing to merge
    for col, sdtype in (("n", "numerical"), ("t", "datetime"), ("cat", "categorical")):
        want = plan_coarsening(local, col, sdtype)
        got = plan_coarsening(dist, col, sdtype)
        assert want is not None and got is not None
        assert (got.kind, got.how, got.labels, got.keep, got.other) == \
            (want.kind, want.how, want.labels, want.keep, want.other), col
        if want.kind == "bins":
            assert want.inner.tobytes() == got.inner.tobytes(), col
        spec = dataclasses.replace(one.schema.columns[col], sdtype="categorical", inferred=False,
                                   reason="coarsened", datetime_format=None, unit=None)
        schema = dataclasses.replace(one.schema, columns={**one.schema.columns, col: spec})
        coarse_one, coarse_dist = local.coarsened(want, schema), dist.coarsened(got, schema)
        assert coarse_dist.schema == coarse_one.schema
        for role in ("original", "synthetic", "control"):
            # (a string column that pandas 3 holds as ``str`` in one process is typed as objects
            # on a cluster, as it was before the coarsening)
            pd.testing.assert_frame_equal(_gathered(coarse_dist, role).astype(object),
                                          coarse_one.get(role).astype(object))
            assert _gathered(coarse_dist, role)[col].dtype == coarse_one.get(role)[col].dtype
        from synthguard.data.encoding import Encoder

        enc = Encoder(schema)
        for role in ("original", "synthetic", "control"):
            enc.learn(coarse_one.get(role))
        for c in schema.tabular_columns():
            if not schema.columns[c].is_numeric:
                assert coarse_dist.encoder.labels(c) == enc.labels(c), (col, c)
    assert plan_coarsening(local, "cat", "categorical").other == "(other)"  # a label is "other"


@pytest.mark.parametrize("seed", [0, 1, 3])
def test_unique_value_excess_on_dask_equals_one_process(dask_client, seed):
    """The unique-value excess is one count asked of either backend: the Dask backend's equals
    one process's bit for bit and the definition, on uneven partitions with an empty one, for a
    numerical column (missing values, -0.0), categories written as numbers (1 and 1.0 one
    category) and as text; seeds 1 and 3: exactly one real record (training, then control)
    misses each column and the release misses it too, a group the key groups count that is no
    value (counted as one, every excess would differ)."""
    from synthguard.data.tables import prepare_tables
    from synthguard.distributed._coarsen import ClusterValues
    from synthguard.distributed._tables import load_tables
    from synthguard.run.actions import local_values

    r = np.random.default_rng(seed)
    orig, ctl, syn = excess_people(r, 30), excess_people(r, 25), excess_people(r, 40)
    if seed:
        one_real_missing(orig, ctl, syn, ("original" if seed == 1 else "control", 3))
    one = prepare_tables(orig, syn, ctl, EXCESS_META, canonical_columns=True).in_canonical_order()
    dt = load_tables(_uneven(orig, [7, 20]), _uneven(syn, [15]), _uneven(ctl, [1, 12]), EXCESS_META,
                     client=dask_client)
    assert all(0 in dt.get(role).lengths.tolist() for role in ("original", "synthetic", "control"))
    cols = ["x", "c", "k"]
    local = local_values(one).unique_value_excesses(cols)
    dist = ClusterValues(dt).unique_value_excesses(cols)
    assert dist == local
    frames = {role: one.get(role) for role in one.roles}
    assert local == {c: unique_value_excess_by_definition(frames, c) for c in cols}
    if seed:
        for c in cols:
            assert dist[c] != unique_value_excess_by_definition(frames, c, missing_is_value=True), c


def test_coarsening_questions_of_the_dask_backend_equal_the_local_backend(dask_client, monkeypatch):
    """Encoded quantiles (bit for bit), distinct counts up to a cap, counts per category text and
    missing values of the Dask backend equal one process's backend, on uneven partitions with an
    empty one."""
    from synthguard.distributed._backend import DaskBackend
    from synthguard.distributed._tables import load_tables
    from synthguard.registry import Context

    orig, ctl = _people(300, 4), _people(120, 5)
    syn = _people(50, 6)
    local = Context.from_frames(orig, syn, ctl, META).data
    dist = DaskBackend(load_tables(_uneven(orig, [3, 250]), _uneven(syn, [10]), _uneven(ctl, [60]),
                                   META, client=dask_client))
    q = np.linspace(0.0, 1.0, 11)
    for roles in (("original", "control"), ("synthetic",)):
        want, got = local.encoded_quantiles(["n", "w", "t"], roles, q), \
            dist.encoded_quantiles(["n", "w", "t"], roles, q)
        for c in ("n", "w", "t"):
            assert want[c].tobytes() == got[c].tobytes(), (roles, c)
        for cap in (3, 5, 11, 10_000):
            assert dist.distinct_numbers(["n", "w", "t"], roles, cap) == \
                local.distinct_numbers(["n", "w", "t"], roles, cap), (roles, cap)
        for c in ("cat", "g"):
            pd.testing.assert_series_equal(dist.text_counts(c, roles), local.text_counts(c, roles),
                                           check_names=False, check_index_type=False)
    assert local.distinct_numbers(["w"], ("original",), 10) == {"w": 4}
    # many one-column key sets (and a two-column and a binned one) in one relation: each set's
    # groups, their counts and first positions, as one process's
    sets = [["n"], ["cat"], ["t"], ["g", "w"], ["n"]]
    by = ["set", "first_original", "first_control", "first_synthetic"]
    # hashed two sets per task here (three tasks per partition), eight by default
    from synthguard.distributed import _backend as dask_backend

    monkeypatch.setattr(dask_backend, "SETS_PER_TASK", 2)
    for bins in (None, {"n": np.array([100.0, 2_500.0])}):
        want = local.key_groups_many(sets, ("original", "control", "synthetic"), bins=bins)
        got = dist.key_groups_many(sets, ("original", "control", "synthetic"), bins=bins)
        want_rows = want.top(10**6, by, [True] * 4)
        assert len(want_rows) > 300 and sorted(set(want_rows["set"])) == [0, 1, 2, 3, 4]
        pd.testing.assert_frame_equal(got.top(10**6, by, [True] * 4)[list(want_rows.columns)],
                                      want_rows)
    roles = ("original", "control", "synthetic")
    missing = local.missing_counts(["n", "cat", "g"], roles)
    assert dist.missing_counts(["n", "cat", "g"], roles) == missing
    assert missing["n"]["original"] > 0 and missing["g"] == dict.fromkeys(roles, 0)


def _leaky(folder, seed: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Training, release and control rows of the ACS 2012 sample: the release is fresh rows whose
    income column is copied from training records (an exact income singles its record out)."""
    acs = pd.read_csv(folder / "acs12.csv").sample(frac=1.0, random_state=seed).reset_index(drop=True)
    acs = acs[["income", "age", "gender", "race", "edu", "hrs_work"]].dropna(subset=["income"])
    orig, ctl = acs.iloc[:300].reset_index(drop=True), acs.iloc[300:600].reset_index(drop=True)
    syn = ctl.assign(income=orig["income"].to_numpy())
    return orig, syn, ctl


@pytest.mark.metric_on_dask
def test_coarsen_and_retest_on_dask_equals_single_process(dask_client, shared_data):
    """A cluster run whose singling out alarms coarsens the driving column on the cluster and
    re-tests: the risks' coarsening entries (column, coarsening, levels and excess before and
    after, text) and actions.coarsen_retest equal one process's."""
    orig, syn, ctl = _leaky(shared_data, 0)
    kw = dict(metrics=["singling_out_univariate"], seed=3, retest_rows=0)
    plans: list = []
    single = evaluate(orig, syn, ctl, on_plan=plans.append, **kw).to_dict()
    dist = evaluate(orig, syn, ctl, client=dask_client, on_plan=plans.append, **kw).to_dict()
    # the plan of the cluster run counts the coarsened columns' re-tests as one process's does
    assert [p.retests for p in plans] == [2, 2]

    entries = [e for r in single["verdict"]["risks"] for e in r.get("coarsening") or ()]
    assert entries and entries[0]["column"] == "income"
    assert entries[0]["level_before"] in ("high", "medium")
    assert "skipped" not in single["actions"]["coarsen_retest"]
    assert _dumps(single["verdict"]["risks"]) == _dumps(dist["verdict"]["risks"])
    assert _dumps(single["actions"]["coarsen_retest"]) == _dumps(dist["actions"]["coarsen_retest"])


@pytest.mark.metric_on_dask
def test_coarsen_after_drop_on_dask_equals_single_process(dask_client):
    """A cluster run drops the release's verbatim copies (the drop-and-retest) and, singling out
    still alarming on the release without them, coarsens its driving column on those reduced
    partitioned tables: the coarsening entries (rows dropped first, levels after) equal one
    process's."""
    from .test_distributed_equality import META as META6
    from .test_distributed_equality import _leaky_tables

    orig, syn, ctl = _leaky_tables(5)
    meta = {**META6, "columns": {**META6["columns"], "f": {"sdtype": "numerical"}}}
    kw = dict(metrics=["exact_matches", "singling_out_univariate"], seed=2, retest_rows=1)
    single = evaluate(orig, syn, ctl, meta, **kw).to_dict()
    dist = evaluate(orig, syn, ctl, meta, client=dask_client, **kw).to_dict()
    so = next(r for r in single["verdict"]["risks"] if r["risk"] == "singling_out")
    assert so["coarsening"] and all(e["rows_dropped_first"] == 30 for e in so["coarsening"])
    assert so["coarsening"][0]["column"] == "f"
    assert _dumps(single["verdict"]["risks"]) == _dumps(dist["verdict"]["risks"])
    assert _dumps(single["actions"]) == _dumps(dist["actions"])


def _dumps(value) -> str:
    return json.dumps(without_seconds(value), sort_keys=True, default=str)
