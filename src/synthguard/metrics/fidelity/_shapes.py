"""Column Shapes: KSComplement (numerical, datetime) and TVComplement (categorical, boolean)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._columns import datetime_ns, joint_codes, numeric_values

#: SDMetrics' pseudo-count for a category seen only in the synthetic data.
PSEUDO_COUNT = 1e-6


def ks_statistic(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sample Kolmogorov-Smirnov statistic (sup distance of the two empirical CDFs).

    Parameters
    ----------
    a, b : ndarray
        Non-missing values of the two samples (any sortable dtype).

    Returns
    -------
    float
        The statistic; NaN if a sample is empty.
    """
    if len(a) == 0 or len(b) == 0:
        return float("nan")
    a = np.sort(a, kind="stable")
    b = np.sort(b, kind="stable")
    grid = np.concatenate([a, b])
    fa = np.searchsorted(a, grid, side="right") / len(a)
    fb = np.searchsorted(b, grid, side="right") / len(b)
    return float(np.max(np.abs(fa - fb)))


def ks_complement(real: pd.Series, synthetic: pd.Series) -> float:
    """``1 - KS`` on the non-missing values (rounded to 14 decimals, datetimes as nanoseconds).

    Parameters
    ----------
    real, synthetic : Series
        The same numerical or datetime column of the two tables.
    """
    if pd.api.types.is_datetime64_any_dtype(real.dtype):
        ra, rm = datetime_ns(real)
        sa, sm = datetime_ns(synthetic)
        a, b = ra[~rm], sa[~sm]
    else:
        a = numeric_values(real)
        b = numeric_values(synthetic)
        a = np.round(a[~np.isnan(a)], 14)
        b = np.round(b[~np.isnan(b)], 14)
    return 1.0 - ks_statistic(a, b)


def tv_complement(real: pd.Series, synthetic: pd.Series) -> float:
    """``1 - total variation distance`` of the category frequencies (missing values dropped).

    As in SDMetrics, a category seen only in the synthetic data gets a pseudo-count of 1e-6 in the
    real data (so the score is not exactly ``1 - TVD`` then). NaN if a side has no values.
    """
    r = real.dropna()
    s = synthetic.dropna()
    if len(r) == 0 or len(s) == 0:
        return float("nan")
    (rc, sc), k = joint_codes(r, s)
    real_counts = np.bincount(rc, minlength=k).astype("float64")
    syn_counts = np.bincount(sc, minlength=k).astype("float64")
    real_counts[(real_counts == 0) & (syn_counts > 0)] += PSEUDO_COUNT
    p_real = real_counts / real_counts.sum()
    p_syn = syn_counts / syn_counts.sum()
    return 1.0 - 0.5 * float(np.abs(p_real - p_syn).sum())
