"""Association of two columns: Pearson's r of two numeric arrays, Cramer's V of two code arrays
(the real table's summary and the pair trends both use them)."""

from __future__ import annotations

import math

import numpy as np

from ...stats import chi_square

__all__ = ["cramers_v", "pearson"]


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson correlation of the rows where both values are present (NaN if undefined)."""
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    if len(x) < 2:
        return float("nan")
    xc = x - x.mean()
    yc = y - y.mean()
    den = math.sqrt(float(xc @ xc) * float(yc @ yc))
    if den == 0:
        return float("nan")
    return float(np.clip((xc @ yc) / den, -1.0, 1.0))


def cramers_v(a: np.ndarray, b: np.ndarray) -> float:
    """Cramer's V (no continuity correction) of two code arrays; NaN for a table under 2 x 2.

    The chi-square comes from :func:`synthguard.stats.chi_square` (occupied cells only).
    """
    n = len(a)
    chi2, r, c = chi_square(a, b)
    if n == 0 or r < 2 or c < 2:
        return float("nan")
    return math.sqrt(chi2 / (n * (min(r, c) - 1)))
