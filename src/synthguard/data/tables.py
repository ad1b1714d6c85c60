"""The validated inputs of one evaluation: original, synthetic, optional control, and their schema."""

from __future__ import annotations

import decimal
import hashlib
import unicodedata
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from .coltypes import canonical_labels, decide_types, declared_sdtypes
from .dates import parse_datetime_columns
from .hashing import row_hashes
from .loading import TableLike, is_text_file, load_metadata, load_table
from .notes import boolean_note
from .quirks import (
    check_control,
    control_columns,
    declared_id_warnings,
    detect_row_numbers,
    detect_surrogate_ids,
    disjoint_categories,
    infinities_to_missing,
    strip_whitespace,
    type_notices,
)
from .schema import (
    BOOLEAN_VALUES,
    ColumnSpec,
    Schema,
    infer_schema,
    metadata_warnings,
    nfc_metadata,
)
from .spellings import spelling_warnings
from .threads import map_threads

ROLES = ("original", "synthetic", "control")


@dataclass(frozen=True)
class Tables:
    """Validated, type-coerced private copies of the inputs.

    Attributes
    ----------
    original, synthetic : DataFrame
        Training rows and the release. Columns are in the original's order.
    control : DataFrame or None
        Real rows held out from training.
    schema : Schema
        sdtypes and roles.
    labels : mapping
        Role -> file path or ``"<role> DataFrame"``, for messages.
    fingerprints : mapping
        Role -> ``{"rows", "columns", "sha256"}``.
    warnings : tuple of str
        What the data made questionable (infinite values read as missing, surrogate identifiers,
        disjoint categories, a control overlapping the original); the report lists them.
    notes : mapping
        Column -> how its values were normalised (whitespace, boolean spellings, date format);
        reported under ``inferred_metadata``.
    row_numbers : mapping
        Empty for tables in input order. After :meth:`in_canonical_order`: role -> the input row
        number (0-based) of each row; row numbers in a report's ``records`` are mapped back to the
        input rows with it (:func:`input_row_records`).
    original_stats : OriginalStats, optional
        The original's statistics (``synthguard profile``) when its rows are not given; then
        ``original`` is ``None`` and only metrics that run from statistics run.
    row_hashes : mapping
        Role -> ``(frame, columns, hashes)``: the content hashes (:func:`~.hashing.row_hashes`) of
        that very frame object on ``columns``, when :func:`prepare_tables` computed them (the
        control check), so that :meth:`in_canonical_order` does not hash the same rows again. Read
        only while the role's frame is that object (a table replaced by another frame ignores
        them); empty after :meth:`in_canonical_order`.
    whole_columns : mapping
        A sampled run's tables (:func:`~synthguard.run.sample.draw_sample`): role -> the columns of
        that whole table (before sampling) that could read as an identifier
        (:func:`~.quirks.identifier_candidates`), so that the re-test of the release without some
        rows types it as a new evaluation of the whole tables would. Empty otherwise.
    """

    original: pd.DataFrame
    synthetic: pd.DataFrame
    control: pd.DataFrame | None
    schema: Schema
    labels: Mapping[str, str] = field(default_factory=dict)
    fingerprints: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    notes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    row_numbers: Mapping[str, np.ndarray] = field(default_factory=dict)
    original_stats: Any = None
    row_hashes: Mapping[str, tuple[pd.DataFrame, tuple[str, ...], np.ndarray]] = field(
        default_factory=dict, repr=False, compare=False)
    whole_columns: Mapping[str, pd.DataFrame] = field(default_factory=dict, repr=False, compare=False)

    def get(self, role: str) -> pd.DataFrame:
        frame = getattr(self, role)
        if frame is None:
            raise InputError(f"no {role} table was given")
        return frame

    @property
    def roles(self) -> tuple[str, ...]:
        return tuple(r for r in ROLES if getattr(self, r) is not None)

    @property
    def has_control(self) -> bool:
        return self.control is not None

    def inferred_metadata(self) -> dict[str, dict[str, Any]]:
        """``{column: {"sdtype", "reason"[, "normalised"]}}``: every inferred sdtype, and every column
        whose values were normalised (whitespace, boolean spellings, date format, epochs)."""
        out = self.schema.inferred()
        for col, notes in self.notes.items():
            entry = out.setdefault(col, {"sdtype": self.schema.sdtype(col), "reason": "declared in the metadata"})
            entry["normalised"] = list(notes)
        return out

    def with_synthetic(self, synthetic: pd.DataFrame, label: str = "synthetic DataFrame") -> Tables:
        """Same original/control/schema, another release (validated like the first)."""
        return prepare_tables(self.original, synthetic, self.control, self.schema,
                              labels={"original": self.labels.get("original", "original"),
                                      "synthetic": label,
                                      "control": self.labels.get("control", "control")})

    def in_canonical_order(self) -> Tables:
        """The same tables with their rows in a canonical CONTENT order (sorted by a hash of the
        row; identical rows are interchangeable) and their columns sorted by name, so that no
        metric can depend on the order of the input rows or columns. ``row_numbers`` maps each row
        back to its input row (composed when the tables were already reordered).
        :func:`synthguard.evaluate` runs every metric on this view."""
        frames, rows = {}, {}
        cols = _canonical_columns(self.schema.names)
        schema = self.schema.restrict(cols) if cols != self.schema.names else self.schema

        def reorder(role: str) -> tuple[pd.DataFrame, np.ndarray]:
            frame = self.get(role)
            if list(frame.columns) != cols:
                frame = frame[cols]
            order = canonical_order(frame, self._hashes_of(role, cols))
            return take_rows(frame, order), order

        for role, (frame, order) in zip(self.roles, map_threads(reorder, self.roles), strict=True):
            frames[role] = frame
            prev = self.row_numbers.get(role)
            rows[role] = order if prev is None else np.asarray(prev)[order]
        return replace(self, original=frames.get("original", self.original), synthetic=frames["synthetic"],
                       control=frames.get("control"), row_numbers=rows, schema=schema, row_hashes={})

    def _hashes_of(self, role: str, columns: list[str]) -> np.ndarray | None:
        """The kept :attr:`row_hashes` of ``role`` on ``columns`` (in that order) when they are those
        of the role's frame as it is in these tables, else ``None``."""
        kept = self.row_hashes.get(role)
        if kept is None or kept[0] is not self.get(role) or list(kept[1]) != list(columns):
            return None
        return kept[2]

    def with_row_numbers(self, column: str) -> Tables:
        """The same tables with one more numerical column, ``column``, holding each row's input row
        number (0-based, as floats), so that identical rows stay separate records.

        The values and the schema are those the typing decision gives to the frames with that
        column added and declared numerical; the typing's checks (copies, identifiers, categories)
        are not run again: they concern the caller's columns, which are unchanged. The rows keep
        their order; :meth:`in_canonical_order` then sorts them by content, row number included
        (the same order whatever the order of these tables' rows).

        Parameters
        ----------
        column : str
            The new column's name (not one of the tables' columns).

        Raises
        ------
        ValueError
            When the tables already have ``column``.
        """
        if column in self.schema.columns:
            raise ValueError(f"the tables already have a column {column!r}")
        frames = {}
        for role in self.roles:
            frame = self.get(role)
            nums = self.row_numbers.get(role)
            values = np.arange(len(frame), dtype=float) if nums is None else np.asarray(nums, dtype=float)
            frames[role] = frame.assign(**{column: values})
        schema = replace(self.schema, columns={**self.schema.columns, column: ColumnSpec(column, "numerical")})
        return replace(self, original=frames.get("original"), synthetic=frames["synthetic"],
                       control=frames.get("control"), schema=schema, row_hashes={})


