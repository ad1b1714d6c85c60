"""Fidelity metrics: SDMetrics-compatible quality and diagnostic reports."""
