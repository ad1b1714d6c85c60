"""Shadow modelling: a classifier over whole synthetic datasets, trained on labelled shadow sets
(Groundhog, Stadler et al., USENIX Security 2022)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.ensemble import RandomForestClassifier

from ..errors import ConfigError
from ..stats import make_rng
from .base import Attack
from .features import (
    CorrSetFeature,
    HistSetFeature,
    NaiveSetFeature,
    RandomTargetedQueryFeature,
    SetFeature,
)

__all__ = ["FeatureBasedSetClassifier", "ShadowModellingAttack", "GroundhogAttack"]


class FeatureBasedSetClassifier:
    """A set feature followed by an sklearn classifier (probability of the positive label).

    Parameters
    ----------
    features : SetFeature
        Dataset -> vector (combine with ``+``).
    model : sklearn classifier, optional
        Default: ``RandomForestClassifier(n_estimators=100)`` seeded from the threat model.
    """

    def __init__(self, features: SetFeature, model: Any = None) -> None:
        self.features = features
        self.model = model

    def fit(self, threat_model: Any, datasets: Sequence[pd.DataFrame], labels: np.ndarray) -> None:
        self.features.fit(threat_model)
        x = self.features.extract(datasets)
        y = np.asarray(labels).astype(int)
        self._constant = None
        if np.unique(y).size < 2:
            self._constant = float(y[0]) if y.size else 0.5
            return
        seed = int(make_rng(threat_model.seed, "set-classifier", threat_model.target_id).integers(2**31 - 1))
        model = (RandomForestClassifier(n_estimators=100, random_state=seed, n_jobs=1)
                 if self.model is None else clone(self.model))
        if self.model is not None and "random_state" in model.get_params():
            model.set_params(random_state=seed)
        self._model = model.fit(x, y)

    def predict_proba(self, datasets: Sequence[pd.DataFrame]) -> np.ndarray:
        if self._constant is not None:
            return np.full(len(datasets), self._constant)
        x = self.features.extract(datasets)
        proba = self._model.predict_proba(x)
        classes = list(self._model.classes_)
        return proba[:, classes.index(1)]


class ShadowModellingAttack(Attack):
    """Train a set classifier on ``num_samples`` shadow datasets; score = its probability.

    Decisions use ``score >= 0.5`` (the classifier's own boundary).
    """

    def __init__(self, classifier: FeatureBasedSetClassifier, label: str | None = None) -> None:
        self.classifier = classifier
        self.label = label or f"shadow[{classifier.features.name}]"
        self.threshold = 0.5

    def train(self, threat_model: Any, num_samples: int = 100) -> ShadowModellingAttack:
        self._bind(threat_model)
        if num_samples < 2:
            raise ConfigError(f"shadow modelling needs at least 2 training samples, got {num_samples}")
        datasets, labels = threat_model.generate_training_samples(num_samples)
        self.classifier.fit(threat_model, datasets, labels)
        self.trained = True
        return self

    def attack_score(self, datasets: Sequence[pd.DataFrame]) -> np.ndarray:
        return self.classifier.predict_proba(datasets)


class GroundhogAttack(ShadowModellingAttack):
    """Groundhog: naive + histogram + correlation features (optionally random targeted queries)
    and a 100-tree random forest. Works on numeric, datetime, (ordered) categorical, boolean and
    missing values alike (see :mod:`synthguard.attacks.features`)."""

    def __init__(self, use_naive: bool = True, use_hist: bool = True, use_corr: bool = True,
                 use_queries: bool = False, model: Any = None, num_bins: int = 10,
                 label: str = "groundhog") -> None:
        feats: list[SetFeature] = []
        if use_naive:
            feats.append(NaiveSetFeature())
        if use_hist:
            feats.append(HistSetFeature(num_bins))
        if use_corr:
            feats.append(CorrSetFeature())
        if use_queries:
            feats.append(RandomTargetedQueryFeature())
        if not feats:
            raise ConfigError("GroundhogAttack needs at least one feature: set use_naive/use_hist/use_corr")
        feature = feats[0]
        for f in feats[1:]:
            feature = feature + f
        super().__init__(FeatureBasedSetClassifier(feature, model), label=label)
