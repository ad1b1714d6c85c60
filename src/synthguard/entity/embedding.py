"""The entity table: one row per person, from the person's context and a summary of their events.

Every privacy metric of an entity-level run reads this table, through the ordinary
:class:`~synthguard.data.tables.Tables` / :class:`~synthguard.encoding.EncodedView` machinery, so
DCR, NNDR, singling out, linkability, inference, the closest-distance MIA and distinguishability run
unchanged with one row per entity.

Columns (``c`` an event column; vocabularies learnt from the original only, most frequent first,
ties by value, so nothing depends on row order):

* the context columns, as they are;
* ``n_events``: the sequence length;
* with a sequence key ``t``: ``t:first`` (time of the first event), ``t:span`` (last minus first),
  ``t:gap_mean`` (mean time between consecutive events);
* numeric ``c``: ``c:mean``, ``c:min``, ``c:max``, ``c:first``, ``c:last``;
* categorical ``c``: ``c:first``, ``c:last`` (categories), ``c:n_distinct``, ``c=v:count`` for the
  ``top_categories`` most frequent values ``v`` and ``c:a>b:count`` for the ``top_bigrams`` most
  frequent pairs of consecutive events (a then b).

Events are put in canonical order (:func:`~synthguard.entity.sequences.canonical_order`): with a
sequence key the table does not depend on the order of rows within an entity; without one, first /
last / bigram columns follow the file order (the other columns never depend on it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..data.schema import Schema, numeric_view
from .model import EntitySpec
from .sequences import canonical_order, sequence_values

TOP_CATEGORIES = 8
TOP_BIGRAMS = 8


@dataclass(frozen=True)
class OrderedEvents:
    """One role's events in canonical order.

    Attributes
    ----------
    frame : DataFrame
        The typed events, rows in canonical order, index reset.
    entity : ndarray
        Dense entity index of each row into ``entities``.
    entities : Index
        The entity keys (sorted), including entities with a context row but no event.
    position : ndarray
        Position of each row within its entity's sequence (0 = first event).
    time : ndarray or None
        Sequence-key values (float; dates in days), when a sequence key is given.
    """

    frame: pd.DataFrame
    entity: np.ndarray
    entities: pd.Index
    position: np.ndarray
    time: np.ndarray | None

    @property
    def lengths(self) -> np.ndarray:
        return np.bincount(self.entity, minlength=len(self.entities))


def order_events(frame: pd.DataFrame, spec: EntitySpec, schema: Schema, entities: pd.Index | None = None,
                 label: str = "table") -> OrderedEvents:
    """Put one role's events in canonical order and index their entities."""
    order = canonical_order(frame, spec.entity_key, spec.sequence_key, schema, label)
    f = frame.iloc[order].reset_index(drop=True)
    keys = f[spec.entity_key]
    ents = pd.Index(keys.unique()).sort_values() if entities is None else entities
    ent = ents.get_indexer(keys).astype(np.int64)
    pos = f.groupby(ent, sort=False).cumcount().to_numpy().astype(np.int64)
    time = sequence_values(f[spec.sequence_key], label) if spec.sequence_key else None
    return OrderedEvents(f, ent, ents, pos, time)


def _vocab(values: pd.Series, k: int) -> list[Any]:
    counts = values.dropna().value_counts()
    if counts.empty:
        return []
    df = pd.DataFrame({"v": counts.index, "n": counts.to_numpy(), "s": counts.index.map(str)})
    return df.sort_values(["n", "s"], ascending=[False, True], kind="mergesort")["v"].head(k).tolist()


def learn_vocabulary(ev: OrderedEvents, columns: list[str], schema: Schema, *,
                     top_categories: int = TOP_CATEGORIES, top_bigrams: int = TOP_BIGRAMS) -> dict[str, Any]:
    """Top categories and bigrams of each categorical event column, from the original's events."""
    vocab: dict[str, Any] = {}
    same_next = np.zeros(len(ev.entity), dtype=bool)
    same_next[:-1] = ev.entity[1:] == ev.entity[:-1]
    for c in columns:
        if schema.columns[c].is_numeric:
            continue
        strs = ev.frame[c].map(str, na_action="ignore").fillna("\x00nan").to_numpy(dtype=object)
        keep = same_next[:-1]
        pairs = pd.Series(strs[:-1][keep] + ">" + strs[1:][keep], dtype=object) if len(strs) > 1 \
            else pd.Series([], dtype=object)
        s = ev.frame[c]
        vocab[c] = {"categories": _vocab(s, top_categories), "bigrams": _vocab(pairs, top_bigrams)}
    return vocab


