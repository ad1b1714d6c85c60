"""Distance attacks on the shared neighbour engine: closest distance (MIA, AIA) and local
neighbourhood counts (MIA, AIA)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..data.encoding import Block
from ..engine.neighbors import DistanceMetric, pairwise_distances
from ..errors import ConfigError
from .base import TrainableThresholdAttack, resolve_distance

__all__ = ["ClosestDistanceMIA", "ClosestDistanceAIA", "LocalNeighbourhoodAttack"]


def _variants(tm: Any) -> pd.DataFrame:
    """The target once per candidate value of the sensitive attribute (AIA)."""
    rec = tm.target_record
    frame = pd.concat([rec, rec], ignore_index=True)
    col = tm.parent.sensitive_attribute
    vals = pd.Series(list(tm.parent.attribute_values), dtype=object)
    try:
        frame[col] = vals.astype(tm.parent.data[col].dtype)
    except (TypeError, ValueError):
        frame[col] = vals
    return frame


_CELLS = 4_000_000  # distances computed per engine call (bounded memory)


def _segment_distances(attack: TrainableThresholdAttack, query: Block, blocks: Sequence[Block],
                       reduce: Any) -> np.ndarray:
    """``reduce(d, starts, sizes)`` per dataset block, for the few query rows of a target.

    The blocks are stacked into one reference block and measured with the engine's exact
    pairwise distances in chunks of about ``_CELLS`` cells, so thousands of small shadow datasets
    cost a handful of vectorised calls instead of one call each. ``reduce`` gets the
    ``(n_query, rows)`` distances of whole datasets, their start offsets and sizes.
    """
    out = np.empty((query.n_rows, len(blocks)))
    per_call = max(1, _CELLS // max(query.n_rows, 1))
    i = 0
    while i < len(blocks):
        rows, j = 0, i
        while j < len(blocks) and (j == i or rows < per_call):
            rows += blocks[j].n_rows
            j += 1
        part = blocks[i:j]
        sizes = np.array([b.n_rows for b in part])
        ref = Block.stack(part)
        d = pairwise_distances(query, ref, attack.metric) if rows else np.zeros((query.n_rows, 0))
        starts = np.r_[0, np.cumsum(sizes)[:-1]]
        out[:, i:j] = reduce(d, starts, sizes)
        i = j
    return out


def _seg_min(d: np.ndarray, starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    ok = sizes > 0
    res = np.full((d.shape[0], sizes.size), np.inf)
    if ok.any():
        res[:, ok] = np.minimum.reduceat(d, starts[ok], axis=1)
    return res


def _seg_count(radius: float):
    def reduce(d: np.ndarray, starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        inside = (d <= radius * (1 + 1e-12)).astype(np.int64)
        ok = sizes > 0
        res = np.zeros((d.shape[0], sizes.size))
        if ok.any():
            res[:, ok] = np.add.reduceat(inside, starts[ok], axis=1)
        return res
    return reduce


class ClosestDistanceMIA(TrainableThresholdAttack):
    """Score = minus the distance from the target to its closest synthetic record.

    Parameters
    ----------
    distance : {"hamming", "gower", "lp"} or DistanceMetric
        Row distance (engine). ``("threshold", 0)`` with Hamming is the direct-lookup attack.
    criterion : str or tuple
        Threshold criterion (see :class:`TrainableThresholdAttack`).
    label : str, optional
        Name in reports.
    """

    def __init__(self, distance: str | DistanceMetric = "hamming", criterion: Any = "accuracy",
                 label: str | None = None) -> None:
        super().__init__(criterion)
        self.distance = distance
        self.label = label or f"closest_distance_mia[{_dname(distance)}]"

    def _prepare(self, tm: Any) -> None:
        self.columns = list(tm.columns)
        self.metric, self.cat_only = resolve_distance(self.distance, tm, self.columns)
        self.target_block = tm.encoder.encode(tm.target_record, self.columns,
                                              categorical_only=self.cat_only)

    def attack_score(self, datasets: Sequence[pd.DataFrame]) -> np.ndarray:
        blocks = [self._encode(ds, self.columns, self.cat_only) for ds in datasets]
        return -_segment_distances(self, self.target_block, blocks, _seg_min)[0]


class ClosestDistanceAIA(TrainableThresholdAttack):
    """For each candidate value v, d_v = distance from (target with value v) to the synthetic data;
    score = minus ``d_1 / (d_0 + d_1)`` (0.5 when both are 0). The fixed threshold -0.5 means
    "pick the value whose variant lies closest"."""

    def __init__(self, distance: str | DistanceMetric = "hamming", criterion: Any = "accuracy",
                 label: str | None = None) -> None:
        super().__init__(criterion)
        self.distance = distance
        self.label = label or f"closest_distance_aia[{_dname(distance)}]"

    def _prepare(self, tm: Any) -> None:
        if tm.kind != "AIA":
            raise ConfigError(f"{self.label} needs a TargetedAIA threat model")
        self.columns = list(tm.columns)
        self.metric, self.cat_only = resolve_distance(self.distance, tm, self.columns)
        self.variants = tm.encoder.encode(_variants(tm), self.columns, categorical_only=self.cat_only)

    def attack_score(self, datasets: Sequence[pd.DataFrame]) -> np.ndarray:
        blocks = [self._encode(ds, self.columns, self.cat_only) for ds in datasets]
        d = _segment_distances(self, self.variants, blocks, _seg_min)
        tot = d[0] + d[1]
        with np.errstate(invalid="ignore", divide="ignore"):
            share = d[1] / tot
        return -np.where((tot == 0) | ~np.isfinite(tot), 0.5, share)


class LocalNeighbourhoodAttack(TrainableThresholdAttack):
    """Counts synthetic records within ``radius`` of the target.

    MIA: score = share of synthetic records in the ball. AIA: the ball is taken on the other
    columns; score = share of in-ball records carrying the positive value (0.5 when empty).

    Parameters
    ----------
    distance : {"hamming", "gower", "lp"} or DistanceMetric
        Row distance.
    radius : float, optional
        Ball radius in the distance's units; default: one differing attribute for Hamming
        (``1 / n_columns``), 0.05 for Gower/Lp.
    mode : {"mia", "aia"}, optional
        Defaults to the threat model's kind.
    """

    def __init__(self, distance: str | DistanceMetric = "hamming", radius: float | None = None,
                 criterion: Any = "accuracy", mode: str | None = None, label: str | None = None) -> None:
        super().__init__(criterion)
        if radius is not None and radius < 0:
            raise ConfigError(f"radius must be >= 0, got {radius}")
        if mode is not None and mode.lower() not in ("mia", "aia"):
            raise ConfigError(f"mode must be 'mia' or 'aia', got {mode!r}")
        self.distance, self.radius, self.mode = distance, radius, mode
        self.label = label or f"local_neighbourhood[{_dname(distance)}]"

    def _prepare(self, tm: Any) -> None:
        self._mode = (self.mode or tm.kind).upper()
        cols = list(tm.columns)
        if self._mode == "AIA":
            if tm.kind != "AIA":
                raise ConfigError("LocalNeighbourhoodAttack in AIA mode needs a TargetedAIA threat model")
            self.sensitive = tm.parent.sensitive_attribute
            cols = [c for c in cols if c != self.sensitive]
            codes = tm.encoder.encode(_variants(tm), [self.sensitive], categorical_only=True).cat[:, 0]
            self.value_codes = codes
        self.columns = cols
        self.metric, self.cat_only = resolve_distance(self.distance, tm, cols)
        if self.radius is None:
            self._radius = 1.0 / max(len(cols), 1) if _dname(self.distance) == "hamming" else 0.05
        else:
            self._radius = float(self.radius)
        self.target_block = tm.encoder.encode(tm.target_record, cols, categorical_only=self.cat_only)

    def attack_score(self, datasets: Sequence[pd.DataFrame]) -> np.ndarray:
        blocks = [self._encode(ds, self.columns, self.cat_only) for ds in datasets]
        sizes = np.array([b.n_rows for b in blocks], dtype=float)
        if self._mode == "MIA":
            c = _segment_distances(self, self.target_block, blocks, _seg_count(self._radius))[0]
            return np.where(sizes > 0, c / np.maximum(sizes, 1), 0.0)
        sens = [self._encode(ds, [self.sensitive], True).cat[:, 0] for ds in datasets]
        counts = [_segment_distances(self, self.target_block,
                                     [b.take(np.flatnonzero(v == code)) for b, v in zip(blocks, sens,
                                                                                       strict=True)],
                                     _seg_count(self._radius))[0]
                  for code in self.value_codes]  # two candidate values
        tot = counts[0] + counts[1]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(tot > 0, counts[1] / np.maximum(tot, 1), 0.5)


def _dname(distance: Any) -> str:
    return distance.name if isinstance(distance, DistanceMetric) else str(distance).lower()
