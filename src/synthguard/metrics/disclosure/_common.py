"""Shared helpers of the disclosure metrics: field resolution, exact codes, binning, joint ids."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...data.encoding import Block, row_identities
from ...engine.backend import raw_numeric
from ...errors import ConfigError, MetricError
from ...registry import Context

__all__ = ["has_control", "thresholds", "column_codes", "backend_bins", "equal_width_edges",
           "quantile_edges", "merged_edges", "columns_to_bin", "joint_ids", "nunique_codes", "resolve_fields",
           "top_records", "BINNINGS", "evidence_roles", "rare_records"]

BINNINGS = ("equal_width", "quantile")


def thresholds(ctx: Context, name: str) -> Any:
    """The context's thresholds, else the registered defaults of ``name`` (direct calls)."""
    if ctx.thresholds:
        return ctx.thresholds
    from ...registry import _REGISTRY  # no discovery: the metric registered itself on import

    spec = _REGISTRY.get(name)
    return spec.thresholds if spec is not None else {}


def has_control(ctx: Context) -> bool:
    """Whether the run has a non-empty control table (real rows held out from training): the
    members-vs-non-members evidence of the disclosure metrics is only computed then."""
    return bool(ctx.tables.has_control) and len(ctx.tables.control) > 0


def _as_names(value: Any, param: str, metric: str) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    names = [str(v) for v in value]
    if not names:
        raise ConfigError(f"metric {metric!r}: parameter {param!r} is an empty list; name at least one "
                          "column or leave it unset to use the metadata")
    if len(set(names)) != len(names):
        raise ConfigError(f"metric {metric!r}: parameter {param!r} lists a column twice: {names}")
    return names


def resolve_fields(ctx: Context, metric: str, key_param: str, key_value: Any, sens_param: str | None,
                   sens_value: Any) -> tuple[list[str], list[str]]:
    """Key (quasi-identifier) and sensitive columns: the parameters, else the metadata roles.

    Raises
    ------
    ConfigError
        A named column does not exist or is used both as key and sensitive.
    MetricError
        Nothing was named and the metadata declares no quasi-identifiers / sensitive columns.
    """
    schema = ctx.tables.schema
    keys = _as_names(key_value, key_param, metric)
    sens = _as_names(sens_value, sens_param, metric) if sens_param else []
    if keys is None:
        keys = list(schema.quasi_identifiers)
        if not keys:
            raise MetricError(f"no key columns: set the parameter {key_param!r} or declare "
                              "'quasi_identifiers' in the metadata")
    if sens_param and sens is None:
        sens = list(schema.sensitive)
        if not sens:
            raise MetricError(f"no sensitive columns: set the parameter {sens_param!r} or declare "
                              "'sensitive' in the metadata")
        sens = [c for c in sens if c not in keys]
        if not sens:
            raise MetricError(f"every declared sensitive column is also a key column: set "
                              f"{sens_param!r} to a column outside {key_param!r}")
    cols = set(schema.columns)
    for param, names in ((key_param, keys), (sens_param, sens)):
        missing = [c for c in names or [] if c not in cols]
        if missing:
            raise ConfigError(f"metric {metric!r}: parameter {param!r} names column(s) {missing} that the "
                              f"data does not have; columns are {list(schema.columns)}")
        bad = [c for c in names or [] if schema.sdtype(c) == "text"]
        if bad:
            raise ConfigError(f"metric {metric!r}: parameter {param!r} names free-text column(s) {bad}; "
                              "use categorical, boolean, numerical or datetime columns")
    both = [c for c in keys if c in (sens or [])]
    if both:
        raise ConfigError(f"metric {metric!r}: column(s) {both} are both in {key_param!r} and "
                          f"{sens_param!r}; a column is either known to the attacker or sensitive")
    return keys, list(sens or [])


