"""On a cluster, the identifier decisions rest on the whole tables, as in one process (issue 31).

The schema of a distributed load is inferred from the first partition of each table, but whether
a column is an identifier depends on whole-column facts: unique values, no value shared between
the original and the other tables, the row numbers of the whole table. A person number unique in
the first partition but carried by copied rows in other partitions is no identifier on the whole
tables, so it must not be one on a cluster either.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthguard.data.tables import prepare_tables

pytest.importorskip("dask.dataframe", reason="dask is not installed: pip install 'synthguard[dask]'")
pytest.importorskip("distributed", reason="distributed is not installed: pip install 'synthguard[dask]'")


def _tables(n: int = 120, seed: int = 3) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Original, release and control of ``n`` rows each. ``seqn`` is a person number (the release
    copies original rows from the other end of the table, so the first partitions share none);
    ``user_id`` is unique in the first partition of the original but repeats over its partitions;
    ``row_key`` is a genuine surrogate key (unique everywhere, nothing shared); ``rowno`` holds the
    row numbers of each table, shuffled (the first partition alone is not ``0..k-1``); ``city`` has
    fewer distinct values in the first partition than in the table (its reason counts them)."""
    r = np.random.default_rng(seed)

    def frame(seqn: np.ndarray, keys: np.ndarray) -> pd.DataFrame:
        return pd.DataFrame({
            "seqn": seqn, "age": r.integers(20, 80, n), "sex": r.choice(["f", "m"], n),
            "score": r.normal(size=n).round(2), "user_id": np.tile(np.arange(n // 3), 3)[:n] + 7,
            "row_key": keys, "rowno": r.permutation(n), "city": np.repeat(["a", "b", "c", "d"], n // 4)})

    original = frame(np.arange(1000, 1000 + n), np.arange(n) * 2)
    synthetic = frame(np.arange(5000, 5000 + n), np.arange(n) * 2 + 1)
    copied = original.iloc[::-1].iloc[: n // 3]  # the original's last rows
    synthetic.iloc[: n // 3, [0, 1, 2, 3]] = copied[["seqn", "age", "sex", "score"]].to_numpy()
    synthetic["seqn"] = synthetic["seqn"].astype(np.int64)
    control = frame(np.arange(9000, 9000 + n), np.arange(n) * 2 + 10_001)
    return original, synthetic, control


def _one_process(original, synthetic, control, metadata=None):
    return prepare_tables(original, synthetic, control, metadata, canonical_columns=True).schema


def _on_cluster(client, original, synthetic, control, metadata=None, npartitions=3):
    from synthguard.distributed._tables import load_tables

    return load_tables(original, synthetic, control, metadata, client=client, npartitions=npartitions).schema


def _specs(schema):
    return {c: (s.sdtype, s.reason, s.inferred) for c, s in schema.columns.items()}


def test_identifiers_decided_on_whole_tables(dask_client):
    original, synthetic, control = _tables()
    one = _one_process(original, synthetic, control)
    # the first partitions alone read seqn and user_id as identifiers and rowno as a number
    heads = _one_process(*(t.iloc[:40] for t in (original, synthetic, control)))
    assert heads.sdtype("seqn") == "id" and heads.sdtype("user_id") == "id"
    assert heads.sdtype("rowno") == "numerical"
    assert one.sdtype("seqn") == "numerical" and one.sdtype("user_id") == "numerical"
    assert one.sdtype("row_key") == "id" and one.sdtype("rowno") == "id"
    for npartitions in (2, 3):
        assert _specs(_on_cluster(dask_client, original, synthetic, control, npartitions=npartitions)) \
            == _specs(one)


def test_genuine_identifiers_stay(dask_client):
    """Unique everywhere: an id named like one stays an id, a surrogate key stays a surrogate key."""
    original, synthetic, control = _tables()
    for t, off in ((original, 0), (synthetic, 10_000), (control, 20_000)):
        t["user_id"] = np.arange(len(t)) + off
        t["seqn"] = np.arange(len(t)) + 50_000 + off
    one = _one_process(original, synthetic, control)
    assert one.sdtype("user_id") == "id" and one.sdtype("seqn") == "id"
    assert _specs(_on_cluster(dask_client, original, synthetic, control)) == _specs(one)


def test_declared_sdtypes_win(dask_client):
    original, synthetic, control = _tables()
    meta = {"columns": {"seqn": {"sdtype": "id"}, "row_key": {"sdtype": "numerical"}}}
    one = _one_process(original, synthetic, control, meta)
    assert one.sdtype("seqn") == "id" and one.sdtype("row_key") == "numerical"
    assert _specs(_on_cluster(dask_client, original, synthetic, control, meta)) == _specs(one)


def test_text_identifier_repeated_over_partitions(dask_client):
    """A text column named like an identifier, unique in the first partition only: categorical
    with the whole column's count of distinct values, as in one process."""
    original, synthetic, control = _tables()
    for t in (original, synthetic, control):
        t["user_id"] = "u" + t["user_id"].astype(str)
    one = _one_process(original, synthetic, control)
    assert one.sdtype("user_id") == "categorical"
    assert _specs(_on_cluster(dask_client, original, synthetic, control)) == _specs(one)


def test_nhefs_copies_keep_seqn(dask_client, shared_data):
    """nhefs: a release of fresh rows and 1% copies of the original's last rows (shuffled): seqn is
    unique in every first partition and shares no value between them, but the copies carry their
    originals' numbers: not an identifier, as in one process."""
    data = pd.read_csv(shared_data / "nhefs.csv")
    order = np.random.default_rng(0).permutation(len(data))
    original, control, fresh = (data.iloc[order[a:b]].reset_index(drop=True)
                                for a, b in ((0, 600), (600, 1000), (1000, 1594)))
    synthetic = pd.concat([fresh, original.iloc[-6:]]).sample(frac=1.0, random_state=3).reset_index(drop=True)
    heads = _one_process(*(t.iloc[:150] for t in (original, synthetic, control)))
    assert heads.sdtype("seqn") == "id"  # what the first partitions alone say
    one = _one_process(original, synthetic, control)
    on_dask = _on_cluster(dask_client, original, synthetic, control, npartitions=4)
    assert {c: s.sdtype for c, s in on_dask.columns.items()} == {c: s.sdtype for c, s in one.columns.items()}
    assert on_dask.columns["seqn"] == one.columns["seqn"]


def test_padded_identifier_and_integer_column_names(dask_client):
    """The sdtype inference counts values as given (before surrounding whitespace is stripped), the
    detections after it; columns labelled by integers are found by their names as text."""
    original, synthetic, control = _tables()
    for t, p in ((original, "u"), (synthetic, "s"), (control, "c")):
        t["user_id"] = p + pd.Series(np.arange(len(t))).astype(str)
    original.loc[100, "user_id"] = "u5 "  # "u5" once more, padded, in the last partition
    one = _one_process(original, synthetic, control)
    assert one.sdtype("user_id") == "id"
    assert _specs(_on_cluster(dask_client, original, synthetic, control)) == _specs(one)
    frames = [t.set_axis(range(t.shape[1]), axis=1) for t in (original, synthetic, control)]
    one = _one_process(*frames)
    assert one.sdtype("0") == "numerical"  # seqn: copied across partitions
    assert _specs(_on_cluster(dask_client, *frames)) == _specs(one)


def test_decimal_and_float32_columns_as_decided(dask_client):
    """Values as :func:`~synthguard.data.coltypes.decide_types` casts them: ``decimal.Decimal``
    values (as ``read_sql`` returns a DECIMAL column), unique in every first partition, are numbers,
    not text nor a surrogate identifier; a float64 column the release holds as float32 is rounded to
    float32 in every table (whole numbers above 2**24 then repeat): no surrogate identifier."""
    from decimal import Decimal

    original, synthetic, control = _tables()
    n = len(original)
    for t, off in ((original, 1000), (synthetic, 5000), (control, 9000)):
        t["price"] = [Decimal(f"{off + 1.37 * k:.2f}") for k in range(n)]
    original["amount"] = 2.0 ** 24 + np.arange(n)  # float32: 2**24 + 1 -> 2**24, ...
    synthetic["amount"] = (1e6 + np.arange(n)).astype(np.float32)
    control["amount"] = 3e6 + np.arange(n)
    one = _one_process(original, synthetic, control)
    assert one.sdtype("price") == "numerical" and one.sdtype("amount") == "numerical"
    assert _specs(_on_cluster(dask_client, original, synthetic, control)) == _specs(one)


def test_continuous_floats_not_gathered(dask_client, monkeypatch):
    """A numerical column holding a fractional value in a first partition cannot become an
    identifier under any rule (each needs an integer dtype or whole numbers): its facts are not
    gathered from the partitions; the schema is one process's."""
    from synthguard.distributed import _tables as mod

    seen: set[str] = set()
    chosen = mod.fact_columns

    def spy(schema, heads):
        columns = chosen(schema, heads)
        seen.update(columns)
        return columns

    monkeypatch.setattr(mod, "fact_columns", spy)
    original, synthetic, control = _tables()
    r = np.random.default_rng(5)
    for t in (original, synthetic, control):
        t["weight"] = r.normal(70, 10, len(t))  # unique in every first partition
        t["whole"] = r.permutation(len(t)) * 1.0 + 0.5 * (t is original)
    one = _one_process(original, synthetic, control)
    assert _specs(_on_cluster(dask_client, original, synthetic, control)) == _specs(one)
    assert seen and "weight" not in seen and "score" not in seen and "seqn" in seen
    assert "whole" not in seen  # fractional in the original's first partition


def test_distinct_values_as_pandas_compares_them(dask_client):
    """Unique and distinct counts as pandas counts them in one process: ``-0.0`` equals ``0.0`` (a
    whole-number float column is then no surrogate identifier), an object column's ``1`` and ``"1"``
    are two values (a surrogate identifier: no value shared between the tables as text)."""
    original, synthetic, control = _tables()
    n = len(original)
    for t, off in ((original, 0), (synthetic, 1000), (control, 2000)):
        t["code"] = np.arange(n, dtype=np.float64) + off
        t["ref"] = pd.Series([f"{'osc'[off // 1000]}{k}" for k in range(n)], dtype=object)
    original.loc[n - 1, "code"] = -0.0  # 0.0 is in the first partition
    original["ref"] = original["ref"].astype(object)
    original.loc[5, "ref"], original.loc[n - 1, "ref"] = 1, "1"
    one = _one_process(original, synthetic, control)
    assert one.sdtype("code") == "numerical" and one.sdtype("ref") == "id"
    assert _specs(_on_cluster(dask_client, original, synthetic, control)) == _specs(one)
