"""Release rows that surely share a drawn singling-out query with the row it was drawn from: a
certificate that spares the count of most attempts of a long multivariate search.

A multivariate attempt (:func:`synthguard.metrics.anonymeter.singling_out.multivariate_search`)
takes a release row ``r`` and ``k`` of its columns and makes each a predicate that ``r`` satisfies:
``IS NULL`` for a missing value, ``>= v`` above the column's median, ``<= v`` at or below it for a
numeric column, ``== v`` otherwise. The attempt singles ``r`` out when no other release row
satisfies all ``k``. On a large release almost no attempt does (at a million rows about one in
8,000), and counting each attempt's matching rows (up to two) is most of the search's time.

Here every release row gets a few *partners*: the rows just before and after it in a few sorts of the release by
coarse codes of its columns (rows alike in many columns sort together), and for each partner the
columns on which the partner satisfies the row's own predicates, as a bit mask (the comparisons
of the count kernel, value by value). An attempt whose columns all lie in one partner's mask selects
at least two rows, the row and that partner: its count (capped at two) is 2 without counting. Only
the time changes: the attempts, their counts and the queries kept are those of the plain search.

Examples
--------
>>> import numpy as np
>>> X = np.array([[1.0, 5.0, 0.0], [1.0, 6.0, 0.0], [2.0, 1.0, 1.0], [2.0, np.nan, 1.0]])
>>> p = release_partners(X, np.array([False, True, False]), np.array([np.nan, 5.0, np.nan]))
>>> p.shared(np.array([0, 0, 2]), np.array([[0, 2], [0, 1], [0, 2]])).tolist()
[True, False, True]
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from ..._jit import njit
from ...engine import queries as Q
from ...engine.parallel import PARALLEL_KERNELS

__all__ = ["Partners", "partners_of", "release_partners"]

#: sorts of the release whose neighbours are partners (each sort ranks the columns another way)
SORTS = 4
#: columns a sort's key packs (8 bits each)
KEY_COLUMNS = 8
#: rows of the strided sample a column's code boundaries (quantiles) come from
CODE_SAMPLE = 20_000


@njit(cache=True, nogil=True, inline="always")
def _satisfies(x, y, num, med):  # pragma: no cover - compiled
    """Whether value ``y`` satisfies the predicate a row of value ``x`` makes of its column: the
    search's operator (``IS NULL`` for a missing ``x``, ``>=`` above the median ``med`` and ``<=``
    at or below it in a numeric column, ``==`` otherwise), compared by the count kernel's own
    ``_holds``."""
    if x != x:
        op = Q.ISNULL
    elif num:
        op = Q.GE if x > med else Q.LE
    else:
        op = Q.EQ
    return Q._holds(y, op, x)


@njit(parallel=True, cache=True)
def _id_masks(X, med, is_num, ids, masks):  # pragma: no cover - compiled
    """``masks[r, t]``: bit ``j`` when row ``ids[r, t]`` satisfies row ``r``'s predicate on column
    ``j`` (0 where ``ids[r, t]`` is -1 or ``r`` itself: no partner in that slot)."""
    n, p = X.shape
    for r in nb.prange(n):
        for t in range(ids.shape[1]):
            b = ids[r, t]
            bits = np.uint64(0)
            if b >= 0 and b != r:
                for j in range(p):
                    if _satisfies(X[r, j], X[b, j], is_num[j], med[j]):
                        bits |= np.uint64(1) << np.uint64(j)
            masks[r, t] = bits


@njit(parallel=True, cache=True)
def _shared_kernel(masks, rows, cols, out):  # pragma: no cover - compiled
    """``out[i]``: one partner of row ``rows[i]`` satisfies its predicates on every column of
    ``cols[i]``."""
    m = masks.shape[1]
    for i in nb.prange(rows.shape[0]):
        want = np.uint64(0)
        for c in cols[i]:
            want |= np.uint64(1) << np.uint64(c)
        r = rows[i]
        hit = False
        for t in range(m):
            if masks[r, t] & want == want:
                hit = True
                break
        out[i] = hit


@dataclass(frozen=True)
class Partners:
    """Each release row's partners' masks (:func:`release_partners`).

    Attributes
    ----------
    masks : ndarray of uint64, shape (n, m)
        Bit ``j`` of ``masks[r, t]``: row ``r``'s ``t``-th partner satisfies ``r``'s predicate on
        column ``j``.
    ids : ndarray of int32 (int64 from 2**31 rows), shape (n, m), optional
        The partners themselves (``-1``: none in that slot): a drop-and-retest's search starts
        from its run's (:func:`partners_of`).
    """

    masks: np.ndarray
    ids: np.ndarray | None = None

    def shared(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Per attempt (the row ``rows[i]``, its columns ``cols[i]``): whether a partner of the row
        satisfies the attempt's every predicate, so that it selects at least two rows.

        Parameters
        ----------
        rows : ndarray of int, shape (b,)
        cols : ndarray of int, shape (b, k)

        Returns
        -------
        ndarray of bool, shape (b,)
        """
        out = np.zeros(rows.shape[0], dtype=np.bool_)
        if out.size:
            with PARALLEL_KERNELS:
                _shared_kernel(self.masks, np.ascontiguousarray(rows, dtype=np.int64),
                               np.ascontiguousarray(cols, dtype=np.int64), out)
        return out


