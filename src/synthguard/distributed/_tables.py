"""Partitioned tables: loading, schema, per-partition typing, and encoding with global vocabularies.

Every partition is typed by the loader's own coercion (:func:`synthguard.data.tables._coerce`) and
encoded by the one :class:`~synthguard.data.encoding.Encoder`, whose vocabularies are learnt here from
every partition of original, synthetic and control, in that order and, within a table, in order of
first canonical appearance (as one process meets them, so codes are equal too), then frozen and
sent to the workers.

Row positions are those of the canonical content order that
:meth:`Tables.in_canonical_order <synthguard.data.tables.Tables.in_canonical_order>` gives one process,
without moving any row between partitions (:func:`canonicalise`): the input partitions are kept,
each one sorted locally into canonical order, and :attr:`DistTable.positions` holds the canonical
(global) position of every row of every partition. :attr:`DistTables.row_numbers` maps canonical
positions back to the input rows.
"""

from __future__ import annotations

import glob
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..data.coltypes import canonical_labels, declared_sdtypes
from ..data.dates import _DMY, _EPOCH_DIGITS, _ISO, _OFFSET
from ..data.encoding import (
    Block,
    Encoder,
    ranges_from_bounds,
    row_hash128,
    text_hash128,
    value_bounds,
)
from ..data.hashing import cell_hashes, column_ids, float_codes, row_hashes, set_sums
from ..data.notes import boolean_note, decimal_note, float32_note, nfc_note, whitespace_note
from ..data.quirks import (
    _strip,
    control_columns,
    declared_id_columns,
    has_padding,
    identifier_candidates,
    infinities_to_missing,
)
from ..data.schema import Schema
from ..data.sources import read_source
from ..data.tables import LABEL_SAMPLE, _coerce, empty_column_message, label_kind, prepare_tables
from ..errors import InputError
from ._recheck import FirstLabels, check_control_of, first_labels, kinds_in_order

ROLES = ("original", "synthetic", "control")
#: a URL (an fsspec file system: s3://, file://, memory://...)
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]+://")
#: tables with fewer rows are grouped into one partition (a tree reduction, then joins that
#: broadcast it: no shuffle); larger ones are hash-shuffled. 2M: a 1M-row release (a sampled 1M run's
#: relations) is grouped without a shuffle (its p2p shuffles and joins, hundreds of small tasks, were
#: a large share of such a run's wall on a loaded machine); the grouped table of a task is then at
#: most 2M keys (about 64 MB of keys and counts)
SHUFFLE_ROWS = 2_000_000


@dataclass
class DistTable:
    """One role's partitions (typed pandas frames as dask ``Delayed`` objects) and their lengths.

    ``parts[j]`` holds the rows of input partition ``j`` (``lengths[j]`` of them), sorted locally into
    canonical order; ``positions[j]`` is a ``Delayed`` int64 array (sorted from the ranks computed
    once per load and held on the cluster, see :func:`canonicalise`) with the canonical global
    position of each of those rows, ascending. Wherever a metric needs a row's global position (a record's row number, a tie
    broken by the lower position, a seeded sample), it uses ``positions``, never ``offsets``.
    ``positions=None`` means the contiguous positions ``offsets[j] + arange(lengths[j])`` (a table
    already in canonical order).

    Per-row work that does not depend on the order of the rows inside a partition (hashing rows
    for group-bys and joins, bounds, seeded keys, row fetches) skips the local sort: it reads
    ``input_parts[j]`` (the same rows in input order) with ``ranks[j]`` (each input row's canonical
    position, ``Delayed``), see :meth:`DistTables.map` with ``ordered=False``.
    """

    role: str
    label: str
    parts: list[Any]
    lengths: np.ndarray
    positions: list[Any] | None = None
    input_parts: list[Any] | None = None
    ranks: list[Any] | None = None
    #: whether ``parts`` (``input_parts`` once canonicalised) are held on the cluster
    #: (:func:`persist_if_fits`)
    persisted: bool = False

    @property
    def n_rows(self) -> int:
        return int(self.lengths.sum())

    @property
    def offsets(self) -> np.ndarray:
        """Number of rows before every partition (input row number of its first input row)."""
        return np.concatenate([[0], np.cumsum(self.lengths)[:-1]]).astype(np.int64)

    def position_args(self, ordered: bool = True) -> list[Any]:
        """One task argument per partition holding its rows' canonical positions: ``positions``
        (``ordered``, rows of ``parts``) or ``ranks`` (rows of ``input_parts``); contiguous
        ``arange`` arrays when there are none."""
        got = self.positions if ordered or self.ranks is None else self.ranks
        if got is not None:
            return list(got)
        return [np.arange(o, o + n, dtype=np.int64) for o, n in zip(self.offsets, self.lengths, strict=True)]

    def part_args(self, ordered: bool = True) -> list[Any]:
        """The partitions: locally canonical (``parts``) or in input order (``input_parts``)."""
        return list(self.parts if ordered or self.input_parts is None else self.input_parts)

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
    #: role -> per categorical column, its distinct values in order of first canonical appearance
    #: (:attr:`Canonical.first_values`): the vocabularies are learnt from them, role by role
    first_values: dict[str, dict[str, list[Any]]] = field(default_factory=dict)
    #: role -> the row of the partitions (numbered in their input order) at each canonical
    #: position, for a table whose partitions hold some of the input rows only (a seeded sample,
    #: :func:`without_rows` with ``input_numbers``): :attr:`row_numbers` then name the input rows
    #: (the report's), these the rows where :func:`fetch_rows` finds them; absent: the same
    part_rows: dict[str, np.ndarray] = field(default_factory=dict)
    #: column -> how its values were normalised while the tables were typed
    #: (:func:`normalisation_notes`), as :attr:`Tables.notes <synthguard.data.tables.Tables.notes>`
    notes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: the input warnings one process lists for the same inputs
    #: (:attr:`Tables.warnings <synthguard.data.tables.Tables.warnings>`, :func:`input_warnings`)
    warnings: tuple[str, ...] = ()
    #: role -> the whole table a seeded sample of that role was drawn from, or only its columns
    #: :attr:`whole_columns` (:func:`synthguard.run.cluster.sample_on_cluster`,
    #: :func:`whole_identifier_columns`): the re-test of the release without some rows decides
    #: identifiers on them, as a new evaluation does before it samples
    #: (:func:`without_rows_retyped`; one process: ``Tables.whole_columns``)
    whole: dict[str, DistTable] = field(default_factory=dict)
    #: the columns of the whole tables that could read as an identifier, when :attr:`whole` holds
    #: only those (no other column can read as one in them); ``None``: every column
    whole_columns: tuple[str, ...] | None = None

    def inferred_metadata(self) -> dict[str, dict[str, Any]]:
        """``{column: {"sdtype", "reason"[, "normalised"]}}`` as
        :meth:`Tables.inferred_metadata <synthguard.data.tables.Tables.inferred_metadata>` gives it
        in one process: every inferred sdtype, and every column whose values were normalised."""
        out = self.schema.inferred()
        for col, notes in self.notes.items():
            entry = out.setdefault(col, {"sdtype": self.schema.sdtype(col), "reason": "declared in the metadata"})
            entry["normalised"] = list(notes)
        return out

    def rows_in_parts(self, role: str) -> np.ndarray | None:
        """Per canonical position of ``role``, its row in the partitions' input order
        (:attr:`part_rows`, else :attr:`row_numbers`; ``None``: the canonical position itself)."""
        got = self.part_rows.get(role)
        return self.row_numbers.get(role) if got is None else got

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

    def compute_where_held(self, tasks: Sequence[Any], held: Sequence[Any]) -> list[Any]:
        """:meth:`compute` with task ``i`` run only on a worker that holds ``held[i]`` (a
        persisted Delayed or a future: a partition held for the run), results in order. Left to
        the scheduler, a task may run on another worker when the holder is busy, and the held
        partition (tens of MB) is then copied there and kept twice; pinned, nothing held moves.
        The held partitions are waited for first (a table asked to be held just before is still
        being computed, and a task on it would not be pinned). A task whose partition no worker
        holds (lost with its worker) runs anywhere, its partition computed again as dask does.

        Examples
        --------
        >>> import pandas as pd
        >>> from dask import delayed
        >>> from distributed import Client
        >>> client = Client(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None)
        >>> dt = load_tables(pd.DataFrame({"a": [1, 2]}), pd.DataFrame({"a": [3]}), None, None,
        ...                  client=client, npartitions=1)
        >>> held = client.persist([delayed(lambda i: np.arange(i + 3), pure=False)(i) for i in range(4)])
        >>> dt.compute_where_held([delayed(len)(h) for h in held], held)
        [3, 4, 5, 6]
        >>> client.close()
        """
        from distributed import wait

        tasks = list(tasks)
        wait(list(held))  # the partitions just asked to be held are placed: none left unpinned
        who = self.client.who_has(list(held))
        groups: dict[tuple[str, ...] | None, list[int]] = {}
        for i, h in enumerate(held):
            at = tuple(sorted(who.get(h.key, ()) or ()))
            groups.setdefault(at or None, []).append(i)
        futures: list[Any] = [None] * len(tasks)
        for at, idx in groups.items():  # one submission per holder (or set of holders)
            got = self.client.compute([tasks[i] for i in idx], workers=None if at is None else list(at),
                                      allow_other_workers=at is None)
            for i, f in zip(idx, got, strict=True):
                futures[i] = f
        return list(self.client.gather(futures))

    def map(self, role: str, func: Callable[..., Any], *args: Any, with_encoder: bool = True,
            pure: bool = True, ordered: bool = True) -> list[Any]:
        """``func(encoder, frame, positions, *args)`` (or ``func(frame, positions, *args)``) as one
        Delayed per partition of ``role`` (not computed); ``positions`` is the int64 array of the
        canonical global positions of the partition's rows. ``ordered``: the rows in canonical
        order (positions ascending); ``ordered=False``: the rows in input order (no local sort),
        for work that does not depend on the order of the rows inside a partition."""
        from dask import delayed

        table = self.tables[role]
        f = delayed(func, pure=pure)
        out = []
        for part, pos in zip(table.part_args(ordered), table.position_args(ordered), strict=True):
            if with_encoder:
                out.append(f(self.encoder_future, part, pos, *args))
            else:
                out.append(f(part, pos, *args))
        return out

    def partition_of(self, role: str, rows: np.ndarray) -> np.ndarray:
        """The partition holding each canonical position in ``rows`` (from :meth:`rows_in_parts`)."""
        table = self.tables[role]
        rows = np.asarray(rows, dtype=np.int64)
        nums = self.rows_in_parts(role)
        inputs = rows if nums is None else np.asarray(nums)[rows]
        return np.searchsorted(table.offsets, inputs, side="right").astype(np.int64) - 1

    def positions_array(self, role: str) -> list[np.ndarray]:
        """The values of ``get(role).positions`` as concrete arrays on the client, derived from
        :meth:`rows_in_parts` (no cluster work; 8 bytes per row)."""
        table = self.tables[role]
        n = table.n_rows
        part = self.partition_of(role, np.arange(n, dtype=np.int64))
        order = np.argsort(part, kind="stable").astype(np.int64)  # ascending within each partition
        return np.split(order, np.cumsum(table.lengths)[:-1])

    def split_out(self, role: str) -> int:
        """Output partitions of a group-by over ``role``: one (a tree reduction, then joins that
        broadcast it without a shuffle) below :data:`SHUFFLE_ROWS` rows, else one per input partition
        (a hash shuffle: no worker holds the whole grouped table)."""
        table = self.tables[role]
        return 1 if table.n_rows < SHUFFLE_ROWS else max(1, len(table.parts))

    def ranges(self, columns: Sequence[str], roles: Sequence[str] = ("original",)) -> np.ndarray:
        """``max - min`` of each numeric column over ``roles`` by a min/max reduction over partitions
        (equal to :meth:`EncodedView.ranges <synthguard.data.encoding.EncodedView.ranges>`)."""
        tasks = [t for r in roles for t in self.map(r, _bounds, tuple(columns), ordered=False)]
        bounds = self.compute(tasks)
        lo = np.minimum.reduce([b[0] for b in bounds])
        hi = np.maximum.reduce([b[1] for b in bounds])
        return ranges_from_bounds(lo, hi)


def _bounds(encoder: Encoder, frame: pd.DataFrame, positions: Any, columns: tuple[str, ...]):
    return value_bounds(encoder.encode(frame, columns))


def encode_part(encoder: Encoder, frame: pd.DataFrame, columns: Sequence[str]) -> Block:
    """One partition encoded with the global vocabularies (numeric columns as values)."""
    return encoder.encode(frame, list(columns))


