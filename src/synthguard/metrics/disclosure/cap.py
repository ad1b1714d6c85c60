"""The CAP family (SDMetrics' ``CategoricalCAP``, ``CategoricalZeroCAP``, ``CategoricalGeneralizedCAP``).

An attacker who knows the key fields of a person and holds the synthetic data guesses the person's
sensitive fields from the synthetic rows sharing the key. For each original row the *correct
attribution probability* ``p`` is the share of those synthetic rows carrying the row's true
sensitive tuple; ``score = 1 - mean(p)`` (1 = safe). Rows whose key no synthetic row has are
skipped (``cap``), scored 0 (``zero_cap``) or matched to the synthetic keys at the smallest Hamming
distance, ties pooled (``generalized_cap``). Values are matched exactly; missing is a category.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...core.results import Baseline, MetricResult, level_from_thresholds
from ...errors import ConfigError
from ...registry import Context, Param, register
from ._cap_analysis import (
    CapAnalysis,
    analyse,
    analyse_counted,
    cap_evidence,
    cap_evidence_counted,
    safe_ratio,
)
from ._cap_core import METHODS
from ._common import has_control, resolve_fields

__all__ = ["cap", "cap_per_record", "cap_result", "generalized_cap", "zero_cap"]

THRESHOLDS = {"medium": 0.8, "high": 0.5}
_BASELINE_TEXT = ("protection of guessing uniformly among the original's sensitive values, "
                  "1 - 1/prod(number of categories) (SDMetrics' DisclosureProtection baseline)")
_RECORDS_DOC = "how many of the most exposed original rows to list in records (0 = none)"


def _params(extra: list[Param] | None = None) -> list[Param]:
    return [
        Param("key_fields", None, "columns the attacker knows (default: the metadata's quasi_identifiers)",
              (list, tuple)),
        Param("sensitive_fields", None, "columns the attacker guesses (default: the metadata's sensitive)",
              (list, tuple)),
        Param("max_records", 100, _RECORDS_DOC, "non-negative int"),
        *(extra or []),
    ]


def cap_result(ctx: Context, name: str, analysis: CapAnalysis, *, max_records: int,
               relative: bool, extra: dict[str, Any] | None = None,
               value: float | None = None, continuous: Any = (), bins: int = 10,
               evidence: Any = "auto", repeats: str | None = None) -> MetricResult:
    """The :class:`MetricResult` of a CAP analysis.

    ``relative=False``: value = ``cap_protection`` (the CAP metrics);
    ``relative=True``: value = ``min(cap_protection / baseline, 1)`` (DisclosureProtection).
    ``evidence``: ``"auto"`` computes the training-vs-control evidence when the context has a control
    table; an :class:`~synthguard.core.results.Evidence` (or ``None``) is used as given.
    ``repeats``: the metric whose test this one repeats on the same records (its evidence then does
    not drive the verdict, :func:`~._cap_analysis.cap_evidence`).
    """
    cap_prot = analysis.cap_protection if value is None else value
    base = analysis.baseline
    ratio = safe_ratio(cap_prot, base)
    ci_raw = analysis.protection_ci()
    if relative:
        val = ratio
        ci = None if (ci_raw is None or base <= 0) else (min(ci_raw[0] / base, 1.0), min(ci_raw[1] / base, 1.0))
        baseline = Baseline(1.0, "score 1 = " + _BASELINE_TEXT + "; score = min(cap_protection / baseline_protection, 1)")
    else:
        val = cap_prot
        ci = ci_raw
        baseline = Baseline(base, _BASELINE_TEXT)
    warning = None
    if analysis.n_counted == 0:
        level = "unknown"
        warning = ("no original key occurs in the synthetic data, so CAP is undefined (SDMetrics returns "
                   "NaN); use zero_cap or generalized_cap")
    elif base <= 0:
        level = "unknown"
        warning = "every original row has the same sensitive value, so there is nothing to protect"
    elif ratio >= 1.0:
        level = "not meaningful"
        warning = ("the attack does no better than guessing uniformly among the original's sensitive "
                   "values: no disclosure is measurable with these key fields")
    else:
        level = level_from_thresholds(ratio, ctx.thresholds or THRESHOLDS, "higher is safer")
    details: dict[str, Any] = {
        "score": val,
        "key_fields": analysis.keys,
        "sensitive_fields": analysis.sensitive,
        "computation_method": analysis.method,
        "cap_protection": cap_prot,
        "baseline_protection": base,
        "n_original_rows": analysis.n_rows,
        "n_counted": analysis.n_counted,
        "n_exact_key_match": analysis.n_exact_key_match,
        "n_key_not_in_synthetic": analysis.n_rows - analysis.n_exact_key_match,
        "n_sensitive_categories": analysis.n_categories,
        "per_class_size": analysis.class_sizes(),
    }
    if analysis.per_field:
        details["per_sensitive_field"] = analysis.per_field
    details.update(extra or {})
    if isinstance(evidence, str):  # "auto"
        evidence = cap_evidence(ctx, analysis.keys, analysis.sensitive, analysis.method,
                                continuous=continuous, bins=bins,
                                repeats=repeats) if has_control(ctx) else None
    return MetricResult(name=name, family="disclosure", value=val, direction="higher is safer",
                        baseline=baseline, ci=ci, n=analysis.n_counted or None, risk_level=level,
                        warning=warning, details=details, records=analysis.top_records(max_records),
                        evidence=evidence)


def repeated_test(method: str) -> str:
    """The CAP metric whose per-record test (probability above 1/2) a variant's test equals:
    ``zero_cap`` scores skipped rows 0, which is no more "above 1/2" than skipping them."""
    return "generalized_cap" if method == "generalized_cap" else "cap"


def _run(ctx: Context, name: str, method: str, key_fields: Any, sensitive_fields: Any,
         max_records: int) -> MetricResult:
    keys, sens = resolve_fields(ctx, name, "key_fields", key_fields, "sensitive_fields", sensitive_fields)
    rep = repeated_test(method)
    repeats = rep if rep != name else None
    if method in ("cap", "zero_cap"):  # exact key matches: counted through the backend (ctx.data)
        # the release rows behind a flag are named (the records export lists every one; a test
        # repeating another's votes, and names rows, through it)
        evidence = cap_evidence_counted(ctx, keys, sens, method, repeats=repeats,
                                        pairs=repeats is None) if has_control(ctx) else None
        return cap_result(ctx, name, analyse_counted(ctx, keys, sens, method, max_records=max_records),
                          max_records=max_records, relative=False, evidence=evidence)
    return cap_result(ctx, name, analyse(ctx, keys, sens, method), max_records=max_records, relative=False,
                      repeats=repeats)


_DESC = "1 - mean probability that an attacker holding the synthetic data and the key fields attributes the true sensitive values (1 = safe)"


@register("cap", family="disclosure", direction="higher is safer", params=_params(),
          thresholds=THRESHOLDS, aliases=("categoricalcap", "categorical_cap"),
          description=_DESC + "; rows whose key is absent from the synthetic data are skipped",
          risk='inference',
          knowledge="a person's key (quasi-identifier) columns; guesses the sensitive column",
          sees=('exact', 'rare'),
          presets=('privacy', 'full'),
          order=150,
          backend='any',
          explainer=("SDMetrics' CategoricalCAP: how often the release's rows with a person's key "
                     "columns carry the person's sensitive value; per record, training against "
                     'held-out people.'))
def cap(ctx: Context, *, key_fields: Any = None, sensitive_fields: Any = None,
        max_records: int = 100) -> MetricResult:
    """SDMetrics' ``CategoricalCAP``: unmatched original keys are skipped.

    Parameters
    ----------
    ctx : Context
        Evaluation context.
    key_fields, sensitive_fields : list of str, optional
        Known and sensitive columns (default: metadata ``quasi_identifiers`` / ``sensitive``).
    max_records : int
        Most exposed original rows listed in ``records``.
    """
    return _run(ctx, "cap", "cap", key_fields, sensitive_fields, max_records)


@register("zero_cap", family="disclosure", direction="higher is safer", params=_params(),
          thresholds=THRESHOLDS, aliases=("categoricalzerocap", "categorical_zero_cap"),
          description=_DESC + "; rows whose key is absent from the synthetic data count as 0",
          risk='inference',
          knowledge="a person's key (quasi-identifier) columns; guesses the sensitive column",
          sees=('exact', 'rare'),
          presets=('full',),
          order=260,
          backend='any',
          explainer=("SDMetrics' CategoricalZeroCAP: CAP counting a record as guessed only when every "
                     'release row with its key agrees.'))
def zero_cap(ctx: Context, *, key_fields: Any = None, sensitive_fields: Any = None,
             max_records: int = 100) -> MetricResult:
    """SDMetrics' ``CategoricalZeroCAP``: unmatched original keys score probability 0 (see :func:`cap`)."""
    return _run(ctx, "zero_cap", "zero_cap", key_fields, sensitive_fields, max_records)


