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
  :mod:`synthguard.data.dates`).
* An undeclared column read from CSV is numeric when every value of every table parses as a
  number, unless some value is written with a leading zero (``01234``): then it is a text code in
  every table. A column mixing integer codes and other values (``unknown``) is categorical text in
  every table, with one warning naming it when the numbers are the majority; a column of decimals
  with a stray text value is typed table by table (text in a numerical column stays an error). A column some typed input
  (DataFrame, Parquet) holds as text is text everywhere. ``True``/``False`` spellings are booleans,
  as ``pandas.read_csv`` reads them.

Numbers are parsed with Python's correctly rounded ``float`` (NumPy's object-to-float cast), so a
CSV gives the same floats on pandas 2 and 3.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["canonical_labels", "decide_types", "nfc_series", "shortest_float64"]

_TRUE = frozenset({"True", "TRUE", "true"})
_FALSE = frozenset({"False", "FALSE", "false"})
#: numbers must be at least this share of a column's non-missing values before a column mixing
#: numbers and other values gets a warning (below it, it is plainly a text column)
MAJORITY = 0.5


def _is_text_dtype(dtype) -> bool:
    return (pd.api.types.is_object_dtype(dtype) or isinstance(dtype, pd.StringDtype)
            or (isinstance(dtype, pd.CategoricalDtype) and not pd.api.types.is_numeric_dtype(dtype.categories)))


def _is_number_dtype(dtype) -> bool:
    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


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


_PANDAS2 = int(pd.__version__.split(".", 1)[0]) < 3


def _numbers(text: pd.Series) -> pd.Series:
    """Number strings typed as ``pandas.read_csv`` types them (int64 when every value is an integer
    and none is missing, else float64); values that are not numbers become NaN."""
    return pd.to_numeric(text, errors="coerce")


def _exact(text: pd.Series, num: pd.Series) -> pd.Series:
    """``num`` (:func:`_numbers` of ``text``) with correctly rounded floats: ``pd.to_numeric`` on
    pandas 2 can be one unit in the last place off (Python's ``float`` is exact)."""
    if not _PANDAS2 or not pd.api.types.is_float_dtype(num.dtype):
        return num
    ok = num.notna().to_numpy()
    vals = num.to_numpy(dtype=np.float64, copy=True)
    try:
        vals[ok] = text.to_numpy(dtype=object)[ok].astype(np.float64)
    except (ValueError, TypeError):  # a spelling pandas accepts and Python's float does not
        return num
    return pd.Series(vals, index=num.index, name=num.name)


def _all_numbers(text: pd.Series) -> pd.Series | None:
    """The exact numbers of ``text`` when every present value is one, else ``None``."""
    num = _numbers(text)
    if bool((text.notna() & num.isna()).any()):
        return None
    return _exact(text, num)


def _leading_zero(text: pd.Series) -> str | None:
    """The first value written with a leading zero before a digit (``01234``), or ``None``."""
    if not _is_text_dtype(text.dtype):
        return None
    first = text.str.startswith("0", na=False).to_numpy(dtype=bool)
    if not first.any():
        return None
    cand = text[first]
    hit = cand.str.slice(1, 2).str.isdigit().fillna(False).to_numpy(dtype=bool)
    return str(cand[hit].iloc[0]) if hit.any() else None


def _as_booleans(text: pd.Series) -> pd.Series:
    truth = text.isin(_TRUE).to_numpy(dtype=bool)
    present = text.notna().to_numpy(dtype=bool)
    if present.all():
        return pd.Series(truth, index=text.index, name=text.name)
    out = np.full(len(text), np.nan, dtype=object)
    out[present] = truth[present].tolist()
    return pd.Series(out, index=text.index, name=text.name)


def _labels(s: pd.Series) -> pd.Series:
    """Numbers as text labels (``1234.0`` -> ``"1234"``), missing kept."""
    return canonical_labels(s.astype(object))


def canonical_labels(values: pd.Series) -> pd.Series:
    """Labels of a column that mixes kinds, as strings (``1.0`` and ``1`` both ``"1"``)."""
    return values.map(_canonical_label, na_action="ignore")


def _canonical_label(v: Any) -> Any:
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)


