"""One typing decision for every table of an evaluation (issue 22).

pandas guesses column types file by file (and, in a large CSV, chunk by chunk): ``01234`` becomes
1234 in one file and stays text in another, a float32 Parquet column holds ``0.10000000149011612``
where the CSV written from it holds ``0.1``, a DECIMAL column arrives as ``decimal.Decimal``
objects, and the same accented text can come in two Unicode forms. Identical rows then never match.
Here every CSV is read as text (:func:`synthguard.data.loading.load_table` with ``as_text=True``)
and each column's type is decided ONCE from the original, the release and the control together
(and the metadata), then every table is cast to it before anything is compared.

Rules, per column
-----------------
* Text values (and column names, handled in :mod:`synthguard.data.tables`) are NFC-normalised.
* float32 (and float16) values become the float64 of their shortest decimal repr (``0.1``, as
  written to CSV); when any table holds the column as float32, the other tables' numbers are
  rounded to float32 the same way, so the same data compare equal however they were stored.
* ``decimal.Decimal`` values (SQL DECIMAL / NUMERIC through Parquet) become float64.
* A column declared in the metadata keeps its declared kind: text for categorical, id, text and
  boolean columns (a code keeps its leading zeros), numbers for numerical columns (values that do
  not parse stay text for the usual error naming them), text for dates (one format per column,
  :mod:`synthguard.data.dates`). A categorical (or id) column of integer codes written ``3`` in
  one table and ``3.0`` in another is compared as the same codes (noted).
* An undeclared column read from CSV is numeric when every value of every table parses as a
  number, unless some value is written with a leading zero (``01234``): then it is a text code in
  every table. A column mixing integer codes and other values (``unknown``) is categorical text in
  every table, with one warning naming it when the numbers are the majority; a column of decimals
  with a stray text value is typed table by table (text in a numerical column stays an error). A
  column some typed input (DataFrame, Parquet) holds as text is text everywhere. ``True``/``False``
  spellings are booleans, as ``pandas.read_csv`` reads them; 0/1 in some tables and
  ``True``/``False`` (or a bool column) in others are booleans in every table (noted).

Each raw text column is read once as Arrow strings (:class:`~synthguard.data.arrowtext.TextColumn`)
and every question above is one vectorised pass over it. Numbers are parsed correctly rounded
(Arrow's parser, as Python's ``float``), so a CSV gives the same floats on pandas 2 and 3.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .arrowtext import TextColumn
from .notes import decimal_note, float32_note, nfc_note
from .typerules import _TRUE, TextFacts, TypedFacts, _is_text_dtype, decide_column

__all__ = ["canonical_labels", "cast_text", "cast_typed", "decide_types", "nfc_series", "shortest_float64"]

def nfc_series(s: pd.Series) -> pd.Series:
    """``s`` with its string values NFC-normalised (``é`` as one code point); the same object when
    nothing changes. Works on the distinct values, not on every row."""
    if not _is_text_dtype(s.dtype) or isinstance(s.dtype, pd.CategoricalDtype):
        return s
    uniq = pd.Index(pd.unique(s.dropna()))
    kind = pd.api.types.infer_dtype(uniq) if len(uniq) else "empty"
    if kind not in ("string", "mixed", "mixed-integer"):
        return s
    if kind == "string" and "".join(uniq).isascii():  # one C pass: nothing to normalise
        return s
    import unicodedata

    vals = np.asarray(uniq, dtype=object)  # distinct values only; numbers mixed in stay as they are
    norm = np.array([unicodedata.normalize("NFC", v) if isinstance(v, str) else v for v in vals],
                    dtype=object)
    changed = np.array([isinstance(v, str) and v != w for v, w in zip(vals, norm, strict=True)],
                       dtype=bool)
    if not changed.any():
        return s
    mapping = pd.Series(norm[changed], index=pd.Index(vals[changed], dtype=object))
    hit = s.isin(mapping.index)
    return s.where(~hit, s.map(mapping))


def shortest_float64(values: np.ndarray) -> np.ndarray:
    """float32 values as the float64 of their shortest decimal repr (float32 ``0.1`` -> ``0.1``)."""
    return np.asarray(values, dtype=np.float32).astype(str).astype(np.float64)


def _as_booleans(text: TextColumn) -> pd.Series:
    truth = text.isin(_TRUE)
    present = text.present
    s = text.values
    if present.all():
        return pd.Series(truth, index=s.index, name=s.name)
    out = np.full(len(truth), np.nan, dtype=object)
    out[present] = truth[present]
    return pd.Series(out, index=s.index, name=s.name)


def _labels(s: pd.Series) -> pd.Series:
    """Numbers as text labels (``1234.0`` -> ``"1234"``), missing kept."""
    return canonical_labels(s)


#: integers up to this magnitude are exact in float64: an integral float below it is written as
#: the integer (numpy over the whole column), above it through Python's ``int`` (rare)
_EXACT_INT = 2.0 ** 53


def canonical_labels(values: pd.Series) -> pd.Series:
    """Labels of a column that mixes kinds, as strings (``1.0`` and ``1`` both ``"1"``), missing
    kept. Numbers are written by numpy over the whole column; other objects once per distinct
    value.

    Examples
    --------
    >>> canonical_labels(pd.Series([1.0, 2.5, None])).tolist()
    ['1', '2.5', nan]
    """
    dtype = values.dtype
    if pd.api.types.is_integer_dtype(dtype) and not isinstance(dtype, pd.api.extensions.ExtensionDtype):
        return pd.Series(values.to_numpy().astype(str).tolist(), index=values.index, name=values.name,
                         dtype=object)
    if pd.api.types.is_float_dtype(dtype) and not isinstance(dtype, pd.api.extensions.ExtensionDtype):
        v = values.to_numpy()
        out = np.full(len(v), np.nan, dtype=object)
        ok = ~np.isnan(v)
        with np.errstate(invalid="ignore"):
            whole = ok & (v == np.floor(v))
        small = whole & (np.abs(v) < _EXACT_INT)
        if small.any():
            out[small] = v[small].astype(np.int64).astype(str).tolist()
        rest = ok & ~whole
        if rest.any():
            out[rest] = v[rest].astype(str).tolist()
        big = whole & ~small
        for i in np.flatnonzero(big):  # integral floats beyond 2**53: a handful at most
            out[i] = _canonical_label(v[i])
        return pd.Series(out, index=values.index, name=values.name)
    # objects: one label per distinct value. Equality alone merges True with 1 and the float 2.0
    # with 2 (labels "True" / "1" and "2" / "2"), the text alone merges 2.0 with "2.0": the pair
    # (value, text) tells every label apart
    arr = values.to_numpy(dtype=object)
    missing = pd.isna(arr)
    by_value, _ = pd.factorize(arr, use_na_sentinel=True)
    by_text, _ = pd.factorize(arr.astype(str))
    pair = by_value.astype(np.int64) * (int(by_text.max(initial=0)) + 1) + by_text
    _, first, inverse = np.unique(pair, return_index=True, return_inverse=True)
    labels = np.array([_canonical_label(arr[i]) for i in first], dtype=object)
    out = labels[inverse.reshape(-1)]
    out[missing] = np.nan
    return pd.Series(out, index=values.index, name=values.name)


def _canonical_label(v: Any) -> Any:
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)


def decide_types(frames: dict[str, pd.DataFrame], text_roles: set[str], declared: Mapping[str, str],
                 labels: Mapping[str, str]) -> tuple[dict[str, list[str]], list[str], dict[str, str]]:
    """Decide each column's type from every table at once and cast every table to it (in place:
    ``frames`` are the evaluation's private copies).

    Each raw text column is read once (:class:`~synthguard.data.arrowtext.TextColumn`: one Arrow
    pass per question, no Python call per value).

    Parameters
    ----------
    frames : dict
        Role -> table, columns aligned.
    text_roles : set of str
        Roles read from CSV as text (every value a string or missing).
    declared : mapping
        Column -> sdtype declared in the metadata (normalised spelling).
    labels : mapping
        Role -> file label, for messages.

    Returns
    -------
    notes : dict
        Column -> how its values were read (reported under ``inferred_metadata``).
    warnings : list of str
        One per column whose numbers had to be read as text because of non-numeric values.
    reasons : dict
        Column -> the reason to report for an inferred categorical sdtype.

    Examples
    --------
    >>> frames = {"original": pd.DataFrame({"a": ["01", "2"]}), "synthetic": pd.DataFrame({"a": ["2", "3"]})}
    >>> _, _, reasons = decide_types(frames, {"original", "synthetic"}, {}, {})
    >>> frames["synthetic"]["a"].tolist(), "leading zeros" in reasons["a"]
    (['2', '3'], True)
    """
    notes: dict[str, list[str]] = {}
    warns: list[str] = []
    reasons: dict[str, str] = {}
    columns = list(next(iter(frames.values())).columns)
    for col in columns:
        # 1. per typed table: float32 and Decimal to float64
        float32 = []
        for role, df in frames.items():
            s = df[col]
            if role in text_roles:
                continue
            if pd.api.types.is_object_dtype(s.dtype) and pd.api.types.infer_dtype(s, skipna=True) == "decimal":
                df[col] = s.astype("float64")
                notes.setdefault(col, []).append(decimal_note(labels.get(role, role)))
            elif s.dtype in (np.float32, np.float16):
                df[col] = pd.Series(shortest_float64(s.to_numpy()), index=s.index, name=col)
                float32.append(role)
        sd = declared.get(col)
        raw = {r: TextColumn(df[col]) for r, df in frames.items() if r in text_roles}  # role order
        typed = {r: df[col] for r, df in frames.items() if r not in raw}
        # 2. the decision (:func:`~synthguard.data.typerules.decide_column` on the whole
        # columns' facts): role -> the column's new values
        if raw and (sd is None or sd in ("numerical", "categorical", "id")):
            decided = decide_column(col, {r: TextFacts.of(t) for r, t in raw.items()},
                                    {r: TypedFacts.of(s) for r, s in typed.items()}, sd, labels)
        else:
            decided = decide_column(col, {}, {}, sd, labels)
        decided.report_into(col, notes, warns, reasons)
        new = {role: cast_text(how, raw[role]) if role in raw else cast_typed(how, typed[role])
               for role, how in decided.casts.items()}
        for role, s in new.items():
            frames[role][col] = s
        # 3. text (still text after the decision) in one Unicode form
        for role, df in frames.items():
            if role in raw and role not in new:
                s2 = raw[role].nfc()
            else:
                s = df[col]
                s2 = nfc_series(s) if _is_text_dtype(s.dtype) else s
                s2 = None if s2 is s else s2
            if s2 is not None:
                notes.setdefault(col, []).append(nfc_note(labels.get(role, role)))
                df[col] = s2
        if float32:
            for role, df in frames.items():
                s = df[col]
                if role not in float32 and pd.api.types.is_float_dtype(s.dtype):
                    df[col] = pd.Series(shortest_float64(s.to_numpy(dtype=np.float64)), index=s.index,
                                        name=col)
            notes.setdefault(col, []).append(float32_note(labels.get(r, r) for r in float32))
    return notes, warns, reasons


def _zero_one(s: pd.Series) -> pd.Series:
    """0/1 numbers as booleans (missing kept, as object)."""
    v = s.to_numpy(dtype=np.float64, na_value=np.nan)
    present = ~np.isnan(v)
    if present.all():
        return pd.Series(v == 1.0, index=s.index, name=s.name)
    out = np.full(len(v), np.nan, dtype=object)
    out[present] = v[present] == 1.0
    return pd.Series(out, index=s.index, name=s.name)


def cast_text(how: str, text: TextColumn, int64: bool | None = None) -> pd.Series:
    """A raw text column cast as :class:`~synthguard.data.typerules.ColumnCast` says (``how``).

    Parameters
    ----------
    how : str
        ``"numbers"``, ``"booleans"``, ``"zero_one"`` or ``"codes"``.
    text : TextColumn
        The raw column (or one partition of it).
    int64 : bool, optional
        For ``"numbers"``: whether the whole column is read as int64
        (:attr:`TextFacts.int64 <synthguard.data.typerules.TextFacts.int64>` of its table; a
        partition of integers in a column holding decimals elsewhere is float64); ``None``: as
        this column's own values say.

    Returns
    -------
    Series

    Examples
    --------
    >>> t = TextColumn(pd.Series(["1", "2"]))
    >>> cast_text("numbers", t).dtype, cast_text("numbers", t, int64=False).dtype
    (dtype('int64'), dtype('float64'))
    >>> codes = cast_text("codes", TextColumn(pd.Series(["3.0", None])))
    >>> codes[0], bool(pd.isna(codes[1]))
    ('3', True)
    """
    if how == "numbers":
        num = text.numbers
        if int64 is None or int64 == pd.api.types.is_integer_dtype(num.dtype):
            return num
        return num.astype(np.int64 if int64 else np.float64)
    if how == "booleans":
        return _as_booleans(text)
    if how == "zero_one":
        return _zero_one(text.numbers)
    if how == "codes":
        return _labels(text.numbers).where(text.present, text.values)
    raise ValueError(f"unknown cast {how!r}")


def cast_typed(how: str, values: pd.Series) -> pd.Series:
    """A typed column cast as :class:`~synthguard.data.typerules.ColumnCast` says (``how``:
    ``"zero_one"`` or ``"labels"``).

    Examples
    --------
    >>> cast_typed("labels", pd.Series([3, 4])).tolist()
    ['3', '4']
    """
    if how == "zero_one":
        return _zero_one(values)
    if how == "labels":
        return _labels(values)
    raise ValueError(f"unknown cast {how!r}")


def declared_sdtypes(metadata: Mapping | None) -> dict[str, str]:
    """Column -> declared sdtype (normalised spelling) of SynEval/SDV metadata, without validation
    (:func:`synthguard.data.schema.infer_schema` validates)."""
    from .schema import _SDTYPE_ALIASES, SDTYPES, SDV_PII_SDTYPES, sdv_to_syneval

    if not metadata:
        return {}
    try:
        meta = sdv_to_syneval(dict(metadata))
    except Exception:  # noqa: BLE001 - reported by infer_schema
        return {}
    cols = meta.get("columns")
    out: dict[str, str] = {}
    if isinstance(cols, Mapping):
        for name, info in cols.items():
            sd = info.get("sdtype") if isinstance(info, Mapping) else info
            if sd is None:
                continue
            sd = str(sd).strip().lower()
            sd = _SDTYPE_ALIASES.get(sd, sd)
            out[str(name)] = "categorical" if sd in SDV_PII_SDTYPES else sd if sd in SDTYPES else "categorical"
    for name in meta.get("text_columns") or []:
        out.setdefault(str(name), "text")
    return out

