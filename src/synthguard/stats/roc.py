"""AUC and ROC: the AUC with its bootstrap or DeLong interval and its one-sided Mann-Whitney test,
ROC points, TPR at a low FPR."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ConfigError
from ._special import _st
from .bootstrap import _percentile_interval, _resamples, bootstrap_ci
from .rates import _check_confidence, proportion, z_value


def auc_score(labels: np.ndarray, scores: np.ndarray) -> float:
    """Area under the ROC curve (Mann-Whitney U with mid-ranks for ties); label 1 = positive."""
    labels = np.asarray(labels).astype(bool)
    scores = np.asarray(scores, dtype=float)
    n_pos = int(labels.sum())
    n_neg = labels.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = _st.rankdata(scores)
    return float((ranks[labels].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


AUC_DELONG_MIN_ROWS = 50_000


def auc_ci(labels: np.ndarray, scores: np.ndarray, *, n_boot: int = 1000, confidence_level: float = 0.95,
           seed: int | np.random.Generator | None = 0, method: str = "auto") -> tuple[float, float]:
    """Interval of the AUC.

    ``method="bootstrap"``: stratified percentile bootstrap (``n_boot`` resamples);
    ``method="delong"``: DeLong's asymptotic normal interval (one O(n log n) pass, clipped to
    [0, 1]); ``"auto"`` (default) uses the bootstrap below ``AUC_DELONG_MIN_ROWS`` scores and
    DeLong above, where both agree and the bootstrap costs ``n_boot`` full re-rankings.
    """
    if method not in ("auto", "bootstrap", "delong"):
        raise ConfigError(f"auc_ci method must be 'auto', 'bootstrap' or 'delong', got {method!r}")
    labels = np.asarray(labels).astype(int)
    scores = np.asarray(scores, dtype=float)
    if method == "delong" or (method == "auto" and labels.size >= AUC_DELONG_MIN_ROWS):
        return auc_ci_delong(labels, scores, confidence_level=confidence_level)
    if np.isnan(scores).any():
        return bootstrap_ci(auc_score, [labels, scores], n_boot=n_boot,
                            confidence_level=confidence_level, seed=seed, stratify=labels)
    # bootstrap_ci(auc_score, [labels, scores], stratify=labels) with the same resamples, the AUCs
    # of many at once from how often each distinct score is drawn (no re-ranking): mid-ranks are
    # halves, so the rank sums, hence the AUCs, are exact whatever the order of the additions
    _check_confidence(confidence_level)
    n = labels.size
    _, group = np.unique(scores, return_inverse=True)  # distinct scores, ascending
    group = group.ravel()
    m = int(group.max()) + 1 if n else 0
    pos = labels.astype(bool)
    stats_ = np.empty(n_boot)
    chunk = max(1, 2_000_000 // max(m, n, 1))
    draws = _resamples(n, n_boot, seed, labels)
    for start in range(0, n_boot, chunk):
        idx = np.stack([next(draws) for _ in range(min(chunk, n_boot - start))])
        rows = idx.shape[0]
        off = (np.arange(rows) * m)[:, None]
        drawn = np.bincount((off + group[idx]).ravel(), minlength=rows * m).reshape(rows, m)
        hits = np.bincount((off + group[idx])[pos[idx]], minlength=rows * m).reshape(rows, m)
        mid = np.cumsum(drawn, axis=1) - drawn + (drawn + 1) / 2.0  # mid-rank of each score
        n_pos = hits.sum(axis=1)
        n_neg = n - n_pos
        with np.errstate(invalid="ignore", divide="ignore"):
            auc = ((hits * mid).sum(axis=1) - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg)
        stats_[start:start + rows] = np.where((n_pos == 0) | (n_neg == 0), np.nan, auc)
    return _percentile_interval(stats_, confidence_level)


def auc_ci_delong(labels: np.ndarray, scores: np.ndarray, *,
                  confidence_level: float = 0.95) -> tuple[float, float]:
    """DeLong's interval of the AUC: ``auc +- z * sqrt(var(V10)/m + var(V01)/n)`` from placement values.

    With mid-ranks, the placement of a positive is ``(rank among all - rank among positives) / n_neg``
    and of a negative ``1 - (rank among all - rank among negatives) / n_pos``; ties count one half.
    """
    labels = np.asarray(labels).astype(bool)
    scores = np.asarray(scores, dtype=float)
    pos, neg = scores[labels], scores[~labels]
    m, n = pos.size, neg.size
    if m < 2 or n < 2:
        return (float("nan"), float("nan"))
    r_all = _st.rankdata(scores)
    v10 = (r_all[labels] - _st.rankdata(pos)) / n
    v01 = 1.0 - (r_all[~labels] - _st.rankdata(neg)) / m
    auc = float(v10.mean())
    se = math.sqrt(v10.var(ddof=1) / m + v01.var(ddof=1) / n)
    z = z_value(confidence_level)
    return (max(0.0, auc - z * se), min(1.0, auc + z * se))


def roc_curve(labels: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ROC points ``(fpr, tpr, thresholds)``; a higher score means "more likely positive".

    Starts at (0, 0) with threshold +inf; one point per distinct score.
    """
    labels = np.asarray(labels).astype(bool)
    scores = np.asarray(scores, dtype=float)
    order = np.argsort(-scores, kind="mergesort")
    s = scores[order]
    y = labels[order]
    distinct = np.r_[np.flatnonzero(np.diff(s)), y.size - 1]
    tps = np.cumsum(y)[distinct]
    fps = (distinct + 1) - tps
    n_pos = max(int(y.sum()), 1)
    n_neg = max(int((~y).sum()), 1)
    tpr = np.r_[0.0, tps / n_pos]
    fpr = np.r_[0.0, fps / n_neg]
    thr = np.r_[np.inf, s[distinct]]
    return fpr, tpr, thr


