"""The typing rule of :func:`~synthguard.data.coltypes.decide_types`, split into facts and a decision.

One process asks its questions of a whole raw CSV column (:class:`~synthguard.data.arrowtext.TextColumn`);
a cluster asks them of every partition of the column. Both call the same functions here: each
column (or partition of a column) gives its :class:`TextFacts` (a CSV read as text) or
:class:`TypedFacts` (a typed input: DataFrame, Parquet), the facts of a table's partitions are
merged in table order (:meth:`TextFacts.merge`, :meth:`TypedFacts.merge`) and
:func:`decide_column` decides, from every table's facts and the declared sdtype, how each table's
values are cast (:class:`ColumnCast`: the cast of each role, and the note, warning and reason one
process reports). :func:`~synthguard.data.coltypes.cast_text` and
:func:`~synthguard.data.coltypes.cast_typed` cast the values.

Examples
--------
>>> import pandas as pd
>>> from synthguard.data.arrowtext import TextColumn
>>> parts = [TextFacts.of(TextColumn(pd.Series(["3", "1"]))), TextFacts.of(TextColumn(pd.Series(["2"])))]
>>> whole = TextFacts.merge(parts)
>>> whole.n_present, whole.all_numbers, whole.int64
(3, True, True)
>>> decide_column("a", {"original": whole}, {}, None, {}).casts
{'original': 'numbers'}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .arrowtext import TextColumn

__all__ = ["ColumnCast", "TextFacts", "TypedFacts", "decide_column"]

_TRUE = frozenset({"True", "TRUE", "true"})
_FALSE = frozenset({"False", "FALSE", "false"})
#: numbers must be at least this share of a column's non-missing values before a column mixing
#: numbers and other values gets a warning (below it, it is plainly a text column)
MAJORITY = 0.5


def _is_text_dtype(dtype: Any) -> bool:
    return (pd.api.types.is_object_dtype(dtype) or isinstance(dtype, pd.StringDtype)
            or (isinstance(dtype, pd.CategoricalDtype) and not pd.api.types.is_numeric_dtype(dtype.categories)))


def _is_number_dtype(dtype: Any) -> bool:
    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


@dataclass(frozen=True)
class TextFacts:
    """What the typing rule asks of one raw text column (or of one partition of it).

    ``int64``: :attr:`TextColumn.numbers <synthguard.data.arrowtext.TextColumn.numbers>` is int64
    (every value an integer literal, none missing; ``True`` for no row at all, so that an empty
    partition does not decide). The examples (``leading_zero``, ``first_bad``, ``first_value``)
    are the first in the column's order.
    """

    rows: int
    n_present: int
    n_numbers: int
    #: present values spelled ``True``/``False`` (as ``pandas.read_csv`` reads booleans)
    n_true_false: int
    #: every number is 0 or 1
    zero_one: bool
    #: every number is a whole number
    integral: bool
    #: every number is written without a decimal point or exponent
    written_as_integers: bool
    int64: bool
    leading_zero: str | None
    first_bad: str | None
    first_value: str | None

    @property
    def all_numbers(self) -> bool:
        """Every present value is a number."""
        return self.n_numbers == self.n_present

    @property
    def only_true_false(self) -> bool:
        """Every present value spells a boolean ``True``/``False``."""
        return self.n_true_false == self.n_present

    @classmethod
    def of(cls, t: TextColumn) -> TextFacts:
        """The facts of the raw column ``t`` (vectorised passes, cached by ``t``).

        Examples
        --------
        >>> f = TextFacts.of(TextColumn(pd.Series(["01", "x", None, "1.0"])))
        >>> f.n_present, f.n_numbers, f.leading_zero, f.first_bad, f.written_as_integers
        (3, 2, '01', 'x', False)
        """
        rows = len(t.present)
        # int64 only when every value is a number (:attr:`TextColumn.numbers`): the other
        # columns' numbers read without that decision (its passes over the spellings)
        every = rows > 0 and t.n_numbers == rows
        num = t.number_values[t.is_number]
        with np.errstate(invalid="ignore"):
            integral = bool(np.all(num == np.floor(num)))
        bad = t.present & ~t.is_number
        return cls(rows=rows, n_present=t.n_present, n_numbers=t.n_numbers,
                   # a number is never spelled True/False: the pass skipped for number columns
                   n_true_false=0 if t.all_numbers else int(t.isin(_TRUE | _FALSE).sum()),
                   zero_one=bool(np.isin(num, (0.0, 1.0)).all()), integral=integral,
                   written_as_integers=t.written_as_integers if t.n_numbers else True,
                   int64=rows == 0 or (every and pd.api.types.is_integer_dtype(t.numbers.dtype)),
                   leading_zero=t.leading_zero, first_bad=t.first(bad) if bad.any() else None,
                   first_value=t.first(t.present) if t.n_present else None)

    @staticmethod
    def merge(parts: Sequence[TextFacts]) -> TextFacts:
        """The facts of a column from those of its partitions, in table order.

        Examples
        --------
        >>> a, b = (TextFacts.of(TextColumn(pd.Series(v))) for v in (["1"], [None]))
        >>> TextFacts.merge([a, b]).int64, TextFacts.merge([a, a]).int64
        (False, True)
        """
        def first(values: Sequence[str | None]) -> str | None:
            return next((v for v in values if v is not None), None)

        rows = sum(p.rows for p in parts)
        return TextFacts(rows=rows, n_present=sum(p.n_present for p in parts),
                         n_numbers=sum(p.n_numbers for p in parts),
                         n_true_false=sum(p.n_true_false for p in parts),
                         zero_one=all(p.zero_one for p in parts), integral=all(p.integral for p in parts),
                         written_as_integers=all(p.written_as_integers for p in parts),
                         int64=rows > 0 and all(p.int64 for p in parts),
                         leading_zero=first([p.leading_zero for p in parts]),
                         first_bad=first([p.first_bad for p in parts]),
                         first_value=first([p.first_value for p in parts]))


@dataclass(frozen=True)
class TypedFacts:
    """What the typing rule asks of one typed column (or of one partition of it): its kind of
    dtype (``"bool"``, ``"number"``, ``"text"`` or ``"other"``), its present values, whether they
    are all 0 or 1, and, for text, the first value written with a leading zero."""

    kind: str
    n_present: int
    zero_one: bool
    leading_zero: str | None

    @classmethod
    def of(cls, s: pd.Series) -> TypedFacts:
        """The facts of the typed column ``s``.

        Examples
        --------
        >>> TypedFacts.of(pd.Series([0, 1, 1]))
        TypedFacts(kind='number', n_present=3, zero_one=True, leading_zero=None)
        """
        dtype = s.dtype
        kind = ("bool" if pd.api.types.is_bool_dtype(dtype) else "number" if _is_number_dtype(dtype)
                else "text" if _is_text_dtype(dtype) else "other")
        n_present = int(s.notna().sum())
        zero_one = kind == "number" and bool(s.dropna().isin((0, 1)).all())
        zero = None
        if kind == "text":
            t = text_column(s)
            zero = None if t is None else t.leading_zero
        return cls(kind, n_present, zero_one, zero)

    @staticmethod
    def merge(parts: Sequence[TypedFacts]) -> TypedFacts:
        """The facts of a column from those of its partitions (kind of the first one holding a
        value), in table order."""
        held = [p for p in parts if p.n_present] or list(parts[:1])
        return TypedFacts(held[0].kind, sum(p.n_present for p in parts),
                          all(p.zero_one for p in held),
                          next((p.leading_zero for p in parts if p.leading_zero is not None), None))


def text_column(s: pd.Series) -> TextColumn | None:
    """A typed table's text column as a :class:`TextColumn` (``None`` when it mixes strings with
    other objects, e.g. numbers in an object column)."""
    import pyarrow as pa

    try:
        return TextColumn(s)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None


@dataclass
class ColumnCast:
    """How each table's values of one column are cast (role -> ``"numbers"``, ``"booleans"``,
    ``"zero_one"``, ``"labels"`` or ``"codes"``; roles left out keep theirs), and what one process
    reports of it: a note (``inferred_metadata``), a warning, a reason for an inferred categorical
    sdtype."""

    casts: dict[str, str] = field(default_factory=dict)
    note: str | None = None
    warning: str | None = None
    reason: str | None = None

    def report_into(self, col: str, notes: dict[str, list[str]], warnings: list[str],
                    reasons: dict[str, str]) -> None:
        """File what one process reports of the decision of ``col``: its note under the column,
        its warning, its reason (one place for :func:`~synthguard.data.coltypes.decide_types`
        and the cluster's decision).

        Examples
        --------
        >>> notes, warns, reasons = {}, [], {}
        >>> ColumnCast(note="n", reason="r").report_into("g", notes, warns, reasons)
        >>> notes, warns, reasons
        ({'g': ['n']}, [], {'g': 'r'})
        """
        if self.note:
            notes.setdefault(col, []).append(self.note)
        if self.warning:
            warnings.append(self.warning)
        if self.reason:
            reasons[col] = self.reason


def decide_column(col: str, raw: Mapping[str, TextFacts], typed: Mapping[str, TypedFacts],
                  declared: str | None, labels: Mapping[str, str]) -> ColumnCast:
    """The typing decision of one column from every table's facts (the rules of
    :func:`~synthguard.data.coltypes.decide_types`).

    Parameters
    ----------
    col : str
        The column.
    raw : mapping
        Role -> the :class:`TextFacts` of the tables read from CSV as text (roles in the order
        original, synthetic, control).
    typed : mapping
        Role -> the :class:`TypedFacts` of the other tables.
    declared : str or None
        The sdtype declared in the metadata.
    labels : mapping
        Role -> file label, for messages.

    Returns
    -------
    ColumnCast

    Examples
    --------
    >>> f = {r: TextFacts.of(TextColumn(pd.Series(v))) for r, v in (("original", ["3"]), ("synthetic", ["3.0"]))}
    >>> got = decide_column("g", f, {}, "categorical", {"original": "a.csv", "synthetic": "b.csv"})
    >>> got.casts, got.note
    ({'synthetic': 'codes'}, "integer codes written with a decimal point in b.csv (e.g. '3.0') and without one in a.csv: compared as the same codes")
    """
    if declared is None and raw:
        return _decide_undeclared(col, raw, typed, labels)
    if declared == "numerical":
        return ColumnCast({role: "numbers" for role, t in raw.items() if t.all_numbers})
    if declared in ("categorical", "id") and raw:
        return _number_codes(raw, typed, labels)
    return ColumnCast()


def _bool_spellings(raw: Mapping[str, TextFacts], typed: Mapping[str, TypedFacts],
                    labels: Mapping[str, str]) -> ColumnCast | None:
    """0/1 in some tables and True/False in others (CSV text, or a bool column): booleans in
    every table, noted; ``None`` when the column is not written that way."""
    words: dict[str, str] = {}
    for role, t in raw.items():
        if t.n_present == 0:
            continue
        if t.only_true_false:
            words[role] = "True/False"
        elif t.all_numbers and t.zero_one:
            words[role] = "0/1"
        else:
            return None
    for role, s in typed.items():
        if s.kind == "bool":
            words[role] = "True/False"
        elif s.kind == "number" and s.zero_one and s.n_present:
            words[role] = "0/1"
        else:
            return None
    if set(words.values()) != {"True/False", "0/1"}:
        return None
    casts: dict[str, str] = {}
    for role in raw:
        if words.get(role) == "True/False":
            casts[role] = "booleans"
        elif role in words:
            casts[role] = "zero_one"
    for role in typed:
        if words[role] == "0/1":
            casts[role] = "zero_one"
    shown = "; ".join(f"{w} in {', '.join(labels.get(r, r) for r in words if words[r] == w)}"
                      for w in ("0/1", "True/False"))
    return ColumnCast(casts, note=f"written {shown}: read as booleans True/False in every table")


def _number_codes(raw: Mapping[str, TextFacts], typed: Mapping[str, TypedFacts],
                  labels: Mapping[str, str]) -> ColumnCast:
    """A column declared categorical (or id) holding numbers only, written ``3`` in one table and
    ``3.0`` in another: the same code, compared as ``"3"`` (noted). Codes with leading zeros keep
    their spelling (``03`` may be another code than ``3``: the spelling check warns)."""
    if not all(t.all_numbers and t.leading_zero is None for t in raw.values()):
        return ColumnCast()
    as_float = [r for r, t in raw.items() if t.n_present and not t.written_as_integers]
    as_int = [r for r, t in raw.items() if t.n_present and t.written_as_integers]
    as_int += [r for r, s in typed.items() if s.kind == "number"]
    if not as_float or not as_int:
        return ColumnCast()
    if not all(raw[role].integral for role in as_float):
        return ColumnCast()  # decimals: not integer codes written two ways
    note = (f"integer codes written with a decimal point in {', '.join(labels.get(r, r) for r in as_float)} "
            f"(e.g. {raw[as_float[0]].first_value!r}) and without one in "
            f"{', '.join(labels.get(r, r) for r in as_int)}: compared as the same codes")
    return ColumnCast(dict.fromkeys(as_float, "codes"), note=note)


def _decide_undeclared(col: str, raw: Mapping[str, TextFacts], typed: Mapping[str, TypedFacts],
                       labels: Mapping[str, str]) -> ColumnCast:
    """The typing rule of one undeclared column that at least one CSV holds as text."""
    n_present = sum(t.n_present for t in raw.values())
    n_bad = sum(t.n_present - t.n_numbers for t in raw.values())
    typed_text = [r for r, s in typed.items() if s.kind == "text"]
    typed_numbers = [r for r, s in typed.items() if s.kind == "number"]
    if n_present == 0:
        return ColumnCast()
    spelled = _bool_spellings(raw, typed, labels)
    if spelled is not None:
        return spelled
    if n_bad == n_present:  # no number at all: text, or True/False spellings
        if not typed_text and not typed_numbers and all(t.only_true_false for t in raw.values()):
            return ColumnCast(dict.fromkeys(raw, "booleans"))
        return ColumnCast()
    zero = next((t.leading_zero for t in raw.values() if t.leading_zero is not None), None)
    if zero is None:
        zero = next((typed[r].leading_zero for r in typed_text if typed[r].leading_zero is not None), None)
    if n_bad == 0:
        reason = None
        if zero is not None:
            reason = f"codes written with leading zeros (e.g. {zero!r}): kept as text in every table"
        if zero is not None or typed_text:
            return ColumnCast(dict.fromkeys(typed_numbers, "labels"), reason=reason)
        return ColumnCast(dict.fromkeys(raw, "numbers"))
    # numbers mixed with other values
    codes = all(t.integral and t.written_as_integers for t in raw.values())
    if not codes and not typed_text:
        # measurements (decimals) with a stray value: each table typed on its own, so that a text
        # value in a numerical column stays the error naming it (tables._coerce)
        return ColumnCast({role: "numbers" for role, t in raw.items() if t.all_numbers})
    # integer codes mixed with other values ('unknown'): categorical text in every table
    role = next(r for r, t in raw.items() if t.n_numbers < t.n_present)
    example, where = raw[role].first_bad, labels.get(role, role)
    reason = f"numbers and {n_bad} non-numeric value(s) (e.g. {example!r} in {where}): text in every table"
    warning = None
    if 1 - n_bad / n_present >= MAJORITY or typed_numbers:
        warning = (f"column {col!r} holds numbers and {n_bad} non-numeric value(s) (e.g. {example!r} "
                   f"in {where}): read as categorical text in every table (compared by equality; codes "
                   "keep their leading zeros); declare its sdtype in the metadata to choose, or clean "
                   "the value(s)")
    return ColumnCast(dict.fromkeys(typed_numbers, "labels"), warning=warning, reason=reason)
