"""The one definition of a row distance in synthguard (Gower, Lp, Hamming), parameterised.

For rows ``a`` and ``b`` with numeric columns ``j`` and categorical columns ``c``::

    t_j = |a_j - b_j| / scale_j          (scale_j == 0: t_j = 0 if equal else 1)
    t_j = min(t_j, 1)                    (if clip)
    s   = sum_j w_j * t_j ** p  +  sum_c w_c * [a_c != b_c]
    d   = (s / sum(w)) ** (1/p)          (normalise=True; else s ** (1/p))

Missing values (``nan_rule``):

* ``"max"`` (default): one side missing -> term 1 (the largest a clipped term can be);
  both missing -> term 0. Categorical: missing is its own category (equal to missing).
* ``"anonymeter"``: both numeric values missing -> term 1; exactly one missing -> the distance is
  +inf (anonymeter's NaN distance, sorted last). Categorical as above.

Ordering: neighbours are ordered by the finished distance ``d``, ties (equal ``d``, including two
sums that round to the same ``d``) by the lower reference index. ``p == 2`` squares by multiplication
and takes ``sqrt`` for the root, so both backends give bit-identical distances.

Gower distance is ``p=1`` with range scales: SDMetrics' DCR uses ``clip=True, normalise=True`` with
ranges of the reference table; anonymeter uses ``clip=False, normalise=False`` with ranges of both
tables and ``nan_rule="anonymeter"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...errors import ConfigError

NAN_RULES = ("max", "anonymeter")


@dataclass(frozen=True)
class DistanceMetric:
    """Parameters of the row distance (see module docstring).

    Parameters
    ----------
    scale : ndarray, shape (p,)
        Divisor per numeric column (usually its range); 0 means "compare by equality".
    p : float
        Power of the Lp sum (1 = Gower / Manhattan, 2 = Euclidean).
    clip : bool
        Cap each numeric term at 1 before the power.
    normalise : bool
        Divide the weighted sum by the total weight (Gower's mean) before the root.
    nan_rule : {"max", "anonymeter"}
        Missing-value rule.
    num_weights, cat_weights : ndarray, optional
        Column weights (default 1).
    """

    scale: np.ndarray
    p: float = 1.0
    clip: bool = False
    normalise: bool = True
    nan_rule: str = "max"
    num_weights: np.ndarray | None = None
    cat_weights: np.ndarray | None = None
    name: str = field(default="gower")

    def __post_init__(self) -> None:
        if self.nan_rule not in NAN_RULES:
            raise ConfigError(f"nan_rule must be one of {NAN_RULES}, got {self.nan_rule!r}")
        if not self.p >= 1:
            raise ConfigError(f"the Lp power p must be >= 1, got {self.p}")

    def weights(self, n_num: int, n_cat: int) -> tuple[np.ndarray, np.ndarray]:
        wn = np.ones(n_num) if self.num_weights is None else np.asarray(self.num_weights, dtype=float)
        wc = np.ones(n_cat) if self.cat_weights is None else np.asarray(self.cat_weights, dtype=float)
        if wn.shape != (n_num,) or wc.shape != (n_cat,):
            raise ConfigError(f"distance weights have shapes {wn.shape}/{wc.shape}, "
                              f"expected ({n_num},)/({n_cat},)")
        if not (np.all(np.isfinite(wn)) and np.all(np.isfinite(wc)) and np.all(wn > 0) and np.all(wc > 0)):
            raise ConfigError("distance weights must be finite and > 0 (the search's lower bounds rely on it); "
                              "to ignore a column, leave it out of the block instead")
        if np.asarray(self.scale).shape != (n_num,):
            raise ConfigError(f"distance scale has shape {np.asarray(self.scale).shape}, expected ({n_num},)")
        return wn, wc

    def finish(self, s: np.ndarray, total_weight: float) -> np.ndarray:
        """Turn weighted sums ``s`` into distances (normalise, then the 1/p root)."""
        out = s / total_weight if (self.normalise and total_weight > 0) else s
        if self.p == 2.0:
            out = np.sqrt(out)  # the numba kernel uses sqrt too: bitwise-identical distances
        elif self.p != 1.0:
            out = out ** (1.0 / self.p)
        return out


def gower(scale: np.ndarray, *, clip: bool = False, normalise: bool = True, nan_rule: str = "max",
          num_weights: np.ndarray | None = None, cat_weights: np.ndarray | None = None) -> DistanceMetric:
    """Gower-style mixed distance: range-scaled L1 on numeric columns, mismatch on categorical ones."""
    return DistanceMetric(np.asarray(scale, dtype=float), 1.0, clip, normalise, nan_rule, num_weights,
                          cat_weights, "gower")


def lp(scale: np.ndarray, p: float = 2.0, *, normalise: bool = False) -> DistanceMetric:
    """Lp distance on range-scaled numeric columns (categorical mismatch counts 1)."""
    return DistanceMetric(np.asarray(scale, dtype=float), float(p), False, normalise, "max", None, None,
                          f"l{p:g}")


def hamming(n_num: int = 0, *, normalise: bool = True) -> DistanceMetric:
    """Hamming distance: the share (or count) of columns that differ; use blocks encoded
    with ``categorical_only=True`` so numeric values compare by equality."""
    return DistanceMetric(np.zeros(n_num), 1.0, False, normalise, "max", None, None, "hamming")


def pair_terms_numeric(a: np.ndarray, b: np.ndarray, scale: float, metric: DistanceMetric) -> np.ndarray:
    """Per-pair term of one numeric column (broadcasting ``a`` against ``b``)."""
    with np.errstate(invalid="ignore"):
        diff = np.abs(a - b)
        if scale > 0:
            t = diff / scale
        else:
            t = (diff != 0).astype(float)
        if metric.clip:
            t = np.minimum(t, 1.0)
        if metric.p == 2.0:
            t = t * t
        elif metric.p != 1.0:
            t = t ** metric.p
    na, nb = np.isnan(a), np.isnan(b)
    both = na & nb
    one = na ^ nb
    if metric.nan_rule == "max":
        t = np.where(both, 0.0, np.where(one, 1.0, t))
    else:
        t = np.where(both, 1.0, np.where(one, np.inf, t))
    return t