def fingerprint_frame(frame: pd.DataFrame) -> str:
    """SHA-256 of a frame's column names, dtypes and cell values (row order matters)."""
    h = hashlib.sha256()
    h.update("\x1f".join(map(str, frame.columns)).encode())
    h.update("\x1f".join(map(str, frame.dtypes)).encode())
    h.update(row_hashes(frame).tobytes())
    return h.hexdigest()


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _name_hint(missing: list[str], extra: list[str], columns: list[str]) -> str:
    """Why columns may look missing: names differing only in case/spaces, or a wrong separator."""
    key = {str(c).strip().casefold(): c for c in extra}
    pairs = [(m, key[m.strip().casefold()]) for m in missing if m.strip().casefold() in key]
    if pairs:
        shown = ", ".join(f"{a!r} vs {b!r}" for a, b in pairs[:3])
        return f" (the names differ only in case or surrounding spaces: {shown}; rename them to match)"
    if len(columns) == 1 and any(d in str(columns[0]) for d in (";", "\t", "|")):
        return " (it was read as one column: is it separated by ';', tab or '|' rather than ','?)"
    return ""


def _coerce(frame: pd.DataFrame, schema: Schema, label: str,
            notes: dict[str, list[str]] | None = None) -> pd.DataFrame:
    """Give every column the dtype its sdtype needs, with an error naming the file and column.
    Datetime columns arrive parsed (:func:`synthguard.data.dates.parse_datetime_columns`)."""
    out = {}
    for col, spec in schema.columns.items():
        s = frame[col]
        if spec.sdtype == "numerical":
            if pd.api.types.is_bool_dtype(s.dtype):
                s = s.astype("float64")
            elif not pd.api.types.is_numeric_dtype(s.dtype):
                conv = pd.to_numeric(s, errors="coerce")
                bad = s.notna() & conv.isna()
                if bad.any():
                    example = s[bad].iloc[0]
                    raise InputError(f"{label}: column {col!r} is numerical but holds {int(bad.sum())} "
                                     f"non-numeric value(s), e.g. {example!r}: clean the column or declare "
                                     "its sdtype as 'categorical' in the metadata")
                s = conv
            s = s.astype("float64") if not pd.api.types.is_float_dtype(s.dtype) else s
        elif spec.sdtype == "datetime":
            if not pd.api.types.is_datetime64_any_dtype(s.dtype):  # pragma: no cover - parsed before
                raise InputError(f"{label}: column {col!r} is datetime but was not parsed as dates")
            if getattr(s.dt, "tz", None) is not None:
                s = s.dt.tz_convert("UTC").dt.tz_localize(None)
            if s.dtype != np.dtype("datetime64[ns]"):
                # one resolution whatever pandas parsed to (pandas 3 parses strings to microseconds,
                # pandas 2 to nanoseconds): the content hash of a row (canonical order) and every
                # encoded value must not depend on the pandas version
                try:
                    s = s.astype("datetime64[ns]")
                except (OverflowError, ValueError, pd.errors.OutOfBoundsDatetime) as exc:
                    raise InputError(f"{label}: column {col!r} holds dates outside 1677-09-21 .. "
                                     "2262-04-11, which synthguard cannot represent: drop those rows "
                                     "or declare the column 'categorical' in the metadata") from exc
        elif spec.sdtype in ("categorical", "boolean", "id", "text"):
            if isinstance(s.dtype, pd.CategoricalDtype):
                s = s.astype(object)
            if spec.sdtype == "boolean" and not pd.api.types.is_bool_dtype(s.dtype):
                # on the distinct values: a handful, whatever the rows
                codes, uniq = pd.factorize(s, use_na_sentinel=True)
                low = pd.Index(uniq, dtype=object).astype(str).str.strip().str.lower()
                known = low.isin(list(BOOLEAN_VALUES))
                if not known.all():
                    if not spec.inferred and len(uniq) > 2:
                        shown = ", ".join(repr(v) for v in uniq[~known][:3])
                        raise InputError(f"{label}: column {col!r} is declared boolean in the metadata but "
                                         f"holds {len(uniq)} distinct values (e.g. {shown}): declare its "
                                         "sdtype 'numerical' or 'categorical' in the metadata, or fix the "
                                         "values")
                    s = s.astype(object)  # two labels kept as categories
                else:
                    spelled = sorted(set(low))
                    if notes is not None and spelled:
                        notes.setdefault(col, []).append(boolean_note(spelled, label))
                    truth = np.array([BOOLEAN_VALUES[v] for v in low] + [None], dtype=object)
                    s = pd.Series(truth[codes], index=s.index, name=s.name)
            elif spec.sdtype in ("categorical", "id", "text") and pd.api.types.is_numeric_dtype(s.dtype):
                s = s.astype(object)
            if isinstance(s.dtype, pd.BooleanDtype):
                # nullable booleans as True/False/None objects: pandas 2.0 hashes the masked dtype
                # differently from later versions, which would change the canonical row order
                s = s.astype(object).where(s.notna(), None)
        out[col] = s
    return pd.DataFrame(out, index=frame.index)


