"""Calibration releases for entity-level data: the sequential null is held-out *entities*.

Split the people (not the rows) of a sequential dataset with a seed into original / control /
fresh; the fresh people used as the release are a perfect generator and every entity-level test
should read ``low`` (or ``inconclusive``) on them. A release with a known leak puts whole histories of
training people into it under new ids. Counting alarms over seeds gives the false-alarm rate and
the power, as :mod:`synthguard.calibration` does for one-row-per-person tables::

    parts = entity_calibration_split(events, "id", context=persons, seed=0)
    ev, ctx = entity_leaky_release(parts["fresh"], parts["original"], "id", share=0.05, seed=0)
    report = synthguard.evaluate(parts["original"].events, ev, parts["control"].events, entity_key="id",
                                 original_context=parts["original"].context, synthetic_context=ctx,
                                 control_context=parts["control"].context)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...errors import ConfigError, InputError
from ...stats import make_rng

__all__ = ["EntityPart", "entity_calibration_split", "entity_leaky_release"]


@dataclass(frozen=True)
class EntityPart:
    """The events (and context, when given) of one part of a split."""

    events: pd.DataFrame
    context: pd.DataFrame | None = None


def _sorted_ids(values: pd.Series) -> np.ndarray:
    ids = pd.unique(values.dropna())
    return np.asarray(sorted(ids, key=str), dtype=object)


def entity_calibration_split(events: pd.DataFrame, entity_key: str, *, context: pd.DataFrame | None = None,
                             seed: int = 0, fractions: Sequence[float] = (0.5, 0.25, 0.25)
                             ) -> dict[str, EntityPart]:
    """Split people (whole histories) into ``original`` / ``control`` / ``fresh``.

    Parameters
    ----------
    events : DataFrame
        Rows with an entity key (many per person).
    entity_key : str
        The column naming the person.
    context : DataFrame, optional
        One row per person (people without events are split too).
    seed : int
        Seed of the shuffle (the result does not depend on the row order of the inputs).
    fractions : three floats
        Shares of the people for original, control and fresh.

    Returns
    -------
    dict
        ``{"original", "control", "fresh"}`` -> :class:`EntityPart`; inputs untouched.
    """
    f = np.asarray(fractions, dtype=float)
    if f.shape != (3,) or np.any(f <= 0):
        raise ConfigError(f"fractions must be three positive numbers, got {list(fractions)}")
    if entity_key not in events.columns:
        raise InputError(f"events have no column {entity_key!r}: name the entity key")
    keys = events[entity_key]
    if context is not None:
        if entity_key not in context.columns:
            raise InputError(f"the context has no column {entity_key!r}: name the entity key")
        keys = pd.concat([keys, context[entity_key]], ignore_index=True)
    ids = _sorted_ids(keys)
    if len(ids) < 6:
        raise ConfigError(f"calibration needs at least 6 entities, got {len(ids)}")
    f = f / f.sum()
    order = ids[make_rng(seed, "entity-calibration-split").permutation(len(ids))]
    a = int(round(f[0] * len(ids)))
    b = a + int(round(f[1] * len(ids)))
    out = {}
    for role, part in (("original", order[:a]), ("control", order[a:b]), ("fresh", order[b:])):
        ev = events[events[entity_key].isin(part)].reset_index(drop=True)
        ctx = None if context is None else context[context[entity_key].isin(part)].reset_index(drop=True)
        out[role] = EntityPart(ev, ctx)
    return out


def entity_leaky_release(base: EntityPart, original: EntityPart, entity_key: str, share: float,
                         seed: int = 0, *, id_prefix: str = "copy-") -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """``base`` with ``round(share * n_original_entities)`` of its people replaced by whole copies
    of distinct training people (events and context) under new ids ``id_prefix + n``.

    Returns
    -------
    (events, context)
        The release (context ``None`` when the parts have none).
    """
    if not 0.0 <= share <= 1.0:
        raise ConfigError(f"share must lie in [0, 1], got {share}")
    rng = make_rng(seed, "entity-calibration-leak")
    def ids_of(p: EntityPart) -> np.ndarray:
        keys = p.events[entity_key] if p.context is None else \
            pd.concat([p.events[entity_key], p.context[entity_key]], ignore_index=True)
        return _sorted_ids(keys)

    orig_ids, base_ids = ids_of(original), ids_of(base)
    k = int(round(share * len(orig_ids)))
    src = orig_ids[np.sort(rng.choice(len(orig_ids), k, replace=False))]
    drop = base_ids[rng.choice(len(base_ids), min(k, len(base_ids)), replace=False)]
    new = {s: f"{id_prefix}{i}" for i, s in enumerate(src)}

    def build(frame: pd.DataFrame | None, copy_from: pd.DataFrame | None) -> pd.DataFrame | None:
        if frame is None or copy_from is None:
            return None
        kept = frame[~frame[entity_key].isin(drop)]
        copies = copy_from[copy_from[entity_key].isin(src)].copy()
        copies[entity_key] = copies[entity_key].map(new)
        kept = kept.astype({entity_key: object})
        return pd.concat([kept, copies], ignore_index=True)

    return build(base.events, original.events), build(base.context, original.context)
