"""The same value written two ways in two files: ``WHITE`` in the release and ``white`` in the
original, ``03`` and ``3``, ``3.0`` and ``3``, ``true`` and ``1``.

Values of a categorical column are compared as written (two codes may differ only by case or a
leading zero), so such rows never match an original row and copies hide. The typing decision aligns
what is surely the same value (:mod:`synthguard.data.coltypes`: 0/1 and True/False, ``3`` and ``3.0``
in a column of numbers); what may be distinct codes is warned about here, naming the column, both
spellings and the fix. Everything works on the distinct values of each table, never per row.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.compute as pc

from .arrowtext import TextColumn
from .quirks import isin_values
from .schema import Schema

__all__ = ["spelling_warnings", "spelling_warnings_of"]

#: rows (share of the table) written differently before a column is warned about: below it, a
#: column with many distinct values can hold both spellings of a few names by nature
MIN_SHARE = 0.01


def _keys(values: np.ndarray) -> np.ndarray:
    """A spelling-free key per distinct value: case-folded text; numbers as their canonical label
    (``03``, ``3.0`` and ``3`` -> ``"3"``); ``true``/``false`` as ``"1"``/``"0"``."""
    from .coltypes import canonical_labels

    text = pd.Series(values, dtype=object).astype(str)
    col = TextColumn(text)
    low = pc.utf8_lower(col.arrow).to_numpy(zero_copy_only=False).astype(object)
    low[low == "true"] = "1"
    low[low == "false"] = "0"
    num = col.is_number
    if num.any():
        low[num] = canonical_labels(col.numbers[num]).to_numpy(dtype=object)
    return low


def _kind(a: str, b: str) -> tuple[str, str]:
    """What differs between two spellings of one value, and the fix."""
    if a.casefold() == b.casefold():
        return "case", "if they are the same values, write them in one case in every file"
    if {a.lower(), b.lower()} & {"true", "false"}:
        return ("true/false against 1/0", "declare the column 'boolean' in the metadata to read both as "
                "booleans, or write it one way in every file")
    return ("leading zeros or a decimal point", "if they are the same codes, write them one way in every "
            "file (e.g. zero-padded to one width), or declare the column 'numerical' in the metadata to "
            "compare by value")


def spelling_warnings(frames: Mapping[str, pd.DataFrame], schema: Schema,
                      labels: Mapping[str, str]) -> tuple[list[str], set[tuple[str, str]]]:
    """One warning per categorical column and table whose values the original writes differently
    (case, leading zeros, a decimal point, true/false vs 1/0) on at least 1 % of the table's rows.

    Parameters
    ----------
    frames : mapping
        Role -> typed table (after the typing decision).
    schema : Schema
        Column sdtypes.
    labels : mapping
        Role -> file label, for messages.

    Returns
    -------
    warnings : list of str
        Each names the column, both spellings with their files, and the fix.
    warned : set of (column, role)
        The pairs warned about (the generic "share nothing" warning is then not repeated).

    Examples
    --------
    >>> from synthguard.data import infer_schema
    >>> o = pd.DataFrame({"race": ["white", "black"] * 20})
    >>> s = pd.DataFrame({"race": ["WHITE", "black"] * 20})
    >>> warns, _ = spelling_warnings({"original": o, "synthetic": s}, infer_schema(o), {})
    >>> "'WHITE'" in warns[0] and "'white'" in warns[0]
    True
    """
    original = frames["original"]
    distinct = {col: pd.unique(original[col]) for col in schema.of_type("categorical")}
    counts = {role: {col: df[col].value_counts(dropna=True, sort=False) for col in distinct}
              for role, df in frames.items() if role != "original"}
    return spelling_warnings_of(distinct, counts, {r: len(df) for r, df in frames.items()}, labels)


def spelling_warnings_of(distinct: Mapping[str, Any], counts: Mapping[str, Mapping[str, pd.Series]],
                         rows: Mapping[str, int], labels: Mapping[str, str]
                         ) -> tuple[list[str], set[tuple[str, str]]]:
    """:func:`spelling_warnings` from the tables' distinct values: per categorical column (in
    schema order), the original's distinct values in order of first appearance (``distinct``);
    per other table (role order) and column, its values' counts indexed by the distinct present
    values in order of first appearance (``counts``, as ``value_counts(sort=False)``); each
    table's rows (``rows``). A cluster gathers them from its partitions.

    Examples
    --------
    >>> o = np.array(["white", "black"], dtype=object)
    >>> c = {"synthetic": {"race": pd.Series([20, 20], index=["WHITE", "black"])}}
    >>> warns, warned = spelling_warnings_of({"race": o}, c, {"synthetic": 40}, {})
    >>> warned
    {('race', 'synthetic')}
    """
    warns: list[str] = []
    warned: set[tuple[str, str]] = set()
    o_lab = labels.get("original", "original")
    for col, o_vals in distinct.items():
        o_vals = o_vals[~pd.isna(o_vals)]  # missing dropped from the distinct values, not the rows
        if len(o_vals) == 0:
            continue
        o_keys = _keys(o_vals)
        first = pd.Series(o_vals, dtype=object).groupby(o_keys, sort=False).first()
        for role, of_role in counts.items():
            counted = of_role[col]
            if counted.empty:
                continue
            vals = counted.index.to_numpy(dtype=object)
            new = ~isin_values(vals, o_vals)
            if not new.any():
                continue
            keys = _keys(vals[new])
            hit = pd.Index(first.index).get_indexer(keys) >= 0
            n_rows = int(counted.to_numpy()[new][hit].sum())
            if not hit.any() or n_rows < max(1.0, MIN_SHARE * rows[role]):
                continue
            i = int(np.argmax(counted.to_numpy()[new] * hit))  # the most frequent such value
            theirs, ours = str(vals[new][i]), str(first[keys[i]])
            kind, fix = _kind(theirs, ours)
            lab = labels.get(role, role)
            warns.append(f"column {col!r}: {n_rows} row(s) of {lab} hold values that {o_lab} writes "
                         f"differently ({kind}: e.g. {theirs!r} in {lab}, {ours!r} in {o_lab}); values "
                         f"are compared as written, so these rows never match an original row; {fix}")
            warned.add((col, role))
    return warns, warned

