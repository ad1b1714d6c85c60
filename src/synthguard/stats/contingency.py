"""Chi-square of independence and Cramer's V over the occupied cells of a contingency table."""

from __future__ import annotations

import math

import numpy as np

_DENSE_CELLS = 1 << 22


def _dense_codes(x: np.ndarray) -> tuple[np.ndarray, int]:
    """Integer codes remapped to ``0..k-1`` over the values present (order kept)."""
    x = np.asarray(x, dtype=np.int64)
    if x.size and x.min() < 0:
        x = x - x.min()
    counts = np.bincount(x)
    present = np.flatnonzero(counts)
    lookup = np.zeros(len(counts), dtype=np.int64)
    lookup[present] = np.arange(len(present))
    return lookup[x], len(present)


def chi_square(a: np.ndarray, b: np.ndarray) -> tuple[float, int, int]:
    """Pearson's chi-square of independence of two aligned integer code arrays.

    Returns ``(chi2, r, c)`` with ``r``, ``c`` the numbers of distinct codes present. Computed over
    the occupied cells only, ``chi2 = n (sum O^2 / (row_i col_j) - 1)`` (clipped at 0), so no dense
    r x c table is built for high-cardinality columns. ``(nan, r, c)`` for empty input.
    """
    n = len(a)
    if n == 0:
        return float("nan"), 0, 0
    ia, r = _dense_codes(a)
    ib, c = _dense_codes(b)
    cell = ia * c + ib
    if r * c <= _DENSE_CELLS:
        counts = np.bincount(cell, minlength=r * c)
        cells = np.flatnonzero(counts)
        counts = counts[cells]
    else:
        cells, counts = np.unique(cell, return_counts=True)
    row = np.bincount(ia, minlength=r).astype("float64")
    col = np.bincount(ib, minlength=c).astype("float64")
    return _chi2_cells(counts.astype("float64"), row[cells // c], col[cells % c], n), r, c


def _chi2_cells(counts: np.ndarray, row: np.ndarray, col: np.ndarray, n: float) -> float:
    """``n (sum O^2 / (row_i col_j) - 1)`` over occupied cells, clipped at 0."""
    return max(n * (float(np.sum(counts * counts / (row * col))) - 1.0), 0.0)


def chi_square_table(table: np.ndarray) -> tuple[float, int, int]:
    """Pearson's chi-square of independence of a 2-D contingency table of counts.

    Same formula as :func:`chi_square` (rows and columns with no count are left out, so ``r`` and
    ``c`` are the numbers of occupied rows and columns). ``(nan, r, c)`` for an empty table.
    """
    t = np.asarray(table, dtype="float64")
    n = float(t.sum())
    row = t.sum(axis=1)
    col = t.sum(axis=0)
    r, c = int((row > 0).sum()), int((col > 0).sum())
    if n == 0:
        return float("nan"), r, c
    i, j = np.nonzero(t)
    return _chi2_cells(t[i, j], row[i], col[j], n), r, c


def cramers_v_table(table: np.ndarray) -> float:
    """Cramer's V (no continuity correction) of a contingency table; NaN under 2 x 2 occupied."""
    chi2, r, c = chi_square_table(table)
    n = float(np.asarray(table).sum())
    if n == 0 or r < 2 or c < 2:
        return float("nan")
    return math.sqrt(chi2 / (n * (min(r, c) - 1)))
