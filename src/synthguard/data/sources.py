"""Tables where large data live: Parquet folders, globs and object stores, DuckDB over files, and a
database table or query through SQLAlchemy.

Every source is read as an Arrow table and handed on as a typed DataFrame, like a Parquet file: the
column types come from the source's schema (Arrow / SQL types), never from a guess over text, and
enter the one typing decision (:func:`synthguard.data.coltypes.decide_types`) as a typed input
does: a text column stays text in every table (codes keep their leading zeros), numbers stay
numbers, dates arrive as dates. Types are normalised once here, on whole Arrow columns:

* ``DECIMAL`` / ``NUMERIC`` -> float64 (through their exact decimal text, correctly rounded, so the
  same number as the CSV ``1234.5678`` gives);
* ``DATE`` -> timestamp (a date, as the CSV's ``2020-01-31`` is read);
* ``INTEGER`` / ``SMALLINT`` (32, 16, 8 bits) -> int64, as a CSV's integers are read;
* ``TIME``, ``INTERVAL``, ``UUID``, binary -> text; nested types (lists, structs) -> one error line
  naming the column and the cast that fixes it.

Forms (see ``docs/scaling.md``)
-------------------------------
* a Parquet folder (a partitioned dataset, ``key=value`` folders read as columns), a glob
  (``data/train-*.parquet``) or an fsspec URL of either (``s3://bucket/train/``, ``file:///...``,
  ``memory://...``): :class:`ParquetSource`;
* ``sql:SELECT ...``: a query; ``table:NAME``: a table; both run on the database ``db``: a
  SQLAlchemy URL (``postgresql://user@host/db``, ``sqlite:///file.db``...) or DuckDB
  (``duckdb:`` in memory, ``duckdb:///path/file.duckdb``); a ``sql:`` query without ``db`` runs
  in an in-memory DuckDB, which reads files itself (``sql:SELECT * FROM 'train/*.parquet'``):
  :class:`SqlSource`.

The optional dependencies are detected when a source is read: ``synthguard[parquet]`` (pyarrow,
fsspec), ``synthguard[duckdb]``, ``synthguard[sql]`` (SQLAlchemy and the PostgreSQL driver).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import ConfigError, InputError

__all__ = ["ParquetSource", "SqlSource", "arrow_to_frame", "as_source", "is_source", "parse_source",
           "read_source"]

#: a URL scheme (two letters or more, so that ``C:\\data`` stays a Windows path)
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]+)://")
_GLOB = re.compile(r"[*?\[]")
#: rows fetched from a database cursor at a time (each batch becomes Arrow columns at once)
FETCH_ROWS = 50_000
EXTRAS = {"pyarrow": "parquet", "fsspec": "parquet", "duckdb": "duckdb", "sqlalchemy": "sql"}


@dataclass(frozen=True)
class ParquetSource:
    """A Parquet folder, glob or URL (local or any fsspec file system).

    Examples
    --------
    >>> ParquetSource("s3://bucket/train/").label
    's3://bucket/train/'
    """

    location: str
    storage_options: tuple[tuple[str, Any], ...] = ()

    @property
    def label(self) -> str:
        return self.location

    def __str__(self) -> str:  # the Dask backend reads it as a path / URL
        return self.location


@dataclass(frozen=True)
class SqlSource:
    """A table or a query of a database (``db``: a SQLAlchemy URL, or DuckDB).

    Examples
    --------
    >>> SqlSource("postgresql://ann:secret@db.example/hospital", table="train").label
    'table train of postgresql://ann:***@db.example/hospital'
    >>> SqlSource(None, query="SELECT * FROM 'train.parquet'").label
    "sql:SELECT * FROM 'train.parquet' (DuckDB in memory)"
    """

    db: str | None
    table: str | None = None
    query: str | None = None

    def __post_init__(self) -> None:
        if (self.table is None) == (self.query is None):
            raise ConfigError("a database source needs exactly one of a table and a query")
        if self.table is not None and self.db is None:
            raise ConfigError(f"table:{self.table} needs the database it lives in: give --db URL "
                              "(e.g. postgresql://user@host/dbname, or duckdb:///file.duckdb)")

    @property
    def label(self) -> str:
        where = "DuckDB in memory" if self.db is None else _mask(self.db)
        if self.table is not None:
            return f"table {self.table} of {where}"
        return f"sql:{self.query} ({where})" if self.db is None else f"sql:{self.query} on {where}"


TableSource = ParquetSource | SqlSource


def _mask(url: str) -> str:
    """``url`` with any password replaced by ``***`` (labels end up in reports)."""
    return re.sub(r"(://[^:/@]+:)[^@/]*@", r"\1***@", url)


def parse_source(text: str, db: str | None = None) -> TableSource | None:
    """The source a table argument names, or ``None`` for a plain file path.

    Parameters
    ----------
    text : str
        ``sql:QUERY``, ``table:NAME``, a URL, a glob, or a folder; anything else is a file path.
    db : str, optional
        The database of ``sql:`` and ``table:`` (``--db``).

    Examples
    --------
    >>> parse_source("table:train", "postgresql://localhost/h")
    SqlSource(db='postgresql://localhost/h', table='train', query=None)
    >>> parse_source("data/*.parquet")
    ParquetSource(location='data/*.parquet', storage_options=())
    >>> parse_source("original.csv") is None
    True
    """
    text = str(text)
    low = text[:6].lower()
    if low.startswith("sql:"):
        query = text[4:].strip()
        if not query:
            raise ConfigError("sql: is followed by no query: write e.g. \"sql:SELECT * FROM train\"")
        return SqlSource(db, query=query)
    if low.startswith("table:"):
        name = text[6:].strip()
        if not name:
            raise ConfigError("table: is followed by no name: write e.g. table:train")
        return SqlSource(db, table=name)
    path = Path(text)
    if _SCHEME.match(text):
        if path.exists():
            return None
        return ParquetSource(text)
    if path.is_dir() or (_GLOB.search(text) and not path.exists()):
        return ParquetSource(text)
    return None


def is_source(obj: Any) -> bool:
    """Whether :func:`synthguard.data.loading.load_table` reads ``obj`` here (a source object, or a
    string / path naming a folder, a glob, a URL, ``sql:`` or ``table:``)."""
    if isinstance(obj, (ParquetSource, SqlSource)):
        return True
    return isinstance(obj, (str, Path)) and parse_source(str(obj)) is not None


def as_source(obj: Any, db: str | None = None) -> Any:
    """``obj`` as a source object when it names one (see :func:`parse_source`), else unchanged."""
    if isinstance(obj, (ParquetSource, SqlSource)) or not isinstance(obj, (str, Path)):
        return obj
    return parse_source(str(obj), db) or obj


def _require(module: str, what: str) -> Any:
    """Import ``module`` or fail with one line naming the extra that installs it."""
    from importlib import import_module

    try:
        return import_module(module)
    except ImportError as exc:
        extra = EXTRAS[module.split(".")[0]]
        raise InputError(f"{what} needs {module.split('.')[0]}, which is not installed: "
                         f"pip install 'synthguard[{extra}]'") from exc


def read_source(source: Any, name: str) -> tuple[pd.DataFrame, str]:
    """Read a source as a typed DataFrame (see the module docstring).

    Parameters
    ----------
    source : ParquetSource, SqlSource, str or Path
        A source, or a string :func:`parse_source` turns into one.
    name : str
        The table's role (``"original"``...), for messages.

    Returns
    -------
    frame : DataFrame
    label : str
        The source's label for messages and reports (a password in a URL shown as ``***``).

    Raises
    ------
    InputError
        One line naming the source, the column and the fix.
    """
    src = as_source(source)
    if isinstance(src, ParquetSource):
        table = _read_parquet(src, name)
    elif isinstance(src, SqlSource):
        table = _read_sql(src, name)
    else:
        raise InputError(f"{name}: {source!r} names no folder, glob, URL or database source")
    return arrow_to_frame(table, f"{name} {src.label}"), src.label


def _read_parquet(src: ParquetSource, name: str) -> Any:
    """The Arrow table of a Parquet folder, glob or URL, files in sorted path order."""
    _require("pyarrow", f"{name} {src.label}")
    fsspec = _require("fsspec", f"{name} {src.label}")
    import pyarrow.dataset as ds

    label = f"{name} {src.label}"
    try:
        fs, path = fsspec.core.url_to_fs(src.location, **dict(src.storage_options))
    except (ImportError, ValueError) as exc:  # an unknown protocol, or its package missing
        raise InputError(f"{label}: {str(exc).splitlines()[0]}: install the package for this URL, "
                         "or give a local path") from exc
    base = None
    if _GLOB.search(path):
        files = sorted(f for f in fs.glob(path) if fs.isfile(f))
        if not files:
            raise InputError(f"{label}: the glob matches no file: check the pattern")
    elif fs.isdir(path):
        base = path.rstrip("/")
        files = sorted(f for f in fs.find(base) if not _hidden(f[len(base):]))
        if not files:
            raise InputError(f"{label} is a folder holding no file: give a folder of Parquet files")
    elif fs.exists(path):
        files = [path]
    else:
        raise InputError(f"{label} does not exist: check the path")
    try:
        dataset = ds.dataset(files, filesystem=fs, format="parquet", partitioning="hive",
                             partition_base_dir=base)
        return dataset.to_table()
    except (OSError, ValueError) as exc:  # ArrowInvalid is a ValueError
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{label} could not be read as Parquet ({first}): give Parquet files "
                         "(CSV files are read one file at a time)") from exc


def _hidden(rel: str) -> bool:
    """A file Parquet writers leave beside the data (``_SUCCESS``, ``_metadata``, ``.crc``)."""
    return any(part.startswith(("_", ".")) for part in rel.strip("/").split("/") if "=" not in part)


def _read_sql(src: SqlSource, name: str) -> Any:
    db = src.db
    if db is None or db.lower().startswith("duckdb:"):
        return _read_duckdb(src, name)
    return _read_sqlalchemy(src, name)


def _duckdb_path(db: str | None) -> str:
    """The DuckDB database of ``db``, written as SQLAlchemy writes file databases: ``duckdb:`` (or
    no ``db``) in memory, ``duckdb:///file.duckdb`` relative, ``duckdb:////abs/file.duckdb``.

    Examples
    --------
    >>> _duckdb_path("duckdb:///data/h.duckdb"), _duckdb_path("duckdb:////tmp/h.duckdb"), _duckdb_path(None)
    ('data/h.duckdb', '/tmp/h.duckdb', ':memory:')
    """
    rest = "" if db is None else db[len("duckdb:"):]
    if rest in ("", "//", "///"):
        return ":memory:"
    if not rest.startswith("///"):
        raise ConfigError(f"--db {db}: write a DuckDB file as duckdb:///relative/file.duckdb or "
                          "duckdb:////absolute/file.duckdb (duckdb: alone is in memory)")
    return rest[3:]


def _read_duckdb(src: SqlSource, name: str) -> Any:
    duckdb = _require("duckdb", f"{name} {src.label}")
    _require("pyarrow", f"{name} {src.label}")
    label = f"{name} {src.label}"
    path = _duckdb_path(src.db)
    if path != ":memory:" and not Path(path).exists():
        raise InputError(f"{label}: the DuckDB file {path} does not exist: check --db "
                         "(duckdb:///path/file.duckdb)")
    try:
        con = duckdb.connect(path, read_only=path != ":memory:")
    except duckdb.Error as exc:
        raise InputError(f"{label}: DuckDB could not open {path} ({str(exc).splitlines()[0]})") from exc
    try:
        rel = con.table(src.table) if src.table is not None else con.sql(src.query)
        if rel is None:
            raise InputError(f"{label}: the statement returns no rows: give a SELECT")
        fetch = getattr(rel, "to_arrow_table", None) or rel.fetch_arrow_table
        got = fetch()
        return got.read_all() if hasattr(got, "read_all") else got
    except duckdb.Error as exc:
        raise InputError(f"{label}: DuckDB could not run it ({str(exc).splitlines()[0]}): "
                         "check the query, the table name and the file paths in it") from exc
    finally:
        con.close()


def _read_sqlalchemy(src: SqlSource, name: str) -> Any:
    """Rows of a table (its declared SQL types) or a query (the driver's typed values) as Arrow
    columns, :data:`FETCH_ROWS` rows at a time."""
    sa = _require("sqlalchemy", f"{name} {src.label}")
    pa = _require("pyarrow", f"{name} {src.label}")
    label = f"{name} {src.label}"
    try:
        engine = sa.create_engine(_with_driver(sa.engine.make_url(src.db)))
    except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError, ValueError) as exc:
        raise InputError(f"{label}: --db is not a database URL SQLAlchemy knows ({exc}): write "
                         "dialect[+driver]://user@host/dbname") from exc
    except ImportError as exc:  # the dialect's driver
        raise InputError(f"{label}: the database driver is not installed ({exc}): pip install "
                         "'synthguard[sql]' for PostgreSQL, or the driver of your database") from exc
    types: dict[str, Any] = {}
    try:
        with engine.connect() as conn:
            if src.table is not None:
                schema, _, table = src.table.rpartition(".")
                try:
                    t = sa.Table(table, sa.MetaData(), schema=schema or None, autoload_with=conn)
                except sa.exc.NoSuchTableError as exc:
                    raise InputError(f"{label}: no table {src.table!r} in the database: check the "
                                     "name (schema.table)") from exc
                types = {c.name: _arrow_type(c.type, pa) for c in t.columns}
                stmt = sa.select(t)
            else:
                stmt = sa.text(src.query)
            result = conn.execution_options(stream_results=True).execute(stmt)
            if not result.returns_rows:
                raise InputError(f"{label}: the statement returns no rows: give a SELECT")
            names = [str(k) for k in result.keys()]
            batches = []
            while rows := result.fetchmany(FETCH_ROWS):
                batches.append(_batch(rows, names, types, pa, label))
    except InputError:
        raise
    except sa.exc.SQLAlchemyError as exc:
        first = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        raise InputError(f"{label}: the database refused it ({first}): check --db, the table name "
                         "or the query") from exc
    finally:
        engine.dispose()
    if not batches:
        return pa.table({n: pa.array([], type=types.get(n) or pa.null()) for n in names})
    return pa.concat_tables(batches, promote_options="default")


def _with_driver(url: Any) -> Any:
    """A ``postgresql://`` URL naming no driver gets psycopg 3 (``synthguard[sql]``), which every
    SQLAlchemy 2 knows (2.0 would otherwise ask for psycopg2, 2.1 for psycopg)."""
    if url.drivername == "postgresql":
        from importlib.util import find_spec

        if find_spec("psycopg") is not None or find_spec("psycopg2") is None:
            return url.set(drivername="postgresql+psycopg")
    return url


def _arrow_type(sql_type: Any, pa: Any) -> Any:
    """The Arrow type of a reflected SQL column type, ``None`` to let the driver's values say."""
    import datetime as dt
    import decimal

    try:
        py = sql_type.python_type
    except NotImplementedError:
        return None
    if py is bool:
        return pa.bool_()
    if py is int:
        return pa.int64()
    if py is float:
        return pa.float64()
    if py is str:
        return pa.string()
    if py is dt.datetime:
        return pa.timestamp("us", tz="UTC") if getattr(sql_type, "timezone", False) else pa.timestamp("us")
    if py is dt.date:
        return pa.date32()
    if py is decimal.Decimal:
        return None  # the driver's Decimal values: precision and scale from the values
    return None


def _batch(rows: list[Any], names: list[str], types: dict[str, Any], pa: Any, label: str) -> Any:
    """One fetched batch of rows as an Arrow table (a whole column per conversion)."""
    cols = list(zip(*rows, strict=True))
    arrays = []
    for name, values in zip(names, cols, strict=True):
        want = types.get(name)
        try:
            arrays.append(pa.array(values, type=want, from_pandas=False))
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as exc:
            kinds = sorted({type(v).__name__ for v in values if v is not None})
            raise InputError(f"{label}: column {name!r} holds values of types {', '.join(kinds)} "
                             f"({str(exc).splitlines()[0]}): cast it to one type in the query, e.g. "
                             f"CAST({name} AS TEXT)") from exc
    return pa.Table.from_arrays(arrays, names=names)


def arrow_to_frame(table: Any, label: str) -> pd.DataFrame:
    """An Arrow table as the DataFrame :func:`pandas.read_parquet` would give, with the source-type
    normalisation of the module docstring (decimals, dates, times, nested types).

    Examples
    --------
    >>> import decimal, pyarrow as pa
    >>> t = pa.table({"x": pa.array([decimal.Decimal("0.10"), None]), "d": pa.array([0, 0], pa.date32())})
    >>> f = arrow_to_frame(t, "example")
    >>> f["x"].tolist()[0], str(f["d"].dtype).startswith("datetime64")
    (0.1, True)
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    cols, names = [], []
    for name, col in zip(table.column_names, table.columns, strict=True):
        t = col.type
        if pa.types.is_dictionary(t):
            pass
        elif pa.types.is_decimal(t):
            col = pc.cast(pc.cast(col, pa.string()), pa.float64())  # exact text, correctly rounded
        elif pa.types.is_integer(t) and t.bit_width < 64:  # INTEGER / SMALLINT: numbers as any int
            col = pc.cast(col, pa.int64())
        elif pa.types.is_date(t):
            col = pc.cast(col, pa.timestamp("us"))
        elif pa.types.is_large_string(t):
            col = pc.cast(col, pa.string())
        elif pa.types.is_nested(t):
            raise InputError(f"{label}: column {name!r} holds {t} values, which synthguard cannot "
                             f"compare: select it as text (CAST({name} AS VARCHAR)) or leave it out")
        elif (pa.types.is_time(t) or pa.types.is_duration(t) or pa.types.is_interval(t)
              or pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)
              or isinstance(t, pa.ExtensionType)):
            try:
                col = pc.cast(col.cast(t.storage_type) if isinstance(t, pa.ExtensionType) else col,
                              pa.string())
            except (pa.ArrowNotImplementedError, pa.ArrowInvalid) as exc:
                raise InputError(f"{label}: column {name!r} holds {t} values, which synthguard "
                                 f"cannot compare: select it as text (CAST({name} AS VARCHAR))") from exc
        cols.append(col)
        names.append(name)
    return pa.Table.from_arrays(cols, names=names).to_pandas()
