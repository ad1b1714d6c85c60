"""Inference-on-synthetic attacks: a density fitted on each synthetic dataset (MIA) and a
classifier trained on each synthetic dataset (AIA, CAP-like)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.ensemble import RandomForestClassifier
from sklearn.neighbors import KernelDensity

from ..errors import ConfigError
from ..stats import make_rng
from .base import TrainableThresholdAttack
from .distance import _variants
from .features import row_features

__all__ = ["DensityEstimateMIA", "SyntheticPredictorAIA"]


class DensityEstimateMIA(TrainableThresholdAttack):
    """Score = log-density of the target under an estimator fitted on each synthetic dataset.

    Parameters
    ----------
    estimator : object with ``fit`` and ``score_samples``, optional
        Default ``KernelDensity(bandwidth=0.1)`` on scaled numerics and one-hot categoricals.
    criterion : str or tuple
        Threshold criterion.
    """

    def __init__(self, estimator: Any = None, criterion: Any = "accuracy", label: str = "density_mia"):
        super().__init__(criterion)
        self.estimator = estimator
        self.label = label

    def _prepare(self, tm: Any) -> None:
        self.columns = list(tm.columns)
        self._tm = tm
        self.x_target = row_features(tm.encoder.encode(tm.target_record, self.columns), tm)

    def attack_score(self, datasets: Sequence[pd.DataFrame]) -> np.ndarray:
        out = np.empty(len(datasets))
        for i, ds in enumerate(datasets):
            x = row_features(self._encode(ds, self.columns, False), self._tm)
            if x.shape[1] != self.x_target.shape[1]:  # a NaN flag appeared on one side only
                x, xt = _align(x, self.x_target, self._tm, self.columns, ds)
            else:
                xt = self.x_target
            est = KernelDensity(bandwidth=0.1) if self.estimator is None else clone(self.estimator)
            out[i] = float(est.fit(x).score_samples(xt)[0])
        return out


def _align(x: np.ndarray, xt: np.ndarray, tm: Any, columns: list[str], ds: pd.DataFrame):
    both = pd.concat([ds[columns], tm.target_record[columns]], ignore_index=True)
    z = row_features(tm.encoder.encode(both, columns), tm)
    return z[:-1], z[-1:]


class SyntheticPredictorAIA(TrainableThresholdAttack):
    """Score = probability of the positive value predicted for the target by a classifier trained on
    each synthetic dataset (sensitive column from the other columns).

    Parameters
    ----------
    model : sklearn classifier, optional
        Default ``RandomForestClassifier(n_estimators=25)`` (seeded per dataset).
    criterion : str or tuple
        Threshold criterion.
    """

    def __init__(self, model: Any = None, criterion: Any = "accuracy",
                 label: str = "synthetic_predictor_aia") -> None:
        super().__init__(criterion)
        self.model = model
        self.label = label

    def _prepare(self, tm: Any) -> None:
        if tm.kind != "AIA":
            raise ConfigError(f"{self.label} needs a TargetedAIA threat model")
        self._tm = tm
        self.sensitive = tm.parent.sensitive_attribute
        self.columns = [c for c in tm.columns if c != self.sensitive]
        if not self.columns:
            raise ConfigError(f"{self.label}: no columns besides {self.sensitive!r} to predict from")
        self.value_codes = tm.encoder.encode(_variants(tm), [self.sensitive],
                                             categorical_only=True).cat[:, 0]

    def attack_score(self, datasets: Sequence[pd.DataFrame]) -> np.ndarray:
        tm = self._tm
        out = np.empty(len(datasets))
        for i, ds in enumerate(datasets):
            sens = self._encode(ds, [self.sensitive], True).cat[:, 0]
            keep = np.isin(sens, self.value_codes)
            y = (sens[keep] == self.value_codes[1]).astype(int)
            if y.size == 0 or np.unique(y).size < 2:
                out[i] = float(y[0]) if y.size else 0.5
                continue
            both = pd.concat([ds[self.columns], tm.target_record[self.columns]], ignore_index=True)
            z = row_features(tm.encoder.encode(both, self.columns), tm)
            x, xt = z[:-1][keep], z[-1:]
            seed = int(make_rng(tm.seed, "predictor", tm.target_id, i).integers(2**31 - 1))
            model = (RandomForestClassifier(n_estimators=25, random_state=seed, n_jobs=1)
                     if self.model is None else clone(self.model))
            model.fit(x, y)
            out[i] = float(model.predict_proba(xt)[0, list(model.classes_).index(1)])
        return out
