"""Every number of a distributed run equals the single-process run for the same seed.

The reports are compared as whole JSON entries (values, intervals, baselines, details, records), so a
difference in any number fails. Inputs carry missing values, duplicated rows, exact copies, ties,
-0.0 next to 0.0, a free-text column and more partitions than workers.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from synthguard import evaluate

from ...helpers import without_seconds

pytest.importorskip("dask.dataframe", reason="dask is not installed: pip install 'synthguard[dask]'")
pytest.importorskip("distributed", reason="distributed is not installed: pip install 'synthguard[dask]'")


def _frame(n: int, seed: int) -> pd.DataFrame:
    r = np.random.default_rng(seed)
    df = pd.DataFrame({"a": r.integers(0, 5, n).astype(float), "b": r.choice(["x", "y", "z"], n),
                       "c": r.normal(size=n).round(1), "d": r.choice(["p", "q", "r"], n),
                       "e": r.choice([True, False], n)})
    df.loc[r.random(n) < 0.1, "c"] = np.nan
    df.loc[r.random(n) < 0.05, "b"] = None
    df.loc[r.random(n) < 0.05, "c"] = -0.0
    return df


META = {"columns": {"a": {"sdtype": "numerical"}, "b": {"sdtype": "categorical"},
                    "c": {"sdtype": "numerical"}, "d": {"sdtype": "categorical"},
                    "e": {"sdtype": "boolean"}},
        "quasi_identifiers": ["a", "b"], "sensitive": ["d", "e"]}


def _entries(report, names) -> dict[str, str]:
    out = {}
    for name in names:
        out[name] = json.dumps(without_seconds(dict(report[name])), sort_keys=True, default=str)
    return out


def _both_backends(client, orig: pd.DataFrame, syn: pd.DataFrame, ctl: pd.DataFrame, meta: dict,
                   npartitions: int = 3):
    """One process's backend and the Dask backend (``npartitions`` a table) over the same tables."""
    from synthguard.distributed import cluster_backend
    from synthguard.distributed._tables import load_tables
    from synthguard.registry import Context

    local = Context.from_frames(orig, syn, ctl, meta).data
    return local, cluster_backend(load_tables(orig, syn, ctl, meta, client=client,
                                             npartitions=npartitions), "auto")


def _assert_same(single, dist, names) -> None:
    a, b = _entries(single, names), _entries(dist, names)
    for name in names:
        assert dist[name]["status"] == "ok", (name, dist[name].get("reason"), dist[name].get("traceback"))
        assert a[name] == b[name], name


@pytest.mark.metric_on_dask
def test_every_distributed_metric_equals_single_process(dask_client):
    orig = _frame(500, 1)
    syn = pd.concat([_frame(400, 2), orig.iloc[:40], orig.iloc[:5]], ignore_index=True)  # copies, twice
    ctl = _frame(500, 3)
    metrics = {"exact_matches": {}, "ims": {}, "dcr": {"n_boot": 50}, "nndr": {"n_boot": 50}, "cap": {},
               "zero_cap": {"sensitive_fields": ["d"]}, "k_anonymity": {"k": 3}}
    single = evaluate(orig, syn, ctl, META, metrics=metrics, seed=7)
    dist = evaluate(orig, syn, ctl, META, metrics={**metrics, "generalized_cap": {}}, seed=7,
                    client=dask_client)
    _assert_same(single, dist, list(metrics))
    # the verdict's tests (the joint test over every metric's members-vs-control evidence) too
    assert json.dumps(single.to_dict()["verdict"]["tests"], sort_keys=True, default=str) == \
        json.dumps(dist.to_dict()["verdict"]["tests"], sort_keys=True, default=str)
    assert single.verdict.level == dist.verdict.level == "high"
    assert single["exact_matches"]["result"]["synthetic_match_rate"]["k"] >= 45
    # a metric without a distributed form is skipped with its reason, never silently dropped
    assert dist["generalized_cap"]["status"] == "skipped"
    assert "distributed" in dist["generalized_cap"]["reason"]


@pytest.mark.metric_on_dask
def test_hash_shuffled_relations_equal_single_process(dask_client, monkeypatch):
    """Above ``SHUFFLE_ROWS`` rows a table's group-bys are hash-shuffled (one output partition per
    input partition) and their joins shuffled too, below it grouped into one partition and
    broadcast; no test table is that large, so both are run here: the key-relation tests' entries
    (values, intervals, records) and ``first_positions``' dask group-by equal one process's."""
    from synthguard.distributed import _backend, _tables

    orig = _frame(500, 21)
    syn = pd.concat([_frame(400, 22), orig.iloc[:50], orig.iloc[:5]], ignore_index=True)
    ctl = _frame(500, 23)
    meta = {**META, "quasi_identifiers": ["c", "a", "b"]}
    metrics = {"exact_matches": {}, "cap": {}, "k_anonymity": {"k": 3}, "qi_linkage": {"top_n": 5}}
    # the entries only: no re-test of the advice (other tests cover it on a cluster)
    quick = {"metrics": metrics, "seed": 3, "retest_rows": 0, "retest_columns": 0}
    single = evaluate(orig, syn, ctl, meta, **quick)
    monkeypatch.setattr(_tables, "SHUFFLE_ROWS", 0)
    monkeypatch.setattr(_backend, "DRIVER_GROUP_ROWS", 0)
    shuffled = evaluate(orig, syn, ctl, meta, **quick, client=dask_client)
    _assert_same(single, shuffled, list(metrics))


def test_parquet_folder_text_column_and_subsampled_control(dask_client, tmp_path):
    r = np.random.default_rng(5)
    orig = _frame(450, 11)
    orig["note"] = r.choice(["call me", "no", None, "later today"], len(orig))
    syn = pd.concat([_frame(300, 12).assign(note=r.choice(["no", "x"], 300)), orig.iloc[100:130]],
                    ignore_index=True)
    ctl = _frame(200, 13).assign(note="no")  # smaller than the original: the closer share subsamples it
    meta = {**META, "columns": {**META["columns"], "note": {"sdtype": "text"}}}
    folders = {}
    for role, df in (("original", orig), ("synthetic", syn), ("control", ctl)):
        folder = tmp_path / role
        folder.mkdir()
        for i, part in enumerate(np.array_split(np.arange(len(df)), 3)):
            df.iloc[part].to_parquet(folder / f"part-{i}.parquet", index=False)
        folders[role] = folder
    metrics = {"exact_matches": {"top_n": 5}, "dcr": {"n_boot": 50},
               "k_anonymity": {"continuous_column_names": ["a"], "num_discrete_bins": 3},
               # sample-based: the metric's own seeded sampler picks rows, fetched from the partitions
               "distinguishability": {"max_rows": 300, "n_estimators": 20, "n_permutations": 1,
                                      "n_boot": 50, "n_jobs": 1}}
    single = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=3)
    dist = evaluate(str(folders["original"]), str(tmp_path / "synthetic" / "*.parquet"),
                    folders["control"], meta, metrics=metrics, seed=3, client=dask_client)
    _assert_same(single, dist, list(metrics))
    assert single["dcr"]["result"]["share_closer_to_original"]["reference_rows"] == 200


@pytest.mark.metric_on_dask
def test_real_data_cap_with_two_sensitive_columns(dask_client, shared_data):
    df = pd.read_csv(shared_data / "acs12.csv")
    r = np.random.default_rng(0)
    idx = r.permutation(len(df))
    orig, ctl = df.iloc[idx[:1200]].reset_index(drop=True), df.iloc[idx[1200:]].reset_index(drop=True)
    syn = pd.concat([ctl.iloc[:500], orig.iloc[:100]], ignore_index=True)
    meta = {"quasi_identifiers": ["gender", "race", "edu"], "sensitive": ["employment", "disability"]}
    metrics = {"cap": {}, "zero_cap": {}, "k_anonymity": {}, "exact_matches": {}}
    single = evaluate(orig, syn, None, meta, metrics=metrics, seed=1)
    dist = evaluate(orig, syn, None, meta, metrics=metrics, seed=1, client=dask_client)
    _assert_same(single, dist, list(metrics))
    assert single["cap"]["result"]["per_sensitive_field"]


def test_partitioned_knn_equals_engine_with_ties(dask_client):
    """Top-k merge over reference partitions: same distances AND indices (ties by global index, which
    is the canonical position in both runs)."""
    from synthguard.data.encoding import EncodedView
    from synthguard.data.tables import prepare_tables
    from synthguard.distributed._knn import kneighbors_distributed
    from synthguard.distributed._tables import load_tables
    from synthguard.engine.neighbors import gower, kneighbors

    r = np.random.default_rng(2)
    orig = pd.DataFrame({"u": r.integers(0, 3, 300).astype(float), "v": r.choice(["s", "t"], 300)})
    syn = pd.DataFrame({"u": r.integers(0, 3, 120).astype(float), "v": r.choice(["s", "t"], 120)})
    meta = {"columns": {"u": {"sdtype": "numerical"}, "v": {"sdtype": "categorical"}}}
    tables = prepare_tables(orig, syn, None, meta).in_canonical_order()
    view = EncodedView(tables)
    cols = ["u", "v"]
    metric = gower(view.ranges(cols), clip=True, normalise=True)
    dt = load_tables(orig, syn, None, meta, client=dask_client, npartitions=4)
    np.testing.assert_array_equal(dt.ranges(cols), view.ranges(cols))
    subset = np.sort(r.choice(300, 170, replace=False))
    # one tree for all partitions, then one tree per partition: the search runs in waves, each
    # seeded with the k best of the trees before
    for tree_bytes, backend in ((2**28, "auto"), (8 * 2 * 80, "auto"), (2**28, "numpy")):
        for q, exclude in (("synthetic", False), ("original", True)):
            want = kneighbors(view.block(q, cols), view.block("original", cols), metric, 3, exclude_self=exclude)
            d, i = kneighbors_distributed(dt, q, "original", cols, metric, 3, tree_bytes=tree_bytes,
                                          backend=backend)
            np.testing.assert_array_equal(d, want.distances)
            np.testing.assert_array_equal(i, want.indices)
        want = kneighbors(view.block("synthetic", cols), view.block("original", cols).take(subset), metric, 2)
        d, i = kneighbors_distributed(dt, "synthetic", "original", cols, metric, 2, reference_rows=subset,
                                      tree_bytes=tree_bytes, backend=backend)
        np.testing.assert_array_equal(d, want.distances)
        np.testing.assert_array_equal(i, want.indices)


def _canonical_rows(dt, role) -> pd.DataFrame:
    """A distributed table's rows put at their canonical positions (``positions``)."""
    table = dt.get(role)
    parts = dt.compute(table.parts)
    pos = np.concatenate(dt.compute(table.positions))
    for part, p in zip(parts, dt.compute(table.positions), strict=True):
        assert len(part) == len(p) and (np.diff(p) > 0).all()  # each partition locally canonical
    np.testing.assert_array_equal(np.sort(pos), np.arange(table.n_rows))
    return pd.concat(parts, ignore_index=True).iloc[np.argsort(pos)].reset_index(drop=True)


def test_canonical_order_and_input_row_numbers_as_in_one_process(dask_client):
    """Rows get the canonical positions of ``Tables.in_canonical_order`` (the same rows at the same
    positions, the same map back to input rows) without leaving their input partition, also when a
    column's dtype differs between partitions (a boolean column with missing values in one
    partition only); records name the INPUT rows of a shuffled input, as in one process."""
    from synthguard.data.tables import prepare_tables
    from synthguard.distributed._tables import load_tables

    orig = _frame(300, 21)
    orig["e"] = orig["e"].astype(object)
    orig.loc[[3, 7, 7 + 75], "e"] = None  # missing in the first two of four partitions only
    syn = pd.concat([_frame(150, 22), orig.iloc[:30], orig.iloc[:30]], ignore_index=True)
    syn = syn.iloc[np.random.default_rng(0).permutation(len(syn))].reset_index(drop=True)
    canon = prepare_tables(orig, syn, None, META).in_canonical_order()
    dt = load_tables(orig, syn, None, META, client=dask_client, npartitions=4)
    for role in ("original", "synthetic"):
        np.testing.assert_array_equal(dt.row_numbers[role], canon.row_numbers[role])
        rows = _canonical_rows(dt, role)
        assert len(dt.get(role).parts) > 1 and dt.get(role).lengths.sum() == len(rows)
        for col in rows:
            assert rows[col].isna().equals(canon.get(role)[col].isna())
            assert rows[col].dropna().astype(str).tolist() == canon.get(role)[col].dropna().astype(str).tolist()
    metrics = {"exact_matches": {}, "dcr": {"n_boot": 30}, "k_anonymity": {"k": 3}}
    single = evaluate(orig, syn, None, META, metrics=metrics, seed=2)
    dist = evaluate(orig, syn, None, META, metrics=metrics, seed=2, client=dask_client)
    _assert_same(single, dist, list(metrics))
    recs = dist["exact_matches"]["result"]["records"]  # input rows: each one is copied into syn
    copied = set(map(tuple, syn.astype(str).to_numpy()))
    assert len(recs) >= 10 and all(tuple(orig.astype(str).iloc[r["original_row"]]) in copied for r in recs)


