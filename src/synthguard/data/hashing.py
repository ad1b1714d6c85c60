"""Row hashes: one content hash per row, and the masked-row hashes of the copy tests.

:func:`row_hashes` is the content hash shared by every place that needs a row's identity cheaply
(canonical row order, seeded content-keyed subsamples, the control-overlap check, fingerprints).

The *cell* hashes (:func:`cell_hashes`) are the one way rows are hashed on many column sets: every
cell of a table is hashed once, keyed by its column, and the hash of a row on a column set is the
wrapping (mod ``2**64``) sum of its cells' hashes on the set (:func:`set_sums`), so the hash of a
row with some columns left out (masked) is its whole-row sum minus those cells (:func:`masked`):
one subtraction per masked column, the same 64-bit word as summing the kept cells, and the same
whichever other columns the table holds. The near-copy tests (in one process and on a cluster) and
the near-copy counts of the membership attacks all hash masked rows this way. Up to two *chains*
(independently seeded hashes of the same cells) give 64- or 128-bit row keys; two rows that differ
on a column set collide in one chain with probability about ``2**-64``, in both about ``2**-128``.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterator, Sequence
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["CHAINS", "cell_hashes", "column_ids", "distinct_groups", "float_codes", "masked", "row_hashes", "set_sums", "iter_set_sums",
           "value_hashes"]


#: rows hashed at a time by :func:`row_hashes`
ROW_BLOCK = 1 << 16


def row_hashes(frame: pd.DataFrame) -> np.ndarray:
    """A 64-bit hash of every row's content (``uint64``; the index takes no part): pandas'
    ``hash_pandas_object``, a block of :data:`ROW_BLOCK` rows at a time.

    Equal rows get equal hashes; distinct rows collide with probability ~ n^2 / 2^64. Exact-row
    metrics use the collision-free identities of :mod:`synthguard.data.encoding` instead. A row's
    hash depends on its own values only, so the blocks give the hashes of the whole frame; each
    block's temporaries (a dozen full-length arrays per column) are reused memory, not fresh
    pages (at 10M rows the whole-frame hashes faulted in about 15 GB a call).

    Examples
    --------
    >>> df = pd.DataFrame({"a": [1, 2, 1], "b": ["x", "y", "x"]})
    >>> h = row_hashes(df)
    >>> bool(h[0] == h[2]), bool(h[0] == h[1])
    (True, False)
    """
    n = len(frame)
    if n <= ROW_BLOCK:
        return pd.util.hash_pandas_object(frame, index=False).to_numpy().astype(np.uint64, copy=False)
    out = np.empty(n, dtype=np.uint64)
    for s in range(0, n, ROW_BLOCK):  # loop over row blocks
        out[s:s + ROW_BLOCK] = pd.util.hash_pandas_object(frame.iloc[s:s + ROW_BLOCK], index=False).to_numpy()
    return out


def distinct_groups(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``frame`` by their content hash (:func:`row_hashes`; rows whose hashes
    collide count as one, probability about ``n**2 / 2**64``), from one hashing and one sort:
    ``(the lowest position of each distinct row, in hash order; each row's distinct row)``, both
    int64. An order that depends on neither the row order nor duplicates (the anonymeter trio's
    canonical rows).

    Examples
    --------
    >>> first, of_row = distinct_groups(pd.DataFrame({"a": [5, 6, 5]}))
    >>> sorted(first.tolist()), bool(of_row[0] == of_row[2]), bool(of_row[0] == of_row[1])
    ([0, 1], True, False)
    """
    _, first, inverse = np.unique(row_hashes(frame), return_index=True, return_inverse=True)
    return first.astype(np.int64), inverse.ravel().astype(np.int64)


#: (seed, odd multiplier) of the two hash chains: digits of pi and golden-ratio / plastic-number
#: constants (:func:`synthguard.data.encoding.row_hash128` and :func:`cell_hashes`)
CHAINS: tuple[tuple[np.uint64, np.uint64], ...] = (
    (np.uint64(0x243F6A8885A308D3), np.uint64(0x9E3779B97F4A7C15)),
    (np.uint64(0x13198A2E03707344), np.uint64(0xD1B54A32D192ED03)),
)


