"""Exact one-sided tests of a rate (Fisher, binomial) and Holm's adjustment of a family of them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import ConfigError
from ._special import _binom_sf, _hypergeom_sf


def fisher_greater(k1: int, n1: int, k2: int, n2: int) -> float:
    """One-sided Fisher exact p-value that rate 1 (``k1/n1``) exceeds rate 2 (``k2/n2``).

    The hypergeometric upper tail ``P(X >= k1)`` with ``X`` the members' count among the
    ``k1 + k2`` records showing the statistic, conditional on both margins (exact, any n).
    Returns NaN when either n is 0.
    """
    if n1 <= 0 or n2 <= 0:
        return float("nan")
    k1, n1, k2, n2 = int(k1), int(n1), int(k2), int(n2)
    return float(min(1.0, _hypergeom_sf(k1 - 1, n1 + n2, k1 + k2, n1)))


def binomial_greater(k: int, n: int, p0: float) -> float:
    """One-sided exact binomial p-value ``P(X >= k)`` for ``X ~ Binomial(n, p0)``."""
    if n <= 0:
        return float("nan")
    if k <= 0:
        return 1.0
    return float(min(1.0, _binom_sf(int(k) - 1, int(n), float(p0))))


def holm_adjust(p_values: Sequence[float], weights: Sequence[float] | None = None) -> list[float]:
    """Holm's step-down adjustment of a family of p-values (NaN entries stay NaN, not counted).

    Controls the family-wise error rate: rejecting every test with adjusted p < alpha makes at
    least one false alarm at most alpha likely, whatever the dependence between the tests.
    With ``weights`` (positive, fixed before seeing the data) it is Holm's weighted procedure
    (Holm 1979): tests are ordered by ``p / w`` and the step for test ``i`` multiplies ``p_i / w_i``
    by the weight still in play; equal weights give the plain procedure.
    """
    p = np.asarray(p_values, dtype=float)
    w = np.ones(p.shape) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != p.shape or np.any(w <= 0):
        raise ConfigError("holm_adjust: one positive weight per p-value is needed")
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = ok.size
    if m == 0:
        return out.tolist()
    order = ok[np.lexsort((np.arange(ok.size), p[ok] / w[ok]))]
    remaining = np.cumsum(w[order][::-1])[::-1]  # weight of the tests not yet rejected
    adj = np.minimum(1.0, np.maximum.accumulate(p[order] / w[order] * remaining))
    out[order] = adj
    return out.tolist()