@register("generalized_cap", family="disclosure", direction="higher is safer", params=_params(),
          thresholds=THRESHOLDS, aliases=("categoricalgeneralizedcap", "categorical_generalized_cap"),
          description=_DESC + "; absent keys use the nearest synthetic keys by Hamming distance (ties pooled)",
          risk='inference',
          knowledge="a person's key columns (nearest match); guesses the sensitive column",
          sees=('exact', 'rare'),
          presets=('full',),
          order=270,
          warmup=True,
          explainer=("SDMetrics' CategoricalGeneralizedCAP: CAP with the nearest key in the release "
                     'when none matches exactly.'))
def generalized_cap(ctx: Context, *, key_fields: Any = None, sensitive_fields: Any = None,
                    max_records: int = 100) -> MetricResult:
    """SDMetrics' ``CategoricalGeneralizedCAP``: unmatched keys pool the nearest synthetic keys
    (Hamming distance over the key fields, all ties kept) (see :func:`cap`)."""
    return _run(ctx, "generalized_cap", "generalized_cap", key_fields, sensitive_fields, max_records)


def cap_per_record(original: pd.DataFrame, synthetic: pd.DataFrame, key_fields: list[str],
                   sensitive_fields: list[str], method: str = "cap", metadata: Any = None,
                   continuous_column_names: list[str] | None = None,
                   num_discrete_bins: int = 10) -> pd.DataFrame:
    """Per-original-row CAP values (SDMetrics issue #531) in one vectorised call.

    Returns
    -------
    DataFrame
        One row per original row: ``probability`` (of the true sensitive tuple; NaN = skipped by
        ``cap``), ``synthetic_rows_pooled`` and ``key_distance`` (0 exact, -1 none).
    """
    if method not in METHODS:
        raise ConfigError(f"method must be one of {list(METHODS)}, got {method!r}")
    ctx = Context.from_frames(original, synthetic, metadata=metadata, canonical=False)  # input rows
    keys, sens = resolve_fields(ctx, "cap_per_record", "key_fields", key_fields, "sensitive_fields",
                                sensitive_fields)
    a = analyse(ctx, keys, sens, method, continuous=continuous_column_names or (), bins=num_discrete_bins,
                per_field=False)
    return pd.DataFrame({"probability": a.rows.probability, "synthetic_rows_pooled": a.rows.pool,
                         "key_distance": a.rows.distance})
