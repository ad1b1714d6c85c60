"""The entity table: one row per person, from the person's context and a summary of their events.

Every privacy metric of an entity-level run reads this table, through the ordinary
:class:`~synthguard.data.tables.Tables` / :class:`~synthguard.data.encoding.EncodedView` machinery, so
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

Events are put in canonical order (:func:`~synthguard.data.entities.sequences.canonical_order`): with a
sequence key the table does not depend on the order of rows within an entity; without one, first /
last / bigram columns follow the file order (the other columns never depend on it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..schema import Schema, numeric_view
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


def _ranked(values: pd.Series) -> list[Any]:
    """Distinct non-missing values, most frequent first, ties by their text (row-order free)."""
    counts = values.dropna().value_counts()
    if counts.empty:
        return []
    df = pd.DataFrame({"n": counts.to_numpy(), "s": [str(v) for v in counts.index]})
    order = df.sort_values(["n", "s"], ascending=[False, True], kind="mergesort").index.to_numpy()
    return counts.index[order].tolist()


def _pairs(codes: np.ndarray, same_next: np.ndarray, size: int) -> np.ndarray:
    """Codes ``a * size + b`` of consecutive (a then b) events of one entity; -1 when either is unknown."""
    if len(codes) < 2:
        return np.zeros(0, dtype=np.int64)
    a, b = codes[:-1], codes[1:]
    ok = same_next[:-1] & (a >= 0) & (b >= 0)
    return np.where(ok, a * size + b, -1)


def learn_vocabulary(ev: OrderedEvents, columns: list[str], schema: Schema, *,
                     top_categories: int = TOP_CATEGORIES, top_bigrams: int = TOP_BIGRAMS) -> dict[str, Any]:
    """Categories (ranked) and top bigrams of each categorical event column, from the original's events.

    ``{column: {"all": every category ranked, "categories": the top ones, "bigrams": [(a, b), ...]}}``.
    """
    vocab: dict[str, Any] = {}
    same_next = _same_next(ev.entity)
    for c in columns:
        if schema.columns[c].is_numeric:
            continue
        ranked = _ranked(ev.frame[c])
        size = max(len(ranked), 1)
        codes = pd.Index(ranked, dtype=object).get_indexer(ev.frame[c]) if ranked else \
            np.full(len(ev.frame), -1)
        pairs = _pairs(codes.astype(np.int64), same_next, size)
        pairs = pairs[pairs >= 0]
        counts = np.bincount(pairs, minlength=size * size) if pairs.size else np.zeros(0, dtype=np.int64)
        nz = np.flatnonzero(counts)
        names = np.asarray([f"{ranked[p // size]}>{ranked[p % size]}" for p in nz], dtype=object)
        order = np.lexsort((names, -counts[nz]))[:top_bigrams] if nz.size else np.zeros(0, dtype=np.int64)
        vocab[c] = {"all": ranked, "categories": ranked[:top_categories],
                    "bigrams": [(ranked[nz[i] // size], ranked[nz[i] % size]) for i in order]}
    return vocab


def _same_next(entity: np.ndarray) -> np.ndarray:
    out = np.zeros(len(entity), dtype=bool)
    if len(entity) > 1:
        out[:-1] = entity[1:] == entity[:-1]
    return out


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
        voc = vocab.get(c, {})
        ranked = list(voc.get("all", []))
        size = max(len(ranked), 1)
        idx = pd.Index(ranked, dtype=object).get_indexer(s).astype(np.int64) if ranked else \
            np.full(len(s), -1, dtype=np.int64)
        top = voc.get("categories", [])
        if top and len(g_index):
            k = len(top)
            hit = (idx >= 0) & (idx < k)
            mat = np.bincount(g_index[hit] * k + idx[hit], minlength=n * k).reshape(n, k)
        else:
            mat = np.zeros((n, len(top)))
        for j, v in enumerate(top):
            out[f"{c}={v}:count"] = mat[:, j].astype("float64")
            sdtypes[f"{c}={v}:count"] = "numerical"
        bigrams = voc.get("bigrams", [])
        if bigrams:
            pos = {a: i for i, a in enumerate(ranked)}
            wanted = np.asarray([pos[a] * size + pos[b] for a, b in bigrams], dtype=np.int64)
            pairs = _pairs(idx, same_next, size)
            which = pd.Index(wanted).get_indexer(pairs)
            ok = which >= 0
            bmat = np.bincount(g_index[:-1][ok] * len(wanted) + which[ok],
                               minlength=n * len(wanted)).reshape(n, len(wanted)) if ok.any() else \
                np.zeros((n, len(wanted)))
            for j, (a, b) in enumerate(bigrams):
                out[f"{c}:{a}>{b}:count"] = bmat[:, j].astype("float64")
                sdtypes[f"{c}:{a}>{b}:count"] = "numerical"
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
