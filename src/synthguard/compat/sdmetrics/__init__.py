"""SDMetrics' single-table privacy metrics and reports over synthguard's metrics.

Change one import and keep the code::

    # from sdmetrics.single_table import CategoricalCAP, DCRBaselineProtection
    from synthguard.compat.sdmetrics.single_table import CategoricalCAP, DCRBaselineProtection
    # from sdmetrics.reports.single_table import QualityReport
    from synthguard.compat.sdmetrics.reports.single_table import QualityReport

Classes keep SDMetrics' names, argument names and order, ``compute`` / ``compute_breakdown`` /
``normalize`` classmethods, ``goal``, ``min_value``, ``max_value`` and breakdown keys; every number is
computed by :mod:`synthguard.metrics.disclosure` and :mod:`synthguard.metrics.fidelity` (one
implementation). The deliberate differences from SDMetrics 0.32 are listed in ``docs/compat.md``.
"""

from . import reports, single_table
from .goal import Goal

__all__ = ["Goal", "reports", "single_table"]
