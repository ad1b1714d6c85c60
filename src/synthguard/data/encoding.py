"""The encoded view shared by every metric: numeric matrices, categorical codes, exact-row identities.

Numerical and datetime columns become float64 (datetimes in days since 1970-01-01, NaN kept; on
request, ``exact_datetimes=True``, in seconds since the evaluation's earliest second instead, so that
differences and ranges of whole-second data are exact: a second is not a finite binary fraction of a
day).
Categorical and boolean columns become int64 codes from one vocabulary per column, shared by every
table of an evaluation (and by any extra frame encoded later), so equal values get equal codes in
every table; a missing value gets the code ``-1`` (equal to other missing values, unequal to the rest).
No metric encodes columns itself: they all ask an :class:`EncodedView` (or an :class:`Encoder`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .hashing import CHAINS, float_codes, splitmix
from .schema import Schema, numeric_view
from .tables import Tables

NAN_CODE = -1


@dataclass(frozen=True)
class Block:
    """Rows of one table in encoded form.

    Attributes
    ----------
    num : ndarray, shape (n, p)
        float64 values of the numeric columns (NaN = missing).
    cat : ndarray, shape (n, q)
        int64 codes of the categorical columns (``-1`` = missing).
    num_columns, cat_columns : tuple of str
        Column names, in matrix order.
    """

    num: np.ndarray
    cat: np.ndarray
    num_columns: tuple[str, ...]
    cat_columns: tuple[str, ...]

    @property
    def n_rows(self) -> int:
        return int(self.num.shape[0])

    @property
    def columns(self) -> tuple[str, ...]:
        return self.num_columns + self.cat_columns

    def take(self, rows: np.ndarray) -> Block:
        """The block restricted to ``rows`` (positions)."""
        rows = np.asarray(rows)
        return Block(np.ascontiguousarray(self.num[rows]), np.ascontiguousarray(self.cat[rows]),
                     self.num_columns, self.cat_columns)

    @staticmethod
    def stack(blocks: Sequence[Block]) -> Block:
        """Blocks of the same columns, one under the other, in order (a fresh copy, even of one).

        Examples
        --------
        >>> a = Block(np.array([[1.0]]), np.array([[0]]), ("x",), ("c",))
        >>> b = Block(np.array([[2.0], [3.0]]), np.array([[1], [0]]), ("x",), ("c",))
        >>> Block.stack([a, b]).num.ravel().tolist(), Block.stack([a, b]).cat.ravel().tolist()
        ([1.0, 2.0, 3.0], [0, 1, 0])
        """
        return Block(np.concatenate([b.num for b in blocks], axis=0), np.concatenate([b.cat for b in blocks], axis=0),
                     blocks[0].num_columns, blocks[0].cat_columns)

    def select(self, columns: Sequence[str]) -> Block:
        """The block restricted to ``columns`` (kept in the order given, by kind)."""
        num = [self.num_columns.index(c) for c in columns if c in self.num_columns]
        cat = [self.cat_columns.index(c) for c in columns if c in self.cat_columns]
        return Block(np.ascontiguousarray(self.num[:, num]), np.ascontiguousarray(self.cat[:, cat]),
                     tuple(self.num_columns[i] for i in num), tuple(self.cat_columns[i] for i in cat))


class Encoder:
    """Turns frames into :class:`Block` s with vocabularies shared across every frame it sees.

    Parameters
    ----------
    schema : Schema
        Decides which columns are numeric (numerical, datetime) and which are categorical (the rest).
    """

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self._vocab: dict[str, dict[object, int]] = {}
        self._frozen = False
        #: whole seconds since 1970 subtracted from a datetime column encoded with ``exact_datetimes``
        self.datetime_origins: dict[str, int] = {}

    def freeze(self) -> Encoder:
        """Stop learning: a value outside a vocabulary then raises instead of getting a new code.

        Used when the vocabularies were computed once over every partition of a distributed table
        (:mod:`synthguard.distributed`) and copies of this encoder code the partitions independently:
        a code appended by one copy would differ from another's.
        """
        self._frozen = True
        return self

    def is_numeric(self, column: str) -> bool:
        return self.schema.columns[column].is_numeric

    def learn(self, frame: pd.DataFrame, columns: Iterable[str] | None = None, *,
              once: bool = False) -> None:
        """Add the values of ``frame`` to the vocabularies (in order of first appearance).

        ``once=True``: skip the columns of this very frame object learnt before with ``once=True``
        (their values are in the vocabularies already, so learning them again changes nothing); for
        a run's own tables, which do not change during the run. Copies of the encoder and pickles do
        not keep this record.
        """
        cols = list(columns) if columns is not None else list(frame.columns)
        if once:
            seen = self._held(frame)
            if seen is None:  # the frame is held: its id cannot be reused
                seen = self.__dict__.setdefault("_learnt", {})[id(frame)] = (frame, set(), {})
            todo = [c for c in cols if c not in seen[1]]
        else:
            todo = cols
        held = self._held(frame) is not None
        for col in todo:  # factorised (kept for a held frame), no row's code gathered
            if held:
                self._factor(frame, col)
            else:
                self._factorize(frame[col])
        if once:
            seen[1].update(todo)

    def _held(self, frame: pd.DataFrame) -> tuple[pd.DataFrame, set[str], dict] | None:
        """The record of a frame learnt with ``once=True`` (the frame, its columns learnt, its
        columns' codes as factorised: :meth:`_frame_codes`), ``None`` for any other frame."""
        seen = self.__dict__.get("_learnt", {}).get(id(frame))
        return seen if seen is not None and seen[0] is frame else None

    def _frame_codes(self, frame: pd.DataFrame, column: str) -> np.ndarray:
        """:meth:`codes` of ``frame[column]``; for a frame learnt with ``once=True`` (a run's own
        table, unchanged during the run) its factorisation and codes are kept (the factor of each row
        in the narrowest integer type), so a column is factorised once however many blocks and row
        identities encode it: a code, once given, never changes."""
        if self._held(frame) is None:
            return self.codes(frame[column])
        factor, lookup = self._factor(frame, column)
        return lookup[factor]

    def _factor(self, frame: pd.DataFrame, column: str) -> tuple[np.ndarray, np.ndarray]:
        """The factorisation ``(factor, lookup)`` kept for ``frame[column]``, ``frame`` learnt with
        ``once=True`` (factorised here the first time; its codes are ``lookup[factor]``)."""
        held = self._held(frame)
        assert held is not None
        if column not in held[2]:
            values, lookup = self._factorize(frame[column])
            narrow = next(t for t in (np.int8, np.int16, np.int32, np.int64)
                          if lookup.size <= np.iinfo(t).max)
            held[2][column] = (values.astype(narrow), lookup)
        return held[2][column]

    def fill_codes(self, frame: pd.DataFrame, columns: Sequence[str], out: np.ndarray) -> np.ndarray:
        """Write the exact-value codes of ``columns`` of ``frame`` (:meth:`codes`, numeric columns
        by exact value too) into ``out`` (rows x columns, int64) and return it: for a frame learnt
        with ``once=True``, from its kept factorisations a row block at a time (each block's rows
        written whole, not one strided column after another); else a column at a time.

        Examples
        --------
        >>> from synthguard.data.schema import infer_schema
        >>> df = pd.DataFrame({"c": ["x", "y", "x"], "n": [1.5, None, 1.5]})
        >>> enc = Encoder(infer_schema(df))
        >>> enc.learn(df, once=True)
        >>> enc.fill_codes(df, ["n", "c"], np.empty((3, 2), dtype=np.int64)).tolist()
        [[0, 0], [-1, 1], [0, 0]]
        """
        if self._held(frame) is None:
            for j, c in enumerate(columns):
                out[:, j] = self.codes(frame[c])
            return out
        kept = [self._factor(frame, c) for c in columns]
        step = 1 << 16
        for s in range(0, len(frame), step):  # loop over row blocks, vectorised over cells
            block = out[s:s + step]
            for j, (factor, lookup) in enumerate(kept):
                block[:, j] = lookup[factor[s:s + step]]
        return out

    def distinct_codes(self, frames: Sequence[pd.DataFrame], columns: Sequence[str]) -> np.ndarray:
        """Per column, the number of distinct codes in ``frames`` together, read from the
        vocabularies (each value once) plus the missing code when a frame holds a missing value. The
        vocabularies of ``columns`` must have been learnt from ``frames`` alone (every value of a
        vocabulary in one of them), and each frame learnt with ``once=True``.

        Examples
        --------
        >>> from synthguard.data.schema import infer_schema
        >>> a = pd.DataFrame({"c": ["x", "y", "x"], "n": [1.5, None, 1.5]})
        >>> b = pd.DataFrame({"c": ["z", "x", "x"], "n": [2.0, 1.5, 1.5]})
        >>> enc = Encoder(infer_schema(a))
        >>> for f in (a, b):
        ...     enc.learn(f, once=True)
        >>> enc.distinct_codes([a, b], ["c", "n"]).tolist()
        [3, 3]
        """
        out = np.zeros(len(columns), dtype=np.int64)
        for j, c in enumerate(columns):  # loop over columns and frames: a min over each factor
            missing = any(int(self._factor(f, c)[0].min(initial=0)) < 0 for f in frames)
            out[j] = len(self._vocab.get(c, {})) + missing
        return out

    def kept_codes(self, frame: pd.DataFrame, column: str, rows: np.ndarray | slice
                   ) -> np.ndarray | None:
        """The codes of ``frame[column]`` at ``rows`` from the factorisation kept for a frame
        learnt with ``once=True`` (:meth:`_frame_codes`: no value looked up again), ``None`` when
        none is kept for that frame and column.

        Examples
        --------
        >>> from synthguard.data.schema import infer_schema
        >>> df = pd.DataFrame({"c": ["x", "y", "x", "z"]})
        >>> enc = Encoder(infer_schema(df))
        >>> enc.learn(df, once=True)
        >>> enc.kept_codes(df, "c", np.array([3, 0])).tolist(), enc.kept_codes(df.copy(), "c", slice(0, 2))
        ([2, 0], None)
        """
        held = self._held(frame)
        got = None if held is None else held[2].get(column)
        return None if got is None else got[1][got[0][rows]]

    def _factorize(self, series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
        """``(factor, lookup)``: the factor of each value (``-1`` missing) and the code of each
        factor (new values appended to the vocabulary), ``NAN_CODE`` last: the codes are
        ``lookup[factor]``."""
        vocab = self._vocab.setdefault(str(series.name), {})
        values, uniques = pd.factorize(series, use_na_sentinel=True)
        lookup = np.empty(len(uniques) + 1, dtype=np.int64)
        lookup[-1] = NAN_CODE
        for i, u in enumerate(uniques.tolist()):  # loop over distinct values, not rows
            key = _key(u)
            code = vocab.get(key)
            if code is None:
                if self._frozen:
                    raise ValueError(f"column {series.name!r}: value {u!r} is not in the vocabulary "
                                     "learnt from every partition (was a table changed during the run?)")
                code = len(vocab)
                vocab[key] = code
            lookup[i] = code
        return values, lookup

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_learnt", None)  # frames learnt once: a copy or a pickle starts a record of its own
        return state

    def codes_alike(self, other: Encoder, column: str) -> bool:
        """Whether ``other`` encodes ``column`` as this encoder does: the same type, vocabulary
        (every value under the same code) and datetime origin.

        Examples
        --------
        >>> import pandas as pd
        >>> from synthguard.data.schema import infer_schema
        >>> schema = infer_schema(pd.DataFrame({"c": ["x", "y"]}), {"columns": {"c": {"sdtype": "categorical"}}})
        >>> a, b = Encoder(schema), Encoder(schema)
        >>> _ = a.codes(pd.Series(["x", "y"], name="c")); _ = b.codes(pd.Series(["y", "x"], name="c"))
        >>> a.codes_alike(b, "c"), a.codes_alike(a, "c")
        (False, True)
        """
        return self.schema.columns.get(column) == other.schema.columns.get(column) \
            and self._vocab.get(column) == other._vocab.get(column) \
            and self.datetime_origins.get(column) == other.datetime_origins.get(column)

    def labels(self, column: str) -> list[object]:
        """The values of ``column``'s vocabulary, indexed by code (``labels(c)[code]``)."""
        return list(self._vocab.get(column, {}))

    def code_of(self, column: str, value: object) -> int | None:
        """The code of ``value`` in ``column``'s vocabulary (``None`` when never seen)."""
        return self._vocab.get(column, {}).get(_key(value))

    def codes(self, series: pd.Series) -> np.ndarray:
        """int64 codes of a column under its shared vocabulary (new values are appended)."""
        values, lookup = self._factorize(series)
        return lookup[values]

    def encode(self, frame: pd.DataFrame, columns: Sequence[str] | None = None, *,
               categorical_only: bool = False, exact_datetimes: bool = False) -> Block:
        """Encode ``columns`` of ``frame`` (default: every tabular column of the schema).

        With ``categorical_only=True`` numeric columns are coded by exact value too (Hamming distance).
        With ``exact_datetimes=True`` datetime columns are seconds since ``datetime_origins[column]``
        (:func:`exact_seconds`) instead of days since 1970.
        """
        cols = list(columns) if columns is not None else self.schema.tabular_columns()
        num_cols = [c for c in cols if self.is_numeric(c) and not categorical_only]
        cat_cols = [c for c in cols if c not in num_cols]
        n = len(frame)
        num = np.empty((n, len(num_cols)), dtype=np.float64)
        for j, c in enumerate(num_cols):
            if exact_datetimes and pd.api.types.is_datetime64_any_dtype(frame[c].dtype):
                num[:, j] = exact_seconds(frame[c], self.datetime_origins.get(c, 0))
            else:
                num[:, j] = numeric_view(frame[c])
        cat = self.fill_codes(frame, cat_cols, np.empty((n, len(cat_cols)), dtype=np.int64))
        return Block(num, cat, tuple(num_cols), tuple(cat_cols))


def exact_seconds(series: pd.Series, origin: int = 0) -> np.ndarray:
    """Float64 seconds of a datetime64 column since ``origin`` (whole seconds since 1970); NaT -> NaN.

    The whole seconds are subtracted as integers and the sub-second part added once, so a
    whole-second value is exact (|value| < 2**53 s) and so are differences and ranges of
    whole-second data; other values are within half a unit in the last place. Days since 1970
    (:func:`~synthguard.data.schema.numeric_view`) cannot hold a second exactly.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.Series(pd.to_datetime(["2025-01-01 00:00:20", "2025-01-01 00:00:25", None]))
    >>> exact_seconds(t, origin=int(pd.Timestamp("2025-01-01").timestamp())).tolist()
    [20.0, 25.0, nan]
    """
    ns, missing = _epoch_ns(series)
    whole, frac = np.divmod(ns, np.int64(1_000_000_000))
    out = (whole - np.int64(origin)).astype(np.float64) + frac / 1e9
    out[missing] = np.nan
    return out


def _epoch_ns(series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """int64 nanoseconds since 1970 of a datetime64 column (UTC when time-zone aware) and the
    missing mask."""
    s = series
    if getattr(s.dt, "tz", None) is not None:
        s = s.dt.tz_convert("UTC").dt.tz_localize(None)
    return s.astype("datetime64[ns]").to_numpy().astype("int64"), s.isna().to_numpy()


def _key(value: object) -> object:
    if isinstance(value, (np.generic,)):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)  # 1 and 1.0 are the same category
    return value


class EncodedView:
    """The cached encoded form of one evaluation's tables.

    Vocabularies are learnt from original, synthetic, control in that order, so codes do not depend
    on which metric asks first.
    """

    def __init__(self, tables: Tables) -> None:
        self.tables = tables
        self.schema = tables.schema
        self.encoder = Encoder(tables.schema)
        categorical = [c for c in self.schema.tabular_columns() if not self.encoder.is_numeric(c)]
        for role in tables.roles:
            self.encoder.learn(tables.get(role), categorical, once=True)
        self._blocks: dict[tuple[str, tuple[str, ...], bool, bool], Block] = {}
        self._lock = threading.RLock()  # metrics running in threads share one block per key
        self._origins_set = False

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_lock", None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()

    def block(self, role: str, columns: Sequence[str] | None = None, *,
              categorical_only: bool = False, exact_datetimes: bool = False) -> Block:
        """Encoded rows of ``role`` (``"original"``, ``"synthetic"`` or ``"control"``).

        ``exact_datetimes``: datetime columns in seconds since the earliest whole second of the
        column over every table of the evaluation (exact for whole-second data), not in days.
        The same rows and columns in days and in seconds share one categorical code matrix (the
        same codes; blocks are read, never written).

        Examples
        --------
        >>> import pandas as pd
        >>> from synthguard.data.tables import prepare_tables
        >>> t = pd.DataFrame({"when": pd.to_datetime(["2025-01-01", "2025-01-02"]), "g": ["a", "b"]})
        >>> view = EncodedView(prepare_tables(t, t))
        >>> days, seconds = view.block("original"), view.block("original", exact_datetimes=True)
        >>> days.num[:, 0].tolist(), seconds.num[:, 0].tolist(), seconds.cat is days.cat
        ([20089.0, 20090.0], [0.0, 86400.0], True)
        """
        cols = tuple(columns) if columns is not None else tuple(self.schema.tabular_columns())
        key = (role, cols, categorical_only, exact_datetimes)
        with self._lock:
            if key not in self._blocks:
                if exact_datetimes:
                    self._set_origins()
                twin = None if categorical_only else self._blocks.get((role, cols, False, not exact_datetimes))
                if twin is not None:  # only the numeric columns differ (datetimes in days or seconds)
                    num = self.encoder.encode(self.tables.get(role), twin.num_columns,
                                              exact_datetimes=exact_datetimes)
                    self._blocks[key] = Block(num.num, twin.cat, twin.num_columns, twin.cat_columns)
                else:
                    self._blocks[key] = self.encoder.encode(self.tables.get(role), cols,
                                                            categorical_only=categorical_only,
                                                            exact_datetimes=exact_datetimes)
            return self._blocks[key]

    def bounds(self, role: str) -> tuple[np.ndarray, np.ndarray]:
        """:func:`value_bounds` of :meth:`block` ``(role)`` (every row, every numeric column of the
        tabular block, in its order): computed once per role and kept (read-only arrays), for the
        tests that ask the bounds of whole tables again and again.

        Examples
        --------
        >>> import pandas as pd
        >>> from synthguard.data.tables import prepare_tables
        >>> view = EncodedView(prepare_tables(pd.DataFrame({"x": [1.0, 4.0]}), pd.DataFrame({"x": [3.0]})))
        >>> lo, hi = view.bounds("original")
        >>> lo.tolist(), hi.tolist(), view.bounds("original")[0] is lo
        ([1.0], [4.0], True)
        """
        memo = self.__dict__.setdefault("_bounds", {})
        got = memo.get(role)
        if got is None:
            lo, hi = value_bounds(self.block(role))
            lo.flags.writeable = hi.flags.writeable = False
            got = memo.setdefault(role, (lo, hi))
        return got

    def cached_block(self, role: str, columns: Sequence[str] | None = None, *,
                     categorical_only: bool = False, exact_datetimes: bool = False) -> Block | None:
        """The block :meth:`block` would return when this view already holds it, else ``None``
        (nothing is encoded or kept: a caller that needs a block's rows only once can encode
        them a row block at a time with :meth:`encode`).

        Examples
        --------
        >>> import pandas as pd
        >>> from synthguard.data.tables import prepare_tables
        >>> view = EncodedView(prepare_tables(pd.DataFrame({"x": [1.0, 2.0]}), pd.DataFrame({"x": [3.0]})))
        >>> view.cached_block("original") is None
        True
        >>> block = view.block("original")
        >>> view.cached_block("original") is block, view.cached_block("original", exact_datetimes=True)
        (True, None)
        """
        cols = tuple(columns) if columns is not None else tuple(self.schema.tabular_columns())
        with self._lock:
            return self._blocks.get((role, cols, categorical_only, exact_datetimes))

    def forget_blocks(self) -> None:
        """Empty the block cache (its run is over): a block asked for later is encoded again, the
        same bytes (the vocabularies, the datetime origins and the factorised columns are kept).

        Examples
        --------
        >>> import pandas as pd
        >>> from synthguard.data.tables import prepare_tables
        >>> view = EncodedView(prepare_tables(pd.DataFrame({"x": [1.0, 2.0]}), pd.DataFrame({"x": [3.0]})))
        >>> before = view.block("original").num.copy()
        >>> view.forget_blocks()
        >>> bool((view.block("original").num == before).all())
        True
        """
        with self._lock:
            self._blocks.clear()

    def encode(self, frame: pd.DataFrame, columns: Sequence[str] | None = None, *,
               categorical_only: bool = False, exact_datetimes: bool = False) -> Block:
        """Encode an extra frame (a random baseline, a shadow dataset) with the same vocabularies
        (and, with ``exact_datetimes``, the same datetime origins as :meth:`block`)."""
        if exact_datetimes:
            with self._lock:
                self._set_origins()
        return self.encoder.encode(frame, columns, categorical_only=categorical_only,
                                   exact_datetimes=exact_datetimes)

    def ranges(self, columns: Sequence[str], roles: Sequence[str] = ("original",), *,
               exact_datetimes: bool = False) -> np.ndarray:
        """``max - min`` of each numeric column over ``roles`` (NaN skipped; 0 if constant or empty)."""
        blocks = [self.block(r, columns, exact_datetimes=exact_datetimes) for r in roles]
        return value_ranges(*blocks)

    def _set_origins(self) -> None:
        """The earliest whole second (since 1970) of each datetime column over every table, once
        (does not depend on row order; 0 for a column without a value)."""
        if self._origins_set:
            return
        for col, spec in self.schema.columns.items():
            if spec.sdtype != "datetime":
                continue
            lows = []
            for role in self.tables.roles:
                frame = self.tables.get(role)
                if col in frame.columns and pd.api.types.is_datetime64_any_dtype(frame[col].dtype):
                    ns, missing = _epoch_ns(frame[col])
                    if not missing.all():
                        lows.append(int(ns[~missing].min()) // 1_000_000_000)
            self.encoder.datetime_origins[col] = min(lows) if lows else 0
        self._origins_set = True

    def row_ids(self, columns: Sequence[str] | None = None,
                roles: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        """Exact-row identities: equal rows (on ``columns``) get equal ids in every role."""
        roles = tuple(roles) if roles is not None else self.tables.roles
        cols = tuple(columns) if columns is not None else tuple(self.schema.tabular_columns())
        # encoded for this call only (not kept in the block cache: at 1 M rows these blocks hold
        # hundreds of MB that nothing else reads; callers memoise the ids)
        blocks = [self.encoder.encode(self.tables.get(r), cols, categorical_only=True) for r in roles]
        ids = row_identities(*blocks)
        del blocks
        return dict(zip(roles, ids, strict=True))


def value_ranges(*blocks: Block) -> np.ndarray:
    """Per numeric column ``max - min`` over all ``blocks`` (NaN skipped; 0 when undefined)."""
    if not blocks or blocks[0].num.shape[1] == 0:
        return np.zeros(0)
    return ranges_from_bounds(*value_bounds(*blocks))


def value_bounds(*blocks: Block, rows: Sequence[np.ndarray | None] | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Per numeric column ``(min, max)`` over all ``blocks`` (with ``rows``: each block's rows
    at those positions, ``None`` = every row), NaN skipped (``+inf, -inf`` when a column has no
    value). Bounds of parts combine by ``minimum`` / ``maximum`` (partitioned tables).

    Each block is reduced where it lies (``fmin``/``fmax`` skip NaN): no stacked copy of the
    tables and no masked copies of it (at 1 M rows those were 2.6 GB of fresh pages a run).

    Examples
    --------
    >>> b = Block(np.array([[1.0, np.nan], [3.0, np.nan]]), np.zeros((2, 0), np.int64), ["a", "b"], [])
    >>> lo, hi = value_bounds(b, b, rows=[np.array([1]), None])
    >>> lo.tolist(), hi.tolist()
    ([1.0, inf], [3.0, -inf])
    """
    p = blocks[0].num.shape[1] if blocks else 0
    if p == 0:
        return np.zeros(0), np.zeros(0)
    lo, hi = np.full(p, np.inf), np.full(p, -np.inf)
    for b, at in zip(blocks, rows if rows is not None else [None] * len(blocks), strict=True):
        num = b.num if at is None else b.num[np.asarray(at, dtype=np.int64)]  # loop over tables
        if num.shape[0]:
            lo = np.fmin(lo, np.fmin.reduce(num, axis=0))
            hi = np.fmax(hi, np.fmax.reduce(num, axis=0))
    lo[np.isnan(lo)] = np.inf  # a column without a value
    hi[np.isnan(hi)] = -np.inf
    return lo, hi


def ranges_from_bounds(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``max - min`` from :func:`value_bounds` (0 where undefined: constant or empty columns)."""
    with np.errstate(all="ignore"):
        r = np.asarray(hi, dtype=np.float64) - np.asarray(lo, dtype=np.float64)
    r[~np.isfinite(r)] = 0.0
    return r


def row_hash128(block: Block, extra: np.ndarray | None = None) -> np.ndarray:
    """A 128-bit content hash of every row of ``block`` (encoded with ``categorical_only=False``):
    ``(n, 2)`` uint64 from two independently seeded 64-bit hash chains over the row's categorical
    codes and numeric bit patterns (``-0.0`` folded into ``0.0``, every NaN equal), plus the int64
    columns of ``extra`` (e.g. 128-bit hashes of text values, two columns per text column).

    Each chain folds one column at a time into its state and scrambles it with the splitmix64
    finaliser (a bijection of 64-bit words), vectorised over rows. Equal rows get equal hashes in
    every table encoded with the same vocabularies; two different rows collide in both chains with
    probability about ``2**-128`` (among 10**8 rows: about 10**-23), so exact-row joins over
    partitions (:mod:`synthguard.distributed`) can use the pair as the row's identity. Rows hashed on
    many column sets (masked rows) use the cell hashes of :mod:`synthguard.data.hashing` instead,
    from the same chains: each cell hashed once, a row's hash on a set the sum of its cells'.
    """
    parts = [block.cat, _num_codes(block)]
    if extra is not None:
        extra = np.asarray(extra, dtype=np.int64)
        # already (n, k): kept as is (reshape(0, -1) cannot tell k for a partition without rows)
        parts.append(extra if extra.ndim == 2 else extra.reshape(block.n_rows, -1))
    codes = np.ascontiguousarray(np.concatenate(parts, axis=1)).view(np.uint64)
    out = np.empty((block.n_rows, 2), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for k, (seed, mult) in enumerate(CHAINS):
            h = np.full(block.n_rows, seed, dtype=np.uint64)
            for j in range(codes.shape[1]):  # loop over columns, vectorised over rows
                h ^= codes[:, j] * mult + np.uint64(j + 1)
                h = splitmix(h)
            out[:, k] = h
    return out


def text_hash128(values: pd.Series) -> np.ndarray:
    """``(n, 2)`` int64: two independently keyed SipHash-2-4 hashes of each value's text (missing
    values share one pair), to feed free-text columns into :func:`row_hash128` without a vocabulary."""
    missing = values.isna().to_numpy()
    text = values.astype(object).where(~missing, "").astype(str).to_numpy(dtype=object)
    out = np.empty((len(values), 2), dtype=np.int64)
    for k, key in enumerate(("sg-text-hash-one", "sg-text-identity")):
        h = pd.util.hash_array(text, hash_key=key).view(np.int64).copy()
        h[missing] = np.int64(np.iinfo(np.int64).min) + k
        out[:, k] = h
    return out


def row_identities(*blocks: Block) -> list[np.ndarray]:
    """Exact-row ids across blocks encoded with ``categorical_only=True`` (hash-free, collision-free).

    Rows are equal when every code is equal (missing equals missing). Ids are dense ints, numbered
    in the order the distinct rows first appear (the blocks one after the other).

    The columns' codes are packed side by side into one int64 key per row (a column of narrow code
    range as its offset from the smallest code, any other by its dense codes), and the key is
    renumbered densely only when the next column would overflow it and once at the end: every step
    is vectorised over rows, and the ids are the same as renumbering after every column.

    Examples
    --------
    >>> b = Block(np.zeros((3, 0)), np.array([[1, 7], [1, 8], [1, 7]]), (), ("a", "b"))
    >>> [ids.tolist() for ids in row_identities(b, b)]
    [[0, 1, 0], [0, 1, 0]]
    """
    sizes = [b.n_rows for b in blocks]
    codes = _stacked_codes(blocks)
    n = codes.shape[0]
    ids = np.zeros(n, dtype=np.int64)
    if n and codes.shape[1]:
        lows, highs = codes.min(axis=0), codes.max(axis=0)
        width = 1  # the key takes values in [0, width)
        for j in range(codes.shape[1]):  # loop over columns; each step is vectorised over rows
            col = codes[:, j]
            lo = int(lows[j])
            span = int(highs[j]) - lo + 1
            if span <= n:
                col = col - lo
            else:  # a wide range (e.g. numeric bits): the column's dense codes
                col, uniques = pd.factorize(col)
                span = len(uniques)
            if width * span >= _KEY_LIMIT:
                ids, uniques = pd.factorize(ids)
                width = len(uniques)
            ids = ids * span + col
            width *= span
        ids = pd.factorize(ids)[0].astype(np.int64, copy=False)
    out, start = [], 0
    for s in sizes:
        out.append(ids[start:start + s])
        start += s
    return out


def _stacked_codes(blocks: Sequence[Block]) -> np.ndarray:
    """Every block's categorical codes and numeric bit codes (:func:`_num_codes`) side by side, the
    blocks one under the other, in column-major order: :func:`row_identities` reads a column at a
    time, which in a row-major array of 10 million rows is a strided read per value."""
    n = sum(b.n_rows for b in blocks)
    widths = {(b.cat.shape[1], b.num.shape[1]) for b in blocks}
    n_cat, n_num = widths.pop() if len(widths) == 1 else (None, None)
    if n_cat is None:
        raise ValueError(f"row_identities: blocks of different widths {sorted(widths)}")
    codes = np.empty((n, n_cat + n_num), dtype=np.int64, order="F")
    start = 0
    for b in blocks:  # loop over blocks and columns; each copy is vectorised over rows
        stop = start + b.n_rows
        codes[start:stop, :n_cat] = b.cat
        for j in range(n_num):
            codes[start:stop, n_cat + j] = float_codes(b.num[:, j])
        start = stop
    return codes


#: Bound on the packed row keys of :func:`row_identities` (int64 without overflow)
_KEY_LIMIT = 2 ** 62


def _num_codes(block: Block) -> np.ndarray:
    """int64 codes of the numeric cells by their bits (:func:`~synthguard.data.hashing.float_codes`)."""
    if block.num.shape[1] == 0:
        return np.zeros((block.n_rows, 0), dtype=np.int64)
    out = np.empty(block.num.shape, dtype=np.int64)
    for j in range(block.num.shape[1]):  # loop over columns
        out[:, j] = float_codes(block.num[:, j])
    return out
