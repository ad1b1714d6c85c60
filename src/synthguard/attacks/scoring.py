"""Scoring of attacks: threshold criteria, effective epsilon, and the :class:`AttackSummary`.

Everything statistical is built on :mod:`synthguard.stats` (``auc_score``, ``auc_ci``,
``roc_curve``, ``tpr_at_fpr``, ``thin_roc``, ``clopper_pearson``, ``proportion``); this module only
adds what attacks need on top: picking a threshold by a named criterion, and a stable
Clopper-Pearson lower bound of the effective epsilon.

Effective epsilon lives in :mod:`synthguard.stats.epsilon` (shared with the metrics).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import stats
from ..errors import ConfigError
from ..stats.epsilon import (
    EPS_LEVELS,
    EpsilonEstimate,
    effective_epsilon,
    effective_epsilon_point,
)

__all__ = ["AttackSummary", "EpsilonEstimate", "Criterion", "parse_criterion", "select_threshold",
           "effective_epsilon", "effective_epsilon_point", "EPS_LEVELS"]

# label-free quantile levels whose score values are the candidate thresholds of the epsilon bound
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
