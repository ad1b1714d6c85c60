"""Entity-level evaluation: many rows per person (sequences) and parent/child tables.

See ``docs/entity-level.md``. :func:`prepare_entities` validates the inputs, :func:`build_entity_run`
builds the event tables, the ordered events and the entity tables (one row per person) that the
metrics read; the runner routes every privacy metric to the entity tables.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .build import EntityRun, build_entity_run
from .model import EntityData, EntitySpec, prepare_entities

__all__ = ["EntityData", "EntityRun", "EntitySpec", "PRIVACY_FAMILIES",
           "build_entity_run", "metric_unit", "prepare_entities", "wants_entities"]

#: Metric families whose statistics are about people: run on the entity table.
PRIVACY_FAMILIES = ("privacy", "anonymeter", "attacks", "disclosure")


def wants_entities(original: Any, metadata: Any, entity_key: str | None, sequence_key: str | None,
                   original_context: Any) -> bool:
    """Whether an evaluation is entity-level: a key or context was given, the inputs are a mapping of
    tables, or the metadata names an entity key (or is SDV sequential / multi-table metadata)."""
    if entity_key or sequence_key or original_context is not None or isinstance(original, Mapping):
        return True
    if metadata is None:
        return False
    from ..loading import load_metadata

    meta = load_metadata(metadata) if isinstance(metadata, (dict, str, Path)) else None
    return bool(meta) and any(k in meta for k in ("tables", "entity_key", "sequence_index"))


def metric_unit(spec: Any) -> str:
    """``"entity"`` for privacy families and the entity-only metrics (their card's
    ``entity_only``), ``"row"`` (event) otherwise."""
    return "entity" if spec.family in PRIVACY_FAMILIES or getattr(spec, "entity_only", False) else "row"