def test_shuffled_duplicates_across_partitions_equal_single_process(dask_client):
    """Input order far from canonical order: duplicated rows scattered over 4 partitions of every
    table, so which of several tied rows a record names, the ties of the neighbour searches, the
    seeded samples and the categorical codes (first CANONICAL appearance, not first appearance in
    partition order) must all come out as in one process."""
    from synthguard.data.encoding import EncodedView
    from synthguard.data.tables import prepare_tables
    from synthguard.distributed._tables import load_tables

    r = np.random.default_rng(17)

    def dup_shuffled(base: pd.DataFrame, extra: list[pd.DataFrame]) -> pd.DataFrame:
        df = pd.concat([base, *extra], ignore_index=True)
        return df.iloc[r.permutation(len(df))].reset_index(drop=True)

    def frame(n: int, seed: int) -> pd.DataFrame:  # more categories: first appearances differ more
        df = _frame(n, seed)
        df["d"] = np.random.default_rng(seed + 100).choice(list("pqrstuvw"), n)
        return df

    base = frame(160, 31)
    orig = dup_shuffled(base, [base.iloc[:70], base.iloc[:30], base.iloc[100:110]])
    syn = dup_shuffled(frame(200, 32), [base.iloc[:50], base.iloc[20:60], orig.iloc[:15]])
    ctl = dup_shuffled(frame(180, 33), [base.iloc[120:130]])
    dt = load_tables(orig, syn, ctl, META, client=dask_client, npartitions=4)
    canon = prepare_tables(orig, syn, ctl, META).in_canonical_order()
    view = EncodedView(canon)
    naive = False
    for c in ("b", "d", "e"):
        assert dt.encoder.labels(c) == view.encoder.labels(c), c
        # the first appearance in partition order (each partition locally canonical) differs
        rows = pd.concat([p for role in dt.roles for p in dt.compute(dt.get(role).parts)], ignore_index=True)
        naive |= [str(v) for v in pd.unique(rows[c].dropna())] != [str(v) for v in view.encoder.labels(c)]
    assert naive, "the test data must make partition-order first appearance differ from canonical"
    for role in dt.roles:
        np.testing.assert_array_equal(dt.row_numbers[role], canon.row_numbers[role])
        assert len(dt.get(role).parts) == 4
    metrics = {"exact_matches": {"top_n": 60}, "ims": {}, "cap": {"max_records": 200},
               "zero_cap": {"sensitive_fields": ["d"]}, "k_anonymity": {"k": 4, "max_records": 200},
               "dcr": {"n_boot": 30}, "nndr": {"n_boot": 30},
               "distinguishability": {"max_rows": 300, "n_estimators": 15, "n_permutations": 1,
                                      "n_boot": 30, "n_jobs": 1}}
    single = evaluate(orig, syn, ctl, META, metrics=metrics, seed=5)
    dist = evaluate(orig, syn, ctl, META, metrics=metrics, seed=5, client=dask_client)
    _assert_same(single, dist, list(metrics))
    assert len(single["exact_matches"]["result"]["records"]) >= 40


def test_prepare_quirks_as_in_one_process(dask_client):
    """The partitions are prepared as ``prepare_tables`` prepares whole tables: ``inf`` read as
    missing, whitespace stripped, and labels written as numbers in one table and strings in another
    unified, decided on the first 1000 non-missing labels of each table across partitions (a string
    after those in column ``h`` does not count)."""
    r = np.random.default_rng(8)
    n = 1300

    def table(seed: int, as_text: bool) -> pd.DataFrame:
        q = np.random.default_rng(seed)
        g = q.integers(1, 5, n)
        h = pd.Series(q.integers(1, 4, n), dtype=object)
        if not as_text:
            h.iloc[1100:1110] = "7"  # beyond the first 1000 labels: no unification
        c = q.integers(0, 4, n).astype(float)
        c[q.random(n) < 0.02] = np.inf
        return pd.DataFrame({"g": pd.Series([str(v) for v in g] if as_text else list(g), dtype=object),
                             "h": h, "c": c, "b": q.choice(["x", " x", "y ", "z"], n)})

    orig = table(1, False)
    syn = pd.concat([table(2, True), orig.iloc[:200]], ignore_index=True)
    syn = syn.iloc[r.permutation(len(syn))].reset_index(drop=True)
    meta = {"columns": {"g": {"sdtype": "categorical"}, "h": {"sdtype": "categorical"},
                        "c": {"sdtype": "numerical"}, "b": {"sdtype": "categorical"}},
            "quasi_identifiers": ["g", "b"], "sensitive": ["h"]}
    metrics = {"exact_matches": {}, "ims": {}, "cap": {}, "k_anonymity": {"k": 3}}
    single = evaluate(orig, syn, None, meta, metrics=metrics, seed=1)
    dist = evaluate(orig, syn, None, meta, metrics=metrics, seed=1, client=dask_client)
    _assert_same(single, dist, list(metrics))
    assert single["exact_matches"]["result"]["synthetic_match_rate"]["k"] > 200  # g unified: 1 == "1"


def test_csv_floats_read_as_in_one_process(dask_client, tmp_path):
    """CSV inputs are parsed with the same float parser as one process (``CSV_FLOAT_KW``: pandas 2's
    default parser can be one unit in the last place off), so distances agree to the bit."""
    r = np.random.default_rng(9)
    n = 400
    orig = pd.DataFrame({"u": np.log(r.random(n)), "v": r.normal(size=n) * 1e-3, "w": r.choice(["s", "t"], n)})
    syn = pd.DataFrame({"u": np.log(r.random(n)), "v": r.normal(size=n) * 1e-3, "w": r.choice(["s", "t"], n)})
    for role, df in (("orig", orig), ("syn", syn)):
        df.to_csv(tmp_path / f"{role}.csv", index=False, float_format="%.17g")
        for i, part in enumerate(np.array_split(np.arange(n), 3)):
            df.iloc[part].to_csv(tmp_path / f"{role}-{i}.csv", index=False, float_format="%.17g")
    meta = {"columns": {"u": {"sdtype": "numerical"}, "v": {"sdtype": "numerical"},
                        "w": {"sdtype": "categorical"}}}
    metrics = {"dcr": {"n_boot": 20}}
    single = evaluate(str(tmp_path / "orig.csv"), str(tmp_path / "syn.csv"), None, meta, metrics=metrics, seed=1)
    dist = evaluate(str(tmp_path / "orig-*.csv"), str(tmp_path / "syn-*.csv"), None, meta, metrics=metrics,
                    seed=1, client=dask_client)
    _assert_same(single, dist, list(metrics))


def test_canonicalise_when_partition_dtypes_differ(dask_client):
    """A boolean column held as ``bool`` in one partition and as objects (with missing values) in
    another hashes as the whole table does (objects): the order is that of ``canonical_order``, and
    every row stays in its input partition, sorted there by canonical position."""
    from dask import delayed

    from synthguard.data.tables import canonical_order
    from synthguard.distributed._tables import DistTable, canonicalise

    r = np.random.default_rng(4)
    a = pd.DataFrame({"x": r.integers(0, 3, 40).astype(float), "e": r.choice([True, False], 40)})
    b = pd.DataFrame({"x": r.integers(0, 3, 30).astype(float),
                      "e": pd.Series(r.choice([True, False, None], 30), dtype=object)})
    assert a["e"].dtype == bool and b["e"].dtype == object
    whole = pd.concat([a, b], ignore_index=True)
    assert whole["e"].dtype == object
    # an empty partition (whose boolean column has no bool dtype) says nothing about the dtypes
    table = DistTable("original", "t", [delayed(a), delayed(a.iloc[:0].astype(object)), delayed(b)],
                      np.array([40, 0, 30]))
    canon = canonicalise(table, dask_client, ("e",))
    order = canonical_order(whole)
    np.testing.assert_array_equal(canon.row_numbers, order)
    assert len(table.parts) == 3 and list(table.lengths) == [40, 0, 30]
    parts = dask_client.gather(dask_client.compute(table.parts))
    positions = dask_client.gather(dask_client.compute(table.positions))
    rank = np.argsort(order)
    for j, (lo, hi) in enumerate(((0, 40), (40, 40), (40, 70))):  # same rows, by canonical position
        np.testing.assert_array_equal(positions[j], np.sort(rank[lo:hi]))
        want = whole.iloc[order[positions[j]]].reset_index(drop=True)
        assert parts[j].astype(str).equals(want.astype(str))
    # the distinct values in order of first canonical appearance (a value's first occurrence)
    assert list(dict.fromkeys(canon.first_values["e"])) == list(pd.unique(whole["e"].iloc[order].dropna()))
    one = DistTable("original", "t", [delayed(a)], np.array([40]))  # one partition: sorted in place
    np.testing.assert_array_equal(canonicalise(one, dask_client).row_numbers, canonical_order(a))
    assert dask_client.compute(one.parts[0]).result().equals(a.iloc[canonical_order(a)].reset_index(drop=True))


def test_cli_scheduler_on_partitioned_parquet(dask_client, tmp_path):
    from click.testing import CliRunner

    from synthguard.cli import main

    orig = _frame(300, 21)
    syn = pd.concat([_frame(200, 22), orig.iloc[:25]], ignore_index=True)
    for role, df in (("original", orig), ("synthetic", syn)):
        (tmp_path / role).mkdir()
        for i, part in enumerate(np.array_split(np.arange(len(df)), 2)):
            df.iloc[part].to_parquet(tmp_path / role / f"part-{i}.parquet", index=False)
    (tmp_path / "meta.json").write_text(json.dumps(META))
    out = tmp_path / "report.json"
    res = CliRunner().invoke(main, ["evaluate", "-o", str(tmp_path / "original"),
                                    "-s", str(tmp_path / "synthetic" / "*.parquet"),
                                    "-m", str(tmp_path / "meta.json"), "--metrics", "exact_matches,ims",
                                    "--scheduler", dask_client.scheduler.address, "--json", str(out)])
    assert res.exit_code == 0, res.output
    got = json.loads(out.read_text())["metrics"]
    single = evaluate(orig, syn, None, META, metrics=["exact_matches", "ims"]).to_dict()["metrics"]
    for name in ("exact_matches", "ims"):
        assert got[name]["result"] == json.loads(json.dumps(single[name]["result"], default=str)), name
    assert got["exact_matches"]["result"]["synthetic_match_rate"]["k"] >= 25  # the copies, at least


def _with_texts(frame: pd.DataFrame, seed: int) -> pd.DataFrame:
    r = np.random.default_rng(seed)
    words = np.array([f"w{i}" for i in range(60)])
    texts = [" ".join(w) for w in r.choice(words, (len(frame), 9))]
    out = frame.assign(t=texts)
    out.loc[r.random(len(frame)) < 0.05, "t"] = None
    return out


#: named runs (one metric under a name of its own, most with other parameters): with the privacy
#: preset's metrics of tests/integration/dask/test_distributed_privacy_preset.py, every metric the
#: Dask backend supports (checked there)
NAMED_RUNS = [
    {"name": "text_exact", "metric": "text_exact_matches", "threshold": 1.0},
    {"name": "em_top3", "metric": "exact_matches", "top_n": 3},
    {"name": "dcr_p10", "metric": "dcr", "percentile": 10.0, "n_boot": 30},
    {"name": "nndr_b", "metric": "nndr", "n_boot": 30},
    {"name": "zero_cap_d", "metric": "zero_cap", "sensitive_fields": ["d"], "max_records": 7},
    {"name": "k_anon_binned", "metric": "k_anonymity", "k": 3, "continuous_column_names": ["c"],
     "num_discrete_bins": 4},
    {"name": "l_div_binned", "metric": "l_diversity", "l": 3, "quasi_identifiers": ["a", "c"],
     "continuous_column_names": ["c"], "num_discrete_bins": 4},
    {"name": "dist_small", "metric": "distinguishability", "max_rows": 200, "n_estimators": 10,
     "n_permutations": 1, "n_boot": 20, "n_jobs": 1},
    {"name": "dcrp_sub", "metric": "dcr_overfitting_protection", "num_rows_subsample": 120,
     "num_iterations": 2, "max_records": 5},
    {"name": "mia", "metric": "membership_attacks", "n_perm": 99, "max_rows": 150,
     "max_reference_rows": 300, "max_fit_rows": 200, "top_records": 3},
    {"name": "nrs_compat", "metric": "new_row_synthesis", "sdmetrics_compat": True, "max_records": 3},
    {"name": "dp_binned", "metric": "disclosure_protection", "computation_method": "zero_cap",
     "known_column_names": ["a", "c"], "continuous_column_names": ["c"], "num_discrete_bins": 5},
    {"name": "link", "metric": "linkability", "n_attacks": 150},
    {"name": "infer_c", "metric": "inference", "secret": "c", "n_attacks": 150},
    {"name": "cdmia", "metric": "closest_distance_mia", "max_rows": 200, "n_boot": 20},
    {"name": "dbp", "metric": "dcr_baseline_protection", "num_rows_subsample": 100, "max_records": 3},
    {"name": "so_uni", "metric": "singling_out_univariate", "n_attacks": 100},
    {"name": "so_multi", "metric": "singling_out_multivariate", "n_attacks": 100, "n_cols": 2},
    {"name": "anon", "metric": "anonymeter", "n_attacks": 60, "n_cols": 2},
]


@pytest.mark.metric_on_dask
def test_named_runs_of_backend_metrics_equal_single_process(dask_client):
    """Named runs (one metric under its own name, most with other parameters than the default) run
    the same metric code with the Dask backend, on a table with missing values, -0.0, copies and a
    text column: equal to one process entry by entry (the run's name, ``metric``, params, result).
    Each metric's default run is compared by its own test in this module and by the privacy
    preset's test."""
    orig = _with_texts(_frame(400, 41), 4)
    syn = pd.concat([_with_texts(_frame(300, 42), 5), orig.iloc[:30]], ignore_index=True)
    ctl = _with_texts(_frame(350, 43), 6)
    meta = {**META, "columns": {**META["columns"], "t": {"sdtype": "text"}}}
    single = evaluate(orig, syn, ctl, meta, metrics=NAMED_RUNS, seed=11)
    dist = evaluate(orig, syn, ctl, meta, metrics=NAMED_RUNS, seed=11, client=dask_client)
    _assert_same(single, dist, [m["name"] for m in NAMED_RUNS])
    assert dist["dcr_p10"]["metric"] == "dcr" and dist["dcr_p10"]["result"]["percentile"] == 10.0


@pytest.mark.metric_on_dask
def test_l_diversity_and_its_anonymised_evidence_on_dask_equal_single_process(dask_client):
    """l_diversity asks the backend, per release row, for its class size and the distinct sensitive
    tuples of its class (``Backend.key_distinct``), reduced to a (class size, distinct) table on the
    driver; its records are the backend's top rows. With a binned continuous quasi-identifier, a
    binned sensitive column, two sensitive columns, missing values (in quasi-identifiers and
    sensitive columns), duplicated rows and classes below ``l``, in an anonymised release (so the
    evidence is computed and the verdict tests it), every entry (records included) and the verdict's
    tests are the JSON of one process."""
    orig = _frame(500, 71)
    orig.loc[orig.index % 17 == 0, "d"] = None
    syn = pd.concat([_frame(400, 72), orig.iloc[:40], orig.iloc[:5]], ignore_index=True)
    syn["e"] = syn["e"].astype(object)
    syn.loc[syn.index % 13 == 0, "e"] = None
    ctl = _frame(450, 73)
    metrics = [
        "l_diversity",  # META: quasi-identifiers a, b; sensitive d, e
        {"name": "l_div_binned_qi", "metric": "l_diversity", "l": 3, "quasi_identifiers": ["a", "b", "c"],
         "continuous_column_names": ["c"], "num_discrete_bins": 4},
        {"name": "l_div_binned_sensitive", "metric": "l_diversity", "l": 7, "quasi_identifiers": ["a", "b"],
         "sensitive_columns": ["c", "d"], "continuous_column_names": ["c"], "num_discrete_bins": 3,
         "max_records": 9},
        {"name": "l_div_no_records", "metric": "l_diversity", "l": 4, "quasi_identifiers": ["a", "b", "d"],
         "sensitive_columns": ["e"], "max_records": 0},
    ]
    names = [m if isinstance(m, str) else m["name"] for m in metrics]
    single = evaluate(orig, syn, ctl, META, metrics=metrics, seed=5, release_type="anonymised")
    dist = evaluate(orig, syn, ctl, META, metrics=metrics, seed=5, release_type="anonymised",
                    client=dask_client)
    _assert_same(single, dist, names)
    results = {n: single[n]["result"] for n in names}
    assert all(r["evidence"] is not None for r in results.values())  # computed: anonymised release
    assert results["l_div_binned_qi"]["continuous_column_names"] == ["c"]
    assert results["l_div_binned_sensitive"]["synthetic"]["n_records_below"] > 0
    assert 0 < len(results["l_div_binned_qi"]["records"]) <= 100
    assert len(results["l_div_binned_sensitive"]["records"]) == 9
    assert results["l_div_no_records"]["synthetic"]["n_records_below"] > 0
    assert not results["l_div_no_records"]["records"]
    tests = [json.dumps(r.to_dict()["verdict"]["tests"], sort_keys=True, default=str) for r in (single, dist)]
    assert tests[0] == tests[1]
    assert {t["metric"] for t in single.to_dict()["verdict"]["tests"]} == set(names)


