"""Metrics about people who own many rows: whole-person copies and sequence fidelity."""
