"""Nearest-neighbour privacy metrics: ``dcr`` (distance to closest record) and ``nndr`` (nearest-
neighbour distance ratio), each against an original->original and a control->original baseline.

Distance: the engine's Gower distance ``gower(ranges of the original, clip=True, normalise=True)`` on
every tabular column (text and id columns take no part). Missing values follow the engine's ``"max"``
rule: one side missing -> term 1 (the largest a term can be), both missing -> term 0 (missing equals
missing, as in exact matching); a missing category is its own category.
All neighbour searches go through :mod:`synthguard.engine.neighbors`.

The headline values keep the original's ranges (SynEval parity). The members-vs-controls evidence
(every training and control record: is its exposure score in the pooled tail?) searches again with
ranges from the original and the control together, so the scale does not depend on which records
are members; its flags join the verdict's joint test, and it sees no leak type in full (a tail
share is capped).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...core.results import (
    Baseline,
    Chart,
    Evidence,
    MetricResult,
    RecordFlags,
    RowPairs,
    level_from_thresholds,
)
from ...engine.backend import balanced_keys
from ...engine.neighbors import DistanceMetric, gower
from ...errors import MetricError
from ...registry import Context, Interval, Param, register
from ...stats import difference_ci, percentile_ci, proportion, tail_counts
from ._labelfree import release_neighbours

__all__ = ["dcr", "nndr", "distance_setup", "balanced_keys", "balanced_rows", "closer_share_from"]

ZERO = 1e-12  # distances at or below this count as "zero" (exact copies under the metric)


_COMMON = [
    Param("percentile", 5.0, "percentile of the nearest-neighbour values reported (0 < p < 100)",
          (int, float), interval=Interval(0, 100, closed="neither")),
    Param("top_n", 20, "how many original rows to list in records", "positive int"),
    Param("bins", 20, "number of histogram bins in the result", "positive int"),
    Param("n_boot", 500, "bootstrap resamples for the percentile intervals", "positive int"),
    Param("confidence_level", 0.95, "level of every interval", "probability"),
]


def distance_setup(ctx: Context) -> tuple[list[str], DistanceMetric]:
    """Columns and metric shared by ``dcr`` and ``nndr`` (memoised with ``ctx.memo``)."""
    def compute() -> tuple[list[str], DistanceMetric]:
        cols = ctx.tables.schema.tabular_columns()
        if not cols:
            raise MetricError("no tabular column to measure distances on (only text/id columns); "
                              "use the text metrics instead")
        return cols, gower(ctx.data.ranges(cols, ("original",)), clip=True, normalise=True)

    return ctx.memo("distance.setup", compute)


def _neighbours(ctx: Context, query: str, reference: str, k: int) -> tuple[np.ndarray, np.ndarray]:
    """k (<= 2) nearest ``reference`` rows of every ``query`` row, memoised per pair.

    A pair ``nndr`` asks for (every pair with the original as reference) is searched with k=2
    whenever ``nndr`` is in the run, so ``dcr`` and ``nndr`` share one search (the first column of
    a k=2 search is the k=1 search: ties go to the lower index); any other pair is searched with
    the k asked (a k=2 search prunes less: ~1.6x the CPU of k=1 on 15 mixed columns), which gives
    the same numbers whichever metric asks first. Release rows as queries: those of
    :meth:`~synthguard.registry.Context.release_query_rows` (every row unless a sampled run says
    otherwise), in that order.
    """
    cols, metric = distance_setup(ctx)
    width = 2 if k > 1 or (reference == "original" and "nndr" in ctx.run_metrics) else 1
    rows = ctx.release_query_rows() if query == "synthetic" else None

    def compute() -> tuple[np.ndarray, np.ndarray]:
        # itself excluded when q == r
        return ctx.data.kneighbors(query, reference, cols, metric, width, query_rows=rows)

    d, i = ctx.memo(f"distance.knn{width}.{query}.{reference}", compute)
    return d[:, :k], i[:, :k]


shared_neighbours = _neighbours  # also used by the disclosure DCR metrics (same pair, same distance)


def balanced_rows(frame: pd.DataFrame, n: int, seed: int, label: str) -> np.ndarray:
    """Positions of ``n`` rows of ``frame`` chosen by a seeded hash of the row CONTENT.

    The same rows (as a multiset) are chosen whatever the row order, so subsampling does not make a
    result depend on the order of the input rows.
    """
    if n >= len(frame):
        return np.arange(len(frame))
    mixed = balanced_keys(frame, seed, label)
    return np.sort(np.argsort(mixed, kind="stable")[:n])


def _summary(values: np.ndarray, q: float, ctx: Context, label: str, n_boot: int,
             cl: float) -> dict[str, Any]:
    values = np.sort(values)  # the bootstrap then does not depend on the input row order
    ci = percentile_ci(values, q, confidence_level=cl, n_boot=n_boot, seed=ctx.rng(label))
    return {"value": float(np.percentile(values, q)), "ci": list(ci), "n": int(values.size),
            "mean": float(np.mean(values)), "median": float(np.median(values)),
            "zero_share": proportion(int((values <= ZERO).sum()), int(values.size), cl)}


def _histogram(bins: int, syn: np.ndarray, orig: np.ndarray, ctl: np.ndarray | None,
               upper: float | None = None) -> dict[str, Any]:
    finite = [v[np.isfinite(v)] for v in (syn, orig, ctl) if v is not None]
    top = upper if upper is not None else max((float(v.max()) for v in finite if v.size), default=0.0)
    if not top > 0:
        top = 1.0
    edges = np.linspace(0.0, top, bins + 1)
    count = lambda v: np.histogram(np.clip(v, 0, top), edges)[0]  # noqa: E731
    return {"edges": edges, "synthetic": count(syn), "original": count(orig),
            "control": None if ctl is None else count(ctl)}


def _risk(syn: dict[str, Any], base: dict[str, Any], th: dict[str, float], cl: float,
          extra_medium: bool = False) -> tuple[str, str | None, dict[str, Any]]:
    """Risk level of a nearest-neighbour statistic (higher is safer) against its baseline.

    * ``high``: the synthetic percentile's CI lies entirely below the baseline's CI, or the share of
      exact copies (value 0) exceeds the baseline's share significantly by at least ``th["high"]``.
    * ``medium``: the synthetic percentile is below the baseline's CI lower bound, or the excess
      zero share is significant and at least ``th["medium"]``, or ``extra_medium``.
    * ``low`` otherwise.
    """
    zs, zb = syn["zero_share"], base["zero_share"]
    excess = difference_ci(zs["k"], zs["n"], zb["k"], zb["n"], cl)
    significant = excess["ci"][0] > 0
    zero_level = level_from_thresholds(excess["value"], th, "lower is safer") if significant else "low"
    reasons = []
    if syn["ci"][1] < base["ci"][0] or zero_level == "high":
        level = "high"
    elif syn["value"] < base["ci"][0] or zero_level == "medium" or extra_medium:
        level = "medium"
    else:
        level = "low"
    if syn["ci"][1] < base["ci"][0]:
        reasons.append("the synthetic percentile lies significantly below the baseline")
    elif syn["value"] < base["ci"][0]:
        reasons.append("the synthetic percentile is below the baseline's interval")
    if significant and excess["value"] > 0:
        reasons.append(f"{100 * zs['value']:.1f} % of synthetic rows sit at zero (baseline "
                       f"{100 * zb['value']:.1f} %)")
    return level, ("; ".join(reasons) or None), excess


def _zero_records(dist: np.ndarray, idx: np.ndarray, top_n: int, key: str) -> list[dict[str, Any]]:
    at_zero = idx[(dist <= ZERO) & (idx >= 0)]
    if at_zero.size == 0:
        return []
    rows, counts = np.unique(at_zero, return_counts=True)
    order = np.lexsort((rows, -counts))[:top_n]
    return [{"original_row": int(rows[i]), key: int(counts[i])} for i in order]


def _baselines(ctx: Context, orig_vals: np.ndarray, ctl_vals: np.ndarray | None, q: float,
               n_boot: int, cl: float, name: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
    b_orig = _summary(orig_vals, q, ctx, f"{name}-original", n_boot, cl)
    b_ctl = None if ctl_vals is None else _summary(ctl_vals, q, ctx, f"{name}-control", n_boot, cl)
    return b_orig, b_ctl


def _baseline_obj(b_orig: dict[str, Any], b_ctl: dict[str, Any] | None, what: str) -> tuple[Baseline,
                                                                                           dict[str, Any]]:
    if b_ctl is not None:
        return Baseline(b_ctl["value"], f"control vs original: the same percentile of {what} from real "
                        "held-out rows to the original", tuple(b_ctl["ci"])), b_ctl
    return Baseline(b_orig["value"], f"original vs original (self excluded): the same percentile of "
                    f"{what} among original rows; no control given", tuple(b_orig["ci"])), b_orig


def _centres(syn: dict[str, Any], b_orig: dict[str, Any], b_ctl: dict[str, Any] | None) -> dict[str, Any]:
    """``mean`` and ``median`` of the synthetic values and of each baseline (``None``: no control)."""
    return {stat: {"synthetic": syn[stat], "original": b_orig[stat],
                   "control": None if b_ctl is None else b_ctl[stat]} for stat in ("mean", "median")}


def _need_rows(ctx: Context, minimum: int) -> None:
    n = len(ctx.tables.original)
    if n < minimum:
        raise MetricError(f"the original table has {n} row(s); this metric needs at least {minimum}")
    if len(ctx.tables.synthetic) == 0:
        raise MetricError("the synthetic table has no rows")


def _closer_share(ctx: Context, cl: float) -> dict[str, Any] | None:
    """Share of synthetic rows strictly closer to (a size-matched sample of) original than control.

    Both distances use the SAME metric and ranges (the original's). The larger of original and
    control is subsampled (seeded, by row content) to the smaller size so ~0.5 is the safe value.
    """
    if not ctx.tables.has_control or len(ctx.tables.control) == 0:
        return None
    return ctx.memo("distance.closer", lambda: _compute_closer_share(ctx, cl))


def _compute_closer_share(ctx: Context, cl: float) -> dict[str, Any]:
    cols, metric = distance_setup(ctx)
    n = min(len(ctx.tables.original), len(ctx.tables.control))
    dist: dict[str, np.ndarray] = {}
    for role in ("original", "control"):
        if n >= len(ctx.tables.get(role)):  # whole table: reuse the memoised search
            dist[role] = _neighbours(ctx, "synthetic", role, 1)[0][:, 0]
            continue
        rows = ctx.data.balanced_rows(role, cols, n, ctx.stream_seed("closer-rows"))
        dist[role] = ctx.data.kneighbors("synthetic", role, cols, metric, 1, reference_rows=rows,
                                         query_rows=ctx.release_query_rows())[0][:, 0]
    out = closer_share_from(dist["original"], dist["control"], n, cl)
    return out


def closer_share_from(d_o: np.ndarray, d_c: np.ndarray, n: int, cl: float) -> dict[str, Any]:
    """The ``share_closer_to_original`` entry from the synthetic rows' nearest distances to the
    (size-matched) original and control."""
    closer = int((d_o < d_c).sum())
    tied = int((d_o == d_c).sum())
    return dict(proportion(closer, d_o.size, cl), share_tied=proportion(tied, d_o.size, cl),
                reference_rows=n, expected="about 0.5 (minus half the ties) when the release is no "
                                           "closer to the training rows than to unseen real rows")


@register(
    "dcr", family="privacy", direction="higher is safer", optional_needs=("control",),
    queries="release",
    params=_COMMON, thresholds={"medium": 0.01, "high": 0.05},
    description="distance to closest record: a low percentile of synthetic->original Gower distances, "
                "against control->original (or original->original) distances",
    risk='presence',
    knowledge="a person's full record; measures its distance to the closest release row",
    presets=('quick', 'privacy', 'full'),
    order=50,
    backend='any',
    warmup=True,
    explainer=('Distance from each real record to its closest release row (mixed-type Gower '
               'distance). Training records much closer than held-out people point to '
               'memorisation; the tail test can raise an alarm but cannot rule a leak out on its '
               'own.')
)
def dcr(ctx: Context, *, percentile: float = 5.0, top_n: int = 20, bins: int = 20, n_boot: int = 500,
        confidence_level: float = 0.95) -> MetricResult:
    """Distance to closest record (SynEval's DCR with a control baseline and intervals).

    Parameters
    ----------
    ctx : Context
        The evaluation context.
    percentile : float
        Which percentile of the nearest-neighbour distances is the headline (default 5).
    top_n : int
        Number of original rows listed in ``records``.
    bins : int
        Histogram bins.
    n_boot : int
        Bootstrap resamples of the percentile intervals.
    confidence_level : float
        Level of every interval.

    Returns
    -------
    MetricResult
        ``value`` = percentile of synthetic->original distances (bootstrap CI); ``baseline`` =
        control->original (preferred) or original->original with self excluded; details
        ``passed``, ``baselines``, ``share_closer_to_original``, ``zero_distance_excess``, ``mean``,
        ``median``, ``histogram``; ``records`` = original rows nearest to synthetic rows at distance 0.
    """
    _need_rows(ctx, 2)
    q, cl = float(percentile), float(confidence_level)
    d_s, i_s = _neighbours(ctx, "synthetic", "original", 1)
    d_o, _ = _neighbours(ctx, "original", "original", 1)
    d_s, d_o = d_s[:, 0], d_o[:, 0]
    d_c = _neighbours(ctx, "control", "original", 1)[0][:, 0] if ctx.tables.has_control \
        and len(ctx.tables.control) else None
    syn = _summary(d_s, q, ctx, "dcr-synthetic", n_boot, cl)
    b_orig, b_ctl = _baselines(ctx, d_o, d_c, q, n_boot, cl, "dcr")
    baseline, base = _baseline_obj(b_orig, b_ctl, "nearest-record distances")
    closer = _closer_share(ctx, cl)
    closer_flag = bool(closer is not None and closer["ci"][0] > 0.5)
    level, why, excess = _risk(syn, base, dict(ctx.thresholds), cl, closer_flag)
    if closer_flag:
        why = "; ".join(x for x in (why, f"{100 * closer['value']:.0f} % of synthetic rows are closer to "
                                    "the original than to the control") if x)
    details = {
        "percentile": q, "passed": bool(syn["value"] >= base["value"]),
        "baselines": {"original_original": b_orig, "control_original": b_ctl},
        "synthetic_original": syn, "share_closer_to_original": closer,
        "zero_distance_excess": excess,
        **_centres(syn, b_orig, b_ctl),
        "histogram": _histogram(bins, d_s, d_o, d_c),
        "distance": "gower(ranges of original, clip, normalise); NaN: one side missing -> 1, both -> 0",
        "method": "SynEval DCR: passed when the synthetic percentile >= the baseline percentile",
    }
    evidence = _real_to_release(ctx, "share of records whose closest release row is among the "
                                "nearest", lambda d: -d[:, 0], q / 100.0, cl, _dcr_ties,
                                "its closest release row, at the distance tail's cut")
    return MetricResult("dcr", "privacy", syn["value"], "higher is safer", baseline, tuple(syn["ci"]),
                        syn["n"], level, why if level != "low" else None, details,
                        _zero_records(d_s, i_s[:, 0], top_n, "synthetic_rows_at_zero_distance"),
                        evidence=evidence,
                        charts=(Chart.histogram(details["histogram"], "distance to closest record"),))


def _labelfree_neighbours(ctx: Context, query: str) -> tuple[np.ndarray, np.ndarray]:
    """k=2 nearest release rows of every ``query`` (original or control) row under the Gower
    distance with ranges from the original AND the control (label-free: the evidence compares
    training with control records, so the scale must not come from one side only):
    ``(distances, release rows)``; the search ``close_neighbours`` shares (:mod:`._labelfree`)."""
    return release_neighbours(ctx, query)


def _dcr_ties(d: np.ndarray, cut: float) -> np.ndarray:
    """Which of a flagged record's two nearest release rows hold it in the DCR tail: those at a
    distance within the tail's cut (score ``-d >= cut``)."""
    return -d >= cut


def _nndr_ties(d: np.ndarray, cut: float) -> np.ndarray:
    """The release row a flagged record's low d1/d2 ratio comes from: its nearest."""
    out = np.zeros(d.shape, dtype=bool)
    out[:, 0] = True
    return out


def _real_to_release(ctx: Context, what: str, score: Any, share: float,
                     confidence_level: float, ties: Any = None, tie: str = "") -> Evidence | None:
    """Evidence of a nearest-neighbour statistic seen from the real records: for every training
    row and every control row, its nearest release rows (``score`` turns the k=2 distances into an
    exposure score, higher = more exposed); members vs controls in the pooled top ``share``.

    Distances use label-free ranges (original and control together), unlike the headline value
    (the original's ranges, SynEval parity). Every record is flagged or not (the pooled tail), so
    the flags join the verdict's joint test; a tail share is capped, so the test sees no leak type
    in full (``sees=()``): it can raise an alarm but never supports ``low``.
    """
    if not (ctx.tables.has_control and len(ctx.tables.control)) or len(ctx.tables.synthetic) < 2:
        return None
    (d_m, i_m), (d_c, i_c) = (_labelfree_neighbours(ctx, r) for r in ("original", "control"))
    s_m, s_c = score(d_m), score(d_c)
    k_m, k_c, cut = tail_counts(s_m, s_c, share)
    pairs = None
    if ties is not None:  # the release rows behind each flag (``ties``: which of its two nearest)
        d, i = np.concatenate([d_m, d_c]), np.concatenate([i_m, i_c])
        flagged = np.concatenate([s_m >= cut, s_c >= cut])
        rec, col = np.nonzero(flagged[:, None] & ties(d, cut) & (i >= 0))
        pairs = RowPairs(rec, i[rec, col], ctx.data.n_rows("synthetic"), tie=tie)
    # a verbatim copy scores the maximum (distance or ratio 0), so it always lands in the tail
    flags = RecordFlags(s_m >= cut, s_c >= cut, {"exact": np.ones(s_m.size, dtype=bool)},
                        pairs=pairs)
    return Evidence.from_flags(f"{what} (pooled top {100 * share:g} % of all real records, cut "
                               f"{abs(cut):.4g})", flags, sees=(), risk="presence",
                               baseline="control rows against the same release, same cut",
                               confidence_level=confidence_level,
                               note="a pooled-tail share is capped at the tail size: it raises "
                                    "alarms but cannot rule a leak out")


def _ratios(d: np.ndarray) -> np.ndarray:
    """d1 / d2 with 0/0 := 0 (an exact copy of a row the original holds twice is still a copy)."""
    d1, d2 = d[:, 0], d[:, 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(d2 > 0, d1 / np.where(d2 > 0, d2, 1.0), 0.0)
    return np.clip(r, 0.0, 1.0)


@register(
    "nndr", family="privacy", direction="higher is safer", optional_needs=("control",),
    queries="release",
    params=_COMMON, thresholds={"medium": 0.01, "high": 0.05},
    description="nearest-neighbour distance ratio d1/d2 of synthetic rows to the original: a low "
                "percentile against control->original (or original->original) ratios",
    risk='presence',
    knowledge="a person's full record; compares its closest and second-closest release rows",
    presets=('quick', 'privacy', 'full'),
    order=60,
    backend='any',
    warmup=True,
    explainer=('Ratio of the closest to the second-closest release row for each real record: a '
               'ratio near 0 means one release row sits on the record alone.')
)
def nndr(ctx: Context, *, percentile: float = 5.0, top_n: int = 20, bins: int = 20, n_boot: int = 500,
         confidence_level: float = 0.95) -> MetricResult:
    """Nearest-neighbour distance ratio (SynEval's NNDR with a control baseline and intervals).

    For each query row, ``d1 / d2`` of its two nearest original rows (k=2). ``0/0`` (two original
    rows equal to the query) is defined as 0: the query is an exact copy. Ratios near 0 mean the
    row sits right on one original record; near 1 it is as close to one record as to the next.

    Parameters
    ----------
    ctx : Context
        The evaluation context.
    percentile, top_n, bins, n_boot, confidence_level
        As for :func:`dcr`.

    Returns
    -------
    MetricResult
        As :func:`dcr`, for the ratios (``histogram`` edges span [0, 1]).
    """
    _need_rows(ctx, 3)
    q, cl = float(percentile), float(confidence_level)
    d_s, i_s = _neighbours(ctx, "synthetic", "original", 2)
    r_s = _ratios(d_s)
    r_o = _ratios(_neighbours(ctx, "original", "original", 2)[0])
    r_c = _ratios(_neighbours(ctx, "control", "original", 2)[0]) if ctx.tables.has_control \
        and len(ctx.tables.control) else None
    syn = _summary(r_s, q, ctx, "nndr-synthetic", n_boot, cl)
    b_orig, b_ctl = _baselines(ctx, r_o, r_c, q, n_boot, cl, "nndr")
    baseline, base = _baseline_obj(b_orig, b_ctl, "nearest-neighbour distance ratios")
    level, why, excess = _risk(syn, base, dict(ctx.thresholds), cl)
    details = {
        "percentile": q, "passed": bool(syn["value"] >= base["value"]),
        "baselines": {"original_original": b_orig, "control_original": b_ctl},
        "synthetic_original": syn, "zero_ratio_excess": excess,
        **_centres(syn, b_orig, b_ctl),
        "histogram": _histogram(bins, r_s, r_o, r_c, upper=1.0),
        "zero_over_zero": "d1 = d2 = 0 (two original rows equal to the query) gives ratio 0",
        "distance": "gower(ranges of original, clip, normalise); NaN: one side missing -> 1, both -> 0",
        "method": "SynEval NNDR: passed when the synthetic percentile >= the baseline percentile",
    }
    evidence = _real_to_release(ctx, "share of records with one release row much closer than the "
                                "next (lowest d1/d2)", lambda d: -_ratios(d), q / 100.0, cl,
                                _nndr_ties, "its closest release row, much closer than the next")
    return MetricResult("nndr", "privacy", syn["value"], "higher is safer", baseline, tuple(syn["ci"]),
                        syn["n"], level, why if level != "low" else None, details,
                        _zero_records(d_s[:, 0], i_s[:, 0], top_n, "synthetic_rows_at_zero_distance"),
                        evidence=evidence,
                        charts=(Chart.histogram(details["histogram"], "distance ratio"),))
