"""Text columns read once, as Arrow strings, and every question about them answered by one
vectorised pass (``pyarrow.compute``): which values are numbers and their value, which are written
with a leading zero, which spell booleans, which Unicode form they are in.

The typing decision (:mod:`synthguard.data.coltypes`) asks many questions of the same raw CSV
column; :class:`TextColumn` converts the column to Arrow once and caches each answer, so no
column is parsed twice and no Python function runs per value.

Numbers are what ``pandas.to_numeric`` accepts: optional ASCII whitespace around an optional sign,
digits with an optional decimal point and exponent (``1``, ``-2.5``, ``.5``, ``1.``, ``1e-5``),
and ``inf`` / ``infinity`` in any case. ``nan`` spellings, thousands separators, underscores,
hexadecimal and non-ASCII digits are not numbers. Values are parsed correctly rounded (Arrow's
parser, the float Python's ``float`` gives) on every pandas version; a column of integer literals
without a missing value is int64, as ``pandas.read_csv`` types it.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["TextColumn", "arrow_strings", "matches"]

_WS = " \t\n\r\f\v"
#: a decimal number as pandas.to_numeric reads it (after the surrounding ASCII whitespace)
_NUMBER = r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$|^[+-]?(?i:inf|infinity)$"
#: values tried before casting a whole column
_PROBE = 64


def arrow_strings(s: pd.Series) -> pa.Array:
    """The values of a text column as one Arrow string array (missing values as nulls).

    Parameters
    ----------
    s : Series
        Strings and missing values (object dtype, or pandas' ``str`` / ``string`` dtypes, whose
        Arrow buffers are used without a copy).

    Returns
    -------
    pyarrow.Array
        ``string`` or ``large_string``.

    Examples
    --------
    >>> arrow_strings(pd.Series(["1", None, "x"])).null_count
    1
    """
    arr = s.array
    if isinstance(s.dtype, pd.StringDtype) and hasattr(arr, "__arrow_array__"):
        out = arr.__arrow_array__()
        return out.combine_chunks() if isinstance(out, pa.ChunkedArray) else out
    return pa.array(s.to_numpy(dtype=object), type=pa.string(), from_pandas=True)


def matches(values: pa.Array | pd.Series, pattern: str) -> np.ndarray:
    """Where the strings match the RE2 ``pattern`` (``pyarrow.compute``; missing -> False).

    Examples
    --------
    >>> matches(pd.Series(["2021-03-04", "x", None]), r"^[0-9]{4}-").tolist()
    [True, False, False]
    """
    arr = values if isinstance(values, (pa.Array, pa.ChunkedArray)) else arrow_strings(values)
    return _mask(pc.match_substring_regex(arr, pattern))


def _mask(arr: pa.Array) -> np.ndarray:
    """A boolean Arrow array as a numpy mask (null -> False)."""
    return pc.fill_null(arr, False).to_numpy(zero_copy_only=False)


class TextColumn:
    """One raw text column (a CSV column read as text) and the answers the typing decision needs,
    each computed once over the whole column.

    Parameters
    ----------
    values : Series
        The column as read (strings and missing values).

    Examples
    --------
    >>> col = TextColumn(pd.Series(["01", "2", None]))
    >>> col.n_numbers, col.leading_zero
    (2, '01')
    """

    def __init__(self, values: pd.Series) -> None:
        self.values = values
        self.arrow = arrow_strings(values)

    # ------------------------------------------------------------------ presence
    @cached_property
    def present(self) -> np.ndarray:
        """Where the column holds a value."""
        return self.arrow.is_valid().to_numpy(zero_copy_only=False)

    @cached_property
    def n_present(self) -> int:
        return len(self.arrow) - self.arrow.null_count

    # ------------------------------------------------------------------ numbers
    @cached_property
    def _parsed(self) -> tuple[np.ndarray, np.ndarray]:
        """``(values, is_number)``: float64 values (NaN where not a number) and the mask."""
        arr = self.arrow
        # a failing Arrow cast costs as much as a regex over the whole column: try the first
        # values, then the whole column (every value a number: the common case, one C pass)
        try:
            pc.cast(arr.slice(0, _PROBE), pa.float64())
            vals = pc.cast(arr, pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return self._parsed_slowly()
        num = vals.to_numpy(zero_copy_only=False)
        with np.errstate(invalid="ignore"):
            ok = self.present & ~np.isnan(num)  # Arrow reads 'nan' spellings; pandas does not
        if not ok.all():
            num = np.where(ok, num, np.nan)
        return num, ok

    def _parsed_slowly(self) -> tuple[np.ndarray, np.ndarray]:
        """Numbers among other values, or written with surrounding whitespace: decided on the
        distinct values, then spread to the rows."""
        enc = pc.dictionary_encode(self.arrow)
        words = pc.ascii_trim(enc.dictionary, _WS)
        is_num = pc.match_substring_regex(words, _NUMBER)
        vals = pc.cast(pc.if_else(is_num, words, pa.scalar(None, words.type)), pa.float64())
        idx = enc.indices
        num = pc.take(vals, idx).to_numpy(zero_copy_only=False)
        ok = _mask(pc.take(is_num, idx))
        return np.where(ok, num, np.nan), ok

    @property
    def is_number(self) -> np.ndarray:
        """Where the value is a number."""
        return self._parsed[1]

    @property
    def number_values(self) -> np.ndarray:
        """The values read as float64 numbers (NaN where not a number), without the int64
        decision of :attr:`numbers` (no pass over the spellings)."""
        return self._parsed[0]

    @cached_property
    def n_numbers(self) -> int:
        return int(self.is_number.sum())

    @property
    def all_numbers(self) -> bool:
        """Every present value is a number."""
        return self.n_numbers == self.n_present

    @cached_property
    def numbers(self) -> pd.Series:
        """The numbers (NaN elsewhere), typed as ``pandas.read_csv`` types a column: int64 when
        every value is an integer literal and none is missing, else float64."""
        num, ok = self._parsed
        s = self.values
        if len(ok) and ok.all() and self._integral(num) and not self._decimal_spelling.any():
            ints = self._as_int64()
            if ints is not None:
                return pd.Series(ints, index=s.index, name=s.name)
        return pd.Series(num, index=s.index, name=s.name, dtype=np.float64)

    @staticmethod
    def _integral(num: np.ndarray) -> bool:
        with np.errstate(invalid="ignore"):
            return bool(np.all(num == np.floor(num)))

    @cached_property
    def _decimal_spelling(self) -> np.ndarray:
        """Where the value holds a decimal point, an exponent or ``inf`` (literal searches)."""
        arr = self.arrow
        hit = _mask(pc.match_substring(arr, "."))
        for ch in "eEnN":  # literal searches: a regex (or ignore_case) costs ten times more
            hit |= _mask(pc.match_substring(arr, ch))
        return hit

    def _as_int64(self) -> np.ndarray | None:
        """Integer literals as int64 (``None`` beyond int64: pandas' own reading types those)."""
        try:
            return pc.cast(self.arrow, pa.int64()).to_numpy(zero_copy_only=False)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
        # '+1', ' 1' or an integer beyond int64: rare
        typed = pd.to_numeric(self.values, errors="coerce")
        return typed.to_numpy() if pd.api.types.is_integer_dtype(typed.dtype) else None

    @cached_property
    def written_as_integers(self) -> bool:
        """Every number is written without a decimal point or exponent (``12``, not ``12.0``)."""
        num = self.is_number
        return not bool((self._decimal_spelling & num).any())

    # ------------------------------------------------------------------ spellings
    @cached_property
    def leading_zero(self) -> str | None:
        """The first value written with a leading zero before a digit (``01234``), or ``None``."""
        hit = pc.match_substring_regex(self.arrow, r"^0[0-9]")
        i = pc.index(hit, True).as_py()
        return None if i < 0 else str(self.arrow[i].as_py())

    def only(self, spellings: Iterable[str]) -> bool:
        """Every present value is one of ``spellings``."""
        inside = pc.is_in(self.arrow, value_set=pa.array(sorted(spellings), type=pa.string()))
        return int(_mask(inside).sum()) == self.n_present

    def isin(self, spellings: Iterable[str]) -> np.ndarray:
        """Where the value is one of ``spellings``."""
        return _mask(pc.is_in(self.arrow, value_set=pa.array(sorted(spellings), type=pa.string())))

    def first(self, mask: np.ndarray) -> str:
        """The first value where ``mask`` holds."""
        return str(self.arrow[int(np.flatnonzero(mask)[0])].as_py())

    def nfc(self) -> pd.Series | None:
        """The column with its values NFC-normalised (accents as one code point), or ``None``
        when every value already is. Normalised once per distinct non-ASCII value (pyarrow 14's
        ``utf8_normalize`` leaves NFD text as it is)."""
        arr = self.arrow
        ascii_ = pc.fill_null(pc.string_is_ascii(arr), True)
        if len(arr) == 0 or bool(pc.all(ascii_).as_py()):
            return None
        import unicodedata

        distinct = pc.unique(pc.filter(arr, pc.invert(ascii_))).to_pylist()
        pairs = [(v, w) for v in distinct if (w := unicodedata.normalize("NFC", v)) != v]
        if not pairs:
            return None
        pos = pc.index_in(arr, value_set=pa.array([v for v, _ in pairs], type=arr.type))
        hit = pos.is_valid().to_numpy(zero_copy_only=False)
        fixed = pc.take(pa.array([w for _, w in pairs], type=pa.string()), pos)
        s = self.values
        new = pd.Series(fixed.to_pandas().to_numpy(dtype=object), index=s.index)
        return s.where(~hit, new).astype(s.dtype)