@njit(parallel=True, cache=True)
def _codes_kernel(X, edges, at, out):  # pragma: no cover - compiled
    """``out[r, j]``: how many of column ``j``'s boundaries ``edges[at[j]:at[j + 1]]`` lie below
    ``X[r, j]`` (at most 254), 255 for a missing value."""
    n, p = X.shape
    for r in nb.prange(n):
        for j in range(p):
            x = X[r, j]
            if x != x:
                out[r, j] = 255
                continue
            lo = at[j]
            hi = at[j + 1]
            base = lo
            while lo < hi:
                mid = (lo + hi) >> 1
                if edges[mid] < x:
                    lo = mid + 1
                else:
                    hi = mid
            out[r, j] = min(lo - base, 254)


def _coarse_codes(X: np.ndarray) -> np.ndarray:
    """Per cell, a code in 0..254 that orders the column's values (equal values, equal codes;
    boundaries at quantiles of a strided sample), 255 for a missing value."""
    n, p = X.shape
    step = max(1, n // CODE_SAMPLE)
    levels = np.linspace(0.0, 1.0, 256)[1:-1]
    edges = []
    for j in range(p):  # loop over columns: the boundaries, from a sample
        s = X[::step, j]
        s = s[~np.isnan(s)]
        edges.append(np.unique(np.quantile(s, levels)) if s.size else np.zeros(0))
    at = np.r_[0, np.cumsum([e.size for e in edges])].astype(np.int64)
    codes = np.empty((n, p), dtype=np.uint8)
    with PARALLEL_KERNELS:
        _codes_kernel(X, np.concatenate(edges), at, codes)
    return codes


def release_partners(X: np.ndarray, is_num: np.ndarray, med: np.ndarray) -> Partners | None:
    """The partners of every row of the release matrix ``X`` (see the module docstring).

    Parameters
    ----------
    X : ndarray of float64, shape (n, p)
        The release's query matrix (missing: NaN), its rows the search's rows.
    is_num : ndarray of bool, shape (p,)
        Numeric columns (one-sided predicates).
    med : ndarray of float64, shape (p,)
        The numeric columns' medians, as the search compares them.

    Returns
    -------
    Partners or None
        ``None`` when a mask cannot hold the columns (more than 64) or there are fewer than 2 rows.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    n, p = X.shape
    if p > 64 or n < 2:
        return None
    codes = _coarse_codes(X)
    spread = np.array([np.count_nonzero(np.bincount(codes[:, j], minlength=256)) for j in range(p)])
    base = np.argsort(spread, kind="stable")  # the columns with fewest codes lead a sort's key
    ids = np.full((n, 2 * SORTS), -1, dtype=_id_type(n))
    for s in range(SORTS):  # loop over sorts: a row's partners are the rows before and after it
        lead = np.roll(base, -(s * p // SORTS))[:KEY_COLUMNS]
        key = np.zeros(n, dtype=np.uint64)
        for j in lead:  # loop over the key's columns
            key = (key << np.uint64(8)) | codes[:, j].astype(np.uint64)
        order = np.argsort(key)  # (introsort: the same order for the same keys)
        ids[order[1:], 2 * s] = order[:-1]  # the row before, the row after
        ids[order[:-1], 2 * s + 1] = order[1:]
    return partners_of(X, is_num, med, ids)  # the masks: one kernel for a run's and a re-test's


def _id_type(n: int) -> type:
    """The partners' integer type for ``n`` rows (4 bytes a partner below 2**31 rows)."""
    return np.int32 if n < 2**31 else np.int64


def partners_of(X: np.ndarray, is_num: np.ndarray, med: np.ndarray, ids: np.ndarray) -> Partners | None:
    """:class:`Partners` of the rows of ``X`` with the partners ``ids`` (``(n, m)``, ``-1``: none),
    their masks compared value by value as :func:`release_partners` compares them: a re-test's
    search takes its run's partners of the rows it keeps. Any partners are right (a mask holds
    what the partner's values satisfy); they only spare fewer counts when they are not the
    release's own sorts' neighbours.

    Examples
    --------
    >>> X = np.array([[1.0, 5.0], [1.0, 6.0], [2.0, 1.0]])
    >>> p = partners_of(X, np.array([False, True]), np.array([np.nan, 5.0]), np.array([[1], [0], [-1]]))
    >>> p.masks.ravel().tolist()  # rows 0 and 1 hold each other's == 1, not the other's <= 5, >= 6
    [1, 1, 0]
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    n, p = X.shape
    if p > 64 or n < 2:
        return None
    ids = np.ascontiguousarray(ids, dtype=_id_type(n))
    masks = np.empty(ids.shape, dtype=np.uint64)
    with PARALLEL_KERNELS:
        _id_masks(X, np.ascontiguousarray(med, dtype=np.float64), np.ascontiguousarray(is_num, dtype=np.bool_),
                  ids, masks)
    return Partners(masks, ids)