def tpr_at_fpr(labels: np.ndarray, scores: np.ndarray, fpr_target: float) -> float:
    """Highest TPR reachable with FPR <= ``fpr_target`` (no interpolation: an attainable operating point)."""
    fpr, tpr, _ = roc_curve(labels, scores)
    ok = fpr <= fpr_target + 1e-12
    return float(tpr[ok].max()) if ok.any() else 0.0


def tpr_at_low_fpr(labels: np.ndarray, scores: np.ndarray, n_negative: int, n_positive: int, *,
                   negatives: str = "control rows",
                   targets: Sequence[float] = (0.001, 0.01)) -> dict[str, Any]:
    """TPR at each low FPR target with its Wilson interval over the ``n_positive`` members.

    A target that ``n_negative`` non-members cannot resolve (``n_negative * target < 1``) is
    ``None`` with a ``_note`` naming how many ``negatives`` it needs.

    Examples
    --------
    >>> y = np.array([1] * 50 + [0] * 50); s = np.arange(100.0)[::-1]
    >>> out = tpr_at_low_fpr(y, s, 50, 50)
    >>> out["tpr_at_fpr_0.001"] is None, out["tpr_at_fpr_0.01_note"]
    (True, 'needs at least 100 control rows')
    """
    out: dict[str, Any] = {}
    for target in targets:
        key = f"tpr_at_fpr_{target:g}"
        if n_negative * target < 1:
            out[key] = None
            out[key + "_note"] = f"needs at least {int(np.ceil(1 / target))} {negatives}"
            continue
        t = tpr_at_fpr(labels, scores, target)
        out[key] = t
        out[key + "_ci"] = proportion(int(round(t * n_positive)), n_positive)["ci"]
    return out


def thin_roc(fpr: np.ndarray, tpr: np.ndarray, max_points: int = 101) -> list[list[float]]:
    """At most ``max_points`` ROC points (always keeping both ends), for reports and charts."""
    if fpr.size <= max_points:
        return [[float(a), float(b)] for a, b in zip(fpr, tpr, strict=True)]
    idx = np.unique(np.r_[0, np.linspace(0, fpr.size - 1, max_points).round().astype(int), fpr.size - 1])
    return [[float(fpr[i]), float(tpr[i])] for i in idx]


# --- membership attacks: AUC tests, the max over attacks, DP-unit bounds ------------------------

def _u_null_var(scores: np.ndarray, m: int, n: int) -> float:
    """Exact variance of the Mann-Whitney U of ``m`` positives among these ``m + n`` scores when the
    labels are a random permutation: ``m n / 12 ((N + 1) - sum(t^3 - t) / (N (N - 1)))``, ``t``
    running over the sizes of the groups of tied scores."""
    big = m + n
    _, counts = np.unique(scores, return_counts=True)
    ties = float(np.sum(counts.astype(float) ** 3 - counts)) / (big * (big - 1)) if big > 1 else 0.0
    return m * n / 12.0 * ((big + 1) - ties)


