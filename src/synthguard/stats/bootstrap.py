"""Bootstrap intervals: of a percentile (order statistics drawn directly) and of any statistic."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .rates import _check_confidence
from .rng import make_rng


def percentile_ci(values: np.ndarray, q: float, *, confidence_level: float = 0.95, n_boot: int = 1000,
                  seed: int | np.random.Generator | None = 0) -> tuple[float, float]:
    """Bootstrap percentile interval of the ``q``-th percentile (``q`` in [0, 100]) of ``values``.

    Each resample's percentile (NumPy's linear interpolation between the order statistics ``k`` and
    ``k + 1`` of the resample) needs only those two order statistics, so they are drawn directly
    rather than resampling ``n`` values: for ``n`` draws with replacement from the sorted values, the
    position of the ``(k+1)``-th smallest is ``floor(n U)`` with ``U ~ Beta(k+1, n-k)`` (the order
    statistic of ``n`` uniforms), and the next one's ``U`` exceeds it by ``(1 - U) Beta(1, n-k-1)``.
    Same distribution as the classic resampling bootstrap, O(n log n + n_boot) instead of
    O(n x n_boot) (at 1 M values and 500 resamples: milliseconds instead of ~10 s). Seeded.
    """
    values = np.asarray(values, dtype=float)
    values = np.sort(values[~np.isnan(values)])
    if values.size == 0:
        return (float("nan"), float("nan"))
    rng = make_rng(seed, "percentile_ci")
    n = values.size
    h = (n - 1) * (float(q) / 100.0)
    k = min(int(np.floor(h)), n - 1)
    g = h - k
    u = rng.beta(k + 1, n - k, size=n_boot)
    lo_pos = np.minimum((u * n).astype(np.int64), n - 1)
    a = values[lo_pos]
    if k + 1 <= n - 1 and g > 0:
        u2 = u + (1.0 - u) * rng.beta(1, n - k - 1, size=n_boot)
        b = values[np.minimum((u2 * n).astype(np.int64), n - 1)]
        out = a + (b - a) * g
    else:
        out = a
    alpha = 1 - confidence_level
    return (float(np.quantile(out, alpha / 2)), float(np.quantile(out, 1 - alpha / 2)))


def bootstrap_ci(statistic: Callable[..., float], arrays: Sequence[np.ndarray], *, n_boot: int = 1000,
                 confidence_level: float = 0.95, seed: int | np.random.Generator | None = 0,
                 stratify: np.ndarray | None = None) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic(*arrays)``, resampling rows jointly.

    ``stratify`` (e.g. the labels for an AUC) resamples within each stratum so both classes stay present.
    """
    _check_confidence(confidence_level)
    arrays = [np.asarray(a) for a in arrays]
    stats_ = np.empty(n_boot)
    for b, idx in enumerate(_resamples(len(arrays[0]), n_boot, seed, stratify)):
        stats_[b] = statistic(*[a[idx] for a in arrays])
    return _percentile_interval(stats_, confidence_level)


def _resamples(n: int, n_boot: int, seed: int | np.random.Generator | None,
               stratify: np.ndarray | None):
    """The row indices of each of :func:`bootstrap_ci`'s resamples, in order (one seeded stream)."""
    rng = make_rng(seed, "bootstrap")
    if stratify is not None:
        groups = [np.flatnonzero(stratify == g) for g in np.unique(stratify)]
    for _ in range(n_boot):  # loop over resamples, not rows
        if stratify is None:
            yield rng.integers(0, n, size=n)
        else:
            yield np.concatenate([g[rng.integers(0, g.size, size=g.size)] for g in groups])


def _percentile_interval(stats_: np.ndarray, confidence_level: float) -> tuple[float, float]:
    stats_ = stats_[~np.isnan(stats_)]
    if stats_.size == 0:
        return (float("nan"), float("nan"))
    alpha = 1 - confidence_level
    return (float(np.quantile(stats_, alpha / 2)), float(np.quantile(stats_, 1 - alpha / 2)))
