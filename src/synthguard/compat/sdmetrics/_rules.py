"""SDMetrics 0.32's input rules, applied by the facade before synthguard's metric runs.

The core API (:func:`synthguard.evaluate`) stops on inputs it cannot score cleanly; SDMetrics
instead evaluates what it can. The facade follows SDMetrics (issue #25): it unwraps
``load_single_table_demo()``'s ``{table: frame}`` dicts, picks the table from multi-table metadata,
keeps the common declared columns (warning as SDMetrics does), parses declared datetimes with their
``datetime_format`` (``ValueError`` without one), scores all-missing columns, and raises SDMetrics'
exception types and messages. Only argument mapping and input rules live here: every number is
computed by :mod:`synthguard.metrics.disclosure`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["DCR_SDTYPES", "dcr_inputs", "disclosure_inputs", "single_table_metadata", "unwrap"]

DCR_SDTYPES = ("numerical", "categorical", "boolean", "datetime")
# stands for a missing value in a column that is missing in every row of some table: the column
# becomes categorical, where one missing value equals another and differs from every value, which
# is SDMetrics' distance whenever one side of every compared pair is missing
_MISSING = "__synthguard_missing__"


def unwrap(data: Any) -> Any:
    """The first table of a ``{table_name: frame}`` dict (SDMetrics' rule for real and synthetic
    data, so that ``load_single_table_demo()``'s output can be passed as it is)."""
    if isinstance(data, dict) and len(data) > 0:
        return data[next(iter(data))]
    return data


def _check_dict(metadata: Any) -> None:
    if not isinstance(metadata, dict):
        raise TypeError(f"Expected a dictionary but received a '{type(metadata).__name__}' instead. "
                        "For SDV metadata objects, please use the 'to_dict' function to convert it to a "
                        "dictionary.")


def single_table_metadata(metadata: Any, table_name: Any = None) -> dict[str, Any] | None:
    """The single-table metadata dict, with SDMetrics' checks and messages.

    An object with ``to_dict()`` (SDV's ``Metadata``) is converted first (SDMetrics asks the
    caller to do it; the facade does it for them).
    """
    if table_name is not None and not isinstance(table_name, str):
        raise TypeError("`table_name` must be a string.")
    if metadata is None:
        return None
    if not isinstance(metadata, Mapping) and callable(getattr(metadata, "to_dict", None)):
        metadata = metadata.to_dict()
    if isinstance(metadata, Mapping) and not isinstance(metadata, dict):
        metadata = dict(metadata)
    _check_dict(metadata)
    if "tables" not in metadata:
        return metadata
    tables = metadata["tables"]
    _check_dict(tables)
    names = list(tables)
    if not names:
        raise ValueError("Metadata does not contain any tables.")
    if table_name is None:
        if len(names) > 1:
            raise ValueError("Metadata contains more than one table, please specify the `table_name`.")
        table_name = names[0]
    elif table_name not in tables:
        raise ValueError(f"Unknown table ('{table_name}'). Must be one of {names}.")
    return tables[table_name]


def _columns(metadata: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return dict(metadata.get("columns", {}))


def _to_datetime(name: str, column: pd.Series, spec: Mapping[str, Any]) -> pd.Series:
    if pd.api.types.is_datetime64_any_dtype(column):
        return column
    fmt = spec.get("datetime_format")
    if fmt is None:
        raise ValueError(f"Datetime column '{name}' does not have a specified 'datetime_format'. Please add "
                         "a the required datetime_format to the metadata or convert this column to "
                         "'pd.datetime' to bypass this requirement.")
    try:
        return pd.to_datetime(column, format=fmt)
    except Exception as exc:  # noqa: BLE001  (SDMetrics wraps every parsing error the same way)
        raise ValueError(f"Error converting column '{name}' to timestamp: {exc}") from exc


def _process(frame: pd.DataFrame, metadata: dict[str, Any]) -> pd.DataFrame:
    """One table as SDMetrics' DCR reads it: declared datetimes parsed, undeclared columns dropped
    (with its warning), only the DCR sdtypes kept. The caller's frame is never changed."""
    cols = _columns(metadata)
    frame = frame.copy()
    for name, spec in cols.items():
        if spec.get("sdtype") == "datetime":
            frame[name] = _to_datetime(name, frame[name], spec)  # KeyError when absent, as SDMetrics
    extra = set(frame.columns) - set(cols)
    absent = set(cols) - set(frame.columns)
    if extra:
        names = "', '".join(sorted(map(str, extra)))
        warnings.warn(f"The columns ('{names}') are not present in the metadata. They will not be "
                      "included for further evaluation.", UserWarning, stacklevel=4)
    elif absent:
        names = "', '".join(sorted(map(str, absent)))
        warnings.warn(f"The columns ('{names}') are in the metadata but they are not present in the data.",
                      UserWarning, stacklevel=4)
    keep = [c for c, spec in cols.items() if spec.get("sdtype") in DCR_SDTYPES and c in frame.columns]
    return frame[keep]


def _check_subsample(num_rows_subsample: Any, num_iterations: Any, n_synthetic: int) -> tuple[Any, Any]:
    if num_rows_subsample is not None:
        if not isinstance(num_rows_subsample, int) or num_rows_subsample < 1:
            raise ValueError(f"num_rows_subsample ({num_rows_subsample}) must be an integer greater than 1.")
    elif num_iterations > 1:
        raise ValueError("num_iterations should not be greater than 1 if there is no subsampling.")
    if not isinstance(num_iterations, int) or num_iterations < 1:
        raise ValueError(f"num_iterations ({num_iterations}) must be an integer greater than 1.")
    if num_rows_subsample and num_rows_subsample > n_synthetic:
        warnings.warn(f"num_rows_subsample ({num_rows_subsample}) is greater than the length of the "
                      f"synthetic data ({n_synthetic}). Ignoring the num_rows_subsample and num_iterations "
                      "args.", UserWarning, stacklevel=4)
        return None, 1
    return num_rows_subsample, num_iterations


def _missing_as_category(frames: dict[str, pd.DataFrame], sdtypes: dict[str, str]) -> None:
    """Columns missing in every row of some table become categorical with missing as a value
    (in place on the facade's own copies)."""
    for col in list(sdtypes):
        if any(f[col].isna().all() for f in frames.values()):
            for role, f in frames.items():
                vals = f[col].astype(object)
                frames[role][col] = vals.where(vals.isna(), vals.map(str)).fillna(_MISSING).astype(object)
            sdtypes[col] = "categorical"


def dcr_inputs(frames: dict[str, Any], metadata: Any, table_name: Any, num_rows_subsample: Any,
               num_iterations: Any, *, type_message: str, overfitting: bool = False
               ) -> tuple[dict[str, pd.DataFrame], dict[str, Any], Any, Any]:
    """SDMetrics' DCR input rules: ``(frames, core metadata, num_rows_subsample, num_iterations)``.

    ``frames`` maps ``real``, ``synthetic`` (and ``validation``) to the caller's objects, in
    SDMetrics' argument order. The frames returned hold the common declared DCR columns only.
    """
    meta = single_table_metadata(metadata, table_name)
    frames = dict(frames)
    frames["real"] = unwrap(frames["real"])
    frames["synthetic"] = unwrap(frames["synthetic"])
    syn = frames["synthetic"]
    num_rows_subsample, num_iterations = _check_subsample(num_rows_subsample, num_iterations,
                                                          len(syn) if hasattr(syn, "__len__") else 0)
    if not all(isinstance(f, pd.DataFrame) for f in frames.values()):
        raise TypeError(type_message.format(*(type(f) for f in frames.values())))
    if overfitting and len(frames["real"]) * 0.5 > len(frames["validation"]):
        warnings.warn(f"Your real_validation_data contains {len(frames['validation'])} rows while your "
                      f"real_training_data contains {len(frames['real'])} rows. For most accurate results, "
                      "we recommend that the validation data at least half the size of the training data.",
                      UserWarning, stacklevel=3)
    _check_dict(meta)
    assert meta is not None
    order = ["synthetic", "real"] + (["validation"] if overfitting else [])
    processed = {role: _process(frames[role], meta) for role in order}
    common = set.intersection(*(set(f.columns) for f in processed.values()))
    cols = [c for c in _columns(meta) if c in common]
    if not cols:
        raise ValueError("There are no overlapping statistical columns to measure.")
    out = {role: processed[role][cols].reset_index(drop=True) for role in ("real", "synthetic", *order[2:])}
    sdtypes = {c: str(_columns(meta)[c]["sdtype"]) for c in cols}
    _missing_as_category(out, sdtypes)
    core_meta = {"columns": {c: {"sdtype": sd} for c, sd in sdtypes.items()}}
    return out, core_meta, num_rows_subsample, num_iterations


def _names(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return list(value)


def disclosure_inputs(real_data: Any, synthetic_data: Any, known: Any, sensitive: Any, method: Any,
                      continuous: Any, bins: Any, *, estimate: tuple[Any, Any] | None = None
                      ) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """SDMetrics' DisclosureProtection input rules: ``(real, synthetic, continuous)`` restricted to
    the known and sensitive columns, all-missing key or sensitive columns as a category."""
    if not isinstance(real_data, pd.DataFrame):
        raise ValueError("Real and synthetic data must be pandas DataFrames.")
    known, sensitive = _names(known), _names(sensitive)
    cols = set(real_data.columns)
    if len(known) == 0:
        raise ValueError("Must provide at least 1 known column name.")
    if not cols.issuperset(known):
        raise ValueError(f"Known column(s) '{_join(set(known) - cols)}' are missing from the real data.")
    if len(sensitive) == 0:
        raise ValueError("Must provide at least 1 sensitive column name.")
    if not cols.issuperset(sensitive):
        raise ValueError(f"Sensitive column(s) '{_join(set(sensitive) - cols)}' are missing from the real data.")
    if not isinstance(method, str) or method.upper() not in ("CAP", "ZERO_CAP", "GENERALIZED_CAP"):
        raise ValueError(f"Unknown computation method '{method}'. Please use one of 'cap', 'zero_cap', or "
                         "'generalized_cap'.")
    cont = None if continuous is None else _names(continuous)
    if cont is not None and not cols.issuperset(cont):
        raise ValueError(f"Continous column(s) '{_join(set(cont) - cols)}' are missing from the real data.")
    if not isinstance(bins, int) or bins <= 0:
        raise ValueError("`num_discrete_bins` must be an integer greater than zero.")
    synthetic_data = unwrap(synthetic_data)
    if set(real_data.columns) != set(getattr(synthetic_data, "columns", ())):
        raise ValueError("`real_data` and `synthetic_data` must have the same columns")
    if estimate is not None:
        rows, iterations = estimate
        if not isinstance(rows, int) or rows <= 0:
            raise ValueError("`num_rows_subsample` must be an integer greater than zero.")
        if not isinstance(iterations, int) or iterations <= 0:
            raise ValueError("`num_iterations` must be an integer greater than zero.")
    if estimate is None and (len(real_data) > 10_000 or len(synthetic_data) > 10_000):
        warnings.warn("Data exceeds 10000 rows, perfomance may be slow. Consider using the "
                      "`DisclosureProtectionEstimate` for faster computation.", UserWarning, stacklevel=4)
    cont = cont or []
    for col in cont:
        if real_data[col].isna().all():  # pandas' own error, as SDMetrics lets it through
            pd.cut(pd.to_numeric(real_data[col].to_numpy()), bins)
    used = list(dict.fromkeys([*known, *sensitive]))
    real = real_data[used].reset_index(drop=True)
    syn = synthetic_data[used].reset_index(drop=True)
    frames = {"real": real, "synthetic": syn}
    sdtypes = {c: "categorical" for c in used if c not in cont}
    _missing_as_category(frames, sdtypes)
    return frames["real"], frames["synthetic"], [c for c in cont if c in used]


def _join(names: Sequence[Any] | set[Any]) -> str:
    return "', '".join(map(str, names))


def is_int(value: Any) -> bool:
    """An integer that is not a bool (numpy integers included)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)