def equal_width_edges(values: np.ndarray, bins: int) -> np.ndarray:
    """Inner edges of ``bins`` equal-width, right-closed bins over the (non-NaN) range of ``values``.

    The same edges as ``pandas.cut(values, bins)``; a value ``x`` falls into bin
    ``searchsorted(inner, x, side="left")`` (the outer edges are open: -inf / +inf), so values of
    another table outside the range land in the first / last bin.
    """
    finite = values[~np.isnan(values)]
    if finite.size == 0:
        return np.zeros(0)
    _, edges = pd.cut(finite, bins, retbins=True)
    return np.asarray(edges[1:-1], dtype=np.float64)


def quantile_edges(values: np.ndarray, bins: int) -> np.ndarray:
    """Inner edges of (up to) ``bins`` right-closed bins holding about equal shares of the
    (non-NaN) ``values``: the ``j / bins`` quantiles, repeated edges merged (a value shared by many
    rows is never split). Same bin rule as :func:`equal_width_edges`."""
    finite = values[~np.isnan(values)]
    if finite.size == 0 or bins <= 1:
        return np.zeros(0)
    return merged_edges(np.quantile(finite, np.arange(1, bins) / bins), float(finite.max()))


def merged_edges(quantiles: np.ndarray, top: float) -> np.ndarray:
    """Quantile edges as :func:`quantile_edges` keeps them: repeated edges merged, and none at or
    above ``top``, the largest value (a last bin would be empty)."""
    inner = np.unique(quantiles)
    return inner[inner < top]


def continuous_bins(data: Any, columns: Sequence[str], bins: int,
                    roles: Sequence[str] = ("original",)) -> dict[str, np.ndarray]:
    """Inner equal-width edges (:func:`equal_width_edges`) of ``columns`` from the range of the
    ``roles`` pooled, through a backend's bounds (the edges depend on the range only), for
    :meth:`Backend.key_groups <synthguard.engine.backend.Backend.key_groups>`'s ``bins``."""
    if not columns:
        return {}
    bounds = data.bounds(list(columns), tuple(roles))
    return {c: equal_width_edges(np.array([lo, hi]) if lo <= hi else np.zeros(0), bins)
            for c, (lo, hi) in bounds.items()}


def backend_bins(data: Any, columns: Sequence[str], bins: int, binning: str,
                 roles: Sequence[str] = ("original",)) -> dict[str, np.ndarray]:
    """The inner edges :func:`column_codes` cuts ``columns`` at (``binning`` equal_width or
    quantile, from the ``roles`` pooled), asked of a backend (its bounds and quantiles), for
    :meth:`Backend.key_rows <synthguard.engine.backend.Backend.key_rows>`'s ``bins``: the same
    bins in one process and on a cluster."""
    if binning != "quantile":
        return continuous_bins(data, columns, bins, roles)
    if not columns:
        return {}
    if bins <= 1:
        return {c: np.zeros(0) for c in columns}
    qs = data.quantiles(list(columns), tuple(roles), np.arange(1, bins) / bins)
    top = data.bounds(list(columns), tuple(roles))
    out = {}
    for c in columns:  # loop over columns
        out[c] = merged_edges(qs[c], top[c][1])
    return out


def evidence_roles(ctx: Context) -> tuple[str, ...]:
    """The real tables whose pooled values give label-free bins and ranges: original AND control
    when the run has a control (so a record's bin does not depend on which side it is on), else
    the original alone."""
    return ("original", "control") if has_control(ctx) else ("original",)


def columns_to_bin(ctx: Context, columns: Sequence[str], max_distinct: int = 20) -> list[str]:
    """The numerical and datetime ``columns`` with more than ``max_distinct`` distinct values in
    the real tables (original and control pooled, :func:`evidence_roles`): exact values of such
    columns make almost every record unique."""
    schema = ctx.tables.schema
    out = []
    for c in columns:  # loop over columns
        if schema.sdtype(c) not in ("numerical", "datetime"):
            continue
        vals = pd.concat([ctx.tables.get(r)[c] for r in evidence_roles(ctx)], ignore_index=True)
        if vals.nunique(dropna=True) > max_distinct:
            out.append(c)
    return out


