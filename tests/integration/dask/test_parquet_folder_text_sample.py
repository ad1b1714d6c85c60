"""A folder of Parquet files with an undeclared text column of more than 2,000 values loads on a
cluster with one process's schema.

The sample one process reads from a text column (2,000 values at seeded positions) is gathered
from the partitions by their counts of values; a projection of the text columns used to be read
in fewer partitions than the files (dask fuses a projection of small Parquet partitions), so the
per-partition picks missed the later files and the load failed with ``IndexError``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthguard.data.tables import prepare_tables

pytest.importorskip("dask.dataframe", reason="dask is not installed: pip install 'synthguard[dask]'")
pytest.importorskip("distributed", reason="distributed is not installed: pip install 'synthguard[dask]'")


def _table(n: int, seed: int) -> pd.DataFrame:
    """Two text columns among many numeric ones (a projection of them is a small share of the data:
    dask reads three such files of 1,000 rows as two partitions)."""
    r = np.random.default_rng(seed)
    out = {f"x{j}": r.normal(size=n) for j in range(12)}
    out["sex"] = r.choice(["female", "male"], n)
    out["region"] = r.choice(["r1", "r2", "r3"], n)
    return pd.DataFrame(out)


def _write(frame: pd.DataFrame, folder, rows: int) -> str:
    folder.mkdir()
    for j, a in enumerate(range(0, len(frame), rows)):
        frame.iloc[a:a + rows].to_parquet(folder / f"part.{j}.parquet")
    return str(folder)


def test_text_sample_of_a_parquet_folder_is_read_from_every_file(dask_client, tmp_path):
    from synthguard.distributed._tables import load_tables

    o, s, c = _table(3000, 0), _table(3000, 1), _table(800, 2)
    paths = [_write(f, tmp_path / name, 1000) for f, name in ((o, "o"), (s, "s"), (c, "c"))]
    dt = load_tables(*paths, None, client=dask_client)
    assert [len(dt.get(r).lengths) for r in dt.roles] == [3, 3, 1]
    one = prepare_tables(o, s, c, None, canonical_columns=True).schema
    assert {k: (v.sdtype, v.reason) for k, v in dt.schema.columns.items()} == \
        {k: (v.sdtype, v.reason) for k, v in one.columns.items()}
