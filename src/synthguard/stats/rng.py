"""Seeded random streams: every random draw in synthguard comes from :func:`make_rng`."""

from __future__ import annotations

import numpy as np


def make_rng(seed: int | np.random.Generator | None, *stream: int | str) -> np.random.Generator:
    """A ``numpy.random.Generator`` derived from ``seed`` and an optional stream label.

    Distinct labels give independent streams, so adding a metric never shifts another's randomness.
    """
    if isinstance(seed, np.random.Generator):
        return seed
    base = 0 if seed is None else int(seed)
    keys = [base] + [_label_to_int(s) for s in stream]
    return np.random.default_rng(np.random.SeedSequence(keys))


def _label_to_int(label: int | str) -> int:
    if isinstance(label, int):
        return label
    h = 0
    for ch in label.encode():
        h = (h * 131 + ch) % (2**63)
    return h
