"""Detection limits measured in the data: leak rows put into the release, the tests re-run.

For each leak family (:mod:`synthguard.data.leaks`) and each risk, the detection limit is the smallest
number of training records that, leaked as that family, makes the risk read ``high`` in at least
``power`` of the repetitions. A repetition:

1. **starts from the null**: the training/control labels are drawn at random over the real records,
   except that the ``k`` leaked training records (and the other training record an interpolated row
   is made of) stay training records. Any excess the observed
   release has is spread over both sides, so the limit is that of a release whose only leak is the
   injected one (it holds over repeated runs, not just for this split);
2. **injects the leak rows** of ``k`` training records (the first ``k`` of the repetition's seeded
   order of the family's candidates): every monotone test's per-record scores become
   ``max(score, the scores those rows give)``, measured by the test itself against the same rows
   (:class:`~synthguard.core.results.LeakResponse`; tests prove this equals a re-run on the release
   plus the rows);
3. **re-tests**: flags from the scores (tails re-cut over the new scores), training against control
   counts, one-sided Fisher p-value and Newcombe interval; the risk reads ``high`` when one of its
   tests has ``p <= alpha * w / W`` (the first step of the verdict's weighted Holm, which the joint
   min-P procedure can only beat: the limits are conservative) and an interval reaching the
   materiality.

Doubling then bisection on ``k``, with the same repetitions for every ``k`` (common random numbers),
so the detected share only grows with ``k``. Tests whose state is not monotone in added release rows
(CAP, DiSCO, anonymeter's guesses) state no responses and take no part: a subset of a risk's tests
detects no more than all of them, so the limits err on the side of "not ruled out".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..core.results import LeakResponse
from ..stats import make_rng, z_value
from ..stats.maxt import fisher_p

__all__ = ["InjectionTest", "family_limits", "newcombe_upper"]


def newcombe_upper(k1: np.ndarray, n1: int, k2: np.ndarray, n2: int,
                   confidence_level: float = 0.95) -> np.ndarray:
    """Vectorised upper end of Newcombe's hybrid score interval of ``k1/n1 - k2/n2`` (as
    :func:`synthguard.stats.difference_ci`).

    Examples
    --------
    >>> from synthguard.stats import difference_ci
    >>> got = newcombe_upper(np.array([10]), 800, np.array([2]), 800)[0]
    >>> bool(abs(got - difference_ci(10, 800, 2, 800)["ci"][1]) < 1e-12)
    True
    """
    z = z_value(confidence_level)
    z2 = z * z

    def wilson(k: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        k = np.asarray(k, dtype=float)
        centre = (k + z2 / 2.0) / (n + z2)
        half = z / (n + z2) * np.sqrt(k * (n - k) / n + z2 / 4.0)
        low = np.where(k == 0, 0.0, np.maximum(0.0, centre - half))
        high = np.where(k == n, 1.0, np.minimum(1.0, centre + half))
        return low, high

    p1, p2 = np.asarray(k1) / n1, np.asarray(k2) / n2
    _, u1 = wilson(k1, n1)
    l2, _ = wilson(k2, n2)
    return np.minimum(1.0, p1 - p2 + np.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2))


@dataclass(frozen=True, eq=False)
class InjectionTest:
    """One verdict test as the limits see it.

    Parameters
    ----------
    name : str
        The test (run name).
    scores : ndarray
        Per pooled real record (training first, then control), higher = more exposed.
    tail : float, optional
        Flags are the pooled tail of this share (``None``: ``score > 0``).
    n_member : int
        Training records (the first ``n_member`` scores).
    threshold : float
        The p-value at or below which the test alarms at the first Holm step (``alpha * w / W``).
    risks : tuple of str
        The risks the test counts under.
    leaks : mapping
        Family -> the test's measured :class:`LeakResponse`.
    """

    name: str
    scores: np.ndarray
    tail: float | None
    n_member: int
    threshold: float
    risks: tuple[str, ...]
    leaks: Mapping[str, LeakResponse] = field(default_factory=dict)


def _row_flags(scores: np.ndarray, tail: float | None) -> np.ndarray:
    """:func:`~synthguard.core.results.tail_flags` of every row of ``scores`` (repetitions x records)."""
    if tail is None:
        return scores > 0
    n = scores.shape[1]
    k = int(np.ceil(float(tail) * n))
    if k <= 0 or n == 0:
        return np.zeros(scores.shape, dtype=bool)
    cut = np.partition(scores, n - k, axis=1)[:, n - k]
    return (scores >= cut[:, None]) & np.isfinite(scores)


def _candidates(tests: Sequence[InjectionTest], family: str) -> np.ndarray | None:
    sources = [t.leaks[family].sources for t in tests if family in t.leaks]
    if not sources:
        return None
    common = sources[0]
    for s in sources[1:]:
        common = np.intersect1d(common, s)
    return common


def family_limits(tests: Sequence[InjectionTest], family: str, risks: Sequence[str], *,
                  materiality: float, power: float = 0.8, reps: int = 40,
                  seed: int | None = 0, confidence_level: float = 0.95) -> dict[str, dict]:
    """The detection limit of leak ``family`` for each of ``risks``.

    Returns
    -------
    dict
        Risk -> ``{"k", "share", "power", "reps", "candidates", "tests"}``: ``k`` the smallest leak
        (training records) read high with ``power``, ``None`` when no test of the risk responds to
        the family (``tests`` empty) or when even every candidate leaking is not detected;
        ``share`` = ``k / n_member``; ``tests`` the tests that responded.

    Examples
    --------
    >>> n = 400
    >>> scores = np.zeros(2 * n)
    >>> resp = LeakResponse(np.arange(n), np.arange(n), np.arange(n), np.ones(n))
    >>> t = InjectionTest("copies", scores, None, n, 0.05, ("presence",), {"exact": resp})
    >>> out = family_limits([t], "exact", ["presence"], materiality=0.01, reps=20)
    >>> 3 <= out["presence"]["k"] <= 12
    True
    """
    out: dict[str, dict] = {}
    seeing = [t for t in tests if family in t.leaks]
    cands = _candidates(seeing, family)
    if not seeing or cands is None or cands.size == 0:
        return {r: {"k": None, "share": None, "power": None, "reps": reps, "candidates": 0,
                    "tests": []} for r in risks}
    n1 = seeing[0].n_member
    big_n = seeing[0].scores.size
    rng = make_rng(seed, "limits", family)
    orders = np.vstack([rng.permutation(cands) for _ in range(reps)])
    partner_of = np.full(n1, -1, dtype=np.int64)  # the other training record a leak row is made of
    first = seeing[0].leaks[family]
    if first.partners is not None:
        partner_of[first.sources] = first.partners
    keys = rng.random((reps, big_n))
    cache: dict[int, np.ndarray] = {}

    chunk = max(1, min(reps, 20_000_000 // max(big_n, 1)))  # bounded memory: reps x records

    # a test whose flags are ``score > 0`` on NaN-free scores: max(score, update) > 0 is
    # ``score > 0 or update > 0``, flags computed on booleans (eight times less to copy)
    plain = [t.tail is None and not np.isnan(t.scores).any()
             and not np.isnan(t.leaks[family].score).any() for t in seeing]
    positive = [t.scores > 0 if pl else None for t, pl in zip(seeing, plain, strict=True)]

    def highs(k: int) -> np.ndarray:
        """reps x tests: does each test read high with the first k leaked?"""
        if k in cache:
            return cache[k]
        res = np.zeros((reps, len(seeing)), dtype=bool)
        for start in range(0, reps, chunk):
            stop = min(reps, start + chunk)
            m = stop - start
            at = np.arange(m)[:, None]
            src = orders[start:stop, :k]
            leaked = np.zeros((m, n1), dtype=bool)
            leaked[at, src] = True
            key = keys[start:stop].copy()
            # the leaked records, and the training records their rows are made of, stay training
            key[at, src] = -1.0
            partners = partner_of[src]
            pr, pc = np.nonzero(partners >= 0)
            key[pr, partners[pr, pc]] = -1.0
            members = np.zeros((m, big_n), dtype=bool)
            members[at, np.argpartition(key, n1 - 1, axis=1)[:, :n1]] = True
            for j, t in enumerate(seeing):
                resp = t.leaks[family]
                if resp.src.size:
                    r_idx, u_idx = np.nonzero(leaked[:, resp.src])
                if plain[j]:
                    flags = np.repeat(positive[j][None, :], m, axis=0)
                    if resp.src.size:
                        up = resp.score[u_idx] > 0
                        flags[r_idx[up], resp.target[u_idx[up]]] = True
                else:
                    scores = np.repeat(t.scores[None, :], m, axis=0)
                    if resp.src.size:
                        np.maximum.at(scores, (r_idx, resp.target[u_idx]), resp.score[u_idx])
                    flags = _row_flags(scores, t.tail)
                k1 = (flags & members).sum(axis=1)
                k2 = flags.sum(axis=1) - k1
                p = fisher_p(k1, k1 + k2, n1, big_n)
                hi = newcombe_upper(k1, n1, k2, big_n - n1, confidence_level)
                res[start:stop, j] = (p <= t.threshold) & (hi >= materiality)
        cache[k] = res
        return res

    for risk in risks:
        cols = [j for j, t in enumerate(seeing) if risk in t.risks]
        names = [seeing[j].name for j in cols]
        if not cols:
            out[risk] = {"k": None, "share": None, "power": None, "reps": reps,
                         "candidates": int(cands.size), "tests": []}
            continue

        def pw(k: int, cols: list[int] = cols) -> float:
            return float(highs(k)[:, cols].any(axis=1).mean())

        hi = 1
        while hi < cands.size and pw(hi) < power:
            hi = min(int(cands.size), hi * 2)
        p_hi = pw(hi)
        if p_hi < power:
            out[risk] = {"k": None, "share": None, "power": p_hi, "reps": reps,
                         "candidates": int(cands.size), "tests": names}
            continue
        lo = hi // 2
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if pw(mid) >= power:
                hi = mid
            else:
                lo = mid
        out[risk] = {"k": int(hi), "share": hi / n1, "power": pw(hi), "reps": reps,
                     "candidates": int(cands.size), "tests": names}
    return out
