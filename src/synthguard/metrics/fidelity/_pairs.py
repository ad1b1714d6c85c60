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

from ._association import pearson
from ._columns import numeric_values
from ._summary import _own_edges, bin_with_edges, contingency_against, pair_keys, summarise_real

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
    return bin_with_edges(values, _own_edges(values), "separate") + 1


def bin_shared(real: np.ndarray, synthetic: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both frames binned with the real column's 10 equal-width edges, outer edges open.

    Bin ids 0..9; missing values get 10.
    """
    edges = _own_edges(real)
    return bin_with_edges(real, edges, "shared"), bin_with_edges(synthetic, edges, "shared")


def _is_constant(x: np.ndarray) -> bool:
    """At most one distinct non-missing value (SDMetrics' ``nunique() == 1`` check)."""
    finite = x[~np.isnan(x)]
    return len(finite) == 0 or bool(finite.min() == finite.max())


def correlation_similarity(real_x: np.ndarray, real_y: np.ndarray, syn_x: np.ndarray, syn_y: np.ndarray,
                           threshold: float) -> tuple[float, float, float, bool]:
    """``1 - |r_real - r_synth| / 2``; NaN when a column is constant or ``|r_real| <= threshold``.

    Returns
    -------
    score, r_real, r_synth, meets_threshold
    """
    return correlation_from_real(pearson(real_x, real_y), _is_constant(real_x) or _is_constant(real_y),
                                 syn_x, syn_y, threshold)


def correlation_from_real(r_real: float, real_constant: bool, syn_x: np.ndarray, syn_y: np.ndarray,
                          threshold: float) -> tuple[float, float, float, bool]:
    """:func:`correlation_similarity` from the real pair's Pearson r and constancy (a summary)."""
    if real_constant or _is_constant(syn_x) or _is_constant(syn_y):
        return float("nan"), float("nan"), float("nan"), False
    r_syn = pearson(syn_x, syn_y)
    if math.isnan(r_real):
        return float("nan"), r_real, r_syn, False
    meets = abs(r_real) > threshold if threshold > 0 else True
    if not meets or math.isnan(r_syn):
        return float("nan"), r_real, r_syn, bool(meets)
    return 1.0 - abs(r_real - r_syn) / 2.0, r_real, r_syn, True


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
    return pairs_against(summarise_real(real, sdtypes), synthetic,
                         real_correlation_threshold=real_correlation_threshold,
                         real_association_threshold=real_association_threshold, binning=binning)


def pairs_against(summary, synthetic: pd.DataFrame, *, real_correlation_threshold: float = 0.5,
                  real_association_threshold: float = 0.3, binning: str = "separate") -> list[PairScore]:
    """Column Pair Trends of ``synthetic`` against a :class:`~._summary.RealSummary` of the real table."""
    cols = summary.columns
    nums = {c: numeric_values(synthetic[c]) for c, s in cols.items() if s.continuous}
    keys = {c: pair_keys(s, synthetic[c], binning, real=False)[0] for c, s in cols.items()}
    nan = float("nan")
    out: list[PairScore] = []
    for p in summary.pairs:
        c1, c2 = p.column_1, p.column_2
        if p.r is not None:
            score, rr, rs, meets = correlation_from_real(
                p.r, cols[c1].constant or cols[c2].constant, nums[c1], nums[c2],
                real_correlation_threshold)
            out.append(PairScore(c1, c2, "CorrelationSimilarity", score, rr, rs, nan, meets))
            continue
        assoc, meets = nan, True
        if real_association_threshold > 0:
            assoc = float(p.tables[binning]["v"])
            meets = (not math.isnan(assoc)) and assoc > real_association_threshold
        score = (contingency_against(p, binning, keys[c1], keys[c2], summary.n_rows) if meets else nan)
        out.append(PairScore(c1, c2, "ContingencySimilarity", score, nan, nan, assoc, meets))
    return out
