"""``accuracy``: binned univariate, bivariate and trivariate accuracy against its noise ceiling.

accuracy = 1 - total variation distance between the original's and the synthetic table's binned
distributions (see :mod:`._binning` for the bins: mostlyai-qa 1.10's by default), for every column,
every pair of columns and a seeded sample of column triples (up to 10,000, mostlyai-qa's cap).
``value`` = the mean of the three level means over the whole synthetic table: the number
mostlyai-qa reports as overall accuracy for the same training table and release.

The ceiling: the same accuracies of the control table (real rows held out from training) against the
original, at the same number of rows. Synthetic and control are subsampled (seeded, by a keyed hash
of each row's content, so row order never matters) to the smaller of the two sizes, so both sides
carry the same sampling noise; ``ratio`` and the headline compare at that n. A perfect generator --
one drawing fresh rows from the population -- scores the ceiling in expectation; "synthetic reaches X
of the achievable Y" reads value against baseline. A value clearly above the ceiling means the
release is closer to the training rows than fresh real data is: a sign of copying. mostlyai-qa's own
reference (``expected_ceiling``, its ``accuracy_max``: the accuracy expected from sampling noise
alone, from the original's frequencies) is stated beside it and needs no control.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ...core.results import Baseline, MetricResult, beyond_ceiling
from ...errors import MetricError
from ...registry import Context, Interval, Param, register
from ...stats import cramers_v_table
from ._binning import (
    BINNINGS,
    Reference,
    bin_matrix,
    build_reference,
    expected_accuracy,
    joint_counts,
    tv_accuracy,
)
from ._presentation import accuracy_headline, accuracy_sections

__all__ = ["accuracy", "reference_for"]


def furthest_below(columns: list[dict[str, Any]], top: int = 3) -> str:
    """The columns furthest below their own ceiling (control accuracy minus the release's; only
    columns below it), a clause for the baseline's description (so the console names them beside
    the headline).

    Examples
    --------
    >>> furthest_below([{"column": "a", "accuracy": 0.5, "control_accuracy": 0.99},
    ...                 {"column": "b", "accuracy": 0.97, "control_accuracy": 0.98}])
    '; furthest below their ceiling: a 0.500 (0.990), b 0.970 (0.980)'
    >>> furthest_below([{"column": "a", "accuracy": 0.99, "control_accuracy": 0.98}])
    ''
    """
    rows = [r for r in columns if r.get("control_accuracy") is not None
            and r["accuracy"] < r["control_accuracy"]]  # only columns below: never "below" a column above
    rows.sort(key=lambda r: (r["accuracy"] - r["control_accuracy"], str(r["column"])))
    if not rows:
        return ""
    return "; furthest below their ceiling: " + ", ".join(
        f"{r['column']} {r['accuracy']:.3f} ({r['control_accuracy']:.3f})" for r in rows[:top])


def reference_for(ctx: Context, *, max_bins: int, max_categories: int, n_triples: int,
                  binning: str = "mostlyai", min_category_count: int = 5) -> Reference:
    """The original's binned counts: from the original rows, or from the profile given instead.

    A profile's column triples are used as profiled (at most ``n_triples`` of them are asked for;
    the result states how many were used).

    Raises
    ------
    MetricError
        When the profile was made with other binning parameters.
    """
    prof = getattr(ctx.tables, "original_stats", None)
    params: dict[str, Any] = {"max_bins": max_bins, "max_categories": max_categories, "binning": binning}
    if binning == "mostlyai":
        params["min_category_count"] = min_category_count
    if ctx.tables.original is None:
        if prof is None or prof.accuracy is None:
            raise MetricError("needs the original rows or a profile with binned counts")
        ref = prof.accuracy
        if {k: ref.params.get(k) for k in params} != params:
            raise MetricError(f"the original statistics were profiled with {dict(ref.params)}, not "
                              f"{params}: run 'synthguard profile' with these parameters or use its own")
        if len(ref.triples) > n_triples:
            ref = Reference(ref.specs, ref.n, ref.uni, ref.pairs, ref.triples[:n_triples],
                            ref.tri[:n_triples], ref.params)
        return ref
    params["n_triples"] = n_triples
    key = ("accuracy_reference", tuple(sorted(params.items())))

    def compute() -> Reference:
        cols = ctx.tables.schema.tabular_columns()
        if not cols:
            raise MetricError("no tabular column to bin (only text or id columns)")
        block = ctx.encoded.block("original", cols)
        return build_reference(block, ctx.encoded.encoder, cols, rng=ctx.rng("triples"), **params)

    return ctx.memo(key, compute)


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


def _expected(ref: Reference, n_other: int) -> dict[str, np.ndarray]:
    """mostlyai-qa's ``accuracy_max`` of every column, pair and triple for ``n_other`` rows."""
    return {key: np.asarray([expected_accuracy(r, n_other) for r in counts])
            for key, counts in (("uni", ref.uni), ("pairs", ref.pairs), ("tri", ref.tri))}


