"""From validated entity inputs to what the metrics read: the row tables, the entity tables, and the
ordered events of every role."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ...errors import InputError
from ..tables import Tables, prepare_tables
from .embedding import OrderedEvents, embed, learn_vocabulary, order_events
from .model import EntityData


@dataclass(frozen=True)
class EntityRun:
    """Everything an entity-level evaluation needs.

    Attributes
    ----------
    data : EntityData
        Validated inputs.
    rows : Tables
        The event tables (one row per event; the keys are ``id`` columns) in canonical order (rows by
        content, columns by name: :meth:`~synthguard.data.tables.Tables.in_canonical_order`):
        row-level fidelity, utility and text metrics read these.
    entities : Tables
        The entity tables (one row per entity, sorted by key; columns sorted by name;
        :mod:`synthguard.data.entities.embedding`): every privacy metric reads these.
    ordered : mapping
        Role -> :class:`~synthguard.data.entities.embedding.OrderedEvents`.
    context : Tables or None
        The typed context tables (rows sorted by entity key, columns by name) when a context was
        given.
    event_columns : list of str
        Event columns summarised (neither key, nor text/id columns).
    vocabulary : mapping
        Top categories and bigrams per categorical event column.
    roles_not_in_entity_table : mapping
        Quasi-identifiers / sensitive columns named in the metadata that are not entity-table columns
        (event columns: they keep their role in the row-level metrics only), listed in the report.
    """

    data: EntityData
    rows: Tables
    entities: Tables
    ordered: Mapping[str, OrderedEvents]
    context: Tables | None
    event_columns: list[str]
    vocabulary: Mapping[str, Any] = field(default_factory=dict)
    roles_not_in_entity_table: Mapping[str, list[str]] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        out = self.data.summary()
        out["embedding_columns"] = list(self.entities.original.columns)
        out["quasi_identifiers"] = list(self.entities.schema.quasi_identifiers)
        out["sensitive"] = list(self.entities.schema.sensitive)
        if self.roles_not_in_entity_table:
            out["roles_not_in_entity_table"] = dict(self.roles_not_in_entity_table)
        return out


def build_entity_run(data: EntityData, *, top_categories: int = 8, top_bigrams: int = 8) -> EntityRun:
    """Type the event and context tables, order the events, and build the entity tables."""
    spec = data.spec
    roles = data.roles
    rows = prepare_tables(data.events["original"], data.events["synthetic"], data.events.get("control"),
                          dict(data.metadata), labels=dict(data.labels), canonical_columns=True)
    if spec.sequence_key is not None:
        sd = rows.schema.columns[spec.sequence_key].sdtype
        if sd not in ("numerical", "datetime"):
            raise InputError(f"{data.labels['original']}: the sequence key {spec.sequence_key!r} was read as "
                             f"{sd}: give a number or a date column, or declare its sdtype in the metadata")
    ctx_tables = None
    ctx_frames: dict[str, pd.DataFrame] = {}
    ctx_sdtypes: dict[str, str] = {}
    if data.has_context:
        key = spec.entity_key
        frames = {r: data.context[r].reset_index() for r in roles}
        cmeta = dict(data.context_metadata)
        cmeta["columns"] = dict(cmeta.get("columns") or {}, **{key: {"sdtype": "id"}})
        ctx_tables = prepare_tables(frames["original"], frames["synthetic"], frames.get("control"), cmeta,
                                    labels={r: f"{data.labels.get(r, r)} (context)" for r in roles},
                                    canonical_columns=True)
        for r in roles:
            f = ctx_tables.get(r)
            ctx_frames[r] = f.set_index(f[key].map(str)).drop(columns=[key])
        ctx_sdtypes = {c: s.sdtype for c, s in ctx_tables.schema.columns.items() if c != key}
    schema = rows.schema
    columns = [c for c in data.event_columns() if schema.columns[c].sdtype not in ("text", "id")]
    ordered: dict[str, OrderedEvents] = {}
    for r in roles:
        frame = rows.get(r)
        ents = data.entity_ids(r)
        ordered[r] = order_events(frame, spec, schema, ents, data.labels.get(r, r))
    # the events are ordered (above, from the input order: without a sequence key the file order
    # within an entity is the event order); from here on the event tables are in canonical content
    # order, like flat tables, so that no metric reading them depends on the input row order
    rows = rows.in_canonical_order()
    vocab = learn_vocabulary(ordered["original"], columns, schema, top_categories=top_categories,
                             top_bigrams=top_bigrams)
    emb: dict[str, pd.DataFrame] = {}
    sdtypes: dict[str, str] = {}
    for r in roles:
        emb[r], sdtypes = embed(ordered[r], ctx_frames.get(r), columns, schema, vocab, spec, ctx_sdtypes)
    # a summary column that is empty in some role (e.g. mean gap when every entity has one event)
    # carries no information: drop it everywhere rather than fail validation
    empty = [c for c in emb["original"].columns if any(emb[r][c].isna().all() for r in roles)]
    emb = {r: f.drop(columns=empty).reset_index(drop=True) for r, f in emb.items()}
    emeta: dict[str, Any] = {"columns": {c: {"sdtype": sdtypes[c]} for c in emb["original"].columns}}
    unused: dict[str, list[str]] = {}
    for k, vals in data.column_roles.items():
        emeta[k] = [c for c in vals if c in emb["original"].columns]
        missed = [c for c in vals if c not in emb["original"].columns]
        if missed:
            unused[k] = missed
    labels = {r: f"{data.labels.get(r, r)} (entity table)" for r in roles}
    ent_tables = prepare_tables(emb["original"], emb["synthetic"], emb.get("control"), emeta, labels=labels,
                                canonical_columns=True)
    return EntityRun(data, rows, ent_tables, ordered, ctx_tables, columns, vocab, unused)
