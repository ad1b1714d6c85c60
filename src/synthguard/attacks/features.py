"""Set features for shadow modelling (Groundhog) and row features for model-based attacks.

Every feature works on the shared encoded blocks, so it handles every column type the same way:
numeric and datetime columns are scaled to [0, 1] by the attacker's data range (TAPAS leaves them
unscaled, defect 6), categorical columns (ordered or not, booleans) are category codes with a
fixed vocabulary learnt from the attacker's data (TAPAS' column-index drift on ordered columns,
defect 2, cannot happen: features are built per column name), and missing values get their own
slot (a NaN share per numeric column, the ``-1`` code bucket per categorical column).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..data.encoding import Block
from ..errors import ConfigError
from ..stats import make_rng

__all__ = ["SetFeature", "NaiveSetFeature", "HistSetFeature", "CorrSetFeature",
           "RandomTargetedQueryFeature", "row_features"]

MAX_ONE_HOT = 30  # categories one-hot encoded per column (the rest share one "other" slot)


def _scaled(block: Block, tm: Any) -> np.ndarray:
    idx = [list(tm.full_block.num_columns).index(c) for c in block.num_columns]
    rng = tm.ranges[idx]
    lo = tm.mins[idx]
    with np.errstate(invalid="ignore", divide="ignore"):
        x = (block.num - lo) / np.where(rng > 0, rng, 1.0)
    return np.clip(x, 0.0, 1.0)  # NaN stays NaN


def _vocab(block: Block, tm: Any) -> np.ndarray:
    idx = [list(tm.full_block.cat_columns).index(c) for c in block.cat_columns]
    return np.minimum(tm.vocab_sizes[idx], MAX_ONE_HOT)


def _one_hot(block: Block, tm: Any) -> np.ndarray:
    """One-hot of codes ``0..V-1`` (V capped), plus an "other" slot and a missing slot per column."""
    sizes = _vocab(block, tm)
    n = block.n_rows
    out = np.zeros((n, int((sizes + 2).sum())))
    off = 0
    for j, v in enumerate(sizes):  # loop over columns
        c = block.cat[:, j]
        slot = np.where(c < 0, v + 1, np.where(c >= v, v, c))
        out[np.arange(n), off + slot] = 1.0
        off += int(v) + 2
    return out


def row_features(block: Block, tm: Any) -> np.ndarray:
    """Numeric matrix for sklearn models: scaled numerics (NaN -> -0.5, plus a NaN flag) and
    one-hot categoricals."""
    x = _scaled(block, tm)
    nan = np.isnan(x)
    parts = [np.where(nan, -0.5, x)]
    if nan.any():
        parts.append(nan.astype(float))
    parts.append(_one_hot(block, tm))
    return np.concatenate(parts, axis=1)


class SetFeature:
    """Turns each dataset into a fixed-length vector. Combine features with ``+``."""

    name = "feature"

    def fit(self, threat_model: Any) -> SetFeature:
        """Bind to a threat model (a target view): columns, ranges, vocabularies, target."""
        self.tm = threat_model
        self.columns = list(threat_model.columns)
        return self

    def key(self) -> tuple:
        """Identifies the feature and its parameters (target-independent features are memoised
        per dataset in the threat model, so several targets share them)."""
        return (self.name,)

    def extract(self, datasets: Sequence[pd.DataFrame]) -> np.ndarray:
        if not len(datasets):
            return np.zeros((0, 0))
        cache = getattr(self.tm, "feature_cache", None)
        rows = []
        for ds in datasets:  # loop over datasets; each feature is vectorised over rows
            k = (self.key(), tuple(self.columns), id(ds))
            hit = cache.get(k) if cache is not None else None
            if hit is None or hit[0] is not ds:
                hit = (ds, self._one(self.tm.encode(ds, self.columns)))
                if cache is not None:
                    cache[k] = hit
            rows.append(hit[1])
        return np.stack(rows)

    def _one(self, block: Block) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def __add__(self, other: SetFeature) -> SetFeature:
        return CombinedSetFeature([self, other])


class CombinedSetFeature(SetFeature):
    """Concatenation of several set features."""

    def __init__(self, features: Sequence[SetFeature]) -> None:
        flat: list[SetFeature] = []
        for f in features:
            flat.extend(f.features if isinstance(f, CombinedSetFeature) else [f])
        self.features = flat
        self.name = "+".join(f.name for f in flat)

    def fit(self, threat_model: Any) -> SetFeature:
        for f in self.features:
            f.fit(threat_model)
        return self

    def extract(self, datasets: Sequence[pd.DataFrame]) -> np.ndarray:
        return np.concatenate([f.extract(datasets) for f in self.features], axis=1)


class NaiveSetFeature(SetFeature):
    """Per numeric column: mean, median, variance and missing share of the scaled values;
    per categorical column: the share of each category (capped vocabulary, other, missing)."""

    name = "naive"

    def _one(self, block: Block) -> np.ndarray:
        x = _scaled(block, self.tm)
        nan = np.isnan(x)
        with np.errstate(all="ignore"):
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                stats_ = [np.nanmean(x, axis=0), np.nanmedian(x, axis=0), np.nanvar(x, axis=0)]
        parts = [np.nan_to_num(s, nan=0.0) for s in stats_] + [nan.mean(axis=0)]
        parts.append(_one_hot(block, self.tm).mean(axis=0))
        return np.concatenate(parts)


class HistSetFeature(SetFeature):
    """Histogram per column: ``num_bins`` equal bins over the attacker's data range plus a missing
    bin for numeric/datetime columns; category frequencies for categorical columns."""

    name = "hist"

    def __init__(self, num_bins: int = 10) -> None:
        if num_bins < 1:
            raise ConfigError(f"num_bins must be at least 1, got {num_bins}")
        self.num_bins = int(num_bins)

    def key(self) -> tuple:
        return (self.name, self.num_bins)

    def _one(self, block: Block) -> np.ndarray:
        x = _scaled(block, self.tm)
        n = max(block.n_rows, 1)
        b = self.num_bins
        parts = []
        for j in range(x.shape[1]):  # loop over columns
            col = x[:, j]
            nan = np.isnan(col)
            bins = np.minimum((np.nan_to_num(col, nan=0.0) * b).astype(np.int64), b - 1)
            bins = np.where(nan, b, bins)
            parts.append(np.bincount(bins, minlength=b + 1) / n)
        sizes = _vocab(block, self.tm)
        for j, v in enumerate(sizes):
            c = block.cat[:, j]
            slot = np.where(c < 0, v + 1, np.where(c >= v, v, c))
            parts.append(np.bincount(slot, minlength=int(v) + 2) / n)
        return np.concatenate(parts) if parts else np.zeros(0)


class CorrSetFeature(SetFeature):
    """Upper triangle of the correlation matrix of scaled numerics (NaN -> column mean) and the
    one-hot categoricals (at most ``max_categories`` per column); undefined correlations -> 0."""

    name = "corr"

    def __init__(self, max_categories: int = 10) -> None:
        self.max_categories = int(max_categories)

    def key(self) -> tuple:
        return (self.name, self.max_categories)

    def _one(self, block: Block) -> np.ndarray:
        x = _scaled(block, self.tm)
        with np.errstate(all="ignore"):
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                mean = np.nan_to_num(np.nanmean(x, axis=0), nan=0.0)
        x = np.where(np.isnan(x), mean, x)
        sizes = np.minimum(_vocab(block, self.tm), self.max_categories)
        cats = [(block.cat[:, j][:, None] == np.arange(v)[None, :]).astype(float)
                for j, v in enumerate(sizes)]
        z = np.concatenate([x] + cats, axis=1)
        d = z.shape[1]
        iu = np.triu_indices(d, 1)
        if block.n_rows < 2 or d < 2:
            return np.zeros(iu[0].size)
        with np.errstate(all="ignore"):
            c = np.corrcoef(z, rowvar=False)
        return np.nan_to_num(np.atleast_2d(c)[iu], nan=0.0)


class RandomTargetedQueryFeature(SetFeature):
    """Share of records equal to the target on ``number`` random subsets of ``order`` columns
    (exact equality on every column type; the subsets are drawn once per target, seeded)."""

    name = "queries"

    def __init__(self, order: int = 2, number: int = 20) -> None:
        if order < 1 or number < 1:
            raise ConfigError("RandomTargetedQueryFeature needs order >= 1 and number >= 1")
        self.order, self.number = int(order), int(number)

    def fit(self, threat_model: Any) -> SetFeature:
        super().fit(threat_model)
        rng = make_rng(threat_model.seed, "queries", threat_model.target_id)
        p = len(self.columns)
        k = min(self.order, p)
        self.subsets = [np.sort(rng.choice(p, size=k, replace=False)) for _ in range(self.number)]
        self.target = threat_model.encoder.encode(threat_model.target_record, self.columns,
                                                  categorical_only=True).cat[0]
        return self

    def extract(self, datasets: Sequence[pd.DataFrame]) -> np.ndarray:
        out = np.zeros((len(datasets), self.number))
        for i, ds in enumerate(datasets):
            codes = self.tm.encode(ds, self.columns, categorical_only=True).cat
            eq = codes == self.target[None, :]
            n = max(codes.shape[0], 1)
            out[i] = [eq[:, s].all(axis=1).sum() / n for s in self.subsets]
        return out