@pytest.mark.metric_on_dask
def test_detection_limits_on_dask_equal_single_process(dask_client):
    """exact_matches and close_neighbours measure their leak responses on the Dask backend too (leak
    rows built on the driver from records fetched through the backend; their keys joined against the
    partitions, the real records searched partition by partition against an index of them): both
    entries and the whole verdict, detection limits of every family included, are the JSON of one
    process."""
    orig = _frame(400, 11)
    syn = pd.concat([_frame(360, 12), orig.iloc[:4]], ignore_index=True)
    ctl = _frame(400, 13)
    metrics = {"exact_matches": {}, "close_neighbours": {}}
    single = evaluate(orig, syn, ctl, META, metrics=metrics, seed=7)
    dist = evaluate(orig, syn, ctl, META, metrics=metrics, seed=7, client=dask_client)
    _assert_same(single, dist, list(metrics))
    limits = single.to_dict()["verdict"]["detection_limits"]
    assert "exact_matches" in limits["exact"]["tests"] and limits["exact"]["value"] is not None
    assert "close_neighbours" in limits["noise2"]["tests"]
    assert {"near1", "noise10", "interpolation"} <= set(limits)  # families built from fetched records
    assert json.dumps(single.to_dict()["verdict"], sort_keys=True, default=str) == \
        json.dumps(dist.to_dict()["verdict"], sort_keys=True, default=str)


@pytest.mark.metric_on_dask
def test_qi_linkage_flags_and_leak_responses_on_dask_equal_single_process(dask_client):
    """qi_linkage asks the backend for its key lookups (records unique on their quasi-identifiers,
    release rows equal on quasi-identifiers and sensitive values) and for the leak rows' matches: on
    quasi-identifiers unique enough to link records, with a tenth of the training records copied on
    them, its entry (value, baseline, interval, records), its evidence and the verdict with the
    detection limits it measures are the JSON of one process."""
    orig = _frame(500, 21)
    syn = pd.concat([_frame(400, 22), orig.iloc[:50]], ignore_index=True)
    ctl = _frame(500, 23)
    meta = {**META, "quasi_identifiers": ["c", "a", "b"]}
    metrics = {"qi_linkage": {"top_n": 5}}
    single = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=3)
    dist = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=3, client=dask_client)
    _assert_same(single, dist, list(metrics))
    res = single["qi_linkage"]["result"]
    assert res["value"] > res["baseline"]["value"] > 0  # records linked, more of training than control
    limits = single.to_dict()["verdict"]["detection_limits"]
    assert "qi_linkage" in limits["exact"]["tests"] and limits["exact"]["value"] is not None
    assert json.dumps(single.to_dict()["verdict"], sort_keys=True, default=str) == \
        json.dumps(dist.to_dict()["verdict"], sort_keys=True, default=str)


@pytest.mark.metric_on_dask
def test_text_copies_and_text_leak_responses_on_dask_equal_single_process(dask_client):
    """text_exact_matches reads its documents through the backend (one text column at a time): with
    verbatim and near-verbatim copies of training documents in the release, its entry, its evidence
    and the verdict with the text family's detection limit are the JSON of one process."""
    orig = _with_texts(_frame(300, 31), 1)
    near = orig.iloc[20:30].assign(t=lambda f: f["t"] + " w7")
    syn = pd.concat([_with_texts(_frame(260, 32), 2), orig.iloc[:20], near], ignore_index=True)
    ctl = _with_texts(_frame(300, 33), 3)
    meta = {**META, "columns": {**META["columns"], "t": {"sdtype": "text"}}}
    metrics = {"text_exact_matches": {}}
    single = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=5)
    dist = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=5, client=dask_client)
    _assert_same(single, dist, list(metrics))
    res = single["text_exact_matches"]["result"]
    assert res["exact_matches"] >= 18 and res["near_duplicates"] >= 9
    limits = single.to_dict()["verdict"]["detection_limits"]
    assert "text_exact_matches" in limits["text"]["tests"] and limits["text"]["value"] is not None
    assert json.dumps(single.to_dict()["verdict"], sort_keys=True, default=str) == \
        json.dumps(dist.to_dict()["verdict"], sort_keys=True, default=str)


@pytest.mark.metric_on_dask
def test_near_copies_flags_and_leak_responses_on_dask_equal_single_process(dask_client):
    """near_copies and near_copies_2 ask the backend for the real records per masked key (release
    rows and leak rows as the queries) and check the candidates cell by cell: with one-cell and
    two-cell copies of training records in the release, both entries (value, baseline, interval,
    visibility, records), their evidence and the verdict with the near-copy families' detection
    limits are the JSON of one process."""
    def wide(n: int, seed: int) -> pd.DataFrame:  # two more columns: records apart by 3 cells
        r = np.random.default_rng(seed + 100)
        return _frame(n, seed).assign(f=r.integers(0, 60, n).astype(float),
                                      g=r.choice([f"g{i}" for i in range(40)], n))

    meta = {**META, "columns": {**META["columns"], "f": {"sdtype": "numerical"},
                                "g": {"sdtype": "categorical"}}}
    orig = wide(400, 51)
    one = orig.iloc[:30].assign(d=lambda f: f["d"].map({"p": "q", "q": "r", "r": "p"}))
    two = orig.iloc[30:50].assign(d=lambda f: f["d"].map({"p": "r", "q": "p", "r": "q"}),
                                  e=lambda f: ~f["e"])
    syn = pd.concat([wide(350, 52), one, two], ignore_index=True)
    ctl = wide(400, 53)
    metrics = {"near_copies": {"top_n": 5}, "near_copies_2": {"top_n": 5}}
    # no drop-and-retest (test_drop_and_retest_on_dask_equals_single_process compares it)
    single = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=4, retest_columns=0, retest_rows=0)
    dist = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=4, client=dask_client, retest_rows=0)
    _assert_same(single, dist, list(metrics))
    for name in metrics:
        res = single[name]["result"]
        assert res["value"] > res["baseline"]["value"], name  # the copies are found
    limits = single.to_dict()["verdict"]["detection_limits"]
    assert "near_copies" in limits["near1"]["tests"] and limits["near1"]["value"] is not None
    assert "near_copies_2" in limits["near2"]["tests"]
    assert json.dumps(single.to_dict()["verdict"], sort_keys=True, default=str) == \
        json.dumps(dist.to_dict()["verdict"], sort_keys=True, default=str)


@pytest.mark.metric_on_dask
def test_whole_verdict_with_detection_limits_equals_single_process(dask_client):
    orig = _frame(400, 11)
    syn = pd.concat([_frame(360, 12), orig.iloc[:4]], ignore_index=True)
    ctl = _frame(400, 13)
    metrics = {"exact_matches": {}, "near_copies": {}, "near_copies_2": {}, "close_neighbours": {},
               "qi_linkage": {}}
    single = evaluate(orig, syn, ctl, META, metrics=metrics, seed=7)
    dist = evaluate(orig, syn, ctl, META, metrics=metrics, seed=7, client=dask_client)
    assert single.verdict.detection_limits
    assert json.dumps(single.to_dict()["verdict"], sort_keys=True, default=str) == \
        json.dumps(dist.to_dict()["verdict"], sort_keys=True, default=str)


def test_near_copy_questions_of_the_dask_backend_equal_one_process(dask_client):
    """The three questions the near-copy tests ask (real records per masked key with the first of
    them, rows alone on each column set, cells against records by position) get the one-process
    answers from the partitions: missing values, -0.0, shuffled duplicates, a text column, asked
    rows with values the tables never hold, the empty column set."""
    from itertools import combinations


    orig = _with_texts(_frame(240, 61), 7)
    orig = pd.concat([orig, orig.iloc[:30]], ignore_index=True).sample(frac=1.0, random_state=1)
    syn, ctl = _with_texts(_frame(120, 62), 8), _with_texts(_frame(200, 63), 9)
    meta = {**META, "columns": {**META["columns"], "t": {"sdtype": "text"}}}
    local, dist = _both_backends(dask_client, orig, syn, ctl, meta)
    cols, roles = ["a", "b", "c", "d", "e", "t"], ("original", "control")
    sets = [[c for j, c in enumerate(cols) if j not in m] for d in range(3)
            for m in combinations(range(len(cols)), d)] + [[]]
    asked = [local.take("synthetic", np.arange(120), cols), orig.iloc[:25].assign(a=7.5)]
    for want, got in zip(local.key_counts(asked, sets, roles), dist.key_counts(asked, sets, roles), strict=True):
        for (wc, wf), (gc, gf) in zip(want, got, strict=True):
            np.testing.assert_array_equal(wc, gc)
            np.testing.assert_array_equal(wf, gf)
    two = [s for s in sets if len(s) == len(cols) - 2]
    np.testing.assert_array_equal(local.unique_sets(two, roles), dist.unique_sets(two, roles))
    pos = np.random.default_rng(0).integers(0, 470, 120)
    np.testing.assert_array_equal(local.cells_equal(asked[0], pos, cols, roles),
                                  dist.cells_equal(asked[0], pos, cols, roles))


def test_unique_sets_holds_a_bounded_number_of_keys_per_batch_over_all_partitions(dask_client, monkeypatch):
    """The rows alone on each column set (the near-copy tests' identifiable share), asked of many
    sets: a batch's keys (rows x sets) over every partition together stay within
    ``SET_BATCH_KEYS``, so a batch's memory on the cluster does not grow with the partitions (a
    budget per partition let the workers grow to 1.9 GB at 1M rows), with the one-process counts."""
    from itertools import combinations

    import synthguard.distributed._backend as backend

    orig, ctl = _frame(240, 71), _frame(200, 72)
    orig = pd.concat([orig, orig.iloc[:30]], ignore_index=True)
    local, dist = _both_backends(dask_client, orig, _frame(50, 73), ctl, META)
    cols, roles = ["a", "b", "c", "d", "e"], ("original", "control")
    two = [[c for j, c in enumerate(cols) if j not in m] for m in combinations(range(len(cols)), 2)]
    keys: list[tuple[int, int]] = []  # the workers are threads of this process: they find it on the module
    monkeypatch.setattr(backend, "_spied_keys", keys, raising=False)
    monkeypatch.setattr(backend, "_real_buckets", backend._set_key_buckets, raising=False)

    def spy(encoder, frame, positions, sets, start, buckets, part):  # shipped by value: reads the module
        import synthguard.distributed._backend as at

        at._spied_keys.append((tuple(sets), len(frame) * len(sets)))  # a batch by its sets (an id can be reused)
        return at._real_buckets(encoder, frame, positions, sets, start, buckets, part)

    monkeypatch.setattr(backend, "_set_key_buckets", spy)
    monkeypatch.setattr(backend, "SET_BATCH_KEYS", 1_500)  # 470 pooled rows: 3 sets a batch
    np.testing.assert_array_equal(local.unique_sets(two, roles), dist.unique_sets(two, roles))
    per_batch: dict[tuple, int] = {}
    for batch, n in keys:
        per_batch[batch] = per_batch.get(batch, 0) + n
    assert len(per_batch) == 4 and max(per_batch.values()) <= 1_500
    assert sum(per_batch.values()) == len(two) * (len(orig) + len(ctl))


def test_unique_sets_counts_are_the_same_in_one_batch_and_in_many_batches_and_buckets(
        dask_client, monkeypatch):
    """The batched and bucketed counts of ``DaskBackend.unique_sets`` (each batch's keys split by
    hash into buckets, each bucket sorted in its own task) equal one batch in one bucket and one
    process's, row for row: duplicates within and across partitions, missing values, -0.0, a text
    column, the empty column set (every row shares its key) and a set one row holds alone."""
    from itertools import combinations

    import synthguard.distributed._backend as backend

    orig = _with_texts(_frame(300, 81), 4)
    orig = pd.concat([orig, orig.iloc[:40], orig.iloc[:3]], ignore_index=True).sample(frac=1.0, random_state=2)
    ctl = pd.concat([_with_texts(_frame(150, 82), 5), orig.iloc[:20]], ignore_index=True)
    meta = {**META, "columns": {**META["columns"], "t": {"sdtype": "text"}}}
    local, dist = _both_backends(dask_client, orig, _with_texts(_frame(40, 83), 6), ctl, meta, npartitions=4)
    cols, roles = ["a", "b", "c", "d", "e", "t"], ("original", "control")
    sets = [[c for j, c in enumerate(cols) if j not in m] for d in (1, 2)
            for m in combinations(range(len(cols)), d)] + [[], ["a"]]
    want = local.unique_sets(sets, roles)
    assert want.min() == 0 and 0 < want.max() < len(sets)  # duplicates alone nowhere, others on some sets
    whole = dist.unique_sets(sets, roles)  # one batch, one bucket
    monkeypatch.setattr(backend, "SET_BATCH_KEYS", 1_000)  # 2 sets a batch
    monkeypatch.setattr(backend, "SET_BUCKET_KEYS", 150)  # 7 buckets a batch
    np.testing.assert_array_equal(whole, want)
    np.testing.assert_array_equal(dist.unique_sets(sets, roles), want)
    np.testing.assert_array_equal(dist.unique_sets(sets, ["control", "original"]),
                                  local.unique_sets(sets, ["control", "original"]))
    monkeypatch.setattr(backend, "SET_BATCH_KEYS", 200)  # one set's keys past it: 3 passes a set
    monkeypatch.setattr(backend, "SET_BUCKET_KEYS", 60)
    np.testing.assert_array_equal(dist.unique_sets(sets, roles), want)


