"""Dates: ONE format per column (never cell by cell), day-first vs month-first decided from the
values of every table, numeric epochs for declared datetime columns.

Rules
-----
* A ``datetime_format`` in the column's metadata (strptime codes, SDV style) is used as given.
* ISO 8601 values (``2021-03-04``, ``2021-03-04T10:00``) are read as ISO.
* ``a/b/yyyy`` values (separator ``/``, ``.`` or ``-``): day-first when some first field exceeds 12,
  month-first when some second field does; both at once, or neither (every value ambiguous, e.g.
  only ``05/12/2020``), is an :class:`~synthguard.errors.InputError` naming the metadata key
  ``datetime_format`` that settles it. The evidence is pooled over original, release and control.
* Other spellings: pandas guesses one format from the first value and applies it to the column.
* Numbers in a column declared datetime are Unix epochs; the unit is the metadata's ``unit``
  (``s``, ``ms``, ``us``, ``ns``), else read from the largest magnitude over every table:
  below 1e11 seconds, below 1e14 milliseconds, below 1e17 microseconds, else nanoseconds
  (1e11 s is the year 5138; 1e11 ms is 1973).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from .arrowtext import arrow_strings, matches

# RE2 patterns (pyarrow.compute), one pass over a whole column; Python's re is never run per value
_ISO = r"^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([ T][0-9]{1,2}(:[0-9]{2}){0,2}(\.[0-9]+)?(Z|[+-][0-9]{2}:?[0-9]{2})?)?$"
#: a/b/yyyy (or a/b/yy) with one separator, ``/``, ``.`` or ``-`` (RE2 has no back-reference: one
#: alternative per separator), then the end or a time
_DMY = "|".join(rf"^[0-9]{{1,2}}{sep}[0-9]{{1,2}}{sep}([0-9]{{4}}|[0-9]{{2}})($|[ T])"
                for sep in ("/", r"\.", "-"))
#: the two first fields and the separator of a value matching ``_DMY``
_DMY_PARTS = r"^(?P<a>[0-9]{1,2})(?P<sep>[/.-])(?P<b>[0-9]{1,2})"
_EPOCH_DIGITS = r"^-?[0-9]+(\.[0-9]+)?$"
#: a UTC offset (or Z) ending a date-time: ``+01:00``, ``-0500``, ``Z``
_OFFSET = r"[ T][0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?(?:\.[0-9]+)?\s*(?:Z|[+-][0-9]{2}:?[0-9]{2})$"


def _strings(series: pd.Series) -> pd.Series:
    """The non-missing values as text without surrounding whitespace (one Arrow pass)."""
    s = series.dropna()
    if not (pd.api.types.is_object_dtype(s.dtype) or isinstance(s.dtype, pd.StringDtype)):
        s = s.astype(str)
    try:
        arr = arrow_strings(s)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # strings mixed with other objects
        arr = arrow_strings(s.astype(str))
    return pd.Series(pc.utf8_trim_whitespace(arr).to_pandas().to_numpy(dtype=object), index=s.index)


def _kind(values: pd.Series) -> str:
    """``iso``, ``dmy`` (a/b/yyyy), or ``other`` for the column's non-missing string values."""
    if len(values) and matches(values, _ISO).all():
        return "iso"
    if len(values) and matches(values, _DMY).all():
        return "dmy"
    return "other"


def looks_like_dates(sample: pd.Series) -> bool:
    """Whether every value of ``sample`` (strings) parses as a date with one format."""
    values = _strings(sample)
    if len(values) == 0:
        return False
    iso, dmy = date_kinds(values)
    return iso or dmy or parse_like_first(values)


def date_kinds(values: pd.Series) -> tuple[bool, bool]:
    """Whether every value of ``values`` (strings, missing dropped) is ISO 8601, and whether every
    one is ``a/b/yyyy`` (both ``True`` when there is none)."""
    values = _strings(values)
    if not len(values):
        return True, True
    return bool(matches(values, _ISO).all()), bool(matches(values, _DMY).all())


def parse_like_first(values: pd.Series) -> bool:
    """Whether every value of ``values`` (strings) parses as a date with the format pandas guesses
    from the first one. The values are parsed in one call: pandas 3 infers one resolution from all
    of them (a nanosecond value beside a year-3000 one leaves the latter unparsed), so parts of
    the values parsed apart may answer otherwise than the whole.

    Examples
    --------
    >>> parse_like_first(pd.Series(["2020/01/31 10:00", "2021/02/01 11:30"]))
    True
    >>> parse_like_first(pd.Series(["2020/01/31 10:00", "soon"]))
    False
    """
    values = _strings(values)
    if not len(values):
        return True
    return bool(_parse_guessed(values).notna().all())


