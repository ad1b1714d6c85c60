"""Give frames the dtypes their schema needs (generator outputs, CSV-loaded data)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..data.schema import Schema
from ..errors import MetricError

__all__ = ["conform"]


def conform(frame: pd.DataFrame, reference: pd.DataFrame, schema: Schema, label: str) -> pd.DataFrame:
    """Give ``frame`` the columns of ``reference`` and the dtypes its schema needs.

    CSV round trips lose them: datetimes come back as text, numeric-looking category labels as
    numbers, pandas categories as plain values. ``conform(data, data, schema)`` types the data
    itself (datetime columns parsed).

    Raises
    ------
    MetricError
        When the generator dropped columns.
    """
    missing = [c for c in reference.columns if c not in frame.columns]
    if missing:
        raise MetricError(f"{label} lacks column(s) {missing}: the generator must return every column")
    out = {}
    for col in reference.columns:
        s = frame[col].reset_index(drop=True)
        ref = reference[col]
        sd = schema.columns[col].sdtype if col in schema.columns else "categorical"
        if sd == "datetime" and not pd.api.types.is_datetime64_any_dtype(s.dtype):
            s = pd.to_datetime(s, errors="coerce", format="mixed")
        elif sd == "numerical" and not pd.api.types.is_numeric_dtype(s.dtype):
            s = pd.to_numeric(s, errors="coerce")
        elif isinstance(ref.dtype, pd.CategoricalDtype) and not isinstance(s.dtype, pd.CategoricalDtype):
            if pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_numeric_dtype(
                    ref.dtype.categories.dtype):
                s = s.map(_label, na_action="ignore")
            s = s.astype(ref.dtype)
        elif sd in ("categorical", "boolean") and (pd.api.types.is_object_dtype(ref.dtype)
                                                  or pd.api.types.is_string_dtype(ref.dtype)) \
                and pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype):
            if ref.dropna().map(lambda v: isinstance(v, str)).all():
                s = s.map(_label, na_action="ignore")
        out[col] = s
    return pd.DataFrame(out)


def _label(v: Any) -> Any:
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)
