"""A Dask table whose first partition holds no rows (a Parquet folder whose first file is empty,
a filter that empties partition 0) is typed and evaluated as one process does on its rows: the
schema sample is its first partition holding rows. A cluster used to refuse it as empty."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthguard import evaluate
from synthguard.data.tables import prepare_tables
from synthguard.errors import InputError

from .test_distributed_equality import _entries

dd = pytest.importorskip("dask.dataframe", reason="dask is not installed: pip install 'synthguard[dask]'")
pytest.importorskip("distributed", reason="distributed is not installed: pip install 'synthguard[dask]'")


def _table(n: int, seed: int) -> pd.DataFrame:
    """Free text, a yes/no column, ISO dates, a unique identifier, a number with missing values
    and an integer: every sdtype the sample decides."""
    r = np.random.default_rng(seed)
    weight = r.normal(70, 9, n).round(1)
    weight[r.random(n) < 0.1] = np.nan
    return pd.DataFrame({
        "note": [f"the patient {i} was seen on a {d} morning" for i, d in enumerate(r.choice(["monday", "friday"], n))],
        "flag": r.choice(["yes", "no"], n),
        "visit": [f"2020-{1 + i % 12:02d}-{1 + i % 28:02d}" for i in r.integers(0, 400, n)],
        "user_id": [f"u{seed}-{i}" for i in range(n)],
        "weight": weight,
        "age": r.integers(18, 90, n),
    })


def _without_first_rows(frame: pd.DataFrame, source: str, tmp_path) -> dd.DataFrame:
    """``frame`` as a dask DataFrame of three partitions, the first without rows."""
    if source == "parquet":  # a folder whose first file holds no rows
        folder = tmp_path / "original"
        folder.mkdir()
        half = len(frame) // 2
        for i, part in enumerate((frame.iloc[:0], frame.iloc[:half], frame.iloc[half:])):
            part.to_parquet(folder / f"part.{i}.parquet", index=False)
        return dd.read_parquet(str(folder))
    # a filter that keeps no row of partition 0
    padded = pd.concat([frame.iloc[: len(frame) // 2], frame], ignore_index=True)
    padded["keep"] = np.arange(len(padded)) >= len(frame) // 2
    ddf = dd.from_pandas(padded, npartitions=3, sort=False)
    return ddf[ddf["keep"]].drop(columns="keep")


@pytest.mark.parametrize("source", ["parquet", "filter"])
def test_first_partition_without_rows(dask_client, tmp_path, source):
    from synthguard.distributed._tables import load_tables

    original, synthetic, control = _table(120, 1), _table(120, 2), _table(120, 3)
    synthetic.iloc[:30] = original.iloc[60:90].to_numpy()  # copies, for exact matches and dcr
    ddf = _without_first_rows(original, source, tmp_path)
    parts = dask_client.compute(ddf.to_delayed(), sync=True)
    assert len(parts[0]) == 0 and sum(map(len, parts)) == len(original) and len(parts) == 3
    meta = {"quasi_identifiers": ["flag", "age"]}
    one = prepare_tables(original, synthetic, control, meta, canonical_columns=True).schema
    assert {c: one.sdtype(c) for c in ("note", "flag", "visit", "user_id")} == \
        {"note": "text", "flag": "boolean", "visit": "datetime", "user_id": "id"}
    got = load_tables(ddf, synthetic, control, meta, client=dask_client, npartitions=3).schema
    assert got.columns == one.columns and got.to_dict() == one.to_dict()
    # exact matches hash the rows of every partition, the empty one too (it failed on it)
    metrics = {"exact_matches": {}, "dcr": {"n_boot": 20}, "k_anonymity": {"k": 3}}
    single = evaluate(original, synthetic, control, meta, metrics=metrics, seed=2)
    dist = evaluate(ddf, synthetic, control, meta, metrics=metrics, seed=2, client=dask_client)
    assert single.to_dict()["schema"] == dist.to_dict()["schema"]
    for name in metrics:
        assert dist[name]["status"] == "ok", (name, dist[name].get("reason"))
    assert _entries(single, metrics) == _entries(dist, metrics)
    assert single["exact_matches"]["result"]["synthetic_match_rate"]["k"] >= 30


def test_original_without_any_row_is_still_refused(dask_client):
    from synthguard.distributed._tables import load_tables

    original = _table(60, 1)
    ddf = dd.from_pandas(original, npartitions=3, sort=False)
    with pytest.raises(InputError, match="has no rows: give a non-empty table"):
        load_tables(ddf[ddf["age"] < 0], _table(60, 2), None, client=dask_client)
