"""Result types shared by every metric: small frozen dataclasses that serialise to plain JSON."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

Direction = Literal["lower is safer", "higher is safer", "higher is better", "lower is better"]
RiskLevel = Literal["low", "medium", "high", "not meaningful", "unknown"]


@dataclass(frozen=True)
class Baseline:
    """What a metric's value is compared with.

    Parameters
    ----------
    value : float or None
        The baseline number, in the same unit as the metric's value.
    description : str
        What the baseline is, e.g. ``"control vs original"`` or ``"no baseline: no control given"``.
    ci : tuple of float, optional
        Confidence interval of the baseline, when it is estimated.
    """

    value: float | None
    description: str
    ci: tuple[float, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"value": to_jsonable(self.value), "description": self.description,
                "ci": to_jsonable(self.ci)}


@dataclass(frozen=True)
class MetricResult:
    """The outcome of one metric.

    Parameters
    ----------
    name, family : str
        Registry name and family (``"privacy"``, ``"anonymeter"``, ``"disclosure"``, ...).
    value : float or None
        The headline number.
    direction : str
        How to read ``value``: ``"lower is safer"``, ``"higher is safer"``, ``"higher is better"``...
    baseline : Baseline or None
        What ``value`` is compared with; ``Baseline(None, "no baseline: ...")`` says why there is none.
    ci : tuple of float or None
        Confidence interval of ``value``.
    n : int or None
        Sample size behind ``value``.
    risk_level : str
        ``"low"``, ``"medium"``, ``"high"``, ``"not meaningful"`` (attack no better than its baseline)
        or ``"unknown"``.
    warning : str or None
        A caveat the reader must see.
    details : mapping
        Further named numbers (the metric's JSON contract); flattened into ``to_dict()``.
    records : list of dict or None
        Optional per-record table (e.g. the most exposed original rows).
    """

    name: str
    family: str
    value: float | None
    direction: str
    baseline: Baseline | None = None
    ci: tuple[float, float] | None = None
    n: int | None = None
    risk_level: str = "unknown"
    warning: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    records: list[dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form: the headline fields, then every entry of ``details`` at top level."""
        out: dict[str, Any] = {
            "name": self.name,
            "family": self.family,
            "value": to_jsonable(self.value),
            "direction": self.direction,
            "baseline": self.baseline.to_dict() if self.baseline is not None else None,
            "ci": to_jsonable(self.ci),
            "n": to_jsonable(self.n),
            "risk_level": self.risk_level,
            "warning": self.warning,
        }
        for key, val in self.details.items():
            if key in out:
                raise KeyError(f"details key {key!r} of metric {self.name!r} shadows a headline field")
            out[key] = to_jsonable(val)
        if self.records is not None:
            out["records"] = to_jsonable(self.records)
        return out

    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]


def to_jsonable(obj: Any) -> Any:
    """Convert numpy scalars/arrays, tuples, NaN and infinities into plain JSON values.

    NaN and infinities become ``None`` (JSON has no NaN); tuples become lists.
    """
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        return f if math.isfinite(f) else None
    if isinstance(obj, np.ndarray):
        return [to_jsonable(x) for x in obj.tolist()]
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [to_jsonable(x) for x in obj]
    if hasattr(obj, "to_dict") and callable(obj.to_dict):
        return to_jsonable(obj.to_dict())
    if hasattr(obj, "isoformat"):
        return obj.isoformat()
    try:
        import pandas as pd

        if obj is pd.NaT or (not isinstance(obj, (list, dict)) and pd.isna(obj)):
            return None
    except (TypeError, ValueError):
        pass
    return str(obj)


def level_from_thresholds(value: float | None, thresholds: Mapping[str, float], direction: str) -> str:
    """Map ``value`` to ``"low"``/``"medium"``/``"high"`` risk given ``{"medium": a, "high": b}``.

    For ``"lower is safer"`` metrics the level rises with the value (value >= high -> "high");
    for ``"higher is safer"`` metrics it falls (value <= high -> "high"). Missing thresholds are skipped.
    A value of ``None``/NaN gives ``"unknown"``.
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "unknown"
    high = thresholds.get("high")
    medium = thresholds.get("medium")
    if direction.startswith("lower"):
        if high is not None and value >= high:
            return "high"
        if medium is not None and value >= medium:
            return "medium"
        return "low"
    if high is not None and value <= high:
        return "high"
    if medium is not None and value <= medium:
        return "medium"
    return "low"
