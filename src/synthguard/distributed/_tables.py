"""Partitioned tables: loading, schema, per-partition typing, and encoding with global vocabularies.

Every partition is typed by the loader's own coercion (:func:`synthguard.data.tables._coerce`) and
encoded by the one :class:`~synthguard.encoding.Encoder`, whose vocabularies are learnt here from
every partition of original, synthetic and control, in that order (the order of first appearance
is the same as in one process, so codes are equal too), then frozen and sent to the workers.
Before that, every table is re-partitioned into the canonical content order that
:meth:`Tables.in_canonical_order <synthguard.data.tables.Tables.in_canonical_order>` gives one process
(:func:`canonical_partitions`): global row positions are canonical positions, and
:attr:`DistTables.row_numbers` maps them back to the input rows.
"""

from __future__ import annotations

import glob
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..data.schema import Schema
from ..data.tables import _coerce, prepare_tables
from ..encoding import Block, Encoder, ranges_from_bounds, row_hash128, text_hash128, value_bounds
from ..errors import InputError

ROLES = ("original", "synthetic", "control")
#: tables with fewer rows are grouped into one partition (no shuffle); larger ones are hash-shuffled
SHUFFLE_ROWS = 1_000_000


@dataclass
class DistTable:
    """One role's partitions (typed pandas frames as dask ``Delayed`` objects) and their lengths."""

    role: str
    label: str
    parts: list[Any]
    lengths: np.ndarray

    @property
    def n_rows(self) -> int:
        return int(self.lengths.sum())

    @property
    def offsets(self) -> np.ndarray:
        """Global position of the first row of every partition."""
        return np.concatenate([[0], np.cumsum(self.lengths)[:-1]]).astype(np.int64)

    def __len__(self) -> int:
        return self.n_rows


@dataclass
class DistTables:
    """The partitioned inputs of one distributed evaluation (see :func:`load_tables`)."""

    tables: dict[str, DistTable]
    schema: Schema
    client: Any
    encoder: Encoder
    encoder_future: Any
    fingerprints: dict[str, dict[str, Any]] = field(default_factory=dict)
    release_type: str = "synthetic"
    #: role -> the input row number (0-based) of each row in canonical order, as
    #: :attr:`Tables.row_numbers <synthguard.data.tables.Tables.row_numbers>` after ``in_canonical_order``
    row_numbers: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def roles(self) -> tuple[str, ...]:
        return tuple(r for r in ROLES if r in self.tables)

    @property
    def has_control(self) -> bool:
        return "control" in self.tables

    def get(self, role: str) -> DistTable:
        return self.tables[role]

    @property
    def original(self) -> DistTable:
        return self.tables["original"]

    @property
    def synthetic(self) -> DistTable:
        return self.tables["synthetic"]

    @property
    def control(self) -> DistTable | None:
        return self.tables.get("control")

    @property
    def labels(self) -> dict[str, str]:
        return {r: t.label for r, t in self.tables.items()}

    def compute(self, tasks: Sequence[Any]) -> list[Any]:
        """Compute ``tasks`` (dask Delayed objects) on the cluster, results in order."""
        return list(self.client.gather(self.client.compute(list(tasks))))

    def map(self, role: str, func: Callable[..., Any], *args: Any, with_encoder: bool = True,
            pure: bool = True) -> list[Any]:
        """``func(encoder, frame, offset, *args)`` (or ``func(frame, offset, *args)``) as one Delayed
        per partition of ``role`` (not computed)."""
        from dask import delayed

        table = self.tables[role]
        f = delayed(func, pure=pure)
        out = []
        for part, off in zip(table.parts, table.offsets, strict=True):
            if with_encoder:
                out.append(f(self.encoder_future, part, int(off), *args))
            else:
                out.append(f(part, int(off), *args))
        return out

    def split_out(self, role: str) -> int:
        """Output partitions of a group-by over ``role``: one (a tree reduction, then joins that
        broadcast it without a shuffle) below :data:`SHUFFLE_ROWS` rows, else one per input partition
        (a hash shuffle: no worker holds the whole grouped table)."""
        table = self.tables[role]
        return 1 if table.n_rows < SHUFFLE_ROWS else max(1, len(table.parts))

    def ranges(self, columns: Sequence[str], roles: Sequence[str] = ("original",)) -> np.ndarray:
        """``max - min`` of each numeric column over ``roles`` by a min/max reduction over partitions
        (equal to :meth:`EncodedView.ranges <synthguard.encoding.EncodedView.ranges>`)."""
        tasks = [t for r in roles for t in self.map(r, _bounds, tuple(columns))]
        bounds = self.compute(tasks)
        lo = np.minimum.reduce([b[0] for b in bounds])
        hi = np.maximum.reduce([b[1] for b in bounds])
        return ranges_from_bounds(lo, hi)


