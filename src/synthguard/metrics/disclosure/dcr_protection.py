"""SDMetrics' ``DCRBaselineProtection`` and ``DCROverfittingProtection`` on the shared distance engine.

DCR (distance to closest record) of a row = the smallest mean-over-columns distance to a reference
row, numeric differences divided by the reference's range and capped at 1 (see :mod:`._dcr`).

* ``dcr_baseline_protection``: ``min(median DCR(synthetic -> original) / median DCR(random ->
  original), 1)`` with random rows drawn uniformly within the original's values.
* ``dcr_overfitting_protection``: ``p`` = share of synthetic rows strictly closer to the original
  (training) rows than to the control (holdout) rows; ``score = min(2 (1 - p), 1)``.

Full data by default; ``num_rows_subsample`` draws (seeded, without replacement) query rows only,
never the reference (SDMetrics also subsamples the reference, which biases DCR upwards, issue #934).

The random baseline only needs a *median*, and uniformly random rows are the worst case of the
neighbour search (nothing is near them, so the tree prunes little: the search is close to brute
force, quadratic in n). With more synthetic rows than ``random_rows`` (default 10 000) the median is
therefore estimated from a seeded sample of random rows, searched in batches of 1 000, 2 000, 4 000...
until the distribution-free 95 % interval of the median (:func:`synthguard.stats.median_ci`) is
within ``random_precision`` (default 2 %) of the median on either side, or ``random_rows`` rows are
used. That interval is reported (``median_ci``, ``n_random``) and enters the score's CI.
``random_rows=None`` is SDMetrics' full computation (one random row per synthetic row); with at most
``random_rows`` synthetic rows both are the same computation.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...core.format import fmt_number
from ...core.results import Baseline, Evidence, MetricResult
from ...engine.neighbors import Neighbors
from ...errors import ConfigError
from ...registry import LEVEL_FROM_THRESHOLDS, Context, Param, RecordsCard, register
from ...stats import median_ci, wilson_rate
from ._common import has_control
from ._dcr import (
    dcr_columns,
    dcr_metric,
    dcr_scale,
    nearest_rows,
    random_baseline_frame,
    subsample,
)

__all__ = ["dcr_baseline_protection", "dcr_overfitting_protection", "median_ci"]


def _subsample_params() -> list[Param]:
    return [
        Param("num_rows_subsample", None, "query rows (synthetic / random) drawn per iteration; "
              "None = all rows (the reference is never subsampled)", "positive int"),
        Param("num_iterations", 1, "number of subsamples averaged (only with num_rows_subsample)", "positive int"),
        Param("max_records", 100, "how many synthetic rows closest to the original to list (0 = none)",
              "non-negative int"),
    ]


def _blocks(ctx: Context):
    cols = dcr_columns(ctx)
    scale = dcr_scale(ctx, cols)
    return cols, scale


def _syn_to(ctx: Context, reference: str, cols: list[str], scale: np.ndarray,
            shareable: tuple[str, ...] = ("dcr", "nndr")) -> Neighbors:
    """Nearest ``reference`` row of every synthetic row (memoised: shared by both DCR metrics),
    or of a sampled run's release rows as queries (:func:`_release_rows`).

    When a metric in ``shareable`` runs too and searches the same pair with the same distance
    (``dcr``/``nndr``: k=2, whose first column is the k=1 answer, ties to the lower index), that
    search is reused instead of a second one. Those metrics hold datetimes in days: the distances
    are the same to the last bit only when every datetime value of the pair is a whole day (then
    both units hold every difference and range exactly), so only then is the search shared."""
    if set(shareable) & set(ctx.run_metrics) and _whole_days(ctx, cols, ("synthetic", reference)):
        from ..privacy.distance import distance_setup, shared_neighbours

        d_cols, d_metric = distance_setup(ctx)
        days_scale = ctx.data.ranges(cols, ("original",))
        if list(d_cols) == list(cols) and np.array_equal(np.asarray(d_metric.scale), days_scale):
            d, i = shared_neighbours(ctx, "synthetic", reference, 1)
            return Neighbors(d, i)
    key = (f"disclosure.dcr.synthetic->{reference}", tuple(cols))
    return ctx.memo(key, lambda: nearest_rows(ctx, "synthetic", reference, cols, scale,
                                              ctx.release_query_rows()))


def _whole_days(ctx: Context, cols: list[str], roles: tuple[str, ...]) -> bool:
    """Every datetime value among ``cols`` in the tables ``roles`` is midnight (no datetime: True),
    asked of the backend (:meth:`~synthguard.engine.backend.Backend.value_summaries`: one process
    or a cluster, the same answer)."""
    dates = [c for c in cols if ctx.tables.schema.sdtype(c) == "datetime"]
    if not dates:
        return True

    def compute() -> bool:
        for role in roles:  # two tables
            got = ctx.data.value_summaries(role, dates)
            if not all(got[c]["whole_days"] for c in dates):
                return False
        return True

    # asked by both DCR metrics for each of their searches: once a run (a pass over partitions)
    return ctx.memo(("disclosure.dcr.whole_days", tuple(dates), tuple(roles)), compute)


def _release_rows(ctx: Context) -> np.ndarray:
    """The release rows the DCR metrics ask of without ``num_rows_subsample``: every row, or a
    sampled run's release rows as queries
    (:meth:`~synthguard.registry.Context.release_query_rows`), sorted canonical positions."""
    rows = ctx.release_query_rows()
    return np.arange(ctx.data.n_rows("synthetic")) if rows is None else rows


def _syn_to_original(ctx: Context, cols: list[str], scale: np.ndarray) -> Neighbors:
    return _syn_to(ctx, "original", cols, scale)


RANDOM_ROWS = 10_000
RANDOM_PRECISION = 0.02
_FIRST_BATCH = 1_000


def _random_dcr(ctx: Context, frame: pd.DataFrame, cols: list[str], scale: np.ndarray) -> np.ndarray:
    """DCR of the rows of ``frame`` (random rows of the driver) to the original, asked of the
    backend (:meth:`~synthguard.engine.backend.Backend.kneighbors_frame_seconds`)."""
    return ctx.data.kneighbors_frame_seconds(frame, "original", cols, dcr_metric(scale), 1)[0][:, 0]


def _random_baseline_dcr(ctx: Context, frame: pd.DataFrame, cols: list[str], scale: np.ndarray, sampled: bool,
                         precision: float) -> np.ndarray:
    """DCR of the random rows: all of them, or (``sampled``) the first 1 000, 2 000, 4 000... until
    the median's CI is within ``precision`` of the median (each row's DCR does not depend on the
    others, so this equals searching the final prefix at once)."""
    n = len(frame)
    if not sampled or n <= _FIRST_BATCH:
        return _random_dcr(ctx, frame, cols, scale)
    parts: list[np.ndarray] = []
    done, size = 0, _FIRST_BATCH
    while done < n:
        stop = min(n, max(size, done))
        parts.append(_random_dcr(ctx, frame.iloc[done:stop].reset_index(drop=True), cols, scale))
        done, size = stop, 2 * stop
        d = np.concatenate(parts)
        med = float(np.median(d))
        lo, hi = median_ci(d)
        if med > 0 and max(med - lo, hi - med) <= precision * med:
            break
    return np.concatenate(parts)


def _baseline_reason(rec: Any) -> str:
    """Why a ``dcr_baseline_protection`` record is listed (its card's reason)."""
    return f"distance {fmt_number(rec.get('dcr'))} to the closest training row"


def _overfitting_reason(rec: Any) -> str:
    """Why a ``dcr_overfitting_protection`` record is listed (its card's reason)."""
    return (f"closer to a training row ({fmt_number(rec.get('dcr_training'))}) than to any held-out "
            f"row ({fmt_number(rec.get('dcr_holdout'))})")


@register("dcr_baseline_protection", family="disclosure", direction="higher is safer",
          queries="release",
          params=[*_subsample_params(),
                  Param("random_rows", RANDOM_ROWS, "uniformly random rows whose DCR estimates the baseline "
                        "median (seeded; its CI is reported); None = one per synthetic row (SDMetrics' "
                        "full computation)", "positive int", nullable=True),
                  Param("random_precision", RANDOM_PRECISION, "stop adding random rows once the 95 % CI "
                        "of their median DCR is within this fraction of it (when sampling)", "probability"),
                  Param("integer_columns", None, "numerical columns whose random values are whole "
                        "numbers (None = those whose original values are all whole; the SDMetrics "
                        "facade passes the integer-dtype columns, SDMetrics' rule)", (list, tuple))], thresholds={"medium": 0.3, "high": 0.1},
          aliases=("dcrbaselineprotection",),
          description="median distance of synthetic rows to their closest original row, relative to "
                      "that of uniformly random rows (1 = synthetic rows no closer than random ones); "
                      "informative only: uniform random rows are no privacy baseline, so it does not "
                      "drive the verdict",
          risk='presence',
          knowledge=("a person's full record; compares its distance to the closest release row with "
                     "random data's"),
          presets=('privacy', 'full'),
          order=170,
          records=RecordsCard(verbatim="dcr", reason=_baseline_reason, meaning="a release row and its distance to the closest training row (0: a verbatim copy)"),
          backend="any",
          warmup=True,
          explainer=("SDMetrics' DCRBaselineProtection: the release's median distance to the real data "
                     "against random data's."))
def dcr_baseline_protection(ctx: Context, *, num_rows_subsample: int | None = None,
                            num_iterations: int = 1, max_records: int = 100,
                            random_rows: int | None = RANDOM_ROWS,
                            random_precision: float = RANDOM_PRECISION,
                            integer_columns: list[str] | None = None) -> MetricResult:
    """SDMetrics' ``DCRBaselineProtection``.

    Informative only: it states no members-vs-control evidence and reads "not assessed" under the
    calibrated rule. Any realistic generator, and any fresh sample of real people, sits much
    closer to the training rows than uniformly random rows do, so a low score says nothing about
    exposure of the training people; ``dcr_overfitting_protection`` (training vs control) does.

    Parameters
    ----------
    ctx : Context
        Evaluation context (random rows come from ``ctx.rng``).
    num_rows_subsample : int, optional
        Synthetic and random query rows per iteration (default: all).
    num_iterations : int
        Iterations averaged when subsampling.
    max_records : int
        Synthetic rows closest to the original listed in ``records``.
    random_rows : int or None
        With more synthetic rows than this, the random baseline's median is estimated from at most
        this many seeded random rows (see the module docstring; the median's CI is reported);
        ``None`` = one random row per synthetic row (SDMetrics' full computation).
    random_precision : float
        Target half-width of the random median's 95 % CI, relative to the median, when sampling.
    integer_columns : list of str, optional
        Numerical columns whose random values are drawn as whole numbers (default: those whose
        original values are all whole numbers).

    Examples
    --------
    >>> import pandas as pd
    >>> from synthguard.registry import Context, get_metric
    >>> from synthguard.run.executor import run_metric
    >>> real = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0]})
    >>> ctx = Context.from_frames(real, real.copy())
    >>> spec = get_metric("dcr_baseline_protection")
    >>> run_metric(spec, ctx.for_metric(spec), spec.resolve_params({"integer_columns": []})).value
    0.0
    """
    cols, scale = _blocks(ctx)
    tables = ctx.tables
    sdtypes = {c: tables.schema.sdtype(c) for c in cols}
    n_syn = ctx.data.n_rows("synthetic") if num_rows_subsample is not None else _release_rows(ctx).size
    n_rand = n_syn
    if num_rows_subsample is None and random_rows is not None:
        n_rand = min(int(random_rows), n_syn)
    unknown = sorted(set(integer_columns or ()) - set(cols))
    if unknown:
        raise ConfigError(f"metric 'dcr_baseline_protection': integer_columns names {unknown}, which are "
                          f"not among the compared columns {cols}; name numerical columns of the data")
    # the random rows are drawn on the driver within the original's values (a summary per column,
    # asked of the backend), then searched against the original like release rows
    random_frame = random_baseline_frame(ctx.data.value_summaries("original", cols), cols, sdtypes, n_rand,
                                         ctx.rng("random-baseline"), integer_columns)
    iterations = 1 if num_rows_subsample is None else int(num_iterations)
    rng = ctx.rng("subsample")
    med_s, med_r, scores = [], [], []
    d_syn_all = d_rand_all = None
    for _ in range(iterations):  # loop over iterations
        if num_rows_subsample is None:
            nb = _syn_to_original(ctx, cols, scale)
            d_syn, idx_syn = nb.distances[:, 0], nb.indices[:, 0]
            d_rand = _random_baseline_dcr(ctx, random_frame, cols, scale, n_rand < n_syn,
                                          float(random_precision))
            rows_syn = _release_rows(ctx)
        else:
            rows_syn = subsample(n_syn, num_rows_subsample, rng)
            rows_rand = subsample(n_rand, num_rows_subsample, rng)
            nb = nearest_rows(ctx, "synthetic", "original", cols, scale, rows_syn)
            d_syn, idx_syn = nb.distances[:, 0], nb.indices[:, 0]
            d_rand = _random_dcr(ctx, random_frame.iloc[rows_rand].reset_index(drop=True), cols, scale)
        ms, mr = float(np.median(d_syn)), float(np.median(d_rand))
        med_s.append(ms)
        med_r.append(mr)
        scores.append(min(ms / mr, 1.0) if mr > 0 else float("nan"))
        d_syn_all, d_rand_all = d_syn, d_rand
    ms, mr = float(np.mean(med_s)), float(np.mean(med_r))
    score = float(np.mean(scores)) if sum(med_r) > 0 else float("nan")
    lo_s, hi_s = median_ci(d_syn_all)
    lo_r, hi_r = median_ci(d_rand_all)
    ci = None
    if iterations == 1 and lo_r > 0 and np.isfinite(score):
        ci = (min(lo_s / hi_r, 1.0), min(hi_s / lo_r, 1.0))
    warning = None
    if not np.isfinite(score):
        level = "unknown"
        warning = "the median distance of the random rows is 0 (the original data is nearly constant)"
    elif ci is not None and ci[1] >= 1.0 or score >= 1.0:
        level = "not meaningful"
        warning = ("synthetic rows are not measurably closer to the original rows than uniformly random "
                   "rows are: no closeness-based disclosure is measurable")
    else:
        level = LEVEL_FROM_THRESHOLDS
    order = np.lexsort((np.arange(d_syn_all.size), d_syn_all))[:max_records]
    recs = [{"synthetic_row": int(rows_syn[i]), "dcr": float(d_syn_all[i]),
             "nearest_original_row": int(idx_syn[i])} for i in order]
    details: dict[str, Any] = {
        "score": score,
        "median_DCR_to_real_data": {"synthetic_data": ms, "random_data_baseline": mr},
        "median_ci": {"synthetic_data": [lo_s, hi_s], "random_data_baseline": [lo_r, hi_r]},
        "share_exact_copies": float(np.mean(d_syn_all == 0)),
        "dcr_quantiles": {q: {"synthetic_data": float(np.quantile(d_syn_all, float(q))),
                              "random_data_baseline": float(np.quantile(d_rand_all, float(q)))}
                          for q in ("0.01", "0.05", "0.25", "0.5")},
        "columns": cols,
        "num_rows_subsample": num_rows_subsample,
        "num_iterations": iterations,
        "n_synthetic": int(d_syn_all.size),
        "n_random": int(d_rand_all.size),
        "verdict_role": "informative: uniform random rows are no privacy baseline (real people the "
                        "generator never saw sit as close); see dcr_overfitting_protection",
        "random_baseline_sample": ("all: one random row per synthetic row" if n_rand == n_syn else
                                   f"{d_rand_all.size} seeded random rows (at most {n_rand}), until the "
                                   f"median's 95 % CI was within {random_precision:.0%} of it"),
    }
    return MetricResult(name="dcr_baseline_protection", family="disclosure", value=score,
                        direction="higher is safer",
                        baseline=Baseline(1.0, "uniformly random rows within the original's values "
                                               f"(median DCR {mr:.6g}); score = synthetic / random median"),
                        ci=ci, n=int(d_syn_all.size), risk_level=level, warning=warning, details=details,
                        records=recs)


@register("dcr_overfitting_protection", family="disclosure", direction="higher is safer",
          queries="release",
          needs=("original", "synthetic", "control"),
          params=[*_subsample_params(),
                  Param("sdmetrics_compat", False, "normalise distances to the control by the control's "
                        "own ranges, as SDMetrics 0.32 does (default: the original's ranges for both)", bool)],
          thresholds={"medium": 0.9, "high": 0.6}, aliases=("dcroverfittingprotection",),
          description="min(2 x share of synthetic rows not closer to the original (training) rows than to "
                      "the control (holdout) rows, 1); 1 = no sign of memorisation",
          risk='presence',
          knowledge="a person's full record; compares distances to training and held-out rows",
          presets=('privacy', 'full'),
          order=180,
          records=RecordsCard(reason=_overfitting_reason, meaning="a release row closer to a training row than to any held-out row"),
          backend="any",
          warmup=True,
          explainer=("SDMetrics' DCROverfittingProtection: the share of release rows closer to "
                     'training than to held-out rows; per record, training against held-out people.'))
def dcr_overfitting_protection(ctx: Context, *, num_rows_subsample: int | None = None,
                               num_iterations: int = 1, max_records: int = 100,
                               sdmetrics_compat: bool = False) -> MetricResult:
    """SDMetrics' ``DCROverfittingProtection``; the holdout is the ``control`` table.

    Both distance sets use the original's column ranges (one metric for both sides); SDMetrics
    normalises the holdout distances by the holdout's own ranges (``sdmetrics_compat=True``).
    See :func:`dcr_baseline_protection` for the other parameters.

    The score is a share of release rows. The evidence the verdict uses is per real record, in
    the materiality's unit: a training or control record is *won* when it is the nearest real
    record (training and control pooled, ranges from both) of at least one release row
    (:func:`won_records`); the effect is the share of training records won minus the share of
    control records won (Fisher's exact test, ``details["evidence_won_records"]``). Many copies
    of one training record win that one record; a copy of a record chance would have won anyway
    adds nothing, so a share ``f`` of copied training records moves the effect by about
    ``f x (1 - share of control records won)``.
    """
    cols, scale = _blocks(ctx)
    tables = ctx.tables
    scale_hold = dcr_scale(ctx, cols, ("control",)) if sdmetrics_compat else scale
    n_syn = ctx.data.n_rows("synthetic")
    iterations = 1 if num_rows_subsample is None else int(num_iterations)
    rng = ctx.rng("subsample")
    ps, k_tot, n_tot = [], 0, 0
    first_query: tuple[np.ndarray | None] | None = None  # the first iteration's query rows (None: all)
    for _ in range(iterations):  # loop over iterations
        if num_rows_subsample is None:  # every release row, or a sampled run's release queries
            q_rows = ctx.release_query_rows()
            rows = _release_rows(ctx)
        else:
            rows = q_rows = subsample(n_syn, num_rows_subsample, rng)
        if num_rows_subsample is None:
            nb_t = _syn_to_original(ctx, cols, scale)
        else:
            nb_t = nearest_rows(ctx, "synthetic", "original", cols, scale, q_rows)
        if num_rows_subsample is None and not sdmetrics_compat:
            # dcr searches synthetic -> whole control too when the control is the smaller table
            share = ("dcr",) if len(tables.control) <= len(tables.original) else ()
            nb_h = _syn_to(ctx, "control", cols, scale, shareable=share)
        else:
            nb_h = nearest_rows(ctx, "synthetic", "control", cols, scale_hold, q_rows)
        if first_query is None:
            first_query = (q_rows,)
        d_t, d_h = nb_t.distances[:, 0], nb_h.distances[:, 0]
        closer = d_t < d_h
        ps.append(float(closer.mean()))
        k_tot += int(closer.sum())
        n_tot += int(closer.size)
    p = float(np.mean(ps))
    score = float(np.mean([min(2 * (1 - x), 1.0) for x in ps]))
    rate = wilson_rate(k_tot, n_tot)
    lo_p, hi_p = rate.ci
    ci = (min(2 * (1 - hi_p), 1.0), min(2 * (1 - lo_p), 1.0))
    warnings = []
    if len(tables.control) < 0.5 * len(tables.original):
        warnings.append(f"the control table ({len(tables.control)} rows) is less than half the size of the "
                        f"original ({len(tables.original)} rows): synthetic rows look closer to the larger "
                        "table by chance; use a control of the same size")
    if lo_p <= 0.5:
        level = "not meaningful"
        warnings.append("synthetic rows are not measurably closer to the training rows than to the holdout "
                        "rows: no memorisation is measurable")
    else:
        level = LEVEL_FROM_THRESHOLDS
    margin = d_h - d_t
    cand = np.flatnonzero(closer)
    order = cand[np.lexsort((cand, d_t[cand], -margin[cand]))][:max_records]
    recs = [{"synthetic_row": int(rows[i]), "dcr_training": float(d_t[i]), "dcr_holdout": float(d_h[i]),
             "nearest_training_row": int(nb_t.indices[i, 0])} for i in order]
    details = {
        "score": score,
        "synthetic_data_percentages": {"closer_to_training": p, "closer_to_holdout": 1.0 - p},
        "closer_to_training_ci": [lo_p, hi_p],
        "median_DCR": {"training": float(np.median(d_t)), "holdout": float(np.median(d_h))},
        "columns": cols,
        "ranges": "original for both" if not sdmetrics_compat else "per reference (SDMetrics)",
        "num_rows_subsample": num_rows_subsample,
        "num_iterations": iterations,
        "n_training": len(tables.original),
        "n_holdout": len(tables.control),
    }
    evidence = None
    if has_control(ctx) and first_query is not None and ctx.evidence:
        evidence, details["evidence_won_records"] = _overfitting_evidence(ctx, cols, first_query[0])
    return MetricResult(name="dcr_overfitting_protection", family="disclosure", value=score,
                        direction="higher is safer",
                        baseline=Baseline(0.5, "share closer to training expected when the generator did "
                                               "not memorise (equal-size training and holdout): score 1"),
                        ci=ci, n=n_tot, risk_level=level, warning="; ".join(warnings) or None,
                        details=details, records=recs, evidence=evidence)


OVERFITTING_STATISTIC = ("share of records that are the nearest real record of at least one release "
                         "row (nearest among the training and control records pooled)")


def won_records(ctx: Context, query: np.ndarray | None, cols: list[str]) -> tuple[np.ndarray, np.ndarray, int]:
    """Which training and which control records are the nearest real record of a release row.

    Every ``query`` row (release rows at these positions; ``None``: every release row) is
    searched against the training and control records pooled, with the DCR distance and ranges
    from both tables together (so the scale does not depend on which records are training
    records), through the backend (:meth:`~synthguard.engine.backend.Backend.nearest_reached`: one
    process or a cluster). A real record is *won* when it is at the
    query row's smallest distance to any real record: a query row at the same distance from
    several real records wins all of them, and identical real records are won together. Whether
    a record is won thus depends on the pooled records and the release only, never on which of
    them are training records.

    Returns
    -------
    won_training, won_control : ndarray of bool
        Per training record and per control record.
    tied : int
        Query rows with more than one nearest real record.
    """
    metric = dcr_metric(dcr_scale(ctx, cols, ("original", "control")))
    (won_t, won_c), many = ctx.data.nearest_reached("synthetic", ("original", "control"), cols, metric,
                                                    query_rows=query)
    return won_t, won_c, int(np.count_nonzero(many))


def _overfitting_evidence(ctx: Context, cols: list[str], query: np.ndarray | None
                          ) -> tuple[Evidence, dict[str, int]]:
    """Training records won by the release against control records won (Fisher's exact test).

    A real record is won when it is the nearest real record of at least one release row
    (:func:`won_records`). When the release does not depend on which real records were trained
    on, the set of won records does not either, so every real record is equally likely to be won
    whatever the sizes of the two tables, and the won counts are compared directly: the effect is
    the share of training records won minus the share of control records won, a share of
    distinct training records (a release row wins at most its own nearest records, so a hundred
    copies of one training record win that one record). A copied training record that chance
    would have won anyway adds nothing: a share ``f`` of copies moves the effect by about
    ``f x (1 - control share won)``.
    """
    won_t, won_c, tied = won_records(ctx, query, cols)
    k_t, k_c = int(won_t.sum()), int(won_c.sum())
    n_query = ctx.data.n_rows("synthetic") if query is None else int(len(query))
    note = (f"{n_query} release rows searched; {tied} of them have more than one nearest real "
            "record and win each of them; identical real records are won together")
    sizes = {"release_rows": n_query, "tied_release_rows": tied,
             "won_training_records": k_t, "won_control_records": k_c}
    ev = Evidence.from_counts(
        OVERFITTING_STATISTIC, k_t, int(won_t.size), k_c, int(won_c.size),
        baseline="control records against the same release: each real record is equally likely "
                 "to be won when the release does not depend on which records were trained on",
        note=note)
    return ev, sizes