def _mean(x: np.ndarray) -> float:
    x = x[~np.isnan(x)]
    return float(x.mean()) if x.size else float("nan")


def _assoc(counts: np.ndarray, shape: tuple[int, int]) -> float:
    return cramers_v_table(counts.reshape(shape))


_MAX_TRIPLES_LISTED = 200


@register(
    "accuracy", family="fidelity", direction="higher is better", optional_needs=("control",),
    from_stats=True,
    params=[
        Param("max_bins", 10, "bins of a numerical/datetime column (learnt from the original)", int,
              interval=Interval(2, 50)),
        Param("max_categories", 10, "most frequent categories kept per column; the rest are '(other)'",
              int, interval=Interval(2, 50)),
        Param("n_triples", 10_000, "column triples sampled (seeded) for the trivariate accuracy "
              "(mostlyai-qa: 10000)", int, interval=Interval(0, 100_000)),
        Param("binning", "mostlyai", "'mostlyai' = mostlyai-qa 1.10's bins (order-statistic edges with "
              "min and max, closed on the left, one bin per value up to max_bins values, categories "
              "kept only when seen min_category_count times); 'quantile' = deciles closed on the right",
              str, choices=BINNINGS),
        Param("min_category_count", 5, "binning='mostlyai': rows a category needs to keep its own bin "
              "(mostlyai-qa: 5)", "positive int"),
    ],
    description="mean binned accuracy (1 - total variation distance) over columns, pairs and sampled "
                "triples (mostlyai-qa's bins), against the ceiling the control (real holdout) reaches "
                "at the same n and mostlyai-qa's expected ceiling",
    presets=('full',),
    order=310
)
def accuracy(ctx: Context, *, max_bins: int = 10, max_categories: int = 10, n_triples: int = 10_000,
             binning: str = "mostlyai", min_category_count: int = 5) -> MetricResult:
    """Univariate, bivariate and trivariate accuracy of the release, with its control ceiling.

    Parameters
    ----------
    ctx : Context
        The evaluation context (the original may be given as a profile, see ``synthguard profile``).
    max_bins : int
        Bins per numerical or datetime column.
    max_categories : int
        Categories kept per categorical column (the rest share an ``(other)`` bin).
    n_triples : int
        Column triples sampled for the trivariate level (all of them when there are fewer).
    binning : {"mostlyai", "quantile"}
        mostlyai-qa 1.10's bins (default) or synthguard's earlier deciles.
    min_category_count : int
        With ``binning="mostlyai"``: a category seen fewer times in the original shares ``(other)``.

    Returns
    -------
    MetricResult
        ``value`` = mean of the univariate, bivariate and trivariate means over the whole synthetic
        table; ``baseline`` = the same for control vs original at equal n (the ceiling); details
        ``ceiling``, ``ratio`` (at equal n), ``expected_ceiling`` (mostlyai-qa's ``accuracy_max``),
        ``headline``, ``univariate``/``bivariate``/``trivariate`` summaries, per-column ``columns``
        (with binned counts for charts), per-pair ``pairs`` (with the association of each side),
        ``triples`` (the lowest 200 when there are more).
    """
    ref = reference_for(ctx, max_bins=max_bins, max_categories=max_categories, n_triples=n_triples,
                        binning=binning, min_category_count=min_category_count)
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
        mats[role] = bin_matrix(block, ctx.encoded.encoder, ref.specs)
        rows = _subsample(ctx, role, cols, m)
        if rows is not None:
            mats[f"{role}@m"] = mats[role][rows]
    syn = _score(ref, mats["synthetic"])
    ctl = _score(ref, mats.get("control@m", mats["control"])) if n_c else None
    syn_m = _score(ref, mats["synthetic@m"]) if "synthetic@m" in mats else syn
    expected = _expected(ref, n_s)

    levels: dict[str, dict[str, Any]] = {}
    for level, key, count in (("univariate", "uni", len(cols)), ("bivariate", "pairs", len(ref.pairs)),
                              ("trivariate", "tri", len(ref.triples))):
        if count == 0:
            continue
        levels[level] = {"synthetic": _mean(syn[key]), "control": _mean(ctl[key]) if ctl else None,
                         "expected": _mean(expected[key]), "count": count}
        if syn_m is not syn:
            levels[level]["synthetic_at_n_used"] = _mean(syn_m[key])
    value = float(np.mean([v["synthetic"] for v in levels.values()]))
    value_m = float(np.mean([_mean(syn_m[k]) for k, lv in (("uni", "univariate"), ("pairs", "bivariate"),
                                                            ("tri", "trivariate")) if lv in levels]))
    ceiling = float(np.mean([v["control"] for v in levels.values()])) if ctl else None
    expected_ceiling = float(np.mean([v["expected"] for v in levels.values()]))
    ratio = value_m / ceiling if ceiling else None

    labels = [s.labels() for s in ref.specs]
    sdtypes = {c: t.schema.sdtype(c) for c in cols}
    columns = []
    for j, c in enumerate(cols):
        row: dict[str, Any] = {"column": c, "sdtype": sdtypes[c], "accuracy": float(syn["uni"][j]),
                               "control_accuracy": float(ctl["uni"][j]) if ctl else None,
                               "expected_accuracy": float(expected["uni"][j]),
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
                      "expected_accuracy": float(expected["pairs"][k]),
                      "association_original": _assoc(ref.pairs[k], shape),
                      "association_synthetic": _assoc(syn["pair_counts"][k], shape),
                      "association_control": _assoc(ctl["pair_counts"][k], shape) if ctl else None})
    listed = np.argsort(syn["tri"], kind="stable")[:_MAX_TRIPLES_LISTED] \
        if len(ref.triples) > _MAX_TRIPLES_LISTED else np.arange(len(ref.triples))
    triples = [{"columns": [cols[a] for a in ref.triples[k]], "accuracy": float(syn["tri"][k]),
                "control_accuracy": float(ctl["tri"][k]) if ctl else None}
               for k in sorted(int(v) for v in listed)]

    warning = None
    at_m = "" if syn_m is syn else f" (on a seeded subsample of {m} of its {n_s} rows; {value:.3f} on all)"
    if ceiling is not None:
        headline = (f"synthetic reaches {value_m:.3f}{at_m} of the achievable {ceiling:.3f} "
                    f"({100 * value_m / ceiling:.1f} % of the ceiling, n = {m} rows each)")
        baseline = Baseline(ceiling, f"{headline}; ceiling = control (real holdout) vs original at "
                                     f"the same n{furthest_below(columns)}")
        if beyond_ceiling(value_m, ceiling):
            warning = (f"accuracy {value_m:.3f} is above the ceiling {ceiling:.3f} that real held-out "
                       "rows reach, more than half the way to a verbatim copy's 1.0: the release is "
                       "closer to the training rows than fresh data is (copies? see exact_matches "
                       "and dcr)")
    else:
        headline = (f"synthetic reaches {value:.3f} (mostlyai-qa's expected ceiling "
                    f"{expected_ceiling:.3f}); no measured ceiling: give a control table (real rows "
                    "held out from training) to see what a perfect generator reaches at this n")
        baseline = Baseline(None, "no ceiling: give a control table (real rows held out from training)")
    details = {
        "ceiling": ceiling, "ratio": ratio, "expected_ceiling": expected_ceiling,
        "value_at_n_used": value_m, "headline": headline, **levels,
        "n_original": ref.n, "n_synthetic": n_s, "n_control": n_c or None, "n_used": m,
        "from_original_stats": t.original is None,
        "coarse_profile": int(ref.params.get("min_count", 1)) > 1,
        "columns": columns, "pairs": pairs, "triples": triples, "triples_listed": len(triples),
        "params": {"max_bins": max_bins, "max_categories": max_categories, "n_triples": n_triples,
                   "binning": binning, "min_category_count": min_category_count},
        "method": ("1 - total variation distance of binned distributions ("
                   + ("mostlyai-qa 1.10's bins: order-statistic edges incl. min and max, closed on the "
                      "left, one bin per value for <= max_bins values, categories kept when seen "
                      "min_category_count times" if binning == "mostlyai" else
                      "quantile bins closed on the right, top categories")
                   + ", '(other)', missing its own bin) over the whole synthetic table; ceiling = control "
                   "vs original at the same n (ratio compares there); expected_ceiling = mostlyai-qa's "
                   "accuracy_max; association = Cramer's V of the binned pair"),
    }
    if math.isnan(value):
        raise MetricError("no accuracy could be computed (empty tables)")
    return MetricResult("accuracy", "fidelity", value, "higher is better", baseline=baseline, ci=None,
                        n=n_s, warning=warning, details=details, sections=accuracy_sections(details),
                        headline=accuracy_headline(value_m if ceiling is not None else value,
                                                   ceiling, headline))
