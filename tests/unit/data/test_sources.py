"""Sources where large data live (synthguard.data.sources): the forms a table argument takes,
Parquet folders / globs / fsspec URLs, DuckDB and SQLAlchemy (SQLite in process) tables and
queries, types from the source schema, and one-line errors."""

from __future__ import annotations

import decimal
import sys

import numpy as np
import pandas as pd
import pytest

from synthguard.data.loading import load_table
from synthguard.data.sources import ParquetSource, SqlSource, arrow_to_frame, parse_source
from synthguard.data.tables import prepare_tables
from synthguard.errors import ConfigError, InputError

pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed: pip install 'synthguard[parquet]'")


def _frame(n: int = 60, seed: int = 0) -> pd.DataFrame:
    r = np.random.default_rng(seed)
    return pd.DataFrame({"age": r.integers(18, 90, n), "sex": r.choice(["F", "M"], n),
                         "income": r.normal(3e4, 5e3, n).round(2), "zip": r.choice(["01234", "99501"], n)})


def test_table_arguments_name_their_source():
    assert parse_source("sql: SELECT 1") == SqlSource(None, query="SELECT 1")
    assert parse_source("table:public.train", "sqlite:///h.db") == SqlSource("sqlite:///h.db", table="public.train")
    assert parse_source("s3://bucket/train/") == ParquetSource("s3://bucket/train/")
    assert parse_source("data/train-*.parquet") == ParquetSource("data/train-*.parquet")
    assert parse_source("original.csv") is None and parse_source(r"C:\data\original.csv") is None
    with pytest.raises(ConfigError, match="needs the database it lives in: give --db"):
        parse_source("table:train")
    with pytest.raises(ConfigError, match="followed by no query"):
        parse_source("sql:  ")


def test_a_password_never_reaches_a_label():
    src = SqlSource("postgresql://ann:s3cr%21t@db.example:5432/h", query="SELECT * FROM t")
    assert "s3cr" not in src.label and "ann:***@db.example:5432/h" in src.label


def test_an_existing_file_whose_name_looks_like_a_glob_is_a_file(tmp_path):
    path = tmp_path / "rows[1].csv"
    _frame().to_csv(path, index=False)
    assert parse_source(str(path)) is None
    assert load_table(str(path), "original")[1] == str(path)


def _write_parts(df: pd.DataFrame, write, n: int = 3) -> None:
    for i, part in enumerate(np.array_split(np.arange(len(df)), n)):
        write(i, df.iloc[part])


def test_parquet_folder_glob_and_memory_url_read_the_same_rows(tmp_path):
    fsspec = pytest.importorskip("fsspec", reason="fsspec is not installed: pip install 'synthguard[parquet]'")
    df = _frame()
    folder = tmp_path / "train"
    folder.mkdir()
    _write_parts(df, lambda i, p: p.to_parquet(folder / f"part-{i}.parquet", index=False))
    (folder / "_SUCCESS").write_text("")  # what Spark leaves beside the data
    fs = fsspec.filesystem("memory")

    def to_memory(i, part):
        with fs.open(f"memory://sg-test/train/part-{i}.parquet", "wb") as fh:
            part.to_parquet(fh, index=False)

    _write_parts(df, to_memory)
    want = pd.concat([pd.read_parquet(folder / f"part-{i}.parquet") for i in range(3)], ignore_index=True)
    try:
        for where in (str(folder), str(folder / "part-*.parquet"), "memory://sg-test/train/",
                      f"file://{folder}"):
            got, label = load_table(where, "original")
            assert label == where
            pd.testing.assert_frame_equal(got, want)
    finally:
        fs.rm("/sg-test", recursive=True)


def test_hive_partition_folders_become_columns(tmp_path):
    df = _frame()
    for sex, part in df.groupby("sex"):
        (tmp_path / f"sex={sex}").mkdir()
        part.drop(columns="sex").to_parquet(tmp_path / f"sex={sex}" / "p.parquet", index=False)
    got, _ = load_table(str(tmp_path), "original")
    assert sorted(got.columns) == sorted(df.columns) and len(got) == len(df)
    assert got["sex"].astype(str).value_counts().to_dict() == df["sex"].value_counts().to_dict()


def test_parquet_locations_that_cannot_be_read_say_why_in_one_line(tmp_path):
    _frame().to_csv(tmp_path / "a.csv", index=False)
    with pytest.raises(InputError, match=r"could not be read as Parquet .*give Parquet files"):
        load_table(str(tmp_path), "original")
    with pytest.raises(InputError, match="the glob matches no file"):
        load_table(str(tmp_path / "*.parquet"), "original")
    with pytest.raises(InputError, match="holding no file"):
        (tmp_path / "empty").mkdir()
        load_table(str(tmp_path / "empty"), "original")