def test_key_distinct_of_the_dask_backend_equals_one_process(dask_client):
    """Per row, its class size and the distinct value tuples of its class (the question l_diversity
    asks) from the partitions equal one process's: shuffled duplicates across partitions, missing
    values, -0.0, binned key and value columns, a text value column, the empty value set."""

    orig = _with_texts(_frame(240, 81), 3)
    orig = pd.concat([orig, orig.iloc[:40]], ignore_index=True).sample(frac=1.0, random_state=4)
    syn, ctl = _with_texts(_frame(150, 82), 5), _with_texts(_frame(100, 83), 6)
    meta = {**META, "columns": {**META["columns"], "t": {"sdtype": "text"}}}
    local, dist = _both_backends(dask_client, orig, syn, ctl, meta)
    bins = {"c": np.array([-0.5, 0.0, 0.7]), "a": np.array([1.5])}
    asks = [(["a", "b"], ["d", "e"], None), (["a", "c"], ["d"], bins), (["b"], ["c", "e"], bins),
            (["d"], ["t"], None), (["a", "b"], [], None)]
    for role in ("original", "synthetic"):
        for cols, values, b in asks:
            want = local.key_distinct(role, cols, values, bins=b).top(10_000, ["pos"], [True])
            got = dist.key_distinct(role, cols, values, bins=b).top(10_000, ["pos"], [True])
            pd.testing.assert_frame_equal(want, got, check_dtype=False)
            assert want["pos"].tolist() == list(range(dist.n_rows(role)))
            assert (want["distinct"] <= want["size"]).all()
            assert (int(want["distinct"].max()) > 1) == bool(values)


def _dup_shuffled(frames: list[pd.DataFrame], seed: int) -> pd.DataFrame:
    df = pd.concat(frames, ignore_index=True)
    return df.iloc[np.random.default_rng(seed).permutation(len(df))].reset_index(drop=True)


@pytest.mark.metric_on_dask
@pytest.mark.parametrize("with_control", [True, False])
def test_replicated_uniques_and_disco_on_dask_equal_single_process(dask_client, with_control):
    """repU and DiSCO ask the backend for key lookups (records per key cell and per key x target
    cell, distinct targets per synthetic key cell) and for their bin edges (quantile edges from
    exact distributed order statistics, equal-width edges from bounds): on exact and binned
    quasi-identifiers (a binned sensitive column too), every option of DiSCO, duplicated rows
    scattered over the partitions of every table, with and without a control table, every entry
    (value, interval, baseline, details, records) and the verdict's tests are the JSON of one
    process."""
    base = _frame(300, 71)
    base["f"] = np.random.default_rng(9).normal(50, 20, len(base)).round(0)  # a continuous column
    base.loc[base.index % 17 == 0, "f"] = np.nan
    fresh = _frame(300, 72).assign(f=np.random.default_rng(10).normal(50, 20, 300).round(0))
    orig = _dup_shuffled([base, base.iloc[:40], base.iloc[100:110]], 1)
    syn = _dup_shuffled([fresh, base.iloc[:30], base.iloc[30:60], base.iloc[200:230]], 2)
    ctl = _dup_shuffled([_frame(280, 73).assign(f=np.random.default_rng(11).normal(50, 20, 280).round(0)),
                         base.iloc[250:260]], 3) if with_control else None
    meta = {**META, "columns": {**META["columns"], "f": {"sdtype": "numerical"}}}
    metrics = [
        {"name": "repu_exact", "metric": "replicated_uniques", "quasi_identifiers": ["c", "a", "b"],
         "max_records": 15},
        {"name": "repu_quantile", "metric": "replicated_uniques", "quasi_identifiers": ["a", "b", "f"],
         "continuous_column_names": ["f"], "num_discrete_bins": 7},
        {"name": "repu_width", "metric": "replicated_uniques", "quasi_identifiers": ["f", "d"],
         "continuous_column_names": ["f"], "num_discrete_bins": 9, "binning": "equal_width"},
        {"name": "disco_binned", "metric": "disco", "quasi_identifiers": ["a", "f"], "sensitive": ["c", "d"],
         "continuous_column_names": ["f", "c"], "num_discrete_bins": 4, "exclude_ov_denom_lim": True,
         "denom_lim": 3, "max_records": 12},
        {"name": "disco_min_cell", "metric": "disco", "quasi_identifiers": ["c", "b"], "sensitive": ["d"],
         "min_cell": 2},
    ]
    single = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=5)
    dist = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=5, client=dask_client)
    names = [m if isinstance(m, str) else m["name"] for m in metrics]
    _assert_same(single, dist, names)
    assert json.dumps(single.to_dict()["verdict"]["tests"], sort_keys=True, default=str) == \
        json.dumps(dist.to_dict()["verdict"]["tests"], sort_keys=True, default=str)
    for name in names:  # the data exercise what is compared
        res = single[name]["result"]
        assert res["value"] > 0 and res["records"], name
        assert (res["evidence"] is not None) == with_control, name
    for name in ("disco_binned", "disco_min_cell"):  # DiS (one value, right or wrong) above DiSCO
        assert all(t["dis"] > t["disco"] for t in single[name]["result"]["per_target"].values()), name


def test_quantiles_and_distinct_lookups_of_the_dask_backend_equal_one_process(dask_client, monkeypatch):
    """The two questions repU and DiSCO added to the backend: quantiles of columns over tables
    pooled (NumPy's linear quantiles bit for bit: ties, -0.0, missing values, negative and huge
    values, a datetime column; the search forced through many passes
    with 8 pivots per pass) and distinct values per key cell, from partitions."""
    from synthguard.distributed import _backend as dask_backend

    def frame(n: int, seed: int) -> pd.DataFrame:
        df = _frame(n, seed)
        g = np.random.default_rng(seed)
        df["w"] = np.where(g.random(n) < 0.3, g.integers(-3, 3, n), g.normal(0, 1e6, n) * 10.0 ** g.integers(-8, 9, n))
        df["t"] = pd.Timestamp("2020-01-01") + pd.to_timedelta(g.integers(0, 10**6, n), unit="s")
        return df

    orig = _dup_shuffled([frame(230, 81), frame(230, 81).iloc[:50]], 4)
    syn, ctl = frame(150, 82), frame(170, 83)
    meta = {"columns": {**META["columns"], "w": {"sdtype": "numerical"}, "t": {"sdtype": "datetime"}}}
    local, dist = _both_backends(dask_client, orig, syn, ctl, meta)
    cols = ["c", "w", "t", "a"]
    cases = [(1024, ("original",), 7), (1024, ("original", "control"), 33),
             (1024, ("synthetic", "control", "original"), 2), (8, ("original", "control"), 10)]
    for pivots, roles, bins in cases:  # 8 pivots a pass: about 20 passes
        monkeypatch.setattr(dask_backend, "_PIVOTS", pivots)
        q = np.arange(1, bins) / bins
        want, got = local.quantiles(cols, roles, q), dist.quantiles(cols, roles, q)
        for c in cols:
            np.testing.assert_array_equal(want[c], got[c], err_msg=f"{c} {roles} {bins}")
    edges = {"w": local.quantiles(["w"], ("original",), np.arange(1, 5) / 5)["w"]}
    lookups = {"n": (["a", "b"], ("synthetic",)), "dist": (["a", "b"], ("synthetic", "control"), ["d"]),
               "dist2": (["a"], ("original",), ["d", "w"]), "none": (["c"], ("synthetic",), ["e"])}
    for role in ("original", "control"):
        for bins in (None, edges):
            want = local.key_rows(role, lookups, bins=bins).flags(
                **{f"{k}{v}": (lambda f, k=k, v=v: f[k] == v) for k in lookups for v in range(4)})
            got = dist.key_rows(role, lookups, bins=bins).flags(
                **{f"{k}{v}": (lambda f, k=k, v=v: f[k] == v) for k in lookups for v in range(4)})
            for k in want:
                np.testing.assert_array_equal(want[k], got[k], err_msg=k)
    rows = local.key_rows("original", lookups)
    assert rows.sums(lambda f: f["dist"] > 1)[0] > 0 and rows.sums(lambda f: f["none"] == 0)[0] > 0


def _dated(frame: pd.DataFrame, seed: int) -> pd.DataFrame:
    """``frame`` with a datetime column ``w`` holding sub-second instants (and missing values), whose
    distances in exact seconds differ from distances in days."""
    r = np.random.default_rng(seed)
    base = pd.Timestamp("2021-03-01 08:00:00")
    w = base + pd.to_timedelta(r.integers(0, 40, len(frame)) * 3600 + r.integers(0, 4, len(frame)) * 0.25,
                               unit="s")
    out = frame.assign(w=w)
    out.loc[r.random(len(frame)) < 0.05, "w"] = pd.NaT
    return out


def _dated_tables(dates: tuple[int, int, int], *, duplicated: int, shuffle: int, zeroed: int):
    """Small dated tables and their metadata: training rows with ``duplicated`` repeats shuffled
    across partitions, a release with 12 verbatim copies and ``zeroed`` copies whose ``c`` is -0.0,
    a control; ``dates`` seed each table's datetime column."""
    orig = _dated(_frame(260, 121), dates[0])
    orig = pd.concat([orig, orig.iloc[:duplicated]], ignore_index=True).sample(frac=1.0, random_state=shuffle)
    syn = pd.concat([_dated(_frame(150, 122), dates[1]), orig.iloc[:12],
                     orig.iloc[20:20 + zeroed].assign(c=-0.0)], ignore_index=True)
    ctl = _dated(_frame(200, 123), dates[2])
    meta = {**META, "columns": {**META["columns"], "w": {"sdtype": "datetime"}}}
    return orig, syn, ctl, meta


@pytest.mark.metric_on_dask
def test_dcr_overfitting_protection_on_dask_equals_single_process(dask_client):
    """dcr_overfitting_protection asks the backend for ranges and nearest rows in exact seconds
    (``Backend.ranges_seconds``, ``Backend.kneighbors_seconds``) and, for its evidence, which
    training and control records are the nearest real record of a release row
    (``Backend.nearest_reached``): with default parameters (sharing dcr's search), subsampled
    queries over two iterations, SDMetrics' per-reference ranges, a control (so the evidence is
    computed), verbatim copies, duplicated real rows, -0.0, missing values and a datetime column
    with sub-second instants, every entry (records included) and the verdict's tests are the JSON
    of one process."""
    orig = _dated(_frame(420, 91), 1)
    twins = orig.iloc[300:310].assign(c=0.0)  # the control holds them with -0.0: tied, distinct
    orig = pd.concat([orig, orig.iloc[:25], twins], ignore_index=True)  # duplicated training records
    syn = pd.concat([_dated(_frame(330, 92), 2), orig.iloc[:40], orig.iloc[:5], twins], ignore_index=True)
    syn = syn.iloc[np.random.default_rng(3).permutation(len(syn))].reset_index(drop=True)
    ctl = pd.concat([_dated(_frame(400, 93), 4), orig.iloc[200:205], twins.assign(c=-0.0)],
                    ignore_index=True)  # real twins: identical rows in both tables, won together
    meta = {**META, "columns": {**META["columns"], "w": {"sdtype": "datetime"}}}
    metrics = [
        {"name": "dcr", "metric": "dcr", "n_boot": 30},  # dcr in the run: the synthetic searches shared
        "dcr_overfitting_protection",
        {"name": "dcrp_sub", "metric": "dcr_overfitting_protection", "num_rows_subsample": 150,
         "num_iterations": 2, "max_records": 12},
        {"name": "dcrp_compat", "metric": "dcr_overfitting_protection", "sdmetrics_compat": True},
        {"name": "dcrp_all_rows", "metric": "dcr_overfitting_protection", "num_rows_subsample": 10_000,
         "max_records": 0},
    ]
    names = [m if isinstance(m, str) else m["name"] for m in metrics]
    single = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=9)
    dist = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=9, client=dask_client)
    _assert_same(single, dist, names)
    res = {n: single[n]["result"] for n in names}
    for n in names[1:]:
        assert res[n]["evidence"] is not None, n  # computed: a control is given
    assert res["dcr_overfitting_protection"]["records"]
    assert res["dcr_overfitting_protection"]["evidence_won_records"]["tied_release_rows"] > 0
    assert res["dcrp_sub"]["num_iterations"] == 2 and len(res["dcrp_sub"]["records"]) == 12
    assert res["dcrp_sub"]["evidence_won_records"]["release_rows"] == 150
    assert res["dcrp_compat"]["ranges"] == "per reference (SDMetrics)"
    tests = [json.dumps(r.to_dict()["verdict"]["tests"], sort_keys=True, default=str) for r in (single, dist)]
    assert tests[0] == tests[1]
    assert set(names[1:]) <= {t["metric"] for t in single.to_dict()["verdict"]["tests"]}


@pytest.mark.parametrize("group_rows", [None, 3])
def test_dcr_questions_of_the_dask_backend_equal_one_process(dask_client, monkeypatch, group_rows):
    """Ranges and nearest rows in exact seconds and the nearest real rows reached (the questions
    of dcr_overfitting_protection) from the partitions equal one process's, bit for bit: sub-second
    datetimes, shuffled duplicates across partitions, -0.0 next to 0.0 (distinct rows at the same
    distance), missing values, a subset of query rows; the tied release rows searched in one group
    (the default size) and in groups of at most 3 rows (a reference partition at a time)."""
    from synthguard.distributed import _backend
    from synthguard.metrics.disclosure._dcr import dcr_metric

    if group_rows is not None:
        monkeypatch.setattr(_backend, "MATCH_QUERY_ROWS", group_rows)

    orig = _dated(_frame(260, 101), 5)
    twins = orig.iloc[40:48].assign(c=0.0)  # held as -0.0 by the control: distinct, at one distance
    orig = pd.concat([orig, orig.iloc[:40], twins], ignore_index=True).sample(frac=1.0, random_state=2)
    syn = pd.concat([_dated(_frame(150, 102), 6), orig.iloc[:12], twins], ignore_index=True)
    ctl = pd.concat([_dated(_frame(200, 103), 7), twins.assign(c=-0.0)], ignore_index=True)
    meta = {**META, "columns": {**META["columns"], "w": {"sdtype": "datetime"}}}
    local, dist = _both_backends(dask_client, orig, syn, ctl, meta)
    cols = ["a", "b", "c", "d", "e", "w"]
    for roles in (("original",), ("control",), ("original", "control")):
        np.testing.assert_array_equal(local.ranges_seconds(cols, roles), dist.ranges_seconds(cols, roles))
    assert not np.array_equal(local.ranges_seconds(cols), local.ranges(cols))  # seconds, not days
    metric = dcr_metric(local.ranges_seconds(cols, ("original", "control")))
    rows = np.sort(np.random.default_rng(1).choice(170, 60, replace=False))
    for q_rows in (None, rows):
        for ref in ("original", "control"):
            for want, got in zip(local.kneighbors_seconds("synthetic", ref, cols, metric, 2, query_rows=q_rows),
                                 dist.kneighbors_seconds("synthetic", ref, cols, metric, 2, query_rows=q_rows),
                                 strict=True):
                np.testing.assert_array_equal(want, got)
        want = local.nearest_reached("synthetic", ("original", "control"), cols, metric, query_rows=q_rows)
        got = dist.nearest_reached("synthetic", ("original", "control"), cols, metric, query_rows=q_rows)
        for w, g in zip([*want[0], want[1]], [*got[0], got[1]], strict=True):
            np.testing.assert_array_equal(w, g)
        if q_rows is None:
            assert want[0][0].sum() >= 20 and want[0][1].sum() >= 8 and want[1].sum() >= 8  # twins tied