def auc_null(labels: np.ndarray, scores: np.ndarray, *,
             confidence_level: float = 0.95) -> dict[str, Any]:
    """Null distribution of a held-out AUC, without refitting anything.

    When the labels are exchangeable with the scores (the scorer never saw these labels and the
    two classes come from one distribution), the held-out AUC is the Mann-Whitney statistic
    ``U / (m n)`` of a random labelling of fixed scores: mean exactly 1/2, variance
    ``var(U) / (m n)^2`` with the tie-corrected ``var(U)`` of :func:`auc_test`. The interval is
    the normal approximation's acceptance region at ``confidence_level`` with the continuity
    correction of 1/2 on ``U``, so an AUC lies above it exactly when ``p_value`` is below
    ``(1 - confidence_level) / 2`` (and below it when ``p_below`` is).

    Parameters
    ----------
    labels : ndarray of bool
        True for the positives (scored as "more likely positive" by higher scores).
    scores : ndarray of float
        The held-out scores (finite).
    confidence_level : float
        Level of the null interval.

    Returns
    -------
    dict
        ``mean`` (0.5), ``sd`` (the AUC's null standard deviation), ``ci`` (tuple, clipped to
        [0, 1]), ``p_value`` (one-sided: an AUC this high or higher), ``p_below`` (this low or
        lower), ``n_positive``, ``n_negative``, ``test``.

    Examples
    --------
    >>> import numpy as np
    >>> lab = np.r_[np.ones(50, bool), np.zeros(50, bool)]
    >>> out = auc_null(lab, np.arange(100.0, 0.0, -1.0))  # every positive above every negative
    >>> round(out["sd"], 4), out["p_value"] < 0.001, out["p_below"] > 0.999
    (0.058, True, True)
    """
    labels = np.asarray(labels).astype(bool)
    scores = np.asarray(scores, dtype=float)
    m = int(labels.sum())
    n = int(labels.size - m)
    nan = float("nan")
    out: dict[str, Any] = {"mean": 0.5, "sd": nan, "ci": (nan, nan), "p_value": nan, "p_below": nan,
                           "n_positive": m, "n_negative": n,
                           "test": "Mann-Whitney U under random labelling, tie-corrected variance, "
                                   "normal approximation with continuity correction"}
    if m == 0 or n == 0:
        return out
    var = _u_null_var(scores, m, n)
    if var <= 0:  # every score tied: the AUC is 1/2 whatever the labels
        out.update(sd=0.0, ci=(0.5, 0.5), p_value=1.0, p_below=1.0)
        return out
    from scipy.special import ndtr

    mn = float(m * n)
    sd_u = math.sqrt(var)
    u = float(_st.rankdata(scores)[labels].sum() - m * (m + 1) / 2.0)
    half = (z_value(confidence_level) * sd_u + 0.5) / mn
    out.update(sd=sd_u / mn, ci=(max(0.0, 0.5 - half), min(1.0, 0.5 + half)),
               p_value=min(1.0, float(ndtr(-(u - mn / 2.0 - 0.5) / sd_u))),
               p_below=min(1.0, float(ndtr(-(mn / 2.0 - u - 0.5) / sd_u))))
    return out


def auc_test(labels: np.ndarray, scores: np.ndarray, *,
             confidence_level: float = 0.95) -> dict[str, float]:
    """AUC of a membership score with its one-sided Mann-Whitney test and DeLong interval.

    The U statistic of the positives (members) is tested against its exact null mean ``m n / 2``
    with the exact null variance under ties, ``m n / 12 ((N + 1) - sum(t^3 - t) / (N (N - 1)))``,
    and a continuity correction of 1/2 (normal approximation; exact enough from ~20 per class).
    The interval is DeLong's (:func:`auc_ci_delong`) at ``confidence_level``. With a 95 % interval
    and a one-sided test at 0.05, an interval that excludes 0.5 upwards comes with ``p < 0.05``
    except in degenerate cases (the two variances differ by far less than the factor of two between
    a one-sided 0.05 and a two-sided 0.05 test).

    Parameters
    ----------
    labels : ndarray of bool
        True for members (the positives).
    scores : ndarray of float
        Higher = more likely a member.
    confidence_level : float
        Level of the interval.

    Returns
    -------
    dict
        ``auc``, ``ci`` (tuple), ``z`` (standardised U), ``p_value`` (one-sided: members score
        higher), ``n_members``, ``n_non_members``, ``test``.

    Examples
    --------
    >>> import numpy as np
    >>> lab = np.r_[np.ones(50, bool), np.zeros(50, bool)]
    >>> out = auc_test(lab, np.r_[np.arange(50) + 30.0, np.arange(50.0)])
    >>> round(out["auc"], 2), out["p_value"] < 0.001
    (0.92, True)
    """
    labels = np.asarray(labels).astype(bool)
    scores = np.asarray(scores, dtype=float)
    m = int(labels.sum())
    n = int(labels.size - m)
    nan = float("nan")
    out = {"auc": nan, "ci": (nan, nan), "z": nan, "p_value": nan, "n_members": m,
           "n_non_members": n, "test": "Mann-Whitney U, one-sided, normal approximation with tie "
                                      "and continuity corrections"}
    if m == 0 or n == 0:
        return out
    ranks = _st.rankdata(scores)
    u = float(ranks[labels].sum() - m * (m + 1) / 2.0)
    var = _u_null_var(scores, m, n)
    from scipy.special import ndtr

    if var > 0:
        z = (u - m * n / 2.0 - 0.5) / math.sqrt(var)
        p = float(ndtr(-z))
    else:
        z, p = 0.0, 1.0
    out.update(auc=u / (m * n), ci=auc_ci_delong(labels, scores, confidence_level=confidence_level),
               z=float(z), p_value=min(1.0, p))
    return out
