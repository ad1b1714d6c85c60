"""Rates with their intervals (Wilson, Clopper-Pearson, Newcombe), the residual risk of an attack
over its control, and the distribution-free interval of a median."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError
from ._special import _beta_ppf


def _check_confidence(confidence_level: float) -> None:
    if not 0.0 < confidence_level < 1.0:
        raise ConfigError(f"confidence_level must lie strictly between 0 and 1, got {confidence_level}")


def z_value(confidence_level: float = 0.95) -> float:
    """Two-sided normal quantile ``Phi^-1((1 + cl) / 2)``."""
    _check_confidence(confidence_level)
    from scipy.special import ndtri  # = scipy.stats.norm.ppf (loc 0, scale 1), bit for bit

    return float(ndtri(0.5 + confidence_level / 2.0))


@dataclass(frozen=True)
class Rate:
    """A success rate with its Wilson-score centre and half-width (anonymeter's convention).

    ``value`` is the Wilson centre ``(k + z^2/2) / (n + z^2)``, ``error`` the half-width.
    """

    value: float
    error: float
    n: int
    k: float
    confidence_level: float

    @property
    def ci(self) -> tuple[float, float]:
        # the Wilson bounds are exactly 0 at k = 0 and exactly 1 at k = n (no rounding residue)
        low = 0.0 if self.k == 0 else max(0.0, self.value - self.error)
        high = 1.0 if self.k == self.n else min(1.0, self.value + self.error)
        return (low, high)

    @property
    def raw(self) -> float:
        """The plain proportion ``k / n``."""
        return self.k / self.n if self.n else float("nan")


def wilson_rate(k: float, n: int, confidence_level: float = 0.95) -> Rate:
    """Wilson score centre and half-width for ``k`` successes in ``n`` trials (``k`` may be fractional)."""
    if n <= 0:
        raise ConfigError(f"a rate needs at least one trial, got n={n}")
    if k < 0 or k > n:
        raise ConfigError(f"successes must lie in [0, n], got k={k}, n={n}")
    # confidence_level = 0 is the bare point estimate k / n with no error (anonymeter accepts it)
    z = 0.0 if confidence_level == 0 else z_value(confidence_level)
    z2 = z * z
    centre = (k + z2 / 2.0) / (n + z2)
    half = z / (n + z2) * math.sqrt(k * (n - k) / n + z2 / 4.0)
    return Rate(value=float(centre), error=float(half), n=int(n), k=float(k),
                confidence_level=confidence_level)


def wilson_interval(k: float, n: int, confidence_level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval ``(low, high)`` for ``k`` successes in ``n`` trials."""
    return wilson_rate(k, n, confidence_level).ci


def clopper_pearson(k: int, n: int, confidence_level: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper-Pearson) two-sided interval for a binomial proportion."""
    _check_confidence(confidence_level)
    if n <= 0:
        raise ConfigError(f"a proportion needs at least one trial, got n={n}")
    alpha = 1.0 - confidence_level
    low = 0.0 if k == 0 else _beta_ppf(alpha / 2, k, n - k + 1)
    high = 1.0 if k == n else _beta_ppf(1 - alpha / 2, k + 1, n - k)
    return (low, high)


def proportion(k: int, n: int, confidence_level: float = 0.95) -> dict[str, float | int | list[float]]:
    """``{"value": k/n, "ci": wilson, "n": n, "k": k}``: a plain rate with its n and interval."""
    if n <= 0:
        return {"value": float("nan"), "ci": [float("nan"), float("nan")], "n": 0, "k": int(k)}
    lo, hi = wilson_interval(k, n, confidence_level)
    return {"value": k / n, "ci": [lo, hi], "n": int(n), "k": int(k)}


def difference_ci(k1: int, n1: int, k2: int, n2: int,
                  confidence_level: float = 0.95) -> dict[str, float | list[float]]:
    """Difference ``k1/n1 - k2/n2`` of two independent proportions with Newcombe's hybrid score interval.

    Newcombe (1998), method 10: the interval combines the two Wilson intervals,
    ``d - sqrt((p1 - l1)^2 + (u2 - p2)^2)`` to ``d + sqrt((u1 - p1)^2 + (p2 - l2)^2)``.
    Returns ``{"value": d, "ci": [low, high]}`` (NaN when either n is 0).
    """
    if n1 <= 0 or n2 <= 0:
        return {"value": float("nan"), "ci": [float("nan"), float("nan")]}
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson_interval(k1, n1, confidence_level)
    l2, u2 = wilson_interval(k2, n2, confidence_level)
    d = p1 - p2
    low = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return {"value": d, "ci": [max(-1.0, low), min(1.0, high)]}


@dataclass(frozen=True)
class Risk:
    """A residual risk ``(attack - control) / (1 - control)`` with its (clipped) interval."""

    value: float
    ci: tuple[float, float]
    relative_to: str


def risk_from_rates(attack: Rate, control: Rate | None = None) -> Risk:
    """Risk of an attack relative to a control attack (or absolute when no control is given).

    ``R = (a - c) / (1 - c)``, with first-order error propagation
    ``dR = sqrt((ea / (1 - c))^2 + (ec (a - 1) / (1 - c)^2)^2)``; value and interval clipped to [0, 1].
    """
    if control is None:
        v, e = attack.value, attack.error
        rel = "absolute: attack success rate (no control data, so not corrected for what an attacker learns from the population)"
    else:
        a, c = attack.value, control.value
        if c >= 1.0:
            return Risk(float("nan"), (float("nan"), float("nan")), "control attack always succeeds")
        v = (a - c) / (1.0 - c)
        e = math.sqrt((attack.error / abs(1.0 - c)) ** 2
                      + (control.error * (a - 1.0) / (1.0 - c) ** 2) ** 2)
        rel = "residual: attack on original relative to the same attack on control"
    clip = lambda x: float(min(1.0, max(0.0, x)))  # noqa: E731
    return Risk(clip(v), (clip(v - e), clip(v + e)), rel)


def median_ci(values: np.ndarray, confidence_level: float = 0.95) -> tuple[float, float]:
    """Distribution-free interval of the median: the order statistics at the Clopper-Pearson bounds
    of the rank ``n/2`` (the classic binomial / sign-test interval). NaN values are ignored."""
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return (float("nan"), float("nan"))
    lo, hi = clopper_pearson(v.size // 2, v.size, confidence_level)
    return (float(np.quantile(v, lo)), float(np.quantile(v, hi)))