#: how many non-missing values of each table decide whether a column mixes numeric and other labels
LABEL_SAMPLE = 1000


def label_kind(value: Any) -> str:
    """``"num"`` for a number (not a boolean; a ``Decimal`` too, as a sample of decimals alone is
    read in :data:`_KINDS`), else ``"other"``.

    Examples
    --------
    >>> from decimal import Decimal
    >>> [label_kind(v) for v in (1, 2.5, Decimal("3"), True, "4")]
    ['num', 'num', 'num', 'other', 'other']
    """
    return "num" if isinstance(value, (int, float, np.integer, np.floating, decimal.Decimal)) \
        and not isinstance(value, bool) else "other"


#: ``pandas.api.types.infer_dtype`` answers that settle the kinds of a sample at once
_KINDS = {"string": {"other"}, "bytes": {"other"}, "boolean": {"other"}, "categorical": {"other"},
          "integer": {"num"}, "floating": {"num"}, "mixed-integer-float": {"num"}, "decimal": {"num"},
          "empty": set()}


def label_kinds(values: pd.Series, limit: int = LABEL_SAMPLE) -> set[str]:
    """The kinds (:func:`label_kind`) of the first ``limit`` non-missing labels of ``values``."""
    head = values.iloc[:limit]
    head = head[head.notna().to_numpy()]
    if len(head) < limit < len(values):
        head = values.dropna().iloc[:limit]
    kinds = _KINDS.get(pd.api.types.infer_dtype(head, skipna=True))  # one C pass
    return set(kinds) if kinds is not None else {label_kind(v) for v in head}