def _parse_guessed(values: pd.Series) -> pd.Series:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "could not infer format": not parsed then -> NaT below
        try:
            return pd.to_datetime(values, errors="coerce")
        except (ValueError, TypeError, OverflowError):
            return pd.Series(pd.NaT, index=values.index)


def _example_key(column: str, fmt: str) -> str:
    return f'{{"columns": {{"{column}": {{"sdtype": "datetime", "datetime_format": "{fmt}"}}}}}}'


def _dmy_order(column: str, frames: Mapping[str, pd.Series], labels: Mapping[str, str]) -> bool:
    """``True`` for day-first, ``False`` for month-first, from the values of every table."""
    day_first = month_first = None
    sep = "/"
    for role, values in frames.items():
        if values.empty:
            continue
        parts = pc.extract_regex(arrow_strings(values), _DMY_PARTS)
        sep = parts.field("sep")[0].as_py() or sep
        a = pd.Series(pc.cast(parts.field("a"), pa.int64()).to_numpy(zero_copy_only=False), index=values.index)
        b = pd.Series(pc.cast(parts.field("b"), pa.int64()).to_numpy(zero_copy_only=False), index=values.index)
        if day_first is None and (a > 12).any():
            day_first = (role, values[a > 12].iloc[0])
        if month_first is None and (b > 12).any():
            month_first = (role, values[b > 12].iloc[0])
    fmt_d, fmt_m = f"%d{sep}%m{sep}%Y", f"%m{sep}%d{sep}%Y"
    if day_first and month_first:
        raise InputError(f"column {column!r} mixes day-first dates ({day_first[1]!r} in "
                         f"{labels.get(day_first[0], day_first[0])}) and month-first dates "
                         f"({month_first[1]!r} in {labels.get(month_first[0], month_first[0])}): "
                         f"write every table in one format, or set it in the metadata, e.g. "
                         f"{_example_key(column, fmt_d)}")
    if day_first:
        return True
    if month_first:
        return False
    example = next(iter(frames.values())).iloc[0]
    raise InputError(f"column {column!r} holds dates like {example!r} that read both day-first and "
                     f"month-first (no day above 12 tells them apart): set the format with the "
                     f"metadata key 'datetime_format', e.g. {_example_key(column, fmt_d)} or "
                     f"'{fmt_m}'")


def epoch_unit(values: np.ndarray) -> str:
    """The epoch unit read from the largest magnitude (see the module docstring)."""
    finite = np.abs(values[np.isfinite(values)])
    top = float(finite.max()) if finite.size else 0.0
    if top < 1e11:
        return "s"
    if top < 1e14:
        return "ms"
    if top < 1e17:
        return "us"
    return "ns"