def decide_types(frames: dict[str, pd.DataFrame], text_roles: set[str], declared: Mapping[str, str],
                 labels: Mapping[str, str]) -> tuple[dict[str, list[str]], list[str], dict[str, str]]:
    """Decide each column's type from every table at once and cast every table to it (in place:
    ``frames`` are the evaluation's private copies).

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
                notes.setdefault(col, []).append(f"decimal values in {labels.get(role, role)} read as "
                                                 "numbers")
            elif s.dtype in (np.float32, np.float16):
                df[col] = pd.Series(shortest_float64(s.to_numpy()), index=s.index, name=col)
                float32.append(role)
        sd = declared.get(col)
        raw = {r: frames[r][col] for r in text_roles if r in frames}
        typed = {r: df[col] for r, df in frames.items() if r not in raw}
        if sd is None and raw:
            _decide_undeclared(col, frames, raw, typed, labels, notes, warns, reasons)
        elif sd == "numerical":
            for role, s in raw.items():
                num = _all_numbers(s)
                if num is not None:
                    frames[role][col] = num
        # 3. text (still text after the decision) in one Unicode form
        for role, df in frames.items():
            s = df[col]
            if _is_text_dtype(s.dtype):
                s2 = nfc_series(s)
                if s2 is not s:
                    notes.setdefault(col, []).append(f"text in {labels.get(role, role)} NFC-normalised "
                                                     "(accents written as one code point)")
                    df[col] = s2
        if float32:
            for role, df in frames.items():
                s = df[col]
                if role not in float32 and pd.api.types.is_float_dtype(s.dtype):
                    df[col] = pd.Series(shortest_float64(s.to_numpy(dtype=np.float64)), index=s.index,
                                        name=col)
            notes.setdefault(col, []).append(
                f"float32 values in {', '.join(labels.get(r, r) for r in float32)}: numbers of every table "
                "compared at float32 precision (shortest decimal form)")
    return notes, warns, reasons


def _decide_undeclared(col: str, frames: dict[str, pd.DataFrame], raw: Mapping[str, pd.Series],
                       typed: Mapping[str, pd.Series], labels: Mapping[str, str],
                       notes: dict[str, list[str]], warns: list[str], reasons: dict[str, str]) -> None:
    """The typing rule of one undeclared column that at least one CSV holds as text."""
    nums = {r: _numbers(s) for r, s in raw.items()}
    bad = {r: (s.notna() & nums[r].isna()).to_numpy() for r, s in raw.items()}
    n_present = sum(int(s.notna().sum()) for s in raw.values())
    n_bad = sum(int(b.sum()) for b in bad.values())
    typed_text = [s for s in typed.values() if _is_text_dtype(s.dtype)]
    typed_numbers = [r for r, s in typed.items() if _is_number_dtype(s.dtype)]
    if n_present == 0:
        return
    if n_bad == n_present:  # no number at all: text, or True/False spellings
        if not typed_text and not typed_numbers and all(
                bool(s.dropna().isin(_TRUE | _FALSE).all()) for s in raw.values()):
            for role, s in raw.items():
                frames[role][col] = _as_booleans(s)
        return
    zero = next((z for s in [*raw.values(), *typed_text] if (z := _leading_zero(s)) is not None), None)
    if n_bad == 0:
        if zero is not None:
            reasons[col] = f"codes written with leading zeros (e.g. {zero!r}): kept as text in every table"
        if zero is not None or typed_text:
            for role in typed_numbers:
                frames[role][col] = _labels(frames[role][col])
            return
        for role, s in raw.items():
            frames[role][col] = _exact(s, nums[role])
        return
    # numbers mixed with other values
    codes = True
    for role, s in raw.items():
        ok = ~bad[role] & s.notna().to_numpy()
        v = nums[role].to_numpy(dtype=np.float64)[ok]
        if not np.all(v == np.floor(v)) or bool(s[ok].str.contains(r"[.eE]", regex=True).any()):
            codes = False
            break
    if not codes and not typed_text:
        # measurements (decimals) with a stray value: each table typed on its own, so that a text
        # value in a numerical column stays the error naming it (tables._coerce)
        for role, s in raw.items():
            if not bad[role].any():
                frames[role][col] = _exact(s, nums[role])
        return
    # integer codes mixed with other values ('unknown'): categorical text in every table
    role = next(r for r, b in bad.items() if b.any())
    example, where = raw[role][bad[role]].iloc[0], labels.get(role, role)
    for r in typed_numbers:
        frames[r][col] = _labels(frames[r][col])
    reasons[col] = f"numbers and {n_bad} non-numeric value(s) (e.g. {example!r} in {where}): text in every table"
    if 1 - n_bad / n_present >= MAJORITY or typed_numbers:
        warns.append(f"column {col!r} holds numbers and {n_bad} non-numeric value(s) (e.g. {example!r} "
                     f"in {where}): read as categorical text in every table (compared by equality; codes "
                     "keep their leading zeros); declare its sdtype in the metadata to choose, or clean "
                     "the value(s)")


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