def test_nearest_reached_of_the_dask_backend_enumerates_only_tied_rows_as_one_process(dask_client):
    """Backend.nearest_reached on partitions, where the searches count the rows at each release
    row's nearest distance and only the release rows with more than one go through the tie pass,
    equals one process's answer for both neighbour backends, all rows and a subset: release rows
    midway between two training rows, one between two rows sharing its missing value (one in the
    control), at 0.0 between 0.0 and -0.0, and copies of one real row held several times across
    partitions and tables (one distinct nearest row: not tied, every copy reached); the rest are
    fresh rows with a unique nearest row in either table."""
    from synthguard.distributed import cluster_backend
    from synthguard.distributed._tables import load_tables
    from synthguard.metrics.disclosure._dcr import dcr_metric
    from synthguard.registry import Context

    orig = _frame(300, 141)
    ctl = _frame(300, 142)
    hand = pd.DataFrame({"a": [10.0, 12.0, np.nan, np.nan, 10.0, 12.0], "b": ["x", "x", "y", "y", "z", "z"],
                         "c": [50.0, 50.0, 60.0, 60.0, 0.0, 70.0], "d": ["p", "p", "q", "r", "p", "q"],
                         "e": [True, True, True, True, True, False]})  # far from the random rows
    orig = pd.concat([orig.iloc[:150], hand.iloc[[0, 1, 2, 4, 5]], orig.iloc[150:], orig.iloc[:30],
                      hand.iloc[[5]]], ignore_index=True)
    ctl = pd.concat([ctl, hand.iloc[[3]], hand.iloc[[4]].assign(c=-0.0), hand.iloc[[5]]], ignore_index=True)
    asked = pd.DataFrame({"a": [11.0, np.nan, 10.0, 12.0], "b": ["x", "y", "z", "z"], "c": [50.0, 60.0, 0.0, 70.5],
                          "d": ["p", "p", "p", "q"], "e": [True, True, True, False]})
    syn = pd.concat([_frame(200, 143), asked, orig.iloc[:8]], ignore_index=True)
    cols = ["a", "b", "c", "d", "e"]
    rows = np.sort(np.random.default_rng(4).choice(len(syn), 70, replace=False))
    for backend in ("auto", "numpy"):
        local = Context.from_frames(orig, syn, ctl, META, backend=backend).data
        dist = cluster_backend(load_tables(orig, syn, ctl, META, client=dask_client, npartitions=3), backend)
        metric = dcr_metric(local.ranges_seconds(cols, ("original", "control")))
        for q_rows in (None, rows):
            want = local.nearest_reached("synthetic", ("original", "control"), cols, metric, query_rows=q_rows)
            got = dist.nearest_reached("synthetic", ("original", "control"), cols, metric, query_rows=q_rows)
            for w, g in zip([*want[0], want[1]], [*got[0], got[1]], strict=True):
                np.testing.assert_array_equal(w, g, err_msg=backend)
            if q_rows is None:
                assert 3 <= want[1].sum() < want[1].size, backend  # tied and untied rows
                assert want[0][0].sum() > 50 and want[0][1].sum() > 50, backend


@pytest.mark.metric_on_dask
def test_membership_attacks_on_dask_equal_single_process(dask_client):
    """membership_attacks asks the backend for the seeded draws of its scored records and reference
    (``Backend.content_draw``, ``Backend.balanced_rows``), their encoded rows, searches of them
    against the whole release and real tables (``Backend.kneighbors_block``) and near-copy counts
    (``Backend.near_counts``): with the pooled reference (whole and capped), the split reference
    (whole and capped), caps smaller than the tables (every draw matters, the classifier fitted on
    a subsample), verbatim copies, duplicated real rows, -0.0, missing values and a datetime
    column, every entry (records included) and the verdict's tests are the JSON of one process."""
    orig = _dated(_frame(300, 111), 11)
    orig = pd.concat([orig, orig.iloc[:20]], ignore_index=True)  # duplicated training records
    syn = pd.concat([_dated(_frame(260, 112), 12), orig.iloc[:30], orig.iloc[40:45].assign(a=9.0)],
                    ignore_index=True)  # verbatim copies and copies but one cell
    syn = syn.iloc[np.random.default_rng(3).permutation(len(syn))].reset_index(drop=True)
    ctl = pd.concat([_dated(_frame(280, 113), 13), orig.iloc[100:104]], ignore_index=True)
    meta = {**META, "columns": {**META["columns"], "w": {"sdtype": "datetime"}}}
    caps = {"max_rows": 120, "max_reference_rows": 250, "max_fit_rows": 150}
    metrics = [
        {"name": "membership_attacks", "metric": "membership_attacks", "n_perm": 99},
        {"name": "mia_capped", "metric": "membership_attacks", "n_perm": 99, **caps},
        {"name": "mia_split", "metric": "membership_attacks", "n_perm": 99, "reference": "split"},
        {"name": "mia_split_capped", "metric": "membership_attacks", "n_perm": 99, "reference": "split",
         "reference_share": 0.4, "max_rows": 90, "max_reference_rows": 60, "max_fit_rows": 100, "k": 3},
    ]
    names = [m["name"] for m in metrics]
    single = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=5)
    dist = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=5, client=dask_client)
    _assert_same(single, dist, names)
    res = {n: single[n]["result"] for n in names}
    roles = res["mia_capped"]["roles"]
    assert roles["members"] == 120 < roles["training_rows"] and roles["non_members"] == 120
    assert roles["reference"] == 250 and "150 release" in roles["classifier_fit"]
    assert res["mia_split_capped"]["roles"]["reference"] == 60
    assert len(res["mia_split"]["roles"]["reference_rows"]) == round(0.3 * len(ctl))
    for n in names:
        assert single[n]["status"] == "ok" and res[n]["evidence"] is not None, n
    assert res["membership_attacks"]["attacks"]["near_copy"]["auc"] > 0.5
    tests = [json.dumps(without_seconds(r.to_dict()["verdict"]["tests"]), sort_keys=True, default=str)
             for r in (single, dist)]
    assert tests[0] == tests[1]
    assert set(names) <= {t["metric"] for t in single.to_dict()["verdict"]["tests"]}


def test_membership_questions_of_the_dask_backend_equal_one_process(dask_client):
    """The seeded content draws (one role, two roles pooled, among some rows), the searches of rows
    on hand against a whole table and the near-copy counts (the questions of membership_attacks)
    and the cells shared with named rows from the partitions equal one process's, bit for bit:
    shuffled duplicates across partitions,
    -0.0 next to 0.0, missing values, datetimes, copies but one cell."""
    from synthguard.engine.neighbors import gower

    orig, syn, ctl, meta = _dated_tables((8, 9, 10), duplicated=30, shuffle=4, zeroed=6)
    local, dist = _both_backends(dask_client, orig, syn, ctl, meta)
    cols = ["a", "b", "c", "d", "e", "w"]
    among = np.sort(np.random.default_rng(2).choice(200, 120, replace=False))
    for roles, n, kw in ((("original",), 100, {}), (("original", "control"), 150, {}),
                         (("control",), 50, {"among": among}), (("control",), 500, {})):
        want = local.content_draw(roles, cols, n, np.random.default_rng(7), **kw)
        got = dist.content_draw(roles, cols, n, np.random.default_rng(7), **kw)
        np.testing.assert_array_equal(want, got)
        pool = len(kw["among"]) if kw else sum(local.n_rows(r) for r in roles)
        assert want.size == min(n, pool) and (np.diff(want) > 0).all()
    # the draw does not depend on the input order: identical rows are interchangeable
    local_b, _ = _both_backends(dask_client, orig.iloc[::-1], syn, ctl, meta)
    np.testing.assert_array_equal(local.content_draw(("original",), cols, 80, np.random.default_rng(1)),
                                  local_b.content_draw(("original",), cols, 80, np.random.default_rng(1)))
    rows = np.sort(np.random.default_rng(3).choice(290, 70, replace=False))
    q_local, q_dist = local.encoded_rows("original", cols, rows), dist.encoded_rows("original", cols, rows)
    np.testing.assert_array_equal(q_local.num, q_dist.num)
    np.testing.assert_array_equal(q_local.cat, q_dist.cat)
    metric = gower(local.ranges(cols, ("original", "synthetic", "control")), clip=True)
    for ref in ("synthetic", "original", "control"):
        for want, got in zip(local.kneighbors_block(q_local, ref, cols, metric, 6),
                             dist.kneighbors_block(q_dist, ref, cols, metric, 6), strict=True):
            np.testing.assert_array_equal(want, got)
        for want, got in zip(local.near_counts(ref, cols, q_local), dist.near_counts(ref, cols, q_dist),
                             strict=True):
            np.testing.assert_array_equal(want, got)
    exact, within = local.near_counts("synthetic", cols, q_local)
    assert (exact > 0).sum() >= 1 and (within > exact).sum() >= 1  # copies, and copies but one cell
    assert (local.near_counts("original", cols, q_local)[0] >= 1).all()  # each row holds itself
    # rows of a whole table (repeated, in any order, across partitions) searched against a block on
    # hand: where they lie on the cluster, the answers of one process
    for role in ("synthetic", "original"):
        asked = np.random.default_rng(5).choice(local.n_rows(role), 90)
        for want, got in zip(local.kneighbors_rows_held(role, cols, asked, q_local, metric, 4),
                             dist.kneighbors_rows_held(role, cols, asked, q_dist, metric, 4), strict=True):
            np.testing.assert_array_equal(want, got)
    # the cells each query row shares with the rows its neighbours name (repeated, across
    # partitions, some slots empty): counted where the rows lie, the answers of one process and of
    # the rows fetched and compared on the driver
    named = local.kneighbors_block(q_local, "synthetic", cols, metric, 6)[1].copy()
    named[::7, 3:] = -1
    want = local.most_equal_cells("synthetic", cols, q_local, named)
    np.testing.assert_array_equal(want, dist.most_equal_cells("synthetic", cols, q_dist, named))
    fetched = local.encoded_rows("synthetic", cols, np.maximum(named, 0).ravel())
    same = ((q_local.num.repeat(6, axis=0) == fetched.num)
            | (np.isnan(q_local.num.repeat(6, axis=0)) & np.isnan(fetched.num))).sum(axis=1) \
        + (q_local.cat.repeat(6, axis=0) == fetched.cat).sum(axis=1)
    np.testing.assert_array_equal(want, np.where(named >= 0, same.reshape(named.shape), 0).max(axis=1))
    assert (want == len(cols)).any() and (want < len(cols)).any()


def test_content_draw_over_roles_whose_dtypes_differ_equals_one_process(dask_client):
    """A boolean column held as objects (missing values) in the training table and as ``bool`` in
    the control: one process draws over ``pd.concat`` of the two (objects), the Dask backend hashes
    the column as objects in every partition of both roles, and the draws are the same rows."""
    from synthguard.distributed._backend import _content_part

    orig, ctl, syn = _frame(90, 1), _frame(60, 2), _frame(50, 3)
    orig["e"] = orig["e"].astype(object)
    orig.loc[80:, "e"] = None
    local, dist = _both_backends(dask_client, orig, syn, ctl, META)
    cols = ("a", "b", "c", "d", "e")
    assert local.tables.get("original")["e"].dtype == object and local.tables.get("control")["e"].dtype == bool
    got = dask_client.gather(dask_client.compute(dist.dt.map("control", _content_part, cols, (),
                                                             with_encoder=False, ordered=False)))
    assert {p[2][-1][1] for p in got} == {"bool"}  # differs from the training table's: hashed as objects
    for roles in (("original",), ("control",), ("original", "control")):
        for n in (40, 100):
            np.testing.assert_array_equal(local.content_draw(roles, cols, n, np.random.default_rng(n)),
                                          dist.content_draw(roles, cols, n, np.random.default_rng(n)))
