"""``quality_report``: SDMetrics' QualityReport (Column Shapes + Column Pair Trends), exact and fast.

Overall score = mean of the two property scores. Column Shapes = mean KSComplement (numerical,
datetime) / TVComplement (categorical, boolean) over the columns; Column Pair Trends = mean of
CorrelationSimilarity / ContingencySimilarity over the pairs whose real trend passes SDMetrics'
default thresholds (|r| > 0.5, Cramer's V > 0.3). Text and id columns are skipped. No subsampling
(SDMetrics subsamples contingency tables above 50,000 rows without a seed).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ...core.results import REAL_HOLDOUT, Baseline, Chart, Headline, MetricResult
from ...errors import MetricError
from ...registry import Context, Interval, Param, register
from ._columns import STATISTICAL
from ._pairs import pairs_against
from ._summary import RealSummary, ks_against, summarise_real, tv_against


def _nanmean(values: list[float]) -> float:
    arr = np.asarray([v for v in values if v is not None], dtype="float64")
    arr = arr[~np.isnan(arr)]
    return float(arr.mean()) if len(arr) else float("nan")


_SHARE = Interval(0, 1, closed="left")  # SDMetrics' real-trend thresholds: 0 scores every pair


def compute_quality(real: pd.DataFrame, synthetic: pd.DataFrame, sdtypes: dict[str, str], *,
                    real_correlation_threshold: float = 0.5, real_association_threshold: float = 0.3,
                    pair_binning: str = "separate") -> dict[str, Any]:
    """The quality report of ``synthetic`` against ``real``.

    Parameters
    ----------
    real, synthetic : DataFrame
        Typed tables with the columns of ``sdtypes``.
    sdtypes : dict
        ``{column: sdtype}``; only numerical, datetime, categorical and boolean columns are used,
        in this order.
    real_correlation_threshold, real_association_threshold : float
        SDMetrics' real-trend thresholds for Column Pair Trends (0 = score every pair).
    pair_binning : {"separate", "shared"}
        ``"separate"`` = SDMetrics' report (each frame binned with its own edges); ``"shared"`` = both
        frames binned with the real edges.

    Returns
    -------
    dict
        ``score``, ``column_shapes``, ``column_pair_trends``, ``column_shapes_table``,
        ``column_pair_trends_table``, ``n_pairs``, ``n_pairs_meeting_threshold``.
    """
    used = {c: s for c, s in sdtypes.items() if s in STATISTICAL}
    return quality_against(summarise_real(real, used), synthetic,
                           real_correlation_threshold=real_correlation_threshold,
                           real_association_threshold=real_association_threshold,
                           pair_binning=pair_binning)


def constant_in_release(summary: RealSummary, synthetic: pd.DataFrame,
                        threshold: float) -> dict[str, int]:
    """Continuous columns the release holds constant while the original does not, each with the
    number of its correlation pairs whose real correlation passes ``threshold`` (pairs SDMetrics'
    and this report's Column Pair Trends cannot score and leave out).

    Examples
    --------
    >>> import pandas as pd
    >>> real = pd.DataFrame({"a": [1.0, 2, 3, 4], "b": [2.0, 4, 6, 9]})
    >>> summ = summarise_real(real, {"a": "numerical", "b": "numerical"})
    >>> constant_in_release(summ, pd.DataFrame({"a": [1.0] * 4, "b": [2.0, 4, 6, 9]}), 0.5)
    {'a': 1}
    """
    flat = [c for c, cs in summary.columns.items()
            if cs.continuous and not cs.constant and synthetic[c].nunique(dropna=True) <= 1]
    out = {}
    for c in flat:  # loop over columns and pairs, not rows
        n = sum(1 for p in summary.pairs if c in (p.column_1, p.column_2) and p.r is not None
                and math.isfinite(p.r) and abs(p.r) > threshold)
        if n:  # a column whose pairs would not count anyway loses nothing
            out[c] = n
    return out


def quality_against(summary: RealSummary, synthetic: pd.DataFrame, *,
                    real_correlation_threshold: float = 0.5, real_association_threshold: float = 0.3,
                    pair_binning: str = "separate") -> dict[str, Any]:
    """The quality report of ``synthetic`` against a summary of the real table (see
    :func:`compute_quality`; the summary comes from the rows or from a ``synthguard profile``)."""
    shapes = []
    for col, cs in summary.columns.items():
        if cs.continuous:
            shapes.append({"column": col, "metric": "KSComplement",
                           "score": ks_against(cs, synthetic[col])})
        else:
            shapes.append({"column": col, "metric": "TVComplement",
                           "score": tv_against(cs, synthetic[col])})
    pairs = pairs_against(summary, synthetic, real_correlation_threshold=real_correlation_threshold,
                          real_association_threshold=real_association_threshold, binning=pair_binning)
    shape_score = _nanmean([r["score"] for r in shapes])
    pair_score = _nanmean([p.score for p in pairs if p.meets_threshold])
    props = [v for v in (shape_score, pair_score) if not math.isnan(v)]
    overall = float(np.mean(props)) if props else float("nan")
    return {"score": overall, "column_shapes": shape_score, "column_pair_trends": pair_score,
            "column_shapes_table": shapes, "column_pair_trends_table": [p.to_dict() for p in pairs],
            "n_pairs": len(pairs), "n_pairs_meeting_threshold": sum(p.meets_threshold for p in pairs)}


@register(
    "quality_report", family="fidelity", direction="higher is better",
    optional_needs=("control",), from_stats=True,
    params=[
        Param("real_correlation_threshold", 0.5, "numeric pairs count only if the real |Pearson r| is "
              "above this (SDMetrics' default; 0 = every pair)", kind=float, interval=_SHARE),
        Param("real_association_threshold", 0.3, "pairs with a discrete column count only if the real "
              "Cramer's V is above this (SDMetrics' default; 0 = every pair)", kind=float,
              interval=_SHARE),
        Param("pair_binning", "separate", "'separate' = SDMetrics' report (real and synthetic numeric "
              "columns binned with their own edges); 'shared' = both with the real edges",
              kind=str, choices=("separate", "shared")),
    ],
    description="SDMetrics QualityReport score in [0, 1]: mean of Column Shapes and Column Pair Trends "
                "(1 = marginals and pairwise trends reproduced)",
    aliases=("sdmetrics_qualityreport", "sdmetrics_single_table_qualityreport"),
    presets=('full',),
    order=300
)
def quality_report(ctx: Context, *, real_correlation_threshold: float = 0.5,
                   real_association_threshold: float = 0.3, pair_binning: str = "separate") -> MetricResult:
    """Quality report of the synthetic table against the original (see module docstring).

    When a control table is given, the same report of control against original is the baseline:
    what a fresh real sample of the population scores.
    """
    t = ctx.tables
    sdtypes = {c: s.sdtype for c, s in t.schema.columns.items() if s.sdtype in STATISTICAL}
    if not sdtypes:
        raise MetricError("no numerical, datetime, categorical or boolean column to compare: "
                          "declare column sdtypes in the metadata")
    kw = {"real_correlation_threshold": real_correlation_threshold,
          "real_association_threshold": real_association_threshold, "pair_binning": pair_binning}
    if t.original is None:  # the original is given by its statistics (synthguard profile)
        summary = getattr(t.original_stats, "quality", None)
        if summary is None:
            raise MetricError("the original statistics hold no quality summary: profile again")
    else:
        summary = ctx.memo("quality_report.summary", lambda: summarise_real(t.original, sdtypes))
    res = quality_against(summary, t.synthetic, **kw)
    if t.control is not None:
        base = quality_against(summary, t.control, **kw)
        ceiling = base["score"]
        headline = (f"synthetic reaches {res['score']:.3f} of the achievable {ceiling:.3f} "
                    f"({100 * res['score'] / ceiling:.1f} % of the ceiling)") if ceiling else None
        baseline = Baseline(ceiling, (f"{headline}; " if headline else "") + "ceiling = quality report "
                            f"of the control (real holdout, n = {len(t.control)}) against the original")
        res["control_column_shapes"] = base["column_shapes"]
        res["control_column_pair_trends"] = base["column_pair_trends"]
        res["ceiling"] = ceiling
        res["ratio"] = res["score"] / ceiling if ceiling else None
        res["headline"] = headline
        res["control_column_shapes_table"] = base["column_shapes_table"]
    else:
        baseline = Baseline(None, "no baseline: give a control table to see what real held-out "
                                  "data scores")
    warning = None
    if math.isnan(res["column_pair_trends"]):
        warning = ("no column pair has a real trend above the thresholds: the score is Column Shapes "
                   "alone (set the thresholds to 0 to score every pair)")
    flat = constant_in_release(summary, t.synthetic, real_correlation_threshold)
    if flat:
        lost = ("; ".join(f"{c!r} ({n} pair(s))" for c, n in flat.items())
                + ": the release holds these columns constant, not the original; their correlation "
                "pairs whose real correlation passes the threshold cannot be scored and are left out "
                "of Column Pair Trends, as SDMetrics leaves them out, so that property reads only "
                "the pairs left (see column_shapes for the columns themselves)")
        warning = f"{warning}; {lost}" if warning else lost
    if not summary.exact:
        approx = ("computed from a coarse profile of the original (quantile ECDF / rare categories "
                  "left out): KSComplement and TVComplement are approximate")
        warning = f"{warning}; {approx}" if warning else approx
    skipped = [c for c, s in t.schema.columns.items() if s.sdtype not in STATISTICAL]
    details = dict(res, skipped_columns=skipped, params=kw, from_original_stats=t.original is None,
                   exact=summary.exact)
    bars = [(str(r["column"]), r["score"]) for r in res["column_shapes_table"]]
    charts = (Chart("bars", "per-column fidelity (column shapes)", "score (1 = same distribution)",
                    bars, max=1.0, colour="#009E73"),) if bars else ()
    head = (Headline(res["score"], res["ceiling"], "quality score", REAL_HOLDOUT,
                     res["headline"]) if res.get("headline") else None)
    return MetricResult("quality_report", "fidelity", res["score"], "higher is better",
                        baseline=baseline, n=len(t.synthetic), warning=warning, details=details,
                        charts=charts, headline=head)
