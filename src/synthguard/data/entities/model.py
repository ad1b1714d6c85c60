"""The entity data model: many rows per person (sequential data) and parent/child tables.

A *sequence table* holds one row per event with an ``entity_key`` column naming the person the event
belongs to, and optionally a ``sequence_key`` column (a number or a date) that orders a person's events.
A *context table* holds one row per person (columns constant over the person's events), joined on the
same key. Multi-table metadata in SDV's form (``tables`` + ``relationships``) describes the same thing
as a parent (context) and a child (sequence) table.

Validation happens here, before any metric runs, with one-line :class:`~synthguard.errors.InputError`
messages naming the file, the column and the fix:

* the entity key (and the sequence key) must exist in every table and hold no missing value;
* every child row must have its parent (no orphan rows) when a context table is given;
* the context table must have one row per entity (a constant context), and context columns declared
  inside the sequence table must be constant within each entity;
* no entity key may appear in both the original and the control (a control person is held out whole).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ...errors import ConfigError, InputError
from ..loading import TableLike, load_metadata, load_table
from ..tables import _canonical_columns

ROLES = ("original", "synthetic", "control")


@dataclass(frozen=True)
class EntitySpec:
    """Which columns make rows into entities.

    Attributes
    ----------
    entity_key : str
        Column naming the person (entity) each row belongs to.
    sequence_key : str or None
        Column ordering a person's events (number or date). ``None``: the file order within an
        entity is the event order.
    context_columns : tuple of str
        Columns of the sequence table that are constant within an entity (moved to the context).
    parent_table, child_table : str or None
        Table names when the data came as SDV multi-table metadata (parent = context, child =
        sequence).
    """

    entity_key: str
    sequence_key: str | None = None
    context_columns: tuple[str, ...] = ()
    parent_table: str | None = None
    child_table: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"entity_key": self.entity_key, "sequence_key": self.sequence_key,
                "context_columns": list(self.context_columns), "parent_table": self.parent_table,
                "child_table": self.child_table}


@dataclass(frozen=True)
class EntityData:
    """Validated sequence (event) and context tables of every role.

    Attributes
    ----------
    spec : EntitySpec
        The keys.
    events : mapping
        Role -> event table (entity key, optional sequence key and event columns), private copy.
    context : mapping
        Role -> context table indexed by the entity key (no key column), or absent when there is no
        context. Every entity of ``events`` has a context row (entities without events may exist).
    metadata : dict
        Single-table metadata of the event table (``columns`` sdtypes, roles) with the keys marked
        ``id``.
    context_metadata : dict
        Metadata of the context columns.
    labels : mapping
        Role -> label of the event table's source, for messages.
    column_roles : mapping
        ``quasi_identifiers`` / ``sensitive`` named in the metadata (top level, or any table of
        multi-table metadata): those that are columns of the entity table (context columns, or
        sequence features such as ``n_events`` or ``event:first``) play that role there.
    """

    spec: EntitySpec
    events: Mapping[str, pd.DataFrame]
    context: Mapping[str, pd.DataFrame] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)
    context_metadata: Mapping[str, Any] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    column_roles: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def roles(self) -> tuple[str, ...]:
        return tuple(r for r in ROLES if r in self.events)

    @property
    def has_context(self) -> bool:
        return bool(self.context)

    def event_columns(self) -> list[str]:
        """Event columns (neither the entity key nor the sequence key)."""
        skip = {self.spec.entity_key, self.spec.sequence_key}
        return [c for c in self.events["original"].columns if c not in skip]

    def entity_ids(self, role: str) -> pd.Index:
        """Every entity of ``role``: those with events and those with only a context row, sorted."""
        ids = pd.Index(self.events[role][self.spec.entity_key].unique())
        if role in self.context:
            ids = ids.union(self.context[role].index)
        return ids.sort_values()

    def n_entities(self) -> dict[str, int]:
        return {r: int(len(self.entity_ids(r))) for r in self.roles}

    def summary(self) -> dict[str, Any]:
        """What the report header says about the entities."""
        return {"unit": "entity", **self.spec.to_dict(), "n_entities": self.n_entities(),
                "n_rows": {r: int(len(self.events[r])) for r in self.roles},
                "context_columns": list(next(iter(self.context.values())).columns) if self.context else []}


def _multi_table(metadata: Mapping[str, Any], label: str) -> tuple[str, str, str, str, dict, dict]:
    """Parent/child names and keys from SDV multi-table metadata (exactly one relationship)."""
    tables = metadata.get("tables")
    rels = metadata.get("relationships") or []
    if not isinstance(tables, Mapping) or not tables:
        raise InputError(f"metadata {label}: 'tables' must map table names to single-table metadata")
    if len(rels) != 1:
        raise InputError(f"metadata {label}: exactly one parent/child relationship is supported, got "
                         f"{len(rels)}: keep the one linking the person (parent) table to its event "
                         "(child) table")
    rel = rels[0]
    need = ("parent_table_name", "parent_primary_key", "child_table_name", "child_foreign_key")
    missing = [k for k in need if k not in rel]
    if missing:
        raise InputError(f"metadata {label}: the relationship lacks {missing}: give "
                         "parent_table_name, parent_primary_key, child_table_name, child_foreign_key")
    parent, child = rel["parent_table_name"], rel["child_table_name"]
    for t in (parent, child):
        if t not in tables:
            raise InputError(f"metadata {label}: relationship names table {t!r} that 'tables' lacks")
    return (parent, child, str(rel["parent_primary_key"]), str(rel["child_foreign_key"]),
            dict(tables[parent]), dict(tables[child]))


def _as_tables(source: Any, role: str, names: tuple[str, str]) -> tuple[Any, Any]:
    """``(parent, child)`` sources from a mapping ``{table_name: frame or path}``."""
    if not isinstance(source, Mapping):
        raise InputError(f"{role}: with multi-table metadata give a mapping {{table name: DataFrame or "
                         f"path}} holding tables {list(names)}, got {type(source).__name__}")
    missing = [n for n in names if n not in source]
    if missing:
        raise InputError(f"{role}: table(s) {missing} named in the metadata are missing: give every table")
    return source[names[0]], source[names[1]]


def _check_key(frame: pd.DataFrame, col: str, what: str, label: str) -> None:
    if col not in frame.columns:
        raise InputError(f"{label}: the {what} column {col!r} is missing: add it, or name the right "
                         f"column with --{what.replace(' ', '-')}")
    if frame[col].isna().any():
        n = int(frame[col].isna().sum())
        raise InputError(f"{label}: the {what} column {col!r} has {n} missing value(s): every row must "
                         "belong to an entity (fill or drop them)")


def _key_values(s: pd.Series) -> pd.Series:
    """Keys compared across files as text (``7`` and ``"7"`` name the same person)."""
    if pd.api.types.is_float_dtype(s.dtype) and (s.dropna() % 1 == 0).all():
        s = s.astype("int64")
    return s.astype(str)


def prepare_entities(original: Any, synthetic: Any, control: Any = None, metadata: Any = None, *,
                     entity_key: str | None = None, sequence_key: str | None = None,
                     original_context: TableLike | None = None, synthetic_context: TableLike | None = None,
                     control_context: TableLike | None = None) -> EntityData:
    """Load and validate sequential (or parent/child) inputs.

    Parameters
    ----------
    original, synthetic, control : DataFrame, path, or mapping of them
        Event (sequence) tables; with multi-table metadata, mappings ``{table name: table}``.
    metadata : mapping or path, optional
        Single-table metadata of the event table (SynEval style, may hold ``entity_key``,
        ``sequence_key``, ``context_columns`` and ``context: {columns: ...}``), SDV sequential
        metadata (``sequence_key`` = entity key, ``sequence_index`` = order) or SDV multi-table
        metadata (``tables`` + one ``relationships`` entry).
    entity_key, sequence_key : str, optional
        Override the metadata's keys.
    original_context, synthetic_context, control_context : DataFrame or path, optional
        One row per entity, joined on the entity key.

    Returns
    -------
    EntityData

    Raises
    ------
    InputError
        Orphan rows, keys shared by original and control, non-constant context, missing keys.
    """
    meta = load_metadata(metadata) if metadata is not None else {}
    top_meta = dict(meta)
    label = str(metadata) if isinstance(metadata, (str, Path)) else "metadata"
    sources = {"original": original, "synthetic": synthetic, "control": control}
    ctx_sources = {"original": original_context, "synthetic": synthetic_context, "control": control_context}
    parent = child = None
    ctx_meta: dict[str, Any] = dict(meta.get("context") or {}) if isinstance(meta.get("context"), Mapping) else {}
    if "tables" in meta:
        parent, child, pk, fk, pmeta, cmeta = _multi_table(meta, label)
        if entity_key is not None and entity_key != fk:
            raise ConfigError(f"--entity-key {entity_key!r} differs from the child foreign key {fk!r} "
                              "of the multi-table metadata: drop one")
        for role, src in list(sources.items()):
            if src is None:
                continue
            if ctx_sources[role] is not None:
                raise ConfigError(f"{role}: give the context either as the parent table of the "
                                  "multi-table input or with --{role}-context, not both")
            p, c = _as_tables(src, role, (parent, child))
            pframe, plabel = load_table(p, f"{role} {parent}")
            if pk not in pframe.columns:
                raise InputError(f"{plabel}: primary key {pk!r} is missing: add the column or fix "
                                 "parent_primary_key in the metadata")
            ctx_sources[role] = pframe.rename(columns={pk: fk}) if pk != fk else pframe
            sources[role] = c
        entity_key = fk
        sequence_key = sequence_key or cmeta.pop("sequence_index", None) or cmeta.pop("sequence_key", None)
        pmeta.pop("primary_key", None)
        ctx_meta = {"columns": {k: v for k, v in (pmeta.get("columns") or {}).items() if k != pk}}
        meta = {k: v for k, v in cmeta.items() if k != "primary_key"}
    else:
        if "sequence_index" in meta:  # SDV sequential metadata: sequence_key names the entity
            entity_key = entity_key or meta.get("sequence_key")
            sequence_key = sequence_key or meta.get("sequence_index")
        else:
            entity_key = entity_key or meta.get("entity_key")
            sequence_key = sequence_key or meta.get("sequence_key")
    if not entity_key:
        raise ConfigError("no entity key: name the column identifying each person with --entity-key "
                          "(or 'entity_key' in the metadata)")
    # canonical (sorted) column order for the event and context tables, as for flat tables
    # (data/tables.py): nothing downstream can depend on the order of the input columns
    context_cols = tuple(_canonical_columns([str(c) for c in (meta.get("context_columns") or ())]))

    events: dict[str, pd.DataFrame] = {}
    labels: dict[str, str] = {}
    for role, src in sources.items():
        if src is None:
            continue
        frame, lab = load_table(src, role)
        frame.columns = [str(c) for c in frame.columns]
        _check_key(frame, entity_key, "entity key", lab)
        if sequence_key is not None:
            _check_key(frame, sequence_key, "sequence key", lab)
        frame[entity_key] = _key_values(frame[entity_key])
        events[role] = frame.reset_index(drop=True)
        labels[role] = lab

    context: dict[str, pd.DataFrame] = {}
    if context_cols:
        for role, frame in events.items():
            missing = [c for c in context_cols if c not in frame.columns]
            if missing:
                raise InputError(f"{labels[role]}: context column(s) {missing} are missing")
            varying = frame.groupby(entity_key, sort=True)[list(context_cols)].nunique(dropna=False) > 1
            if varying.to_numpy().any():
                col = varying.columns[varying.any(axis=0).to_numpy()][0]
                ent = varying.index[varying[col].to_numpy()][0]
                raise InputError(f"{labels[role]}: context column {col!r} is not constant within entity "
                                 f"{ent!r} (of {entity_key!r}): a context column must hold one value per "
                                 "person; move it out of context_columns or fix the rows")
            context[role] = frame.groupby(entity_key, sort=True)[list(context_cols)].first()
            events[role] = frame.drop(columns=list(context_cols))
        ctx_meta = {"columns": {c: v for c, v in (meta.get("columns") or {}).items() if c in context_cols}}
    given = {r: s for r, s in ctx_sources.items() if s is not None and r in events}
    if given:
        if context_cols:
            raise ConfigError("give the context either as context_columns of the sequence table or as "
                              "a separate context table, not both")
        if set(given) != set(events):
            lack = sorted(set(events) - set(given))
            raise InputError(f"a context table was given for {sorted(given)} but not for {lack}: give "
                             f"--{lack[0]}-context too (every role needs its context)")
        for role, src in given.items():
            frame, lab = (src.copy(), f"{role} context DataFrame") if isinstance(src, pd.DataFrame) \
                else load_table(src, f"{role} context")
            frame.columns = [str(c) for c in frame.columns]
            _check_key(frame, entity_key, "entity key", lab)
            frame[entity_key] = _key_values(frame[entity_key])
            dup = frame[entity_key].duplicated()
            if dup.any():
                raise InputError(f"{lab}: entity {frame[entity_key][dup].iloc[0]!r} has "
                                 f"{int(frame[entity_key].eq(frame[entity_key][dup].iloc[0]).sum())} context "
                                 f"rows: the context must be constant within an entity (one row per "
                                 f"{entity_key!r}); deduplicate it or move varying columns to the sequence")
            ctx = frame.set_index(entity_key).sort_index()
            orphans = ~events[role][entity_key].isin(ctx.index)
            if orphans.any():
                ex = events[role][entity_key][orphans].iloc[0]
                raise InputError(f"{labels[role]}: {int(orphans.sum())} row(s) belong to entities with no "
                                 f"context row in {lab} (orphan rows), e.g. {entity_key}={ex!r}: add "
                                 "their parents or drop the rows")
            overlap = [c for c in ctx.columns if c in events[role].columns]
            if overlap:
                raise InputError(f"{lab}: column(s) {overlap} appear in both the context and the "
                                 "sequence table: keep each column in one of them")
            context[role] = ctx
        base = _canonical_columns(list(context["original"].columns))
        for role, ctx in context.items():
            if list(ctx.columns) != base:
                if set(ctx.columns) != set(base):
                    raise InputError(f"{role} context has columns {sorted(ctx.columns)}, the original's "
                                     f"are {sorted(base)}: give the same columns")
                context[role] = ctx[base]
    base_cols = _canonical_columns(list(events["original"].columns))
    for role, frame in events.items():
        if set(frame.columns) != set(base_cols):
            miss = sorted(set(base_cols) - set(frame.columns)) or sorted(set(frame.columns) - set(base_cols))
            raise InputError(f"{labels[role]}: columns differ from the original's ({miss}): give the "
                             "same columns in every table")
        events[role] = frame[base_cols]

    if "control" in events:
        shared = pd.Index(events["original"][entity_key].unique()).intersection(
            pd.Index(events["control"][entity_key].unique()))
        if "control" in context:
            shared = shared.union(context["original"].index.intersection(context["control"].index))
        if len(shared):
            raise InputError(f"{len(shared)} entity key(s) of {entity_key!r} appear in both the original "
                             f"({labels['original']}) and the control ({labels['control']}), e.g. "
                             f"{shared[0]!r}: a control person must be held out whole; split the data by "
                             "entity, not by row")
    ev_meta = {k: v for k, v in meta.items() if k not in ("entity_key", "sequence_key", "sequence_index",
                                                          "context_columns", "context")}
    cols = dict(ev_meta.get("columns") or {})
    cols = {c: v for c, v in cols.items() if c in base_cols}
    cols[entity_key] = {"sdtype": "id"}
    ev_meta["columns"] = cols
    for k in ("quasi_identifiers", "sensitive", "text_columns"):
        if k in ev_meta:
            ev_meta[k] = [c for c in ev_meta[k] if c in base_cols]
    spec = EntitySpec(entity_key, sequence_key, context_cols, parent, child)
    ctx_meta = dict(ctx_meta)
    for k in ("quasi_identifiers", "sensitive"):
        if context and k in meta:
            ctx_meta[k] = [c for c in meta[k] if c in next(iter(context.values())).columns]
    column_roles: dict[str, tuple[str, ...]] = {}
    sections = [top_meta] + [t for t in (top_meta.get("tables") or {}).values() if isinstance(t, Mapping)]
    for k in ("quasi_identifiers", "sensitive"):
        names = [str(c) for sec in sections for c in (sec.get(k) or [])]
        if names:
            column_roles[k] = tuple(dict.fromkeys(names))
    return EntityData(spec, events, context, ev_meta, ctx_meta, labels, column_roles)