@pytest.mark.metric_on_dask
def test_new_row_synthesis_on_dask_equals_single_process(dask_client):
    """new_row_synthesis asks the backend which release rows match a real row within the tolerance
    (``Backend.rows_matched``), and for its evidence which training and control records a release
    row matches: with default parameters, SDMetrics' relative tolerance, a subsampled release, a
    zero tolerance, missing values (numeric, categorical, datetime), -0.0 next to 0.0, verbatim
    copies, near copies, duplicated rows, a datetime column, and categorical-only and numeric-only
    column sets, every entry (records included) and the verdict's tests are the JSON of one
    process."""
    orig = _dated(_frame(420, 111), 11)
    orig = pd.concat([orig, orig.iloc[:20]], ignore_index=True)  # duplicated training records
    near = orig.iloc[50:80].assign(c=lambda f: f["c"] + 0.01)  # within the tolerance of the range
    syn = pd.concat([_dated(_frame(330, 112), 12), orig.iloc[:40], near, orig.iloc[:5].assign(c=-0.0)],
                    ignore_index=True)
    syn = syn.iloc[np.random.default_rng(4).permutation(len(syn))].reset_index(drop=True)
    ctl = pd.concat([_dated(_frame(400, 113), 13), orig.iloc[200:210]], ignore_index=True)
    meta = {**META, "columns": {**META["columns"], "w": {"sdtype": "datetime"}}}
    metrics = [
        "new_row_synthesis",
        {"name": "nrs_compat", "metric": "new_row_synthesis", "sdmetrics_compat": True},
        {"name": "nrs_sub", "metric": "new_row_synthesis", "synthetic_sample_size": 150, "max_records": 7},
        {"name": "nrs_exact", "metric": "new_row_synthesis", "numerical_match_tolerance": 0.0},
        {"name": "nrs_wide", "metric": "new_row_synthesis", "numerical_match_tolerance": 0.3, "max_records": 0},
    ]
    names = [m if isinstance(m, str) else m["name"] for m in metrics]
    single = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=6)
    dist = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=6, client=dask_client)
    _assert_same(single, dist, names)
    res = {n: single[n]["result"] for n in names}
    for n in names:
        assert res[n]["evidence"] is not None, n  # computed: a control is given
    assert 0 < res["new_row_synthesis"]["num_matched_rows"] < res["nrs_wide"]["num_matched_rows"]
    assert res["nrs_exact"]["num_matched_rows"] < res["new_row_synthesis"]["num_matched_rows"]
    assert len(res["nrs_sub"]["records"]) == 7 and res["nrs_sub"]["num_new_rows"] + \
        res["nrs_sub"]["num_matched_rows"] == 150
    tests = [json.dumps(r.to_dict()["verdict"]["tests"], sort_keys=True, default=str) for r in (single, dist)]
    assert tests[0] == tests[1]
    assert set(names) <= {t["metric"] for t in single.to_dict()["verdict"]["tests"]}
    # categorical-only and numeric-only rows (the other columns' sdtypes left out: ids ignored)
    for kept in (["b", "d", "e"], ["a", "c", "w"]):
        m2 = {**meta, "columns": {c: s if c in kept else {"sdtype": "id"} for c, s in meta["columns"].items()},
              "quasi_identifiers": kept[:2]}
        single = evaluate(orig, syn, ctl, m2, metrics=metrics[:2], seed=6)
        dist = evaluate(orig, syn, ctl, m2, metrics=metrics[:2], seed=6, client=dask_client)
        _assert_same(single, dist, names[:2])
        assert single["new_row_synthesis"]["result"]["columns"] == kept


@pytest.mark.parametrize("group_rows", [None, 60, 1])
def test_rows_matched_of_the_dask_backend_equals_one_process(dask_client, monkeypatch, group_rows):
    """The tolerance matches of the partitions (the query rows, stacked into groups, against every
    reference partition, OR-ed) equal one process's: absolute and relative tolerances, a zero
    tolerance, missing values, -0.0, shuffled duplicates across partitions, subsets of query and
    reference rows in any order; with every query row in one group (the default size), in groups
    of at most 60 rows (the partitions of 57-100 rows alone, the asked subset's first two
    partitions in one group: waves over groups of several partitions), and one partition a group."""
    from synthguard.distributed import _backend

    if group_rows is not None:
        monkeypatch.setattr(_backend, "MATCH_QUERY_ROWS", group_rows)
    orig, syn, ctl, meta = _dated_tables((21, 22, 23), duplicated=40, shuffle=3, zeroed=10)
    local, dist = _both_backends(dask_client, orig, syn, ctl, meta)
    cols = ["a", "b", "c", "d", "e", "w"]
    scale = local.ranges(cols, ("original",))
    np.testing.assert_array_equal(scale, dist.ranges(cols, ("original",)))
    r = np.random.default_rng(2)
    q_rows = r.permutation(172)[:70]
    r_rows = np.sort(r.choice(300, 120, replace=False))
    groups = _backend._row_groups(dist._kept_counts("synthetic", q_rows), _backend.MATCH_QUERY_ROWS)
    assert len(groups) == {None: 1, 60: 2, 1: 3}[group_rows]  # one group; waves, one of two partitions
    assert any(len(g) > 1 for g in groups) == (group_rows != 1)
    n_true = 0
    for query, reference in (("synthetic", "original"), ("original", "synthetic"), ("control", "synthetic")):
        for tol, rel in ((0.05 * scale, False), (np.asarray(0.0), False), (np.asarray(0.01), True),
                         (0.3 * scale, False)):
            for qr, rr in ((None, None), (q_rows if query == "synthetic" else None,
                                          r_rows if reference == "original" else None)):
                kw = {"relative": rel, "query_rows": qr, "reference_rows": rr}
                want = local.rows_matched(query, reference, cols, tol, **kw)
                got = dist.rows_matched(query, reference, cols, tol, **kw)
                np.testing.assert_array_equal(want, got, err_msg=f"{query} {reference} {tol} {rel}")
                n_true += int(want.sum())
    assert n_true > 0


def test_rows_matched_joins_each_reference_partition_once_with_every_sampled_query_row(dask_client, monkeypatch):
    """Sampled query rows spread over every query partition are matched against a reference
    partition in one task (its join and sorts done once), not once per query partition: as many
    matching tasks as reference partitions, each given every asked row; the answers equal one
    process's."""
    from synthguard.distributed import _backend

    orig, syn, ctl, meta = _dated_tables((21, 22, 23), duplicated=40, shuffle=3, zeroed=10)
    local, dist = _both_backends(dask_client, orig, syn, ctl, meta, npartitions=4)
    _MATCH_CALLS[:] = [_backend._matched_part]
    # the cluster's threads run in this process: a module-level function is sent by reference
    monkeypatch.setattr(_backend, "_matched_part", _counted_match)
    cols = ["a", "b", "c", "d", "e", "w"]
    tol = 0.05 * local.ranges(cols, ("original",))
    q_rows = np.random.default_rng(4).permutation(local.n_rows("original"))[:150]
    want = local.rows_matched("original", "synthetic", cols, tol, query_rows=q_rows)
    got = dist.rows_matched("original", "synthetic", cols, tol, query_rows=q_rows)
    np.testing.assert_array_equal(want, got)
    assert want.any()
    assert sorted(_MATCH_CALLS[1:]) == [150] * 4


#: the function :func:`_counted_match` stands for, then the query rows of each of its calls
_MATCH_CALLS: list = []


def _counted_match(query, reference, tol, relative):
    """The matching task ``_MATCH_CALLS[0]``, recording how many query rows each call is given."""
    _MATCH_CALLS.append(query[0].n_rows)
    return _MATCH_CALLS[0](query, reference, tol, relative)


@pytest.mark.metric_on_dask
def test_disclosure_protection_on_dask_equals_single_process(dask_client):
    """disclosure_protection (cap and zero_cap) asks the backend for key lookups with continuous
    columns cut at equal-width edges from the backend's bounds (the original's range for the
    score, the real rows pooled for the evidence): with default parameters (the CAP metric's test
    repeated), zero_cap, a binned known column, binned numeric and datetime sensitive columns, two
    sensitive columns (per-field breakdown), missing values in known and sensitive columns, ties
    in the pooled classes, categorical-only columns, every entry (records included) and the
    verdict's tests are the JSON of one process; generalized_cap is skipped on a cluster with its
    reason."""
    orig = _dated(_frame(480, 131), 31)
    orig.loc[orig.index % 19 == 0, "d"] = None
    syn = pd.concat([_dated(_frame(380, 132), 32), orig.iloc[:50], orig.iloc[:6]], ignore_index=True)
    syn.loc[syn.index % 23 == 0, "a"] = np.nan
    ctl = pd.concat([_dated(_frame(420, 133), 33), orig.iloc[100:110]], ignore_index=True)
    meta = {**META, "columns": {**META["columns"], "w": {"sdtype": "datetime"}}}
    metrics = [
        "disclosure_protection",  # META: known a, b; sensitive d, e
        {"name": "dp_zero", "metric": "disclosure_protection", "computation_method": "zero_cap",
         "max_records": 7},
        {"name": "dp_binned_known", "metric": "disclosure_protection", "known_column_names": ["a", "b", "c"],
         "continuous_column_names": ["c"], "num_discrete_bins": 4},
        {"name": "dp_binned_sensitive", "metric": "disclosure_protection", "computation_method": "ZERO_CAP",
         "known_column_names": ["b", "d"], "sensitive_column_names": ["c", "w"],
         "continuous_column_names": ["c", "w", "a"], "num_discrete_bins": 3, "max_records": 0},
        {"name": "dp_categorical", "metric": "disclosure_protection", "known_column_names": ["b", "e"],
         "sensitive_column_names": ["d"]},
    ]
    names = [m if isinstance(m, str) else m["name"] for m in metrics]
    single = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=8)
    dist = evaluate(orig, syn, ctl, meta, metrics=[*metrics, {"name": "dp_gen", "metric": "disclosure_protection",
                                                              "computation_method": "generalized_cap"}],
                    seed=8, client=dask_client)
    _assert_same(single, dist, names)
    res = {n: single[n]["result"] for n in names}
    for n in names:
        assert res[n]["evidence"] is not None, n  # computed: a control is given
    assert res["disclosure_protection"]["per_sensitive_field"]
    assert res["dp_binned_sensitive"]["continuous_column_names"] == ["c", "w"]
    assert res["dp_binned_sensitive"]["n_sensitive_categories"] == [4, 4]  # 3 bins and missing
    assert len(res["dp_zero"]["records"]) == 7 and not res["dp_binned_sensitive"]["records"]
    tests = [json.dumps(r.to_dict()["verdict"]["tests"], sort_keys=True, default=str) for r in (single, dist)]
    assert tests[0] == tests[1]
    assert dist["dp_gen"]["status"] == "skipped" and "distributed" in dist["dp_gen"]["reason"]
    # without a control: no evidence, the same numbers
    single = evaluate(orig, syn, None, meta, metrics=metrics[2:4], seed=8)
    dist = evaluate(orig, syn, None, meta, metrics=metrics[2:4], seed=8, client=dask_client)
    _assert_same(single, dist, names[2:4])


def _anonymeter_tables():
    """Training, release and control tables for the anonymeter trio: missing values, -0.0, a
    datetime column, verbatim copies, duplicated training rows, shuffled across partitions."""
    orig = _dated(_frame(380, 111), 8)
    orig = pd.concat([orig, orig.iloc[:30]], ignore_index=True).sample(frac=1.0, random_state=5)
    syn = pd.concat([_dated(_frame(300, 112), 9), orig.iloc[:45], orig.iloc[:6]], ignore_index=True)
    syn = syn.iloc[np.random.default_rng(4).permutation(len(syn))].reset_index(drop=True)
    ctl = pd.concat([_dated(_frame(320, 113), 10), orig.iloc[100:104]], ignore_index=True)
    meta = {**META, "columns": {**META["columns"], "w": {"sdtype": "datetime"}}}
    return orig, syn, ctl, meta


@pytest.mark.metric_on_dask
def test_linkability_and_inference_on_dask_equal_single_process(dask_client):
    """linkability and inference ask the backend for the canonical rows (``distinct_order``), the
    ranges and neighbours of the sampled targets and of every record (``value_bounds``,
    ``kneighbors_among``) and the secret cells they read: with defaults (declared roles), k > 1,
    given halves, every distinct row attacked, a numeric secret scored by tolerance, a categorical
    secret, every column in turn (no roles), categorical-only and numeric-only columns, and without
    a control, every entry (records included) and the verdict's tests are the JSON of one
    process."""
    orig, syn, ctl, meta = _anonymeter_tables()
    metrics = [
        "linkability", "inference",
        {"name": "link_k3", "metric": "linkability", "n_attacks": 120, "n_neighbors": 3,
         "aux_cols": [["a", "c"], ["b", "d", "w"]], "n_records": 7},
        {"name": "link_all", "metric": "linkability", "max_n_attacks": True},
        {"name": "infer_c", "metric": "inference", "secret": "c", "n_attacks": 200, "tolerance": 0.2},
        {"name": "infer_b", "metric": "inference", "secret": "b", "aux_cols": ["a", "c", "w"]},
        {"name": "infer_w_reg", "metric": "inference", "secret": "w", "regression": "true", "n_attacks": 150},
    ]
    names = [m if isinstance(m, str) else m["name"] for m in metrics]
    single = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=5)
    dist = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=5, client=dask_client)
    _assert_same(single, dist, names)
    res = {n: single[n]["result"] for n in names}
    for n in names:
        assert res[n]["evidence"] is not None, n  # computed: a control is given
    assert res["link_all"]["n_attacks"] == 324  # every distinct control row (the smaller table)
    assert res["link_k3"]["n_neighbors"] == 3 and len(res["link_k3"]["records"]) == 7
    assert res["inference"]["secrets_tried"] == ["d", "e"]  # the declared sensitive columns
    tests = [json.dumps(r.to_dict()["verdict"]["tests"], sort_keys=True, default=str) for r in (single, dist)]
    assert tests[0] == tests[1]
    assert {"linkability", "inference"} <= {t["metric"] for t in single.to_dict()["verdict"]["tests"]}

    # no roles (every column in turn), categorical-only, numeric-only, no control
    plain = {"columns": meta["columns"]}
    cats = ["b", "d", "e"]
    nums = ["a", "c", "w"]
    for o, s, c, m in ((orig, syn, ctl, plain),
                       (orig[cats], syn[cats], ctl[cats], {"columns": {k: META["columns"][k] for k in cats}}),
                       (orig[nums], syn[nums], ctl[nums], {"columns": {k: meta["columns"][k] for k in nums}}),
                       (orig, syn, None, meta)):
        runs = ["linkability", {"name": "inference", "metric": "inference", "n_attacks": 150}]
        single = evaluate(o, s, c, m, metrics=runs, seed=2)
        dist = evaluate(o, s, c, m, metrics=runs, seed=2, client=dask_client)
        _assert_same(single, dist, ["linkability", "inference"])
        assert json.dumps(single.to_dict()["verdict"]["tests"], sort_keys=True, default=str) == \
            json.dumps(dist.to_dict()["verdict"]["tests"], sort_keys=True, default=str)


