"""Exact k-anonymity and distinct l-diversity on quasi-identifier equivalence classes.

An equivalence class is the set of rows sharing the same values on every quasi-identifier (exact
values, missing a value of its own; ``continuous_column_names`` may be cut into equal-width bins
from the original data first). ``k`` = size of the smallest class; distinct ``l`` = smallest number
of distinct sensitive tuples in a class. Both are computed for the original and the synthetic
table (the value is the synthetic table's, the release), with the share of records in classes
below the threshold and the class-size distribution. No clustering stand-ins.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.arrays import unique_codes
from ...core.results import Baseline, Evidence, MetricResult
from ...errors import ConfigError, MetricError
from ...registry import LEVEL_FROM_THRESHOLDS, Context, Param, register
from ...stats import wilson_interval
from ._cap_analysis import CLASS_SIZE_BINS
from ._common import (
    continuous_bins,
    resolve_fields,
    thresholds,
)

__all__ = ["k_anonymity", "k_anonymity_result", "l_diversity"]


def _common_params() -> list[Param]:
    return [
        Param("quasi_identifiers", None, "quasi-identifier columns (default: the metadata's "
              "quasi_identifiers)", (list, tuple)),
        Param("continuous_column_names", None, "quasi-identifiers to cut into equal-width bins from the "
              "original data (default: none, exact values)", (list, tuple)),
        Param("num_discrete_bins", 10, "number of bins for the continuous columns", "positive int"),
        Param("max_records", 100, "how many synthetic rows of the smallest classes to list (0 = none)", "non-negative int"),
    ]


def _continuous(ctx: Context, name: str, value: Any, used: list[str]) -> list[str]:
    cont = [str(c) for c in ([value] if isinstance(value, str) else value or [])]
    bad = [c for c in cont if c not in ctx.tables.schema.columns]
    if bad:
        raise ConfigError(f"metric {name!r}: continuous_column_names names column(s) {bad} that the data "
                          "does not have")
    return [c for c in cont if c in used]


def _anonymised_evidence(ctx: Context, k_below: int, n: int, statistic: str) -> Evidence | None:
    """Evidence only for an anonymised release (each release row is a real person): the share of
    release records in classes below the threshold, against a null of 0. For a synthetic release
    the classes are made of synthetic rows and say nothing about real people: no evidence."""
    if getattr(ctx, "release_type", "synthetic") != "anonymised":
        return None
    return Evidence.from_binomial(
        statistic, int(k_below), int(n), 0.0,
        baseline="0: in an anonymised release no real person should sit in a class below the "
                 "threshold",
        note="release_type 'anonymised': each release row stands for a real person")


_SYNTHETIC_NOTE = ("informative only for a synthetic release (release_type 'synthetic'): its classes "
                   "are made of synthetic rows, not real people; replicated_uniques and disco measure "
                   "disclosure on real records")


def _size_histogram(sizes: np.ndarray) -> list[dict[str, Any]]:
    """Classes and records per class-size bin."""
    out = []
    for lo, hi in CLASS_SIZE_BINS:  # a handful of bins
        sel = (sizes >= lo) & (sizes <= (hi if hi is not None else np.iinfo(np.int64).max))
        if sel.any():
            label = f"{lo}" if lo == hi else (f"{lo}-{hi}" if hi is not None else f"{lo}+")
            out.append({"class_size": label, "n_classes": int(sel.sum()),
                        "n_records": int(sizes[sel].sum())})
    return out


def _size_histogram_counts(sizes: np.ndarray, counts: np.ndarray) -> list[dict[str, Any]]:
    """:func:`_size_histogram` from distinct class sizes and the number of classes of each size."""
    out = []
    for lo, hi in CLASS_SIZE_BINS:  # a handful of bins
        sel = (sizes >= lo) & (sizes <= (hi if hi is not None else np.iinfo(np.int64).max))
        if sel.any():
            label = f"{lo}" if lo == hi else (f"{lo}-{hi}" if hi is not None else f"{lo}+")
            out.append({"class_size": label, "n_classes": int(counts[sel].sum()),
                        "n_records": int((sizes[sel] * counts[sel]).sum())})
    return out


@register("k_anonymity", family="disclosure", direction="higher is safer",
          params=[*_common_params(),
                  Param("k", 5, "class-size threshold: records in smaller classes are reported", "positive int")],
          thresholds={"medium": 4, "high": 1}, aliases=("kanonymity",),
          description="size of the smallest quasi-identifier equivalence class of the synthetic table "
                      "(exact classes), with the share of records in classes smaller than k",
          risk='singling_out',
          knowledge=("a person's quasi-identifiers; looks for release rows that share them with few "
                     'others'),
          presets=('quick', 'privacy', 'full'),
          order=190,
          backend='any',
          anonymised_only=True,
          explainer=('The smallest group of release rows sharing the quasi-identifiers (k); per person '
                     'for anonymised releases.'))
def k_anonymity(ctx: Context, *, quasi_identifiers: Any = None, continuous_column_names: Any = None,
                num_discrete_bins: int = 10, max_records: int = 100, k: int = 5) -> MetricResult:
    """Exact k-anonymity of the original and the synthetic table.

    Parameters
    ----------
    ctx : Context
        Evaluation context.
    quasi_identifiers : list of str, optional
        Default: the metadata's ``quasi_identifiers``.
    continuous_column_names : list of str, optional
        Quasi-identifiers binned into ``num_discrete_bins`` equal-width bins (edges from the original).
    num_discrete_bins : int
        Number of bins.
    max_records : int
        Synthetic rows of the smallest classes listed in ``records``.
    k : int
        Threshold for the share of records in classes smaller than ``k``.
    """
    name = "k_anonymity"
    qis, _ = resolve_fields(ctx, name, "quasi_identifiers", quasi_identifiers, None, None)
    cont = _continuous(ctx, name, continuous_column_names, qis)
    data = ctx.data
    if data.n_rows("synthetic") == 0:
        raise MetricError("the synthetic table has no rows")
    bins = continuous_bins(data, cont, num_discrete_bins)
    # one row per equivalence class: its size in each table
    classes = data.key_groups(qis, ("original", "synthetic"), bins=bins)
    per_role = {}
    for role in ("original", "synthetic"):
        n = f"n_{role}"
        sizes = classes.counts(lambda f, n=n: f.loc[f[n] > 0, n])  # classes per class size
        per_role[role] = (sizes.index.to_numpy(np.int64), sizes.to_numpy(np.int64))
    (unique_both,) = classes.sums(lambda f: (f["n_synthetic"] == 1) & (f["n_original"] == 1))
    # synthetic records in small classes; how many original rows share their quasi-identifiers
    rows = data.key_rows("synthetic", {"size_s": (qis, ("synthetic",)), "size_o": (qis, ("original",))},
                         bins=bins)
    small = rows.top(max_records, ["size_s", "pos"], [True, True], where=lambda f: f["size_s"] < k)
    recs = [{"synthetic_row": int(i), "class_size": int(a), "original_class_size": int(b)}
            for i, a, b in zip(small["pos"], small["size_s"], small["size_o"], strict=True)]
    return k_anonymity_result(thresholds(ctx, name), qis, cont, k, per_role, unique_both, recs,
                              release_type=getattr(ctx, "release_type", "synthetic"))


def k_anonymity_result(thresholds: Any, qis: list[str], cont: list[str], k: int,
                       class_sizes: dict[str, tuple[np.ndarray, np.ndarray]], unique_both: int,
                       records: list[dict[str, Any]], *, release_type: str = "synthetic") -> MetricResult:
    """The :func:`k_anonymity` result from its class-size tables.

    ``class_sizes[role] = (sizes, n_classes)``: the distinct equivalence-class sizes of the role and
    how many classes have each; ``unique_both`` = synthetic rows unique in both tables.
    """
    out: dict[str, Any] = {"quasi_identifiers": qis, "continuous_column_names": cont, "k": k}
    for role in ("original", "synthetic"):
        sizes, counts = (np.asarray(a, dtype=np.int64) for a in class_sizes[role])
        n = int((sizes * counts).sum())
        k_below = int((sizes * counts)[sizes < k].sum())
        summ = {"k": int(sizes.min()), "n_records": n, "n_classes": int(counts.sum()),
                "n_records_below": k_below, "share_records_below": k_below / n,
                "share_records_below_ci": list(wilson_interval(k_below, n))}
        summ["class_sizes"] = _size_histogram_counts(sizes, counts)
        out[role] = summ
    value = out["synthetic"]["k"]
    out["synthetic_unique_in_original"] = int(unique_both)
    level = LEVEL_FROM_THRESHOLDS
    warning = None
    if out["synthetic"]["n_records_below"]:
        warning = (f"{out['synthetic']['n_records_below']} synthetic records lie in classes smaller than "
                   f"k={k}; {out['synthetic_unique_in_original']} of them are unique in both tables")
    n_syn = out["synthetic"]["n_records"]
    evidence = _anonymised_evidence(
        _ReleaseType(release_type), out["synthetic"]["n_records_below"], n_syn,
        f"share of release records (real people) in quasi-identifier classes of fewer than k={k} "
        "records")
    if evidence is None:
        out["verdict_role"] = _SYNTHETIC_NOTE
    return MetricResult(name="k_anonymity", family="disclosure", value=float(value),
                        direction="higher is safer",
                        baseline=Baseline(float(out["original"]["k"]), "k of the original table"),
                        ci=None, n=n_syn, risk_level=level, warning=warning, details=out,
                        records=records, evidence=evidence)


def _diversity_summary(table: Any, l: int) -> dict[str, Any]:  # noqa: E741
    """The :func:`l_diversity` summary of one table from its ``(class size, distinct sensitive
    tuples) -> rows`` counts (a class of size ``s`` puts ``s`` rows under its pair: classes = rows /
    size, exactly)."""
    size = table.index.get_level_values(0).to_numpy(np.int64)
    distinct = table.index.get_level_values(1).to_numpy(np.int64)
    rows = table.to_numpy(np.int64)
    classes = rows // size
    n = int(rows.sum())
    below = int(rows[distinct < l].sum())
    summ = {"l": int(distinct.min()), "n_records": n, "n_classes": int(classes.sum()),
            "n_records_below": below, "share_records_below": below / n,
            "share_records_below_ci": list(wilson_interval(below, n))}
    capped = np.minimum(distinct, 10)
    values = unique_codes(capped)
    per_value = np.bincount(np.searchsorted(values, capped), weights=classes, minlength=values.size)
    summ["distinct_values_per_class"] = [
        {"distinct_sensitive_values": int(v), "n_classes": int(c)}
        for v, c in zip(values, per_value.astype(np.int64), strict=True)]
    return summ


class _ReleaseType:
    """The one attribute :func:`_anonymised_evidence` reads from a context."""

    def __init__(self, release_type: str) -> None:
        self.release_type = release_type


@register("l_diversity", family="disclosure", direction="higher is safer",
          params=[*_common_params(),
                  Param("sensitive_columns", None, "sensitive columns (default: the metadata's sensitive)",
                        (list, tuple)),
                  Param("l", 2, "diversity threshold: records in classes with fewer distinct sensitive "
                        "values are reported", "positive int")],
          thresholds={"medium": 2, "high": 1}, aliases=("ldiversity",),
          description="smallest number of distinct sensitive values in a quasi-identifier equivalence class "
                      "of the synthetic table (distinct l-diversity, exact classes)",
          risk='inference',
          knowledge=("a person's quasi-identifiers; reads the sensitive values of the release rows "
                     'that share them'),
          presets=('privacy', 'full'),
          order=200,
          backend='any',
          anonymised_only=True,
          explainer=('The fewest distinct sensitive values within a group of release rows sharing the '
                     'quasi-identifiers (l).'))
def l_diversity(ctx: Context, *, quasi_identifiers: Any = None, continuous_column_names: Any = None,
                num_discrete_bins: int = 10, max_records: int = 100, sensitive_columns: Any = None,
                l: int = 2) -> MetricResult:  # noqa: E741
    """Exact distinct l-diversity of the original and the synthetic table.

    Parameters
    ----------
    sensitive_columns : list of str, optional
        Default: the metadata's ``sensitive`` columns (matched jointly as a tuple).
    l : int
        Threshold for the share of records in classes with fewer than ``l`` distinct sensitive tuples.

    See :func:`k_anonymity` for the other parameters.
    """
    name = "l_diversity"
    qis, sens = resolve_fields(ctx, name, "quasi_identifiers", quasi_identifiers, "sensitive_columns",
                               sensitive_columns)
    cont = _continuous(ctx, name, continuous_column_names, qis + sens)
    data = ctx.data
    if data.n_rows("synthetic") == 0:
        raise MetricError("the synthetic table has no rows")
    bins = continuous_bins(data, cont, num_discrete_bins)
    out: dict[str, Any] = {"quasi_identifiers": qis, "sensitive_columns": sens,
                           "continuous_column_names": cont, "l": l}
    rels = {}
    for role in ("original", "synthetic"):
        # per row: its class size and the distinct sensitive tuples of its class
        rels[role] = rel = data.key_distinct(role, qis, sens, bins=bins)
        table = rel.counts(lambda f: f[["size", "distinct"]])  # rows per (class size, distinct)
        out[role] = _diversity_summary(table, l)
    n_syn = out["synthetic"]["n_records"]
    value = out["synthetic"]["l"]
    low = rels["synthetic"].top(max_records, ["distinct", "pos"], [True, True],
                                where=lambda f: f["distinct"] < l)
    recs = [{"synthetic_row": int(i), "distinct_sensitive_values": int(v)}
            for i, v in zip(low["pos"], low["distinct"], strict=True)]
    level = LEVEL_FROM_THRESHOLDS
    warning = None
    if out["synthetic"]["n_records_below"]:
        warning = (f"{out['synthetic']['n_records_below']} synthetic records lie in classes with fewer than "
                   f"l={l} distinct sensitive values: their quasi-identifiers reveal the sensitive value")
    evidence = _anonymised_evidence(
        ctx, out["synthetic"]["n_records_below"], n_syn,
        f"share of release records (real people) in quasi-identifier classes with fewer than l={l} "
        "distinct sensitive values")
    if evidence is None:
        out["verdict_role"] = _SYNTHETIC_NOTE
    return MetricResult(name=name, family="disclosure", value=float(value), direction="higher is safer",
                        baseline=Baseline(float(out["original"]["l"]), "l of the original table"),
                        ci=None, n=n_syn, risk_level=level, warning=warning, details=out,
                        records=recs, evidence=evidence)
