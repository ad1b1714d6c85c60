"""``accuracy``: binned univariate, bivariate and trivariate accuracy against its noise ceiling.

accuracy = 1 - total variation distance between the original's and the synthetic table's binned
distributions (see :mod:`._binning` for the bins), for every column, every pair of columns and a
seeded sample of column triples. ``value`` = the mean of the three level means.

The ceiling: the same accuracies of the control table (real rows held out from training) against the
original, at the same number of rows. Synthetic and control are subsampled (seeded, by a keyed hash
of each row's content, so row order never matters) to the smaller of the two sizes, so both sides
carry the same sampling noise. A perfect generator -- one drawing fresh
rows from the population -- scores the ceiling in expectation; "synthetic reaches X of the
achievable Y" reads value against baseline. A value clearly above the ceiling means the release
is closer to the training rows than fresh real data is: a sign of copying.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ...errors import ConfigError, MetricError
from ...registry import Context, Param, register
from ...results import Baseline, MetricResult
from ...stats import cramers_v_table
from ._binning import Reference, bin_matrix, build_reference, joint_counts, tv_accuracy

__all__ = ["accuracy", "reference_for"]


def _positive(v: Any) -> str | None:
    return None if isinstance(v, (int, np.integer)) and v >= 1 else "must be a positive integer"


def _bins(v: Any) -> str | None:
    return None if isinstance(v, (int, np.integer)) and 2 <= v <= 50 else "must be an integer in [2, 50]"


def _non_negative(v: Any) -> str | None:
    return None if isinstance(v, (int, np.integer)) and 0 <= v <= 100_000 else \
        "must be an integer in [0, 100000] (0 = no triples)"


def reference_for(ctx: Context, *, max_bins: int, max_categories: int, n_triples: int) -> Reference:
    """The original's binned counts: from the original rows, or from the profile given instead.

    Raises
    ------
    MetricError
        When the profile was made with other binning parameters.
    """
    prof = getattr(ctx.tables, "original_stats", None)
    params = {"max_bins": max_bins, "max_categories": max_categories, "n_triples": n_triples}
    if ctx.tables.original is None:
        if prof is None or prof.accuracy is None:
            raise MetricError("needs the original rows or a profile with binned counts")
        ref = prof.accuracy
        if {k: ref.params.get(k) for k in params} != params:
            raise MetricError(f"the original statistics were profiled with {dict(ref.params)}, not "
                              f"{params}: run 'synthguard profile' with these parameters or use its own")
        return ref
    key = ("accuracy_reference", tuple(sorted(params.items())))
    if key not in ctx.cache:
        cols = ctx.tables.schema.tabular_columns()
        if not cols:
            raise MetricError("no tabular column to bin (only text or id columns)")
        block = ctx.encoded.block("original", cols)
        ctx.cache[key] = build_reference(block, ctx.encoded.encoder, cols, rng=ctx.rng("triples"),
                                         **params)
    return ctx.cache[key]


def _subsample(ctx: Context, role: str, cols: list[str], m: int) -> np.ndarray | None:
    """``m`` rows of ``role`` drawn by a seeded hash of each row's content (``None``: keep all).

    Ranking rows by a keyed hash of their values makes the drawn rows (as a multiset) independent
    of the table's row order: equal rows hash equally, so whichever twin is drawn counts the same.
    """
    frame = ctx.tables.get(role)
    if m >= len(frame):
        return None
    alphabet = np.array(list("abcdefghijklmnopqrstuvwxyz0123456789"))
    key = "".join(ctx.rng("subsample", role).choice(alphabet, 16))
    h = pd.util.hash_pandas_object(frame[cols], index=False, hash_key=key).to_numpy()
    return np.sort(np.argsort(h, kind="stable")[:m])


def _score(ref: Reference, mat: np.ndarray) -> dict[str, Any]:
    sizes = ref.sizes
    uni = [np.bincount(mat[:, j], minlength=sizes[j]) for j in range(len(sizes))]
    pairs = [joint_counts(mat, ij, sizes) for ij in ref.pair_index]
    tri = [joint_counts(mat, t, sizes) for t in ref.triples]
    return {"uni_counts": uni, "pair_counts": pairs,
            "uni": np.asarray([tv_accuracy(r, c) for r, c in zip(ref.uni, uni, strict=True)]),
            "pairs": np.asarray([tv_accuracy(r, c) for r, c in zip(ref.pairs, pairs, strict=True)]),
            "tri": np.asarray([tv_accuracy(r, c) for r, c in zip(ref.tri, tri, strict=True)])}


def _mean(x: np.ndarray) -> float:
    x = x[~np.isnan(x)]
    return float(x.mean()) if x.size else float("nan")


def _assoc(counts: np.ndarray, shape: tuple[int, int]) -> float:
    return cramers_v_table(counts.reshape(shape))


@register(
    "accuracy", family="fidelity", direction="higher is better", optional_needs=("control",),
    from_stats=True,
    params=[
        Param("max_bins", 10, "quantile bins of a numerical/datetime column (learnt from the original)",
              int, check=_bins),
        Param("max_categories", 10, "most frequent categories kept per column; the rest are '(other)'",
              int, check=_bins),
        Param("n_triples", 100, "column triples sampled (seeded) for the trivariate accuracy", int,
              check=_non_negative),
    ],
    description="mean binned accuracy (1 - total variation distance) over columns, pairs and sampled "
                "triples, against the ceiling the control (real holdout) reaches at the same n",
)
def accuracy(ctx: Context, *, max_bins: int = 10, max_categories: int = 10,
             n_triples: int = 100) -> MetricResult:
    """Univariate, bivariate and trivariate accuracy of the release, with its control ceiling.

    Parameters
    ----------
    ctx : Context
        The evaluation context (the original may be given as a profile, see ``synthguard profile``).
    max_bins : int
        Quantile bins per numerical or datetime column.
    max_categories : int
        Categories kept per categorical column (the rest share an ``(other)`` bin).
    n_triples : int
        Column triples sampled for the trivariate level (all of them when there are fewer).

    Returns
    -------
    MetricResult
        ``value`` = mean of the univariate, bivariate and trivariate means; ``baseline`` = the same
        for control vs original (the ceiling); details ``ceiling``, ``ratio``, ``headline``,
        ``univariate``/``bivariate``/``trivariate`` summaries, per-column ``columns`` (with binned
        counts for charts), per-pair ``pairs`` (with the association of each side), ``triples``.
    """
    for key, check, val in (("max_bins", _bins, max_bins), ("max_categories", _bins, max_categories),
                            ("n_triples", _non_negative, n_triples)):
        problem = check(val)
        if problem:
            raise ConfigError(f"metric 'accuracy': parameter {key!r} {problem}")
    ref = reference_for(ctx, max_bins=max_bins, max_categories=max_categories, n_triples=n_triples)
    cols = [s.column for s in ref.specs]
    t = ctx.tables
    n_s = len(t.synthetic)
    n_c = len(t.control) if t.control is not None else 0
    m = min(n_s, n_c) if n_c else n_s
    mats: dict[str, np.ndarray] = {}
    for role, n_rows in (("synthetic", n_s), ("control", n_c)):
        if n_rows == 0:
            continue
        block = ctx.encoded.block(role, cols)
        rows = _subsample(ctx, role, cols, m)
        if rows is not None:
            block = block.take(rows)
        mats[role] = bin_matrix(block, ctx.encoded.encoder, ref.specs)
    scores = {role: _score(ref, mat) for role, mat in mats.items()}
    syn = scores["synthetic"]
    ctl = scores.get("control")

    levels: dict[str, dict[str, Any]] = {}
    for level, key, count in (("univariate", "uni", len(cols)), ("bivariate", "pairs", len(ref.pairs)),
                              ("trivariate", "tri", len(ref.triples))):
        if count == 0:
            continue
        levels[level] = {"synthetic": _mean(syn[key]), "control": _mean(ctl[key]) if ctl else None,
                         "count": count}
    value = float(np.mean([v["synthetic"] for v in levels.values()]))
    ceiling = float(np.mean([v["control"] for v in levels.values()])) if ctl else None
    ratio = value / ceiling if ceiling else None

    labels = [s.labels() for s in ref.specs]
    sdtypes = {c: t.schema.sdtype(c) for c in cols}
    columns = []
    for j, c in enumerate(cols):
        row: dict[str, Any] = {"column": c, "sdtype": sdtypes[c], "accuracy": float(syn["uni"][j]),
                               "control_accuracy": float(ctl["uni"][j]) if ctl else None,
                               "bins": labels[j], "original": ref.uni[j], "synthetic": syn["uni_counts"][j]}
        if ctl:
            row["control"] = ctl["uni_counts"][j]
        columns.append(row)
    sizes = ref.sizes
    pairs = []
    for k, (i, j) in enumerate(ref.pair_index):
        shape = (sizes[i], sizes[j])
        pairs.append({"column_1": cols[i], "column_2": cols[j], "accuracy": float(syn["pairs"][k]),
                      "control_accuracy": float(ctl["pairs"][k]) if ctl else None,
                      "association_original": _assoc(ref.pairs[k], shape),
                      "association_synthetic": _assoc(syn["pair_counts"][k], shape),
                      "association_control": _assoc(ctl["pair_counts"][k], shape) if ctl else None})
    triples = [{"columns": [cols[a] for a in tr], "accuracy": float(syn["tri"][k]),
                "control_accuracy": float(ctl["tri"][k]) if ctl else None}
               for k, tr in enumerate(ref.triples)]

    warning = None
    if ceiling is not None:
        headline = (f"synthetic reaches {value:.3f} of the achievable {ceiling:.3f} "
                    f"({100 * value / ceiling:.1f} % of the ceiling, n = {m} rows each)")
        baseline = Baseline(ceiling, f"{headline}; ceiling = control (real holdout) vs original at "
                                     "the same n")
        if value > ceiling + 0.01:
            warning = (f"accuracy {value:.3f} is above the ceiling {ceiling:.3f} that real held-out rows "
                       "reach: the release is closer to the training rows than fresh data is (copies? "
                       "see exact_matches and dcr)")
    else:
        headline = (f"synthetic reaches {value:.3f}; no ceiling: give a control table (real rows held "
                    "out from training) to see what a perfect generator reaches at this n")
        baseline = Baseline(None, "no ceiling: give a control table (real rows held out from training)")
    details = {
        "ceiling": ceiling, "ratio": ratio, "headline": headline, **levels,
        "n_original": ref.n, "n_synthetic": n_s, "n_control": n_c or None, "n_used": m,
        "from_original_stats": t.original is None,
        "coarse_profile": int(ref.params.get("min_count", 1)) > 1,
        "columns": columns, "pairs": pairs, "triples": triples,
        "params": {"max_bins": max_bins, "max_categories": max_categories, "n_triples": n_triples},
        "method": "1 - total variation distance of binned distributions (quantile bins for numbers, "
                  "top categories + '(other)', missing its own bin); ceiling = control vs original at "
                  "the same n; association = Cramer's V of the binned pair",
    }
    if math.isnan(value):
        raise MetricError("no accuracy could be computed (empty tables)")
    return MetricResult("accuracy", "fidelity", value, "higher is better", baseline=baseline, ci=None,
                        n=m, warning=warning, details=details)