def _bounds(encoder: Encoder, frame: pd.DataFrame, offset: int, columns: tuple[str, ...]):
    return value_bounds(encoder.encode(frame, columns))


def encode_part(encoder: Encoder, frame: pd.DataFrame, columns: Sequence[str]) -> Block:
    """One partition encoded with the global vocabularies (numeric columns as values)."""
    return encoder.encode(frame, list(columns))


def row_hashes(encoder: Encoder, frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """``(n, 2)`` uint64 identities of the rows of ``frame`` on ``columns`` (see
    :func:`synthguard.encoding.row_hash128`): categorical codes from the global vocabularies, numeric
    values by their bits, text values hashed by content (no vocabulary: they may all be distinct)."""
    schema = encoder.schema
    text = [c for c in columns if schema.sdtype(c) == "text"]
    coded = [c for c in columns if c not in text]
    block = encoder.encode(frame, coded)
    extra = None
    if text:
        extra = np.concatenate([text_hash128(frame[c]) for c in text], axis=1)
    return row_hash128(block, extra)


def _ensure_ddf(source: Any, role: str, npartitions: int) -> tuple[Any, str, str | None]:
    """A dask DataFrame for ``source``, its label and the file path it came from (if any)."""
    import dask.dataframe as dd

    if isinstance(source, dd.DataFrame):
        return source, f"{role} dask DataFrame", None
    if isinstance(source, pd.DataFrame):
        frame = source.reset_index(drop=True)
        return dd.from_pandas(frame, npartitions=max(1, min(npartitions, len(frame))), sort=False), \
            f"{role} DataFrame", None
    if isinstance(source, (list, tuple)) and source and all(isinstance(s, (str, Path)) for s in source):
        paths = [str(s) for s in source]
        missing = [s for s in paths if not Path(s).exists()]
        if missing:
            raise InputError(f"{role} table: {missing[0]!r} does not exist")
        if all(s.endswith(".csv") for s in paths):
            return dd.read_csv(paths, assume_missing=True), f"{paths[0]} (+{len(paths) - 1} files)", None
        return dd.read_parquet(paths), f"{paths[0]} (+{len(paths) - 1} files)", None
    if isinstance(source, (str, Path)):
        path = str(source)
        p = Path(path)
        is_glob = any(ch in path for ch in "*?[")
        if not is_glob and not p.exists():
            raise InputError(f"{role} table {path!r} does not exist: give a Parquet file, a folder of "
                             "Parquet files (a partitioned dataset) or a glob such as 'data/*.parquet'")
        if is_glob and not glob.glob(path):
            raise InputError(f"{role} table: the glob {path!r} matches no file")
        csv = path.endswith(".csv") or (p.is_dir() and not any(p.glob("*.parquet"))
                                        and any(p.glob("*.csv")))
        if csv:
            target = str(p / "*.csv") if p.is_dir() else path
            return dd.read_csv(target, assume_missing=True), path, path
        try:
            return dd.read_parquet(path), path, path
        except ImportError as exc:
            raise InputError(f"{path}: reading Parquet needs pyarrow: pip install 'synthguard[parquet]'") \
                from exc
    raise InputError(f"{role} table: expected a path (Parquet file, folder or glob), a pandas or dask "
                     f"DataFrame, got {type(source).__name__}")


def _typed_partition(frame: pd.DataFrame, columns: list[str], schema: Schema, label: str) -> pd.DataFrame:
    """A partition in the original's column order, typed as :func:`prepare_tables` types a table."""
    frame = frame.reset_index(drop=True)
    frame.columns = [str(c) for c in frame.columns]
    frame = frame[columns]
    out = {}
    for c in columns:
        s = frame[c]
        if pd.api.types.is_string_dtype(s.dtype) and s.dtype != object:
            s = s.astype(object).where(s.notna(), np.nan)  # pyarrow strings -> plain objects
        out[c] = s
    return _coerce(pd.DataFrame(out), schema, label)


def _uniques(frame: pd.DataFrame, offset: int, columns: tuple[str, ...]) -> dict[str, list[Any]]:
    """Distinct values of each column in order of first appearance (missing dropped)."""
    out = {}
    for c in columns:
        codes, uniq = pd.factorize(frame[c], use_na_sentinel=True)
        out[c] = list(uniq)
    return out


def _content_hashes(frame: pd.DataFrame, offset: int, as_object: tuple[str, ...] = ()
                    ) -> tuple[np.ndarray, tuple[str, ...]]:
    """The 64-bit content hash of every row, as :func:`synthguard.data.tables.canonical_order`
    computes it, and the dtypes it was computed on. ``as_object``: columns cast to ``object`` first
    (their dtype differs between partitions, e.g. a boolean column with missing values in some
    partitions only: the whole table holds them as objects)."""
    if as_object:
        frame = frame.astype({c: object for c in as_object})
    h = pd.util.hash_pandas_object(frame, index=False).to_numpy().astype(np.uint64, copy=False)
    return h, tuple((str(c), str(t)) for c, t in frame.dtypes.items())


def _split_by_hash(frame: pd.DataFrame, offset: int, lower: np.ndarray, as_object: tuple[str, ...]
                   ) -> tuple[tuple[pd.DataFrame, np.ndarray, np.ndarray], ...]:
    """One partition's rows split by hash range: piece ``t`` holds the rows whose hash ``h`` has
    ``lower[t] <= h < lower[t + 1]``, with their hashes and global input positions."""
    h, _ = _content_hashes(frame, offset, as_object)
    target = np.searchsorted(lower, h, side="right") - 1
    pos = np.arange(offset, offset + len(frame), dtype=np.int64)
    out = []
    for t in range(len(lower)):
        sel = np.flatnonzero(target == t)
        out.append((frame.iloc[sel], h[sel], pos[sel]))
    return tuple(out)


def _assemble(*pieces: tuple[pd.DataFrame, np.ndarray, np.ndarray]) -> pd.DataFrame:
    """One canonical partition: its pieces sorted by (hash, input position), which is the stable
    hash order of :func:`~synthguard.data.tables.canonical_order` restricted to a hash range."""
    frame = pd.concat([p[0] for p in pieces], ignore_index=True)
    h = np.concatenate([p[1] for p in pieces])
    pos = np.concatenate([p[2] for p in pieces])
    return frame.iloc[np.lexsort((pos, h))].reset_index(drop=True)


def canonical_partitions(table: DistTable, client: Any) -> np.ndarray:
    """Re-partition ``table`` into the canonical content order of
    :meth:`Tables.in_canonical_order <synthguard.data.tables.Tables.in_canonical_order>` (rows sorted
    stably by their content hash), in place: partition ``t`` holds a range of hashes, so global
    positions ARE canonical positions, and a row's neighbours, ties and seeded samples are those of
    the single-process run. Returns the input row number of every canonical row.

    The hashes (8 bytes per row) are gathered to choose balanced hash ranges; each input partition
    is split by range in one task and every output partition concatenates its pieces (a shuffle of
    ``partitions x partitions`` pieces, recomputed with the partitions).
    """
    from dask import delayed

    parts = table.parts
    info = list(client.gather(client.compute([delayed(_content_hashes, pure=True)(p, 0) for p in parts])))
    dtypes = [i[1] for i in info if len(i[0])]  # an empty partition's dtypes say nothing
    as_object: tuple[str, ...] = ()
    if any(d != dtypes[0] for d in dtypes):  # same dtypes as the whole table has
        as_object = tuple(c for j, (c, _) in enumerate(dtypes[0]) if len({d[j] for d in dtypes}) > 1)
        info = list(client.gather(client.compute(
            [delayed(_content_hashes, pure=True)(p, 0, as_object) for p in parts])))
    h = np.concatenate([i[0] for i in info]) if info else np.zeros(0, dtype=np.uint64)
    order = np.argsort(h, kind="stable").astype(np.int64)
    n_out = max(1, len(parts))
    sorted_h = h[order]
    cuts = (np.arange(1, n_out) * len(h)) // n_out if len(h) else np.zeros(0, dtype=np.int64)
    lower = np.unique(np.concatenate([np.zeros(1, dtype=np.uint64), sorted_h[cuts]]))
    lengths = np.diff(np.append(np.searchsorted(sorted_h, lower, side="left"), len(h))).astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum([len(i[0]) for i in info])[:-1]]).astype(np.int64)
    split = delayed(_split_by_hash, pure=True, nout=len(lower))
    pieces = [split(p, int(off), lower, as_object) for p, off in zip(parts, offsets, strict=True)]
    table.parts = [delayed(_assemble, pure=True)(*(pc[t] for pc in pieces)) for t in range(len(lower))]
    table.lengths = lengths
    return order


