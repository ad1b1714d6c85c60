"""The real table's side of the quality report, as statistics: :class:`RealSummary`.

``quality_report`` always scores a release against a summary of the real table (built from its rows,
or read from a ``synthguard profile`` file), so the run with the rows and the run with the profile
go through the same code and give the same numbers.

Per column: the distinct non-missing values with their counts (numerical values rounded to 14
decimals, datetimes as int64 nanoseconds: the exact empirical distribution KSComplement needs), or,
for a coarse profile, ``ecdf_points`` quantiles (KS then approximate to about ``1 / ecdf_points``);
the 11 equal-width bin edges of the non-missing values; category labels with their counts.
Per pair: the real Pearson r (numeric pairs), or the real joint counts of the binned/coded pair as
sparse ``(a, b, count)`` cells under both binnings, with the real Cramer's V.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ...core.results import to_jsonable
from ._association import cramers_v, pearson
from ._columns import CONTINUOUS, datetime_ns, numeric_values

#: SDMetrics' pseudo-count for a category seen only in the synthetic data.
PSEUDO_COUNT = 1e-6
N_BINS = 10
BINNINGS = ("separate", "shared")


def _label_key(v: Any) -> tuple[str, str]:
    return (type(v).__name__, str(v))


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def continuous_values(series: pd.Series) -> np.ndarray:
    """Non-missing values as KSComplement compares them (numbers rounded to 14 decimals; datetimes
    as int64 nanoseconds)."""
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        ns, mask = datetime_ns(series)
        return ns[~mask]
    a = numeric_values(series)
    return np.round(a[~np.isnan(a)], 14)


@dataclass(frozen=True)
class ColumnSummary:
    """One real column (see the module docstring)."""

    name: str
    sdtype: str
    n_rows: int
    values: np.ndarray | None = None  # continuous: sorted distinct values (or quantile points)
    counts: np.ndarray | None = None  # their counts (ones for quantile points)
    exact: bool = True
    edges: np.ndarray | None = None  # continuous: 11 equal-width edges of the non-missing values
    constant: bool = False
    labels: tuple[Any, ...] = ()  # discrete: categories, sorted by (type, text)
    label_counts: np.ndarray | None = None
    rare_count: int = 0  # discrete, coarse profile: rows in categories left out

    @property
    def continuous(self) -> bool:
        return self.sdtype in CONTINUOUS

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "sdtype": self.sdtype, "n_rows": self.n_rows,
                               "exact": self.exact}
        if self.continuous:
            out.update(values=self.values, counts=self.counts, edges=self.edges, constant=self.constant)
        else:
            out.update(labels=list(self.labels), label_counts=self.label_counts, rare_count=self.rare_count)
        return to_jsonable(out)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ColumnSummary:
        if d["sdtype"] in CONTINUOUS:
            dt = np.int64 if d["sdtype"] == "datetime" and d.get("exact", True) else np.float64
            edges = d.get("edges")
            return cls(d["name"], d["sdtype"], int(d["n_rows"]), np.asarray(d["values"], dtype=dt),
                       np.asarray(d["counts"], dtype=np.int64), bool(d.get("exact", True)),
                       None if edges is None else np.asarray(edges, dtype=np.float64),
                       bool(d.get("constant", False)))
        return cls(d["name"], d["sdtype"], int(d["n_rows"]), exact=bool(d.get("exact", True)),
                   labels=tuple(d["labels"]), label_counts=np.asarray(d["label_counts"], dtype=np.int64),
                   rare_count=int(d.get("rare_count", 0)))


def summarise_column(series: pd.Series, sdtype: str, *, exact: bool = True, ecdf_points: int = 1001,
                     min_count: int = 1) -> ColumnSummary:
    """Summary of one real column (``exact=False``: quantile points / rare categories left out)."""
    n = len(series)
    if sdtype in CONTINUOUS:
        vals = continuous_values(series)
        if exact or len(vals) <= ecdf_points:
            values, counts = np.unique(vals, return_counts=True)
            is_exact = True
        else:
            values = np.quantile(vals.astype("float64"), np.linspace(0.0, 1.0, ecdf_points))
            counts = np.ones(len(values), dtype=np.int64)
            is_exact = False
        x = numeric_values(series)
        finite = x[~np.isnan(x)]
        edges = np.histogram_bin_edges(finite, bins=N_BINS) if finite.size else None
        constant = finite.size == 0 or bool(finite.min() == finite.max())
        return ColumnSummary(series.name if isinstance(series.name, str) else str(series.name), sdtype,
                             n, values, counts.astype(np.int64), is_exact, edges, constant)
    s = series.dropna()
    codes, uniques = pd.factorize(s, use_na_sentinel=True)
    counts = np.bincount(codes, minlength=len(uniques))
    labels = [_plain(u) for u in uniques.tolist()]
    keep = [i for i in range(len(labels)) if exact or counts[i] >= min_count]
    keep.sort(key=lambda i: _label_key(labels[i]))  # loop over categories, not rows
    rare = int(counts.sum() - counts[keep].sum()) if keep else int(counts.sum())
    return ColumnSummary(str(series.name), sdtype, n, exact=exact or rare == 0,
                         labels=tuple(labels[i] for i in keep),
                         label_counts=counts[keep].astype(np.int64), rare_count=rare)


# ---------------------------------------------------------------- column shapes


def ks_against(summary: ColumnSummary, synthetic: pd.Series) -> float:
    """``1 - KS`` between the summarised real column and a synthetic column."""
    b = np.sort(continuous_values(synthetic), kind="stable")
    values, counts = summary.values, summary.counts
    if values is None or counts is None or len(values) == 0 or len(b) == 0:
        return float("nan")
    if summary.sdtype == "datetime" and values.dtype != b.dtype:
        b = b.astype(values.dtype)
    grid = np.concatenate([values, b])
    cum = np.cumsum(counts)
    idx = np.searchsorted(values, grid, side="right")
    fa = np.where(idx > 0, cum[np.maximum(idx - 1, 0)], 0) / cum[-1]
    fb = np.searchsorted(b, grid, side="right") / len(b)
    return 1.0 - float(np.max(np.abs(fa - fb)))


def _index_labels(labels: Sequence[Any], values: pd.Series) -> tuple[np.ndarray, int]:
    """Positions of ``values`` in ``labels``; unseen values get ``len(labels) + j`` (one per value)."""
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64), 0
    idx = pd.Index(list(labels), dtype=object).get_indexer(values.astype(object)) if labels else \
        np.full(len(values), -1)
    idx = np.asarray(idx, dtype=np.int64)
    unseen = idx < 0
    n_new = 0
    if unseen.any():
        new_codes, uniq = pd.factorize(values[unseen].astype(object))
        idx[unseen] = len(labels) + new_codes
        n_new = len(uniq)
    return idx, n_new


def tv_against(summary: ColumnSummary, synthetic: pd.Series) -> float:
    """``1 - TVD`` of the category frequencies (missing dropped; SDMetrics' 1e-6 pseudo-count for a
    category only the synthetic column has)."""
    s = synthetic.dropna()
    real = summary.label_counts
    if real is None or (real.sum() + summary.rare_count) == 0 or len(s) == 0:
        return float("nan")
    idx, n_new = _index_labels(summary.labels, s)
    k = len(summary.labels)
    # the real side: kept categories, then one bin per synthetic-only category, then the rare mass
    real_counts = np.concatenate([real, np.zeros(n_new), [summary.rare_count]]).astype("float64")
    syn_counts = np.bincount(idx, minlength=k + n_new + 1).astype("float64")
    real_counts[(real_counts == 0) & (syn_counts > 0)] += PSEUDO_COUNT
    p_real = real_counts / real_counts.sum()
    p_syn = syn_counts / syn_counts.sum()
    return 1.0 - 0.5 * float(np.abs(p_real - p_syn).sum())


# ---------------------------------------------------------------- pair keys


def bin_with_edges(values: np.ndarray, edges: np.ndarray | None, binning: str) -> np.ndarray:
    """Bin index 0..10 of a continuous column.

    ``"separate"``: SDMetrics' report binning (``digitize`` on the 11 edges; the maximum and missing
    values both in the last bin). ``"shared"``: right-closed bins at the inner edges, outer bins open,
    missing values in bin 10.
    """
    if edges is None:
        return np.full(len(values), N_BINS, dtype=np.int64)
    if binning == "separate":
        return np.digitize(values, edges).astype(np.int64) - 1
    codes = np.searchsorted(edges[1:-1], values, side="left").astype(np.int64)
    codes[np.isnan(values)] = N_BINS
    return codes


def _own_edges(values: np.ndarray) -> np.ndarray | None:
    finite = values[~np.isnan(values)]
    return np.histogram_bin_edges(finite, bins=N_BINS) if finite.size else None


def pair_keys(summary: ColumnSummary, series: pd.Series, binning: str, *,
              real: bool) -> tuple[np.ndarray, int]:
    """Key index of every row for the pair tables, and the number of keys.

    Continuous: bin 0..10 (``"separate"`` bins a synthetic column with its own edges, as SDMetrics'
    report does; ``"shared"`` with the real edges). Discrete: the summary's label index, then
    ``(rare)`` and ``(missing)``, then one key per category the summary lacks.
    """
    if summary.continuous:
        x = numeric_values(series)
        edges = summary.edges if (real or binning == "shared") else _own_edges(x)
        return bin_with_edges(x, edges, binning), N_BINS + 1
    k = len(summary.labels)
    missing = series.isna().to_numpy()
    out = np.full(len(series), k + 1, dtype=np.int64)
    idx, n_new = _index_labels(summary.labels, series[~missing])
    idx = np.where(idx >= k, idx + 2, idx)  # room for (rare) and (missing)
    if real and n_new:
        idx = np.where(idx >= k + 2, k, idx)  # categories left out of a coarse profile
        n_new = 0
    out[~missing] = idx
    return out, k + 2 + n_new


@dataclass(frozen=True)
class PairSummary:
    """The real side of one column pair."""

    column_1: str
    column_2: str
    r: float | None = None  # numeric pairs
    tables: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # binning -> cells, V

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable({"column_1": self.column_1, "column_2": self.column_2, "r": self.r,
                            "tables": self.tables})

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PairSummary:
        tables = {b: {"a": np.asarray(t["a"], dtype=np.int64), "b": np.asarray(t["b"], dtype=np.int64),
                      "n": np.asarray(t["n"], dtype=np.int64),
                      "v": float("nan") if t.get("v") is None else float(t["v"])}
                  for b, t in dict(d.get("tables") or {}).items()}
        r = None if tables else (float("nan") if d.get("r") is None else float(d["r"]))
        return cls(d["column_1"], d["column_2"], r, tables)


@dataclass(frozen=True)
class RealSummary:
    """Everything ``quality_report`` needs from the real table."""

    n_rows: int
    columns: Mapping[str, ColumnSummary]
    pairs: tuple[PairSummary, ...]

    @property
    def exact(self) -> bool:
        return all(c.exact for c in self.columns.values())

    def to_dict(self) -> dict[str, Any]:
        return {"n_rows": self.n_rows, "columns": [c.to_dict() for c in self.columns.values()],
                "pairs": [p.to_dict() for p in self.pairs]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RealSummary:
        cols = [ColumnSummary.from_dict(c) for c in d["columns"]]
        return cls(int(d["n_rows"]), {c.name: c for c in cols},
                   tuple(PairSummary.from_dict(p) for p in d["pairs"]))


def summarise_real(real: pd.DataFrame, schema_or_sdtypes: Any, *, exact_shapes: bool = True,
                   ecdf_points: int = 1001, min_count: int = 1) -> RealSummary:
    """Summarise the real table's statistical columns (numerical, datetime, categorical, boolean)."""
    from ._columns import STATISTICAL

    if isinstance(schema_or_sdtypes, Mapping):
        sdtypes = dict(schema_or_sdtypes)
    else:
        sdtypes = {c: s.sdtype for c, s in schema_or_sdtypes.columns.items()}
    used = {c: s for c, s in sdtypes.items() if s in STATISTICAL}
    cols = {c: summarise_column(real[c], s, exact=exact_shapes, ecdf_points=ecdf_points,
                                min_count=min_count) for c, s in used.items()}
    nums = {c: numeric_values(real[c]) for c, s in cols.items() if s.continuous}
    keys: dict[tuple[str, str], tuple[np.ndarray, int]] = {}
    for c, s in cols.items():
        for b in BINNINGS if s.continuous else ("separate",):
            keys[(c, b)] = pair_keys(s, real[c], b, real=True)
    pairs = []
    for c1, c2 in itertools.combinations(list(cols), 2):
        s1, s2 = cols[c1], cols[c2]
        if s1.continuous and s2.continuous:
            pairs.append(PairSummary(c1, c2, r=pearson(nums[c1], nums[c2])))
            continue
        tables = {}
        for b in BINNINGS:
            a, _ = keys[(c1, b if s1.continuous else "separate")]
            bb, nb = keys[(c2, b if s2.continuous else "separate")]
            cells, counts = np.unique(a * nb + bb, return_counts=True)
            tables[b] = {"a": cells // nb, "b": cells % nb, "n": counts, "v": cramers_v(a, bb)}
        pairs.append(PairSummary(c1, c2, tables=tables))
    return RealSummary(len(real), cols, tuple(pairs))


def contingency_against(pair: PairSummary, binning: str, syn_a: np.ndarray, syn_b: np.ndarray,
                        n_real: int) -> float:
    """``1 - 1/2 L1`` between the real joint frequencies (summary cells) and the synthetic ones."""
    t = pair.tables[binning]
    nb = int(max(int(t["b"].max(initial=0)), int(syn_b.max(initial=0)))) + 1
    real_cells = t["a"] * nb + t["b"]
    syn_cells = syn_a * nb + syn_b
    uniq, inv = np.unique(np.concatenate([real_cells, syn_cells]), return_inverse=True)
    inv = inv.ravel()
    p_real = np.bincount(inv[:len(real_cells)], weights=t["n"].astype("float64"),
                         minlength=len(uniq)) / n_real
    p_syn = np.bincount(inv[len(real_cells):], minlength=len(uniq)) / len(syn_cells)
    return 1.0 - 0.5 * float(np.abs(p_real - p_syn).sum())


def is_nan(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))
