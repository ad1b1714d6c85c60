"""SDMetrics' ``NewRowSynthesis``: the share of synthetic rows that match no original row.

A synthetic row matches an original row when every categorical/boolean value is equal (missing
equal to missing) and every numerical/datetime value is within the tolerance (missing matches
missing only). Default tolerance: ``|o - s| <= numerical_match_tolerance * range`` with the
original column's range; ``sdmetrics_compat=True`` uses SDMetrics' ``|o - s| <= |tol * s|``
(relative to the synthetic value: exact at 0, about six months for 2020 datetimes).

Vectorised: a join on the categorical values (plus the missing pattern of the numeric columns),
then, inside each group, a sorted sweep on the most selective numeric column gives each synthetic
row a window of candidates whose remaining columns are checked in bounded chunks.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.results import Baseline, Evidence, MetricResult, RecordFlags
from ...registry import LEVEL_FROM_THRESHOLDS, Context, Param, RecordsCard, register
from ...stats import wilson_interval
from ._common import (
    column_codes,
    evidence_roles,
    has_control,
    joint_ids,
    rare_records,
)
from ._dcr import dcr_columns, subsample

__all__ = ["new_row_synthesis", "match_rows"]

_MAX_PAIRS = 4_000_000


def match_rows(real_num: np.ndarray, real_cat: np.ndarray, syn_num: np.ndarray, syn_cat: np.ndarray,
               tol: np.ndarray | float, *, relative_to_synthetic: bool = False) -> np.ndarray:
    """Whether each synthetic row matches at least one original row.

    Parameters
    ----------
    real_num, syn_num : ndarray of float, shape (n, p) / (m, p)
        Numeric columns (NaN = missing).
    real_cat, syn_cat : ndarray of int64, shape (n, q) / (m, q)
        Categorical codes from shared vocabularies.
    tol : float or ndarray of shape (p,)
        Absolute tolerance per numeric column, or (``relative_to_synthetic``) the relative factor
        applied to each synthetic value: ``|o - s| <= |tol * s|``.
    """
    m, p = syn_num.shape
    # join key: categorical codes + missing pattern of the numeric columns
    rk = np.concatenate([real_cat, np.isnan(real_num).astype(np.int64)], axis=1)
    sk = np.concatenate([syn_cat, np.isnan(syn_num).astype(np.int64)], axis=1)
    rg, sg = joint_ids(rk, sk)
    if p == 0:
        return np.isin(sg, rg)
    tol = np.broadcast_to(np.asarray(tol, dtype=float), (p,))

    def allowed(s: np.ndarray, j: int) -> np.ndarray:
        return np.abs(tol[j] * s) if relative_to_synthetic else np.full(s.shape, tol[j])

    # pivot: the numeric column with the most distinct original values (narrowest windows)
    pivot = int(np.argmax([np.unique(real_num[:, j][~np.isnan(real_num[:, j])]).size for j in range(p)]))
    rv = np.where(np.isnan(real_num[:, pivot]), 0.0, real_num[:, pivot])
    sv = np.where(np.isnan(syn_num[:, pivot]), 0.0, syn_num[:, pivot])
    order = np.lexsort((rv, rg))
    rg_s, rv_s = rg[order], rv[order]
    width = allowed(sv, pivot) * (1 + 1e-9) + 1e-300
    width = np.where(np.isnan(syn_num[:, pivot]), 0.0, width)
    lo = _merge_rank(rg_s, rv_s, sg, sv - width, strict=True)
    hi = _merge_rank(rg_s, rv_s, sg, sv + width, strict=False)
    counts = np.maximum(hi - lo, 0)
    matched = np.zeros(m, dtype=bool)
    cand_rows = np.flatnonzero(counts > 0)
    if cand_rows.size == 0:
        return matched
    csum = np.cumsum(counts[cand_rows])
    start = 0
    while start < cand_rows.size:  # loop over chunks of bounded candidate pairs
        base = csum[start - 1] if start else 0
        stop = int(np.searchsorted(csum, base + _MAX_PAIRS, side="right"))
        stop = max(stop, start + 1)
        rows = cand_rows[start:stop]
        reps = counts[rows]
        owner = np.repeat(rows, reps)
        offs = np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps)
        cand = order[np.repeat(lo[rows], reps) + offs]
        ok = np.ones(owner.size, dtype=bool)
        for j in range(p):  # loop over numeric columns
            s = syn_num[owner, j]
            r = real_num[cand, j]
            with np.errstate(invalid="ignore"):
                close = np.abs(r - s) <= allowed(s, j)
            ok &= close | (np.isnan(s) & np.isnan(r))
        matched[owner[ok]] = True
        start = stop
    return matched


def _merge_rank(groups: np.ndarray, values: np.ndarray, q_groups: np.ndarray, q_values: np.ndarray, *,
                strict: bool) -> np.ndarray:
    """Per query, how many (group, value)-sorted rows come before it: rows with a smaller group, or
    the same group and a value ``< q`` (``strict``) / ``<= q``. One merged sort, no per-group loop."""
    n, m = groups.size, q_groups.size
    g = np.concatenate([groups, q_groups])
    v = np.concatenate([values, q_values])
    # tie order within equal (group, value): strict -> queries first; else rows first
    kind = np.concatenate([np.ones(n, np.int8), np.zeros(m, np.int8)]) if strict else \
        np.concatenate([np.zeros(n, np.int8), np.ones(m, np.int8)])
    order = np.lexsort((kind, v, g))
    is_row = order < n
    rows_before = np.cumsum(is_row) - is_row
    out = np.empty(m, dtype=np.int64)
    q_pos = ~is_row
    out[order[q_pos] - n] = rows_before[q_pos]
    return out


@register("new_row_synthesis", family="disclosure", direction="higher is safer",
          params=[
              Param("numerical_match_tolerance", 0.01, "numeric values within this share of the original "
                    "column's range match (SDMetrics: of the synthetic value)", "non-negative float"),
              Param("synthetic_sample_size", None, "synthetic rows drawn (seeded) before matching; "
                    "None = all", "positive int"),
              Param("sdmetrics_compat", False, "tolerance relative to the synthetic value as in SDMetrics "
                    "0.32 (|o - s| <= |tol * s|)", bool),
              Param("max_records", 100, "how many matched synthetic rows to list (0 = none)", "non-negative int"),
          ],
          thresholds={"medium": 0.95, "high": 0.8}, aliases=("newrowsynthesis",),
          description="share of synthetic rows that match no original row (categorical values equal, "
                      "numeric values within the tolerance); 1 = every row is new",
          risk='presence',
          knowledge="a person's full record; looks for it among the release rows",
          sees=('exact', 'rare'),
          presets=('quick', 'privacy', 'full'),
          order=70,
          records=RecordsCard(reason=lambda rec: "release row matching a training row (numeric values within the tolerance)", meaning="a release row matching a training row"),
          explainer=("SDMetrics' NewRowSynthesis: the share of release rows that do not match a real "
                     'row; here also per real record, training against held-out people.'))
def new_row_synthesis(ctx: Context, *, numerical_match_tolerance: float = 0.01,
                      synthetic_sample_size: int | None = None, sdmetrics_compat: bool = False,
                      max_records: int = 100) -> MetricResult:
    """SDMetrics' ``NewRowSynthesis`` (``score``, ``num_new_rows``, ``num_matched_rows``).

    Parameters
    ----------
    ctx : Context
        Evaluation context.
    numerical_match_tolerance : float
        Tolerance share (of the original column's range; of the synthetic value with
        ``sdmetrics_compat``).
    synthetic_sample_size : int, optional
        Synthetic rows drawn with ``ctx.rng`` before matching (default: all).
    sdmetrics_compat : bool
        SDMetrics' tolerance rule.
    max_records : int
        Matched synthetic rows listed in ``records``.
    """
    cols = dcr_columns(ctx)
    real = ctx.encoded.block("original", cols)
    syn = ctx.encoded.block("synthetic", cols)
    n_all = syn.n_rows
    rows = subsample(n_all, synthetic_sample_size, ctx.rng("synthetic-sample"))
    if rows.size != n_all:
        syn = syn.take(rows)
    tol = float(numerical_match_tolerance)
    if sdmetrics_compat:
        matched = match_rows(real.num, real.cat, syn.num, syn.cat, tol, relative_to_synthetic=True)
    else:
        scale = ctx.encoded.ranges(list(real.num_columns), ("original",))
        matched = match_rows(real.num, real.cat, syn.num, syn.cat, tol * scale)
    evidence = _evidence(ctx, cols, real, syn, tol, sdmetrics_compat,
                         subsampled=rows.size != n_all) if has_control(ctx) else None
    n = int(matched.size)
    n_match = int(matched.sum())
    score = (n - n_match) / n
    lo, hi = wilson_interval(n - n_match, n)
    level = "not meaningful" if n_match == 0 else LEVEL_FROM_THRESHOLDS
    warning = None if n_match else ("no synthetic row matches an original row within the tolerance: "
                                    "no copying is measurable (near-copies may still exist: see the DCR metrics)")
    recs = [{"synthetic_row": int(rows[i])} for i in np.flatnonzero(matched)[:max_records]]
    details = {"score": score, "num_new_rows": n - n_match, "num_matched_rows": n_match,
               "numerical_match_tolerance": tol,
               "tolerance_relative_to": "synthetic value (SDMetrics)" if sdmetrics_compat else
               "original column range", "columns": cols, "synthetic_sample_size": synthetic_sample_size}
    return MetricResult(name="new_row_synthesis", family="disclosure", value=score,
                        direction="higher is safer",
                        baseline=Baseline(1.0, "every synthetic row is new (no original row within the tolerance)"),
                        ci=(lo, hi), n=n, risk_level=level, warning=warning, details=details, records=recs,
                        evidence=evidence)


def _evidence(ctx: Context, cols: list[str], real: Any, syn: Any, tol: float,
              sdmetrics_compat: bool, *, subsampled: bool = False) -> Evidence:
    """Training rows "reproduced" by the release against control rows, under the same rule.

    Per real record (training or control): does at least one synthetic row match it (categorical
    values equal, numeric values within the tolerance of the column's range over the original
    AND control rows pooled, so the rule does not depend on a record's label; with
    ``sdmetrics_compat`` within ``|tol * v|`` of the record's own value ``v``)? Per-record flags
    over every training and every control record against the same synthetic rows: size-free.
    An exact copy of any record in the release matches it (``responds["exact"]`` is every
    record; ``"rare"``: the records unique on the metadata's quasi-identifiers among the real rows
    pooled, when it declares some). When the release was subsampled (``synthetic_sample_size``)
    a copy may fall outside the sample: the test then claims to see no leak type in full (it can
    still raise an alarm).
    """
    ctl = ctx.encoded.block("control", cols)
    if sdmetrics_compat:
        hit_m = match_rows(syn.num, syn.cat, real.num, real.cat, tol, relative_to_synthetic=True)
        hit_c = match_rows(syn.num, syn.cat, ctl.num, ctl.cat, tol, relative_to_synthetic=True)
    else:
        scale = ctx.encoded.ranges(list(real.num_columns), evidence_roles(ctx))
        hit_m = match_rows(syn.num, syn.cat, real.num, real.cat, tol * scale)
        hit_c = match_rows(syn.num, syn.cat, ctl.num, ctl.cat, tol * scale)
    exact = np.ones(hit_m.size, dtype=bool)
    responds = {"exact": exact}
    sees: tuple[str, ...] = ("exact",)
    qis = [c for c in ctx.tables.schema.quasi_identifiers if c in ctx.tables.schema.columns]
    if qis:
        codes = column_codes(ctx, qis, ("original", "control"))
        responds["rare"] = rare_records(codes)["original"]
        sees = ("exact", "rare")
    note = None
    if subsampled:
        sees = ()
        note = "release subsampled (synthetic_sample_size): a copied record may fall outside the sample"
    return Evidence.from_flags(
        "share of real records matched by at least one synthetic row (categorical values equal, "
        "numeric values within the tolerance): records the release reproduces",
        RecordFlags(hit_m, hit_c, responds), sees=sees, risk="presence", note=note,
        baseline="control rows (never trained on) matched against the same synthetic rows")