def test_source_types_decide_not_a_guess_over_text():
    """DECIMAL is a number (correctly rounded from its exact text), DATE a date, INTEGER int64,
    TIME text; a TEXT column of digits stays text where the CSV of the same values is numbers."""
    t = pa.table({"dec": pa.array([decimal.Decimal("0.10"), decimal.Decimal("2.675"), None]),
                  "day": pa.array([18262, 18263, None], pa.date32()),
                  "n": pa.array([1, 2, 3], pa.int32()),
                  "code": pa.array(["1234", "5678", "1234"]),
                  "at": pa.array([3600, 7200, None], pa.time32("s"))})
    f = arrow_to_frame(t, "test")
    assert f["dec"].tolist()[:2] == [0.1, 2.675] and np.isnan(f["dec"].iloc[2])
    assert str(f["day"].dtype).startswith("datetime64") and str(f["day"].iloc[0])[:10] == "2020-01-01"
    assert f["n"].dtype == np.int64 and f["at"].iloc[0] == "01:00:00"
    typed = prepare_tables(f[["code", "n"]], f[["code", "n"]])
    assert typed.schema.sdtype("code") == "categorical"  # the source says text


def test_nested_values_name_the_column_and_the_cast():
    t = pa.table({"tags": pa.array([[1, 2], [3]])})
    with pytest.raises(InputError, match=r"column 'tags' holds list<item: int64> values.*CAST\(tags AS VARCHAR\)"):
        arrow_to_frame(t, "original x")


def test_duckdb_queries_read_files_and_database_files(tmp_path):
    duckdb = pytest.importorskip("duckdb", reason="DuckDB is not installed: pip install 'synthguard[duckdb]'")
    df = _frame()
    _write_parts(df, lambda i, p: p.to_parquet(tmp_path / f"part-{i}.parquet", index=False))
    got, label = load_table(f"sql:SELECT * FROM '{tmp_path}/part-*.parquet' ORDER BY age, income", "original")
    assert label.endswith("(DuckDB in memory)")
    want = df.sort_values(["age", "income"], kind="stable").reset_index(drop=True)
    pd.testing.assert_frame_equal(got.astype(object), want.astype(object))
    db = tmp_path / "h.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE train AS SELECT * FROM df")
    con.close()
    got, label = load_table(SqlSource(f"duckdb:///{db}", table="train"), "original")
    assert len(got) == len(df) and label == f"table train of duckdb:///{db}"
    with pytest.raises(InputError, match="DuckDB could not run it"):
        load_table(SqlSource(f"duckdb:///{db}", table="nope"), "original")
    with pytest.raises(InputError, match="does not exist: check --db"):
        load_table(SqlSource(f"duckdb:///{tmp_path / 'none.duckdb'}", table="train"), "original")


def test_sqlalchemy_tables_take_their_declared_types(tmp_path):
    sa = pytest.importorskip("sqlalchemy", reason="SQLAlchemy is not installed: pip install 'synthguard[sql]'")
    url = f"sqlite:///{tmp_path / 'h.db'}"
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE train (age INTEGER, zip TEXT, income NUMERIC(10, 2), seen DATE)"))
        conn.execute(sa.text("INSERT INTO train VALUES (30, '01234', 12.5, '2020-01-02'), "
                             "(41, '99501', NULL, '2021-03-04')"))
    engine.dispose()
    got, label = load_table(SqlSource(url, table="train"), "original")
    assert label == f"table train of {url}"
    assert got["zip"].tolist() == ["01234", "99501"] and got["age"].dtype == np.int64
    assert str(got["seen"].dtype).startswith("datetime64")
    got, _ = load_table(SqlSource(url, query="SELECT age, zip FROM train WHERE age > 35"), "original")
    assert got.to_dict("list") == {"age": [41], "zip": ["99501"]}
    with pytest.raises(InputError, match="no table 'nope' in the database"):
        load_table(SqlSource(url, table="nope"), "original")
    with pytest.raises(InputError, match="the database refused it"):
        load_table(SqlSource(url, query="SELECT nope FROM train"), "original")
    with pytest.raises(InputError, match="not a database URL SQLAlchemy knows"):
        load_table(SqlSource("nodb://x/y", table="t"), "original")


@pytest.mark.parametrize(("source", "extra"), [(SqlSource(None, query="SELECT 1"), "duckdb"),
                                                (SqlSource("sqlite:///x.db", table="t"), "sql")])
def test_a_missing_extra_is_named(monkeypatch, source, extra):
    blocked = "duckdb" if extra == "duckdb" else "sqlalchemy"
    monkeypatch.setitem(sys.modules, blocked, None)  # what an uninstalled package looks like to import
    with pytest.raises(InputError, match=rf"needs {blocked}, which is not installed: pip install 'synthguard\[{extra}\]'"):
        load_table(source, "original")