def parse_datetime_columns(column: str, series: Mapping[str, pd.Series], labels: Mapping[str, str],
                           datetime_format: str | None = None,
                           unit: str | None = None) -> tuple[dict[str, pd.Series], str | None]:
    """Parse one datetime column in every table with one format.

    Parameters
    ----------
    column : str
        Column name (for messages).
    series : mapping
        Role -> the column's raw values in that table.
    labels : mapping
        Role -> file label, for messages.
    datetime_format, unit : str, optional
        From the column's metadata.

    Returns
    -------
    parsed : dict
        Role -> datetime64 series (missing stays NaT).
    note : str or None
        How the column was read when that is worth reporting (epochs, day-first).

    Raises
    ------
    InputError
        Values that do not parse with the column's format, an ambiguous day/month order, or
        day-first and month-first values in one column.
    """
    out: dict[str, pd.Series] = {}
    note = None
    todo = {r: s for r, s in series.items() if not pd.api.types.is_datetime64_any_dtype(s.dtype)}
    out.update({r: s for r, s in series.items() if r not in todo})
    if not todo:
        return out, None
    # numeric epochs: numeric dtype, or digit strings (a CSV column with a few blanks)
    numeric = {r: s for r, s in todo.items()
               if pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype)}
    for r, s in todo.items():
        if r not in numeric and datetime_format is None and len(text := _strings(s)) \
                and matches(text, _EPOCH_DIGITS).all():
            numeric[r] = pd.to_numeric(s, errors="coerce")
    if numeric:
        if len(numeric) != len(todo):
            raise InputError(f"column {column!r} holds epoch numbers in "
                             f"{', '.join(labels.get(r, r) for r in numeric)} but dates in the other "
                             "table(s): write it one way in every table")
        values = np.concatenate([pd.to_numeric(s, errors="coerce").to_numpy(dtype="float64")
                                 for s in numeric.values()])
        chosen = unit or epoch_unit(values)
        for r, s in numeric.items():
            num = pd.to_numeric(s, errors="coerce").astype("float64")
            try:
                out[r] = pd.to_datetime(num, unit=chosen, errors="coerce")
            except (OverflowError, ValueError) as exc:
                raise InputError(f"{labels.get(r, r)}: column {column!r}: epoch values do not fit unit "
                                 f"{chosen!r} ({exc}): set the metadata key 'unit'") from exc
            bad = num.notna() & out[r].isna()
            if bad.any():
                raise InputError(f"{labels.get(r, r)}: column {column!r}: {int(bad.sum())} epoch value(s) "
                                 f"out of range for unit {chosen!r}, e.g. {s[bad].iloc[0]!r}: set the "
                                 "metadata key 'unit' (s, ms, us, ns)")
        how = "given in the metadata" if unit else "read from their magnitude"
        return out, f"numeric Unix epochs in unit {chosen!r} ({how})"
    strings = {r: _strings(s) for r, s in todo.items()}
    kinds = {r: _kind(v) for r, v in strings.items()}
    dmy = {r: strings[r] for r, k in kinds.items() if k == "dmy"}
    day_first = _dmy_order(column, dmy, labels) if dmy and not datetime_format else None
    if day_first is not None:
        order = "day-first (DD/MM/YYYY)" if day_first else "month-first (MM/DD/YYYY)"
        note = f"dates in {', '.join(labels.get(r, r) for r in dmy)} read {order}"
    for r, s in todo.items():
        if datetime_format:
            kwargs: dict = {"format": datetime_format}
        elif kinds[r] == "iso":
            kwargs = {"format": "ISO8601"}
        elif kinds[r] == "dmy":
            kwargs = {"dayfirst": day_first}
        else:
            kwargs = {}
        stripped = np.full(len(s), None, dtype=object)  # stripped text, missing as None
        stripped[s.notna().to_numpy()] = strings[r].to_numpy(dtype=object)
        vals = pd.Series(stripped, index=s.index)
        # UTC offsets (ISO 8601 with +01:00 / +02:00 across a DST change): every value to its UTC
        # instant. Parsed with utc=True from the start: pandas 3 refuses mixed offsets without it
        # (and errors="coerce" then turns every value into NaT); pandas 2.0 returns objects.
        text = strings[r]
        has_offset = pd.Series(matches(text, _OFFSET) if len(text) and kinds[r] == "iso" else False,
                               index=text.index, dtype=bool)
        if has_offset.any() and not has_offset.all():
            raise InputError(f"{labels.get(r, r)}: column {column!r} mixes times with a UTC offset (e.g. "
                             f"{text[has_offset].iloc[0]!r}) and times without one (e.g. "
                             f"{text[~has_offset].iloc[0]!r}): which zone are the latter in? Write every "
                             "value with its offset (or every value in UTC without one)")
        utc = bool(has_offset.any())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                parsed = pd.to_datetime(vals, errors="coerce", utc=utc, **kwargs)
            except (ValueError, TypeError, OverflowError):
                parsed = pd.Series(pd.NaT, index=s.index)
            if not pd.api.types.is_datetime64_any_dtype(parsed.dtype) or \
                    (not utc and parsed.isna().all() and s.notna().any()):  # mixed UTC offsets
                try:
                    parsed = pd.to_datetime(vals, errors="coerce", utc=True, **kwargs)
                except (ValueError, TypeError, OverflowError):
                    parsed = pd.Series(pd.NaT, index=s.index)
        if getattr(parsed.dt, "tz", None) is not None:
            parsed = parsed.dt.tz_convert("UTC").dt.tz_localize(None)
        bad = s.notna() & parsed.isna()
        if bad.any():
            how = (f"the format {datetime_format!r} given in the metadata" if datetime_format
                   else "the one format of the column")
            if utc:
                how += (" (values with UTC offsets are read as UTC instants; an offset must be written "
                        "+HH:MM, +HHMM or Z)")
            raise InputError(f"{labels.get(r, r)}: column {column!r} is datetime but {int(bad.sum())} "
                             f"value(s) do not parse with {how}, e.g. {s[bad].iloc[0]!r}: fix them, set "
                             f"the metadata key 'datetime_format', or declare the column 'categorical'")
        out[r] = parsed
    return out, note
