"""SDMetrics' ``DisclosureProtection`` and ``DisclosureProtectionEstimate``.

``score = min(cap_protection / baseline_protection, 1)`` where ``cap_protection`` is a CAP variant
(``computation_method``) on the known -> sensitive columns, continuous columns cut into
``num_discrete_bins`` equal-width bins from the original data (outer bins open-ended), missing
values a category of their own, and ``baseline_protection = 1 - 1/prod(n_categories)`` over the
original's sensitive columns (after binning, missing counted). The estimate averages
``cap_protection`` over ``num_iterations`` seeded subsamples of ``num_rows_subsample`` rows (original
and synthetic drawn independently, without replacement) and honours both parameters.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.results import MetricResult
from ...errors import ConfigError, MetricError
from ...registry import Context, Param, register
from ...stats import wilson_interval
from ._cap_analysis import analyse, analyse_codes, analyse_counted, cap_codes, cap_evidence_counted
from ._cap_core import METHODS
from ._common import backend_bins, has_control, nunique_codes, resolve_fields
from .cap import THRESHOLDS, cap_result, repeated_test

__all__ = ["disclosure_protection", "disclosure_protection_estimate"]


def _method(v: Any) -> str | None:
    return None if str(v).lower() in METHODS else f"must be one of {list(METHODS)}"


def _params(extra: list[Param] | None = None) -> list[Param]:
    return [
        Param("known_column_names", None,
              "columns the attacker knows (default: the metadata's quasi_identifiers)", (list, tuple)),
        Param("sensitive_column_names", None,
              "columns the attacker guesses (default: the metadata's sensitive)", (list, tuple)),
        Param("computation_method", "cap", "CAP variant: cap, zero_cap or generalized_cap", str,
              check=_method),
        Param("continuous_column_names", None,
              "known/sensitive columns to cut into equal-width bins from the original data", (list, tuple)),
        Param("num_discrete_bins", 10, "number of bins for the continuous columns", "positive int"),
        Param("max_records", 100, "how many of the most exposed original rows to list (0 = none)", "non-negative int"),
        *(extra or []),
    ]


def _setup(ctx: Context, name: str, known: Any, sensitive: Any, method: str, continuous: Any,
           bins: int) -> tuple[list[str], list[str], str, list[str]]:
    keys, sens = resolve_fields(ctx, name, "known_column_names", known, "sensitive_column_names", sensitive)
    method = str(method).lower()
    cont = [str(c) for c in ([continuous] if isinstance(continuous, str) else continuous or [])]
    missing = [c for c in cont if c not in ctx.tables.schema.columns]
    if missing:
        raise ConfigError(f"metric {name!r}: continuous_column_names names column(s) {missing} that the data "
                          "does not have")
    used = set(keys) | set(sens)
    return keys, sens, method, [c for c in cont if c in used]


@register("disclosure_protection", family="disclosure", direction="higher is safer", params=_params(),
          thresholds=THRESHOLDS, aliases=("disclosureprotection",),
          description="CAP protection of the sensitive columns relative to a uniform random guess, "
                      "min(cap/baseline, 1) (1 = no more disclosure than guessing)",
          risk='inference',
          knowledge="a person's key columns; guesses the sensitive column",
          sees=('exact', 'rare'),
          presets=('privacy', 'full'),
          order=160,
          backend="any",
          explainer=("SDMetrics' DisclosureProtection: one minus the CAP-style disclosure risk, "
                     'relative to a random baseline.'))
def disclosure_protection(ctx: Context, *, known_column_names: Any = None,
                          sensitive_column_names: Any = None, computation_method: str = "cap",
                          continuous_column_names: Any = None, num_discrete_bins: int = 10,
                          max_records: int = 100) -> MetricResult:
    """SDMetrics' ``DisclosureProtection`` on the full data.

    Parameters
    ----------
    ctx : Context
        Evaluation context.
    known_column_names, sensitive_column_names : list of str, optional
        Known and sensitive columns (default: metadata ``quasi_identifiers`` / ``sensitive``).
    computation_method : {"cap", "zero_cap", "generalized_cap"}
        CAP variant (case-insensitive).
    continuous_column_names : list of str, optional
        Columns binned into ``num_discrete_bins`` equal-width bins from the original data.
    num_discrete_bins : int
        Number of bins.
    max_records : int
        Most exposed original rows listed in ``records``.
    """
    name = "disclosure_protection"
    keys, sens, method, cont = _setup(ctx, name, known_column_names, sensitive_column_names,
                                      computation_method, continuous_column_names, num_discrete_bins)
    extra = {"known_column_names": keys, "sensitive_column_names": sens,
             "continuous_column_names": cont, "num_discrete_bins": num_discrete_bins}
    # without binned columns the test is the CAP metric's own (same keys, pool rule, records)
    repeats = None if cont else repeated_test(method)
    if method == "generalized_cap":  # nearest keys by Hamming distance: one process only
        if ctx.data_backend is not None:
            raise MetricError("computation_method 'generalized_cap' is not available in a distributed "
                              "run: run it in one process, or use 'cap' or 'zero_cap'")
        a = analyse(ctx, keys, sens, method, continuous=cont, bins=num_discrete_bins)
        return cap_result(ctx, name, a, max_records=max_records, relative=True, extra=extra,
                          continuous=cont, bins=num_discrete_bins, repeats=repeats)
    # cap / zero_cap: exact key matches counted through the backend (one process or a cluster);
    # continuous columns cut at equal-width edges from the original's range (SDMetrics' rule)
    edges = backend_bins(ctx.data, cont, num_discrete_bins, "equal_width", ("original",))
    a = analyse_counted(ctx, keys, sens, method, max_records=max_records, bins=edges)
    evidence = cap_evidence_counted(ctx, keys, sens, method, repeats=repeats, continuous=cont,
                                    bins=num_discrete_bins, pairs=True) if has_control(ctx) else None
    return cap_result(ctx, name, a, max_records=max_records, relative=True, extra=extra,
                      evidence=evidence)


@register("disclosure_protection_estimate", family="disclosure", direction="higher is safer",
          params=_params([
              Param("num_rows_subsample", 1000, "rows drawn (without replacement) from each table per "
                    "iteration", "positive int"),
              Param("num_iterations", 10, "number of subsamples averaged", "positive int"),
          ]),
          thresholds=THRESHOLDS, aliases=("disclosureprotectionestimate",),
          description="disclosure_protection averaged over seeded subsamples of the original and "
                      "synthetic rows (for very large tables)",
          risk='inference',
          knowledge="a person's key columns; guesses the sensitive column",
          sees=('exact', 'rare'),
          presets=('full',),
          order=280,
          explainer=("SDMetrics' DisclosureProtectionEstimate: DisclosureProtection on subsamples, "
                     'averaged.'))
def disclosure_protection_estimate(ctx: Context, *, known_column_names: Any = None,
                                   sensitive_column_names: Any = None, computation_method: str = "cap",
                                   continuous_column_names: Any = None, num_discrete_bins: int = 10,
                                   max_records: int = 100, num_rows_subsample: int = 1000,
                                   num_iterations: int = 10) -> MetricResult:
    """SDMetrics' ``DisclosureProtectionEstimate``: mean CAP over ``num_iterations`` subsamples.

    Bins and the baseline come from the full original data. Subsamples are drawn with
    ``ctx.rng`` (same seed, same result). Unlike SDMetrics' ``compute()``, ``num_rows_subsample`` and
    ``num_iterations`` are always honoured. See :func:`disclosure_protection` for the other parameters.
    """
    name = "disclosure_protection_estimate"
    keys, sens, method, cont = _setup(ctx, name, known_column_names, sensitive_column_names,
                                      computation_method, continuous_column_names, num_discrete_bins)
    codes = cap_codes(ctx, keys, sens, continuous=cont, bins=num_discrete_bins)
    real, syn = codes["original"], codes["synthetic"]
    n_cat = nunique_codes(real[:, len(keys):])
    rng = ctx.rng("subsample")
    caps, k_sum, n_sum = [], 0.0, 0
    last = None
    for _ in range(int(num_iterations)):  # loop over iterations
        ri = rng.choice(real.shape[0], min(int(num_rows_subsample), real.shape[0]), replace=False)
        si = rng.choice(syn.shape[0], min(int(num_rows_subsample), syn.shape[0]), replace=False)
        a = analyse_codes(real[np.sort(ri)], syn[np.sort(si)], keys, sens, method, per_field=False,
                          n_categories=n_cat)
        caps.append(a.cap_protection)
        p = a.rows.probability[a.rows.counted]
        k_sum += float(np.sum(1.0 - p))
        n_sum += int(p.size)
        last = a
    mean_cap = float(np.nanmean(caps)) if np.isfinite(caps).any() else float("nan")
    extra = {"known_column_names": keys, "sensitive_column_names": sens, "continuous_column_names": cont,
             "num_discrete_bins": num_discrete_bins, "num_rows_subsample": int(num_rows_subsample),
             "num_iterations": int(num_iterations), "cap_protection_per_iteration": caps}
    # the evidence uses every training and control row (per-record rates are size-free)
    res = cap_result(ctx, name, last, max_records=0, relative=True, extra=extra, value=mean_cap,
                     continuous=cont, bins=num_discrete_bins,
                     repeats="disclosure_protection" if cont else repeated_test(method))
    # pooled interval over every counted row of every iteration (conservative, see cap_result)
    from dataclasses import replace

    base = last.baseline
    ci = None
    if n_sum > 0 and base > 0:
        lo, hi = wilson_interval(min(max(k_sum, 0.0), n_sum), n_sum)
        ci = (min(lo / base, 1.0), min(hi / base, 1.0))
    details = dict(res.details)
    details["n_counted"] = n_sum
    for k in ("n_original_rows", "n_exact_key_match", "n_key_not_in_synthetic", "per_class_size"):
        details.pop(k, None)
    return replace(res, ci=ci, n=n_sum or None, details=details)
