"""Statistics shared by every metric: rates with intervals, risk with its CI, bootstrap, ROC.

No metric computes its own interval or risk: they all call this package.

The package re-exports the public names of its modules, by job: ``rng`` (seeded streams),
``rates`` (rates, intervals, risk), ``bootstrap``, ``roc`` (AUC, ROC, the Mann-Whitney test),
``contingency`` (chi-square, Cramer's V), ``exact`` (Fisher, binomial, Holm), ``limits`` (detection
limits), ``permutation`` (label-permutation tests), ``epsilon`` (DP lower bounds), ``maxt`` (joint
min-P over record flags); ``_special`` holds SciPy's distribution functions without ``scipy.stats``.
"""

from __future__ import annotations

# the error type and the SciPy wrappers stay importable from here, as before the split
from ..errors import ConfigError  # noqa: F401
from ._special import _beta_ppf, _binom_pmf, _binom_sf, _hypergeom_sf  # noqa: F401
from .bootstrap import bootstrap_ci, percentile_ci
from .contingency import chi_square, chi_square_table, cramers_v_table
from .epsilon import epsilon_lower_bound
from .exact import binomial_greater, fisher_greater, holm_adjust
from .limits import detection_limit
from .permutation import auc_max_t, label_permutation_greater, pooled_tail, tail_counts
from .rates import (
                    Rate,
                    Risk,
                    clopper_pearson,
                    difference_ci,
                    median_ci,
                    proportion,
                    risk_from_rates,
                    wilson_interval,
                    wilson_rate,
                    z_value,
)
from .rng import make_rng
from .roc import (
                    AUC_DELONG_MIN_ROWS,
                    auc_ci,
                    auc_ci_delong,
                    auc_null,
                    auc_score,
                    auc_test,
                    roc_curve,
                    thin_roc,
                    tpr_at_fpr,
                    tpr_at_low_fpr,
)

__all__ = [
    "Rate", "Risk", "z_value", "wilson_rate", "wilson_interval", "clopper_pearson", "risk_from_rates",
    "bootstrap_ci", "percentile_ci", "auc_score", "roc_curve", "tpr_at_fpr", "tpr_at_low_fpr",
    "auc_ci", "proportion",
    "make_rng", "difference_ci", "median_ci", "chi_square", "chi_square_table", "cramers_v_table",
    "fisher_greater", "binomial_greater", "holm_adjust", "detection_limit", "tail_counts",
    "label_permutation_greater", "auc_test", "auc_null", "auc_max_t", "pooled_tail", "epsilon_lower_bound",
    "AUC_DELONG_MIN_ROWS", "auc_ci_delong", "thin_roc",
]
