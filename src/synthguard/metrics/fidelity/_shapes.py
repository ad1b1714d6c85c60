"""Column Shapes: KSComplement (numerical, datetime) and TVComplement (categorical, boolean)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._summary import PSEUDO_COUNT  # noqa: F401 - re-exported


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
    from ._summary import ks_against, summarise_column

    sd = "datetime" if pd.api.types.is_datetime64_any_dtype(real.dtype) else "numerical"
    return ks_against(summarise_column(real, sd), synthetic)


def tv_complement(real: pd.Series, synthetic: pd.Series) -> float:
    """``1 - total variation distance`` of the category frequencies (missing values dropped).

    As in SDMetrics, a category seen only in the synthetic data gets a pseudo-count of 1e-6 in the
    real data (so the score is not exactly ``1 - TVD`` then). NaN if a side has no values.
    """
    from ._summary import summarise_column, tv_against

    return tv_against(summarise_column(real, "categorical"), synthetic)
