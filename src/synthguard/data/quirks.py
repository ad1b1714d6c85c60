"""Real-world data quirks that would otherwise hide a leak or change the numbers silently.

Each function works on the loaded tables of one evaluation (role -> frame) and returns what it did,
for the report: ``notes`` per column (under ``inferred_metadata``) and ``warnings`` (top-level
``warnings`` in the JSON, printed on the console).

* surrounding whitespace of categorical / boolean / id values is stripped (``"F "`` is ``"F"``);
* undeclared columns that are unique per row in every table and share no value between the
  original and the other tables are surrogate identifiers: sdtype ``id``, out of matching and
  distances; undeclared columns holding each table's row numbers (``0..n-1`` / ``1..n``, a saved
  pandas index) likewise;
* an ``id`` declared on a column of few values is warned about;
* ``inf`` / ``-inf`` in numerical columns are read as missing, with a warning naming the column
  and the count;
* a categorical column whose values in the release share nothing with the original's is warned
  about (every row then differs in it, so no exact copy can be found through it);
* a control identical to the original, or holding the release's rows, is an error; a control
  sharing rows with the original well above chance is warned about with the share.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..core.arrays import isin_codes
from ..errors import InputError
from ..stats import binomial_greater
from .arrowtext import arrow_strings, matches
from .hashing import row_hashes
from .notes import whitespace_note
from .schema import ColumnSpec, Schema
from .threads import map_threads

MIN_ID_ROWS = 20


def _text(s: pd.Series) -> pa.Array | None:
    """``s`` as Arrow strings, or ``None`` when it holds other objects than strings."""
    if pd.api.types.is_numeric_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype):
        return None
    try:
        return arrow_strings(s)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None


def has_padding(s: pd.Series) -> bool:
    """Whether a string value of ``s`` has surrounding whitespace (one Arrow pass; over the
    distinct values when ``s`` mixes strings with other objects)."""
    arr = _text(s)
    if arr is not None:
        return bool(pc.any(pc.not_equal(arr, pc.utf8_trim_whitespace(arr))).as_py())
    if pd.api.types.is_numeric_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype):
        return False
    return any(isinstance(u, str) and u != u.strip() for u in pd.unique(s.dropna()))


def _strip(s: pd.Series) -> tuple[pd.Series, int]:
    """Strip surrounding whitespace of the string values of ``s``; returns the new series and how
    many values changed."""
    if not has_padding(s):
        return s, 0
    arr = _text(s)
    if arr is not None:
        trimmed = pc.utf8_trim_whitespace(arr)
        hit = pc.fill_null(pc.not_equal(arr, trimmed), False).to_numpy(zero_copy_only=False)
        new = pd.Series(trimmed.to_pandas().to_numpy(dtype=object), index=s.index)
        return s.where(~hit, new).astype(s.dtype), int(hit.sum())
    try:
        st = s.str.strip()
    except AttributeError:  # no string values at all
        return s, 0
    out = st.where(st.notna(), s)
    changed = int((s.notna() & (out.astype(object) != s.astype(object))).sum())
    return (out if changed else s), changed


def strip_whitespace(frames: dict[str, pd.DataFrame], schema: Schema,
                     labels: Mapping[str, str]) -> dict[str, list[str]]:
    """Strip surrounding whitespace of categorical, boolean and id values in every table (in place
    on the private copies)."""
    notes: dict[str, list[str]] = {}
    for col in schema.of_type("categorical", "boolean", "id"):
        for role, df in frames.items():
            new, k = _strip(df[col])
            if k:
                df[col] = new
                notes.setdefault(col, []).append(whitespace_note(k, labels.get(role, role)))
    return notes


def _unique_no_missing(s: pd.Series, min_rows: int = MIN_ID_ROWS) -> bool:
    return len(s) >= min_rows and not s.isna().any() and bool(s.is_unique)


def _integer_valued(s: pd.Series) -> bool:
    if pd.api.types.is_integer_dtype(s.dtype):
        return True
    if pd.api.types.is_float_dtype(s.dtype):
        v = s.to_numpy(dtype="float64")
        return bool(np.all(np.isfinite(v)) and np.all(v == np.round(v)))
    return False


def _shares_text(base: pd.Series, other: pd.Series) -> bool:
    """Whether a value of ``base`` occurs in ``other``, compared as text (``astype(str)``).

    Two columns of one numeric dtype are first compared as numbers: equal text means equal
    numbers there (``repr`` of a number is injective; no value is missing here), so only the
    values equal as numbers are compared as text (``-0.0`` is ``0.0`` as a number, not as text).
    At 1 M rows a person number shared through copied rows cost about 2 s a table as text.
    """
    numeric = (base.dtype == other.dtype and pd.api.types.is_numeric_dtype(base.dtype)
               and not pd.api.types.is_bool_dtype(base.dtype))
    if numeric:
        hit = pd.Index(other).isin(base)
        if not hit.any():
            return False
        other = other[hit]
        base = base[pd.Index(base).isin(other)]
    return bool(pd.Index(base.astype(str)).isin(other.astype(str)).any())


def detect_surrogate_ids(frames: Mapping[str, pd.DataFrame], schema: Schema,
                         labels: Mapping[str, str]) -> tuple[Schema, list[str]]:
    """Mark undeclared surrogate identifier columns as sdtype ``id``.

    A column qualifies when its sdtype was inferred as categorical, or numerical with integer
    values, and in every table it has no missing value and a different value on every row (at
    least 20 rows), and no value of the original occurs in the release or the control. Such a
    column says nothing about the people (a copied row carries its original's ID, so a copy is
    still found: the column then overlaps and is not an identifier by this rule).
    """
    changed: dict[str, object] = {}
    warns: list[str] = []
    original = frames["original"]
    for col, spec in schema.columns.items():
        if not spec.inferred or spec.sdtype not in ("categorical", "numerical"):
            continue
        cols = [df[col] for df in frames.values()]
        if not all(_unique_no_missing(s) for s in cols):
            continue
        if spec.sdtype == "numerical" and not all(_integer_valued(s) for s in cols):
            continue
        if any(_shares_text(original[col], df[col]) for r, df in frames.items() if r != "original"):
            continue
        changed[col] = replace(spec, sdtype="id", reason=surrogate_reason(spec.sdtype))
        warns.append(surrogate_warning(col))
    if not changed:
        return schema, warns
    cols = {c: changed.get(c, s) for c, s in schema.columns.items()}
    return replace(schema, columns=cols), warns


def identifier_candidates(frame: pd.DataFrame, schema: Schema, min_rows: int = MIN_ID_ROWS) -> list[str]:
    """The columns of ``frame`` that :func:`detect_surrogate_ids` or :func:`detect_row_numbers`
    could read as an identifier in tables holding ``frame``: sdtype inferred as categorical, or as
    numerical with integer values, and no missing value and a different value on every row of
    ``frame`` (both checks ask that of every table). A sampled run keeps these columns of its
    whole tables, so that its re-test types the release without some rows as a new evaluation
    of the whole tables would (:class:`~synthguard.data.tables.Tables`' ``whole_columns``).
    ``min_rows``: the fewest rows a table must hold (``0`` for one partition of a table, a cluster's
    check of its whole tables).

    Examples
    --------
    >>> from synthguard.data import infer_schema
    >>> f = pd.DataFrame({"code": range(30), "x": [1.5, 2.0] * 15, "name": [f"p{i}" for i in range(30)]})
    >>> identifier_candidates(f, infer_schema(f))
    ['code', 'name']
    """
    out = []
    for col, spec in schema.columns.items():
        if not spec.inferred or spec.sdtype not in ("categorical", "numerical") or col not in frame:
            continue
        s = frame[col]
        if spec.sdtype == "numerical" and not _integer_valued(s):
            continue
        if _unique_no_missing(s, min_rows):
            out.append(col)
    return out


def surrogate_warning(col: str) -> str:
    """The warning of a column :func:`detect_surrogate_ids` reads as an identifier.

    Examples
    --------
    >>> surrogate_warning("key")[:47]
    "column 'key' has a different value on every row"
    """
    return (f"column {col!r} has a different value on every row of every table and no value in "
            "common between the original and the other tables: read as a surrogate identifier "
            "and left out of matching and distances (declare its sdtype in the metadata to "
            "override)")


def surrogate_reason(sdtype: str) -> str:
    """The reason of a column :func:`detect_surrogate_ids` reads as an identifier (``sdtype``: what
    it was read as before)."""
    return ("unique per row in every table and no value shared between tables: a surrogate "
            f"identifier (read as {sdtype} before), left out of matching and distances")


#: pandas' name for a column whose header is blank: the index ``to_csv`` writes by default
_UNNAMED = re.compile(r"^Unnamed: \d+$")


def _row_numbers(s: pd.Series) -> int | None:
    """0 or 1 when ``s`` holds the integers ``0..n-1`` (or ``1..n``) of its ``n`` rows, in any
    order; else ``None``."""
    if not pd.api.types.is_numeric_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype):
        return None
    v = s.to_numpy(dtype=np.float64, na_value=np.nan)
    if len(v) == 0 or np.isnan(v).any():
        return None
    start = v.min()
    if start not in (0.0, 1.0) or v.max() != start + len(v) - 1:
        return None
    seen = np.zeros(len(v), dtype=bool)
    pos = v - start
    if not np.all(pos == np.floor(pos)):
        return None
    seen[pos.astype(np.int64)] = True
    return int(start) if seen.all() else None


def detect_row_numbers(frames: Mapping[str, pd.DataFrame], schema: Schema,
                       labels: Mapping[str, str]) -> tuple[Schema, list[str]]:
    """Mark undeclared row-number columns as sdtype ``id`` (left out of every row comparison),
    with one warning each.

    A column qualifies when, in every table of at least 20 rows, it holds the row numbers of that
    table (``0..n-1`` or ``1..n``, any order): pandas' default index saved with the file, or a
    ``case_no`` renumbered in each file. A column without a header (pandas names it
    ``Unnamed: 0``) holding a different integer on every row of every table is a saved index too.
    Such a column says nothing about the people: compared, it would keep every copied row from
    matching its original (the numbers differ between the files).

    Examples
    --------
    >>> from synthguard.data import infer_schema
    >>> f = {r: pd.DataFrame({"case_no": range(1, 31), "x": [3, 1] * 15}) for r in ("original", "synthetic")}
    >>> schema, warns = detect_row_numbers(f, infer_schema(f["original"]), {})
    >>> schema.sdtype("case_no"), len(warns)
    ('id', 1)
    """
    changed: dict[str, ColumnSpec] = {}
    warns: list[str] = []
    for col, spec in schema.columns.items():
        if not spec.inferred or spec.sdtype not in ("numerical", "categorical"):
            continue
        cols = {r: df[col] for r, df in frames.items()}
        if any(len(s) < MIN_ID_ROWS for s in cols.values()):
            continue
        starts = {r: _row_numbers(s) for r, s in cols.items()}
        unnamed = _UNNAMED.match(col) is not None and all(_integer_valued(s) and _unique_no_missing(s)
                                                          for s in cols.values())
        what = row_numbers_what(col, list(starts.values()), unnamed)
        if what is None:
            continue
        changed[col] = replace(spec, sdtype="id", reason=row_numbers_reason(what))
        warns.append(row_numbers_warning(col, what))
    if not changed:
        return schema, warns
    return replace(schema, columns={c: changed.get(c, s) for c, s in schema.columns.items()}), warns


def row_numbers_what(col: str, starts: list[int | None], unnamed: bool) -> str | None:
    """What :func:`detect_row_numbers` says of column ``col``: it numbers the rows of every table
    (``starts``: 0 or 1 per table, ``None`` where it does not), or it has no header and a different
    integer on every row of every table (``unnamed``); ``None`` when neither holds."""
    if all(v is not None for v in starts):
        spelled = " or ".join(sorted({"0..n-1" if v == 0 else "1..n" for v in starts}))
        saved = "; an index saved with the data, as pandas' to_csv writes it without index=False" \
            if _UNNAMED.match(col) else ""
        return f"numbers the rows of every table ({spelled}, n the row count of each file{saved})"
    if unnamed:
        return ("has no header and a different integer on every row of every table (an index saved "
                "with the data, as pandas' to_csv writes it without index=False)")
    return None


def row_numbers_reason(what: str) -> str:
    """The reason of a column :func:`detect_row_numbers` reads as row numbers."""
    return f"row numbers, not data: it {what}"


def row_numbers_warning(col: str, what: str) -> str:
    """The warning of a column :func:`detect_row_numbers` reads as row numbers (``what``: what
    :func:`row_numbers_what` says of it).

    Examples
    --------
    >>> row_numbers_warning("n", "numbers the rows")[:47]
    "column 'n' numbers the rows, so it is left out "
    """
    return (f"column {col!r} {what}, so it is left out of every row comparison (compared, no "
            "copied row could match its original): drop it from the files, or declare its sdtype "
            "in the metadata to compare it")


def detection_warnings(schema: Schema) -> list[str]:
    """The warnings of :func:`detect_row_numbers` then :func:`detect_surrogate_ids` read back from
    the reasons of a schema they decided (a cluster decides them from every partition's facts:
    :func:`~synthguard.distributed._tables.whole_column_types`), in schema column order.

    Examples
    --------
    >>> from synthguard.data import infer_schema
    >>> f = {r: pd.DataFrame({"case_no": range(1, 31), "x": [3, 1] * 15}) for r in ("original", "synthetic")}
    >>> schema, warns = detect_row_numbers(f, infer_schema(f["original"]), {})
    >>> detection_warnings(schema) == warns
    True
    """
    rows, ids = [], []
    numbers = row_numbers_reason("")
    for col, spec in schema.columns.items():
        if spec.sdtype != "id" or not spec.inferred:
            continue
        if spec.reason.startswith(numbers):
            rows.append(row_numbers_warning(col, spec.reason[len(numbers):]))
        elif spec.reason in (surrogate_reason("categorical"), surrogate_reason("numerical")):
            ids.append(surrogate_warning(col))
    return rows + ids


#: a column declared ``id`` with fewer distinct values than this share of its rows is not an
#: identifier (an identifier names one record, or one person of a few records)
ID_DISTINCT_SHARE = 0.5


def declared_id_warnings(original: pd.DataFrame, declared: Mapping[str, str],
                         metadata: Mapping | None, label: str, meta_label: str) -> list[str]:
    """One warning per column the metadata declares ``id`` that repeats its values on most rows.

    An ``id`` column is left out of every row comparison: declared on a column of few values (a
    4-valued code), rows that differ only in it count as copies. The entity key and sequence key
    of entity-level metadata repeat by design and are not checked.

    Examples
    --------
    >>> o = pd.DataFrame({"race": ["a", "b", "c", "d"] * 10})
    >>> declared_id_warnings(o, {"race": "id"}, None, "o.csv", "m.json")[0][:41]
    "metadata m.json declares column 'race' an"
    """
    warns = []
    for col in declared_id_columns(declared, metadata, original.columns):
        s = original[col].dropna()
        warn = declared_id_warning(col, int(s.nunique()), len(s), label, meta_label)
        if warn:
            warns.append(warn)
    return warns


def declared_id_columns(declared: Mapping[str, str], metadata: Mapping | None,
                        columns: Sequence[str]) -> list[str]:
    """The columns :func:`declared_id_warnings` checks: declared ``id``, held by the table
    (``columns``), neither the entity key nor the sequence key.

    Examples
    --------
    >>> declared_id_columns({"a": "id", "b": "id", "c": "categorical"}, {"entity_key": "b"}, ["a", "b", "c"])
    ['a']
    """
    keys = {str((metadata or {}).get(k)) for k in ("entity_key", "sequence_key")}
    held = set(columns)
    return [c for c, sd in declared.items() if sd == "id" and c not in keys and c in held]


def declared_id_warning(col: str, distinct: int, rows: int, label: str, meta_label: str) -> str | None:
    """:func:`declared_id_warnings`' warning for one column declared ``id`` holding ``distinct``
    values on its ``rows`` non-missing rows of the original (``label``), or ``None``.

    Examples
    --------
    >>> declared_id_warning("race", 4, 40, "o.csv", "metadata")[:44]
    "the metadata declares column 'race' an id, b"
    >>> declared_id_warning("race", 40, 40, "o.csv", "metadata") is None
    True
    """
    if rows < MIN_ID_ROWS or distinct >= ID_DISTINCT_SHARE * rows:
        return None
    where = "the metadata" if meta_label == "metadata" else f"metadata {meta_label}"
    return (f"{where} declares column {col!r} an id, but it holds only {distinct} "
            f"distinct value(s) in {rows} rows of {label}: an id is left out of every row "
            "comparison, so rows differing only in it count as copies; declare it "
            "'categorical' unless it identifies people (then give it as the entity key)")


#: a number with separators, a currency or a percent sign (RE2, run by pyarrow.compute)
_NUMBER_LIKE = r"^[-+(]?[$€£]?\s*[0-9][0-9.,'\s]*%?\)?$"



def type_notices(frames: Mapping[str, pd.DataFrame], schema: Schema,
                 skip: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """Inferred sdtypes that change what is measured, for the console: numbers read as categories
    (thousands separators, units, mixed values) and categories with a value on almost every row.
    Columns in ``skip`` were already explained by the typing decision (codes with leading zeros,
    numbers mixed with other values)."""
    warns = []
    original = frames["original"]
    for col in type_notice_columns(schema, skip):
        s = original[col].dropna()
        if len(s) == 0:
            continue
        # on the distinct values (in order of first appearance) weighted by their counts: the same
        # share and the same first example as over the rows, without a regex per row
        codes, uniq = pd.factorize(s)
        warn = type_notice(col, uniq, np.bincount(codes, minlength=len(uniq)))
        if warn:
            warns.append(warn)
    return warns


def type_notice_columns(schema: Schema, skip: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """The columns :func:`type_notices` looks at: inferred categorical, not in ``skip``.

    Examples
    --------
    >>> from synthguard.data.schema import infer_schema
    >>> type_notice_columns(infer_schema(pd.DataFrame({"a": ["x"], "b": [1.5]})))
    ['a']
    """
    return [c for c, spec in schema.columns.items()
            if spec.inferred and spec.sdtype == "categorical" and c not in skip]


def type_notice(col: str, uniq: Any, counts: np.ndarray) -> str | None:
    """:func:`type_notices`' warning for one column of the original from its distinct present
    values ``uniq`` (in order of first appearance) and their ``counts``, or ``None``.

    Examples
    --------
    >>> type_notice("v", ["1,200", "3"], np.array([5, 5]))[:36]
    "column 'v' looks numeric (e.g. '1,20"
    >>> type_notice("v", ["a", "b"], np.array([5, 5])) is None
    True
    """
    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    if n == 0:
        return None
    text = pc.utf8_trim_whitespace(arrow_strings(pd.Series(uniq, dtype=object).astype(str)))
    numeric_like = matches(text, _NUMBER_LIKE)
    if counts[numeric_like].sum() / n >= 0.8:
        plain = matches(text, r"^-?[0-9]+(\.[0-9]+)?$")
        shown = np.flatnonzero(numeric_like & ~plain)
        example = text[int(shown[0]) if len(shown) else 0].as_py()
        return (f"column {col!r} looks numeric (e.g. {example!r}) but was read as categorical "
                "(thousands separators, units or mixed values?): it is compared by equality, not "
                "by distance; clean it, or declare its sdtype in the metadata")
    distinct = len(uniq)
    if n >= MIN_ID_ROWS and distinct >= 0.9 * n:
        return (f"column {col!r} was read as categorical with a different value on almost every "
                f"row ({distinct} distinct in {n}): if it is an identifier, declare its "
                "sdtype 'id' so it stays out of matching and distances")
    return None


#: finite values beyond this magnitude are missing-value codes, not data (Stata's ``.`` is
#: 8.988e307, SAS and database exports use the largest double): read as missing, like inf
SENTINEL_ABS = 1e300


def infinite_cells(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which of ``values`` (float64) are ``inf`` / ``-inf`` and which are finite missing-value codes
    beyond :data:`SENTINEL_ABS` (one process's typing and a cluster's facts read them alike).

    Examples
    --------
    >>> inf, huge = infinite_cells(np.array([1.0, np.inf, 9e307, np.nan]))
    >>> inf.tolist(), huge.tolist()
    ([False, True, False, False], [False, False, True, False])
    """
    inf = np.isinf(values)
    with np.errstate(invalid="ignore"):
        huge = np.isfinite(values) & (np.abs(values) > SENTINEL_ABS)
    return inf, huge


def infinities_to_missing(frame: pd.DataFrame, schema: Schema, label: str) -> tuple[pd.DataFrame, list[str]]:
    """Read ``inf`` / ``-inf`` and huge finite missing-value codes (``|x| > 1e300``, e.g. Stata's
    8.988e307) in numerical columns as missing; one warning per kind, column and table."""
    warns = []
    for col in schema.of_type("numerical"):
        s = frame[col]
        if not pd.api.types.is_float_dtype(s.dtype):
            continue
        v = s.to_numpy(dtype="float64", na_value=np.nan)
        inf, huge = infinite_cells(v)
        if inf.any() or huge.any():
            frame[col] = s.mask(inf | huge)
        warns += infinity_warnings(label, col, int(inf.sum()), int(huge.sum()),
                                   float(v[huge][0]) if huge.any() else float("nan"))
    return frame, warns


def infinity_warnings(label: str, col: str, infinite: int, huge: int, example: float) -> list[str]:
    """:func:`infinities_to_missing`' warnings for one numerical column of one table: ``infinite``
    values ``inf``/``-inf`` and ``huge`` finite ones beyond 1e300 (``example``: the first).

    Examples
    --------
    >>> infinity_warnings("o.csv", "x", 2, 0, float("nan"))
    ["o.csv: column 'x' holds 2 infinite value(s) (inf/-inf): read as missing"]
    """
    warns = []
    if infinite:
        warns.append(f"{label}: column {col!r} holds {infinite} infinite value(s) (inf/-inf): "
                     "read as missing")
    if huge:
        warns.append(f"{label}: column {col!r} holds {huge} value(s) beyond +/-1e300 "
                     f"(e.g. {example:.4g}, a missing-value code such as Stata's): read as "
                     "missing")
    return warns


def disjoint_categories(frames: Mapping[str, pd.DataFrame], schema: Schema,
                        labels: Mapping[str, str],
                        skip: set[tuple[str, str]] | frozenset[tuple[str, str]] = frozenset()) -> list[str]:
    """Warn about categorical columns whose release values share nothing with the original's
    (except the ``(column, role)`` pairs in ``skip``, already warned about more precisely)."""
    warns = []
    original = frames["original"]
    for col in schema.of_type("categorical", "boolean"):
        o = pd.Index(original[col].dropna().unique())
        for role in ("synthetic", "control"):
            if role not in frames or (col, role) in skip:
                continue
            warn = disjoint_warning(col, o, pd.Index(frames[role][col].dropna().unique()),
                                    labels.get(role, role))
            if warn:
                warns.append(warn)
    return warns


def isin_values(values: Any, among: Any) -> np.ndarray:
    """``pd.Index(values).isin(among)``, through one hash table when ``values`` are text: pandas
    3's Arrow strings look ``among`` up with a Python call per value (seconds at 100,000
    distinct values); as plain objects the same answer from one hashed pass.

    Examples
    --------
    >>> isin_values(pd.Index(["a", "b"], dtype="string"), pd.Index(["b", "c"], dtype="string")).tolist()
    [False, True]
    """
    index = values if isinstance(values, pd.Index) else pd.Index(values)
    if pd.api.types.is_string_dtype(index.dtype) and index.dtype != object:
        index = pd.Index(index.to_numpy(dtype=object), dtype=object)
        among = np.asarray(among, dtype=object)
    return np.asarray(index.isin(among), dtype=bool)


def disjoint_warning(col: str, original: pd.Index, values: pd.Index, label: str) -> str | None:
    """:func:`disjoint_categories`' warning for one column of one table (``label``) from its
    distinct present values and the original's, each in order of first appearance, or ``None``.

    Examples
    --------
    >>> disjoint_warning("c", pd.Index(["a"]), pd.Index(["B"]), "s.csv")[:43]
    "column 'c': the values in s.csv share nothi"
    """
    if len(original) and len(values) and not isin_values(original, values).any():
        return (f"column {col!r}: the values in {label} share nothing with "
                f"the original's (e.g. {values[0]!r} vs {original[0]!r}): check spelling, case and codes; "
                "no row can match the original in this column")
    return None


#: a control sharing more than this share of its rows with the release (and far above chance) is
#: the release given again, not held-out rows
RELEASE_SHARE = 0.5


def check_control(frames: Mapping[str, pd.DataFrame], schema: Schema,
                  labels: Mapping[str, str], strict: bool = True, *,
                  hashes: dict[str, np.ndarray] | None = None) -> list[str]:
    """A control identical to the original, or holding the release's rows, is an error; a control
    sharing rows with the original clearly above chance is a warning with the share.

    Chance is estimated by the share of original rows that occur again elsewhere in the original
    (leave-one-out: the rate at which a fresh row of the same population meets a training row).
    With ``strict=False`` the errors are warnings instead.
    The control holds the release's rows when it equals the release (any row order), or when more
    than half of its rows that are not training rows (20 or more) occur in the release and that
    share exceeds chance by 25 points: real held-out rows meet the release only by chance,
    whatever the release copied from the original.
    The overlap warning fires when the control's share in the original exceeds chance by at least
    2 percentage points and an exact one-sided binomial test against the chance rate gives
    p < 0.001.
    ``hashes``: a dict that receives the row hashes it compared (role -> :func:`~.hashing.row_hashes`
    of the frame on :func:`control_columns`, nothing without a control), for a caller that hashes
    the same rows on the same columns again (:meth:`synthguard.data.tables.Tables.in_canonical_order`).

    Examples
    --------
    >>> from synthguard.data.schema import infer_schema
    >>> o = pd.DataFrame({"a": [1.0, 2.0, 3.0] * 10})
    >>> got = {}
    >>> check_control({"original": o, "control": o + 10, "synthetic": o}, infer_schema(o), {}, hashes=got)
    []
    >>> sorted(got), got["original"].shape
    (['control', 'original', 'synthetic'], (30,))
    """
    control = frames.get("control")
    if control is None:
        return []
    cols = control_columns(schema.columns, schema)
    roles = [role for role in ("original", "control", "synthetic") if frames.get(role) is not None]
    got = dict(zip(roles, map_threads(lambda role: row_hashes(frames[role][cols]), roles), strict=True))
    if hashes is not None:
        hashes.update(got)
    return check_control_hashes(got["original"], got["control"], got.get("synthetic"),
                                labels, strict=strict)


def control_columns(columns: Sequence[str], schema: Schema) -> list[str]:
    """The columns of ``columns`` (in that order) whose row hashes :func:`check_control` compares:
    every column but the identifiers (all of them when every column is one)."""
    return [c for c in columns if schema.sdtype(c) != "id"] or list(columns)


def _repeated_share(h: np.ndarray) -> tuple[np.ndarray, float]:
    """The distinct values of ``h`` (ascending) and the share of its entries that occur more than
    once, from one sort (no search of every entry: 15 s at 10 million hashes)."""
    s = np.sort(h)
    if s.size == 0:
        return s, float("nan")
    same = s[1:] == s[:-1]  # equal to the next
    repeated = np.zeros(s.size, dtype=bool)
    repeated[1:] = same
    repeated[:-1] |= same
    return s[np.concatenate([[True], ~same])], float(repeated.mean())


def check_control_hashes(h_o: np.ndarray, h_c: np.ndarray, h_s: np.ndarray | None,
                         labels: Mapping[str, str], strict: bool = True) -> list[str]:
    """:func:`check_control` from the row hashes (:func:`~.hashing.row_hashes` on
    :func:`control_columns`) of the original, the control and the release (``None``: no
    release), in any row order: every answer is a function of the three multisets of hashes, so
    a cluster that gathers each row's 8-byte hash (never a row) gets one process's warnings and
    errors.

    Examples
    --------
    >>> h = np.arange(30, dtype=np.uint64)
    >>> check_control_hashes(h, h[::-1] + np.uint64(100), h, {})
    []
    >>> check_control_hashes(h, h[::-1].copy(), None, {}, strict=False)[0][:38]
    'control holds the same rows as origina'
    """
    h_o, h_c = np.asarray(h_o, dtype=np.uint64), np.asarray(h_c, dtype=np.uint64)
    o_lab, c_lab = labels.get("original", "original"), labels.get("control", "control")
    warns: list[str] = []

    def refuse(message: str, weak: str) -> None:
        if strict:
            raise InputError(message)
        warns.append(weak)  # drop-in APIs of libraries that allow it (synthguard.compat.anonymeter)

    if len(h_o) == len(h_c) and np.array_equal(np.sort(h_o), np.sort(h_c)):
        refuse(f"{c_lab} holds the same rows as {o_lab}: the control must be real rows held out from "
               "training, not the training data; give the holdout file, or leave the control out",
               f"{c_lab} holds the same rows as {o_lab}: the control must be real rows held out from "
               "training; every residual risk and baseline is meaningless with this control")
        return warns
    uniq, chance = _repeated_share(h_o)
    inside = isin_codes(h_c, uniq)  # control rows that are training rows
    if h_s is not None:
        h_s = np.asarray(h_s, dtype=np.uint64)
        same = len(h_s) == len(h_c) and np.array_equal(np.sort(h_s), np.sort(h_c))
        # judged on the control rows that are not training rows: a training row may sit in the
        # release and in a (wrongly overlapping) control alike, which the warning below reports
        fresh = ~inside
        in_release = float(isin_codes(h_c[fresh], h_s).mean()) if fresh.sum() >= MIN_ID_ROWS else 0.0
        if same or (in_release > RELEASE_SHARE and in_release >= chance + 0.25):
            s_lab = labels.get("synthetic", "synthetic")
            held = ("holds the same rows as" if same else
                    f"shares {float(isin_codes(h_c, h_s).mean()):.0%} of its rows (against {chance:.0%} "
                    "expected by chance) with")
            refuse(f"{c_lab} {held} the release {s_lab}: the control must be real rows held out from "
                   "training, never the release (every copy would look like chance); give the holdout "
                   "file as the control, or leave the control out",
                   f"{c_lab} {held} the release {s_lab}: the control must be real rows held out from "
                   "training; every residual risk and baseline is meaningless with this control")
            return warns
    share = float(inside.mean())
    if share >= chance + 0.02 and binomial_greater(int(inside.sum()), len(h_c), chance) < 1e-3:
        warns.append(f"{share:.1%} of the control rows ({int(inside.sum())} of {len(h_c)}) also occur in "
                     f"the original, against {chance:.1%} expected by chance (original rows repeated "
                     "within the original): the control must be real rows held out from training; shared "
                     "rows make residual risks and baselines look safer than they are")
    return warns
