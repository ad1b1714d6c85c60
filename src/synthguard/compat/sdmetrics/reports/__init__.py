"""SDMetrics' reports (``sdmetrics.reports``) over synthguard's fidelity metrics."""

from . import single_table

__all__ = ["single_table"]
