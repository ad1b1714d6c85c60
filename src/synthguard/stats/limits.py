"""Detection limits: the smallest leak an exact test would have seen."""

from __future__ import annotations

import math

import numpy as np

from ._special import _binom_pmf, _binom_sf, _hypergeom_sf
from .exact import binomial_greater


def _fisher_critical(k2: np.ndarray, n1: int, n2: int, alpha: float) -> np.ndarray:
    """For each non-member count ``k2``, the smallest member count ``k1`` whose one-sided Fisher
    p-value is below ``alpha`` (``n1 + 1`` when none is), by a vectorised binary search."""
    lo = np.zeros(k2.shape, dtype=np.int64)
    hi = np.full(k2.shape, n1 + 1, dtype=np.int64)
    while np.any(lo < hi):
        mid = (lo + hi) // 2
        p = _hypergeom_sf(mid - 1, n1 + n2, mid + k2, n1)
        sig = (p < alpha) & (mid <= n1)
        hi = np.where(sig, mid, hi)
        lo = np.where(sig, lo, mid + 1)
        lo = np.minimum(lo, hi)
    return lo


def detection_limit(n1: int, n2: int | None, p0: float, *, alpha: float = 0.05,
                    power: float = 0.8) -> float:
    """Smallest excess ``d`` of the members' rate over ``p0`` that the one-sided exact test at
    ``alpha`` detects with ``power``: "a leak exposing at least ``d`` of the training records
    beyond chance would have been seen".

    Exact, not a normal approximation (which is far too optimistic near a zero null rate):
    with ``n2`` non-members the test is Fisher's (:func:`fisher_greater`), and the power at
    ``p0 + d`` sums, over the plausible non-member counts, the binomial chance that the members'
    count reaches its critical value; with ``n2=None`` the test is the exact binomial one against
    the known rate ``p0``. Solved for ``d`` by bisection. NaN when no effect is detectable.
    """
    if n1 <= 0 or (n2 is not None and n2 <= 0):
        return float("nan")
    n1 = int(n1)
    p0 = float(min(max(p0, 0.0), 1.0))
    if n2 is None:
        crit = n1 + 1
        lo_k, hi_k = 0, n1 + 1
        while lo_k < hi_k:  # smallest k with P(X >= k | p0) < alpha
            mid = (lo_k + hi_k) // 2
            if binomial_greater(mid, n1, p0) < alpha:
                hi_k = mid
            else:
                lo_k = mid + 1
        crit = lo_k
        if crit > n1:
            return float("nan")

        def pw(d: float) -> float:
            return float(_binom_sf(crit - 1, n1, min(1.0, p0 + d)))
    else:
        n2 = int(n2)
        sd = math.sqrt(max(n2 * p0 * (1 - p0), 1.0))
        k2 = np.arange(max(0, int(n2 * p0 - 7 * sd)), min(n2, int(n2 * p0 + 7 * sd) + 1) + 1)
        w = _binom_pmf(k2, n2, p0)
        crit = _fisher_critical(k2, n1, n2, alpha)

        def pw(d: float) -> float:
            return float(np.sum(w * _binom_sf(crit - 1, n1, min(1.0, p0 + d))))

    hi = 1.0 - p0
    if hi <= 0 or pw(hi) < power:
        return float("nan")
    lo = 0.0
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        if pw(mid) >= power:
            hi = mid
        else:
            lo = mid
    return float(hi)