def label_kind_of_each(values: pd.Series) -> np.ndarray:
    """:func:`label_kind` of every value of ``values`` (non-missing; a sample): one C pass when
    they are all of one kind, else one call per value.

    Examples
    --------
    >>> label_kind_of_each(pd.Series([1, "a", 2.5], dtype=object)).tolist()
    ['num', 'other', 'num']
    """
    kinds = _KINDS.get(pd.api.types.infer_dtype(values, skipna=True))
    if kinds is not None and len(kinds) == 1:
        return np.full(len(values), next(iter(kinds)), dtype=object)
    return np.array([label_kind(v) for v in values], dtype=object)  # a mixed sample only


def _normalise_categories(frames: dict[str, pd.DataFrame], schema: Schema) -> None:
    """Make categorical values comparable across tables (``1`` in one file, ``"1"`` in another)."""
    for col in schema.of_type("categorical", "id", "boolean"):
        kinds = set()
        for df in frames.values():
            kinds.update(label_kinds(df[col]))
        if len(kinds) > 1:
            for df in frames.values():
                df[col] = canonical_labels(df[col])


def prepare_tables(original: TableLike, synthetic: TableLike, control: TableLike | None = None,
                   metadata: Mapping[str, Any] | Schema | str | Path | None = None, *,
                   labels: Mapping[str, str] | None = None, strict_control: bool = True,
                   strip_whitespace_values: bool = True, canonical_columns: bool = False,
                   present_elsewhere: Collection[str] = (),
                   detect_identifiers: bool = True) -> Tables:
    """Load, validate and type the inputs of an evaluation.

    Parameters
    ----------
    original, synthetic : DataFrame or path
        Training rows and the release.
    control : DataFrame or path, optional
        Real rows held out from training (enables residual risks and baselines).
    metadata : mapping, Schema or path, optional
        SynEval-style metadata; missing sdtypes are inferred from ``original``.
    labels : mapping, optional
        Labels for messages (used when frames stand in for files).
    strip_whitespace_values : bool
        Strip surrounding whitespace of categorical values (default). ``False`` keeps ``"X "`` and
        ``"X"`` apart, as the reference libraries do (the PETsARD drop-in, whose numbers must match).
    strict_control : bool
        A control holding the same rows as the original is an :class:`InputError` (default), or
        only a warning (``False``: drop-in APIs of libraries that accept it).
    canonical_columns : bool
        Put the columns in their canonical order (sorted by name) right away, so that warnings and
        the schema come out the same whatever the input column order (:func:`synthguard.evaluate`);
        otherwise the original's order is kept (drop-in APIs that report per column).
    present_elsewhere : collection of str
        Columns known to hold values elsewhere in the tables these are parts of (the first
        partitions of a cluster's tables, checked on every partition): not refused when they hold
        no value here.
    detect_identifiers : bool
        Read inferred columns holding row numbers or surrogate identifiers as ``id``
        (:func:`~.quirks.detect_row_numbers`, :func:`~.quirks.detect_surrogate_ids`; default).
        ``False`` with a ``Schema`` that already decided it (a re-test of a sampled run, whose
        tables are not the whole tables the decision reads).

    Raises
    ------
    InputError
        With one line naming the file, column and fix.
    """
    sources = {"original": original, "synthetic": synthetic, "control": control}
    frames: dict[str, pd.DataFrame] = {}
    names: dict[str, str] = {}
    prints: dict[str, dict[str, Any]] = {}
    text_roles: set[str] = set()
    for role, src in sources.items():
        if src is None:
            continue
        as_text = isinstance(src, (str, Path)) and is_text_file(Path(src))
        frame, label = load_table(src, role, as_text=as_text)
        if as_text:
            text_roles.add(role)
        if labels and role in labels and isinstance(src, pd.DataFrame):
            label = labels[role]
        # one Unicode form for names: 'région' typed on a Mac (NFD) is the same column as on Linux
        frame.columns = [unicodedata.normalize("NFC", c) if isinstance(c, str) else c for c in frame.columns]
        if frame.columns.duplicated().any():
            dup = frame.columns[frame.columns.duplicated()][0]
            raise InputError(f"{label}: column {dup!r} appears more than once: rename or drop the duplicate")
        frame.columns = [str(c) for c in frame.columns]
        if frame.shape[1] == 0:
            raise InputError(f"{label} has no columns: check the file's header and separator")
        if frame.shape[0] == 0:
            raise InputError(f"{label} has no rows: give a non-empty table")
        frame = frame.reset_index(drop=True)
        sha = (_file_sha256(Path(src)) if isinstance(src, (str, Path)) and Path(src).is_file()
               else fingerprint_frame(frame))  # a frame, a folder, a glob, a database: its content
        prints[role] = {"rows": int(frame.shape[0]), "columns": int(frame.shape[1]), "sha256": sha}
        frames[role] = frame
        names[role] = label

    base_cols = list(frames["original"].columns)
    if canonical_columns:
        base_cols = _canonical_columns(base_cols)
        frames["original"] = frames["original"][base_cols]
    for role in ("synthetic", "control"):
        if role not in frames:
            continue
        cols = set(frames[role].columns)
        missing = [c for c in base_cols if c not in cols]
        extra = [c for c in frames[role].columns if c not in set(base_cols)]
        if missing:
            raise InputError(f"{names[role]} is missing column(s) {', '.join(map(repr, missing))} that "
                             f"{names['original']} has: add them, or drop them from the original"
                             + _name_hint(missing, extra, list(frames[role].columns)))
        if extra:
            raise InputError(f"{names[role]} has column(s) {', '.join(map(repr, extra))} that "
                             f"{names['original']} lacks: drop them, or add them to the original")
        frames[role] = frames[role][base_cols]

    for role, frame in frames.items():
        all_nan = [c for c in frame.columns if c not in present_elsewhere and frame[c].isna().all()]
        if all_nan:
            raise InputError(empty_column_message(names[role], all_nan[0]))

    warns: list[str] = []
    meta: dict[str, Any] | None = None
    if isinstance(metadata, Schema):
        declared = {c: s.sdtype for c, s in metadata.columns.items()}
    else:
        meta_label = str(metadata) if isinstance(metadata, (str, Path)) else "metadata"
        meta = nfc_metadata(load_metadata(metadata))
        warns += metadata_warnings(meta, meta_label)
        declared = declared_sdtypes(meta)

    # one typing decision from every table (and the metadata), every table cast to it
    notes, type_warns, reasons = decide_types(frames, text_roles, declared, names)
    warns += type_warns

    if isinstance(metadata, Schema):
        schema = metadata
        missing = [c for c in schema.columns if c not in base_cols]
        if missing:
            raise InputError(f"schema names column(s) {missing} that {names['original']} lacks")
        schema = schema.restrict([c for c in base_cols if c in schema.columns])
    else:
        schema = infer_schema(frames["original"], meta, label=meta_label)
    if reasons:
        schema = replace(schema, columns={
            c: (replace(s, reason=reasons[c]) if c in reasons and s.inferred and s.sdtype == "categorical"
                else s) for c, s in schema.columns.items()})

    # real-world quirks: whitespace, surrogate identifiers, one date format per column, inf
    for col, how in (strip_whitespace(frames, schema, names) if strip_whitespace_values else {}).items():
        notes.setdefault(col, []).extend(how)
    if detect_identifiers:
        schema, row_warns = detect_row_numbers(frames, schema, names)
        schema, id_warns = detect_surrogate_ids(frames, schema, names)
        warns += row_warns + id_warns
    if meta is not None:
        warns += declared_id_warnings(frames["original"], declared, meta, names["original"], meta_label)
    warns += type_notices(frames, schema, skip=set(reasons))
    for col in schema.of_type("datetime"):
        spec = schema.columns[col]
        parsed, note = parse_datetime_columns(col, {r: f[col] for r, f in frames.items()}, names,
                                              spec.datetime_format, spec.unit)
        for role, series in parsed.items():
            frames[role][col] = series
        if note:
            notes.setdefault(col, []).append(note)

    # dtype reconciliation: a column must be usable with the same sdtype in every table
    typed = {role: _coerce(frame, schema, names[role], notes) for role, frame in frames.items()}
    for role in typed:
        typed[role], w = infinities_to_missing(typed[role], schema, names[role])
        warns += w
    _normalise_categories(typed, schema)
    spelled, warned = spelling_warnings(typed, schema, names)
    warns += spelled
    warns += disjoint_categories(typed, schema, names, skip=warned)
    hashes: dict[str, np.ndarray] = {}
    warns += check_control(typed, schema, names, strict=strict_control, hashes=hashes)
    hashed = tuple(control_columns(schema.columns, schema))
    return Tables(original=typed["original"], synthetic=typed["synthetic"], control=typed.get("control"),
                  schema=schema, labels=names, fingerprints=prints, warnings=tuple(warns),
                  notes={c: tuple(v) for c, v in notes.items()},
                  row_hashes={role: (typed[role], hashed, h) for role, h in hashes.items()})


