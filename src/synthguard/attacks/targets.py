"""Choosing target records: by row id, or automatically (the most isolated records).

A record's *isolation* is the mean distance to its ``k`` nearest other records under the shared
distance engine (Gower on range-scaled numeric columns by default). Outliers are the records a
generator is most likely to leak (Stadler et al.; Meeus et al.), so ``"auto:5"`` audits the five
most isolated rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..data.encoding import Encoder, value_ranges
from ..data.schema import Schema, infer_schema
from ..engine.neighbors import gower, hamming, kneighbors, lp
from ..errors import ConfigError
from ..stats import make_rng
from ._conform import conform

__all__ = ["select_vulnerable_targets", "isolation_scores", "resolve_targets"]


def isolation_scores(data: pd.DataFrame, schema: Schema | None = None, *, k: int = 5,
                     metric: str = "gower", encoder: Encoder | None = None,
                     columns: Sequence[str] | None = None, max_reference: int | None = 20_000,
                     seed: int = 0, backend: str = "auto") -> np.ndarray:
    """Mean distance of every row to its ``k`` nearest other rows (higher = more isolated).

    Parameters
    ----------
    data : DataFrame
        The records.
    schema : Schema, optional
        Column sdtypes (inferred when absent).
    k : int
        Neighbours averaged.
    metric : {"gower", "hamming", "lp"}
        Distance of the shared engine.
    encoder : Encoder, optional
        Encoder to share codes with (created from ``schema`` otherwise).
    columns : sequence of str, optional
        Columns used (default: every tabular column).
    max_reference : int, optional
        Compare against a seeded sample of at most this many rows (bounded cost on big tables).
    seed : int
        Seed of that sample.
    backend : str
        Neighbour-engine backend.
    """
    schema = schema if schema is not None else infer_schema(data)
    data = conform(data, data, schema, "data")  # e.g. dates read from CSV as text
    enc = encoder if encoder is not None else Encoder(schema)
    cols = list(columns) if columns is not None else schema.tabular_columns()
    block = enc.encode(data, cols, categorical_only=metric == "hamming")
    dist = _metric(metric, value_ranges(block), block.num.shape[1])
    n = block.n_rows
    if n < 2:
        return np.zeros(n)
    kk = min(k, n - 1)
    if max_reference is not None and n > max_reference:
        ref_rows = np.sort(make_rng(seed, "isolation-ref").choice(n, max_reference, replace=False))
        nb = kneighbors(block, block.take(ref_rows), dist, kk + 1, backend=backend)
        # drop each row's own match (its own index when it is in the sample)
        own = ref_rows[np.clip(nb.indices, 0, None)] == np.arange(n)[:, None]
        d = np.where(own, np.nan, nb.distances)
        d = np.sort(np.where(np.isnan(d), np.inf, d), axis=1)[:, :kk]
    else:
        d = kneighbors(block, block, dist, kk, exclude_self=True, backend=backend).distances
    return np.where(np.isfinite(d), d, 1.0).mean(axis=1)


def _metric(name: str, ranges: np.ndarray, n_num: int):
    if name == "gower":
        return gower(ranges, clip=True)
    if name == "hamming":
        return hamming(n_num)
    if name in ("lp", "l2", "euclidean"):
        return lp(ranges, 2.0)
    raise ConfigError(f"unknown distance {name!r}: use 'gower', 'hamming' or 'lp'")


def select_vulnerable_targets(data: pd.DataFrame, n_targets: int, schema: Schema | None = None, *,
                              k: int = 5, metric: str = "gower", encoder: Encoder | None = None,
                              columns: Sequence[str] | None = None, seed: int = 0) -> np.ndarray:
    """Row positions of the ``n_targets`` most isolated records (ties -> lower row)."""
    if n_targets < 1 or n_targets > len(data):
        raise ConfigError(f"cannot pick {n_targets} targets from {len(data)} rows: ask for 1..{len(data)}")
    iso = isolation_scores(data, schema, k=k, metric=metric, encoder=encoder, columns=columns, seed=seed)
    order = np.lexsort((np.arange(iso.size), -iso))
    return np.sort(order[:n_targets]).astype(np.int64)


def resolve_targets(targets: Any, data: pd.DataFrame, schema: Schema, *, encoder: Encoder | None = None,
                    columns: Sequence[str] | None = None, seed: int = 0,
                    metric: str = "gower") -> np.ndarray:
    """Turn ``"auto:k"``, ``"3,17"``, an int or a sequence of ints into row positions.

    Raises
    ------
    ConfigError
        For malformed specs or ids outside ``0..len(data)-1``.
    """
    n = len(data)
    if isinstance(targets, str):
        spec = targets.strip().lower()
        if spec.startswith("auto"):
            _, _, num = spec.partition(":")
            try:
                k = int(num) if num else 1
            except ValueError as exc:
                raise ConfigError(f"targets {targets!r}: write 'auto:K' with an integer K") from exc
            return select_vulnerable_targets(data, k, schema, encoder=encoder, columns=columns,
                                             seed=seed, metric=metric)
        try:
            ids = [int(t) for t in spec.replace(" ", "").split(",") if t]
        except ValueError as exc:
            raise ConfigError(f"targets {targets!r}: give 'auto:K' or comma-separated row ids") from exc
    elif isinstance(targets, (int, np.integer)):
        ids = [int(targets)]
    else:
        ids = [int(t) for t in targets]
    if not ids:
        raise ConfigError("no targets given: use 'auto:K' or row ids")
    arr = np.asarray(ids, dtype=np.int64)
    bad = arr[(arr < 0) | (arr >= n)]
    if bad.size:
        raise ConfigError(f"target row id(s) {bad.tolist()} outside 0..{n - 1}: use row positions")
    if np.unique(arr).size != arr.size:
        raise ConfigError(f"duplicate target row ids in {ids}: list each target once")
    return arr
