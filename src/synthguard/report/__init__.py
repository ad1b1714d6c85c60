"""The report: JSON for machines, a console table and an HTML page for people."""

from .report import Report

__all__ = ["Report"]