def embed(ev: OrderedEvents, context: pd.DataFrame | None, columns: list[str], schema: Schema,
          vocab: Mapping[str, Any], spec: EntitySpec,
          context_sdtypes: Mapping[str, str] | None = None) -> tuple[pd.DataFrame, dict[str, str]]:
    """The entity table of one role and the sdtype of each of its columns.

    Parameters
    ----------
    ev : OrderedEvents
        The role's events in canonical order.
    context : DataFrame or None
        Typed context rows indexed by entity key.
    columns : list of str
        Event columns to summarise (text and id columns are skipped).
    schema : Schema
        sdtypes of the event columns.
    vocab : mapping
        From :func:`learn_vocabulary` on the original.
    spec : EntitySpec
        The keys.
    context_sdtypes : mapping, optional
        sdtypes of the context columns.
    """
    n = len(ev.entities)
    g_index = ev.entity
    lengths = ev.lengths
    first = np.zeros(len(g_index), dtype=bool)
    last = np.zeros(len(g_index), dtype=bool)
    if len(g_index):
        first[0] = True
        first[1:] = g_index[1:] != g_index[:-1]
        last[-1] = True
        last[:-1] = g_index[1:] != g_index[:-1]
    out: dict[str, Any] = {}
    sdtypes: dict[str, str] = {}
    if context is not None:
        ctx = context.reindex(ev.entities)
        for c in ctx.columns:
            out[c] = ctx[c].to_numpy()
            sdtypes[c] = (context_sdtypes or {}).get(c) or schema_ctx_sdtype(ctx[c])
    out["n_events"] = lengths.astype("float64")
    sdtypes["n_events"] = "numerical"

    def per_entity(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
        res = np.full(n, np.nan)
        res[g_index[mask]] = values[mask]
        return res

    if ev.time is not None:
        t = spec.sequence_key
        tf = per_entity(ev.time, first)
        tl = per_entity(ev.time, last)
        out[f"{t}:first"] = tf
        out[f"{t}:span"] = tl - tf
        with np.errstate(invalid="ignore", divide="ignore"):
            out[f"{t}:gap_mean"] = np.where(lengths > 1, (tl - tf) / np.maximum(lengths - 1, 1), np.nan)
        for k in (f"{t}:first", f"{t}:span", f"{t}:gap_mean"):
            sdtypes[k] = "numerical"
    same_next = np.zeros(len(g_index), dtype=bool)
    same_next[:-1] = g_index[1:] == g_index[:-1]
    for c in columns:
        spec_c = schema.columns[c]
        s = ev.frame[c]
        if spec_c.is_numeric:
            x = numeric_view(s)
            grp = pd.Series(x).groupby(g_index)
            agg = grp.agg(["mean", "min", "max"]).reindex(range(n))
            out[f"{c}:mean"] = agg["mean"].to_numpy()
            out[f"{c}:min"] = agg["min"].to_numpy()
            out[f"{c}:max"] = agg["max"].to_numpy()
            out[f"{c}:first"] = per_entity(x, first)
            out[f"{c}:last"] = per_entity(x, last)
            for k in ("mean", "min", "max", "first", "last"):
                sdtypes[f"{c}:{k}"] = "numerical"
            continue
        vals = s.to_numpy(dtype=object)
        for k, mask in (("first", first), ("last", last)):
            col = np.full(n, None, dtype=object)
            col[g_index[mask]] = vals[mask]
            out[f"{c}:{k}"] = col
            sdtypes[f"{c}:{k}"] = "categorical"
        codes, _ = pd.factorize(s)
        nd = pd.Series(codes).where(codes >= 0).groupby(g_index).nunique().reindex(range(n), fill_value=0)
        out[f"{c}:n_distinct"] = nd.to_numpy().astype("float64")
        sdtypes[f"{c}:n_distinct"] = "numerical"
        text = s.map(str, na_action="ignore")
        for v in vocab.get(c, {}).get("categories", []):
            hit = (text == str(v)).to_numpy()
            out[f"{c}={v}:count"] = np.bincount(g_index[hit], minlength=n).astype("float64")
            sdtypes[f"{c}={v}:count"] = "numerical"
        strs = text.fillna("\x00nan").to_numpy(dtype=object)
        if len(strs) > 1:
            pairs = np.where(same_next[:-1], strs[:-1] + ">" + strs[1:], None)
        else:
            pairs = np.array([], dtype=object)
        for bg in vocab.get(c, {}).get("bigrams", []):
            hit = pairs == bg
            out[f"{c}:{bg}:count"] = np.bincount(g_index[:-1][hit], minlength=n).astype("float64") \
                if len(pairs) else np.zeros(n)
            sdtypes[f"{c}:{bg}:count"] = "numerical"
    frame = pd.DataFrame(out, index=ev.entities.rename(spec.entity_key))
    return frame, sdtypes


def schema_ctx_sdtype(series: pd.Series) -> str:
    """sdtype of a typed context column (its dtype after coercion)."""
    if pd.api.types.is_bool_dtype(series.dtype):
        return "boolean"
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        return "datetime"
    if pd.api.types.is_numeric_dtype(series.dtype):
        return "numerical"
    return "categorical"
