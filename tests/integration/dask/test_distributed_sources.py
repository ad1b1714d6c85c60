"""A distributed run reads the sources of synthguard.data.sources (an fsspec URL of Parquet files,
a DuckDB query) and gives the numbers of one process on the same rows."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from synthguard import evaluate
from synthguard.data.sources import SqlSource

pytest.importorskip("dask.dataframe", reason="dask is not installed: pip install 'synthguard[dask]'")
pytest.importorskip("distributed", reason="distributed is not installed: pip install 'synthguard[dask]'")


def _entry(report, name):
    entry = dict(report[name])
    entry.pop("seconds", None)
    return json.dumps(entry, sort_keys=True, default=str)


def test_memory_url_and_duckdb_query_equal_one_process(dask_client, shared_data, tmp_path):
    fsspec = pytest.importorskip("fsspec", reason="fsspec is not installed: pip install 'synthguard[parquet]'")
    pytest.importorskip("duckdb", reason="DuckDB is not installed: pip install 'synthguard[duckdb]'")
    df = pd.read_csv(shared_data / "acs12.csv")
    idx = np.random.default_rng(1).permutation(len(df))
    orig, ctl = df.iloc[idx[:500]].reset_index(drop=True), df.iloc[idx[500:900]].reset_index(drop=True)
    syn = pd.concat([df.iloc[idx[900:1100]], orig.iloc[:60]], ignore_index=True)  # control held out
    fs = fsspec.filesystem("memory")
    for i, part in enumerate(np.array_split(np.arange(len(orig)), 3)):
        with fs.open(f"memory://sg-dask/original/part-{i}.parquet", "wb") as fh:
            orig.iloc[part].to_parquet(fh, index=False)
    syn.to_parquet(tmp_path / "synthetic.parquet", index=False)
    metrics = {"exact_matches": {}, "dcr": {"n_boot": 20}}
    try:
        single = evaluate(orig, syn, ctl, None, metrics=metrics, seed=2)
        dist = evaluate("memory://sg-dask/original/",
                        SqlSource(None, query=f"SELECT * FROM '{tmp_path / 'synthetic.parquet'}'"), ctl,
                        None, metrics=metrics, seed=2, client=dask_client)
    finally:
        fs.rm("/sg-dask", recursive=True)
    assert dist.to_dict()["inputs"]["original"]["source"] == "memory://sg-dask/original/"
    for name in metrics:
        assert dist[name]["status"] == "ok", dist[name].get("reason")
        assert _entry(single, name) == _entry(dist, name)
    assert single["exact_matches"]["result"]["synthetic_match_rate"]["k"] >= 60