def test_anonymeter_questions_of_the_dask_backend_equal_one_process(dask_client):
    """The canonical rows in content-hash order, encoded bounds (of whole roles and of some rows)
    and the neighbours among reference rows in any order (ties by their index: categorical columns
    hold many tied rows) from the partitions equal one process's, bit for bit: whole roles and rows
    by position as queries, stacked; reference rows not distinct on the columns searched."""
    from synthguard.data.encoding import ranges_from_bounds
    from synthguard.engine.neighbors import gower

    orig, syn, ctl, meta = _anonymeter_tables()
    local, dist = _both_backends(dask_client, orig, syn, ctl, meta)
    cols = ["a", "b", "c", "d", "e", "w"]
    order = {}
    for role in ("original", "synthetic", "control"):
        for c in (cols, ["b", "d"]):
            want = local.distinct_order(role, c)
            np.testing.assert_array_equal(want, dist.distinct_order(role, c))
        order[role] = local.distinct_order(role, cols)
    assert order["original"].size == 380  # duplicates dropped
    assert not (np.diff(local.distinct_order("original", ["b", "d"])) > 0).all()  # hash order, not position
    ref = np.random.default_rng(0).permutation(order["synthetic"])  # reference rows in any order
    rows = {"original": order["original"][::7], "control": order["control"][5:60]}
    for roles, asked in ((("synthetic",), None), (("original", "control", "synthetic"), None),
                         (("original", "control", "synthetic"), rows)):
        for c in (cols, ["a", "w"], ["b", "d"]):
            want = local.value_bounds(c, roles, rows=asked)
            got = dist.value_bounds(c, roles, rows=asked)
            for w, g in zip(want, got, strict=True):
                np.testing.assert_array_equal(w, g)
    for c, k in ((cols, 1), (["b", "d"], 3), (["a", "c", "w"], 2)):
        metric = gower(ranges_from_bounds(*local.value_bounds(c, ("original", "control", "synthetic"))),
                       clip=False, normalise=False, nan_rule="anonymeter")
        for queries in ([("original", rows["original"]), ("control", rows["control"])],
                        [("original", None), ("control", None)], [("control", rows["control"][::-1])]):
            want = local.kneighbors_among(queries, "synthetic", ref, c, metric, k)
            got = dist.kneighbors_among(queries, "synthetic", ref, c, metric, k)
            for w, g in zip(want, got, strict=True):
                np.testing.assert_array_equal(w, g)
    # ties go to the lower index in the reference rows' order (hash order), not to the lower position
    metric = gower(np.zeros(0), clip=False, normalise=False, nan_rule="anonymeter")
    want = local.kneighbors_among([("original", None)], "synthetic", ref, ["b"], metric, 1)
    got = dist.kneighbors_among([("original", None)], "synthetic", ref, ["b"], metric, 1)
    for w, g in zip(want, got, strict=True):
        np.testing.assert_array_equal(w, g)
    ref_b = local.take("synthetic", ref, ["b"])["b"].astype(object)
    first = pd.Series(np.arange(len(ref_b))).groupby(ref_b.to_numpy()).min()  # missing values dropped
    q_b = local.take("original", np.arange(local.n_rows("original")), ["b"])["b"].astype(object)
    known = q_b.notna().to_numpy()
    np.testing.assert_array_equal(want[1][known, 0], first.reindex(q_b[known].to_numpy()).to_numpy())
    np.testing.assert_array_equal(want[0][known, 0], 0.0)
    by_position = pd.Series(ref).groupby(ref_b.to_numpy()).idxmin()  # the lowest position's index
    assert (first != by_position.reindex(first.index)).any()  # ties resolved otherwise by position


@pytest.mark.metric_on_dask
def test_closest_distance_mia_on_dask_equals_single_process(dask_client):
    """closest_distance_mia asks the backend for ranges (over the three tables), the seeded content
    sample of each class (``Backend.balanced_rows``) and each sampled row's nearest release row
    (``Backend.kneighbors`` with ``query_rows``): with default parameters, sampled classes of
    different sizes (``max_rows``, ``balance=False``), verbatim and duplicated copies (distance
    ties at 0), duplicated real rows shuffled over the partitions, -0.0, missing values and a
    datetime column with sub-second instants, every entry (records, histogram, ROC, the tail
    evidence) and the verdict's tests are the JSON of one process."""
    orig = _dated(_frame(380, 111), 11)
    orig = _dup_shuffled([orig, orig.iloc[:30]], 5)  # duplicated training records over partitions
    syn = _dup_shuffled([_dated(_frame(300, 112), 12), orig.iloc[:60], orig.iloc[:10]], 6)
    ctl = _dup_shuffled([_dated(_frame(330, 113), 13), orig.iloc[300:306]], 7)
    meta = {**META, "columns": {**META["columns"], "w": {"sdtype": "datetime"}}}
    metrics = [
        {"name": "closest_distance_mia", "metric": "closest_distance_mia", "n_boot": 40},
        {"name": "cdmia_sampled", "metric": "closest_distance_mia", "max_rows": 150, "balance": False,
         "n_boot": 30, "top_records": 4, "max_roc_points": 11},
        {"name": "cdmia_unbalanced", "metric": "closest_distance_mia", "balance": False, "n_boot": 20,
         "top_records": 0},
    ]
    names = [m["name"] for m in metrics]
    single = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=13)
    dist = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=13, client=dask_client)
    _assert_same(single, dist, names)
    res = {n: single[n]["result"] for n in names}
    assert res["closest_distance_mia"]["n_members"] == res["closest_distance_mia"]["n_non_members"] == 336
    assert res["cdmia_sampled"]["n_members"] == res["cdmia_sampled"]["n_non_members"] == 150
    assert res["cdmia_unbalanced"]["n_members"] == 410 and not res["cdmia_unbalanced"].get("records")
    assert res["closest_distance_mia"]["share_exact_members"] > 0.05  # copies: ties at distance 0
    tests = [json.dumps(r.to_dict()["verdict"]["tests"], sort_keys=True, default=str) for r in (single, dist)]
    assert tests[0] == tests[1]


@pytest.mark.metric_on_dask
def test_dcr_baseline_protection_on_dask_equals_single_process(dask_client):
    """dcr_baseline_protection draws its random rows on the driver within the original's values
    (``Backend.value_summaries``: bounds, whole-number flags, distinct values, missing shares) and
    searches them against the original (``Backend.kneighbors_frame_seconds``), the release rows
    with ``Backend.kneighbors_seconds``: with default parameters (one random row per release row),
    subsampled queries over two iterations, SDMetrics' integer columns, sub-second datetimes,
    copies, -0.0 and missing values, every entry (records included) and the verdict's tests are
    the JSON of one process."""
    orig = _dated(_frame(420, 121), 21)
    orig = _dup_shuffled([orig, orig.iloc[:25]], 8)
    syn = _dup_shuffled([_dated(_frame(330, 122), 22), orig.iloc[:40], orig.iloc[:5]], 9)
    ctl = _dated(_frame(400, 123), 23)
    meta = {**META, "columns": {**META["columns"], "w": {"sdtype": "datetime"}}}
    metrics = [
        "dcr_baseline_protection",
        {"name": "dbp_sub", "metric": "dcr_baseline_protection", "num_rows_subsample": 120,
         "num_iterations": 2, "max_records": 7},
        {"name": "dbp_int", "metric": "dcr_baseline_protection", "integer_columns": ["c"],
         "random_rows": None},
    ]
    names = [m if isinstance(m, str) else m["name"] for m in metrics]
    single = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=17)
    dist = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=17, client=dask_client)
    _assert_same(single, dist, names)
    res = {n: single[n]["result"] for n in names}
    assert res["dcr_baseline_protection"]["n_random"] == len(syn) and res["dcr_baseline_protection"]["records"]
    assert res["dbp_sub"]["num_iterations"] == 2 and res["dbp_sub"]["n_random"] == 120
    assert res["dbp_int"]["score"] != res["dcr_baseline_protection"]["score"]  # other random rows
    tests = [json.dumps(r.to_dict()["verdict"]["tests"], sort_keys=True, default=str) for r in (single, dist)]
    assert tests[0] == tests[1]


@pytest.mark.metric_on_dask
def test_dcr_baseline_sampled_random_rows_and_whole_days_on_dask_equal_single_process(dask_client):
    """With more release rows than ``random_rows`` the random median is estimated from batches of
    1 000, 2 000... random rows (each batch one search of the backend); datetimes that are whole
    days let both DCR metrics reuse dcr's search (the backend says so: ``value_summaries``), on a
    cluster as in one process: every entry and the verdict's tests equal."""
    def days(frame: pd.DataFrame, seed: int) -> pd.DataFrame:
        r = np.random.default_rng(seed)
        w = pd.Timestamp("2020-01-01") + pd.to_timedelta(r.integers(0, 900, len(frame)), unit="D")
        out = frame.assign(w=w)
        out.loc[r.random(len(frame)) < 0.05, "w"] = pd.NaT
        return out

    orig = days(_frame(1300, 131), 31)
    syn = _dup_shuffled([days(_frame(2300, 132), 32), orig.iloc[:30]], 10)
    ctl = days(_frame(1250, 133), 33)
    meta = {**META, "columns": {**META["columns"], "w": {"sdtype": "datetime"}}}
    metrics = [
        {"name": "dcr", "metric": "dcr", "n_boot": 20},
        {"name": "dbp_batches", "metric": "dcr_baseline_protection", "random_rows": 2200,
         "random_precision": 0.001, "max_records": 5},
        {"name": "dbp_early", "metric": "dcr_baseline_protection", "random_rows": 2200,
         "random_precision": 0.2, "max_records": 5},
        {"name": "dcrp", "metric": "dcr_overfitting_protection", "max_records": 5},
    ]
    names = [m["name"] for m in metrics]
    single = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=19)
    dist = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=19, client=dask_client)
    _assert_same(single, dist, names)
    res = {n: single[n]["result"] for n in names}
    assert res["dbp_batches"]["n_random"] == 2200  # 1 000, 2 000, then the last 200
    assert res["dbp_early"]["n_random"] == 1000  # the first batch was precise enough


def test_value_summaries_and_frame_search_of_the_dask_backend_equal_one_process(dask_client):
    """The random baseline's questions from the partitions equal one process's: per column the
    rows, missing values, bounds (datetimes in int64 nanoseconds), whole-number and whole-day flags
    and the distinct values in their order; and the nearest original rows of rows of the driver
    in exact seconds, bit for bit (ties by the lower index, copies at distance 0, sub-second
    datetimes, -0.0, missing values)."""
    from synthguard.metrics.disclosure._dcr import dcr_metric

    orig = _dated(_frame(260, 141), 41)
    orig["day"] = pd.Timestamp("2022-05-01") + pd.to_timedelta(np.arange(len(orig)) % 9, unit="D")
    orig.loc[::13, "day"] = pd.NaT
    orig["few"] = np.where(np.arange(len(orig)) % 50 == 7, 2.5, np.nan)  # a value in a few partitions
    orig = _dup_shuffled([orig, orig.iloc[:40]], 11)
    syn, ctl = _dated(_frame(150, 142), 42), _dated(_frame(120, 143), 43)
    for f in (syn, ctl):
        f["day"], f["few"] = pd.Timestamp("2022-05-03 10:00"), 1.0
    meta = {**META, "columns": {**META["columns"], "w": {"sdtype": "datetime"},
                                "day": {"sdtype": "datetime"}, "few": {"sdtype": "numerical"}}}
    local, dist = _both_backends(dask_client, orig, syn, ctl, meta)
    cols = ["a", "b", "c", "d", "e", "w", "day", "few"]
    for role in ("original", "synthetic", "control"):
        want, got = local.value_summaries(role, cols), dist.value_summaries(role, cols)
        assert json.dumps(want, default=repr) == json.dumps(got, default=repr), role
    want = local.value_summaries("original", cols)
    assert want["a"]["whole"] and not want["c"]["whole"] and not want["few"]["whole"]
    assert want["day"]["whole_days"] and not want["w"]["whole_days"]
    assert want["b"]["values"] == ["x", "y", "z"] and want["e"]["values"] == [False, True]
    assert not local.value_summaries("synthetic", ["day"])["day"]["whole_days"]
    metric = dcr_metric(local.ranges_seconds(cols))
    asked = pd.concat([syn[cols].iloc[:50], orig[cols].iloc[:20], orig[cols].iloc[:20].assign(c=-0.0)],
                      ignore_index=True)
    for k in (1, 3):
        for w, g in zip(local.kneighbors_frame_seconds(asked, "original", cols, metric, k),
                        dist.kneighbors_frame_seconds(asked, "original", cols, metric, k), strict=True):
            np.testing.assert_array_equal(w, g)
    d0 = local.kneighbors_frame_seconds(asked, "original", cols, metric, 1)[0][:, 0]
    assert (d0[50:70] == 0).all()  # copies of original rows
    # a few query rows of a role (fetched and searched alone) and most of them (every row searched)
    in_days = dcr_metric(local.ranges(cols))  # the default encoding (datetimes in days)
    for rows in (np.array([5, 3, 3, 250, 0]), np.arange(0, 280, 2)[::-1], np.arange(200)):
        for ref_rows in (None, np.arange(10, 140)):
            for w, g in zip(local.kneighbors("original", "synthetic", cols, in_days, 2, query_rows=rows,
                                             reference_rows=ref_rows),
                            dist.kneighbors("original", "synthetic", cols, in_days, 2, query_rows=rows,
                                            reference_rows=ref_rows), strict=True):
                np.testing.assert_array_equal(w, g)


def _so_queries(X: np.ndarray, n: int, k: int, seed: int):
    """``n`` random ``k``-column queries on the values of rows of ``X`` (every operator; a missing
    value asks ``is null`` or ``is not null``)."""
    from synthguard.engine import queries as Q

    r = np.random.default_rng(seed)
    cols = np.sort(np.argsort(r.random((n, X.shape[1])), axis=1)[:, :k], axis=1)
    vals = X[r.integers(0, X.shape[0], n)[:, None], cols]
    op = r.integers(0, 6, (n, k))
    op = np.where(np.isnan(vals), np.where(r.random((n, k)) < 0.5, Q.ISNULL, Q.NOTNULL), op)
    return cols.astype(np.int64), op.astype(np.int64), np.where(np.isnan(vals), 0.0, vals)