def empty_column_message(label: str, column: str) -> str:
    """The error of a table whose ``column`` holds no value."""
    return f"{label}: column {column!r} is empty (all values missing): drop it from every table, or fill it"


def _canonical_columns(columns: list[str]) -> list[str]:
    """The canonical column order: sorted by name (code point order of the NFC names), so that the
    order of the input columns cannot change a number."""
    return sorted(columns)


def canonical_order(frame: pd.DataFrame, hashes: np.ndarray | None = None) -> np.ndarray:
    """Positions of ``frame``'s rows sorted by a 64-bit hash of their content (stable, so only
    identical rows keep their relative input order: the sorted table is the same whatever the
    input order). Collisions between distinct rows (probability ~ n^2 / 2^64) are ignored.
    ``hashes``: ``row_hashes(frame)`` when the caller holds them (not computed again).

    Examples
    --------
    >>> f = pd.DataFrame({"a": [3.0, 1.0, 3.0]})
    >>> bool((canonical_order(f) == canonical_order(f, row_hashes(f))).all())
    True
    """
    return np.argsort(row_hashes(frame) if hashes is None else hashes, kind="stable").astype(np.int64)


#: the first rows of a column of Arrow strings whose distinct values decide how
#: :func:`take_rows` reorders it, and the most distinct values among them for the dictionary path
DICTIONARY_PROBE, DICTIONARY_MOST = 65_536, 4_096


