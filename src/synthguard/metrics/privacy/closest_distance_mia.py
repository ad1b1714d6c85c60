"""``closest_distance_mia``: membership inference from fixed files (no generator needed).

Members are original (training) rows, non-members control rows; the membership score of a row is
minus its distance to the closest synthetic row (the shared Gower engine, asked of the context's
backend: one process or a cluster, the same numbers). A release that leaks
its training rows puts members closer to the synthetic data than non-members, so the AUC rises
above 0.5 (the random-guess baseline).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ...core.results import Baseline, Chart, Evidence, MetricResult, RecordFlags, RowPairs
from ...engine.neighbors import gower
from ...errors import MetricError
from ...registry import LEVEL_FROM_THRESHOLDS, Context, Interval, Param, register
from ...stats import (
    auc_ci,
    auc_score,
    auc_test,
    roc_curve,
    tail_counts,
    thin_roc,
    tpr_at_low_fpr,
)
from ...stats.epsilon import effective_epsilon


@register(
    "closest_distance_mia",
    family="attacks",
    direction="lower is safer",
    needs=("original", "synthetic", "control"),
    params=[
        Param("max_rows", 20_000, "rows per class (original, control), seeded sample; null = all",
              kind="positive int", nullable=True),
        Param("balance", True, "sample both classes to the same size", kind=bool),
        Param("n_boot", 200, "bootstrap resamples of the AUC interval", kind=int,
              interval=Interval(20)),
        Param("top_records", 10, "most exposed original rows listed in the output", kind="non-negative int"),
        Param("max_roc_points", 101, "ROC points kept for the report", kind=int,
              interval=Interval(2)),
    ],
    thresholds={"medium": 0.6, "high": 0.8}, weight=2.0,
    description="AUC of telling training rows from control rows by their distance to the synthetic "
                "data (0.5 = no better than guessing)",
    risk='presence',
    knowledge=("a person's full record; calls it a member when a release row is closer than "
               "held-out people's"),
    presets=('privacy', 'full'),
    order=90,
    contained_in='membership_attacks',
    warmup=True,
    backend="any",
    explainer=('A membership attack: calls a record a member when a release row is closer to it '
               'than to held-out people; AUC with its interval and true positives at low '
               'false-positive rates.')
)
def closest_distance_mia(ctx: Context, *, max_rows: int | None = 20_000, balance: bool = True,
                         n_boot: int = 200, top_records: int = 10,
                         max_roc_points: int = 101) -> MetricResult:
    """Closest-distance membership inference on fixed files.

    Parameters
    ----------
    ctx : Context
        Needs original, synthetic and control tables.
    max_rows : int or None
        Cap per class (seeded sample).
    balance : bool
        Sample both classes to the size of the smaller one.
    n_boot : int
        Bootstrap resamples of the AUC interval (stratified).
    top_records : int
        Number of most exposed original rows in ``records``.
    max_roc_points : int
        ROC points kept (``roc_curve`` key).

    Returns
    -------
    MetricResult
        ``value`` = AUC (baseline 0.5) with its bootstrap CI; details: ``advantage``,
        ``tpr_at_fpr_0.001``, ``tpr_at_fpr_0.01`` (with Wilson CIs), ``roc_curve``,
        ``effective_epsilon``, the class sizes, distance medians and a ``histogram`` of the
        members' and non-members' distances (20 bins up to the 99th percentile, last bin open).
    """
    data = ctx.data  # one process or a cluster: the same questions, the same numbers
    cols = ctx.tables.schema.tabular_columns()
    if not cols:
        raise MetricError("no tabular columns to compare: every column is text or id")
    ranges = data.ranges(cols, ("original", "synthetic", "control"))
    metric = gower(ranges, clip=True)
    n_o, n_c = data.n_rows("original"), data.n_rows("control")
    k_o, k_c = n_o, n_c
    if balance:
        k_o = k_c = min(n_o, n_c)
    if max_rows is not None:
        k_o, k_c = min(k_o, max_rows), min(k_c, max_rows)
    # the seeded content sample (the same rows whatever the row order or partitioning)
    rows_o = data.balanced_rows("original", cols, k_o, ctx.stream_seed("rows"))
    rows_c = data.balanced_rows("control", cols, k_c, ctx.stream_seed("rows"))
    d_o = data.kneighbors("original", "synthetic", cols, metric, 1, query_rows=rows_o)[0][:, 0]
    d_c = data.kneighbors("control", "synthetic", cols, metric, 1, query_rows=rows_c)[0][:, 0]
    # sort each class by distance: every number below, bootstrap included, is then independent of
    # the input row order (only the listing order of equally close rows in `records` is not)
    so, sc = np.argsort(d_o, kind="stable"), np.argsort(d_c, kind="stable")
    rows_o, d_o, d_c = rows_o[so], d_o[so], d_c[sc]
    labels = np.r_[np.ones(k_o, dtype=bool), np.zeros(k_c, dtype=bool)]
    scores = -np.r_[d_o, d_c]
    auc = auc_score(labels, scores)
    ci = auc_ci(labels, scores, n_boot=n_boot, seed=ctx.rng("auc-ci"))
    fpr, tpr, _ = roc_curve(labels, scores)
    advantage = float(np.max(tpr - fpr))
    low = tpr_at_low_fpr(labels, scores, k_c, k_o, negatives="control rows")
    eps = effective_epsilon(labels, scores)
    thresholds = dict(ctx.thresholds) or dict(closest_distance_mia.spec.thresholds)
    warnings = []
    if not np.isfinite(ci[0]) or ci[0] <= 0.5:
        level = "not meaningful"
        warnings.append("members are no closer to the synthetic data than control rows (AUC interval "
                        "includes 0.5): this attack finds no membership signal, which does not prove "
                        "the release is safe")
    else:
        level = LEVEL_FROM_THRESHOLDS  # the AUC against the declared thresholds
    # the most exposed original rows: closest to the synthetic data, with the share of control rows
    # that are at least as close (an empirical p-value of "this row is just typical")
    records = None
    if top_records > 0:
        order = np.arange(min(top_records, k_o))  # d_o is sorted: the closest rows first
        ctrl_sorted = np.sort(d_c)
        share = np.searchsorted(ctrl_sorted, d_o[order], side="right") / max(k_c, 1)
        records = [{"row": int(rows_o[i]), "distance": float(d_o[i]),
                    "control_share_as_close": float(s)} for i, s in zip(order, share, strict=True)]
    top = float(np.quantile(np.r_[d_o, d_c], 0.99)) if k_o + k_c else 0.0
    edges = np.linspace(0.0, top if top > 0 else 1.0, 21)
    hist = {"edges": edges, "original": np.histogram(np.minimum(d_o, edges[-1]), edges)[0],
            "control": np.histogram(np.minimum(d_c, edges[-1]), edges)[0]}
    exact_o = float(np.mean(d_o == 0)) if k_o else float("nan")
    exact_c = float(np.mean(d_c == 0)) if k_c else float("nan")
    details = {
        "auc": auc, "advantage": advantage, **low, "roc_curve": thin_roc(fpr, tpr, max_roc_points),
        "effective_epsilon": eps.lower, "effective_epsilon_detail": eps.to_dict(),
        "n_members": int(k_o), "n_non_members": int(k_c),
        "median_distance_members": float(np.median(d_o)),
        "median_distance_non_members": float(np.median(d_c)),
        "histogram": hist,
        "share_exact_members": exact_o, "share_exact_non_members": exact_c,
        "distance": "gower (range-scaled over original+synthetic+control, terms clipped at 1)",
        "thresholds": thresholds,
    }
    # the AUC's own test (Mann-Whitney, one-sided) and the 1 % tail count (TPR at low FPR as
    # counts) both count: the evidence's p-value is the smaller of the two, Bonferroni-adjusted (x2),
    # so an AUC interval that excludes 0.5 (one-sided p < 0.025) is significant at 0.05
    mw = auc_test(labels, scores)
    details["auc_test"] = {k: mw[k] for k in ("auc", "z", "p_value", "test")}
    evidence, cut = None, float("nan")
    for target in (0.01, 0.001):  # TPR at low FPR as counts: members vs controls in the pooled tail
        k_m, k_n, tail_cut = tail_counts(-d_o, -d_c, target)
        ev = Evidence.from_counts(
            f"share of records among the pooled {100 * target:g} % closest to the release "
            f"(distance <= {-tail_cut:.4g})", k_m, int(k_o), k_n, int(k_c),
            baseline="control rows at the same distance cut (pooled, so the test is exact)",
            weight=closest_distance_mia.spec.weight)  # as the result's evidence (registered)
        details[f"tail_{target:g}"] = ev.to_dict()
        if evidence is None:
            evidence, cut = ev, -float(tail_cut)
    if evidence is not None and np.isfinite(mw["p_value"]):
        p_tail = evidence.p_value if np.isfinite(evidence.p_value) else 1.0
        evidence = replace(
            evidence, p_value=float(min(1.0, 2.0 * min(p_tail, mw["p_value"]))), risk="presence",
            test="min of Fisher exact on the pooled 1 % tail and Mann-Whitney on the AUC, "
                 "one-sided, Bonferroni-adjusted (x2)",
            note=f"tail Fisher p = {p_tail:.3g}, AUC Mann-Whitney p = {mw['p_value']:.3g} (AUC "
                 f"{auc:.3f}); the effect is the tail share (capped: it sees no leak type in full)",
            ties=tail_ties(data, cols, metric, (rows_o, d_o, n_o), (rows_c[sc], d_c, n_c), cut))
    return MetricResult(
        name="closest_distance_mia", family="attacks", value=auc, direction="lower is safer",
        baseline=Baseline(0.5, "AUC of random guessing (members and non-members equally close)"),
        ci=ci, n=int(k_o + k_c), risk_level=level, warning="; ".join(warnings) or None,
        details=details, records=records, evidence=evidence,
        charts=(Chart.histogram(hist, "distance to closest record"),
                Chart.roc(details["roc_curve"], auc)))


def tail_ties(data: Any, cols: list[str], metric: Any, training: tuple[np.ndarray, np.ndarray, int],
              control: tuple[np.ndarray, np.ndarray, int], cut: float) -> RecordFlags | None:
    """The records and release rows behind the test's finding, for the records export only
    (:attr:`~synthguard.core.results.Evidence.ties`; the verdict never reads them).

    The test's statistic is the share of records in the pooled 1 % closest to the release
    (distance ``<= cut``, the cut read from training and control records pooled, so a control
    record lands there by chance as often as an unexposed training record). A record is flagged
    when it is in that tail; it is tied to *every* release row within ``cut`` of it (the rows
    whose removal takes it out of the tail at this cut): one pass of the release rows over a
    neighbour index of the flagged records only (about 1 % of the attacked records, both roles at
    once: the backend's :meth:`~synthguard.engine.backend.Backend.within`), so a record that many
    release rows equal costs its pairs, not a search for ever more neighbours. The ties are
    ``review`` rows: the test reads the release as a whole, and a close neighbour is where the
    exposure is, not proof that the row copies it.

    Parameters
    ----------
    data : Backend
        The run's backend (``ctx.data``: one process or a cluster).
    cols, metric
        The test's columns and distance.
    training, control : (ndarray, ndarray, int)
        The attacked records (canonical positions), their distances to the nearest release row,
        and the table's size.
    cut : float
        The tail's distance cut (NaN: no tail, no ties).

    Returns
    -------
    RecordFlags or None
        Flags per training and control record (canonical order) with the
        :class:`~synthguard.core.results.RowPairs` to the release rows (action ``review``).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from synthguard.engine.neighbors import gower
    >>> from synthguard.registry import Context
    >>> o = pd.DataFrame({"x": [0.0, 5.0, 9.0]}); c = pd.DataFrame({"x": [2.5, 7.0, 20.0]})
    >>> ctx = Context.from_frames(o, pd.DataFrame({"x": [0.0, 0.0, 14.0]}), control=c,
    ...                           canonical=False)
    >>> data = ctx.data
    >>> metric = gower(data.ranges(["x"], ("original", "synthetic", "control")), clip=True)
    >>> f = tail_ties(data, ["x"], metric, (np.arange(3), np.array([0.0, .25, .25]), 3),
    ...               (np.arange(3), np.array([.125, .35, .3]), 3), 0.0)
    >>> f.member.tolist(), f.pairs.record.tolist(), f.pairs.row.tolist()
    ([True, False, False], [0, 0], [0, 1])
    """
    n_syn = int(data.n_rows("synthetic"))
    if not np.isfinite(cut) or n_syn == 0:
        return None
    flags, asked, frames = [], [], []
    for role, (attacked, dist, n), offset in (("original", training, 0),
                                              ("control", control, training[2])):
        ask = np.sort(np.asarray(attacked, dtype=np.int64)[np.asarray(dist) <= cut])
        hit = np.zeros(int(n), dtype=bool)
        hit[ask] = True
        flags.append(hit)
        if ask.size:  # a role without a record in the tail asks for none
            asked.append((ask, offset))
            frames.append(data.take(role, ask, cols))
    # every (release row, flagged record) pair within the cut, in one pass of the release
    got = data.within("synthetic", cols, metric, frames, np.full(n_syn, float(cut))) if frames else []
    recs, rows = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
    for (pos, frow, _dist), (ask, offset) in zip(got, asked, strict=True):
        recs.append(ask[np.asarray(frow, dtype=np.int64)] + offset)
        rows.append(np.asarray(pos, dtype=np.int64))
    rec, row = np.concatenate(recs), np.concatenate(rows)
    order = np.lexsort((row, rec))  # by record, then release row
    rec, row = rec[order], row[order]
    pairs = RowPairs(rec, row, n_syn, action="review",
                     tie="a close neighbour (within the distance cut of the pooled 1 % of real "
                         "records closest to the release)")
    return RecordFlags(flags[0], flags[1], pairs=pairs)
