"""The drop-and-retest on a cluster types the release without the dropped rows as one process
does (issue #31: the same verdict): a whole-number code unique on every row that the release
shares with the training table only through its copied rows is compared in the run and, once the
copies are dropped, read as a surrogate identifier (as a new evaluation reads it), so release
rows equal to training records on every other cell are then exact copies, on a cluster too."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from synthguard import evaluate

from ...helpers import coded_table, without_seconds

pytest.importorskip("dask.dataframe", reason="dask is not installed: pip install 'synthguard[dask]'")
pytest.importorskip("distributed", reason="distributed is not installed: pip install 'synthguard[dask]'")

METRICS = ["exact_matches", "near_copies", "close_neighbours"]


def _tables() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """300 training and 300 control records with a unique code; a release of 300 fresh rows, 40
    training rows copied (code included) and 30 training rows under new codes."""
    rng = np.random.default_rng(0)

    def table(keys: range) -> pd.DataFrame:
        return coded_table(keys, rng)

    original, control = table(range(300)), table(range(1000, 1300))
    twins = original.iloc[100:130].assign(code=[7 * i + 3 for i in range(5000, 5030)])
    release = pd.concat([table(range(2000, 2300)), original.iloc[:40], twins], ignore_index=True)
    return original, release, control


def _dumps(value) -> str:
    return json.dumps(without_seconds(value), sort_keys=True, default=str)


def test_retest_on_a_cluster_reads_a_code_shared_only_through_dropped_copies_as_one_process(dask_client):
    original, release, control = _tables()
    one = evaluate(original, release, control, metrics=METRICS, seed=0, retest_columns=0).to_dict()
    many = evaluate(original, release, control, metrics=METRICS, seed=0, retest_columns=0,
                    client=dask_client).to_dict()
    presence = {r["risk"]: r for r in one["verdict"]["risks"]}["presence"]["drop_retest"]
    # the run compares the code; without the 40 copies it is an identifier, and the 30 rows under
    # new codes are exact copies of their training records
    assert one["inferred_metadata"]["code"]["sdtype"] == "numerical"
    assert presence["rows_dropped"] == 40 and presence["metric_after"] == "exact_matches"
    said = one["actions"]["drop_retest"]["rounds"][0]["typed_otherwise"]
    assert [(c["column"], c["sdtype_before"], c["sdtype_after"]) for c in said] == [("code", "numerical", "id")]
    assert _dumps(one["verdict"]) == _dumps(many["verdict"])
    assert _dumps(one["records"]) == _dumps(many["records"])
    assert _dumps(one["actions"]["drop_retest"]) == _dumps(many["actions"]["drop_retest"])


def test_retest_of_nhefs_copies_on_a_cluster_gives_one_processs_verdict(dask_client, shared_data):
    """nhefs' ``seqn`` (a person number, unique on every row) is shared with the release only by
    the copied training rows (the drop-and-retest tests' leaky release): one process reads it as a
    surrogate identifier once they are dropped, and so does a cluster (before, its verdict after
    the drop differed)."""
    from ...unit.run.test_drop_retest import PRESENCE, _leaky_release

    data = _leaky_release("nhefs", shared_data)
    args = (data["original"], data["release"])
    one = evaluate(*args, control=data["control"], metrics=PRESENCE, seed=0).to_dict()
    many = evaluate(*args, control=data["control"], metrics=PRESENCE, seed=0, client=dask_client).to_dict()
    assert one["inferred_metadata"]["seqn"]["sdtype"] == "numerical"
    assert any(r.get("drop_retest") for r in one["verdict"]["risks"])
    for part in ("verdict", "records", "actions", "metrics"):
        assert _dumps(one[part]) == _dumps(many[part]), part


def test_a_sampled_cluster_run_types_the_release_without_its_rows_as_one_process(dask_client):
    """A sampled run decides identifiers on its whole tables, its re-test too: a code the release
    shares only with training records outside the sample stays compared once the copies are
    dropped, on a cluster as in one process."""
    from ...unit.run.test_without_rows import sampled_case

    original, release, control, _ = sampled_case()
    kw = dict(metrics=["exact_matches"], seed=0, retest_columns=0, max_records=200)
    one = evaluate(original, release, control, **kw).to_dict()
    many = evaluate(original, release, control, client=dask_client, **kw).to_dict()
    (round_1,) = many["actions"]["drop_retest"]["rounds"]
    assert round_1["rows_dropped"] == 600 and "typed_otherwise" not in round_1
    for part in ("verdict", "records", "actions", "sample"):
        assert _dumps(one.get(part)) == _dumps(many.get(part)), part


@pytest.mark.parametrize("max_records", [None, 250])
def test_retyped_tables_map_each_row_to_the_same_row_of_the_run(dask_client, max_records):
    """When a column is typed again every table is put in canonical order again: each release and
    training row of the re-typed tables maps to a row of the run holding the same values (a later
    round's rows behind the findings are named through these positions), sampled or not."""
    from synthguard.distributed._backend import fetch_rows
    from synthguard.distributed._tables import load_tables, without_rows_retyped
    from synthguard.run.cluster import sample_on_cluster

    original, release, control = _tables()
    dt = load_tables(original, release, control, None, client=dask_client, npartitions=3)
    if max_records:
        dt = sample_on_cluster(dt, max_records, 0)[0]
    syn = fetch_rows(dt, "synthetic", np.arange(dt.get("synthetic").n_rows))
    new, release_at, training_at = without_rows_retyped(dt, syn["code"].isin(original["code"]).to_numpy())
    assert new.schema.sdtype("code") == "id" and training_at is not None
    cols = ["code", "x", "y", "z"]
    for role, at in (("synthetic", release_at), ("original", training_at)):
        got = fetch_rows(new, role, np.arange(new.get(role).n_rows))[cols].reset_index(drop=True)
        want = fetch_rows(dt, role, at)[cols].reset_index(drop=True)
        assert got.astype(str).equals(want.astype(str)), role


def test_a_sampled_cluster_run_holds_only_the_whole_tables_candidate_columns(dask_client, monkeypatch):
    """Once sampled, the run lets the whole training and control tables go (review s34: the
    re-test's ``DistTables.whole`` kept their held partitions on the workers for the whole run):
    only the columns that could read as an identifier stay, as one process keeps them
    (``Tables.whole_columns``); whole tables that hold nothing on the cluster are kept as they are
    (nothing read at sampling)."""
    import gc
    import time

    import synthguard.distributed._tables as tables_module
    from synthguard.distributed._tables import load_tables
    from synthguard.run.cluster import sample_on_cluster

    from ...unit.run.test_without_rows import sampled_case

    original, release, control, _ = sampled_case()
    dt = load_tables(original, release, control, None, client=dask_client, npartitions=3)
    whole = {r: [p.key for p in dt.get(r).input_parts] for r in ("original", "control")}
    assert all(dt.get(r).persisted for r in whole)  # held on the workers: their keys tell
    sampled, _, _ = sample_on_cluster(dt, 200, 0)
    del dt
    gc.collect()

    def held() -> set:
        return set(dask_client.run_on_scheduler(lambda dask_scheduler: [
            k for k, ts in dask_scheduler.tasks.items() if ts.state == "memory"]))

    deadline = time.monotonic() + 5.0
    while any(k in held() for keys in whole.values() for k in keys) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [k for keys in whole.values() for k in keys if k in held()]
    heads = dask_client.gather(dask_client.compute([sampled.whole[r].input_parts[0] for r in whole]))
    assert [list(h.columns) for h in heads] == [["code"], ["code"]]  # unique and complete in both
    assert [sampled.whole[r].n_rows for r in whole] == [3000, 3000]
    del sampled, heads
    monkeypatch.setattr(tables_module, "PERSIST_SHARE", 0.0)  # nothing held: read from the frames
    monkeypatch.setattr(tables_module, "RAW_PERSIST_SHARE", 0.0)
    dt = load_tables(original, release, control, None, client=dask_client, npartitions=3)
    sampled, _, _ = sample_on_cluster(dt, 200, 0)
    assert sampled.whole_columns is None and all(sampled.whole[r] is dt.get(r) for r in whole)


def test_a_sampled_cluster_run_that_cannot_retest_keeps_none_of_the_whole_tables(dask_client, monkeypatch):
    """Without a drop round nothing re-types the release: the whole tables' candidate columns
    are not looked for (no pass over the held partitions) and nothing of the whole tables stays."""
    import synthguard.run.cluster as cluster_module
    from synthguard.distributed._tables import load_tables
    from synthguard.run.cluster import sample_on_cluster

    from ...unit.run.test_without_rows import sampled_case

    original, release, control, _ = sampled_case()
    looked = []
    real = cluster_module.sample_on_cluster
    monkeypatch.setattr(cluster_module, "sample_on_cluster",
                        lambda *a, **k: looked.append(k.get("retest")) or real(*a, **k))
    dt = load_tables(original, release, control, None, client=dask_client, npartitions=3)
    sampled, _, _ = sample_on_cluster(dt, 200, 0, retest=False)
    assert sampled.whole == {} and sampled.whole_columns == ()
    assert sampled.get("original").n_rows == 200
    for rows in (0, None):
        evaluate(original, release, control, metrics=["exact_matches"], seed=0, retest_columns=0,
                 retest_rows=rows, max_records=200, client=dask_client)
    assert looked == [False, True]
