"""Array operations the layers share where NumPy's own is slow for our data.

NumPy 2.3 made ``np.unique(a)`` (no ``return_*`` argument) use a hash table. On the integer codes
synthguard builds (pairs of record numbers, row identities: mostly distinct values over a wide
range) it is 40 to 70 times slower than sorting: measured with NumPy 2.4.6 on 240,000 codes below
18 million, 0.24 s against 0.006 s; 2 million codes, 3.2 s against 0.05 s (NumPy 1.24, which
sorts, took 0.02 s on the first). :func:`unique_codes` sorts whatever the version; so does
:func:`isin_codes` (``np.isin`` calls ``np.unique`` on its second argument: 0.84 s for 250,000
row hashes in 1 million, against 0.06 s).

A binary search of keys in random order into a sorted array larger than the CPU's caches waits
on memory at every step: ``np.searchsorted`` of 10 million row hashes into 10 million took 14.8 s
(NumPy 2.4.6 and 1.24.4 alike, 2-core machine), 2.6 s when the keys are searched in ascending
order (each search starts where the last one ended) and the answers put back in place.
:func:`search_sorted` does that above 2**20 sorted values.

A stable ``np.argsort`` of int64 or float64 keys is a merge sort (timsort): about 0.1 s for 1
million keys. NumPy radix-sorts 16-bit keys (0.02 s), so :func:`stable_order` sorts non-negative
integer keys below ``2**32`` by one or two 16-bit passes: the same order.
"""

from __future__ import annotations

import numpy as np

__all__ = ["equal_range", "first_per_key", "isin_codes", "search_sorted", "stable_order", "unique_codes"]

#: sorted arrays at least this long are searched with their keys in ascending order
LARGE_SORTED = 1 << 20


def unique_codes(codes: np.ndarray) -> np.ndarray:
    """The sorted distinct values of a 1-D integer array: ``np.unique(codes)``, by sorting.

    Parameters
    ----------
    codes : ndarray
        Integers (any shape: flattened, as ``np.unique`` does).

    Returns
    -------
    ndarray
        The distinct values, ascending, of ``codes``' dtype.

    Examples
    --------
    >>> unique_codes(np.array([5, 1, 5, 3, 1]))
    array([1, 3, 5])
    """
    a = np.asarray(codes)
    if a.dtype.kind not in "iub":
        raise TypeError(f"unique_codes takes integers, not {a.dtype}")
    out = np.sort(a, axis=None)
    if out.size > 1:
        keep = np.empty(out.size, dtype=bool)
        keep[0] = True
        np.not_equal(out[1:], out[:-1], out=keep[1:])
        out = out[keep]
    return out


