"""Release rows that surely share a drawn singling-out query with the row it was drawn from: a
certificate that spares the count of most attempts of a long multivariate search.

A multivariate attempt (:func:`synthguard.metrics.anonymeter.singling_out.multivariate_search`)
takes a release row ``r`` and ``k`` of its columns and makes each a predicate that ``r`` satisfies:
``IS NULL`` for a missing value, ``>= v`` above the column's median, ``<= v`` at or below it for a
numeric column, ``== v`` otherwise. The attempt singles ``r`` out when no other release row
satisfies all ``k``. On a large release almost no attempt does (at a million rows about one in
8,000), and counting each attempt's matching rows (up to two) is most of the search's time.

Here every release row gets a few *partners*: the rows beside it in a few sorts of the release by
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
from ...engine.parallel import PARALLEL_KERNELS

__all__ = ["Partners", "release_partners"]

#: sorts of the release whose neighbours are partners (each sort ranks the columns another way)
SORTS = 4
#: partners taken on each side of a row in each sort
REACH = 1
#: columns a sort's key packs (8 bits each)
KEY_COLUMNS = 8
#: rows of the strided sample a column's code boundaries (quantiles) come from
CODE_SAMPLE = 20_000


@njit(parallel=True, cache=True)
def _masks_kernel(X, med, is_num, part, out):  # pragma: no cover - compiled
    """``out[r, t]``: bit ``j`` set when row ``part[r, t]`` (another row) satisfies row ``r``'s
    predicate on column ``j``, as the count kernel's ``_holds`` compares (0 for ``r`` itself)."""
    n, p = X.shape
    m = part.shape[1]
    for r in nb.prange(n):
        for t in range(m):
            s = part[r, t]
            bits = np.uint64(0)
            if s != r:
                for j in range(p):
                    x = X[r, j]
                    y = X[s, j]
                    if x != x:
                        ok = y != y
                    elif y != y:
                        ok = False
                    elif is_num[j]:
                        ok = y >= x if x > med[j] else y <= x
                    else:
                        ok = y == x
                    if ok:
                        bits |= np.uint64(1) << np.uint64(j)
            out[r, t] = bits


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
    """

    masks: np.ndarray

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


def _coarse_codes(X: np.ndarray) -> np.ndarray:
    """Per cell, a code in 0..254 that orders the column's values (equal values, equal codes;
    boundaries at quantiles of a strided sample), 255 for a missing value."""
    n, p = X.shape
    codes = np.empty((n, p), dtype=np.uint8)
    step = max(1, n // CODE_SAMPLE)
    levels = np.linspace(0.0, 1.0, 256)[1:-1]
    for j in range(p):  # loop over columns
        x = X[:, j]
        s = x[::step]
        s = s[~np.isnan(s)]
        edges = np.unique(np.quantile(s, levels)) if s.size else np.zeros(0)
        c = np.minimum(np.searchsorted(edges, x, "left"), 254)
        c[np.isnan(x)] = 255
        codes[:, j] = c
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
    part = np.empty((n, SORTS * 2 * REACH), dtype=np.int64)
    slot = 0
    for s in range(SORTS):  # loop over sorts
        lead = np.roll(base, -(s * p // SORTS))[:KEY_COLUMNS]
        key = np.zeros(n, dtype=np.uint64)
        for j in lead:  # loop over the key's columns
            key = (key << np.uint64(8)) | codes[:, j].astype(np.uint64)
        order = np.argsort(key, kind="stable")
        pos = np.empty(n, dtype=np.int64)
        pos[order] = np.arange(n, dtype=np.int64)
        for d in (*range(-REACH, 0), *range(1, REACH + 1)):
            part[:, slot] = order[np.clip(pos + d, 0, n - 1)]
            slot += 1
    masks = np.empty(part.shape, dtype=np.uint64)
    with PARALLEL_KERNELS:
        _masks_kernel(X, np.ascontiguousarray(med, dtype=np.float64), np.ascontiguousarray(is_num, dtype=np.bool_),
                      part, masks)
    return Partners(masks)
