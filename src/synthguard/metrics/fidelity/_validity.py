"""Data Validity (KeyUniqueness, BoundaryAdherence, CategoryAdherence) and Data Structure
(TableStructure), as in SDMetrics' DiagnosticReport."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._columns import datetime_ns, joint_codes, numeric_values


def key_uniqueness(synthetic: pd.Series) -> float:
    """``1 - share of synthetic keys that repeat an earlier key or are missing``."""
    n = len(synthetic)
    if n == 0:
        return float("nan")
    bad = synthetic.duplicated(keep="first").to_numpy() | synthetic.isna().to_numpy()
    return 1.0 - float(bad.sum()) / n


def boundary_adherence(real: pd.Series, synthetic: pd.Series) -> float:
    """Share of synthetic values within the real ``[min, max]``.

    A synthetic missing value is dropped when the real column has missing values and counts as a
    violation otherwise. NaN when nothing is left to check.
    """
    if pd.api.types.is_datetime64_any_dtype(real.dtype):
        r, rm = datetime_ns(real)
        s, sm = datetime_ns(synthetic)
    else:
        r = numeric_values(real)
        s = numeric_values(synthetic)
        rm, sm = np.isnan(r), np.isnan(s)
    r = r[~rm]
    if len(r) == 0:
        return float("nan")
    lo, hi = r.min(), r.max()
    nullable = bool(rm.any())
    if nullable:
        s, sm = s[~sm], sm[~sm]
    if len(s) == 0:
        return float("nan")
    ok = (~sm) & (s >= lo) & (s <= hi)
    return float(ok.mean())


def category_adherence(real: pd.Series, synthetic: pd.Series) -> float:
    """Share of all synthetic values that occur in the real column (missing ok iff real has some)."""
    if len(synthetic) == 0:
        return float("nan")
    (rc, sc), k = joint_codes(real, synthetic)
    seen = np.zeros(k, dtype=bool)
    seen[rc] = True  # the missing code is included iff real has missing values
    return float(seen[sc].mean())


def table_structure(real: pd.DataFrame, synthetic: pd.DataFrame) -> float:
    """Jaccard similarity of the ``(column name, dtype)`` pairs of the two tables."""
    r = {(str(c), str(t)) for c, t in real.dtypes.items()}
    s = {(str(c), str(t)) for c, t in synthetic.dtypes.items()}
    union = r | s
    return len(r & s) / len(union) if union else float("nan")