def rare_records(codes: dict[str, np.ndarray], roles: Sequence[str] = ("original", "control")) -> dict[str, np.ndarray]:
    """Per real record: whether its key (the columns of ``codes``) is unique among the real records
    of ``roles`` pooled (label-free: the same answer whichever side a record is on). A copy of such
    a record is a leak of type ``"rare"``."""
    present = [r for r in roles if r in codes]
    ids = joint_ids(*[codes[r] for r in present])
    n_ids = int(max(int(i.max(initial=-1)) for i in ids)) + 1
    size = sum(np.bincount(i, minlength=n_ids) for i in ids)
    return {r: size[i] == 1 for r, i in zip(present, ids, strict=True)}


_raw_numeric = raw_numeric  # datetimes as int64 nanoseconds (one definition: engine.backend)


def column_codes(ctx: Context, columns: Sequence[str], roles: Sequence[str], *,
                 continuous: Sequence[str] = (), bins: int = 10,
                 frames: dict[str, pd.DataFrame] | None = None,
                 binning: str = "equal_width",
                 edges_from: Sequence[str] = ("original",)) -> dict[str, np.ndarray]:
    """int64 codes ``(n_role, len(columns))`` per role; equal values get equal codes in every role.

    Columns are compared by exact value (numerical columns too) with missing as its own category
    (code ``-1``). Columns in ``continuous`` are first cut into ``bins`` equal-width bins whose edges
    come from the tables ``edges_from`` pooled (default the original, SDMetrics' rule; the
    members-vs-control tests pass :func:`evidence_roles`, original AND control, so bins are
    label-free) (outer bins open-ended), missing kept as ``-1``; ``binning="quantile"`` uses the
    pooled quantiles instead (:func:`quantile_edges`).
    ``frames`` replaces the tables of some roles (e.g. subsamples) by other frames.
    """
    frames = frames or {}
    out = {r: np.empty((len(frames[r]) if r in frames else len(ctx.tables.get(r)), len(columns)),
                       dtype=np.int64) for r in roles}
    exact = [c for c in columns if c not in set(continuous)]
    for r in roles:
        if exact:
            if r in frames:
                block = ctx.encoded.encode(frames[r], exact, categorical_only=True)
            else:
                block = ctx.encoded.block(r, exact, categorical_only=True)
            for j, c in enumerate(columns):
                if c in exact:
                    out[r][:, j] = block.cat[:, list(block.cat_columns).index(c)]
    for j, c in enumerate(columns):
        if c not in set(continuous):
            continue
        edges = quantile_edges if binning == "quantile" else equal_width_edges
        pooled = np.concatenate([_raw_numeric(ctx.tables.get(r)[c]) for r in edges_from])
        inner = edges(pooled, bins)
        for r in roles:
            vals = _raw_numeric(frames[r][c] if r in frames else ctx.tables.get(r)[c])
            codes = np.searchsorted(inner, vals, side="left").astype(np.int64)
            codes[np.isnan(vals)] = -1
            out[r][:, j] = codes
    return out


def joint_ids(*codes: np.ndarray) -> list[np.ndarray]:
    """Dense ids of the rows of several code matrices (same columns): equal rows, equal ids."""
    blocks = [Block(np.zeros((c.shape[0], 0)), np.ascontiguousarray(c, dtype=np.int64), (),
                    tuple(f"c{j}" for j in range(c.shape[1]))) for c in codes]
    if codes[0].shape[1] == 0:
        return [np.zeros(c.shape[0], dtype=np.int64) for c in codes]
    return row_identities(*blocks)


def nunique_codes(codes: np.ndarray) -> list[int]:
    """Number of distinct codes (missing counted as one category) per column."""
    return [int(np.unique(codes[:, j]).size) for j in range(codes.shape[1])]


def top_records(scores: np.ndarray, limit: int, make: Any, *, largest: bool = True) -> list[dict]:
    """Records of the ``limit`` rows with the largest (or smallest) ``scores`` (NaN never listed),
    ties by row order; ``make(rows)`` builds the record dicts."""
    if limit <= 0:
        return []
    ok = np.flatnonzero(~np.isnan(scores))
    if ok.size == 0:
        return []
    key = -scores[ok] if largest else scores[ok]
    order = ok[np.lexsort((ok, key))][:limit]
    return make(order)
