"""SDMetrics 0.32's single-table privacy metrics (``sdmetrics.single_table``) over synthguard.

Each class has SDMetrics' classmethods ``compute``, ``compute_breakdown`` and ``normalize``, its
attributes ``name``, ``goal``, ``min_value`` and ``max_value``, and its argument names and order.
The numbers come from :mod:`synthguard.metrics.disclosure`; ``docs/compat.md`` lists where they
differ from SDMetrics on purpose (NaN keys, DCR ranges, NewRowSynthesis tolerance, seeding).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ._bridge import run, table_metadata
from ._rules import dcr_inputs, disclosure_inputs, is_int
from .goal import Goal

__all__ = [
    "CategoricalCAP",
    "CategoricalGeneralizedCAP",
    "CategoricalZeroCAP",
    "DCRBaselineProtection",
    "DCROverfittingProtection",
    "DisclosureProtection",
    "DisclosureProtectionEstimate",
    "NewRowSynthesis",
]


class _Metric:
    """Shared ``normalize`` (SDMetrics' base rule) and attributes."""

    name: str | None = None
    goal = Goal.MAXIMIZE
    min_value: float = 0.0
    max_value: float = 1.0

    @classmethod
    def normalize(cls, raw_score: float) -> float:
        """The score mapped to [0, 1], 1 being best (SDMetrics' rule for bounded metrics)."""
        lo, hi = float(cls.min_value), float(cls.max_value)
        if hi < raw_score or lo > raw_score:
            raise ValueError("`raw_score` must be between `min_value` and `max_value`.")
        fin_lo, fin_hi = math.isfinite(lo), math.isfinite(hi)
        if fin_lo and fin_hi:
            score = (raw_score - lo) / (hi - lo)
        elif not fin_lo and fin_hi:
            score = float(np.exp(raw_score - hi))
        elif fin_lo and not fin_hi:
            score = 1.0 - float(np.exp(lo - raw_score))
        else:
            score = 1.0 / (1.0 + float(np.exp(-raw_score)))
        return 1.0 - score if cls.goal == Goal.MINIMIZE else score


def _names(value: Any) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def _has(metadata: Any, field: str) -> bool:
    return isinstance(metadata, Mapping) and field in metadata


def _meta_field(metadata: Any, field: str) -> Any:
    return metadata.get(field) if isinstance(metadata, Mapping) else None


# ------------------------------------------------------------------------------------------ CAP
class _CAP(_Metric):
    _METRIC = "cap"

    @classmethod
    def compute_breakdown(cls, real_data: pd.DataFrame, synthetic_data: pd.DataFrame, metadata: Any = None,
                          table_name: str | None = None, key_fields: Any = None, sensitive_fields: Any = None,
                          model_kwargs: Any = None) -> dict[str, Any]:
        """``{"score": ...}``, as SDMetrics' base ``compute_breakdown`` (its first four arguments; the
        CAP arguments may follow, SDMetrics reads them from ``metadata`` there)."""
        # SDMetrics' rules and messages: fields named in the metadata win over the arguments
        keys = _names(_meta_field(metadata, "key_fields") if _has(metadata, "key_fields") else key_fields)
        sens = _names(_meta_field(metadata, "sensitive_fields") if _has(metadata, "sensitive_fields")
                      else sensitive_fields)
        if keys is None:
            raise TypeError("`key_fields` must be passed either directly or inside `metadata`")
        if sens is None:
            raise TypeError("`sensitive_fields` must be passed either directly or inside `metadata`")
        if not keys or not sens:
            raise ValueError("`key_fields` or `sensitive_fields` is empty")
        res = run(cls._METRIC, real_data, synthetic_data, metadata=table_metadata(_strip(metadata), table_name),
                  key_fields=keys, sensitive_fields=sens, max_records=0)
        return {"score": _f(res.value)}

    @classmethod
    def compute(cls, real_data: pd.DataFrame, synthetic_data: pd.DataFrame, metadata: Any = None,
                table_name: str | None = None, key_fields: Any = None, sensitive_fields: Any = None,
                model_kwargs: Any = None) -> float:
        """Mean CAP privacy over the real rows (1 = the synthetic data never reveals the sensitive
        values of a real row's key)."""
        return cls.compute_breakdown(real_data, synthetic_data, metadata, table_name, key_fields,
                                     sensitive_fields, model_kwargs)["score"]


def _strip(metadata: Any) -> Any:
    if isinstance(metadata, Mapping) and ("columns" in metadata or "tables" in metadata or "fields" in metadata):
        return metadata
    return None


class CategoricalCAP(_CAP):
    """Correct Attribution Probability; real rows whose key is absent from the synthetic data are skipped."""

    name = "CategoricalCAP"
    _METRIC = "cap"


class CategoricalZeroCAP(_CAP):
    """CAP where a real row whose key is absent from the synthetic data scores 0 (fully private... 1 - 0)."""

    name = "0CAP"
    _METRIC = "zero_cap"


class CategoricalGeneralizedCAP(_CAP):
    """CAP where an absent key uses the closest synthetic keys (Hamming distance)."""

    name = "Categorical GeneralizedCAP"
    _METRIC = "generalized_cap"


# ------------------------------------------------------------------------------------------ DisclosureProtection
def _disclosure(metric: str, real_data: Any, synthetic_data: Any, known: Any, sensitive: Any, method: Any,
                continuous: Any, bins: Any, **extra: Any) -> dict[str, Any]:
    estimate = (extra["num_rows_subsample"], extra["num_iterations"]) if extra else None
    real, syn, cont = disclosure_inputs(real_data, synthetic_data, known, sensitive, method, continuous, bins,
                                        estimate=estimate)
    res = run(metric, real, syn, known_column_names=_names(known), sensitive_column_names=_names(sensitive),
              computation_method=method, continuous_column_names=cont, num_discrete_bins=bins,
              max_records=0, **extra)
    d = res.details
    return {"score": _f(d.get("score", res.value)), "cap_protection": _f(d.get("cap_protection")),
            "baseline_protection": _f(d.get("baseline_protection"))}


class DisclosureProtection(_Metric):
    """CAP protection relative to a uniform random guess, ``min(cap / baseline, 1)``.

    Inputs follow SDMetrics' rules (its ``ValueError`` messages; columns other than the known and
    sensitive ones are ignored; a missing value is a category, also in an all-missing column).
    """

    name = None
    _METRIC = "disclosure_protection"

    @classmethod
    def compute_breakdown(cls, real_data: pd.DataFrame, synthetic_data: pd.DataFrame, known_column_names: Any,
                          sensitive_column_names: Any, computation_method: str = "cap",
                          continuous_column_names: Any = None, num_discrete_bins: int = 10) -> dict[str, Any]:
        """``{"score", "cap_protection", "baseline_protection"}``."""
        return _disclosure(cls._METRIC, real_data, synthetic_data, known_column_names, sensitive_column_names,
                           computation_method, continuous_column_names, num_discrete_bins)

    @classmethod
    def compute(cls, real_data: pd.DataFrame, synthetic_data: pd.DataFrame, known_column_names: Any,
                sensitive_column_names: Any, computation_method: str = "cap", continuous_column_names: Any = None,
                num_discrete_bins: int = 10) -> float:
        """The DisclosureProtection score."""
        return cls.compute_breakdown(real_data, synthetic_data, known_column_names, sensitive_column_names,
                                     computation_method, continuous_column_names, num_discrete_bins)["score"]


class DisclosureProtectionEstimate(DisclosureProtection):
    """DisclosureProtection averaged over ``num_iterations`` subsamples of ``num_rows_subsample`` rows."""

    name = None
    _METRIC = "disclosure_protection_estimate"

    @classmethod
    def compute_breakdown(cls, real_data: pd.DataFrame, synthetic_data: pd.DataFrame,  # type: ignore[override]
                          known_column_names: Any, sensitive_column_names: Any, computation_method: str = "cap",
                          continuous_column_names: Any = None, num_discrete_bins: int = 10,
                          num_rows_subsample: int = 1000, num_iterations: int = 10,
                          verbose: bool = True) -> dict[str, Any]:
        """``{"score", "cap_protection", "baseline_protection"}`` (means over the iterations)."""
        return _disclosure(cls._METRIC, real_data, synthetic_data, known_column_names, sensitive_column_names,
                           computation_method, continuous_column_names, num_discrete_bins,
                           num_rows_subsample=num_rows_subsample, num_iterations=num_iterations)

    @classmethod
    def compute(cls, real_data: pd.DataFrame, synthetic_data: pd.DataFrame,  # type: ignore[override]
                known_column_names: Any, sensitive_column_names: Any, computation_method: str = "cap",
                continuous_column_names: Any = None, num_discrete_bins: int = 10, num_rows_subsample: int = 1000,
                num_iterations: int = 10, verbose: bool = True) -> float:
        """The estimate (``num_rows_subsample`` and ``num_iterations`` are honoured, unlike SDMetrics)."""
        return cls.compute_breakdown(real_data, synthetic_data, known_column_names, sensitive_column_names,
                                     computation_method, continuous_column_names, num_discrete_bins,
                                     num_rows_subsample, num_iterations, verbose)["score"]


def _f(x: Any) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return float("nan")


# ------------------------------------------------------------------------------------------ DCR
def _shift(table_name: Any, num_rows_subsample: Any, num_iterations: Any) -> tuple[Any, Any, Any]:
    """An integer in ``table_name``'s place is ``num_rows_subsample`` (releases without ``table_name``)."""
    if is_int(table_name):
        return None, int(table_name), (num_rows_subsample if is_int(num_rows_subsample) else num_iterations)
    return table_name, num_rows_subsample, num_iterations


_BASELINE_TYPES = ("Both real_data ({}) and synthetic_data ({}) must be of type pandas.DataFrame.")
_OVERFIT_TYPES = ("All of real_training_data ({}), synthetic_data ({}), and real_validation_data ({}) must "
                  "be of type pandas.DataFrame.")


class DCRBaselineProtection(_Metric):
    """Median distance of synthetic rows to the closest real row, relative to random data.

    Inputs follow SDMetrics' rules: the common columns declared numerical, categorical, boolean or
    datetime are compared (its warnings for the others), declared datetimes need a
    ``datetime_format`` unless already datetimes, all-missing columns are scored.
    """

    name = "DCRBaselineProtection"

    @classmethod
    def compute_breakdown(cls, real_data: pd.DataFrame, synthetic_data: pd.DataFrame, metadata: Any,
                          table_name: str | None = None, num_rows_subsample: int | None = None,
                          num_iterations: int = 1) -> dict[str, Any]:
        """``{"score", "median_DCR_to_real_data": {"synthetic_data", "random_data_baseline"}}``
        (``table_name`` may be left out: an integer in its place is ``num_rows_subsample``, the
        signature of SDMetrics releases without ``table_name``)."""
        table_name, num_rows_subsample, num_iterations = _shift(table_name, num_rows_subsample, num_iterations)
        frames, meta, num_rows_subsample, num_iterations = dcr_inputs(
            {"real": real_data, "synthetic": synthetic_data}, metadata, table_name, num_rows_subsample,
            num_iterations, type_message=_BASELINE_TYPES)
        # SDMetrics draws whole random numbers for integer dtypes and reals for float dtypes
        whole = [c for c, spec in meta["columns"].items() if spec["sdtype"] == "numerical"
                 and pd.api.types.is_integer_dtype(frames["real"][c].dtype)]
        res = run("dcr_baseline_protection", frames["real"], frames["synthetic"], metadata=meta,
                  num_rows_subsample=num_rows_subsample, num_iterations=num_iterations, max_records=0,
                  integer_columns=whole)
        d = res.details
        return {"score": _f(d["score"]), "median_DCR_to_real_data": dict(d["median_DCR_to_real_data"])}

    @classmethod
    def compute(cls, real_data: pd.DataFrame, synthetic_data: pd.DataFrame, metadata: Any,
                table_name: str | None = None, num_rows_subsample: int | None = None,
                num_iterations: int = 1) -> float:
        """The DCRBaselineProtection score."""
        return cls.compute_breakdown(real_data, synthetic_data, metadata, table_name, num_rows_subsample,
                                     num_iterations)["score"]


class DCROverfittingProtection(_Metric):
    """Share of synthetic rows closer to the training rows than to held-out real rows, as protection.

    Inputs follow SDMetrics' rules, as for :class:`DCRBaselineProtection` (and its warning when the
    validation data has less than half the training rows).
    """

    name = "DCROverfittingProtection"

    @classmethod
    def compute_breakdown(cls, real_training_data: pd.DataFrame, synthetic_data: pd.DataFrame,
                          real_validation_data: pd.DataFrame, metadata: Any, table_name: str | None = None,
                          num_rows_subsample: int | None = None, num_iterations: int = 1) -> dict[str, Any]:
        """``{"score", "synthetic_data_percentages": {"closer_to_training", "closer_to_holdout"}}``
        (an integer in place of ``table_name`` is ``num_rows_subsample``, as for
        :class:`DCRBaselineProtection`)."""
        table_name, num_rows_subsample, num_iterations = _shift(table_name, num_rows_subsample, num_iterations)
        frames, meta, num_rows_subsample, num_iterations = dcr_inputs(
            {"real": real_training_data, "synthetic": synthetic_data, "validation": real_validation_data},
            metadata, table_name, num_rows_subsample, num_iterations, type_message=_OVERFIT_TYPES,
            overfitting=True)
        res = run("dcr_overfitting_protection", frames["real"], frames["synthetic"], frames["validation"],
                  metadata=meta, num_rows_subsample=num_rows_subsample, num_iterations=num_iterations,
                  max_records=0)
        d = res.details
        return {"score": _f(d["score"]), "synthetic_data_percentages": dict(d["synthetic_data_percentages"])}

    @classmethod
    def compute(cls, real_training_data: pd.DataFrame, synthetic_data: pd.DataFrame,
                real_validation_data: pd.DataFrame, metadata: Any, table_name: str | None = None,
                num_rows_subsample: int | None = None, num_iterations: int = 1) -> float:
        """The DCROverfittingProtection score."""
        return cls.compute_breakdown(real_training_data, synthetic_data, real_validation_data, metadata,
                                     table_name, num_rows_subsample, num_iterations)["score"]


# ------------------------------------------------------------------------------------------ NewRowSynthesis
class NewRowSynthesis(_Metric):
    """Share of synthetic rows that match no real row."""

    name = "NewRowSynthesis"

    @classmethod
    def compute_breakdown(cls, real_data: pd.DataFrame, synthetic_data: pd.DataFrame, metadata: Any = None,
                          table_name: str | None = None, numerical_match_tolerance: float = 0.01,
                          synthetic_sample_size: int | None = None) -> dict[str, Any]:
        """``{"score", "num_new_rows", "num_matched_rows"}``."""
        n_syn = len(synthetic_data) if hasattr(synthetic_data, "__len__") else 0
        if synthetic_sample_size is not None and synthetic_sample_size > n_syn:
            warnings.warn(f"The provided `synthetic_sample_size` of {synthetic_sample_size} is larger than the "
                          f"number of synthetic data rows ({n_syn}). Proceeding without sampling.",
                          UserWarning, stacklevel=2)
            synthetic_sample_size = None
        res = run("new_row_synthesis", real_data, synthetic_data, metadata=table_metadata(metadata, table_name),
                  numerical_match_tolerance=numerical_match_tolerance,
                  synthetic_sample_size=synthetic_sample_size, max_records=0)
        d = res.details
        return {"score": _f(d["score"]), "num_new_rows": int(d["num_new_rows"]),
                "num_matched_rows": int(d["num_matched_rows"])}

    @classmethod
    def compute(cls, real_data: pd.DataFrame, synthetic_data: pd.DataFrame, metadata: Any = None,
                table_name: str | None = None, numerical_match_tolerance: float = 0.01,
                synthetic_sample_size: int | None = None) -> float:
        """The NewRowSynthesis score."""
        return cls.compute_breakdown(real_data, synthetic_data, metadata, table_name, numerical_match_tolerance,
                                     synthetic_sample_size)["score"]
