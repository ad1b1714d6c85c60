"""SciPy distribution functions without importing ``scipy.stats`` at start-up: the Boost
ufuncs behind them where SciPy has them, ``scipy.stats`` itself (imported on first use) otherwise."""

from __future__ import annotations

import numpy as np


class _LazyScipyStats:
    """``scipy.stats`` imported on first use (it costs ~0.3-0.5 s at start-up, and many runs never
    need it: the normal quantile comes from the much lighter ``scipy.special.ndtri``)."""

    def __getattr__(self, name: str):
        from scipy import stats

        return getattr(stats, name)


_st = _LazyScipyStats()


def _boost(name: str):
    """SciPy's Boost ufunc behind a ``scipy.stats`` distribution method (``scipy.special._ufuncs``
    since SciPy 1.12 or so), or None where it lives inside ``scipy.stats`` (older SciPy). The
    wrappers below call it directly on the arguments inside the support, which is exactly what
    ``scipy.stats`` does after checking them, so the values are the same bits without importing
    ``scipy.stats`` (~0.5 s at start-up); older SciPy falls back to ``scipy.stats`` itself."""
    try:
        from scipy.special import _ufuncs
    except ImportError:  # pragma: no cover - very old SciPy
        return None
    return getattr(_ufuncs, name, None)


def _beta_ppf(q: float, a: float, b: float) -> float:
    """``scipy.stats.beta.ppf(q, a, b)`` for ``0 < q < 1``, ``a, b > 0``."""
    f = _boost("_beta_ppf")
    if f is None or not (0.0 < q < 1.0 and a > 0 and b > 0):
        return float(_st.beta.ppf(q, a, b))
    return float(f(float(q), float(a), float(b)))


def _binom_sf(k, n: int, p: float):
    """``scipy.stats.binom.sf(k, n, p)`` (``k`` scalar or array; ``n >= 0``, ``0 <= p <= 1``)."""
    f = _boost("_binom_sf")
    if f is None or not (n >= 0 and 0.0 <= p <= 1.0):
        return _st.binom.sf(k, n, p)
    k = np.floor(np.asarray(k, dtype=np.float64))
    inside = (k >= 0) & (k < n)
    out = np.where(k < 0, 1.0, 0.0)
    if np.any(inside):
        out = np.where(inside, f(np.where(inside, k, 0.0), float(n), float(p)), out)
    return out if out.ndim else np.float64(out)


def _binom_pmf(k, n: int, p: float):
    """``scipy.stats.binom.pmf(k, n, p)`` for integer ``k`` (``n >= 0``, ``0 <= p <= 1``)."""
    f = _boost("_binom_pmf")
    if f is None or not (n >= 0 and 0.0 <= p <= 1.0):
        return _st.binom.pmf(k, n, p)
    k = np.asarray(k, dtype=np.float64)
    inside = (k >= 0) & (k <= n) & (k == np.floor(k))
    out = np.where(inside, f(np.where(inside, k, 0.0), float(n), float(p)), 0.0)
    return out if out.ndim else np.float64(out)


def _hypergeom_sf(k, M, n, N):
    """``scipy.stats.hypergeom.sf(k, M, n, N)`` (any of them arrays): ``P(X > k)`` for the number of
    marked items among ``N`` drawn from ``M`` of which ``n`` are marked; NaN for impossible
    parameters, as there."""
    f = _boost("_hypergeom_sf")
    if f is None:
        return _st.hypergeom.sf(k, M, n, N)
    k, M, n, N = (np.asarray(x, dtype=np.float64) for x in (k, M, n, N))
    k = np.floor(k)
    valid = (M >= 0) & (n >= 0) & (N >= 0) & (n <= M) & (N <= M) & (M == np.floor(M)) \
        & (n == np.floor(n)) & (N == np.floor(N))
    lo = np.maximum(0.0, N - (M - n))
    hi = np.minimum(n, N)
    inside = valid & (k >= lo) & (k < hi)
    out = np.where(valid, np.where(k < lo, 1.0, 0.0), np.nan)
    if np.any(inside):
        args = [np.where(inside, x, d) for x, d in ((k, 0.0), (n, 1.0), (N, 1.0), (M, 2.0))]
        out = np.where(inside, f(*args), out)
    return out if out.ndim else np.float64(out)
