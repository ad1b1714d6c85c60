"""``anonymisation_score``: Anonify's distortion score, for masking and for synthetic data.

Per column, a distance in [0, 1] = mean of the components registered for its kind (see
:mod:`.distances`): numeric = range-normalised Wasserstein, KS, standardised mean shift;
categorical = 1 - bias-corrected Cramer's V (row-aligned) or total variation distance
(distributional), and the Jaccard distance of the value sets; text = unique-value replacement rate
and 1 - mean Jaro-Winkler similarity. Global distance = weighted mean over columns;
``score = 1 + 99 x distance`` (1 = unchanged, 100 = completely changed), with Anonify's bands.

Modes: ``row_aligned`` (masking: the release has the original's rows in the same order) and
``distributional`` (synthetic data: no row correspondence). A high score means heavy distortion
(utility lost); it is not a re-identification risk measure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ...core.results import Baseline, Chart, MetricResult
from ...errors import ConfigError, MetricError
from ...registry import Context, Interval, Param, register
from . import distances as _distances
from .distances import distances_for, kind_of

#: Anonify's band cut-points on the 1-100 score (from its code, not its README).
BANDS = ((20.0, "minimal"), (40.0, "low"), (60.0, "moderate"), (80.0, "high"), (100.0, "very high"))


def band(score: float) -> str:
    """Distortion band of a 1-100 score: minimal <= 20 < low <= 40 < moderate <= 60 < high <= 80 <
    very high."""
    for cut, name in BANDS:
        if score <= cut:
            return name
    return BANDS[-1][1]


def _check_weights(value: Any) -> str | None:
    if not isinstance(value, Mapping):
        return "must be a mapping {column: weight}"
    bad = {k: v for k, v in value.items() if not isinstance(v, (int, float)) or v < 0}
    return f"weights must be non-negative numbers, got {bad}" if bad else None


def column_distances(original: pd.DataFrame, anonymised: pd.DataFrame, sdtypes: Mapping[str, str],
                     mode: str, weights: Mapping[str, float] | None = None) -> list[dict[str, Any]]:
    """Distance, weight and components of every column.

    Parameters
    ----------
    original, anonymised : DataFrame
        The (already sampled and ordered) tables.
    sdtypes : mapping
        ``{column: sdtype}``.
    mode : {"row_aligned", "distributional"}
    weights : mapping, optional
        Per-column weights (default 1).
    """
    weights = dict(weights or {})
    rows = []
    for col, sd in sdtypes.items():
        kind = kind_of(sd)
        comps = {name: float(f(original[col], anonymised[col], mode))
                 for name, f in distances_for(kind).items()}
        vals = [v for v in comps.values() if not np.isnan(v)]
        rows.append({"column": col, "sdtype": sd, "kind": kind,
                     "distance": float(np.mean(vals)) if vals else float("nan"),
                     "weight": float(weights.get(col, 1.0)), "components": comps})
    return rows


@register(
    "anonymisation_score", family="distortion", direction="lower is better",
    params=[
        Param("mode", "distributional", "'distributional' (synthetic data: no row correspondence) or "
              "'row_aligned' (masking: same rows in the same order)", kind=str,
              choices=("distributional", "row_aligned")),
        Param("weights", None, "per-column weights {column: weight} (default 1 each)", kind=dict,
              check=_check_weights),
        Param("max_rows", 100_000, "rows compared per table; larger tables are sampled with the run's "
              "seed (null = all)", kind=int, interval=Interval(100), nullable=True),
    ],
    description="Anonify distortion score 1-100, column by column: 1 = no column changed (the default "
                "distributional mode compares each column's distribution, so a release of shuffled "
                "columns also scores 1: it does not see relations between columns; row_aligned "
                "compares cell by cell), 100 = every column completely changed (a utility-loss "
                "measure, not a privacy risk)",
    aliases=("anonify_score", "anonymization_score"),
    presets=('full',),
    order=360
)
def anonymisation_score(ctx: Context, *, mode: str = "distributional",
                        weights: Mapping[str, float] | None = None,
                        max_rows: int | None = 100_000) -> MetricResult:
    """Anonify-style distortion score of the release against the original (see module docstring)."""
    t = ctx.tables
    sdtypes = {c: s.sdtype for c, s in t.schema.columns.items()}
    unknown = [c for c in (weights or {}) if c not in sdtypes]
    if unknown:
        raise ConfigError(f"metric 'anonymisation_score': parameter 'weights' names unknown column(s) "
                          f"{unknown}; columns are: {', '.join(sdtypes)}")
    if weights is not None and sum(weights.get(c, 1.0) for c in sdtypes) <= 0:
        raise ConfigError("metric 'anonymisation_score': parameter 'weights' gives every column weight 0: "
                          "give at least one column a positive weight")
    ori, ano = t.original, t.synthetic
    n_o, n_a = len(ori), len(ano)
    if mode == "row_aligned":
        if n_o != n_a:
            raise MetricError(f"row_aligned mode needs the release to have the original's rows in the "
                              f"same order, but they have {n_o} and {n_a} rows: use "
                              "mode='distributional' for synthetic data")
        # the pairs are by input position: a run's tables are each in their own canonical order,
        # so both go back to their input order first (row_numbers: canonical -> input row)
        for role in ("original", "synthetic"):
            nums = t.row_numbers.get(role)
            if nums is not None:
                frame = ori if role == "original" else ano
                frame = frame.iloc[np.argsort(np.asarray(nums), kind="stable")]
                ori, ano = (frame, ano) if role == "original" else (ori, frame)
        # one seeded order for both tables keeps rows aligned; order-sensitive components (the
        # text pairs) then see a random sample
        pos = ctx.rng("rows").permutation(n_o)
        if max_rows is not None and n_o > max_rows:
            pos = pos[:max_rows]
        ori, ano = ori.iloc[pos], ano.iloc[pos]
    else:
        po = ctx.rng("rows", "original").permutation(n_o)
        pa = ctx.rng("rows", "synthetic").permutation(n_a)
        if max_rows is not None:
            po, pa = po[:max_rows], pa[:max_rows]
        ori, ano = ori.iloc[po], ano.iloc[pa]
    rows = column_distances(ori, ano, sdtypes, mode, weights)
    usable = [r for r in rows if not np.isnan(r["distance"]) and r["weight"] > 0]
    if not usable:
        raise MetricError("no column could be compared: check the column sdtypes and weights")
    w = np.array([r["weight"] for r in usable])
    d = np.array([r["distance"] for r in usable])
    distance = float((w * d).sum() / w.sum())
    score = 1.0 + 99.0 * distance
    warning = None
    if mode == "distributional" and n_o == n_a and any(r["kind"] != "numeric" for r in rows):
        warning = ("the release has as many rows as the original: if it is a masked copy (same rows, "
                   "same order), run mode='row_aligned'")
    details = {"score": score, "distance": distance, "band": band(score), "mode": mode,
               "columns": rows, "n_compared": int(len(ori)), "sampled": bool(len(ori) < max(n_o, n_a)),
               "jaro_winkler_backend": _distances.jaro_winkler_backend(),
               "params": {"mode": mode, "weights": dict(weights or {}), "max_rows": max_rows}}
    bars = [(str(r["column"]), r["distance"]) for r in rows]
    return MetricResult("anonymisation_score", "distortion", score, "lower is better",
                        baseline=Baseline(1.0, "an unchanged copy of the original scores 1; a fully "
                                               "replaced table scores about 100"),
                        n=int(len(ano)), warning=warning, details=details,
                        charts=(Chart("bars", "distortion by column",
                                      "distance (0 = unchanged, 1 = fully changed)", bars, max=1.0,
                                      colour="#CC79A7"),) if bars else ())
