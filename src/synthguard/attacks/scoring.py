"""Scoring of attacks: threshold criteria, effective epsilon, and the :class:`AttackSummary`.

Everything statistical is built on :mod:`synthguard.stats` (``auc_score``, ``auc_ci``,
``roc_curve``, ``tpr_at_fpr``, ``thin_roc``, ``clopper_pearson``, ``proportion``); this module only
adds what attacks need on top: picking a threshold by a named criterion, and a stable
Clopper-Pearson lower bound of the effective epsilon.

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
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import stats
from ..errors import ConfigError

__all__ = ["AttackSummary", "EpsilonEstimate", "Criterion", "parse_criterion", "select_threshold",
           "effective_epsilon", "effective_epsilon_point", "EPS_LEVELS"]

# label-free quantile levels whose score values are the candidate thresholds of the epsilon bound
EPS_LEVELS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999, 0.4, 0.3, 0.2, 0.1, 0.05, 0.02,
              0.01)

_ALIASES = {"accuracy": "accuracy", "tpr": "tpr", "tp": "tpr", "fpr": "fpr", "fp": "fpr",
            "threshold": "threshold"}


@dataclass(frozen=True)
class Criterion:
    """A parsed threshold criterion: ``kind`` in accuracy/tpr/fpr/threshold, its ``value`` and the
    optional positive label (third element of the tuple form)."""

    kind: str
    value: float | None = None
    positive_label: Any = None

    def to_tuple(self) -> tuple:
        return (self.kind,) if self.value is None else (self.kind, self.value)


def parse_criterion(criterion: Any) -> Criterion:
    """Read ``"accuracy"``, ``("accuracy",)``, ``("tp"|"tpr", v)``, ``("fp"|"fpr", v)`` or
    ``("threshold", v)`` (optionally a third element naming the positive label).

    Raises
    ------
    ConfigError
        For an unknown name or a missing/invalid value.
    """
    if isinstance(criterion, Criterion):
        return criterion
    if isinstance(criterion, str):
        criterion = (criterion,)
    if not isinstance(criterion, (tuple, list)) or not criterion:
        raise ConfigError(f"criterion must be 'accuracy' or a tuple like ('fpr', 0.01), got {criterion!r}")
    name = str(criterion[0]).lower()
    kind = _ALIASES.get(name)
    if kind is None:
        raise ConfigError(f"unknown criterion {criterion[0]!r}: use 'accuracy', ('tpr', v), ('fpr', v) "
                          "or ('threshold', v)")
    positive = criterion[2] if len(criterion) > 2 else None
    if kind == "accuracy":
        return Criterion("accuracy", None, criterion[1] if len(criterion) > 1 else None)
    if len(criterion) < 2:
        raise ConfigError(f"criterion ({criterion[0]!r}, v) needs a value v")
    try:
        value = float(criterion[1])
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"criterion {criterion[0]!r} needs a number, got {criterion[1]!r}") from exc
    if kind in ("tpr", "fpr") and not 0.0 <= value <= 1.0:
        raise ConfigError(f"criterion ({criterion[0]!r}, {value}) needs a rate in [0, 1]")
    return Criterion(kind, value, positive)


def select_threshold(labels: np.ndarray, scores: np.ndarray, criterion: Any) -> float:
    """Threshold ``t`` (predict positive when ``score >= t``) chosen on labelled training scores.

    * ``accuracy``: maximises TPR - FPR (balanced accuracy); ties -> the higher threshold.
    * ``("tpr", v)``: the lowest-FPR operating point whose TPR is at least ``v``.
    * ``("fpr", v)``: the highest-TPR operating point whose FPR is at most ``v``; never the +inf
      point of the ROC curve unless no real score satisfies the bound (TAPAS defect 3).
    * ``("threshold", v)``: ``v`` itself (no training needed).
    """
    crit = parse_criterion(criterion)
    if crit.kind == "threshold":
        return float(crit.value)
    labels = np.asarray(labels).astype(bool)
    scores = np.asarray(scores, dtype=float)
    if scores.size == 0:
        raise ConfigError("cannot train a threshold on zero samples: ask for num_samples > 0")
    fpr, tpr, thr = stats.roc_curve(labels, scores)
    fpr, tpr, thr = fpr[1:], tpr[1:], thr[1:]  # drop the (0, 0, +inf) point
    if crit.kind == "accuracy":
        j = int(np.argmax(tpr - fpr))
        return float(thr[j])
    if crit.kind == "tpr":
        ok = np.flatnonzero(tpr >= crit.value - 1e-12)
        return float(thr[ok[0]])
    ok = np.flatnonzero(fpr <= crit.value + 1e-12)
    if ok.size == 0:
        return float(np.nextafter(scores.max(), np.inf))  # nothing predicted positive
    return float(thr[ok[-1]])


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
        tpr_lo, tpr_hi = stats.clopper_pearson(tp, n1, level)
        fpr_lo, fpr_hi = stats.clopper_pearson(fp, n0, level)
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


@dataclass
class AttackSummary:
    """Truth, scores and decisions of one attack on the test datasets of one target.

    ``metrics()`` returns every figure of the report: accuracy, TPR/FPR at the trained threshold,
    advantage, privacy gain, AUC with CI, TPR at FPR 0.1 % and 1 %, thinned ROC points and the
    effective epsilon.
    """

    labels: np.ndarray
    scores: np.ndarray
    predictions: np.ndarray
    threshold: float
    attack: str
    target: Any
    generator: str = ""
    kind: str = "MIA"
    positive_label: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    def metrics(self, *, n_boot: int = 500, confidence_level: float = 0.95, seed: int = 0,
                max_roc_points: int = 101) -> dict[str, Any]:
        """All figures as a plain dict (see class docstring)."""
        y = np.asarray(self.labels).astype(bool)
        s = np.asarray(self.scores, dtype=float)
        p = np.asarray(self.predictions).astype(bool)
        n1, n0 = int(y.sum()), int((~y).sum())
        tp, fp = int((p & y).sum()), int((p & ~y).sum())
        tpr = tp / n1 if n1 else float("nan")
        fpr = fp / n0 if n0 else float("nan")
        both = n1 > 0 and n0 > 0
        auc = stats.auc_score(y, s) if both else 0.5
        auc_ci = (stats.auc_ci(y, s, n_boot=n_boot, confidence_level=confidence_level, seed=seed)
                  if both else (float("nan"), float("nan")))
        fpr_c, tpr_c, _ = stats.roc_curve(y, s)
        eps = effective_epsilon(y, s, confidence_level=confidence_level)
        acc = stats.proportion(int((p == y).sum()), int(y.size), confidence_level)
        return {
            "attack": self.attack, "target": self.target, "generator": self.generator, "kind": self.kind,
            "threshold": self.threshold, "n_test": int(y.size), "n_positive": n1, "n_negative": n0,
            "accuracy": acc["value"], "accuracy_ci": acc["ci"],
            "true_positive_rate": tpr,
            "tpr_ci": stats.proportion(tp, n1, confidence_level)["ci"] if n1 else None,
            "false_positive_rate": fpr,
            "fpr_ci": stats.proportion(fp, n0, confidence_level)["ci"] if n0 else None,
            "advantage": tpr - fpr, "privacy_gain": 1.0 - (tpr - fpr),
            "auc": auc, "auc_ci": list(auc_ci),
            "tpr_at_fpr_0.001": stats.tpr_at_fpr(y, s, 0.001) if both else None,
            "tpr_at_fpr_0.01": stats.tpr_at_fpr(y, s, 0.01) if both else None,
            "fpr_resolution": 1.0 / n0 if n0 else None,  # smallest non-zero FPR measurable
            "roc_curve": stats.thin_roc(fpr_c, tpr_c, max_roc_points),
            "effective_epsilon": eps.lower,
            "effective_epsilon_detail": eps.to_dict(),
            "effective_epsilon_point_tapas": effective_epsilon_point(y, s),
        }
