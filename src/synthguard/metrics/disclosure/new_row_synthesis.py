"""SDMetrics' ``NewRowSynthesis``: the share of synthetic rows that match no original row.

A synthetic row matches an original row when every categorical/boolean value is equal (missing
equal to missing) and every numerical/datetime value is within the tolerance (missing matches
missing only). Default tolerance: ``|o - s| <= numerical_match_tolerance * range`` with the
original column's range; ``sdmetrics_compat=True`` uses SDMetrics' ``|o - s| <= |tol * s|``
(relative to the synthetic value: exact at 0, about six months for 2020 datetimes).

Vectorised (:func:`~synthguard.engine.backend.match_rows`): a join on the categorical values (plus
the missing pattern of the numeric columns), then, inside each group, a sorted sweep on the most
selective numeric column gives each synthetic row a window of candidates whose remaining columns
are checked in bounded chunks. The metric asks its backend (``ctx.data.rows_matched``), so it runs
in one process or on a cluster (the release and original partitions matched pair by pair) with
the same answers.
"""

from __future__ import annotations

import numpy as np

from ...core.results import Baseline, Evidence, MetricResult, RecordFlags
from ...engine.backend import match_rows
from ...registry import LEVEL_FROM_THRESHOLDS, Context, Param, RecordsCard, register
from ...stats import wilson_interval
from ._common import evidence_roles, has_control
from ._dcr import dcr_columns, subsample

__all__ = ["new_row_synthesis", "match_rows"]

@register("new_row_synthesis", family="disclosure", direction="higher is safer",
          queries="release",
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
          backend="any",
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
        Synthetic rows drawn with ``ctx.rng`` before matching (default: all, or a sampled run's
        release rows as queries, :meth:`~synthguard.registry.Context.release_query_rows`, for
        the headline only: the evidence's real records are matched against the whole release).
    sdmetrics_compat : bool
        SDMetrics' tolerance rule.
    max_records : int
        Matched synthetic rows listed in ``records``.
    """
    cols = dcr_columns(ctx)
    data = ctx.data  # one process or a cluster: the same answers (Backend.rows_matched)
    n_all = data.n_rows("synthetic")
    rows = subsample(n_all, synthetic_sample_size, ctx.rng("synthetic-sample"))
    sample = rows if rows.size != n_all else None
    # the evidence asks every real record against the release the headline asks of: a user's
    # subsample, else the whole release (a sampled run's release queries are the headline's only)
    release = sample
    if sample is None and ctx.release_query_rows() is not None:
        rows = sample = ctx.release_query_rows()
    tol = float(numerical_match_tolerance)
    if sdmetrics_compat:
        matched = data.rows_matched("synthetic", "original", cols, np.asarray(tol), relative=True,
                                    query_rows=sample)
    else:
        scale = data.ranges(cols, ("original",))
        matched = data.rows_matched("synthetic", "original", cols, tol * scale, query_rows=sample)
    evidence = _evidence(ctx, cols, tol, sdmetrics_compat, release) if has_control(ctx) else None
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


def _evidence(ctx: Context, cols: list[str], tol: float, sdmetrics_compat: bool,
              sample: np.ndarray | None) -> Evidence:
    """Training rows "reproduced" by the release against control rows, under the same rule.

    Per real record (training or control): does at least one synthetic row match it (categorical
    values equal, numeric values within the tolerance of the column's range over the original
    AND control rows pooled, so the rule does not depend on a record's label; with
    ``sdmetrics_compat`` within ``|tol * v|`` of the record's own value ``v``)? Per-record flags
    over every training and every control record against the same synthetic rows: size-free.
    An exact copy of any record in the release matches it (``responds["exact"]`` is every
    record; ``"rare"``: the records unique on the metadata's quasi-identifiers among the real rows
    pooled, when it declares some). When the release was subsampled (``synthetic_sample_size``,
    ``sample`` its rows) a copy may fall outside the sample: the test then claims to see no leak
    type in full (it can still raise an alarm). Every count is asked of the backend.
    """
    data = ctx.data
    t = np.asarray(tol) if sdmetrics_compat else tol * data.ranges(cols, evidence_roles(ctx))
    hit_m, hit_c = (data.rows_matched(role, "synthetic", cols, t, relative=sdmetrics_compat,
                                      reference_rows=sample) for role in ("original", "control"))
    exact = np.ones(hit_m.size, dtype=bool)
    responds = {"exact": exact}
    sees: tuple[str, ...] = ("exact",)
    qis = [c for c in ctx.tables.schema.quasi_identifiers if c in ctx.tables.schema.columns]
    if qis:
        # key unique among the real records pooled (training and control)
        responds["rare"] = data.key_rows("original", {"real": (qis, ("original", "control"))}).flags(
            rare=lambda f: f["real"].to_numpy() == 1)["rare"]
        sees = ("exact", "rare")
    note = None
    if sample is not None:
        sees = ()
        note = "release subsampled (synthetic_sample_size): a copied record may fall outside the sample"
    return Evidence.from_flags(
        "share of real records matched by at least one synthetic row (categorical values equal, "
        "numeric values within the tolerance): records the release reproduces",
        RecordFlags(hit_m, hit_c, responds), sees=sees, risk="presence", note=note,
        baseline="control rows (never trained on) matched against the same synthetic rows")
