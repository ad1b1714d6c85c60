"""Per-column distance components of the anonymisation score, and the registry of custom ones.

Every component maps ``(original, anonymised, mode)`` to a number in ``[0, 1]`` (0 = unchanged,
1 = completely changed), where ``original``/``anonymised`` are the column's values (pandas Series,
already sampled) and ``mode`` is ``"row_aligned"`` (the rows correspond: masking) or
``"distributional"`` (no correspondence: synthetic data). A column's distance is the mean of the
components registered for its kind: ``"numeric"`` (numerical, datetime in days), ``"categorical"``
(categorical, boolean) or ``"text"`` (text, id).

Add a component with :func:`register_distance`::

    @register_distance("numeric", "median_shift")
    def median_shift(original, anonymised, mode):
        ...

Jaro-Winkler similarity comes from ``rapidfuzz`` when installed (the ``text`` extra), else from the
pure-Python :func:`jaro_winkler` below (same definition: prefix weight 0.1, prefix up to 4,
boost only above a Jaro similarity of 0.7).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd

from ...data.schema import numeric_view
from ...stats import chi_square
from ..fidelity._columns import joint_codes
from ..fidelity._shapes import ks_statistic

DistanceFunc = Callable[[pd.Series, pd.Series, str], float]
KINDS = ("numeric", "categorical", "text")
_REGISTRY: dict[str, dict[str, DistanceFunc]] = {k: {} for k in KINDS}


def register_distance(kind: str, name: str, *, replace: bool = False) -> Callable[[DistanceFunc], DistanceFunc]:
    """Decorator registering a distance component for a column kind.

    Parameters
    ----------
    kind : {"numeric", "categorical", "text"}
        Column kind the component applies to.
    name : str
        Component name (a key of the result's ``components``).
    replace : bool
        Allow replacing an existing component of that name.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown column kind {kind!r}; use one of {KINDS}")

    def deco(func: DistanceFunc) -> DistanceFunc:
        if name in _REGISTRY[kind] and not replace and _REGISTRY[kind][name] is not func:
            raise ValueError(f"distance {name!r} for {kind} columns is already registered "
                             "(pass replace=True to override it)")
        _REGISTRY[kind][name] = func
        return func

    return deco


def unregister_distance(kind: str, name: str) -> None:
    """Remove a registered component (no error if absent)."""
    _REGISTRY.get(kind, {}).pop(name, None)


def distances_for(kind: str) -> dict[str, DistanceFunc]:
    """The components registered for ``kind``, in registration order."""
    return dict(_REGISTRY[kind])


def kind_of(sdtype: str) -> str:
    """Column kind of an sdtype."""
    if sdtype in ("numerical", "datetime"):
        return "numeric"
    if sdtype in ("categorical", "boolean"):
        return "categorical"
    return "text"


# ------------------------------------------------------------------------------------ numeric
def _finite(s: pd.Series) -> np.ndarray:
    x = numeric_view(s)
    return x[~np.isnan(x)]


@register_distance("numeric", "wasserstein")
def wasserstein(original: pd.Series, anonymised: pd.Series, mode: str) -> float:
    """Wasserstein-1 distance of the two distributions divided by the original range, capped at 1."""
    from scipy.stats import wasserstein_distance

    a, b = _finite(original), _finite(anonymised)
    if len(a) == 0 or len(b) == 0:
        return float(len(a) != len(b))
    w = float(wasserstein_distance(a, b))
    span = float(a.max() - a.min())
    if span == 0:
        return 0.0 if w == 0 else 1.0
    return min(w / span, 1.0)


@register_distance("numeric", "ks")
def ks(original: pd.Series, anonymised: pd.Series, mode: str) -> float:
    """Two-sample Kolmogorov-Smirnov statistic."""
    a, b = _finite(original), _finite(anonymised)
    if len(a) == 0 or len(b) == 0:
        return float(len(a) != len(b))
    return ks_statistic(a, b)


@register_distance("numeric", "mean_shift")
def mean_shift(original: pd.Series, anonymised: pd.Series, mode: str) -> float:
    """``|mean(anonymised) - mean(original)| / std(original)`` (sample std), capped at 1."""
    a, b = _finite(original), _finite(anonymised)
    if len(a) == 0 or len(b) == 0:
        return float(len(a) != len(b))
    shift = abs(float(b.mean()) - float(a.mean()))
    sd = float(a.std(ddof=1)) if len(a) > 1 else 0.0
    if sd == 0 or math.isnan(sd):
        return 0.0 if shift == 0 else 1.0
    return min(shift / sd, 1.0)


# -------------------------------------------------------------------------------- categorical
def bias_corrected_cramers_v(a: np.ndarray, b: np.ndarray) -> float:
    """Bergsma's (2013) bias-corrected Cramer's V of two aligned code arrays (NaN if undefined)."""
    n = len(a)
    chi2, r, k = chi_square(a, b)
    if n < 2 or r < 2 or k < 2:
        return float("nan")
    phi2 = max(chi2, 0.0) / n
    phi2c = max(0.0, phi2 - (k - 1) * (r - 1) / (n - 1))
    rc = r - (r - 1) ** 2 / (n - 1)
    kc = k - (k - 1) ** 2 / (n - 1)
    den = min(kc - 1, rc - 1)
    if den <= 0:
        return float("nan")
    return min(math.sqrt(phi2c / den), 1.0)


@register_distance("categorical", "association")
def association(original: pd.Series, anonymised: pd.Series, mode: str) -> float:
    """Row-aligned: ``1 - bias-corrected Cramer's V`` of original vs anonymised values (missing is a
    category). Distributional (no row pairing): the total variation distance of the frequencies."""
    (a, b), _ = joint_codes(original, anonymised)
    if mode == "row_aligned":
        v = bias_corrected_cramers_v(a, b)
        if math.isnan(v):  # a constant column: unchanged iff every value is equal
            return 0.0 if np.array_equal(a, b) else 1.0
        return 1.0 - v
    k = int(max(a.max(initial=0), b.max(initial=0))) + 1
    pa = np.bincount(a, minlength=k) / len(a)
    pb = np.bincount(b, minlength=k) / len(b)
    return 0.5 * float(np.abs(pa - pb).sum())


@register_distance("categorical", "jaccard")
def jaccard(original: pd.Series, anonymised: pd.Series, mode: str) -> float:
    """Jaccard distance of the sets of distinct non-missing values."""
    return _jaccard(original, anonymised)


def _jaccard(original: pd.Series, anonymised: pd.Series) -> float:
    (a, b), _ = joint_codes(original.dropna(), anonymised.dropna())
    sa, sb = set(np.unique(a).tolist()), set(np.unique(b).tolist())
    union = sa | sb
    return 1.0 - len(sa & sb) / len(union) if union else 0.0


# --------------------------------------------------------------------------------------- text
def jaro_winkler(s1: str, s2: str, prefix_weight: float = 0.1) -> float:
    """Jaro-Winkler similarity in [0, 1] (pure Python).

    Winkler's common-prefix boost (up to 4 characters, weight ``prefix_weight``) applies when the
    Jaro similarity is above 0.7; transpositions are rounded down, as in rapidfuzz.
    """
    if s1 == s2:
        return 1.0
    n1, n2 = len(s1), len(s2)
    if n1 == 0 or n2 == 0:
        return 0.0
    window = max(max(n1, n2) // 2 - 1, 0)
    m1 = [False] * n1
    m2 = [False] * n2
    matches = 0
    for i, ch in enumerate(s1):
        lo, hi = max(0, i - window), min(n2, i + window + 1)
        for j in range(lo, hi):
            if not m2[j] and s2[j] == ch:
                m1[i] = m2[j] = True
                matches += 1
                break
    if matches == 0:
        return 0.0
    t, j = 0, 0
    for i in range(n1):
        if m1[i]:
            while not m2[j]:
                j += 1
            if s1[i] != s2[j]:
                t += 1
            j += 1
    t //= 2  # transpositions = half the out-of-order matches, rounded down (as rapidfuzz)
    jaro = (matches / n1 + matches / n2 + (matches - t) / matches) / 3
    if jaro <= 0.7:  # Winkler's boost threshold
        return jaro
    prefix = 0
    for c1, c2 in zip(s1[:4], s2[:4], strict=False):
        if c1 != c2:
            break
        prefix += 1
    return jaro + prefix * prefix_weight * (1 - jaro)


def jaro_winkler_backend() -> str:
    """``"rapidfuzz"`` when installed, else ``"python"``."""
    try:
        import rapidfuzz  # noqa: F401
    except ImportError:
        return "python"
    return "rapidfuzz"


def pair_similarity(a: list[str], b: list[str]) -> np.ndarray:
    """Jaro-Winkler similarity of aligned pairs ``a[i]``, ``b[i]``."""
    if jaro_winkler_backend() == "rapidfuzz":
        from rapidfuzz.distance import JaroWinkler

        f = JaroWinkler.normalized_similarity
        return np.fromiter((f(x, y) for x, y in zip(a, b, strict=True)), dtype="float64", count=len(a))
    return np.fromiter((jaro_winkler(x, y) for x, y in zip(a, b, strict=True)), dtype="float64",
                       count=len(a))


def best_similarity(queries: list[str], choices: list[str]) -> np.ndarray:
    """For each query, the highest Jaro-Winkler similarity to any choice."""
    if not queries or not choices:
        return np.zeros(len(queries))
    if jaro_winkler_backend() == "rapidfuzz":
        from rapidfuzz.distance import JaroWinkler
        from rapidfuzz.process import cdist

        out = np.empty(len(queries))
        for start in range(0, len(queries), 512):  # bounded memory
            block = cdist(queries[start:start + 512], choices, scorer=JaroWinkler.normalized_similarity,
                          dtype=np.float32)
            out[start:start + 512] = block.max(axis=1)
        return out
    return np.array([max(jaro_winkler(q, c) for c in choices) for q in queries])


#: Rows of a text column compared by Jaro-Winkler (seeded sample; the pure-Python fallback is slow).
TEXT_PAIRS = 1000
TEXT_PAIRS_DISTRIBUTIONAL = 300


def _strings(s: pd.Series) -> pd.Series:
    return s.astype(object).where(s.notna(), "").astype(str)


@register_distance("text", "replacement")
def replacement(original: pd.Series, anonymised: pd.Series, mode: str) -> float:
    """Share of the original's distinct non-missing values that do not occur in the release."""
    a = set(_strings(original.dropna()).unique())
    if not a:
        return 0.0
    b = set(_strings(anonymised.dropna()).unique())
    return len(a - b) / len(a)


@register_distance("text", "jaro_winkler")
def jaro_winkler_distance(original: pd.Series, anonymised: pd.Series, mode: str) -> float:
    """``1 - mean Jaro-Winkler similarity``: of aligned pairs (row-aligned; first ``TEXT_PAIRS`` rows
    of the already-sampled column) or of each release value to its most similar original value
    (distributional; ``TEXT_PAIRS_DISTRIBUTIONAL`` values each side)."""
    a, b = _strings(original), _strings(anonymised)
    if mode == "row_aligned":
        n = min(len(a), TEXT_PAIRS)
        sim = pair_similarity(a.iloc[:n].tolist(), b.iloc[:n].tolist())
    else:
        q = b.iloc[:TEXT_PAIRS_DISTRIBUTIONAL].tolist()
        c = list(dict.fromkeys(a.iloc[:TEXT_PAIRS_DISTRIBUTIONAL].tolist()))
        sim = best_similarity(q, c)
    return 1.0 - float(sim.mean()) if len(sim) else 0.0
