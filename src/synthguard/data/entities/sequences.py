"""Ordered events: a canonical event order within each entity, and exact identities of events,
whole sequences and windows of consecutive events, shared across roles and vectorised.

The order is: entity key, then the sequence key, then every event column by value (ties broken by
content), so it does not depend on how the rows were ordered in the file when a sequence key is
given. Without a sequence key, the file order within an entity is the event order (stable sort).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...errors import InputError
from ..schema import Schema, numeric_view


def sequence_values(series: pd.Series, label: str = "table") -> np.ndarray:
    """float64 order values of the sequence key (numbers as they are, dates as days since 1970)."""
    if pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_datetime64_any_dtype(series.dtype):
        return numeric_view(series)
    conv = pd.to_datetime(series, errors="coerce", format="mixed")
    if conv.isna().any():
        num = pd.to_numeric(series, errors="coerce")
        if num.notna().all():
            return num.to_numpy(dtype="float64")
        bad = series[conv.isna()].iloc[0]
        raise InputError(f"{label}: the sequence key {series.name!r} holds {bad!r}, neither a number nor a "
                         "date: give a numeric or date column as --sequence-key")
    return numeric_view(conv)


def _sort_codes(series: pd.Series, schema: Schema | None) -> np.ndarray:
    """Integer ranks of a column's values (missing last), for tie-breaking by content."""
    numeric = schema is not None and series.name in schema.columns and schema.columns[series.name].is_numeric
    if numeric:
        codes, _ = pd.factorize(numeric_view(series), sort=True)
    else:  # hash the values, then rank the distinct values by their text (mixed types sort too)
        raw, uniques = pd.factorize(series)
        rank = np.empty(len(uniques), dtype=np.int64)
        rank[np.argsort(np.asarray([str(u) for u in uniques], dtype=object), kind="stable")] = \
            np.arange(len(uniques))
        codes = np.where(raw >= 0, rank[np.maximum(raw, 0)], -1)
    codes = codes.astype(np.int64)
    codes[codes < 0] = np.iinfo(np.int64).max
    return codes


def canonical_order(frame: pd.DataFrame, entity_key: str, sequence_key: str | None,
                    schema: Schema | None = None, label: str = "table") -> np.ndarray:
    """Row positions of ``frame`` in canonical event order (see module docstring)."""
    keys: list[np.ndarray] = []
    if sequence_key is not None:
        others = [c for c in frame.columns if c not in (entity_key, sequence_key)]
        keys.extend(_sort_codes(frame[c], schema) for c in reversed(others))
        t = sequence_values(frame[sequence_key], label)
        keys.append(np.where(np.isnan(t), np.inf, t))
    else:
        keys.append(np.arange(len(frame)))
    ent, _ = pd.factorize(frame[entity_key], sort=True)
    keys.append(ent)
    return np.lexsort(keys)


def combine_ids(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Dense ids of the pairs ``(a, b)`` (equal pairs, equal ids); ``-1`` in either gives ``-1``."""
    bad = (a < 0) | (b < 0)
    pair = a.astype(np.int64) * (int(b.max(initial=0)) + 1) + b
    pair[bad] = -1
    ids, _ = pd.factorize(pair)
    ids = ids.astype(np.int64)
    if bad.any():
        neg = ids[bad][0]
        ids[bad] = -1
        ids[ids > neg] -= 1  # keep ids dense after removing the invalid pair's code
    return ids


def sequence_ids(event_ids: Sequence[np.ndarray], entity_codes: Sequence[np.ndarray],
                 positions: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Ids of whole sequences, equal across roles iff same length and same events in order.

    Parameters
    ----------
    event_ids : list of ndarray
        Per role, the id of each event (rows in canonical order), shared across roles.
    entity_codes : list of ndarray
        Per role, the dense entity index (0..n_entities-1) of each row.
    positions : list of ndarray
        Per role, the position of each row in its entity's sequence.

    Returns
    -------
    list of ndarray
        Per role, one id per entity.
    """
    sizes = [int(c.max(initial=-1)) + 1 for c in entity_codes]
    offs = np.cumsum([0] + sizes)
    n_all = int(offs[-1])
    cur = np.zeros(n_all, dtype=np.int64)  # id of the prefix read so far (0 = empty)
    ent = np.concatenate([c + o for c, o in zip(entity_codes, offs[:-1], strict=True)])
    ev = np.concatenate(list(event_ids))
    pos = np.concatenate(list(positions))
    order = np.argsort(pos, kind="stable")
    ent, ev, pos = ent[order], ev[order], pos[order]
    bounds = np.searchsorted(pos, np.arange(int(pos.max(initial=-1)) + 2))
    for p in range(len(bounds) - 1):  # loop over positions; each step vectorised over entities
        lo, hi = bounds[p], bounds[p + 1]
        e = ent[lo:hi]
        cur[e] = combine_ids(cur[e], ev[lo:hi] + 1)
    # ids of one step are dense within that step: the length tells the steps apart
    lengths = np.bincount(ent, minlength=n_all)
    cur = combine_ids(cur, lengths)
    return [cur[offs[i]:offs[i + 1]] for i in range(len(sizes))]


def window_ids(event_ids: Sequence[np.ndarray], first_ids: Sequence[np.ndarray],
               entity_codes: Sequence[np.ndarray], length: int) -> list[np.ndarray]:
    """Ids of every window of ``length`` consecutive events, one per starting row (``-1`` when the
    window runs past the entity's last event). The first event of a window is read through
    ``first_ids`` (e.g. an event id without its gap to the previous event), the others through
    ``event_ids``.
    """
    sizes = [len(e) for e in event_ids]
    offs = np.cumsum([0] + sizes)
    ev = np.concatenate(list(event_ids))
    first = np.concatenate(list(first_ids))
    ent = np.concatenate([c.astype(np.int64) + (i << 40) for i, c in enumerate(entity_codes)])
    cur = first.astype(np.int64).copy()
    n = len(ev)
    for j in range(1, length):  # loop over window offsets (a handful), vectorised over rows
        nxt = np.full(n, -1, dtype=np.int64)
        same = np.zeros(n, dtype=bool)
        if n > j:
            same[:-j] = ent[j:] == ent[:-j]
            nxt[:-j] = np.where(same[:-j], ev[j:], -1)
        cur = combine_ids(cur, nxt)
    return [cur[offs[i]:offs[i + 1]] for i in range(len(sizes))]
