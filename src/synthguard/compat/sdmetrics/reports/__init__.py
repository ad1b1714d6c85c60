"""SDMetrics' reports (``sdmetrics.reports`` and ``sdmetrics.reports.single_table``) over synthguard."""

from . import single_table
from .single_table import DiagnosticReport, QualityReport

__all__ = ["DiagnosticReport", "QualityReport", "single_table"]