def splitmix(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser of ``uint64`` words (a bijection; wrapping arithmetic, a new array).

    Examples
    --------
    >>> import numpy as np
    >>> splitmix(np.array([0, 1], dtype=np.uint64)).tolist()
    [0, 6238072747940578789]
    """
    x = np.array(x, dtype=np.uint64, copy=True)
    with np.errstate(over="ignore"):
        _splitmix_into(x)
    return x


def _splitmix_into(x: np.ndarray) -> None:
    """:func:`splitmix` of the ``uint64`` words ``x`` in place (wrapping arithmetic)."""
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)


def float_codes(values: np.ndarray) -> np.ndarray:
    """int64 codes of float64 values by their bits: equal values, equal codes, ``-0.0`` folded into
    ``0.0`` and every NaN one code (the smallest int64); different values, different codes.

    Examples
    --------
    >>> import numpy as np
    >>> c = float_codes(np.array([0.0, -0.0, np.nan, -np.nan, 1.5]))
    >>> bool(c[0] == c[1]), bool(c[2] == c[3]), bool(c[0] == c[4])
    (True, True, False)
    """
    v = np.asarray(values, dtype=np.float64) + 0.0  # folds -0.0 into 0.0
    bits = np.ascontiguousarray(v).view(np.int64)
    return np.where(np.isnan(v), np.int64(np.iinfo(np.int64).min), bits)


def column_ids(names: Sequence[object]) -> np.ndarray:
    """A fixed 64-bit id per column name (SipHash of its text under a fixed key): the key of a
    column's cells in :func:`cell_hashes`, the same whatever table or column order it comes in.

    Examples
    --------
    >>> ids = column_ids(["a", "b", "a"])
    >>> ids.dtype.name, bool(ids[0] == ids[2]), bool(ids[0] == ids[1])
    ('uint64', True, False)
    """
    text = np.array([str(n) for n in names], dtype=object)
    return pd.util.hash_array(text, hash_key="sg-column-ident!").astype(np.uint64, copy=False)


def cell_hashes(codes: np.ndarray, ids: np.ndarray, chain: int = 0) -> np.ndarray:
    """``uint64`` hashes of the cells of an int64 code matrix ``codes`` (``(n, p)``; or one column,
    ``(n,)`` with one id), the cells of column ``j`` keyed by ``ids[j]``; ``chain`` (0 or 1) picks
    one of two independently seeded hashes (:data:`CHAINS`).

    Within a column the hash is a bijection of the code (different values never collide); a row's
    hash on a column set is the wrapping sum of its cells' (:func:`set_sums`, :func:`masked`).

    Examples
    --------
    >>> import numpy as np
    >>> h = cell_hashes(np.array([[1, 1], [1, 2]]), np.array([7, 8], dtype=np.uint64))
    >>> bool(h[0, 0] == h[1, 0]), bool(h[0, 0] == h[0, 1])  # same value, other column: other hash
    (True, False)
    """
    seed, mult = CHAINS[chain]
    key = splitmix(np.asarray(ids, dtype=np.uint64) ^ seed)  # one key per column
    words = np.asarray(codes, dtype=np.int64).view(np.uint64)
    if words.ndim == 0:
        with np.errstate(over="ignore"):
            return splitmix(words * mult + key)
    out = np.empty(words.shape, dtype=np.uint64)
    step = max(1, _HASH_BLOCK // max(1, words[:1].size))
    with np.errstate(over="ignore"):
        for s in range(0, words.shape[0], step):  # row blocks: the temporaries stay in cache
            x = out[s:s + step]
            np.multiply(words[s:s + step], mult, out=x)
            x += key
            _splitmix_into(x)
    return out


#: Cells hashed at a time by :func:`cell_hashes` (a block's words fit a CPU cache: several times
#: faster than whole-matrix temporaries on 1.25 M x 15 codes)
_HASH_BLOCK = 1 << 15


def masked(rows: np.ndarray, cells: np.ndarray, mask: Sequence[int]) -> np.ndarray:
    """The row hashes ``rows`` (sums of every cell of ``cells``, ``(n, p)`` or ``(n, p, chains)``)
    with the columns ``mask`` left out: ``rows`` minus those cells (a new array; wrapping).

    Examples
    --------
    >>> import numpy as np
    >>> cells = cell_hashes(np.array([[1, 2, 3], [1, 5, 3]]), np.arange(3, dtype=np.uint64))
    >>> h = masked(cells.sum(axis=1), cells, [1])  # column 1 left out: the rows agree
    >>> bool(h[0] == h[1])
    True
    """
    out = np.array(rows, dtype=np.uint64, copy=True)
    with np.errstate(over="ignore"):
        for j in mask:  # loop over the masked columns, vectorised over rows
            out -= cells[:, j]
    return out


def set_sums(cells: np.ndarray, sets: Sequence[Sequence[int]]) -> list[np.ndarray]:
    """Per column set (positions in ``cells``, ``(n, p)`` or ``(n, p, chains)``), every row's hash
    on it: the wrapping sum of its cells there (``(n,)`` or ``(n, chains)``; an empty set sums to
    0). A set is summed directly or, when it leaves out fewer columns than it keeps, as the
    whole-row sum minus the left-out cells (:func:`masked`): the same words, fewer operations for
    the leave-few-out sets of the near-copy tests. A column named twice counts twice.

    Examples
    --------
    >>> import numpy as np
    >>> cells = cell_hashes(np.array([[1, 2, 3, 4], [1, 2, 9, 4]]), np.arange(4, dtype=np.uint64))
    >>> kept, direct = set_sums(cells, [[0, 1, 3], [1, 0, 3, 2]])
    >>> bool(kept[0] == kept[1]), bool(direct[0] == direct[1])  # column 2 told apart
    (True, False)
    >>> bool(kept[0] == cells[0, [0, 1, 3]].sum())
    True
    """
    return list(iter_set_sums(cells, sets))


def iter_set_sums(cells: np.ndarray, sets: Sequence[Sequence[int]]) -> Iterator[np.ndarray]:
    """:func:`set_sums` one set at a time (the same words): a caller that uses each set's hashes
    and drops them holds one set's at once, not every set's.

    Examples
    --------
    >>> import numpy as np
    >>> cells = cell_hashes(np.array([[1, 2, 3, 4], [1, 2, 9, 4]]), np.arange(4, dtype=np.uint64))
    >>> [bool(h[0] == h[1]) for h in iter_set_sums(cells, [[0, 1, 3], [2]])]
    [True, False]
    """
    p = cells.shape[1]
    total = None
    for s in sets:  # loop over column sets, vectorised over rows
        at = np.asarray(s, dtype=np.int64).reshape(-1)
        hits = np.bincount(at, minlength=p)
        # (no yield inside the errstate: a generator dropped before its end, then finalised by the
        # collector in another thread, would reset numpy's error state in a context not its own)
        with np.errstate(over="ignore"):
            if 2 * at.size <= p or hits.max(initial=0) > 1:  # few columns kept, or one twice
                got = cells[:, at].sum(axis=1, dtype=np.uint64)
            else:
                if total is None:
                    total = cells.sum(axis=1, dtype=np.uint64)
                got = masked(total, cells, np.flatnonzero(hits == 0))
        yield got


#: marks the hash of a float64 that is not a whole number (whole numbers hash as the integer)
_FRACTION_TAG = np.uint64(0x452821E638D01377)
_TEXT_KEY = "sg-value-text!!!"  # SipHash keys (16 bytes): strings, and other objects' labels
_OTHER_KEY = "sg-value-other!!"
_INT64 = 2.0 ** 63


def _number_hashes(values: np.ndarray) -> np.ndarray:
    """Hashes of float64 ``values`` (no NaN): a whole number as the int64 it equals (``-0.0`` as
    ``0``), any other value by its bits, tagged."""
    v = np.asarray(values, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        whole = np.isfinite(v) & (v == np.trunc(v)) & (np.abs(v) < _INT64)
    out = np.empty(len(v), dtype=np.uint64)
    out[whole] = _integer_hashes(v[whole].astype(np.int64))
    out[~whole] = splitmix(np.ascontiguousarray(v[~whole]).view(np.uint64)) ^ _FRACTION_TAG
    return out


def _integer_hashes(values: np.ndarray) -> np.ndarray:
    return splitmix(np.asarray(values).astype(np.int64).view(np.uint64))


def _object_key(v: Any) -> tuple[int, Any]:
    """``v``'s class and canonical form, equal exactly when Python compares the values equal: 0 a
    string, 1 an int64 (``True``, ``1``, ``1.0``, ``Decimal(1)``), 2 a float64 (``Decimal("0.5")``
    as ``0.5``), 3 a label (larger integers, other numbers, other objects)."""
    if isinstance(v, str):
        return 0, v
    if isinstance(v, (bool, np.bool_, numbers.Integral)):
        i = int(v)
        return (1, i) if -_INT64 <= i < _INT64 else (3, f"int:{i}")
    if isinstance(v, (numbers.Real, Decimal)):
        try:
            f = float(v)
        except (OverflowError, ValueError):
            f = None
        if f is not None and f == v:  # exactly a float64 (whole ones hash as their integer)
            return 2, f
        if v == int(v):
            return 3, f"int:{int(v)}"
        return 3, f"real:{v.normalize() if isinstance(v, Decimal) else v}"
    return 3, f"{type(v).__name__}:{v}"


def _object_hashes(values: np.ndarray) -> np.ndarray:
    """Hashes of an object array's values (no missing value), equal exactly when Python compares
    them equal. Strings only (the usual case), floats only or integers only: one vectorised pass;
    a mix: one canonical key per value (:func:`_object_key`)."""
    kind = pd.api.types.infer_dtype(values, skipna=False)
    if kind == "string":
        return pd.util.hash_array(values, hash_key=_TEXT_KEY, categorize=False).astype(np.uint64, copy=False)
    if kind == "floating":
        return _number_hashes(values.astype(np.float64))
    if kind in ("integer", "boolean"):
        try:
            return _integer_hashes(values.astype(np.int64))
        except OverflowError:  # beyond int64: the keys below
            pass
    keys = [_object_key(v) for v in values]
    cls = np.fromiter((k[0] for k in keys), dtype=np.int8, count=len(keys))
    out = np.empty(len(keys), dtype=np.uint64)
    for c, hashes in ((0, lambda a: pd.util.hash_array(a, hash_key=_TEXT_KEY, categorize=False)),
                      (1, _integer_hashes), (2, _number_hashes),
                      (3, lambda a: pd.util.hash_array(a, hash_key=_OTHER_KEY, categorize=False))):
        at = np.flatnonzero(cls == c)
        if at.size:
            form = np.array([keys[i][1] for i in at], dtype=object if c in (0, 3) else
                            (np.int64 if c == 1 else np.float64))
            out[at] = np.asarray(hashes(form)).astype(np.uint64, copy=False)
    return out


def value_hashes(present: pd.Series) -> np.ndarray:
    """The distinct 64-bit hashes of ``present`` (a column without missing values), equal exactly
    when pandas compares the values equal, as ``Series.is_unique`` and ``Series.nunique`` do:
    ``-0.0`` and ``0.0`` are one value, and so are ``1``, ``1.0`` and ``True`` in an object column,
    while ``1`` and ``"1"`` are two (their text is one). Distinct values collide with probability
    about ``n**2 / 2**64``; the hashes of equal values agree over partitions, tables, dtypes and
    pandas versions.

    Parameters
    ----------
    present : Series
        The values (none missing).

    Returns
    -------
    ndarray of uint64
        The sorted distinct hashes (their count is the column's count of distinct values).

    Examples
    --------
    >>> value_hashes(pd.Series([0.0, -0.0, 1.0])).size, value_hashes(pd.Series([1, 1.0, "1"], dtype=object)).size
    (2, 2)
    """
    if not len(present):
        return np.zeros(0, dtype=np.uint64)
    dtype = present.dtype
    if isinstance(dtype, pd.CategoricalDtype):  # by the categories' values
        present = pd.Series(np.asarray(present))
        dtype = present.dtype
    if pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_integer_dtype(dtype):
        hashes = _integer_hashes(present.to_numpy(dtype=np.int64))
    elif pd.api.types.is_float_dtype(dtype):
        hashes = _number_hashes(present.to_numpy(dtype=np.float64))
    elif pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
        hashes = _object_hashes(pd.unique(present.to_numpy(dtype=object)))
    else:  # dates, durations, periods: by pandas' own hashes
        hashes = pd.util.hash_pandas_object(present, index=False).to_numpy()
    return np.unique(hashes.astype(np.uint64, copy=False))
