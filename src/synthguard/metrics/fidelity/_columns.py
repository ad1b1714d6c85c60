"""Column values in the forms the fidelity metrics need: numbers (datetimes as int64 nanoseconds,
as SDMetrics does) and shared integer codes for categories (missing values get their own code)."""

from __future__ import annotations

import numpy as np
import pandas as pd

STATISTICAL = ("numerical", "datetime", "categorical", "boolean")
CONTINUOUS = ("numerical", "datetime")


def numeric_values(series: pd.Series) -> np.ndarray:
    """float64 values of a numerical or datetime column; datetimes in int64 nanoseconds, NaT -> NaN.

    Parameters
    ----------
    series : Series
        A numerical (float) or datetime64 column.

    Returns
    -------
    ndarray
        float64 array, NaN where missing.
    """
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        mask = series.isna().to_numpy()
        ns = series.astype("datetime64[ns]").to_numpy().astype("int64").astype("float64")
        ns[mask] = np.nan
        return ns
    return pd.to_numeric(series, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)


def datetime_ns(series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Exact int64 nanoseconds of a datetime column and its missing mask."""
    mask = series.isna().to_numpy()
    ns = series.astype("datetime64[ns]").to_numpy().astype("int64")
    return ns, mask


def joint_codes(*series: pd.Series) -> tuple[list[np.ndarray], int]:
    """Integer codes of the same column in several frames, from one shared vocabulary.

    Missing values get their own code (the last one), so they behave as a category.

    Returns
    -------
    codes : list of ndarray
        One int64 array per input series.
    n_codes : int
        Size of the vocabulary (including the missing code when any value is missing).
    """
    lengths = [len(s) for s in series]
    both = pd.concat([s.astype(object) for s in series], ignore_index=True)
    codes, uniques = pd.factorize(both, use_na_sentinel=True)
    codes = codes.astype(np.int64)
    k = len(uniques)
    if (codes < 0).any():
        codes[codes < 0] = k
        k += 1
    out, start = [], 0
    for n in lengths:
        out.append(codes[start:start + n])
        start += n
    return out, max(k, 1)