def stable_order(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` of a 1-D array, by 16-bit radix passes when the keys
    are non-negative integers below ``2**32`` (or floats holding such integers or NaN, which sorts
    last): one pass below ``2**16`` (floats: below ``2**16 - 1``), else two (the low half, then
    the high half, stably), the same order. Other keys: ``np.argsort`` itself.

    Parameters
    ----------
    keys : ndarray
        A 1-D integer or float array.

    Returns
    -------
    ndarray of intp
        The positions of ``keys`` in ascending order, equal keys in position order.

    Examples
    --------
    >>> stable_order(np.array([70000, 3, 70000, 1, 3])).tolist()
    [3, 1, 4, 0, 2]
    >>> stable_order(np.array([2.0, np.nan, -0.0, 0.0, 2.0])).tolist()
    [2, 3, 0, 4, 1]
    """
    a = np.asarray(keys)
    if a.ndim != 1 or a.size < 2:
        return np.argsort(a, kind="stable")
    if a.dtype.kind == "f":  # integers in a float column (codes, counts): NaN as the largest key
        nan = np.isnan(a)
        with np.errstate(invalid="ignore"):
            whole = nan | ((a >= 0) & (a < 65535) & (a == np.floor(a)))
        if not whole.all():
            return np.argsort(a, kind="stable")
        return np.argsort(np.where(nan, 65535.0, a).astype(np.uint16), kind="stable")
    if a.dtype.kind not in "iu" or int(a.min()) < 0 or int(a.max()) >= 1 << 32:
        return np.argsort(a, kind="stable")
    if int(a.max()) < 1 << 16:
        return np.argsort(a.astype(np.uint16), kind="stable")
    first = np.argsort((a & 0xFFFF).astype(np.uint16), kind="stable")  # low half, then high half
    return first[np.argsort((a[first] >> 16).astype(np.uint16), kind="stable")]


def isin_codes(values: np.ndarray, among: np.ndarray) -> np.ndarray:
    """Is each of ``values`` one of ``among``? ``np.isin(values, among)`` for integers: a table of
    ``among``'s range when it is narrow (dense codes such as row identities: one look-up per value,
    0.2x the time of a search at 10 million), else by sorting ``among`` (:func:`unique_codes`) and a
    search of ``values`` in it (:func:`search_sorted`).

    Parameters
    ----------
    values, among : ndarray
        Integers of one kind (signed or unsigned; ``values`` of any shape).

    Returns
    -------
    ndarray
        Booleans of ``values``' shape.

    Examples
    --------
    >>> isin_codes(np.array([3, 4, 9]), np.array([9, 3, 3])).tolist()
    [True, False, True]
    """
    v = np.asarray(values)
    if v.dtype.kind not in "iub":
        raise TypeError(f"isin_codes takes integers, not {v.dtype}")
    table = _range_table(v, np.asarray(among))
    if table is not None:
        return table
    sorted_among = unique_codes(among)
    if sorted_among.size == 0:
        return np.zeros(v.shape, dtype=bool)
    at = np.minimum(search_sorted(sorted_among, v), sorted_among.size - 1)
    return sorted_among[at] == v


def _range_table(v: np.ndarray, among: np.ndarray) -> np.ndarray | None:
    """:func:`isin_codes` by a table of ``among``'s range, or ``None`` (the search instead) when
    that range is wider than four times the two sizes together, ``among`` is empty or the two
    are not integers of one dtype."""
    if (among.size == 0 or v.dtype != among.dtype or among.dtype.kind not in "iu"
            or v.size + among.size < 32_768):
        return None
    lo, hi = among.min(), among.max()
    span = int(hi) - int(lo) + 1
    if span > 4 * (v.size + among.size) or span > 1 << 31:
        return None
    table = np.zeros(span, dtype=bool)
    table[(among.ravel() - lo).astype(np.int64)] = True  # differences in [0, span): no overflow
    inside = (v >= lo) & (v <= hi)
    out = np.zeros(v.shape, dtype=bool)
    out[inside] = table[(v[inside] - lo).astype(np.int64)]
    return out


def search_sorted(a: np.ndarray, v: np.ndarray, side: str = "left") -> np.ndarray:
    """``np.searchsorted(a, v, side)``, the same positions, faster for many keys into a long
    ``a``: from :data:`LARGE_SORTED` values of ``a`` and 32,768 keys on, the keys are searched in
    ascending order (a stable argsort) and the positions put back in the keys' order.

    Parameters
    ----------
    a : ndarray
        A 1-D ascending array.
    v : ndarray
        The keys (any shape).
    side : {"left", "right"}
        As for :func:`numpy.searchsorted`.

    Returns
    -------
    ndarray
        Positions (``intp``) of ``v``'s shape, equal to ``np.searchsorted(a, v, side)``.

    Examples
    --------
    >>> search_sorted(np.array([1, 3, 3, 7]), np.array([3, 0, 8]), "right").tolist()
    [3, 0, 4]
    """
    return _searches(a, v, (side,))[0]


def equal_range(a: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(search_sorted(a, v, "left"), search_sorted(a, v, "right"))`` with one sort of the keys:
    where each key's run of equal values starts and ends in ``a``.

    Parameters
    ----------
    a, v : ndarray
        The ascending array and the keys, as for :func:`search_sorted`.

    Returns
    -------
    tuple of ndarray
        The left and right positions; ``right - left`` counts each key in ``a``.

    Examples
    --------
    >>> lo, hi = equal_range(np.array([1, 3, 3, 7]), np.array([3, 5]))
    >>> lo.tolist(), (hi - lo).tolist()
    ([1, 3], [2, 0])
    """
    left, right = _searches(a, v, ("left", "right"))
    return left, right


def _searches(a: np.ndarray, v: np.ndarray, sides: tuple[str, ...]) -> list[np.ndarray]:
    """``np.searchsorted(a, v, side)`` for each of ``sides``, keys in ascending order when ``a``
    is long (:func:`search_sorted`)."""
    a, v = np.asarray(a), np.asarray(v)
    if a.size < LARGE_SORTED or v.size < 32_768:
        return [np.searchsorted(a, v, side=side) for side in sides]
    flat = v.ravel()
    order = np.argsort(flat, kind="stable")
    keys = flat[order]
    outs = []
    for side in sides:  # one or two sides
        out = np.empty(flat.size, dtype=np.intp)
        out[order] = np.searchsorted(a, keys, side=side)
        outs.append(out.reshape(v.shape))
    return outs


def first_per_key(keys: np.ndarray, n_keys: int) -> np.ndarray:
    """The lowest position of ``keys`` holding each key ``0 .. n_keys - 1`` (``-1`` for none);
    keys below 0 are ignored.

    Examples
    --------
    >>> import numpy as np
    >>> first_per_key(np.array([2, -1, 0, 2, 0]), 4).tolist()
    [2, -1, 0, -1]
    """
    keys = np.asarray(keys, dtype=np.int64)
    first = np.full(int(n_keys), np.iinfo(np.int64).max, dtype=np.int64)
    ok = np.flatnonzero(keys >= 0)
    np.minimum.at(first, keys[ok], ok)
    return np.where(first == np.iinfo(np.int64).max, -1, first)
