"""Column Pair Trends: CorrelationSimilarity (Pearson) and ContingencySimilarity, SDMetrics-style.

Numerical and datetime columns are discretised into 10 equal-width bins for pairs with a discrete
column. ``binning="separate"`` reproduces SDMetrics' QualityReport (each frame binned with its own
edges, the maximum and missing values both in bin 11); ``binning="shared"`` bins both frames with
the real column's edges, outer edges open (what SDMetrics' standalone ContingencySimilarity does).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...stats import chi_square
from ._columns import joint_codes

N_BINS = 10


@dataclass(frozen=True)
class PairScore:
    """One row of the pair-trends table."""

    column_1: str
    column_2: str
    metric: str
    score: float
    real_correlation: float
    synthetic_correlation: float
    real_association: float
    meets_threshold: bool

    def to_dict(self) -> dict[str, object]:
        return {"column_1": self.column_1, "column_2": self.column_2, "metric": self.metric,
                "score": self.score, "real_correlation": self.real_correlation,
                "synthetic_correlation": self.synthetic_correlation,
                "real_association": self.real_association, "meets_threshold": self.meets_threshold}


def bin_separately(values: np.ndarray) -> np.ndarray:
    """SDMetrics' report binning of one frame's column: ``digitize`` on its own 10-bin edges.

    Bin ids run 1..11; the column maximum and missing values both get 11.
    """
    finite = values[~np.isnan(values)]
    if len(finite) == 0:
        return np.full(len(values), N_BINS + 1, dtype=np.int64)
    edges = np.histogram_bin_edges(finite, bins=N_BINS)
    return np.digitize(values, edges).astype(np.int64)


def bin_shared(real: np.ndarray, synthetic: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both frames binned with the real column's 10 equal-width edges, outer edges open.

    Bin ids 0..9; missing values get 10.
    """
    finite = real[~np.isnan(real)]
    if len(finite) == 0:
        return (np.full(len(real), N_BINS, dtype=np.int64), np.full(len(synthetic), N_BINS, dtype=np.int64))
    inner = np.histogram_bin_edges(finite, bins=N_BINS)[1:-1]
    out = []
    for x in (real, synthetic):
        codes = np.searchsorted(inner, x, side="left").astype(np.int64)  # right-closed bins
        codes[np.isnan(x)] = N_BINS
        out.append(codes)
    return out[0], out[1]


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson correlation of the rows where both values are present (NaN if undefined)."""
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    if len(x) < 2:
        return float("nan")
    xc = x - x.mean()
    yc = y - y.mean()
    den = math.sqrt(float(xc @ xc) * float(yc @ yc))
    if den == 0:
        return float("nan")
    return float(np.clip((xc @ yc) / den, -1.0, 1.0))


def _is_constant(x: np.ndarray) -> bool:
    """At most one distinct non-missing value (SDMetrics' ``nunique() == 1`` check)."""
    finite = x[~np.isnan(x)]
    return len(finite) == 0 or bool(finite.min() == finite.max())


#: Above this many possible cells, cell counts use sorting instead of a dense bincount.
_DENSE_CELLS = 1 << 22


def correlation_similarity(real_x: np.ndarray, real_y: np.ndarray, syn_x: np.ndarray, syn_y: np.ndarray,
                           threshold: float) -> tuple[float, float, float, bool]:
    """``1 - |r_real - r_synth| / 2``; NaN when a column is constant or ``|r_real| <= threshold``.

    Returns
    -------
    score, r_real, r_synth, meets_threshold
    """
    if any(_is_constant(v) for v in (real_x, real_y, syn_x, syn_y)):
        return float("nan"), float("nan"), float("nan"), False
    r_real = pearson(real_x, real_y)
    r_syn = pearson(syn_x, syn_y)
    if math.isnan(r_real):
        return float("nan"), r_real, r_syn, False
    meets = abs(r_real) > threshold if threshold > 0 else True
    if not meets or math.isnan(r_syn):
        return float("nan"), r_real, r_syn, bool(meets)
    return 1.0 - abs(r_real - r_syn) / 2.0, r_real, r_syn, True


def cramers_v(a: np.ndarray, b: np.ndarray) -> float:
    """Cramer's V (no continuity correction) of two code arrays; NaN for a table under 2 x 2.

    The chi-square comes from :func:`synthguard.stats.chi_square` (occupied cells only).
    """
    n = len(a)
    chi2, r, c = chi_square(a, b)
    if n == 0 or r < 2 or c < 2:
        return float("nan")
    return math.sqrt(chi2 / (n * (min(r, c) - 1)))


def contingency_similarity(real_a: np.ndarray, real_b: np.ndarray, syn_a: np.ndarray, syn_b: np.ndarray,
                           n_b: int, threshold: float) -> tuple[float, float, bool]:
    """``1 - 1/2 * L1`` between the joint frequency tables of two coded columns.

    Codes must come from one vocabulary per column across both frames, with ``b`` codes in
    ``[0, n_b)``. NaN when ``threshold > 0`` and Cramer's V of the real table is NaN or
    ``<= threshold``.

    Returns
    -------
    score, real_association, meets_threshold
    """
    assoc = float("nan")
    meets = True
    if threshold > 0:
        assoc = cramers_v(real_a, real_b)
        meets = (not math.isnan(assoc)) and assoc > threshold
        if not meets:
            return float("nan"), assoc, False
    real_cells = real_a.astype(np.int64) * n_b + real_b
    syn_cells = syn_a.astype(np.int64) * n_b + syn_b
    n_a = int(max(real_a.max(initial=0), syn_a.max(initial=0))) + 1
    if n_a * n_b <= _DENSE_CELLS:
        p_real = np.bincount(real_cells, minlength=n_a * n_b) / len(real_cells)
        p_syn = np.bincount(syn_cells, minlength=n_a * n_b) / len(syn_cells)
    else:
        uniq, inv = np.unique(np.concatenate([real_cells, syn_cells]), return_inverse=True)
        p_real = np.bincount(inv[:len(real_cells)], minlength=len(uniq)) / len(real_cells)
        p_syn = np.bincount(inv[len(real_cells):], minlength=len(uniq)) / len(syn_cells)
    return 1.0 - 0.5 * float(np.abs(p_real - p_syn).sum()), assoc, meets


def column_pair_trends(real: pd.DataFrame, synthetic: pd.DataFrame, sdtypes: dict[str, str], *,
                       real_correlation_threshold: float = 0.5, real_association_threshold: float = 0.3,
                       binning: str = "separate") -> list[PairScore]:
    """Score every pair of statistical columns (in ``sdtypes`` order), as SDMetrics' report does.

    Parameters
    ----------
    real, synthetic : DataFrame
        Typed tables (numerical float64, datetime64, categorical/boolean object).
    sdtypes : dict
        ``{column: sdtype}`` of the columns to pair (numerical, datetime, categorical, boolean).
    real_correlation_threshold, real_association_threshold : float
        Pairs whose real |Pearson r| / Cramer's V is not above these are not scored (0 = score all).
    binning : {"separate", "shared"}
        How continuous columns are discretised for mixed pairs (see module docstring).
    """
    from ._columns import CONTINUOUS, numeric_values

    cols = list(sdtypes)
    cont = {c for c in cols if sdtypes[c] in CONTINUOUS}
    num_r = {c: numeric_values(real[c]) for c in cont}
    num_s = {c: numeric_values(synthetic[c]) for c in cont}
    codes_r: dict[str, np.ndarray] = {}
    codes_s: dict[str, np.ndarray] = {}
    sizes: dict[str, int] = {}
    for c in cols:
        if c in cont:
            if binning == "separate":
                codes_r[c], codes_s[c] = bin_separately(num_r[c]), bin_separately(num_s[c])
                sizes[c] = N_BINS + 2
            else:
                codes_r[c], codes_s[c] = bin_shared(num_r[c], num_s[c])
                sizes[c] = N_BINS + 1
        else:
            (codes_r[c], codes_s[c]), sizes[c] = joint_codes(real[c], synthetic[c])
    nan = float("nan")
    out: list[PairScore] = []
    for i, c1 in enumerate(cols):
        for c2 in cols[i + 1:]:
            if c1 in cont and c2 in cont:
                score, rr, rs, meets = correlation_similarity(
                    num_r[c1], num_r[c2], num_s[c1], num_s[c2], real_correlation_threshold)
                out.append(PairScore(c1, c2, "CorrelationSimilarity", score, rr, rs, nan, meets))
            else:
                score, assoc, meets = contingency_similarity(
                    codes_r[c1], codes_r[c2], codes_s[c1], codes_s[c2], sizes[c2], real_association_threshold)
                out.append(PairScore(c1, c2, "ContingencySimilarity", score, nan, nan, assoc, meets))
    return out
