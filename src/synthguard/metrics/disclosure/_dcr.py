"""Distance to closest record (SDMetrics' ``dcr_utils.calculate_dcr``) on the shared engine, and the
uniform random baseline table of ``DCRBaselineProtection``.

Datetime columns are compared in seconds (``exact_datetimes``: whole seconds exact), as SDMetrics
compares them (``Timedelta.total_seconds()``), so a DCR of whole-second data equals SDMetrics' to
the last bit; days since 1970 would turn a 1-in-5-seconds difference into 0.1999999874.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...data.encoding import Block
from ...engine.neighbors import Neighbors, gower, kneighbors
from ...errors import MetricError
from ...registry import Context

__all__ = ["dcr_block", "dcr_columns", "dcr_metric", "dcr_scale", "nearest", "nearest_rows",
           "random_baseline_frame", "subsample"]


def dcr_columns(ctx: Context) -> list[str]:
    """Columns of the DCR: numerical, datetime, categorical and boolean columns that are neither
    PII nor the primary key (SDMetrics ignores id and PII sdtypes)."""
    schema = ctx.tables.schema
    cols = [c for c, s in schema.columns.items()
            if s.sdtype in ("numerical", "datetime", "categorical", "boolean") and not s.pii
            and c != schema.primary_key]
    if not cols:
        raise MetricError("no numerical, datetime, categorical or boolean column to compare rows on; "
                          "declare column sdtypes in the metadata (PII and id columns are ignored)")
    return cols


def dcr_block(ctx: Context, role: str, cols: Sequence[str]) -> Block:
    """The rows of ``role`` as the DCR compares them (datetimes in exact seconds)."""
    return ctx.encoded.block(role, cols, exact_datetimes=True)


def dcr_scale(ctx: Context, cols: Sequence[str], roles: Sequence[str] = ("original",)) -> np.ndarray:
    """Ranges of the numeric columns over ``roles``, in the units of :func:`dcr_block` (asked of
    the backend: :meth:`~synthguard.engine.backend.Backend.ranges_seconds`)."""
    return ctx.data.ranges_seconds(cols, roles)


def dcr_metric(scale: np.ndarray):
    """SDMetrics' per-column rules: ``min(|a-b|/range, 1)`` (range 0: 0 if equal else 1), one side
    missing 1, both missing 0, categorical 0/1 with missing equal to missing; mean over columns."""
    return gower(np.asarray(scale, dtype=float), clip=True, normalise=True, nan_rule="max")


def nearest(ctx: Context, query: Block, reference: Block, scale: np.ndarray) -> Neighbors:
    """Closest reference row of every query row (exact; ties -> lower index)."""
    return kneighbors(query, reference, dcr_metric(scale), 1, backend=ctx.backend)


def nearest_rows(ctx: Context, query: str, reference: str, cols: Sequence[str], scale: np.ndarray,
                 rows: np.ndarray | None = None) -> Neighbors:
    """Closest ``reference`` row of every ``query`` row (or of ``rows``, positions of the query
    role), in the units of :func:`dcr_block`, asked of the backend (one process or a cluster:
    :meth:`~synthguard.engine.backend.Backend.kneighbors_seconds`); exact, ties -> lower index."""
    d, i = ctx.data.kneighbors_seconds(query, reference, list(cols), dcr_metric(scale), 1, query_rows=rows)
    return Neighbors(d, i)


def subsample(n: int, size: int | None, rng: np.random.Generator) -> np.ndarray:
    """Sorted positions of ``size`` rows drawn without replacement (all rows when ``size`` is None
    or at least ``n``)."""
    if size is None or size >= n:
        return np.arange(n)
    return np.sort(rng.choice(n, int(size), replace=False))


def random_baseline_frame(summaries: Mapping[str, Mapping[str, Any]], columns: Sequence[str],
                          sdtypes: dict[str, str], n: int, rng: np.random.Generator,
                          integer_columns: Sequence[str] | None = None) -> pd.DataFrame:
    """``n`` rows drawn uniformly within the original's values, column by column.

    ``summaries``: the original's :meth:`~synthguard.engine.backend.Backend.value_summaries` of
    ``columns`` (one process or a cluster: the same summaries). Integer numerical columns: uniform
    integers in [min, max]; other numerical columns: uniform reals in [min, max); datetimes: uniform
    instants in [min, max]; categorical and boolean: uniform choice among the distinct non-missing
    values (not frequency-weighted). Then each column is set missing with probability equal to the
    original column's missing share. The integer columns are ``integer_columns`` when given
    (SDMetrics decides by the input's dtype, which the typed tables no longer hold), else the
    numerical columns whose values are all whole.
    """
    whole = None if integer_columns is None else set(integer_columns)
    out: dict[str, object] = {}
    for c in columns:  # loop over columns
        info = summaries[c]
        sd = sdtypes[c]
        if sd in ("datetime", "numerical") and info["lo"] is None:
            raise MetricError(f"column {c!r} of the original has no {sd} value to draw random values "
                              "within; leave it out of the compared columns or declare its sdtype")
        if sd == "datetime":
            lo, hi = info["lo"], info["hi"]
            draw = lo + np.floor(rng.random(n) * (hi - lo + 1)).astype("int64")
            col = pd.Series(draw.astype("datetime64[ns]"))
        elif sd == "numerical":
            lo, hi = info["lo"], info["hi"]
            if (c in whole) if whole is not None else info["whole"]:
                col = pd.Series(rng.integers(int(lo), int(hi) + 1, n).astype(float))
            else:
                col = pd.Series(rng.uniform(lo, hi, n))
        else:
            uniq = info["values"]  # sorted by (type name, text): order-free
            col = pd.Series(np.asarray(uniq, dtype=object)[rng.integers(0, len(uniq), n)], dtype=object)
        share = info["missing"] / info["rows"] if info["rows"] else float("nan")
        if share > 0:
            col = col.mask(rng.random(n) < share)
        out[c] = col
    return pd.DataFrame(out)
