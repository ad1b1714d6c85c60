"""Label-permutation tests over member and non-member records: pooled tails, weighted sums and
the max-T test over several attacks' AUCs."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..errors import ConfigError
from ._special import _st
from .rng import make_rng


def tail_counts(member: np.ndarray, non_member: np.ndarray, share: float) -> tuple[int, int, float]:
    """How many members and non-members fall in the pooled top ``share`` of a score (higher = more
    exposed, e.g. minus the distance to the closest synthetic row).

    The cut ``t`` is read from the *pooled* scores, so it does not depend on which rows are members:
    under the null (members and non-members exchangeable) Fisher's exact test on the two counts is
    then exact. ``t`` is the lowest score whose pooled upper tail (``score >= t``) holds at most
    ``share`` of the rows; when the top tie group alone is larger (many rows at distance 0, say) the
    whole top group is taken. Returns ``(k_member, k_non_member, t)``.
    """
    m = np.asarray(member, dtype=float)
    c = np.asarray(non_member, dtype=float)
    pooled = np.sort(np.r_[m, c])[::-1]
    if pooled.size == 0:
        return 0, 0, float("nan")
    allowed = int(np.floor(share * pooled.size))
    t = pooled[0]
    if allowed >= 1:
        cand = pooled[allowed - 1]
        # rows tied with the candidate would push the tail over the share: step above them
        if np.sum(pooled >= cand) > allowed:
            above = pooled[pooled > cand]
            cand = above.min() if above.size else pooled[0]
        t = cand
    return int(np.sum(m >= t)), int(np.sum(c >= t)), float(t)


def label_permutation_greater(weights: np.ndarray, n_first: int, *, n_perm: int = 2000,
                              seed: int | np.random.Generator | None = 0,
                              max_cells: int = 40_000_000) -> dict[str, float]:
    """One-sided permutation test that the first ``n_first`` of ``N`` units carry more weight
    than a random ``n_first`` of them would.

    ``weights[r]`` is how much unit ``r`` scores (e.g. how many synthetic rows have reference row
    ``r`` as their nearest neighbour); the statistic is ``S = weights[:n_first].sum()``. Under the
    null the labels are exchangeable: any ``n_first`` of the ``N`` units could be the first group
    (a random split of real rows into training and control). Unlike a binomial test on the
    scoring events, this keeps events that share a unit together (clustered, over-dispersed
    counts). Monte Carlo over ``n_perm`` relabellings when ``nonzero units x n_perm <= max_cells``
    (p = (1 + #{S* >= S}) / (1 + n_perm)), else the normal approximation with the exact
    finite-population variance (and a continuity correction). The result depends only on the
    multiset of weights in each group, not on their order.

    Returns
    -------
    dict
        ``statistic``, ``expected`` (null mean), ``sd`` (null standard deviation), ``p_value``,
        ``method``.
    """
    w = np.asarray(weights, dtype=np.float64)
    big_n = int(w.size)
    n1 = int(n_first)
    if big_n < 2 or not 0 < n1 < big_n:
        nan = float("nan")
        return {"statistic": float(w[:n1].sum()), "expected": nan, "sd": nan, "p_value": nan,
                "method": "none"}
    s = float(w[:n1].sum())
    expected = n1 / big_n * float(w.sum())
    sd = math.sqrt(n1 * (big_n - n1) / big_n * float(w.var(ddof=1)))
    nz = np.sort(w[w != 0])
    m = int(nz.size)
    if m == 0 or sd == 0:
        return {"statistic": s, "expected": expected, "sd": sd, "p_value": 1.0, "method": "degenerate"}
    if m * n_perm <= max_cells:
        rng = make_rng(seed, "label_permutation") if not isinstance(seed, np.random.Generator) else seed
        hits = 0
        chunk = max(1, min(n_perm, max_cells // (4 * m) or 1))
        done = 0
        while done < n_perm:  # loop over chunks of permutations
            b = min(chunk, n_perm - done)
            k = rng.hypergeometric(n1, big_n - n1, m, size=b)  # nonzero units drawn into group 1
            order = np.argsort(rng.random((b, m)), axis=1)
            csum = np.concatenate([np.zeros((b, 1)), np.cumsum(nz[order], axis=1)], axis=1)
            perm_s = csum[np.arange(b), k]
            hits += int(np.sum(perm_s >= s - 1e-9))
            done += b
        p = (1 + hits) / (1 + n_perm)
        method = f"label permutation, {n_perm} relabellings, one-sided"
    else:
        p = float(_st.norm.sf((s - expected - 0.5) / sd))
        method = "label permutation, normal approximation (exact null variance), one-sided"
    return {"statistic": s, "expected": expected, "sd": sd, "p_value": float(p), "method": method}

def pooled_tail(scores: np.ndarray, share: float) -> np.ndarray:
    """Which records fall in the pooled top ``share`` of ``scores`` (the cut of :func:`tail_counts`:
    the lowest score whose upper tail holds at most ``share`` of the records, or the whole top tie
    group when it alone is larger). Label-free, so a permutation test on it is exact."""
    s = np.asarray(scores, dtype=float)
    if s.size == 0:
        return np.zeros(0, dtype=bool)
    _, _, t = tail_counts(s, np.zeros(0), share)
    return s >= t


def auc_max_t(labels: np.ndarray, scores: np.ndarray, *, n_perm: int = 999,
              seed: int | np.random.Generator | None = 0, tails: Sequence[float] = (),
              stop_hits: int | None = 20, max_cells: int = 4_000_000) -> dict[str, object]:
    """Label-permutation max-T test over several attacks' AUCs (and tail counts) on the same records.

    ``scores`` holds one row per attack (fixed scores of the same ``N`` records). Each attack
    gives one statistic per *view*: its mid-ranks (the AUC, i.e. Mann-Whitney U) and, for every
    share in ``tails``, the indicator of the pooled top ``share`` of its scores (members among the
    most exposed records: the counting behind TPR at low FPR, which sees a leak of a few records
    that barely moves the AUC). Every statistic is the members' sum of its per-record values,
    standardised by its exact permutation mean and variance. Each relabelling draws ``m`` of the
    ``N`` records at random as the members and recomputes every statistic; the ensemble's p-value
    is the share of relabellings whose *maximum* standardised statistic reaches the observed one,
    ``(1 + #{max* >= max}) / (1 + n_perm)`` (or Besag-Clifford's ``hits / L`` when stopped
    early because the p-value is clearly large). Exact at any level when members and non-members are
    exchangeable (random split of real rows, scores not using the labels), whatever the dependence
    between statistics: adding an attack never adds false alarms (Westfall & Young 1993).

    Parameters
    ----------
    labels : ndarray of bool, shape (N,)
        True for members.
    scores : ndarray, shape (A, N)
        One row of scores per attack (higher = member). NaN is not allowed.
    n_perm : int
        Relabellings.
    seed : int or Generator
        Randomness of the relabellings (:func:`make_rng`).
    tails : sequence of float
        Pooled upper-tail shares tested besides the AUC (e.g. ``(0.01, 0.05)``).
    stop_hits : int or None
        Stop once this many relabellings reached the observed maximum (the p-value is then
        ``hits / relabellings``, Besag & Clifford 1991, still valid); None = always ``n_perm``.
    max_cells : int
        Work space per chunk of relabellings (relabellings x records).

    Returns
    -------
    dict
        ``views`` (``"auc"`` then ``"tail_<share>"``), ``z`` (observed standardised statistic,
        ``[attack][view]``), ``p_max`` (the ensemble's p-value), ``p_adjusted`` (single-step max-T
        adjusted p per attack: over its views and all others), ``p_permutation`` (unadjusted
        permutation p per attack and view), ``n_perm``, ``method``.

    Examples
    --------
    >>> import numpy as np
    >>> lab = np.r_[np.ones(40, bool), np.zeros(40, bool)]
    >>> s = np.vstack([np.r_[np.ones(40), np.zeros(40)], np.zeros(80)])
    >>> auc_max_t(lab, s, n_perm=199)["p_max"]
    0.005
    """
    labels = np.asarray(labels).astype(bool)
    s = np.atleast_2d(np.asarray(scores, dtype=float))
    if s.shape[1] != labels.size:
        raise ConfigError("auc_max_t: one score per record and attack is needed")
    if np.isnan(s).any():
        raise ConfigError("auc_max_t: scores hold NaN; give every record a score")
    n_att, big = s.shape
    m = int(labels.sum())
    n = big - m
    views = ["auc"] + [f"tail_{t:g}" for t in tails]
    n_v = len(views)
    if m == 0 or n == 0 or n_att == 0:
        nan = [[float("nan")] * n_v for _ in range(n_att)]
        return {"views": views, "z": nan, "p_max": float("nan"),
                "p_adjusted": [float("nan")] * n_att, "p_permutation": nan, "n_perm": 0,
                "method": "none"}
    rows = []
    for a in range(n_att):
        rows.append(_st.rankdata(s[a]))
        rows += [pooled_tail(s[a], t).astype(float) for t in tails]
    w = np.vstack(rows)  # (A * V, N): per-record values of every statistic
    var = m * n / big * w.var(axis=1, ddof=1) if big > 1 else np.zeros(w.shape[0])
    sd = np.where(var > 1e-12, np.sqrt(np.maximum(var, 0.0)), np.inf)  # constant: z = 0 always
    # centred, float32 (ranks < 2**24 are exact; a sum's rounding moves z by ~1e-5): the
    # relabellings' sums are one single-precision matrix product per chunk, observed sums alike
    wc = (w - w.mean(axis=1, keepdims=True)).astype(np.float32)
    sd32 = sd.astype(np.float32)
    z_obs = (wc @ labels.astype(np.float32)) / sd32
    rng = make_rng(seed, "auc_max_t")
    chunk = max(1, min(n_perm, max_cells // big, 100))
    hit_max = 0
    hit_each = np.zeros(w.shape[0], dtype=np.int64)
    z_att = z_obs.reshape(n_att, n_v).max(axis=1)
    hit_adj = np.zeros(n_att, dtype=np.int64)
    zmax = float(z_obs.max())
    tol = 1e-4
    done = 0
    # one BLAS thread for the relabellings' products: (A * V) x N by N x chunk is a few ms on one
    # core, and a second BLAS thread on a busy machine (the neighbour kernels, other processes)
    # makes each product wait for a descheduled thread: 1.5 s against 0.03 s per chunk measured
    # at load 10 on 2 cores. (A sum's float32 rounding may move z in its last bits, far inside
    # the 1e-4 tolerance of the exceedance counts.)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        while done < n_perm:  # chunks of relabellings, each vectorised over records
            b = min(chunk, n_perm - done)
            pick = np.argpartition(rng.random((b, big)), m - 1, axis=1)[:, :m]
            ind = np.zeros((b, big), dtype=np.float32)
            ind[np.arange(b)[:, None], pick] = 1.0
            z = (wc @ ind.T) / sd32[:, None]  # (A * V, b)
            zm = z.max(axis=0)
            hit_max += int(np.sum(zm >= zmax - tol))
            hit_each += np.sum(z >= z_obs[:, None] - tol, axis=1)
            hit_adj += np.sum(zm[None, :] >= z_att[:, None] - tol, axis=1)
            done += b
            if stop_hits and hit_max >= stop_hits and done < n_perm:
                break  # Besag-Clifford: the p-value is clearly large; h / L is valid
    if done < n_perm:
        denom, extra = done, 0
    else:
        denom, extra = n_perm + 1, 1
    p_each = ((extra + hit_each) / denom).reshape(n_att, n_v)
    return {"views": views, "z": z_obs.astype(float).reshape(n_att, n_v).tolist(),
            "p_max": (extra + hit_max) / denom,
            "p_adjusted": ((extra + hit_adj) / denom).tolist(),
            "p_permutation": p_each.tolist(), "n_perm": int(done),
            "method": f"label permutation max-T over {n_att} attacks x {n_v} statistics "
                      f"({', '.join(views)}; {done} relabellings"
                      + (", stopped early at " + str(stop_hits) + " exceedances (Besag-Clifford)"
                         if done < n_perm else "") + "), one-sided"}