def identity_hashes(encoder: Encoder, frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """``(n, 2)`` uint64 identities of the rows of ``frame`` on ``columns`` (see
    :func:`synthguard.data.encoding.row_hash128`): categorical codes from the global vocabularies, numeric
    values by their bits, text values hashed by content (no vocabulary: they may all be distinct).
    128-bit keys of the exact-row joins, not the 64-bit content hash of a whole row
    (:func:`synthguard.data.hashing.row_hashes`)."""
    schema = encoder.schema
    text = [c for c in columns if schema.sdtype(c) == "text"]
    coded = [c for c in columns if c not in text]
    block = encoder.encode(frame, coded)
    extra = None
    if text:
        extra = np.concatenate([text_hash128(frame[c]) for c in text], axis=1)
    return row_hash128(block, extra)


def set_hashes(encoder: Encoder, frame: pd.DataFrame, sets: Sequence[Sequence[str]]) -> list[np.ndarray]:
    """``(n, 2)`` uint64 keys of the rows of ``frame`` on each column set of ``sets``, from one hash
    of every cell (:mod:`synthguard.data.hashing`: two chains of cell hashes keyed by the column's
    name, a row's key on a set the wrapping sum of its cells there, the leave-few-out sets as the
    whole row minus the left-out cells): every column encoded and every cell hashed once, whatever
    the number of sets. Cells compare as :func:`identity_hashes` compares them (categorical codes
    from the global vocabularies, numeric values by their bits, ``-0.0`` = ``0.0``, missing =
    missing; text values by two keyed hashes of their content, one per chain); two rows different
    on a set share its key with probability about ``2**-128``. The same key for the same values on
    the same set in every frame and partition (the keys of the Dask backend's joins and group-bys
    over many column sets)."""
    every = list(dict.fromkeys(c for cols in sets for c in cols))
    at = {c: j for j, c in enumerate(every)}
    return set_sums(cell_matrix(encoder, frame, every), [[at[c] for c in cols] for cols in sets])


def cell_matrix(encoder: Encoder, frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """``(n, len(columns), 2)`` uint64: the hash of every cell of ``frame`` on ``columns``, per
    chain, that :func:`set_hashes` sums per column set (16 bytes a cell); a holder of these sums
    any set of ``columns`` without encoding or hashing a cell again
    (:func:`~synthguard.data.hashing.set_sums`)."""
    every = list(columns)
    text = [c for c in every if encoder.schema.sdtype(c) == "text"]
    block = encoder.encode(frame, [c for c in every if c not in text])
    num_at = {c: j for j, c in enumerate(block.num_columns)}
    cat_at = {c: j for j, c in enumerate(block.cat_columns)}
    codes = np.empty((len(frame), len(every), 2), dtype=np.int64)  # per column, its code per chain
    for j, c in enumerate(every):  # loop over columns, vectorised over rows
        if c in num_at:
            codes[:, j, :] = float_codes(block.num[:, num_at[c]])[:, None]
        elif c in cat_at:
            codes[:, j, :] = block.cat[:, cat_at[c]][:, None]
        else:
            codes[:, j, :] = text_hash128(frame[c])
    ids = column_ids(every)
    cells = np.empty(codes.shape, dtype=np.uint64)
    for k in range(2):  # the two chains
        cells[:, :, k] = cell_hashes(codes[:, :, k], ids, k)
    return cells


#: bit of a gathered flag byte marking the row as delivered (flags use the lower bits)
_PRESENT = np.uint8(0x80)


def _pack_flags(frame: pd.DataFrame, columns: tuple[str, ...], n: int) -> tuple[np.ndarray, np.ndarray]:
    """One partition of per-row flags as ``(canonical positions, one byte of flag bits per row)``."""
    bits = np.zeros(len(frame), dtype=np.uint8)
    for j, c in enumerate(columns):
        bits |= frame[c].to_numpy(dtype=bool).astype(np.uint8) << np.uint8(j)
    pos = frame["pos"].to_numpy(np.int64)
    return pos.astype(np.uint32) if n <= 2**32 else pos, bits


def gather_flags(dt: DistTables, role: str, frame: Any, columns: Sequence[str]) -> dict[str, np.ndarray]:
    """Boolean per-row columns of a dask DataFrame over the rows of ``role`` (one row per row of the
    table, its canonical position in ``pos``) as arrays over the whole table in canonical order.

    The partitions are packed on the workers (up to 7 flags in one byte per row, with the row's
    position) and placed on the client one partition at a time as they arrive, so the client
    holds one byte per row plus one partition in flight. Every row must arrive exactly once.

    Examples
    --------
    >>> import pandas as pd
    >>> _pack_flags(pd.DataFrame({"pos": [2, 0], "a": [True, False], "b": [True, True]}),
    ...             ("a", "b"), 3)[1].tolist()
    [3, 2]
    """
    from dask import delayed
    from distributed import as_completed

    from ..errors import MetricError

    columns = tuple(columns)
    if len(columns) > 7:
        raise ValueError(f"at most 7 flags per gather, got {len(columns)}")
    n = dt.get(role).n_rows
    bits = np.zeros(n, dtype=np.uint8)
    delivered = 0
    pack = delayed(_pack_flags, pure=True)
    done = as_completed(dt.client.compute([pack(p, columns, n) for p in frame.to_delayed()]))
    for fut in done:
        pos, b = fut.result()
        del fut
        bits[pos] = b | _PRESENT
        delivered += pos.size
    if delivered != n or not (bits & _PRESENT).all():
        raise MetricError(f"internal error: per-record flags of {delivered} rows came back for the {n} "
                          f"rows of the {role} table")
    return {c: (bits & np.uint8(1 << j)) > 0 for j, c in enumerate(columns)}


def _from_pandas(frame: pd.DataFrame, npartitions: int) -> Any:
    """``frame`` split into at most ``npartitions`` partitions. Dask writes object columns as
    Arrow strings by default; a frame with an object column holding other values than strings
    (``decimal.Decimal`` values from a SQL DECIMAL column, ``1`` beside ``"1"``) keeps its objects
    as one process sees them (the text would read a DECIMAL column as text, and ``1`` as ``"1"``)."""
    import dask
    import dask.dataframe as dd

    n = max(1, min(npartitions, len(frame)))
    mixed = any(pd.api.types.infer_dtype(frame[c], skipna=True) not in ("string", "empty")
                for c in frame.columns if pd.api.types.is_object_dtype(frame[c].dtype))
    if not mixed:
        return dd.from_pandas(frame, npartitions=n, sort=False)
    with dask.config.set({"dataframe.convert-string": False}):
        return dd.from_pandas(frame, npartitions=n, sort=False)


def _ensure_ddf(source: Any, role: str, npartitions: int) -> tuple[Any, str, str | None]:
    """A dask DataFrame for ``source``, its label and the file path it came from (if any). CSV
    files are read as text (:func:`read_csv_text`); :func:`_is_csv` tells them."""
    import dask.dataframe as dd

    if isinstance(source, dd.DataFrame):
        return source, f"{role} dask DataFrame", None
    if isinstance(source, pd.DataFrame):
        frame = source.reset_index(drop=True)
        return _from_pandas(frame, npartitions), f"{role} DataFrame", None
    from ..data.sources import ParquetSource, SqlSource

    if isinstance(source, SqlSource):  # read once on the client, then partitioned
        frame, label = read_source(source, role)
        return _from_pandas(frame, npartitions), label, None
    if isinstance(source, ParquetSource) or (isinstance(source, str) and _URL.match(source)):
        where = str(source)
        opts = dict(source.storage_options) if isinstance(source, ParquetSource) else {}
        try:
            return dd.read_parquet(where, storage_options=opts or None), where, where
        except (OSError, ValueError, ImportError) as exc:
            raise InputError(f"{role} table {where}: could not be read as Parquet "
                             f"({str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}): "
                             "check the URL and that the folder holds Parquet files") from exc
    if isinstance(source, (list, tuple)) and source and all(isinstance(s, (str, Path)) for s in source):
        paths = [str(s) for s in source]
        missing = [s for s in paths if not Path(s).exists()]
        if missing:
            raise InputError(f"{role} table: {missing[0]!r} does not exist")
        if _is_csv(paths):  # as text, as one process reads it (read_csv_text)
            return read_csv_text(paths), f"{paths[0]} (+{len(paths) - 1} files)", None
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
        if _is_csv(path):
            target = str(p / "*.csv") if p.is_dir() else path
            return read_csv_text(target), path, path
        try:
            return dd.read_parquet(path), path, path
        except ImportError as exc:
            raise InputError(f"{path}: reading Parquet needs pyarrow: pip install 'synthguard[parquet]'") \
                from exc
    raise InputError(f"{role} table: expected a path (Parquet file, folder or glob), a pandas or dask "
                     f"DataFrame, got {type(source).__name__}")


def _is_csv(source: Any) -> bool:
    """Whether :func:`_ensure_ddf` reads ``source`` as CSV files (as text).

    Examples
    --------
    >>> _is_csv("a.csv"), _is_csv(["a.csv", "b.csv"]), _is_csv("a.parquet")
    (True, True, False)
    """
    if isinstance(source, (list, tuple)) and source and all(isinstance(s, (str, Path)) for s in source):
        return all(str(s).endswith(".csv") for s in source)
    if isinstance(source, (str, Path)) and not _URL.match(str(source)):
        path = str(source)
        p = Path(path)
        return path.endswith(".csv") or (p.is_dir() and not any(p.glob("*.parquet")) and any(p.glob("*.csv")))
    return False


def read_csv_text(target: Any) -> Any:
    """CSV files as a dask DataFrame of text (every value a string or missing), as one process
    reads a CSV (:func:`~synthguard.data.loading.load_table` with ``as_text=True``): each column's
    type is then decided from every partition of every table (:func:`decide_text_types`), not by
    pandas block by block."""
    import dask.dataframe as dd

    return dd.read_csv(target, dtype=str)


#: one raw partition's facts for the typing decision, per column (:func:`_type_facts`)
_TypeFacts = dict[str, Any]


def _type_facts(frame: pd.DataFrame, text: bool) -> _TypeFacts:
    """Per column of one raw partition, what the typing rule asks of it: its
    :class:`~synthguard.data.typerules.TextFacts` (``text``: a CSV read as text) or its
    :class:`~synthguard.data.typerules.TypedFacts` (values as :func:`_as_numbers` casts a typed
    table's: decimals as numbers).

    Examples
    --------
    >>> f = _type_facts(pd.DataFrame({"a": ["1", None]}), True)["a"]
    >>> f.n_present, f.int64
    (1, False)
    """
    from ..data.arrowtext import TextColumn
    from ..data.typerules import TextFacts, TypedFacts

    frame = frame.reset_index(drop=True)
    frame.columns = [str(c) for c in frame.columns]
    if text:
        return {c: TextFacts.of(TextColumn(frame[c])) for c in frame.columns}
    return {c: TypedFacts.of(_as_numbers(frame[c])[0]) for c in frame.columns}


def _presence_and_facts(frame: pd.DataFrame, text: bool | None) -> tuple[tuple[int, dict[str, int]], Any]:
    """One raw partition's :func:`_presence` and, unless ``text`` is ``None``, its
    :func:`_type_facts` (in the same task: no other read of the partition)."""
    return _presence(frame), None if text is None else _type_facts(frame, text)


#: per column, how a table's values are cast by the typing decision: ``(how, int64)``
#: (:class:`~synthguard.data.typerules.ColumnCast`; ``int64`` for numbers read from text: whether
#: the whole table's column is int64, else ``None``)
Casts = dict[str, tuple[str, "bool | None"]]


def decide_text_types(facts: Mapping[str, Sequence[_TypeFacts]], text_roles: set[str],
                      columns: Sequence[str], declared: Mapping[str, str], labels: Mapping[str, str]
                      ) -> tuple[dict[str, Casts], dict[str, list[str]], list[str], dict[str, str]]:
    """The typing decision of :func:`~synthguard.data.coltypes.decide_types` for tables of which
    some are CSV files read as text, from every raw partition's :func:`_type_facts` merged per
    table in table order (:meth:`TextFacts.merge <synthguard.data.typerules.TextFacts.merge>`),
    decided by the function one process calls (:func:`~synthguard.data.typerules.decide_column`).

    Parameters
    ----------
    facts : mapping
        Role -> per raw partition, its :func:`_type_facts` (roles in the order original,
        synthetic, control).
    text_roles : set of str
        The roles read from CSV as text.
    columns : sequence of str
        The columns.
    declared : mapping
        Column -> the sdtype declared in the metadata.
    labels : mapping
        Role -> the table's label.

    Returns
    -------
    casts : dict
        Role -> :data:`Casts` (the columns whose values change).
    notes : dict
        Column -> the decision's note (``inferred_metadata``).
    warnings : list of str
    reasons : dict
        Column -> the reason of an inferred categorical sdtype.

    Examples
    --------
    >>> facts = {"original": [_type_facts(pd.DataFrame({"g": ["3"]}), True)],
    ...          "synthetic": [_type_facts(pd.DataFrame({"g": ["3.0"]}), True),
    ...                        _type_facts(pd.DataFrame({"g": ["1.0"]}), True)]}
    >>> decide_text_types(facts, {"original", "synthetic"}, ["g"], {"g": "categorical"},
    ...                   {"original": "a", "synthetic": "b"})[0]
    {'original': {}, 'synthetic': {'g': ('codes', False)}}
    """
    from ..data.typerules import ColumnCast, TextFacts, TypedFacts, decide_column

    roles = [r for r in ROLES if r in facts]
    casts: dict[str, Casts] = {r: {} for r in roles}
    notes: dict[str, list[str]] = {}
    warns: list[str] = []
    reasons: dict[str, str] = {}
    for c in columns:
        sd = declared.get(c)
        raw = {r: TextFacts.merge([f[c] for f in facts[r]]) for r in roles if r in text_roles}
        if not raw or sd not in (None, "numerical", "categorical", "id"):
            continue
        typed = {r: TypedFacts.merge([f[c] for f in facts[r]]) for r in roles if r not in raw}
        decided: ColumnCast = decide_column(c, raw, typed, sd, labels)
        decided.report_into(c, notes, warns, reasons)
        for r, how in decided.casts.items():
            casts[r][c] = (how, raw[r].int64 if r in raw else None)
    return casts, notes, warns, reasons


def cast_decided(frame: pd.DataFrame, casts: Casts, text: bool) -> pd.DataFrame:
    """One raw partition with the columns of ``casts`` cast as the typing decision says
    (:func:`~synthguard.data.coltypes.cast_text` on a CSV read as text, ``text``, else
    :func:`~synthguard.data.coltypes.cast_typed`); the other columns as they are.

    Examples
    --------
    >>> got = cast_decided(pd.DataFrame({"a": ["1", "2"], "b": ["x", "y"]}), {"a": ("numbers", False)}, True)
    >>> got["a"].tolist(), got["b"].tolist()
    ([1.0, 2.0], ['x', 'y'])
    """
    from ..data.arrowtext import TextColumn
    from ..data.coltypes import cast_text, cast_typed

    if not casts:
        return frame
    out = frame.copy(deep=False)
    for c in out.columns:  # loop over columns
        how = casts.get(str(c))
        if how is None:
            continue
        s = out[c]
        new = cast_text(how[0], TextColumn(s), how[1]) if text else cast_typed(how[0], s)
        out[c] = pd.Series(new.to_numpy(), index=s.index, dtype=new.dtype, name=c)
    return out


def _cast_tables(ddfs: Mapping[str, Any], casts: Mapping[str, Casts], text_roles: set[str]) -> dict[str, Any]:
    """The tables with every partition cast by :func:`cast_decided` (the tables without casts as
    they are); the dtypes from the cast of the empty frame (``meta``)."""
    import dask

    out = {}
    for role, ddf in ddfs.items():
        if not casts.get(role):
            out[role] = ddf
            continue
        text = role in text_roles
        meta = cast_decided(ddf._meta, casts[role], text)
        with dask.config.set({"dataframe.convert-string": False}):
            out[role] = ddf.map_partitions(cast_decided, casts[role], text, meta=meta)
    return out


@dataclass(frozen=True)
class BadPartition:
    """What :func:`_typed_partition` returns for a partition that cannot be typed: the
    :class:`InputError` message (raised on the client by :func:`_raise_bad`, as one line, instead of
    failing a task on a worker, which logs a traceback)."""

    message: str


def _raise_bad(results: Sequence[Any]) -> None:
    """Raise the first :class:`BadPartition` among ``results`` as an :class:`InputError`."""
    bad = next((r for r in results if isinstance(r, BadPartition)), None)
    if bad is not None:
        raise InputError(bad.message)


def _typed_partition(frame: pd.DataFrame, columns: list[str], schema: Schema, label: str,
                     relabel: tuple[str, ...] = (), role: str = "",
                     dates: Mapping[str, Mapping[str, pd.Series]] | None = None,
                     cast: Sequence[str] = (), float32: Sequence[str] = ()) -> Any:
    """A partition in the original's column order, typed as :func:`prepare_tables` types a table:
    the ``cast`` columns' values cast as :func:`~synthguard.data.coltypes.decide_types` casts a
    typed table's (:func:`_as_decided`: decimals as numbers, float32 values and, in the ``float32``
    columns, every table's floats as the float64 of their shortest repr, text NFC-normalised; the
    columns where some partition of some table holds such values, :func:`cast_columns`),
    surrounding whitespace of categorical/boolean/id values stripped, datetime columns parsed with
    the format of the whole column (``dates``, see :func:`date_evidence`), dtypes coerced, ``inf``
    in numerical columns read as missing, and the labels of the ``relabel`` columns (mixing numbers
    and strings across the tables, see :func:`_mixed_label_columns`) written as strings. A partition
    that cannot be typed gives a :class:`BadPartition` naming the file, column and fix."""
    try:
        return _type_partition(frame, columns, schema, label, relabel, role, dates, tuple(cast),
                               tuple(float32))
    except InputError as exc:
        return BadPartition(str(exc))


def _type_partition(frame: pd.DataFrame, columns: list[str], schema: Schema, label: str,
                    relabel: tuple[str, ...], role: str,
                    dates: Mapping[str, Mapping[str, pd.Series]] | None,
                    cast: tuple[str, ...] = (), float32: tuple[str, ...] = ()) -> pd.DataFrame:
    frame = frame.reset_index(drop=True)
    frame.columns = [str(c) for c in frame.columns]
    frame = frame[columns]
    strip = set(schema.of_type("categorical", "boolean", "id"))
    out = {}
    for c in columns:
        s = frame[c]
        pad = c in strip and has_padding(s)  # (checked before the conversion: faster on Arrow strings)
        if c in cast:
            s = _as_decided(s, c in float32)  # (NFC keeps the padding: has_padding's answer holds)
        elif pd.api.types.is_string_dtype(s.dtype) and s.dtype != object:
            s = s.astype(object).where(s.notna(), np.nan)  # pyarrow strings -> plain objects
        if pad:
            s = _strip(s)[0]
        if dates and c in dates:
            s = parse_dates_like_table(c, s, role, dates[c], schema, label)
        out[c] = s
    typed, _ = infinities_to_missing(_coerce(pd.DataFrame(out), schema, label), schema, label)
    for c in relabel:
        typed[c] = canonical_labels(typed[c])
    return typed


def date_evidence(frame: pd.DataFrame, columns: Sequence[str]) -> dict[str, pd.Series]:
    """Per datetime column, the few raw values of one input partition that decide how
    :func:`~synthguard.data.dates.parse_datetime_columns` reads the whole column: the first value,
    the first value that is not ISO 8601, not ``a/b/yyyy``, not an epoch number, with or without a
    UTC offset, with a first or second field above 12, and the largest epoch magnitude. Any part of
    a table holding these values of it (in table order) is read with the table's format, kind,
    day/month order, epoch unit and UTC rule, and the same cross-table errors are raised.

    Examples
    --------
    >>> s = pd.Series(["2020-01-02", None, "2020-01-03", "3/14/2021", "2020-01-04"])
    >>> date_evidence(pd.DataFrame({"d": s}), ["d"])["d"].tolist()
    ['2020-01-02', '3/14/2021']
    """
    out = {}
    for c in columns:
        s = frame[c].reset_index(drop=True)
        present = np.flatnonzero(s.notna().to_numpy())
        if not present.size:
            out[c] = s.iloc[:0]
            continue
        v = s.iloc[present]
        picks = [present[0]]
        if pd.api.types.is_numeric_dtype(v.dtype) and not pd.api.types.is_bool_dtype(v.dtype):
            mag = np.abs(v.to_numpy(dtype=np.float64))
            if np.isfinite(mag).any():
                picks.append(present[int(np.argmax(np.where(np.isfinite(mag), mag, -1.0)))])
        elif not pd.api.types.is_datetime64_any_dtype(v.dtype):
            text = v.astype(str).str.strip()
            dmy = text.str.extract(_DMY)
            tests = [~text.str.match(_ISO), ~text.str.match(_DMY), ~text.str.match(_EPOCH_DIGITS),
                     text.str.contains(_OFFSET, regex=True), ~text.str.contains(_OFFSET, regex=True),
                     pd.to_numeric(dmy[0], errors="coerce") > 12, pd.to_numeric(dmy[2], errors="coerce") > 12]
            for hit in tests:
                hit = hit.fillna(False).to_numpy(dtype=bool)
                if hit.any():
                    picks.append(present[int(np.argmax(hit))])
            num = np.abs(pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64))
            if np.isfinite(num).any():
                picks.append(present[int(np.argmax(np.where(np.isfinite(num), num, -1.0)))])
        out[c] = s.iloc[np.unique(picks)].reset_index(drop=True)
    return out


@dataclass(frozen=True)
class DateColumn:
    """How one datetime column is read in every partition: the deciding raw values of each table
    (:func:`date_evidence`, roles in the order original, synthetic, control), the tables' labels,
    and the roles whose reading depends on the other tables' values (a day/month order or an epoch
    unit only the tables together decide): the others' values are parsed beside theirs."""

    evidence: dict[str, pd.Series]
    labels: dict[str, str]
    pooled: frozenset[str] = frozenset()
    #: how :func:`~synthguard.data.dates.parse_datetime_columns` reads the whole column (day/month
    #: order, epoch unit), the note one process reports under ``inferred_metadata``; ``None``: none
    note: str | None = None


def _evidence_and_facts(frame: pd.DataFrame, dated: Sequence[str],
                        notes: tuple[Any, ...] | None, numerical: Sequence[str] = (),
                        float32: Sequence[str] = ()) -> tuple[dict[str, pd.Series], Any, Any]:
    """One raw partition's :func:`date_evidence` of the ``dated`` columns, with ``notes`` (the
    arguments of :func:`_note_facts` after the frame) its note facts (else ``None``), and the
    :func:`_infinity_facts` of the ``numerical`` columns."""
    frame = frame.reset_index(drop=True)
    frame.columns = [str(c) for c in frame.columns]
    evidence = date_evidence(frame, list(dated)) if dated else {}
    return (evidence, None if notes is None else _note_facts(frame, *notes),
            _infinity_facts(frame, numerical, float32))


#: one raw partition's infinities in one numerical column (:func:`_infinity_facts`): how many
#: ``inf``/``-inf``, how many finite values beyond 1e300, and the first of those (else NaN)
_InfinityFacts = tuple[int, int, float]


def _infinity_facts(frame: pd.DataFrame, numerical: Sequence[str], float32: Sequence[str] = ()
                    ) -> dict[str, _InfinityFacts]:
    """Per ``numerical`` column of a raw partition (its values as :func:`_typed_partition` reads
    them, :func:`_as_numbers`), what :func:`~synthguard.data.quirks.infinities_to_missing` reads
    as missing: its infinite values and its finite ones beyond 1e300 (the first of them), counted
    in one vectorised pass a column; columns without such values are left out.

    Examples
    --------
    >>> _infinity_facts(pd.DataFrame({"x": [1.0, np.inf, -np.inf, 9e307], "y": [1, 2, 3, 4]}), ["x", "y"])
    {'x': (2, 1, 9e+307)}
    """
    from ..data.quirks import infinite_cells

    out: dict[str, _InfinityFacts] = {}
    for c in numerical:
        s, _ = _as_numbers(frame[c], c in float32)
        if not pd.api.types.is_float_dtype(s.dtype):
            if not (pd.api.types.is_object_dtype(s.dtype) or pd.api.types.is_string_dtype(s.dtype)):
                continue  # integers and booleans hold no infinity
            s = pd.to_numeric(s, errors="coerce")
            if not pd.api.types.is_float_dtype(s.dtype):
                continue
        v = s.to_numpy(dtype="float64", na_value=np.nan)
        inf, huge = infinite_cells(v)
        if inf.any() or huge.any():
            out[c] = (int(inf.sum()), int(huge.sum()), float(v[huge][0]) if huge.any() else float("nan"))
    return out


def collect_date_evidence(client: Any, raw: Mapping[str, Sequence[Any]], columns: Sequence[str],
                          schema: Schema, labels: Mapping[str, str],
                          notes: tuple[Any, ...] | None = None, *,
                          infinities: dict[str, list[dict[str, _InfinityFacts]]] | None = None
                          ) -> dict[str, DateColumn] | tuple[dict[str, DateColumn], dict[str, list[Any]]]:
    """The :class:`DateColumn` of every datetime column from one pass over the raw partitions; the
    errors one process raises for the whole column (day-first and month-first values, epochs in one
    table and dates in another, an ambiguous day/month order...) are raised here, before any work.
    With ``notes`` (the arguments of :func:`_note_facts` after the frame), the same pass gathers
    every partition's note facts too: returns the columns and, per role, those facts (for
    :func:`normalisation_notes`). With ``infinities`` (a dict), the same pass fills it with, per
    role, every partition's :func:`_infinity_facts` of the numerical columns (the warnings of
    :func:`~synthguard.data.quirks.infinities_to_missing`)."""
    from dask import delayed

    from ..data.dates import parse_datetime_columns

    roles = [r for r in ROLES if r in raw]
    if not columns and notes is None and infinities is None:
        return {}
    numerical = tuple(schema.of_type("numerical")) if infinities is not None else ()
    float32 = tuple(notes[3]) if notes is not None and len(notes) > 3 else ()
    ev = delayed(_evidence_and_facts, pure=True)
    got = iter(client.gather(client.compute([ev(p, list(columns), notes, numerical, float32)
                                             for r in roles for p in raw[r]])))
    both = {r: [next(got) for _ in raw[r]] for r in roles}
    parts = {r: [b[0] for b in both[r]] for r in roles}
    facts = {r: [b[1] for b in both[r]] for r in roles}
    if infinities is not None:
        infinities.update({r: [b[2] for b in both[r]] for r in roles})
    out = {}
    for c in columns:
        evidence = {r: pd.concat([p[c] for p in parts[r]], ignore_index=True) for r in roles}
        spec = schema.columns[c]
        together, note = parse_datetime_columns(c, evidence, labels, spec.datetime_format, spec.unit)
        pooled = set()
        for r in roles:  # read alone the same way? then a partition needs no other table's values
            try:
                alone = parse_datetime_columns(c, {r: evidence[r]}, labels, spec.datetime_format,
                                               spec.unit)[0][r]
            except InputError:
                alone = None
            if alone is None or not alone.equals(together[r]):
                pooled.add(r)
        out[c] = DateColumn(evidence, {r: labels[r] for r in roles}, frozenset(pooled), note)
    return out if notes is None else (out, facts)


def parse_dates_like_table(column: str, values: pd.Series, role: str, how: DateColumn, schema: Schema,
                           label: str) -> pd.Series:
    """The datetime values of one partition's ``column``, read exactly as one process reads the whole
    column: :func:`~synthguard.data.dates.parse_datetime_columns` on the partition's values behind
    its table's deciding values (``how``), which are then dropped."""
    from ..data.dates import parse_datetime_columns

    spec = schema.columns[column]
    lead = how.evidence[role]
    series = dict(how.evidence) if role in how.pooled else {}
    series[role] = pd.concat([lead, values.reset_index(drop=True)], ignore_index=True)
    labels = {**how.labels, role: label}
    parsed = parse_datetime_columns(column, series, labels, spec.datetime_format, spec.unit)[0][role]
    return parsed.iloc[len(lead):].reset_index(drop=True)


#: one raw partition's facts about one column's normalisation (:func:`_note_facts`): the kind
#: ``infer_dtype`` reads in an object column (``None``: another dtype), whether NFC changed a value,
#: how many values had surrounding whitespace stripped, and for a boolean column, whether the
#: partition holds it as bools, the stripped lower-case spellings of its distinct values and
#: whether each one reads as a boolean (``None``: not a boolean column)
_NoteFacts = tuple["str | None", bool, int, "tuple[bool, frozenset[str], bool] | None"]


def _note_facts(frame: pd.DataFrame, columns: Sequence[str], strip: Sequence[str],
                booleans: Sequence[str], float32: Sequence[str] = ()) -> dict[str, _NoteFacts]:
    """What one raw input partition contributes to the notes one process keeps on how it
    normalised each column's values (:func:`prepare_tables`' ``notes``): per column a
    :data:`_NoteFacts`, its values taken through the steps :func:`_typed_partition` takes them
    (:func:`_as_decided`, the stripping of the ``strip`` columns, then the boolean spellings of the
    ``booleans`` columns as :func:`~synthguard.data.tables._coerce` reads them). Over the distinct
    values or one vectorised pass a column: no Python call per row.

    Examples
    --------
    >>> frame = pd.DataFrame({"s": [" yes", "no", "Y"], "t": ["e\u0301", "a", None]})
    >>> facts = _note_facts(frame, ["s", "t"], ["s"], ["s"])
    >>> facts["s"][2], sorted(facts["s"][3][1]), facts["s"][3][2], facts["t"][1]
    (1, ['no', 'y', 'yes'], True, True)
    """
    from ..data.coltypes import nfc_series
    from ..data.schema import BOOLEAN_VALUES

    frame = frame.reset_index(drop=True)
    frame.columns = [str(c) for c in frame.columns]
    strip, booleans = set(strip), set(booleans)
    out: dict[str, _NoteFacts] = {}
    for c in columns:
        plain, kind = _as_numbers(frame[c], c in float32)
        cast = nfc_series(plain)
        nfc = cast is not plain  # (the same object when nothing changes)
        padded = 0
        if c in strip:
            cast, padded = _strip(cast)
        spelled = None
        if c in booleans:
            b = cast.astype(object) if isinstance(cast.dtype, pd.CategoricalDtype) else cast
            _, uniq = pd.factorize(b, use_na_sentinel=True)
            low = pd.Index(uniq, dtype=object).astype(str).str.strip().str.lower()
            spelled = (bool(pd.api.types.is_bool_dtype(b.dtype)), frozenset(low),
                       bool(low.isin(list(BOOLEAN_VALUES)).all()))
        out[c] = (kind, bool(nfc), int(padded), spelled)
    return out


def cast_columns(facts: Mapping[str, Sequence[Mapping[str, _NoteFacts]]],
                 float32: Sequence[str] = ()) -> tuple[str, ...]:
    """The columns whose values :func:`_typed_partition` casts (:func:`_as_decided`): those some
    partition of some table holds as decimals or as text NFC changes (its :func:`_note_facts`),
    and the ``float32`` ones; the others are typed without the cast's passes over their values.

    Examples
    --------
    >>> facts = {"original": [_note_facts(pd.DataFrame({"a": ["e\u0301"], "b": ["x"]}), ["a", "b"], [], [])]}
    >>> cast_columns(facts, ["c"])
    ('a', 'c')
    """
    out = {c for parts in facts.values() for f in parts for c, (kind, nfc, _, _) in f.items()
           if nfc or kind == "decimal"}
    return tuple(sorted(out | set(float32)))


def normalisation_notes(facts: Mapping[str, Sequence[Mapping[str, _NoteFacts]]], columns: Sequence[str],
                        schema: Schema, labels: Mapping[str, str], float32: Mapping[str, Sequence[str]],
                        dates: Mapping[str, DateColumn],
                        typed: Mapping[str, Sequence[str]] | None = None) -> dict[str, tuple[str, ...]]:
    """Column -> how its values were normalised: the notes :func:`prepare_tables` keeps for one
    process's ``inferred_metadata`` (:attr:`Tables.notes <synthguard.data.tables.Tables.notes>`),
    in its wording and order, from every raw partition's :func:`_note_facts` (a few numbers and
    the distinct boolean spellings per partition and column, gathered in the pass of
    :func:`collect_date_evidence`) merged per table on the driver: a normalisation met in one
    partition only is noted once for its table, with the table's count (whitespace) or spellings
    (booleans); decimals, NFC text and float32 numbers as
    :func:`~synthguard.data.coltypes.decide_types` notes them, then the stripped whitespace, the
    dates' reading (:attr:`DateColumn.note`) and the boolean spellings.

    Parameters
    ----------
    facts : mapping
        Role -> per raw partition, its :func:`_note_facts` (roles in the order original,
        synthetic, control).
    columns : sequence of str
        The columns in the canonical order (sorted by name).
    schema : Schema
        The tables' schema.
    labels : mapping
        Role -> the table's label.
    float32 : mapping
        Role -> the columns the table holds as float32 (or float16).
    dates : mapping
        Datetime column -> its :class:`DateColumn` (:func:`collect_date_evidence`).
    typed : mapping, optional
        Column -> the notes of the typing decision of CSV files read as text
        (:func:`decide_text_types`), after the decimals' as in one process.

    Returns
    -------
    dict
        Column -> its notes, columns in the order one process first notes them.

    Examples
    --------
    >>> from synthguard.data.schema import ColumnSpec
    >>> schema = Schema({"s": ColumnSpec("s", "boolean")})
    >>> parts = [_note_facts(pd.DataFrame({"s": ["yes", "no"]}), ["s"], ["s"], ["s"]),
    ...          _note_facts(pd.DataFrame({"s": [" Y", "no"]}), ["s"], ["s"], ["s"])]
    >>> normalisation_notes({"original": parts}, ["s"], schema, {"original": "a.csv"}, {}, {})["s"]
    ('surrounding whitespace stripped from 1 value(s) in a.csv', 'values no/y/yes in a.csv read as booleans True/False')
    """
    roles = [r for r in ROLES if r in facts]
    strip = tuple(schema.of_type("categorical", "boolean", "id"))
    booleans = tuple(schema.of_type("boolean"))
    notes: dict[str, list[str]] = {}

    def add(col: str, note: str) -> None:
        notes.setdefault(col, []).append(note)

    for c in columns:  # decide_types: per column, decimals and NFC text per table, then float32
        for r in roles:
            kinds = {f[c][0] for f in facts[r]} - {"empty"}
            if kinds == {"decimal"}:
                add(c, decimal_note(labels[r]))
        for note in (typed or {}).get(c, ()):
            add(c, note)
        for r in roles:
            if any(f[c][1] for f in facts[r]):
                add(c, nfc_note(labels[r]))
        held = [r for r in roles if c in float32.get(r, ())]
        if held:
            add(c, float32_note(labels[r] for r in held))
    for c in strip:  # strip_whitespace
        for r in roles:
            k = sum(f[c][2] for f in facts[r])
            if k:
                add(c, whitespace_note(k, labels[r]))
    for c in schema.of_type("datetime"):  # parse_datetime_columns
        how = dates.get(c)
        if how is not None and how.note:
            add(c, how.note)
    for r in roles:  # _coerce: the boolean spellings, per table
        for c in booleans:
            got_c = [f[c][3] for f in facts[r] if f[c][3] is not None and f[c][3][1]]
            if not got_c or all(b for b, _, _ in got_c) or not all(k for _, _, k in got_c):
                continue
            spelled = sorted(set().union(*(v for _, v, _ in got_c)))
            add(c, boolean_note(spelled, labels[r]))
    return {c: tuple(v) for c, v in notes.items()}


def _label_sample(frame: pd.DataFrame, need: dict[str, int]) -> dict[str, tuple[dict[str, int], int]]:
    """Per column, among its first ``need[c]`` non-missing labels here: where each kind first occurs
    (``{"num": i, "other": i}``, see :func:`label_kinds`), and how many labels that is."""
    if isinstance(frame, BadPartition):
        return frame
    out = {}
    for c, n in need.items():
        vals = frame[c].dropna().iloc[:n]
        first: dict[str, int] = {}
        for i, v in enumerate(vals):
            first.setdefault(label_kind(v), i)
        out[c] = (first, len(vals))
    return out


def _mixed_label_columns(client: Any, tables: dict[str, DistTable], schema: Schema,
                         batch: int = 4) -> tuple[str, ...]:
    """The categorical/boolean/id columns whose first :data:`LABEL_SAMPLE` non-missing labels of
    each table mix numbers and strings (as :func:`prepare_tables` decides it on whole tables): the
    partitions are read in order, ``batch`` at a time, until every column has its sample (usually
    the first partition is enough)."""
    from dask import delayed

    cols = schema.of_type("categorical", "id", "boolean")
    kinds: dict[str, set[str]] = {c: set() for c in cols}
    need = {role: dict.fromkeys(cols, LABEL_SAMPLE) for role in tables}
    sample = delayed(_label_sample, pure=True)
    j, step = 0, 1  # the first partition first (usually enough), then ``batch`` at a time
    while True:
        todo = [r for r, left in need.items() if any(left.values()) and j < len(tables[r].parts)]
        if not todo:
            break
        asked = {r: {c: k for c, k in need[r].items() if k} for r in todo}
        tasks = [sample(p, asked[r]) for r in todo for p in tables[r].parts[j:j + step]]
        results = client.gather(client.compute(tasks))
        _raise_bad(results)
        got = iter(results)
        for r in todo:
            for _ in tables[r].parts[j:j + step]:  # in table order: the first labels count
                for c, (first, seen) in next(got).items():
                    kinds[c].update(k for k, i in first.items() if i < need[r][c])
                    need[r][c] -= min(seen, need[r][c])
        j, step = j + step, batch
    return tuple(c for c in cols if len(kinds[c]) > 1)


def _content_hashes(frame: pd.DataFrame, as_object: tuple[str, ...] = ()
                    ) -> tuple[np.ndarray, tuple[tuple[str, str], ...]]:
    """The 64-bit content hash of every row, as :func:`synthguard.data.tables.canonical_order`
    computes it, and the dtypes it was computed on. ``as_object``: columns cast to ``object`` first
    (their dtype differs between partitions, e.g. a boolean column with missing values in some
    partitions only: the whole table holds them as objects)."""
    if as_object:
        frame = frame.astype({c: object for c in as_object})
    return row_hashes(frame), tuple((str(c), str(t)) for c, t in frame.dtypes.items())


def _scan(frame: pd.DataFrame, as_object: tuple[str, ...], categorical: tuple[str, ...],
          control: tuple[str, ...] | None = None, ranks: np.ndarray | None = None,
          labels: tuple[str, ...] = (), counted: tuple[str, ...] | None = None,
          distinct: tuple[str, ...] = ()) -> Any:
    """One input partition's content hashes, dtypes and, per categorical column, its distinct values
    (missing dropped) with the local input row of each one's first appearance in the partition's
    canonical order (rows stably sorted by hash); with ``control``, its rows' hashes on those
    columns (the control check's, on the same dtypes), else ``None``; with ``ranks`` (the rows'
    positions in the order one process reads them), the :func:`~._recheck.first_labels` of the
    ``labels`` columns, else ``None``; with ``counted``, the :func:`_value_facts` of the
    ``counted`` and ``distinct`` columns, else ``None``."""
    if isinstance(frame, BadPartition):
        return frame
    h, dtypes = _content_hashes(frame, as_object)
    if control is None:
        h_control = None
    elif list(control) == list(frame.columns):
        h_control = h
    else:
        h_control = row_hashes(frame.astype({c: object for c in as_object})[list(control)])
    firsts_of_labels = (None if ranks is None
                        else first_labels(frame, ranks, labels, LABEL_SAMPLE))
    n = len(h)
    row = np.argsort(h, kind="stable")  # local canonical order -> input row
    local_rank = np.empty(n, dtype=np.int64)
    local_rank[row] = np.arange(n, dtype=np.int64)
    firsts = {}
    factorized = {}
    for c in categorical:
        codes, uniq = pd.factorize(frame[c], use_na_sentinel=True)
        factorized[c] = (codes, uniq)
        ok = codes >= 0
        first = np.full(len(uniq), n, dtype=np.int64)  # each value's smallest local rank
        np.minimum.at(first, codes[ok], local_rank[ok])
        firsts[c] = (list(uniq), row[first].astype(np.int64))
    facts = None if counted is None else _value_facts(frame, counted, distinct, factorized)
    return h, dtypes, firsts, h_control, firsts_of_labels, facts


#: one partition's facts for the input warnings (:func:`_value_facts`): per counted column its
#: values' counts indexed by its distinct present values in order of first appearance (input
#: order), per distinct column its present values and their distinct hashes
_ValueFacts = tuple[dict[str, pd.Series], dict[str, tuple[int, np.ndarray]]]


def _value_facts(frame: pd.DataFrame, counted: Sequence[str], distinct: Sequence[str],
                 factorized: Mapping[str, tuple[np.ndarray, Any]] | None = None) -> _ValueFacts:
    """Per ``counted`` column of a typed partition (input order), ``value_counts(sort=False)`` of
    its present values (from its ``factorized`` codes when the caller holds them), and per
    ``distinct`` column its count of present values and their distinct hashes
    (:func:`~synthguard.data.hashing.value_hashes`): what :func:`input_warnings` merges over the
    partitions into one process's warnings. Vectorised, one factorisation per column.

    Examples
    --------
    >>> counts, ids = _value_facts(pd.DataFrame({"a": ["x", None, "y", "x"], "k": [1, 1, 2, 3]}), ["a"], ["k"])
    >>> counts["a"].to_dict(), ids["k"][0], ids["k"][1].size
    ({'x': 2, 'y': 1}, 4, 3)
    """
    from ..data.hashing import value_hashes

    counts = {}
    for c in counted:
        codes, uniq = (factorized or {}).get(c) or pd.factorize(frame[c], use_na_sentinel=True)
        n = np.bincount(codes[codes >= 0], minlength=len(uniq)).astype(np.int64)
        counts[c] = pd.Series(n, index=pd.Index(uniq), name="count")
    ids = {}
    for c in distinct:
        present = frame[c].dropna()
        ids[c] = (int(len(present)), value_hashes(present))
    return counts, ids


def _local_canonical(frame: pd.DataFrame, ranks: np.ndarray) -> pd.DataFrame:
    """An input partition with its rows sorted by canonical position (``ranks``: the canonical
    position of each of its input rows)."""
    order = np.argsort(np.asarray(ranks), kind="stable")
    if (order == np.arange(len(order))).all():
        return frame
    return frame.iloc[order].reset_index(drop=True)


def _sorted_positions(ranks: np.ndarray) -> np.ndarray:
    """A partition's canonical positions in its local (canonical) row order."""
    return np.sort(np.asarray(ranks, dtype=np.int64))


@dataclass
class Canonical:
    """What :func:`canonicalise` learnt about one table: the input row of every canonical position,
    and per categorical column the distinct values of every partition ordered by their first
    canonical position (a value distinct in several partitions appears once per partition: its first
    occurrence in the list is its first canonical appearance in the table)."""

    row_numbers: np.ndarray
    first_values: dict[str, list[Any]]
    #: the rows' hashes on the control check's columns (input order), when asked
    control_hashes: np.ndarray | None = None
    #: every partition's :func:`~._recheck.first_labels`, when asked
    first_labels: list[FirstLabels] | None = None
    #: per counted column, the table's values' counts indexed by its distinct present values in
    #: order of first appearance in input order (``value_counts(sort=False)``), when asked
    value_counts: dict[str, pd.Series] | None = None
    #: per distinct column, the table's present values and their distinct count, when asked
    distinct: dict[str, tuple[int, int]] | None = None


def canonicalise(table: DistTable, client: Any, categorical: Sequence[str] = ()) -> Canonical:
    """Put ``table`` in the canonical content order of
    :meth:`Tables.in_canonical_order <synthguard.data.tables.Tables.in_canonical_order>` (rows sorted
    stably by their content hash, ties by input position) WITHOUT moving rows between partitions.

    One pass over the partitions gathers every row's 64-bit content hash (8 bytes per row; on the
    same dtypes as the whole table: a column whose dtype differs between partitions is hashed as
    objects) and the distinct categorical values. The client sorts the hashes stably (the canonical
    order: ``row_numbers``) and ranks every input row; each partition's ranks (its rows' canonical
    positions, 8 bytes per row) are scattered to the cluster once (``table.ranks``, one ``Delayed``
    per partition of ``table.input_parts``, the typed partitions in input order). ``table.parts``
    become the input partitions sorted locally by those ranks, and ``table.positions`` the sorted
    ranks: a cheap per-partition argsort at the start of the graphs that need the local canonical
    order (the neighbour search), no shuffle. ``table.lengths`` are set.

    Parameters
    ----------
    table : DistTable
        Typed input partitions (modified in place).
    client : distributed.Client
    categorical : sequence of str
        Columns whose distinct values are returned ordered by first canonical appearance (the
        order in which one process's :class:`~synthguard.data.encoding.Encoder` meets them, so feeding
        them to an encoder role by role gives the single-process codes).
    """
    return canonicalise_all({table.role: table}, client, categorical)[table.role]


def canonicalise_all(tables: dict[str, DistTable], client: Any, categorical: Sequence[str] = (), *,
                     control: Sequence[str] | None = None,
                     label_order: Mapping[str, Sequence[Any]] | None = None,
                     labels: Sequence[str] = (), freed: float = 0.0,
                     value_facts: Mapping[str, tuple[Sequence[str], Sequence[str]]] | None = None
                     ) -> dict[str, Canonical]:
    """:func:`canonicalise` for several tables, their passes over the partitions in one computation.
    ``freed``: bytes the workers hold that are released once the typed partitions are held (the raw
    partitions of :func:`hold_raw`), given to :func:`persist_if_fits`.

    With ``control`` (the control check's columns), each :class:`Canonical` holds its rows' hashes
    on them (``control_hashes``); with ``label_order`` (per role, per partition, its rows'
    positions in the order one process reads the table), every partition's
    :func:`~._recheck.first_labels` of the ``labels`` columns (``first_labels``): in the same
    pass (:mod:`._recheck`). With ``value_facts`` (role -> the columns whose values are counted
    and those whose distinct values are counted), each :class:`Canonical` holds the table's
    ``value_counts`` and ``distinct`` (:func:`_value_facts` merged): the facts of
    :func:`input_warnings`, in the same pass."""
    from dask import delayed

    cats = tuple(categorical)
    ctl = None if control is None else tuple(control)
    scan = delayed(_scan, pure=True)
    roles = list(tables)
    persist_if_fits(tables, client, freed=freed)

    def scans(role: str, as_object: tuple[str, ...]) -> list[Any]:
        order = (label_order or {}).get(role)
        counted, distinct = (value_facts or {}).get(role, (None, ()))
        counted = None if counted is None else tuple(counted)
        if order is None:
            return [scan(p, as_object, cats, ctl, None, (), counted, tuple(distinct))
                    for p in tables[role].parts]
        return [scan(p, as_object, cats, ctl, r, tuple(labels), counted, tuple(distinct))
                for p, r in zip(tables[role].parts, order, strict=True)]

    results = client.gather(client.compute([t for r in roles for t in scans(r, ())]))
    _raise_bad(results)
    got = iter(results)
    infos = {r: [next(got) for _ in tables[r].parts] for r in roles}
    out = {}
    for role in roles:
        table, info = tables[role], infos.pop(role)
        dtypes = [i[1] for i in info if len(i[0])]  # an empty partition's dtypes say nothing
        as_object: tuple[str, ...] = ()
        if dtypes and any(d != dtypes[0] for d in dtypes):  # same dtypes as the whole table has
            as_object = tuple(c for j, (c, _) in enumerate(dtypes[0]) if len({d[j] for d in dtypes}) > 1)
            info = list(client.gather(client.compute(scans(role, as_object))))
        control_hashes = (None if ctl is None else np.concatenate(
            [i[3] for i in info] or [np.zeros(0, dtype=np.uint64)]))
        firsts_of_labels = None if info and info[0][4] is None else [i[4] for i in info]
        facts = [i[5] for i in info]
        out[role] = _finish(table, client, info, cats)
        out[role].control_hashes, out[role].first_labels = control_hashes, firsts_of_labels
        if facts and facts[0] is not None:
            out[role].value_counts, out[role].distinct = _merged_value_facts(facts)
    return out


def _merged_value_facts(facts: Sequence[_ValueFacts]
                        ) -> tuple[dict[str, pd.Series], dict[str, tuple[int, int]]]:
    """One table's :func:`_value_facts` from its partitions' (in input order): the counts summed
    per value, values in order of first appearance in the table; the present values summed and
    the distinct hashes counted once.

    Examples
    --------
    >>> a = _value_facts(pd.DataFrame({"c": ["y", "x"]}), ["c"], ["c"])
    >>> b = _value_facts(pd.DataFrame({"c": ["z", "x"]}), ["c"], ["c"])
    >>> counts, distinct = _merged_value_facts([a, b])
    >>> counts["c"].to_dict(), distinct["c"]
    ({'y': 1, 'x': 2, 'z': 1}, (4, 3))
    """
    counts = {}
    for c in facts[0][0]:
        both = pd.concat([f[0][c] for f in facts])
        counts[c] = both.groupby(level=0, sort=False).sum() if len(facts) > 1 else both
    distinct = {}
    for c in facts[0][1]:
        hashes = np.unique(np.concatenate([f[1][c][1] for f in facts]))
        distinct[c] = (sum(f[1][c][0] for f in facts), int(hashes.size))
    return counts, distinct


#: share of the workers' memory (their memory limits summed) the typed partitions of the tables may
#: take to be held on the cluster for the run (:func:`persist_if_fits`)
PERSIST_SHARE = 0.25


def _frame_bytes(frame: Any) -> tuple[int, int]:
    """``(rows, bytes)`` of one typed partition (strings measured)."""
    if isinstance(frame, BadPartition):
        return 0, 0
    return len(frame), int(frame.memory_usage(deep=True, index=False).sum())


def _memory_budget(client: Any, share: float) -> float:
    """``share`` of the workers' memory limits summed, less what they already hold (bytes; ``inf``
    when a worker has no limit): a run's tables held, the re-tests' tables are counted against it."""
    from ._workers import cluster_workers

    workers = cluster_workers(client).values()
    limits = [w.get("memory_limit") or 0 for w in workers]
    if not limits:
        return 0.0
    if any(lim <= 0 for lim in limits):
        return float("inf")
    held = sum((w.get("metrics") or {}).get("managed_bytes", 0) or 0 for w in workers)
    return share * float(sum(limits)) - float(held)


def persist_if_fits(tables: Mapping[str, DistTable], client: Any,
                    share: float | None = None, freed: float = 0.0) -> bool:
    """Hold the typed partitions of ``tables`` on the cluster (``client.persist``: each partition
    read and typed once for the run, instead of once in every graph that reads it) when their
    size, extrapolated from each table's first partition holding rows, is at most ``share``
    (default :data:`PERSIST_SHARE`) of the workers' memory limits less what the workers already
    hold (the run's tables, when a re-test prepares its own); else leave them to be read again by
    each graph (the memory per task then stays one partition's). ``tables[r].parts`` are replaced
    in place by the persisted partitions (the same values). ``freed``: bytes the workers hold now
    that are released once these are held (the raw partitions they are typed from, :func:`hold_raw`):
    added to the budget. Returns whether they were persisted.
    """
    from dask import delayed

    share = PERSIST_SHARE if share is None else share
    todo = {r: t for r, t in tables.items() if t.parts and not getattr(t, "persisted", False)}
    if not todo:
        return False
    budget = _memory_budget(client, share) + max(freed, 0.0)
    if budget <= 0:
        return False
    if budget != float("inf"):
        size = delayed(_frame_bytes, pure=True)
        # a table's first partition measured (its typed rows, strings included), times its partitions
        firsts = [int(np.argmax(t.lengths > 0)) for t in todo.values()]
        # held while measured, and kept in the persist below: typed once, not once to be measured
        # and once more to be held
        measured = client.persist([t.parts[j] for t, j in zip(todo.values(), firsts, strict=True)])
        got = client.gather(client.compute([size(m) for m in measured]))
        need = sum(nbytes / rows * int(t.lengths.sum()) if rows else 0.0
                   for (rows, nbytes), t in zip(got, todo.values(), strict=True))
        if need > budget:
            return False
        for t, j, m in zip(todo.values(), firsts, measured, strict=True):
            # the others persisted beside it (each key persisted once)
            others = t.parts[:j] + t.parts[j + 1:]
            rest = list(client.persist(others)) if others else []
            t.parts = [*rest[:j], m, *rest[j:]]
            t.persisted = True
        return True
    for t in todo.values():
        t.parts = list(client.persist(list(t.parts)))
        t.persisted = True
    return True


def _same(frame: Any) -> Any:
    """``frame`` itself (a task of its own key over a raw partition, :func:`hold_raw`)."""
    return frame


#: share of the workers' memory (their limits summed, less what they hold) the raw partitions of the
#: tables may take to be held while the tables load (:func:`hold_raw`): half the typed tables' share
RAW_PERSIST_SHARE = PERSIST_SHARE / 2


def hold_raw(ddfs: Mapping[str, Any], heads: Sequence[pd.DataFrame], client: Any,
             share: float | None = None) -> tuple[dict[str, Any], float]:
    """The raw input tables ``ddfs`` held on the cluster (``client.persist``: each file read once)
    when their size, extrapolated from each table's first partition (``heads``, in the order of
    ``ddfs``) times its partitions, is at most ``share`` (default :data:`RAW_PERSIST_SHARE`) of the
    workers' memory less what they hold; else ``ddfs`` as given (each pass reads the files again).

    The loading passes over the raw partitions several times (rows and missing values, whole-column
    facts, text samples, date formats, label kinds, the typing): read once, they are held only while
    the loading's graphs reference them (the typed partitions, when :func:`persist_if_fits` holds
    them, release them). Returns the tables and the bytes held (0 when not held).

    Parameters
    ----------
    ddfs : mapping of str to dask DataFrame
        The raw tables by role.
    heads : sequence of pandas.DataFrame
        Each table's first partition, in the order of ``ddfs``.
    client : distributed.Client
    share : float, optional
        The share of the workers' memory the raw tables may take.

    Examples
    --------
    >>> import dask.dataframe as dd, pandas as pd
    >>> from distributed import Client, LocalCluster
    >>> cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None)
    >>> client = Client(cluster)
    >>> ddf = dd.from_pandas(pd.DataFrame({"a": range(6)}), npartitions=2)
    >>> held, nbytes = hold_raw({"original": ddf}, [ddf.partitions[0].compute()], client)
    >>> nbytes > 0, int(held["original"]["a"].sum().compute())
    (True, 15)
    >>> hold_raw({"original": ddf}, [ddf.partitions[0].compute()], client, share=0.0)[1]
    0.0
    >>> client.close(); cluster.close()
    """
    share = RAW_PERSIST_SHARE if share is None else share
    ddfs = dict(ddfs)
    if share <= 0 or any(len(h) == 0 for h in heads):  # an empty first partition: no estimate
        return ddfs, 0.0
    need = float(sum(_frame_bytes(h)[1] * ddf.npartitions for h, ddf in zip(heads, ddfs.values(),
                                                                              strict=True)))
    if need > _memory_budget(client, share):
        return ddfs, 0.0
    import dask
    import dask.dataframe as dd
    from dask import delayed

    held = {}
    for role, ddf in ddfs.items():
        # the partitions persisted, then one frame over them (a persisted dask-expr collection's
        # ``to_delayed`` reads its files again); as read: no string conversion on the way
        # (keys of this load's own: two loads of the same frames, as the test suite's shared
        # cluster makes, must not share held keys, which the scheduler may forget while the other
        # still reads them: dask/distributed#8576)
        parts = client.persist([delayed(_same, pure=False)(p) for p in ddf.to_delayed()])
        with dask.config.set({"dataframe.convert-string": False}):
            held[role] = dd.from_delayed(parts, meta=ddf._meta, verify_meta=False)
    return held, need


def _finish(table: DistTable, client: Any, info: list[Any], cats: tuple[str, ...]) -> Canonical:
    """Canonical order, positions and first appearances of one table from its partitions' scans."""
    from dask import delayed

    parts = table.parts
    lengths = np.asarray([len(i[0]) for i in info], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    h = np.concatenate([i[0] for i in info]) if info else np.zeros(0, dtype=np.uint64)
    order = np.argsort(h, kind="stable").astype(np.int64)
    del h
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order), dtype=np.int64)
    ranks = [rank[o:o + n] for o, n in zip(offsets, lengths, strict=True)]
    firsts: dict[str, list[Any]] = {}
    for c in cats:  # distinct values by their first canonical position over all partitions
        values = [v for i in info for v in i[2][c][0]]
        first = np.concatenate([rank[o + i[2][c][1]] for o, i in zip(offsets, info, strict=True)]) \
            if info else np.zeros(0, dtype=np.int64)
        by_pos = np.argsort(first, kind="stable")
        firsts[c] = [values[k] for k in by_pos]
    # the ranks stay on the cluster (8 bytes per row); each graph sorts the partitions by them.
    # Unhashed keys: two loads of tables with the same ranks (the test suite's shared cluster)
    # would scatter under one content-hashed key, which the scheduler may forget when the first
    # load's futures are released while the second still reads it; the graph is then cancelled
    # for "lost dependencies" (dask/distributed#8576, the check of dask/distributed#8764)
    futures = [delayed(f) for f in client.scatter(ranks, hash=False)] if ranks else []
    del rank, ranks
    local, pos = delayed(_local_canonical, pure=True), delayed(_sorted_positions, pure=True)
    table.input_parts, table.ranks = list(parts), futures
    table.parts = [local(p, r) for p, r in zip(parts, futures, strict=True)]
    table.positions = [pos(r) for r in futures]
    table.lengths = lengths
    return Canonical(order, firsts)


