"""The attack API: ``train(threat_model)``, ``attack_score(datasets)``, ``attack(datasets)``.

Attacks work on **lists of synthetic datasets** (one score and one decision per dataset) for the
current target of a :class:`~synthguard.attacks.threat_models.TargetView`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..data.encoding import Block
from ..engine.neighbors import DistanceMetric, gower, hamming, lp
from ..errors import ConfigError
from .scoring import Criterion, parse_criterion, select_threshold

__all__ = ["Attack", "TrainableThresholdAttack", "resolve_distance"]


class Attack:
    """Base class: subclasses implement :meth:`train` and :meth:`attack_score`."""

    label: str = "attack"
    trained: bool = False
    threshold: float = 0.5

    def train(self, threat_model: Any, num_samples: int = 100) -> Attack:  # pragma: no cover - abstract
        raise NotImplementedError

    def attack_score(self, datasets: Sequence[pd.DataFrame]) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def attack(self, datasets: Sequence[pd.DataFrame], scores: np.ndarray | None = None) -> np.ndarray:
        """Decisions (True = member / positive value): ``score >= threshold``."""
        if not self.trained:
            raise ConfigError(f"attack {self.label!r} is not trained: call train(threat_model) first")
        s = self.attack_score(datasets) if scores is None else np.asarray(scores, dtype=float)
        return s >= self.threshold

    def _bind(self, threat_model: Any) -> None:
        if not hasattr(threat_model, "target_record"):
            raise ConfigError("train() needs one target: iterate the threat model "
                              "(for view in threat_model) or call threat_model.view(i)")
        self.threat_model = threat_model
        self.target_id = threat_model.target_id


def resolve_distance(distance: str | DistanceMetric, threat_model: Any, columns: Sequence[str],
                     p: float = 2.0) -> tuple[DistanceMetric, bool]:
    """The engine metric for ``distance`` on ``columns`` and whether blocks are categorical-only.

    ``"hamming"`` compares every column by equality (normalised share of differing attributes),
    ``"gower"`` scales numeric columns by their range over the attacker's data (terms clipped at 1),
    ``"lp"`` is the range-scaled Lp distance. A :class:`DistanceMetric` is used as given.
    """
    if isinstance(distance, DistanceMetric):
        return distance, False
    name = str(distance).lower()
    if name == "hamming":
        return hamming(0), True
    tm = threat_model
    num_cols = [c for c in columns if tm.encoder.is_numeric(c)]
    idx = [list(tm.full_block.num_columns).index(c) for c in num_cols]
    ranges = tm.ranges[idx] if idx else np.zeros(0)
    if name == "gower":
        return gower(ranges, clip=True), False
    if name in ("lp", "l2", "euclidean"):
        return lp(ranges, p), False
    if name in ("l1", "manhattan"):
        return lp(ranges, 1.0), False
    raise ConfigError(f"unknown distance {distance!r}: use 'gower', 'hamming', 'lp' or a DistanceMetric")


class TrainableThresholdAttack(Attack):
    """A score plus a threshold learnt on shadow datasets by a named criterion.

    Parameters
    ----------
    criterion : str or tuple
        ``"accuracy"`` / ``("accuracy",)``, ``("tp"|"tpr", v)``, ``("fp"|"fpr", v)`` or
        ``("threshold", v)`` (the only one usable without training samples, e.g. no-box).
    """

    def __init__(self, criterion: Any = "accuracy") -> None:
        self.criterion: Criterion = parse_criterion(criterion)

    def _prepare(self, threat_model: Any) -> None:
        """Per-target setup before scores are computed (encode the target, build the distance)."""

    def _train_attack_score(self, datasets: Sequence[pd.DataFrame]) -> np.ndarray:
        return self.attack_score(datasets)

    def train(self, threat_model: Any, num_samples: int = 100) -> TrainableThresholdAttack:
        """Fit the threshold on ``num_samples`` shadow datasets (none for a fixed threshold)."""
        self._bind(threat_model)
        self._prepare(threat_model)
        self.trained = True
        if self.criterion.kind == "threshold":
            self.threshold = float(self.criterion.value)
            self.train_scores = np.zeros(0)
            return self
        datasets, labels = threat_model.generate_training_samples(num_samples)
        scores = np.asarray(self._train_attack_score(datasets), dtype=float)
        self.threshold = select_threshold(labels, scores, self.criterion)
        self.train_scores, self.train_labels = scores, labels
        return self

    # helpers for subclasses ------------------------------------------------------------------
    def _encode(self, frame: pd.DataFrame, columns: Sequence[str], categorical_only: bool) -> Block:
        return self.threat_model.encode(frame, columns, categorical_only=categorical_only)