def take_rows(frame: pd.DataFrame, order: np.ndarray) -> pd.DataFrame:
    """``frame.iloc[order].reset_index(drop=True)``: the same frame (values, dtypes, columns).

    A column of Arrow strings with few distinct values (at most :data:`DICTIONARY_MOST` among its
    first :data:`DICTIONARY_PROBE` rows) is reordered through its dictionary encoding: the int32
    indices are taken and decoded from the small dictionary, instead of gathering every string
    from a random place of the whole column (at 10 million rows, 0.2-0.5 instead of 0.8-1.7 CPU s
    a column). Every other column is taken as ``iloc`` takes it.

    Examples
    --------
    >>> f = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": pd.array(["x", None, "y"], dtype="string[pyarrow]")})
    >>> take_rows(f, np.array([2, 0, 1])).equals(f.iloc[[2, 0, 1]].reset_index(drop=True))
    True
    """
    strings = {c: s for c, s in frame.items() if _few_arrow_strings(s)}
    if not strings:
        return frame.iloc[order].reset_index(drop=True)
    out = frame.drop(columns=list(strings)).iloc[order].reset_index(drop=True)
    for at, col in enumerate(frame.columns):  # loop over columns
        if col in strings:
            out.insert(at, col, _take_by_dictionary(strings[col], order))
    return out


