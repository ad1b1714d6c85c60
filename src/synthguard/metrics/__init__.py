"""Metrics, grouped by family; every module here is imported by the registry and registers its metrics."""
