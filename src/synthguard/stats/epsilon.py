"""Effective epsilon: the DP lower bound an attack's scores prove (also used by the metrics).

Effective epsilon (DP audit, Jagielski et al. 2020)
---------------------------------------------------
An attack that predicts "member" when ``score >= t`` has true- and false-positive rates TPR, FPR.
A mechanism that is epsilon-DP forces ``TPR <= e^eps FPR`` and ``1 - FPR <= e^eps (1 - TPR)``, so
``eps >= max(log(TPR / FPR), log((1 - FPR) / (1 - TPR)))``.

TAPAS picks the threshold on a 10 % validation split and bounds epsilon on the rest; with a few
hundred test datasets the split is too small to lift any Clopper-Pearson bound above 0, so the
first scanned threshold wins the tie and the report says 0 (see ``docs/attacks.md``).
We use **all** samples and pay for the choice of threshold with a union bound instead:

1. Candidate thresholds are chosen *without the labels*: the distinct values among the pooled
   scores' quantiles at fixed levels (at most ``len(EPS_LEVELS)`` of them).
2. For every candidate and both directions, the lower bound is computed from one-sided
   Clopper-Pearson limits at level ``alpha / (2 m)`` each, ``m`` = number of (threshold,
   direction) tests (Bonferroni).
3. The reported lower bound is the largest over the ``m`` tests; by the union bound it holds with
   probability at least ``1 - alpha`` simultaneously, so taking the maximum is valid.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .rates import clopper_pearson

__all__ = ["EPS_LEVELS", "EpsilonEstimate", "effective_epsilon", "effective_epsilon_point",
           "epsilon_lower_bound"]

EPS_LEVELS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999, 0.4, 0.3, 0.2, 0.1, 0.05, 0.02,
              0.01)



@dataclass(frozen=True)
class EpsilonEstimate:
    """Effective-epsilon lower bound and the operating point that gave it.

    ``lower`` is the simultaneous Clopper-Pearson lower bound (>= 0); ``point`` is
    ``log(TPR/FPR)`` or ``log(TNR/FNR)`` at that threshold (may be ``inf``).
    """

    lower: float
    point: float
    threshold: float
    direction: str
    tpr: float
    fpr: float
    n_positive: int
    n_negative: int
    n_tests: int
    confidence_level: float
    method: str = "max over label-free score-quantile thresholds, Clopper-Pearson with Bonferroni"

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("lower", "point", "threshold", "direction", "tpr", "fpr",
                                              "n_positive", "n_negative", "n_tests",
                                              "confidence_level", "method")}


def _log_ratio(a: float, b: float) -> float:
    if a <= 0:
        return 0.0
    if b <= 0:
        return math.inf
    return max(0.0, math.log(a / b))


def effective_epsilon(labels: np.ndarray, scores: np.ndarray, *, confidence_level: float = 0.95,
                      levels: Sequence[float] = EPS_LEVELS) -> EpsilonEstimate:
    """Simultaneous Clopper-Pearson lower bound of the effective epsilon (see module docstring).

    Parameters
    ----------
    labels : ndarray of bool
        True for datasets that contain the target (members).
    scores : ndarray of float
        Attack scores, higher = more likely member.
    confidence_level : float
        Joint confidence of the bound (over all candidate thresholds).
    levels : sequence of float
        Quantile levels of the pooled scores used as candidate thresholds (label-free).

    Returns
    -------
    EpsilonEstimate
    """
    labels = np.asarray(labels).astype(bool)
    scores = np.asarray(scores, dtype=float)
    n1, n0 = int(labels.sum()), int((~labels).sum())
    if n1 == 0 or n0 == 0:
        return EpsilonEstimate(0.0, float("nan"), float("nan"), "none", float("nan"), float("nan"),
                               n1, n0, 0, confidence_level)
    cands = np.unique(np.quantile(scores, np.asarray(levels, dtype=float), method="inverted_cdf"))
    m = 2 * cands.size
    alpha = 1.0 - confidence_level
    level = 1.0 - alpha / m  # two-sided CP at this level puts alpha / (2 m) in each tail
    pos, neg = scores[labels], scores[~labels]
    best = None
    for t in cands:  # a few dozen candidates at most
        tp = int((pos >= t).sum())
        fp = int((neg >= t).sum())
        tpr_lo, tpr_hi = clopper_pearson(tp, n1, level)
        fpr_lo, fpr_hi = clopper_pearson(fp, n0, level)
        tpr, fpr = tp / n1, fp / n0
        for direction, lower, point in (
                ("tpr/fpr", _log_ratio(tpr_lo, fpr_hi), _log_ratio(tpr, fpr)),
                ("tnr/fnr", _log_ratio(1.0 - fpr_hi, 1.0 - tpr_lo), _log_ratio(1.0 - fpr, 1.0 - tpr))):
            if best is None or lower > best[0]:
                best = (lower, point, float(t), direction, tpr, fpr)
    lower, point, t, direction, tpr, fpr = best
    return EpsilonEstimate(float(lower), float(point), t, direction, float(tpr), float(fpr), n1, n0, m,
                           confidence_level)


def effective_epsilon_point(labels: np.ndarray, scores: np.ndarray, trim: int = 10) -> float:
    """TAPAS' point estimate: over thresholds between the ``trim`` lowest and highest scores (or
    10 %, whichever is smaller), ``max log(max(TPR/FPR, TNR/FNR))``; ``inf`` when any threshold has
    no false positive. Reported for comparison only: it is optimistic and often infinite."""
    labels = np.asarray(labels).astype(bool)
    scores = np.asarray(scores, dtype=float)
    n1, n0 = int(labels.sum()), int((~labels).sum())
    if n1 == 0 or n0 == 0:
        return float("nan")
    srt = np.sort(scores)
    k = min(trim, int(0.1 * srt.size))
    cand = np.unique(srt[k: srt.size - k] if srt.size > 2 * k else srt)
    tp = (scores[labels][None, :] >= cand[:, None]).sum(axis=1) / n1
    fp = (scores[~labels][None, :] >= cand[:, None]).sum(axis=1) / n0
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(tp > 0, np.log(tp) - np.log(fp), 0.0)
        b = np.where(1 - fp > 0, np.log(1 - fp) - np.log(1 - tp), 0.0)
    vals = np.nan_to_num(np.maximum(a, b), nan=0.0, posinf=np.inf)
    return float(max(0.0, vals.max())) if vals.size else 0.0


def epsilon_lower_bound(tp: int, n_members: int, fp: int, n_non_members: int, *,
                        confidence_level: float = 0.95, delta: float = 0.0) -> dict[str, float]:
    """Lower bound on the epsilon of a (epsilon, delta)-DP generator from one attack's counts.

    A DP generator bounds any test's true positive rate by ``e^eps FPR + delta``; with one-sided
    Clopper-Pearson bounds (each at ``(1 - confidence_level) / 2``, so jointly at
    ``confidence_level``) ``eps >= log((TPR_low - delta) / FPR_high)`` (Jagielski et al. 2020;
    Steinke, Nasr & Jagielski 2023 for the one-run setting, where records were assigned to
    training or held out at random). The threshold behind the counts must be chosen on other
    records. A lower bound, never a certificate of privacy.

    Parameters
    ----------
    tp, n_members : int
        Members flagged and members tested.
    fp, n_non_members : int
        Non-members flagged and non-members tested.
    confidence_level : float
        Joint confidence of the two bounds.
    delta : float
        The generator's delta (0 for pure DP).

    Returns
    -------
    dict
        ``epsilon_lower`` (``max(0, bound)``), ``interval`` (``(log((TPR_low - delta) / FPR_high),
        log(TPR_high / FPR_low))``: the range of log-ratios the counts allow; includes 0 when the
        attack does no better than chance), ``tpr``, ``fpr``, ``tpr_low``, ``fpr_high`` and the counts.

    Examples
    --------
    >>> round(epsilon_lower_bound(60, 200, 0, 200)["epsilon_lower"], 2)
    2.56
    """
    nan = float("nan")
    if n_members <= 0 or n_non_members <= 0:
        return {"epsilon_lower": nan, "interval": (nan, nan), "tpr": nan, "fpr": nan,
                "tpr_low": nan, "fpr_high": nan, "tp": int(tp), "fp": int(fp),
                "n_members": int(n_members), "n_non_members": int(n_non_members)}
    tpr_lo, tpr_hi = clopper_pearson(int(tp), int(n_members), confidence_level)
    fpr_lo, fpr_hi = clopper_pearson(int(fp), int(n_non_members), confidence_level)

    def log_ratio(a: float, b: float) -> float:
        if a <= 0:
            return -math.inf
        return math.inf if b <= 0 else math.log(a / b)

    lo = log_ratio(tpr_lo - delta, fpr_hi)
    hi = log_ratio(tpr_hi, fpr_lo)
    return {"epsilon_lower": max(0.0, lo), "interval": (lo, hi), "tpr": tp / n_members,
            "fpr": fp / n_non_members, "tpr_low": tpr_lo, "fpr_high": fpr_hi, "tp": int(tp),
            "fp": int(fp), "n_members": int(n_members), "n_non_members": int(n_non_members)}