def _few_arrow_strings(series: pd.Series) -> bool:
    """Whether ``series`` holds Arrow strings with few distinct values (:func:`take_rows`)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arrow = getattr(pd.arrays, "ArrowExtensionArray", None)  # pandas >= 1.5
    if arrow is None or not isinstance(series.array, arrow):
        return False
    data = series.array.__arrow_array__()
    if not (pa.types.is_string(data.type) or pa.types.is_large_string(data.type)):
        return False
    head = data.slice(0, DICTIONARY_PROBE)
    return len(pc.unique(head)) <= DICTIONARY_MOST


def _take_by_dictionary(series: pd.Series, order: np.ndarray) -> pd.Series:
    """``series.iloc[order]`` (a column of Arrow strings; a new index from 0) by its dictionary
    encoding: the indices taken, the strings decoded from the dictionary (missing stays missing)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    coded = pc.dictionary_encode(series.array.__arrow_array__()).combine_chunks()
    taken = pc.take(coded.dictionary, pc.take(coded.indices, pa.array(order)))
    try:
        out = pd.Series(type(series.array)(pa.chunked_array([taken]), dtype=series.dtype),
                        name=series.name)
    except TypeError:  # an array type that takes no dtype: as iloc takes it
        out = None
    if out is None or out.dtype != series.dtype:
        return series.iloc[order].reset_index(drop=True)
    return out


# record keys holding a row number, and the table it points into ("row" depends on the metric)
_ROW_KEYS = {"original_row": "original", "nearest_original_row": "original",
             "nearest_training_row": "original", "synthetic_row": "synthetic", "control_row": "control"}


def input_row_records(records: Any, tables: Tables, plain_row: str = "original") -> Any:
    """``records`` with every row number mapped from the canonical order back to the input row;
    ``plain_row``: the table a record's plain ``row`` field points into (the metric's card says,
    :attr:`synthguard.registry.RecordsCard.row`)."""
    if not records or not tables.row_numbers:
        return records
    out = []
    for rec in records:
        if not isinstance(rec, dict):
            out.append(rec)
            continue
        rec = dict(rec)
        for key, val in rec.items():
            role = _ROW_KEYS.get(key) or (plain_row if key == "row" else None)
            nums = tables.row_numbers.get(role) if role else None
            if nums is not None and isinstance(val, (int, np.integer)) and not isinstance(val, bool) \
                    and 0 <= int(val) < len(nums):
                rec[key] = int(nums[int(val)])
        out.append(rec)
    return out
