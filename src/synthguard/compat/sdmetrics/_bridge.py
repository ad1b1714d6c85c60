"""Frames and SDV-style metadata -> a synthguard context; run one registered metric."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pandas as pd

from ...core.results import MetricResult
from ...errors import InputError

_SDTYPES = {"numerical": "numerical", "categorical": "categorical", "boolean": "boolean",
            "datetime": "datetime", "id": "id", "text": "text"}


def table_metadata(metadata: Mapping[str, Any] | None, table_name: str | None = None) -> dict[str, Any] | None:
    """synthguard metadata from SDV/SDMetrics metadata (single table, or ``tables[table_name]``).

    Each column's ``sdtype`` (legacy ``fields`` / ``type``), ``primary_key`` and ``alternate_keys`` are kept; PII sdtypes (``email``, ``phone_number``...) become
    categorical, as SDMetrics treats them.
    """
    if metadata is None:
        return None
    if not isinstance(metadata, Mapping):
        to_dict = getattr(metadata, "to_dict", None)
        if to_dict is None:
            raise InputError(f"metadata must be a dict like {{'columns': {{...}}}}, got {type(metadata).__name__}")
        metadata = to_dict()
    if "tables" in metadata:
        tables = metadata["tables"]
        if table_name is None:
            if len(tables) != 1:
                raise InputError(f"metadata holds {len(tables)} tables: pass table_name (one of {sorted(tables)})")
            table_name = next(iter(tables))
        if table_name not in tables:
            raise InputError(f"table_name {table_name!r} is not in the metadata's tables {sorted(tables)}")
        metadata = tables[table_name]
    cols = {}
    # SDV metadata: {"columns": {name: {"sdtype": ...}}}; the legacy form {"fields": {name: {"type": ...}}}
    fields = metadata.get("columns", metadata.get("fields", {}))
    for name, spec in dict(fields).items():
        spec = dict(spec)
        sd = str(spec.get("sdtype", spec.get("type", "categorical")))
        cols[name] = {"sdtype": _SDTYPES.get(sd, "categorical")}
    out: dict[str, Any] = {"columns": cols} if cols else {}
    pk = metadata.get("primary_key")
    if isinstance(pk, str) and pk in cols:
        out["primary_key"] = pk
    alt = [k for k in (metadata.get("alternate_keys") or []) if isinstance(k, str) and k in cols]
    if alt:
        out["alternate_keys"] = alt
    return out or None


def _frame(x: Any, what: str) -> pd.DataFrame:
    if isinstance(x, pd.DataFrame):
        return x
    if isinstance(x, pd.Series):
        return x.to_frame()
    try:
        return pd.DataFrame(x)
    except Exception as exc:  # noqa: BLE001
        raise InputError(f"{what} must be a pandas DataFrame, got {type(x).__name__}") from exc


def run(name: str, real: Any, synthetic: Any, control: Any = None, metadata: Any = None, *,
        seed: int = 0, **params: Any) -> MetricResult:
    """Run synthguard metric ``name`` on the frames with ``params``."""
    from ...registry import Context, get_metric
    from ...run.executor import run_metric

    ctx = Context.from_frames(_frame(real, "real_data"), _frame(synthetic, "synthetic_data"),
                              None if control is None else _frame(control, "real_validation_data"),
                              metadata, seed=seed, strict_control=False)  # SDMetrics accepts it
    ctx = replace(ctx, evidence=False)  # SDMetrics' API returns scores: no verdict, no evidence
    spec = get_metric(name)
    return run_metric(spec, ctx.for_metric(spec), spec.resolve_params(params))