def load_tables(original: Any, synthetic: Any, control: Any = None, metadata: Any = None, *,
                client: Any, npartitions: int = 4) -> DistTables:
    """Partitioned, typed inputs with a schema and global vocabularies.

    Parameters
    ----------
    original, synthetic, control : path, dask DataFrame or pandas DataFrame
        A Parquet file, a folder of Parquet files, a glob, or a CSV file/glob; pandas frames are split
        into ``npartitions`` partitions.
    metadata : mapping, Schema or path, optional
        As for :func:`synthguard.evaluate`. sdtypes left out are inferred from the FIRST partition of
        the original (declare them for large data: a partition is a sample).
    client : distributed.Client
        Where the work runs.
    """
    from dask import delayed

    sources = {"original": original, "synthetic": synthetic, "control": control}
    ddfs: dict[str, Any] = {}
    labels: dict[str, str] = {}
    for role, src in sources.items():
        if src is None:
            continue
        ddfs[role], labels[role], _ = _ensure_ddf(src, role, npartitions)
    base = [str(c) for c in ddfs["original"].columns]
    for role in ("synthetic", "control"):
        if role in ddfs:
            cols = {str(c) for c in ddfs[role].columns}
            missing = [c for c in base if c not in cols]
            extra = sorted(cols - set(base))
            if missing or extra:
                raise InputError(f"{labels[role]} does not hold the columns of {labels['original']}: "
                                 f"missing {missing}, extra {extra}; give every table the same columns")
    # the schema from the first partition of each table (a sample) unless the metadata declares it
    heads = client.gather(client.compute([ddfs[r].get_partition(0) for r in ddfs]))
    sample = prepare_tables(*(h.reset_index(drop=True) for h in heads[:2]),
                            heads[2].reset_index(drop=True) if len(heads) > 2 else None, metadata,
                            labels=labels)
    schema = sample.schema
    tables: dict[str, DistTable] = {}
    for role, ddf in ddfs.items():
        typed = delayed(_typed_partition, pure=True)
        parts = [typed(p, base, schema, labels[role]) for p in ddf.to_delayed()]
        tables[role] = DistTable(role, labels[role], parts, np.zeros(len(parts), dtype=np.int64))
    # canonical content order, as evaluate() uses in one process: global row positions are canonical
    row_numbers = {role: canonical_partitions(table, client) for role, table in tables.items()}
    # lengths and vocabularies in one pass over the partitions
    categorical = tuple(c for c in schema.tabular_columns() if not schema.columns[c].is_numeric)
    tasks = []
    for role in ROLES:
        if role in tables:
            for p in tables[role].parts:
                tasks.append(delayed(len)(p))
                tasks.append(delayed(_uniques, pure=True)(p, 0, categorical))
    res = list(client.gather(client.compute(tasks)))
    encoder = Encoder(schema)
    i = 0
    for role in ROLES:
        if role not in tables:
            continue
        lengths = []
        for _ in tables[role].parts:
            lengths.append(res[i])
            for c, values in res[i + 1].items():  # partitions in order: first appearance preserved
                if values:
                    encoder.codes(pd.Series(values, name=c, dtype=object))
            i += 2
        tables[role].lengths = np.asarray(lengths, dtype=np.int64)
        if tables[role].n_rows == 0:
            raise InputError(f"{labels[role]} has no rows: give a non-empty table")
    encoder.freeze()
    future = delayed(encoder, pure=True, traverse=False)  # one key per graph, shipped with the tasks
    prints = {r: {"rows": t.n_rows, "columns": len(base), "partitions": len(t.parts), "sha256": None}
              for r, t in tables.items()}
    return DistTables(tables, schema, client, encoder, future, prints, row_numbers=row_numbers)