def _declared(metadata: Any) -> dict[str, str]:
    """Column -> the sdtype the metadata declares (a :class:`Schema`'s sdtypes), as
    :func:`prepare_tables` reads it for the typing decision."""
    from ..data.coltypes import declared_sdtypes
    from ..data.loading import load_metadata
    from ..data.schema import nfc_metadata

    if isinstance(metadata, Schema):
        return {c: sp.sdtype for c, sp in metadata.columns.items()}
    return declared_sdtypes(nfc_metadata(load_metadata(metadata)))


def load_tables(original: Any, synthetic: Any, control: Any = None, metadata: Any = None, *,
                client: Any, npartitions: int = 4) -> DistTables:
    """Partitioned, typed inputs with a schema and global vocabularies.

    Parameters
    ----------
    original, synthetic, control : path, dask DataFrame or pandas DataFrame
        A Parquet file, a folder of Parquet files, a glob, or a CSV file/glob; pandas frames are split
        into ``npartitions`` partitions.
    metadata : mapping, Schema or path, optional
        As for :func:`synthguard.evaluate`. sdtypes left out are inferred as one process infers
        them from the whole tables: from the first partition of the original holding rows
        (:func:`head_partition`) where its dtype decides, and from every partition where the
        values decide (:func:`whole_column_types`: identifiers, booleans, free text and dates read
        from text, columns holding no value in that partition).
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
    # the canonical column order (sorted by name), as synthguard.evaluate uses: row identities
    # and hashes then do not depend on the input column order, and equal one process's
    base = sorted(str(c) for c in ddfs["original"].columns)
    for role in ("synthetic", "control"):
        if role in ddfs:
            cols = {str(c) for c in ddfs[role].columns}
            missing = [c for c in base if c not in cols]
            extra = sorted(cols - set(base))
            if missing or extra:
                raise InputError(f"{labels[role]} does not hold the columns of {labels['original']}: "
                                 f"missing {missing}, extra {extra}; give every table the same columns")
    # the schema from the first partition holding rows of each table (a sample) unless the
    # metadata declares it, and every partition's count of rows and missing values per column
    roles = list(ddfs)
    presence_of = delayed(_presence_and_facts, pure=True)
    heads = list(client.gather(client.compute([ddfs[r].to_delayed()[0] for r in roles])))
    # the raw partitions read once for the loading's passes (presence, whole-column facts, dates,
    # labels, typing) when they fit, instead of once per pass; released once the typed ones are held
    ddfs, raw_bytes = hold_raw(ddfs, heads, client)
    delayed_parts = {r: ddfs[r].to_delayed() for r in roles}
    # CSV files are read as text, as one process reads them: in the same pass as the rows and
    # missing values, every partition's facts for the typing decision (decide_text_types)
    text_roles = {r for r in roles if _is_csv(sources[r])}
    asked = {r: (r in text_roles) if text_roles else None for r in roles}
    both = dict(zip(roles, client.gather(client.compute(
        [[presence_of(p, asked[r]) for p in delayed_parts[r]] for r in roles])), strict=True))
    presence = {r: [b[0] for b in both[r]] for r in roles}
    type_notes: dict[str, list[str]] = {}
    reasons: dict[str, str] = {}
    type_warns: list[str] = []
    if text_roles:
        casts, type_notes, type_warns, reasons = decide_text_types(
            {r: [b[1] for b in both[r]] for r in roles}, text_roles, base, _declared(metadata), labels)
        ddfs = _cast_tables(ddfs, casts, text_roles)
        delayed_parts = {r: ddfs[r].to_delayed() for r in roles}
        heads = [cast_decided(h, casts[r], r in text_roles) for r, h in zip(roles, heads, strict=True)]
    del both
    lead = {r: head_partition(presence[r]) for r in roles}
    later = [r for r in roles if lead[r]]  # a first partition without rows (an empty first file)
    if later:
        fetched = dict(zip(later, client.gather(client.compute([delayed_parts[r][lead[r]] for r in later])),
                           strict=True))
        heads = [fetched.get(r, h) for r, h in zip(roles, heads, strict=True)]
    # a column with no value in a whole table is refused as one process refuses it; one with no
    # value in a first partition only is typed from the other partitions (whole_column_types)
    elsewhere: set[str] = set()
    for role in roles:
        rows = sum(n for n, _ in presence[role])
        first_rows, first_missing = presence[role][lead[role]]
        for c in base:
            missing = sum(m.get(c, 0) for _, m in presence[role])
            if rows and missing == rows:
                raise InputError(empty_column_message(labels[role], c))
            if first_rows and first_missing.get(c, 0) == first_rows:
                elsewhere.add(c)
    sample = prepare_tables(*(h.reset_index(drop=True) for h in heads[:2]),
                            heads[2].reset_index(drop=True) if len(heads) > 2 else None, metadata,
                            labels=labels, canonical_columns=True, present_elsewhere=elsewhere)
    # decisions resting on whole-column facts (identifiers: unique values, no value shared between
    # tables, row numbers; booleans, free text and dates read from the values of text columns)
    # taken again from every partition, as one process takes them
    schema = whole_column_types(client, ddfs, heads, sample.schema, metadata, presence)
    if reasons:  # the typing decision's reasons of inferred categorical columns (prepare_tables)
        schema = replace(schema, columns={
            c: (replace(sp, reason=reasons[c]) if c in reasons and sp.inferred and sp.sdtype == "categorical"
                else sp) for c, sp in schema.columns.items()})
    tables: dict[str, DistTable] = {}
    typed = delayed(_typed_partition, pure=True)
    raw = {role: ddf.to_delayed() for role, ddf in ddfs.items()}
    # the columns each table holds as float32: every table's floats there compared at float32
    # precision (decide_types)
    float32 = {r: tuple(str(c) for c, d in ddfs[r].dtypes.items() if d in (np.float32, np.float16))
               for r in roles}
    every32 = tuple(sorted({c for cs in float32.values() for c in cs}))
    # datetime columns: one format per column, decided from every partition of every table; in the
    # same pass, how each partition's values are normalised (the notes of inferred_metadata)
    note_args = (base, tuple(schema.of_type("categorical", "boolean", "id")),
                 tuple(schema.of_type("boolean")), every32)
    infinities: dict[str, list[dict[str, _InfinityFacts]]] = {}
    dates, facts = collect_date_evidence(client, raw, schema.of_type("datetime"), schema, labels,
                                         notes=note_args, infinities=infinities)
    notes = normalisation_notes(facts, base, schema, labels, float32, dates, type_notes)
    cast = cast_columns(facts, every32)
    for role, parts in raw.items():
        tables[role] = DistTable(role, labels[role],
                                 [typed(p, base, schema, labels[role], (), role, dates, cast, every32)
                                  for p in parts],
                                 np.zeros(len(parts), dtype=np.int64))
    relabel = _mixed_label_columns(client, tables, schema)  # 1 in one table, "1" in another
    if relabel:
        for role, parts in raw.items():
            tables[role].parts = [typed(p, base, schema, labels[role], relabel, role, dates, cast,
                                        every32) for p in parts]
    for role in roles:  # each partition's rows (what persist_if_fits sizes the tables by)
        tables[role].lengths = np.asarray([n for n, _ in presence[role]], dtype=np.int64)
    # canonical content order, as evaluate() uses in one process (no row moves between partitions),
    # and the vocabularies, both from one pass over the partitions
    categorical = tuple(c for c in schema.tabular_columns() if not schema.columns[c].is_numeric)
    row_numbers: dict[str, np.ndarray] = {}
    # in the same pass: the facts of one process's input warnings (the values' counts of the
    # categorical and boolean columns, the distinct values of the declared identifiers, the
    # rows' hashes on the control check's columns)
    meta = _metadata_of(metadata)
    declared_ids = (declared_id_columns(declared_sdtypes(meta), meta, base) if meta is not None
                    else [])
    counted = tuple(schema.of_type("categorical", "boolean"))
    asked_facts = {r: (counted, tuple(declared_ids) if r == "original" else ()) for r in roles}
    control = control_columns(sorted(schema.columns), schema) if "control" in tables else None
    canons = canonicalise_all(tables, client, categorical, freed=raw_bytes, control=control,
                              value_facts=asked_facts)
    warns = input_warnings(metadata, meta, schema, labels, type_warns, reasons, infinities, canons)
    for role in ROLES:  # original, synthetic, control: the order one process learns vocabularies in
        if role not in tables:
            continue
        row_numbers[role] = canons[role].row_numbers
        if tables[role].n_rows == 0:
            raise InputError(f"{labels[role]} has no rows: give a non-empty table")
    firsts = {role: canons[role].first_values for role in ROLES if role in tables}
    encoder, future = _learnt_encoder(schema, firsts)
    prints = {r: {"rows": t.n_rows, "columns": len(base), "partitions": len(t.parts), "sha256": None}
              for r, t in tables.items()}
    return DistTables(tables, schema, client, encoder, future, prints, row_numbers=row_numbers,
                      first_values=firsts, notes=notes, warnings=tuple(warns))


def _metadata_of(metadata: Any) -> dict[str, Any] | None:
    """The metadata as :func:`prepare_tables` reads it (``None``: a :class:`Schema`, whose
    declarations are not checked)."""
    from ..data.loading import load_metadata
    from ..data.schema import nfc_metadata

    return None if isinstance(metadata, Schema) else nfc_metadata(load_metadata(metadata))


def input_warnings(metadata: Any, meta: Mapping[str, Any] | None, schema: Schema,
                   labels: Mapping[str, str], type_warns: Sequence[str], reasons: Mapping[str, str],
                   infinities: Mapping[str, Sequence[Mapping[str, _InfinityFacts]]],
                   canons: Mapping[str, Canonical]) -> list[str]:
    """The warnings :func:`prepare_tables` lists for the same inputs
    (:attr:`Tables.warnings <synthguard.data.tables.Tables.warnings>`), in its order and words,
    from the facts the loading gathered over the partitions; each kind by the function one
    process calls:

    * the metadata's unknown keys (:func:`~synthguard.data.schema.metadata_warnings`, on the
      metadata ``meta``; none for a :class:`Schema`);
    * the typing decision's (``type_warns``, :func:`decide_text_types`);
    * the row numbers and surrogate identifiers read on every partition
      (:func:`~synthguard.data.quirks.detection_warnings` of the ``schema``);
    * the identifiers declared on few values (:func:`~synthguard.data.quirks.declared_id_warning`,
      from the original's present and distinct values, :attr:`Canonical.distinct`);
    * the numbers read as categories (:func:`~synthguard.data.quirks.type_notice`, from the
      original's value counts, :attr:`Canonical.value_counts`; columns in ``reasons`` were
      explained by the decision);
    * the infinities read as missing (:func:`~synthguard.data.quirks.infinity_warnings`, from every
      partition's :func:`_infinity_facts`);
    * the same values spelled two ways and the categories sharing nothing with the original's
      (:func:`~synthguard.data.spellings.spelling_warnings_of`,
      :func:`~synthguard.data.quirks.disjoint_warning`, from the tables' value counts);
    * the control check (:func:`~._recheck.check_control_of`, from the rows' hashes: its errors
      are raised, as one process raises them).
    """
    from ..data.quirks import (
        declared_id_warning,
        detection_warnings,
        disjoint_warning,
        infinity_warnings,
        type_notice,
        type_notice_columns,
    )
    from ..data.schema import metadata_warnings
    from ..data.spellings import spelling_warnings_of

    warns: list[str] = []
    meta_label = str(metadata) if isinstance(metadata, (str, Path)) else "metadata"
    if meta is not None:
        warns += metadata_warnings(meta, meta_label)
    warns += type_warns
    warns += detection_warnings(schema)
    original = canons["original"]
    for c, (rows, distinct) in (original.distinct or {}).items():
        warn = declared_id_warning(c, distinct, rows, labels["original"], meta_label)
        if warn:
            warns.append(warn)
    counts = {r: c.value_counts or {} for r, c in canons.items()}
    for c in type_notice_columns(schema, set(reasons)):
        held = counts["original"][c]
        warn = type_notice(c, held.index, held.to_numpy()) if len(held) else None
        if warn:
            warns.append(warn)
    for role in (r for r in ROLES if r in infinities):
        for c in schema.of_type("numerical"):
            got = [f[c] for f in infinities[role] if c in f]
            if got:
                huge = next((f[2] for f in got if f[1]), float("nan"))
                warns += infinity_warnings(labels[role], c, sum(f[0] for f in got),
                                           sum(f[1] for f in got), huge)
    categorical = schema.of_type("categorical")
    others = [r for r in ROLES if r in canons and r != "original"]
    spelled, warned = spelling_warnings_of(
        {c: counts["original"][c].index.to_numpy() for c in categorical},
        {r: {c: counts[r][c] for c in categorical} for r in others},
        {r: canons[r].row_numbers.size for r in canons}, labels)
    warns += spelled
    for c in schema.of_type("categorical", "boolean"):
        for role in (r for r in ("synthetic", "control") if r in canons and (c, r) not in warned):
            warn = disjoint_warning(c, counts["original"][c].index, counts[role][c].index,
                                    labels.get(role, role))
            if warn:
                warns.append(warn)
    warns += check_control_of({r: c.control_hashes for r, c in canons.items()}, labels, strict=True)
    return warns


#: one column's facts over one partition (:func:`_column_facts`): rows, missing values, integer
#: dtype, numeric dtype, integer values only, smallest and largest number, the distinct 64-bit
#: hashes of its present values as pandas compares them (:func:`~synthguard.data.hashing.value_hashes`),
#: once with surrounding whitespace stripped (as the identifier detections see them) and once as
#: given (as the sdtype inference sees them; the same array when no value is padded), and the
#: distinct hashes of the stripped values written as text (the detection of surrogate identifiers
#: compares the tables so), or ``None`` when the partition repeats a value or misses one (no table
#: holding it can then be an identifier, and the text is not needed)
_Facts = tuple[int, int, bool, bool, bool, float, float, np.ndarray, np.ndarray, "np.ndarray | None"]


def _text_hashes(present: pd.Series) -> np.ndarray:
    """The distinct 64-bit hashes of ``present`` (no missing value) written as text."""
    if not len(present):
        return np.zeros(0, dtype=np.uint64)
    return np.unique(pd.util.hash_pandas_object(present.astype(str), index=False).to_numpy())


def _as_decided(s: pd.Series, float32: bool = False) -> pd.Series:
    """One raw column of a typed partition with its values as
    :func:`~synthguard.data.coltypes.decide_types` casts a typed table's: ``decimal.Decimal``
    values as float64, float32 (float16) values as the float64 of their shortest repr, and so the
    floats of every table when some table holds the column as float32 (``float32``), text as
    NFC-normalised objects. Surrounding whitespace is kept (the sdtype inference sees it).

    Parameters
    ----------
    s : Series
        The column of one partition.
    float32 : bool
        Whether some table holds the column as float32 (or float16).

    Returns
    -------
    Series
        The cast column (``s`` itself when nothing changes).
    """
    from ..data.coltypes import nfc_series

    return nfc_series(_as_numbers(s, float32)[0])


def _as_numbers(s: pd.Series, float32: bool = False) -> tuple[pd.Series, str | None]:
    """:func:`_as_decided` but the NFC step, and the kind ``infer_dtype`` reads in an object
    column (``None`` for another dtype)."""
    from ..data.coltypes import shortest_float64

    if pd.api.types.is_string_dtype(s.dtype) and s.dtype != object:
        s = s.astype(object).where(s.notna(), np.nan)  # Arrow strings -> plain objects
    kind = pd.api.types.infer_dtype(s, skipna=True) if pd.api.types.is_object_dtype(s.dtype) else None
    if kind == "decimal":
        s = s.astype("float64")
    if s.dtype in (np.float32, np.float16):
        s = pd.Series(shortest_float64(s.to_numpy()), index=s.index, name=s.name)
    elif float32 and pd.api.types.is_float_dtype(s.dtype):
        s = pd.Series(shortest_float64(s.to_numpy(dtype=np.float64)), index=s.index, name=s.name)
    return s, kind


def _decided_frame(frame: pd.DataFrame, float32: Sequence[str]) -> pd.DataFrame:
    """``frame`` (a raw partition, columns named as text) with every column cast by
    :func:`_as_decided`; ``float32``: the columns some table holds as float32."""
    frame = frame.reset_index(drop=True)
    frame.columns = [str(c) for c in frame.columns]
    return pd.DataFrame({c: _as_decided(frame[c], c in float32) for c in frame.columns}, index=frame.index)


def _column_facts(frame: pd.DataFrame, columns: Sequence[str], float32: Sequence[str] = ()
                  ) -> tuple[_Facts, ...]:
    """The whole-column facts of ``columns`` over one raw input partition (one per column, in
    order), values as :func:`prepare_tables` sees them when it decides identifiers: cast as
    :func:`_as_decided` casts them (``float32``: the columns some table holds as float32), and
    surrounding whitespace stripped (and as given, for the sdtype inference, which runs before the
    stripping)."""
    from ..data.hashing import value_hashes
    from ..data.quirks import _integer_valued

    frame = frame.reset_index(drop=True)
    frame.columns = [str(c) for c in frame.columns]
    out: list[_Facts] = []
    for c in columns:
        s = _as_decided(frame[c], c in float32)
        numeric = pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype)
        given = None
        if not numeric and has_padding(s):
            given, s = s, _strip(s)[0]
        missing = s.isna().to_numpy()
        lo = hi = np.nan
        if numeric and not missing.all():
            v = s.to_numpy(dtype=np.float64, na_value=np.nan)
            lo, hi = float(np.nanmin(v)), float(np.nanmax(v))
        present = s[~missing]
        hashes = value_hashes(present)
        text = _text_hashes(present) if not missing.any() and hashes.size == len(s) else None
        out.append((len(s), int(missing.sum()), bool(pd.api.types.is_integer_dtype(s.dtype)), numeric,
                    _integer_valued(s), lo, hi, hashes,
                    hashes if given is None else value_hashes(given[~missing]), text))
    return tuple(out)


@dataclass(frozen=True)
class WholeColumn:
    """One column's facts over every partition of one table (see :func:`_column_facts`)."""

    rows: int
    missing: int
    integer_dtype: bool
    numeric: bool
    integral: bool
    low: float
    high: float
    distinct: int
    #: distinct values before surrounding whitespace is stripped (what the sdtype inference counts)
    distinct_given: int

    @property
    def present(self) -> int:
        return self.rows - self.missing

    @property
    def unique_no_missing(self) -> bool:
        """As :func:`synthguard.data.quirks._unique_no_missing` on the whole column."""
        from ..data.quirks import MIN_ID_ROWS

        return self.rows >= MIN_ID_ROWS and self.missing == 0 and self.distinct == self.rows

    @property
    def row_numbers(self) -> int | None:
        """As :func:`synthguard.data.quirks._row_numbers` on the whole column: 0 or 1 when it holds
        ``0..n-1`` (or ``1..n``) of its ``n`` rows, else ``None``."""
        if not self.numeric or self.rows == 0 or self.missing or not self.integral:
            return None
        if self.low not in (0.0, 1.0) or self.high != self.low + self.rows - 1 or self.distinct != self.rows:
            return None
        return int(self.low)


def _merge_column(roles: Sequence[str], of_role: Sequence[str], *parts: _Facts
                  ) -> tuple[dict[str, WholeColumn], bool]:
    """One column's partition facts (:func:`_column_facts`) merged per table, in one task on the
    cluster that holds this column's hashes only: role -> :class:`WholeColumn`, and whether a
    value of the original occurs, written as text, in another table (``False`` unless every table
    is unique per row without missing values: only then does the detection ask)."""
    whole: dict[str, WholeColumn] = {}
    texts: dict[str, list[np.ndarray | None]] = {}
    for role in roles:
        got = [f for r, f in zip(of_role, parts, strict=True) if r == role]
        hashes = np.unique(np.concatenate([g[7] for g in got])) if got else np.zeros(0, np.uint64)
        given = hashes if all(g[8] is g[7] for g in got) else np.unique(np.concatenate([g[8] for g in got]))
        lows = [g[5] for g in got if not np.isnan(g[5])]
        highs = [g[6] for g in got if not np.isnan(g[6])]
        whole[role] = WholeColumn(
            rows=sum(g[0] for g in got), missing=sum(g[1] for g in got),
            integer_dtype=all(g[2] for g in got), numeric=all(g[3] for g in got),
            integral=all(g[4] for g in got), low=min(lows) if lows else np.nan,
            high=max(highs) if highs else np.nan, distinct=int(hashes.size), distinct_given=int(given.size))
        texts[role] = [g[9] for g in got]
    if not all(w.unique_no_missing for w in whole.values()):
        return whole, False
    sets = {r: np.unique(np.concatenate(t)) if t else np.zeros(0, np.uint64) for r, t in texts.items()}
    return whole, any(bool(np.isin(sets["original"], sets[r]).any()) for r in roles if r != "original")


def _may_be_identifier(col: str, spec: Any, heads: Mapping[str, pd.DataFrame]) -> bool:
    """Whether the identifier decisions on column ``col`` may come out otherwise on the whole tables
    than on their first partitions ``heads`` (values as :func:`_as_decided` casts them): an
    inferred identifier, or an inferred categorical or numerical column unique in the first
    partition of every table (or named like an identifier and unique in the original's). A value
    repeated (or missing) in a first partition is repeated (missing) in the whole table, so no
    other column can become an identifier. Nor can a numerical column with a value other than a
    whole number (a fraction, an infinity, a missing value) in some first partition, unless the
    original holds integers: every rule asks for integers (the inference of ids named so an
    integer dtype, the row numbers and surrogate identifiers whole numbers in every table)."""
    from ..data.quirks import _integer_valued
    from ..data.schema import named_like_id

    if not spec.inferred or spec.sdtype not in ("id", "categorical", "numerical"):
        return False
    if spec.sdtype == "id":
        return True
    firsts = [h[col] for h in heads.values()]
    if spec.sdtype == "numerical" and not pd.api.types.is_integer_dtype(heads["original"][col].dtype) \
            and not all(_integer_valued(s) for s in firsts):
        return False
    if all(not s.isna().any() and s.is_unique for s in firsts):
        return True
    return named_like_id(col) and heads["original"][col].dropna().is_unique


def fact_columns(schema: Schema, heads: Mapping[str, pd.DataFrame]) -> list[str]:
    """The columns whose facts :func:`whole_column_types` gathers from every partition: those whose
    identifier decisions may change (:func:`_may_be_identifier`), and the inferred categorical
    columns whose reason states their count of distinct values.

    Parameters
    ----------
    schema : Schema
        The schema of the first partitions.
    heads : mapping
        Role -> the first partition of the table, values as :func:`_as_decided` casts them.

    Returns
    -------
    list of str
        The columns, in the schema's order.
    """
    return [c for c, spec in schema.columns.items() if _may_be_identifier(c, spec, heads)
            or (spec.inferred and spec.sdtype == "categorical" and spec.reason.startswith("text values ("))]


def whole_column_types(client: Any, ddfs: Mapping[str, Any], heads: Sequence[pd.DataFrame],
                       schema: Schema, metadata: Any = None,
                       presence: Mapping[str, Sequence[tuple[int, dict[str, int]]]] | None = None) -> Schema:
    """``schema`` (inferred from the first partition of each table) with the decisions that rest on
    whole-column facts taken again from every partition, as :func:`prepare_tables` takes them in
    one process on the whole tables: a column named like an identifier is one when its values are
    unique (:func:`~synthguard.data.schema.infer_sdtype`), a column holding each table's row numbers
    is one (:func:`~synthguard.data.quirks.detect_row_numbers`), and so is a column unique per row
    in every table sharing no value between the original and the other tables
    (:func:`~synthguard.data.quirks.detect_surrogate_ids`). Declared sdtypes stay as declared.

    An inferred column the original holds as text is typed from its values as
    :func:`~synthguard.data.schema.infer_sdtype` types the whole column: booleans, free text and
    dates from the same seeded sample of its values (:func:`whole_text_sdtypes`: each partition
    sends its part of the sample, decided on the driver as one process decides), the rest (an
    identifier or categorical) from the whole column's counts below. A first partition without a
    value is no sample then.

    A column unique in the first partition but repeated over the partitions (a person number that
    copied rows carry, the copies in other partitions than their originals) is then no identifier
    on a cluster either. Values are taken as :func:`~synthguard.data.coltypes.decide_types` casts
    them (:func:`_as_decided`: ``decimal.Decimal`` values are numbers), and compared as pandas
    compares them (``-0.0`` is ``0.0``; ``1`` is not ``"1"``), except where the detection compares
    the tables' values as text. Only the columns whose decision may change are checked
    (:func:`fact_columns`): per partition, counts and the distinct hashes of their values, merged
    per column on the cluster (no task holds more than one column's hashes).

    Parameters
    ----------
    client : distributed.Client
        Where the partitions are.
    ddfs : mapping
        Role -> dask DataFrame (original, synthetic, control order).
    heads : sequence of DataFrame
        The first partition holding rows of each table (:func:`head_partition`), in the order of
        ``ddfs``.
    schema : Schema
        The schema :func:`prepare_tables` gave the first partitions.
    metadata : optional
        The evaluation's metadata: a :class:`Schema` gives the sdtypes the detections start from.
    presence : mapping, optional
        Role -> per partition, its rows and ``{column: missing values}`` (:func:`_presence`);
        computed when not given.

    Returns
    -------
    Schema
        ``schema`` with the changed columns replaced.
    """
    from dataclasses import replace

    from dask import delayed

    from ..data.quirks import (
        _UNNAMED,
        MIN_ID_ROWS,
        row_numbers_reason,
        row_numbers_what,
        surrogate_reason,
    )
    from ..data.schema import (
        ID_INTEGERS_REASON,
        infer_sdtype,
        named_like_id,
        reads_as_text,
        values_sdtype,
    )

    roles = list(ddfs)
    # the columns some table holds as float32: decide_types rounds every table's floats to float32
    float32 = tuple(sorted({str(c) for r in roles for c, d in ddfs[r].dtypes.items()
                            if d in (np.float32, np.float16)}))
    first = {r: _decided_frame(h, float32) for r, h in zip(roles, heads, strict=True)}
    given = metadata.columns if isinstance(metadata, Schema) else None
    # inferred text columns: booleans, free text, dates from the sample of the whole column
    texts = [] if given is not None else [c for c, s in schema.columns.items()
                                          if s.inferred and reads_as_text(first["original"][c].dtype)]
    read: dict[str, tuple[str, str] | None] = {}
    if texts:
        if presence is None:
            presence_of = delayed(_presence, pure=True)
            presence = {"original": client.gather(client.compute(
                [presence_of(p) for p in ddfs["original"].to_delayed()]))}
        read = whole_text_sdtypes(client, ddfs["original"], texts, presence["original"])
    sampled = {c: replace(schema.columns[c], sdtype=got[0], reason=got[1])
               for c, got in read.items() if got is not None}
    start = schema
    if sampled:
        schema = replace(schema, columns={c: sampled.get(c, s) for c, s in schema.columns.items()})
    chosen = set(fact_columns(start, first)) | {c for c, got in read.items() if got is None}
    columns = [c for c in schema.columns if c in chosen and c not in sampled]
    if not columns:
        return _with_text_columns(schema, given, metadata)
    # per partition one task for its facts, per column one task merging them (holding that
    # column's hashes only)
    facts_of = delayed(_column_facts, pure=True)
    merge = delayed(_merge_column, pure=True)
    labels = {r: {str(c): c for c in ddfs[r].columns} for r in roles}  # str names -> the frames' own
    parts = [(r, facts_of(p, columns, float32)) for r in roles
             for p in ddfs[r][[labels[r][c] for c in columns]].to_delayed()]
    of_role = [r for r, _ in parts]
    merged = client.gather(client.compute([merge(roles, of_role, *[f[i] for _, f in parts])
                                           for i in range(len(columns))]))
    facts = {c: m[0] for c, m in zip(columns, merged, strict=True)}
    shared = {c: m[1] for c, m in zip(columns, merged, strict=True)}
    changed: dict[str, Any] = {}
    for c in columns:
        spec, whole = schema.columns[c], facts[c]
        # 1. the sdtype inferred from the whole original (the detections start from it)
        orig = whole["original"]
        if given is not None:
            spec = given[c]
        elif c in read:  # text that is no boolean, free text nor dates: by the whole column's counts
            sd, reason = values_sdtype(c, orig.present, orig.distinct_given)
            spec = replace(spec, sdtype=sd, reason=reason, inferred=True)
        else:
            sd, reason = infer_sdtype(first["original"][c])
            if reason == ID_INTEGERS_REASON or reason.startswith("numeric dtype"):
                dtype = first["original"][c].dtype
                sd, reason = (("id", ID_INTEGERS_REASON) if orig.integer_dtype and orig.present > 1
                              and orig.distinct_given == orig.present and named_like_id(c)
                              else ("numerical", f"numeric dtype ({dtype})"))
            spec = replace(spec, sdtype=sd, reason=reason, inferred=True)
        if spec.inferred and spec.sdtype in ("numerical", "categorical"):
            # 2. row numbers (detect_row_numbers), then 3. surrogate identifiers (detect_surrogate_ids)
            tables = list(whole.values())
            what = None
            if all(t.rows >= MIN_ID_ROWS for t in tables):
                unnamed = _UNNAMED.match(c) is not None and all(t.integral and t.unique_no_missing
                                                                for t in tables)
                what = row_numbers_what(c, [t.row_numbers for t in tables], unnamed)
            if what is not None:
                spec = replace(spec, sdtype="id", reason=row_numbers_reason(what))
            elif (all(t.unique_no_missing for t in tables) and not shared[c]
                  and (spec.sdtype == "categorical" or all(t.integral for t in tables))):
                spec = replace(spec, sdtype="id", reason=surrogate_reason(spec.sdtype))
        if spec != schema.columns[c]:
            changed[c] = spec
    if changed:
        schema = replace(schema, columns={c: changed.get(c, s) for c, s in schema.columns.items()})
    return _with_text_columns(schema, given, metadata)


def _with_text_columns(schema: Schema, given: Any, metadata: Any) -> Schema:
    """``schema`` with its ``text_columns`` as one process's: the declared ones, then the columns
    typed text on the whole tables (the first partitions' were the start); metadata given as a
    :class:`Schema` keeps its own."""
    from dataclasses import replace

    from ..data.schema import declared_text_columns, text_columns_of

    if given is not None:
        return schema
    texts = text_columns_of(declared_text_columns(metadata), schema.columns)
    return schema if texts == schema.text_columns else replace(schema, text_columns=texts)


def head_partition(presence: Sequence[tuple[int, dict[str, int]]]) -> int:
    """The partition a table's schema sample is read from: its first partition holding rows (0
    when none does: the table is then refused as empty).

    Examples
    --------
    >>> head_partition([(0, {}), (0, {}), (5, {"a": 1}), (3, {})])
    2
    >>> head_partition([(0, {}), (0, {})])
    0
    """
    rows = np.asarray([n for n, _ in presence], dtype=np.int64)
    return int(np.argmax(rows > 0)) if (rows > 0).any() else 0


def _presence(frame: pd.DataFrame) -> tuple[int, dict[str, int]]:
    """One raw input partition's rows and, per column (named as text), its missing values."""
    missing = frame.isna().sum()
    return len(frame), {str(c): int(v) for c, v in missing.items()}


def _present(values: pd.Series) -> pd.Series:
    """The non-missing values of one partition's column, as :func:`_as_decided` casts them."""
    s = _as_decided(values)
    return s[s.notna().to_numpy()]


def _part_sample(present: pd.Series, picks: np.ndarray | None) -> pd.Series:
    """One partition's part of a text column's sample (:func:`~synthguard.data.schema.text_sample_positions`):
    its non-missing values (:func:`_present`) at the local positions ``picks`` (``None``: all), as
    :func:`~synthguard.data.schema.sample_strings` gives them."""
    from ..data.schema import sample_strings

    return sample_strings(present if picks is None else present.iloc[picks])


def _text_part_samples(frame: pd.DataFrame, columns: Sequence[str],
                       picks: Mapping[str, np.ndarray | None]) -> dict[str, pd.Series]:
    """Per text column, one raw partition's part of its sample (:func:`_part_sample`: the strings
    at the local positions ``picks[column]``, in table order)."""
    frame = frame.reset_index(drop=True)
    frame.columns = [str(c) for c in frame.columns]
    return {c: _part_sample(_present(frame[c]), picks[c]) for c in columns}


def whole_text_samples(client: Any, ddf: Any, columns: Sequence[str],
                       presence: Sequence[tuple[int, dict[str, int]]]) -> dict[str, pd.Series]:
    """The sample :func:`~synthguard.data.schema.infer_sdtype` reads from each text column of the
    whole original (:func:`~synthguard.data.schema.text_sample`): the same strings in the same
    order, gathered from the partitions.

    One process reads every non-missing value up to 2,000, else 2,000 of them at positions drawn
    from their count alone (:func:`~synthguard.data.schema.text_sample_positions`). Here the count
    comes from ``presence``, the positions are drawn in one task on the cluster, each partition
    sends its sampled strings in table order (one task per partition for every column) and the
    driver puts them in the order of the draw. At most 2,000 strings per column travel; no column
    is gathered.

    Parameters
    ----------
    client : distributed.Client
    ddf : dask DataFrame
        The original, raw.
    columns : sequence of str
        The text columns (names as text).
    presence : sequence
        Per partition of ``ddf``, its rows and ``{column: missing values}`` (:func:`_presence`).

    Returns
    -------
    dict
        Column -> its sample (indexed ``0..n-1``), for the columns holding a value.
    """
    from dask import delayed

    from ..data.schema import TEXT_SAMPLE, text_sample_positions

    counts = {c: np.asarray([n - m.get(c, 0) for n, m in presence], dtype=np.int64) for c in columns}
    columns = [c for c in columns if counts[c].sum()]
    sizes = sorted({int(counts[c].sum()) for c in columns if counts[c].sum() > TEXT_SAMPLE})
    draw = delayed(text_sample_positions, pure=True)
    drawn = dict(zip(sizes, client.gather(client.compute([draw(n) for n in sizes])), strict=True))
    # whole partitions, the columns taken in the task: a projection of Parquet partitions may be
    # fused by dask into fewer partitions than ``presence`` counted (2 files of 250,000 and 50,000
    # rows read as one), and the picks are per partition of ``presence``
    parts = ddf.to_delayed() if columns else []
    picks: list[dict[str, np.ndarray | None]] = [{} for _ in parts]
    for c in columns:
        ends = np.cumsum(counts[c])
        starts = ends - counts[c]
        pos = drawn.get(int(ends[-1]))
        ordered = None if pos is None else np.sort(pos)
        for j in range(len(parts)):  # loop over partitions
            picks[j][c] = None if ordered is None else ordered[np.searchsorted(ordered, starts[j]):
                                                               np.searchsorted(ordered, ends[j])] - starts[j]
    samples_of = delayed(_text_part_samples, pure=True)
    got = client.gather(client.compute([samples_of(p, columns, picks[j]) for j, p in enumerate(parts)]))
    out: dict[str, pd.Series] = {}
    for c in columns:
        pieces = [g[c] for g in got if len(g[c])]
        sample = pd.concat(pieces, ignore_index=True) if len(pieces) > 1 else pieces[0].reset_index(drop=True)
        pos = drawn.get(int(counts[c].sum()))
        if pos is not None:  # table order -> the order of the draw
            sample = sample.iloc[np.searchsorted(np.sort(pos), pos)].reset_index(drop=True)
        out[c] = sample
    return out


def whole_text_sdtypes(client: Any, ddf: Any, columns: Sequence[str],
                       presence: Sequence[tuple[int, dict[str, int]]]) -> dict[str, tuple[str, str] | None]:
    """The sdtype :func:`~synthguard.data.schema.infer_sdtype` reads from the values of each text
    column of the whole original (booleans, free text, dates), or ``None`` when it reads none of
    them (an identifier or categorical: decided by the whole column's counts): the sample one
    process reads, gathered (:func:`whole_text_samples`), decided on the driver by the function
    one process runs on it (:func:`~synthguard.data.schema.text_sample_sdtype`: dates parsed in
    one call over the whole sample, as pandas 3 infers one resolution from all of them). The
    parameters are :func:`whole_text_samples`'; returns column -> ``(sdtype, reason)`` or ``None``.
    """
    from ..data.schema import text_sample_sdtype

    samples = whole_text_samples(client, ddf, columns, presence)
    # a column without a value is refused by load_tables
    return {c: text_sample_sdtype(samples[c]) if c in samples else ("categorical", "no values") for c in columns}


def _learnt_encoder(schema: Schema, firsts: Mapping[str, Mapping[str, list[Any]]]
                    ) -> tuple[Encoder, Any]:
    """The frozen encoder of tables whose categorical values first appear in ``firsts`` (per role,
    original, synthetic, control: the order one process learns vocabularies in), and its
    ``Delayed`` (one key per graph, shipped with the tasks)."""
    from dask import delayed

    encoder = Encoder(schema)
    for role in ROLES:
        for c, values in (firsts.get(role) or {}).items():
            if values:
                encoder.codes(pd.Series(values, name=c, dtype=object))
    encoder.freeze()
    return encoder, delayed(encoder, pure=True, traverse=False)


def _kept_rows(frame: pd.DataFrame, keep: np.ndarray) -> pd.DataFrame:
    """The rows of one input partition marked in ``keep``, in input order."""
    return frame.iloc[np.flatnonzero(keep)].reset_index(drop=True)


def without_rows(dt: DistTables, dropped: np.ndarray, role: str = "synthetic", *,
                 input_numbers: bool = False) -> tuple[DistTables, np.ndarray]:
    """``dt`` with the rows of ``role`` marked in ``dropped`` (canonical positions) removed, as a
    new evaluation of the remaining rows would read them, without gathering any table: each input
    partition filtered on the cluster (its kept rows, in input order), the filtered table put in
    canonical order (:func:`canonicalise`, ties by input row as one process breaks them) and the
    vocabularies learnt again in one process's order (original, the filtered table, control). The
    other tables are shared. Returns the new tables and, for each of their rows of ``role``, its
    canonical position in ``dt`` (as :func:`synthguard.run.actions._without_rows` in one process).
    The new table's :attr:`~DistTables.row_numbers` number its own input rows, or, with
    ``input_numbers`` (a seeded sample of the records: the report names them as the user gave
    them), ``dt``'s input rows (then :attr:`~DistTables.part_rows` number the partitions' rows).

    Only per-row positions and flags travel (8 bytes and one byte per row); the driver never holds
    a partition.
    """
    from dask import delayed

    table = dt.get(role)
    if table.input_parts is None:
        raise RuntimeError("without_rows: the table has no input partitions (not canonicalised)")
    n = table.n_rows
    nums = dt.rows_in_parts(role)
    rank = np.arange(n, dtype=np.int64)  # canonical position of every input row
    if nums is not None:
        rank[np.asarray(nums, dtype=np.int64)] = np.arange(n, dtype=np.int64)
    keep = ~np.asarray(dropped, dtype=bool)[rank]  # per input row
    bounds = np.concatenate([table.offsets, [n]])
    kept = delayed(_kept_rows, pure=True)
    part_of = np.repeat(np.arange(table.lengths.size), table.lengths)  # per input row
    sizes = np.bincount(part_of[keep], minlength=table.lengths.size).astype(np.int64)
    # the partitions left with rows (at least one partition, as every table has)
    left = [j for j in range(sizes.size) if sizes[j]] or [0]
    parts = [kept(table.input_parts[j], keep[bounds[j]:bounds[j + 1]]) for j in left]
    lengths = sizes[left].astype(np.int64)
    new = DistTable(role, table.label, parts, lengths)
    categorical = tuple(c for c in dt.schema.tabular_columns() if not dt.schema.columns[c].is_numeric)
    canon = canonicalise_all({role: new}, dt.client, categorical)[role]
    firsts = {**dt.first_values, role: canon.first_values}
    encoder, future = _learnt_encoder(dt.schema, firsts)
    prints = {**dt.fingerprints, role: {**dt.fingerprints.get(role, {}), "rows": new.n_rows,
                                        "partitions": len(parts)}}
    kept_inputs = np.flatnonzero(keep)  # the new table's input rows, as input rows of ``dt``
    at = rank[kept_inputs[np.asarray(canon.row_numbers, dtype=np.int64)]]
    part_rows = {r: v for r, v in dt.part_rows.items() if r != role}
    numbers = canon.row_numbers
    if input_numbers:
        part_rows[role] = canon.row_numbers
        numbers = at if dt.row_numbers.get(role) is None else np.asarray(dt.row_numbers[role])[at]
    out = DistTables({**dt.tables, role: new}, dt.schema, dt.client, encoder, future, prints,
                     release_type=dt.release_type,
                     row_numbers={**dt.row_numbers, role: numbers}, first_values=firsts,
                     part_rows=part_rows, notes=dict(dt.notes), warnings=dt.warnings,
                     whole=dict(dt.whole), whole_columns=dt.whole_columns)
    return out, at


def whole_identifier_columns(dt: DistTables, roles: Sequence[str]
                             ) -> tuple[dict[str, DistTable], tuple[str, ...] | None]:
    """What a seeded sample's re-test needs of the whole tables ``roles`` of ``dt`` to decide
    identifiers as a new evaluation does (:func:`without_rows_retyped`; one process:
    :func:`~synthguard.data.quirks.identifier_candidates`, ``Tables.whole_columns``), so that the
    rest of them is let go: per role, the table (:attr:`DistTables.whole`), and the columns those
    tables hold (:attr:`DistTables.whole_columns`; ``None``: every column).

    A whole table whose partitions hold nothing on the cluster (read from their source by each
    graph) is kept as it is: holding it holds nothing, and nothing is read now. When one holds
    data on the cluster (its typed or raw partitions held), the columns that could read as an
    identifier in every such table (inferred categorical, or numerical with whole numbers;
    complete and unique in every partition: a column unique in a whole table is so in each of its
    partitions) are found, each of those tables' partitions is projected on them and held, and the
    table itself is let go (its held partitions are released once nothing else reads them).

    Examples
    --------
    >>> import pandas as pd
    >>> from distributed import Client
    >>> client = Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None)
    >>> o = pd.DataFrame({"code": range(100, 140), "x": [1, 2] * 20})  # shared with the release
    >>> dt = load_tables(o, o.head(30), None, None, client=client, npartitions=2)
    >>> whole, cols = whole_identifier_columns(dt, ["original"])
    >>> cols, whole["original"].n_rows
    (('code',), 40)
    >>> client.close()
    """
    from dask import delayed
    from distributed import futures_of

    held = [r for r in roles if futures_of(list(dt.get(r).input_parts or ()))]
    out: dict[str, DistTable] = {r: dt.get(r) for r in roles if r not in held}
    if not held:
        return out, None
    schema = dt.schema
    cols = tuple(c for c, s in schema.columns.items() if s.inferred and s.sdtype in ("numerical", "categorical"))
    # one process's rule (quirks.identifier_candidates) on each partition: a column unique in a
    # whole table is so in each of its partitions, whatever their sizes
    check = delayed(identifier_candidates, pure=True)
    got = dt.client.gather(dt.client.compute(
        [check(p, schema, 0) for r in held for p in dt.get(r).input_parts])) if cols else []
    kept = tuple(c for c in cols if all(c in g for g in got))
    if not kept:  # no column can read as an identifier in them: nothing of them is needed
        return out, kept
    project = delayed(_projected, pure=True)
    for r in held:
        table = dt.get(r)
        new = DistTable(r, table.label, [project(p, kept) for p in table.input_parts], table.lengths.copy())
        new.parts, new.persisted = list(dt.client.persist(new.parts)), True
        new.input_parts = list(new.parts)
        out[r] = new
    return out, kept


#: rows of each table's first partition :func:`without_rows_retyped` reads to pick the columns
#: whose identifier facts it gathers from every partition
RECHECK_HEAD_ROWS = 10_000


def _projected(frame: pd.DataFrame, columns: Sequence[str], rows: int | None = None) -> pd.DataFrame:
    """``frame``'s ``columns`` (its first ``rows`` rows; ``None``: all), index from 0."""
    out = frame[list(columns)]
    return (out if rows is None else out.iloc[:rows]).reset_index(drop=True)


def _same(values: pd.Series) -> pd.Series:
    """A column as it is (:func:`without_rows_retyped`: typed again under a new sdtype)."""
    return values


def without_rows_retyped(dt: DistTables, dropped: np.ndarray
                         ) -> tuple[DistTables, np.ndarray, np.ndarray | None]:
    """:func:`without_rows` on the release, then the decisions that read the rows taken again on
    the tables without them, as a new evaluation takes them (one process:
    :func:`synthguard.run.actions._without_rows`): row numbers and surrogate identifiers
    (:func:`whole_column_types` with ``dt``'s schema as the metadata: only the columns that may be
    identifiers are read, per partition). A code unique on every row that the release shares with
    the training table only through the dropped rows becomes an identifier; the columns so changed
    are typed again in every table (:func:`with_columns` with the values as they are).

    Returns
    -------
    (DistTables, ndarray, ndarray or None)
        The tables; for each of their release rows its canonical position in ``dt``; for each of
        their training rows its canonical position in ``dt`` (``None``: the same positions, when
        no column was typed again).
    """
    import dask.dataframe as dd
    from dask import delayed

    from ..engine.reuse import renumbering  # each row number's place among the others

    new, at = without_rows(dt, dropped)
    # the detections start from inferred numerical and categorical columns (an identifier stays
    # one, a declared column as declared): none, nothing to read
    cols = [c for c, s in new.schema.columns.items() if s.inferred and s.sdtype in ("numerical", "categorical")]
    if new.whole_columns is not None:  # a sample: only the whole tables' candidates can read as one
        cols = [c for c in cols if c in new.whole_columns]
    if not cols:
        return new, at, None
    roles = [r for r in ROLES if r in new.tables]
    project = delayed(_projected, pure=True)
    # a sampled table's whole table: a new evaluation decides identifiers before it samples
    parts = {r: [project(p, cols) for p in new.whole.get(r, new.get(r)).input_parts] for r in roles}
    # the first rows of each table's first partition pick the columns whose facts are gathered
    # (a column repeated there is repeated in the table: fewer rows only add candidates)
    heads = dt.client.gather(dt.client.compute([project(parts[r][0], cols, RECHECK_HEAD_ROWS) for r in roles]))
    ddfs = {r: dd.from_delayed(parts[r], meta=h.iloc[:0], verify_meta=False)
            for r, h in zip(roles, heads, strict=True)}
    schema = whole_column_types(dt.client, ddfs, heads, new.schema.restrict(cols), new.schema.restrict(cols))
    changed = [c for c in schema.columns if schema.columns[c] != new.schema.columns[c]]
    if not changed:
        return new, at, None
    schema = replace(new.schema, columns={c: schema.columns.get(c, s) for c, s in new.schema.columns.items()})
    retyped = with_columns(new, {c: _same for c in changed}, schema)
    release = at[renumbering(retyped.row_numbers["synthetic"], new.row_numbers["synthetic"])]
    training = renumbering(retyped.row_numbers["original"], dt.row_numbers["original"]) \
        if dt.row_numbers.get("original") is not None else retyped.row_numbers["original"]
    return retyped, release, np.asarray(training, dtype=np.int64)


def kept_columns_alike(parent: DistTables, new: DistTables) -> Callable[[str, str], bool]:
    """For a drop-and-retest's tables ``new``, made from ``parent`` by :func:`without_rows` of
    release rows (:func:`without_rows_retyped` when it typed no column again): whether a role's
    column holds the run's values (the release's at the kept rows), typed and coded as in the run
    (``column_same`` of :func:`synthguard.engine.reuse.derive_searches`). The release's rows are
    the run's kept rows by construction; every other role must be the run's own table, and every
    column typed alike with the same vocabulary (a category seen only in the dropped rows shifts
    the codes after it; :meth:`~synthguard.data.encoding.Encoder.codes_alike`). The tables'
    encoder sets no datetime origin (their keys and hashes hold datetimes in days since 1970);
    the seconds a backend's searches read start at an origin over every table, the release
    included: those searches are keyed by their origins too (``DaskBackend._seconds_kind``), so
    a re-test whose origins moved searches again. Nothing is read on the cluster.
    """
    def same(role: str, column: str) -> bool:
        if role != "synthetic" and new.tables.get(role) is not parent.tables.get(role):
            return False
        return parent.encoder.codes_alike(new.encoder, column)

    return same


def _with_replaced(frame: pd.DataFrame, functions: Mapping[str, Callable[[pd.Series], pd.Series]],
                   schema: Schema, label: str, relabel: tuple[str, ...] = ()) -> Any:
    """One typed input partition with each column of ``functions`` replaced by ``function(column)``
    and typed as :func:`prepare_tables` types it under ``schema`` (the other columns as they are),
    then the labels of the ``relabel`` columns written as strings (mixing numbers and strings in
    the first labels of the changed tables)."""
    if isinstance(frame, BadPartition):
        return frame
    out = frame.copy(deep=False)
    for c, function in functions.items():  # loop over the replaced columns
        new = function(frame[c])
        # as a Series of its own dtype: an object column stays objects (None stays None; pandas 3
        # would read an array of strings as its string dtype)
        out[c] = pd.Series(new.to_numpy(), index=out.index, dtype=new.dtype, name=c)
    cols = list(functions)
    try:
        typed = _coerce(out[cols], schema.restrict(cols), label)
    except InputError as exc:
        return BadPartition(str(exc))
    for c in cols:
        out[c] = typed[c]
    for c in relabel:
        out[c] = canonical_labels(out[c])
    return out


def with_columns(dt: DistTables, functions: Mapping[str, Callable[[pd.Series], pd.Series]],
                 schema: Schema) -> DistTables:
    """``dt`` with each column of ``functions`` replaced, in every table, by
    ``function(values)`` (a function of one column's values whose value for a row depends on that
    row alone, such as :meth:`~synthguard.data.coarsening.ColumnCoarsening.apply`), typed by ``schema``
    (the new sdtypes), as a new evaluation of the changed tables would read them, without gathering
    any table: each input partition changed on the cluster, every table put in canonical order
    again (:func:`canonicalise_all`: the rows' content changed) and the vocabularies learnt again in
    one process's order (original, synthetic, control). The row numbers stay those of ``dt``'s
    input rows; the partitions keep their rows.

    One process prepares the changed tables again (:func:`prepare_tables` on them, in ``dt``'s
    canonical order); two of its checks can decide otherwise than they did on ``dt``, and are run
    again in the same pass over the partitions as the canonical order (:mod:`._recheck`): the
    labels mixing numbers and strings among each table's first 1,000 (``dt``'s canonical order
    is not its input order; those columns are then written as strings in every table, and the
    tables canonicalised once more), and the control check (a coarsened column can make rows
    equal: a control holding the original's or the release's rows stops the tables with one
    process's :class:`~synthguard.errors.InputError`; its warnings are not kept, as one process's
    re-test does not keep them). The others cannot change anything: the replaced values are
    typed as ``schema`` says (:func:`_with_replaced`, as one process types them) and the other
    columns are ``dt``'s, already prepared: their whitespace stripped, dates parsed, ``inf``
    read as missing, and the identifiers and row numbers decided on their values in any order
    (not a function of the rows' order, nor of the replaced column); a replaced column holds a
    value in a table when the column did (the mapping keeps missing values missing).

    Parameters
    ----------
    dt : DistTables
        Canonicalised partitioned tables (:func:`load_tables`, :func:`without_rows`).
    functions : mapping
        Column -> the function giving its new values (it must pickle: it runs on the workers).
    schema : Schema
        The tables' schema with the replaced columns' new specs.

    Returns
    -------
    DistTables
        The changed tables on the same client.

    Raises
    ------
    InputError
        A control holding the original's or the release's rows once the columns are replaced.
    """
    from dask import delayed

    replace_part = delayed(_with_replaced, pure=True)
    funcs = dict(functions)

    def changed(relabel: tuple[str, ...]) -> dict[str, DistTable]:
        out: dict[str, DistTable] = {}
        for role, table in dt.tables.items():
            if table.input_parts is None:
                raise RuntimeError("with_columns: the table has no input partitions (not canonicalised)")
            parts = [replace_part(p, funcs, schema, table.label, relabel) for p in table.input_parts]
            out[role] = DistTable(role, table.label, parts, table.lengths.copy())
        return out

    tables = changed(())
    categorical = tuple(c for c in schema.tabular_columns() if not schema.columns[c].is_numeric)
    control = control_columns(sorted(schema.columns), schema) if dt.has_control else None
    labelled = tuple(schema.of_type("categorical", "id", "boolean"))
    canons = canonicalise_all(tables, dt.client, categorical, control=control,
                              label_order={r: t.ranks for r, t in dt.tables.items()}, labels=labelled)
    kinds = {r: kinds_in_order(canons[r].first_labels or [], labelled, LABEL_SAMPLE) for r in tables}
    relabel = tuple(c for c in labelled if len(set().union(*(k[c] for k in kinds.values()))) > 1)
    if relabel:  # 1 in one place, "1" in another among the first labels: as strings, then again
        tables = changed(relabel)
        canons = canonicalise_all(tables, dt.client, categorical, control=control)
    check_control_of({r: c.control_hashes for r, c in canons.items()}, dt.labels, strict=True)
    firsts = {role: canons[role].first_values for role in ROLES if role in tables}
    encoder, future = _learnt_encoder(schema, firsts)
    # the changed partitions are ``dt``'s input partitions: their input rows are ``dt``'s (of a
    # sampled table, the partitions' rows: named by the input rows through ``dt``'s numbers)
    row_numbers = {role: np.asarray(canons[role].row_numbers, dtype=np.int64) for role in tables}
    part_rows = {}
    for role, parts_at in dt.part_rows.items():
        named = np.empty(len(parts_at), dtype=np.int64)  # input row of each partition row
        named[np.asarray(parts_at, dtype=np.int64)] = np.asarray(dt.row_numbers[role], dtype=np.int64)
        part_rows[role] = row_numbers[role]
        row_numbers[role] = named[row_numbers[role]]
    return DistTables(tables, schema, dt.client, encoder, future, dict(dt.fingerprints),
                      release_type=dt.release_type, row_numbers=row_numbers, first_values=firsts,
                      part_rows=part_rows, notes=dict(dt.notes), warnings=dt.warnings,
                      whole=dict(dt.whole), whole_columns=dt.whole_columns)