def test_singling_out_questions_of_the_dask_backend_equal_one_process(dask_client):
    """The singling-out questions from the partitions equal one process's: query counts (every
    row, the distinct rows in hash order, a few rows; capped or not; the lowest matching position
    wherever the count is below the cap), counts in 70 subsets (two chunks of 64), the value flags
    of rows in any order (missing values, ``-0.0`` next to ``0.0``, datetimes) and the medians of
    the rows asked; the counts equal a plain scan's."""
    from synthguard.engine import queries as Q
    from synthguard.engine.backend import query_matrix

    orig, syn, ctl, meta = _anonymeter_tables()
    local, dist = _both_backends(dask_client, orig, syn, ctl, meta)
    order = ["a", "c", "w", "b", "d", "e"]  # numeric columns first, as singling out writes them
    X = query_matrix(local.encoded_rows("synthetic", order, np.arange(local.n_rows("synthetic"))))
    queries = [_so_queries(X, 150, 1, 0), _so_queries(X, 150, 3, 1)]
    for role in ("original", "control"):
        whole = query_matrix(local.encoded_rows(role, order, np.arange(local.n_rows(role))))
        distinct = local.distinct_order(role, order)
        few = np.random.default_rng(2).permutation(distinct)[:90]
        for q in queries:
            for rows in (None, distinct, few):
                plain = Q.count_matches(whole if rows is None else whole[np.sort(rows)], *q)[0]
                for cap in (None, 2):
                    want = local.query_counts(role, order, q, cap=cap, rows=rows)
                    got = dist.query_counts(role, order, q, cap=cap, rows=rows)
                    np.testing.assert_array_equal(want[0], got[0])
                    np.testing.assert_array_equal(want[0], plain if cap is None else np.minimum(plain, cap))
                    below = want[0] < (cap or np.inf)
                    np.testing.assert_array_equal(want[1][below], got[1][below])
        r = np.random.default_rng(3)
        subsets = [r.choice(distinct, int(s), replace=False) for s in r.integers(1, distinct.size, 70)]
        want = local.query_subset_counts(role, order, queries[1], subsets)
        np.testing.assert_array_equal(want, dist.query_subset_counts(role, order, queries[1], subsets))
        assert want.shape == (70, 150)
        plain = np.array([np.minimum(Q.count_matches(whole[np.sort(s)], *queries[1])[0], 2) for s in subsets[::9]])
        np.testing.assert_array_equal(want[::9], plain)
    for role in ("synthetic", "control"):
        rows = np.random.default_rng(4).permutation(local.distinct_order(role, order))
        for cols in (order, ["c", "b"]):
            want, got = local.value_flags(role, cols, rows), dist.value_flags(role, cols, rows)
            assert set(want) == set(got) == {"missing", "first", "once", "low", "high"}
            for k in want:
                np.testing.assert_array_equal(want[k], got[k], err_msg=k)
        for cols in (["a", "c", "w"], ["b", "c"]):
            np.testing.assert_array_equal(local.medians(role, cols, rows[::3]), dist.medians(role, cols, rows[::3]))
    flags = local.value_flags("synthetic", ["c"], local.distinct_order("synthetic", order))
    assert flags["missing"].any() and (flags["first"] & ~flags["once"]).any()
    both = pd.DataFrame({"e": [True, False]})
    np.testing.assert_array_equal(local.encode_frame(both, ["e"]).cat, dist.encode_frame(both, ["e"]).cat)


@pytest.mark.metric_on_dask
def test_singling_out_on_dask_equals_single_process(dask_client):
    """singling_out_univariate and singling_out_multivariate ask the backend for the release's
    value flags and medians, the release rows their queries come from and every count (the
    original's, the control's, the control curve's subsamples, the pooled evidence): with
    defaults and a named variant each, every entry (records included) and the verdict's tests are
    the JSON of one process."""
    orig, syn, ctl, meta = _anonymeter_tables()
    metrics = [
        "singling_out_univariate", "singling_out_multivariate",
        {"name": "so_uni_few", "metric": "singling_out_univariate", "n_attacks": 40, "n_records": 5},
        {"name": "so_multi_all", "metric": "singling_out_multivariate", "max_n_attacks": True, "n_cols": 2,
         "columns": ["a", "b", "c", "w"]},
    ]
    names = [m if isinstance(m, str) else m["name"] for m in metrics]
    single = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=5)
    dist = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=5, client=dask_client)
    _assert_same(single, dist, names)
    res = {n: single[n]["result"] for n in names}
    for n in names:
        assert res[n]["evidence"] is not None and res[n]["records"], n
    assert res["so_uni_few"]["n_attacks"] == 40 and len(res["so_uni_few"]["records"]) <= 5
    assert res["so_multi_all"]["n_cols"] == 2
    tests = [json.dumps(r.to_dict()["verdict"]["tests"], sort_keys=True, default=str) for r in (single, dist)]
    assert tests[0] == tests[1]
    assert {"singling_out_univariate", "singling_out_multivariate"} <= {
        t["metric"] for t in single.to_dict()["verdict"]["tests"]}

    # a control of four training records: the curve of its subsamples cannot be fitted, the
    # equal-size comparison (the attack counted on as many of the original's rows) instead
    single = evaluate(orig, syn, orig.iloc[:4], meta, metrics=["singling_out_univariate"], seed=1)
    dist = evaluate(orig, syn, orig.iloc[:4], meta, metrics=["singling_out_univariate"], seed=1,
                    client=dask_client)
    _assert_same(single, dist, ["singling_out_univariate"])
    assert "equal-size" in single["singling_out_univariate"]["result"]["control_correction"]["method"]



@pytest.mark.metric_on_dask
def test_a_long_multivariate_search_on_dask_counts_on_the_driver_once_it_holds_the_release(dask_client,
                                                                                          monkeypatch):
    """A multivariate singling-out search that runs batch after batch on a cluster holds the whole
    release's query matrix from its second batch on (the backend hands its rows out whole) and
    the backend counts the later batches' queries over those rows on the driver, not by a round
    trip to every partition a batch: the release's counts of the first batch only reach the
    partitions, and every entry (records included) is the JSON of one process."""
    from synthguard.distributed._backend import DaskBackend
    from synthguard.distributed._tables import DistTables

    orig, syn, ctl, meta = _anonymeter_tables()
    metrics = [{"name": "so_long", "metric": "singling_out_multivariate", "n_attacks": 2000, "n_cols": 3}]
    single = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=3)
    trips, batches = [0], []
    counts, compute, where_held = DaskBackend.query_counts, DistTables.compute, DistTables.compute_where_held

    def counting(self, role, columns, queries, **kwargs):
        before = trips[0]
        out = counts(self, role, columns, queries, **kwargs)
        if role == "synthetic":
            batches.append(trips[0] > before)  # whether the partitions were asked
        return out

    def tripping(original):
        def run(self, *args, **kwargs):
            trips[0] += 1
            return original(self, *args, **kwargs)
        return run

    monkeypatch.setattr(DaskBackend, "query_counts", counting)
    monkeypatch.setattr(DistTables, "compute", tripping(compute))
    monkeypatch.setattr(DistTables, "compute_where_held", tripping(where_held))
    dist = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=3, client=dask_client)
    _assert_same(single, dist, ["so_long"])
    res = single["so_long"]["result"]
    assert res["n_query_attempts"] > 3 * 1000  # batches of at least 1,000 attempts: several batches
    assert len(batches) > 3 and batches[0], batches  # the first batch asked the partitions
    assert not any(batches[1:]), batches  # the others counted on the driver

def _leaky_tables(seed: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Training, release and control rows of ``_frame`` with a column ``f`` of many values (a row
    is nearly always unique): the release holds 30 verbatim copies of training rows, 15 copies
    with one cell changed and, shuffled among them, fresh rows and a control row."""
    def sparse(n: int, s: int) -> pd.DataFrame:
        return _frame(n, s).assign(f=np.random.default_rng(s).integers(0, 100_000, n).astype(float))

    orig, ctl = sparse(200, seed), sparse(200, seed + 2)
    one_cell = orig.iloc[30:45].assign(d="s")
    syn = pd.concat([sparse(120, seed + 1), orig.iloc[:30], one_cell, ctl.iloc[:1]],
                    ignore_index=True).sample(frac=1.0, random_state=seed).reset_index(drop=True)
    return orig, syn, ctl


@pytest.mark.metric_on_dask
def test_drop_and_retest_on_dask_equals_single_process(dask_client):
    """A cluster run lists the release rows behind the copy tests' flags (the exact and one-cell
    copies, with their crowds and chance baselines asked of the backend, only the rows behind the
    pairs fetched) and re-tests the release without those to drop, filtered on the cluster: every
    risk's drop_retest, the records export and the drop-and-retest's rounds equal one process's."""
    orig, syn, ctl = _leaky_tables(5)
    meta = {**META, "columns": {**META["columns"], "f": {"sdtype": "numerical"}}}
    metrics = ["exact_matches", "near_copies"]
    kw = dict(metrics=metrics, seed=2, retest_rows=2, retest_columns=0)
    single = evaluate(orig, syn, ctl, meta, **kw)
    dist = evaluate(orig, syn, ctl, meta, client=dask_client, **kw)
    one, many = single.to_dict(), dist.to_dict()

    def dumps(value) -> str:
        return json.dumps(without_seconds(value), sort_keys=True, default=str)

    assert dumps(one["verdict"]) == dumps(many["verdict"])
    entries = [r["drop_retest"] for r in one["verdict"]["risks"] if r.get("drop_retest")]
    assert entries and all(e["level_before"] == "high" and e["level_after"] != "high" for e in entries)
    assert dumps(one["records"]) == dumps(many["records"])
    assert {r["action"] for r in one["records"]} >= {"drop"}
    assert dumps(one["actions"]["drop_retest"]) == dumps(many["actions"]["drop_retest"])
    pd.testing.assert_frame_equal(single.records(), dist.records())


@pytest.mark.parametrize("npartitions", [1, 3])
def test_first_positions_grouped_on_the_driver_equal_the_dask_group_by(dask_client, monkeypatch,
                                                                        npartitions):
    """``first_positions`` groups the rows' identities on the driver up to ``DRIVER_GROUP_ROWS``
    pooled rows (one round, one sort) and by a dask group-by and join above it: the same ids (each
    row's lowest pooled position of its content) either way, over every role or some, binned or
    not, with equal rows across roles and partitions; and the groups of one process."""
    from synthguard.distributed import _backend

    orig, syn, ctl = _leaky_tables(5)
    meta = {**META, "columns": {**META["columns"], "f": {"sdtype": "numerical"}}}
    local, dist = _both_backends(dask_client, orig, syn, ctl, meta, npartitions)
    every = ("original", "synthetic", "control")
    bins = {"f": np.array([20_000.0, 50_000.0, 80_000.0]), "a": np.array([0.0])}
    cases = [(["a", "b", "c", "d", "e", "f"], ("original", "synthetic"), None),
             (["a", "b"], every, None), (["a", "b", "f"], ("original", "control", "synthetic"), bins)]
    for columns, roles, cut in cases:
        gathered = _backend.first_positions(dist.dt, columns, roles, cut)
        with monkeypatch.context() as m:
            m.setattr(_backend, "DRIVER_GROUP_ROWS", 0)  # the dask group-by and join
            grouped = _backend.first_positions(dist.dt, columns, roles, cut)
        pooled = np.concatenate([gathered[r] for r in roles])
        assert (pooled != np.arange(pooled.size)).sum() >= 30  # equal rows do share an id
        np.testing.assert_array_equal(pooled, np.concatenate([grouped[r] for r in roles]))
        want = local.key_ids(columns, roles, bins=cut)
        np.testing.assert_array_equal(pd.factorize(np.concatenate([want[r] for r in roles]))[0],
                                      pd.factorize(pooled)[0])


@pytest.mark.parametrize("npartitions", [1, 3])
def test_drop_list_questions_of_the_dask_backend_equal_one_process(dask_client, npartitions):
    """What the drop list asks of a cluster equals one process's answers: crowds of fetched rows,
    the copy tests' chance baselines, key ids (the same groups, binned or not), each row's
    distinct row, and the release without some rows (the same rows in the same canonical order,
    each with its position in the full release); on one partition a table as on three."""
    from synthguard.data.hashing import row_hashes
    from synthguard.distributed._tables import without_rows
    from synthguard.metrics.privacy._copies import (
        _code_matrices,
        backend_chance_crowds,
        backend_crowds,
        chance_crowds,
    )
    from synthguard.registry import Context
    from synthguard.run.actions import _without_rows

    orig, syn, ctl = _leaky_tables(5)
    # control records equal to a training record, and within one cell of one (chance baselines)
    ctl = pd.concat([ctl, orig.iloc[50:55], orig.iloc[60:63].assign(d="t")], ignore_index=True)
    meta = {**META, "columns": {**META["columns"], "f": {"sdtype": "numerical"}}}
    local, dist = _both_backends(dask_client, orig, syn, ctl, meta, npartitions)
    assert len(dist.dt.get("synthetic").parts) == npartitions
    ctx = Context.from_frames(orig, syn, ctl, meta)
    cols = ["a", "b", "c", "d", "e", "f"]
    real, _ = _code_matrices(ctx, cols)
    for k in (0, 1):
        want = chance_crowds(real, len(orig), k)
        assert (want >= 0).any()
        np.testing.assert_array_equal(backend_chance_crowds(dist, cols, k), want)
    rows = np.array([7, 3, 3, 150, 0])
    for k in (1, 2):
        np.testing.assert_array_equal(backend_crowds(dist, dist.take("synthetic", rows, cols), cols, k),
                                      backend_crowds(local, local.take("synthetic", rows, cols), cols, k))
    roles = ("original", "control", "synthetic")
    want, got = local.key_ids(["a", "b"], roles), dist.key_ids(["a", "b"], roles)
    np.testing.assert_array_equal(pd.factorize(np.concatenate([want[r] for r in roles]))[0],
                                  pd.factorize(np.concatenate([got[r] for r in roles]))[0])
    # binned: the numbers cut at the same edges group the rows alike (f spans 0..100,000)
    bins = {"f": np.array([20_000.0, 50_000.0, 80_000.0]), "a": np.array([0.0])}
    want = local.key_ids(["a", "b", "f"], roles, bins=bins)
    got = dist.key_ids(["a", "b", "f"], roles, bins=bins)
    pooled = pd.factorize(np.concatenate([want[r] for r in roles]))[0]
    assert pooled.max() + 1 < sum(len(want[r]) for r in roles) // 4  # the bins do group rows
    np.testing.assert_array_equal(pooled, pd.factorize(np.concatenate([got[r] for r in roles]))[0])
    h = row_hashes(ctx.tables.synthetic[cols])
    np.testing.assert_array_equal(dist.distinct_index("synthetic", cols),
                                  np.unique(h, return_inverse=True)[1].ravel())
    from synthguard.distributed import cluster_backend

    some = np.zeros(len(syn), dtype=bool)
    some[[0, 5, 6, 40, len(syn) - 1]] = True
    # every row of the first input partition, and one more: the filter empties a partition
    nums = dist.dt.row_numbers.get("synthetic")
    inputs = np.arange(len(syn)) if nums is None else np.asarray(nums)
    whole = inputs < int(dist.dt.get("synthetic").lengths[0])
    whole[np.flatnonzero(~whole)[:1]] = True
    for dropped in (some, whole) if npartitions > 1 else (some,):
        new, pos, _ = _without_rows(ctx.tables, dropped)
        dnew, dpos = without_rows(dist.dt, dropped)
        np.testing.assert_array_equal(dpos, pos)
        every = np.arange(len(new.synthetic))
        pd.testing.assert_frame_equal(cluster_backend(dnew).take("synthetic", every, cols),
                                      new.synthetic[cols].reset_index(drop=True), check_dtype=False)
        assert dnew.encoder._vocab == \
            Context.from_frames(orig, new.synthetic, ctl, meta).encoded.encoder._vocab
    if npartitions > 1:
        assert len(dnew.get("synthetic").parts) < len(dist.dt.get("synthetic").parts)  # one emptied
