"""Distortion metrics: how much a release changed the data (a utility-loss measure, not a privacy risk)."""
