"""Binned columns for the ``accuracy`` metric and the data-owner profile.

Two binnings, both learnt from the original table only.

``binning="mostlyai"`` (the default) bins the way mostlyai-qa 1.10 does, so its users get its numbers:

* a column whose values are numbers (numerical, and categorical or boolean columns stored as
  numbers) with at most ``max_bins`` distinct values gets one bin per value; otherwise its edges are
  order statistics of the original's sorted values taken at ``linspace(0, n - 1, k)`` for the first
  ``k`` (from ``max_bins``) giving ``max_bins + 1`` distinct values, so the minimum and the maximum
  are edges; each edge but the last is then floored to the fewest decimals that keep the edges
  distinct; bins are closed on the left, the first and last open to the outside;
* a datetime column: the same order-statistic edges (no per-value rule; one bin when it has one
  value), closed on the left, no flooring;
* any other column: its ``max_categories`` most frequent values (a missing value competes for a
  place), keeping only those seen at least ``min_category_count`` (5) times, plus ``(other)``; an
  empty string always has its own bin (mostlyai-qa's ``(empty)``).

``binning="quantile"`` is synthguard's earlier binning: deciles of the original (fewer when
quantiles coincide), closed on the right, and the ``max_categories`` most frequent categories.

In both, a missing value has its own last bin, and ties between equally frequent categories are
broken by the category's text, so row order never matters (mostlyai-qa keeps the first seen).
Counts are taken with one ``bincount`` per column, pair or triple on combined bin codes (no loop over
rows). The original's counts (a :class:`Reference`) are all the ``accuracy`` metric needs from the
original, which is what lets ``synthguard profile`` store them and ``--original-stats`` reuse them.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...core.results import to_jsonable
from ...data.encoding import Block, Encoder


@dataclass(frozen=True)
class BinSpec:
    """How one column is binned.

    Attributes
    ----------
    column : str
        Column name.
    kind : {"numeric", "categorical"}
        Numeric columns are cut at ``edges``; categorical ones keep ``categories``.
    edges : tuple of float
        Inner edges (numeric): bin ``i`` holds ``edges[i-1] < x <= edges[i]`` (``closed="right"``)
        or ``edges[i-1] <= x < edges[i]`` (``closed="left"``); the outer bins are open.
    categories : tuple
        Kept categories, most frequent first (categorical); the rest fall in ``(other)``.
    datetime : bool
        Numeric edges are days since 1970-01-01 (labels are written as dates).
    closed : {"right", "left"}
        Which side of a numeric bin is closed (mostlyai-qa: left).
    """

    column: str
    kind: str
    edges: tuple[float, ...] = ()
    categories: tuple[Any, ...] = ()
    datetime: bool = False
    closed: str = "right"

    @property
    def n_bins(self) -> int:
        """Number of bins including the missing bin (and the ``(other)`` bin of a categorical)."""
        return len(self.edges) + 2 if self.kind == "numeric" else len(self.categories) + 2

    @property
    def missing_bin(self) -> int:
        return self.n_bins - 1

    def labels(self) -> list[str]:
        """Readable bin labels, in bin order."""
        if self.kind == "numeric":
            e = [_date(x) if self.datetime else _short(x) for x in self.edges]
            if not e:
                return ["all values", "(missing)"]
            if self.closed == "left":
                mids = [f"[{a}, {b})" for a, b in zip(e[:-1], e[1:], strict=True)]
                return [f"< {e[0]}", *mids, f">= {e[-1]}", "(missing)"]
            mids = [f"({a}, {b}]" for a, b in zip(e[:-1], e[1:], strict=True)]
            return [f"<= {e[0]}", *mids, f"> {e[-1]}", "(missing)"]
        return [str(c) for c in self.categories] + ["(other)", "(missing)"]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"column": self.column, "kind": self.kind}
        if self.kind == "numeric":
            out["edges"] = [float(x) for x in self.edges]
            out["datetime"] = self.datetime
            out["closed"] = self.closed
        else:
            out["categories"] = to_jsonable(list(self.categories))
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BinSpec:
        return cls(str(data["column"]), str(data["kind"]), tuple(float(x) for x in data.get("edges", ())),
                   tuple(data.get("categories", ())), bool(data.get("datetime", False)),
                   str(data.get("closed", "right")))


def _short(x: float) -> str:
    return f"{x:.4g}"


def _date(days: float) -> str:
    """A day count since 1970-01-01 as a date (labels only: the bins keep the exact edges)."""
    import pandas as pd

    ts = pd.Timestamp(0) + pd.to_timedelta(days, unit="D")
    return ts.strftime("%Y-%m-%d")


BINNINGS = ("mostlyai", "quantile")


def order_statistic_edges(values: np.ndarray, n_bins: int) -> np.ndarray:
    """mostlyai-qa's bin boundaries: distinct order statistics including the minimum and maximum.

    For ``k = n_bins, n_bins + 1, ...`` (up to 999 or the number of values) the sorted values are
    read at the positions ``linspace(0, n - 1, k)`` (truncated to integers) until ``n_bins + 1``
    distinct values are found; the last attempt is kept when none gives that many.

    Parameters
    ----------
    values : ndarray
        Non-missing values of one column.
    n_bins : int
        Wanted number of bins.

    Returns
    -------
    ndarray
        Sorted distinct boundaries (empty when ``values`` is empty).
    """
    v = np.sort(np.asarray(values, dtype="float64"))
    if v.size == 0:
        return v
    breaks = v[:0]
    for k in range(n_bins, max(n_bins + 1, min(1000, v.size + 1))):  # loop over bin counts, not rows
        breaks = np.unique(v[np.linspace(0, v.size - 1, k).astype(int)])
        if breaks.size >= n_bins + 1:
            break
    return breaks


def floor_edges(breaks: np.ndarray) -> np.ndarray:
    """mostlyai-qa's rounding of numeric boundaries for readable labels.

    Every boundary but the last is floored to the fewest decimals (0 to 19) at which the floored
    boundaries (the last included) stay distinct; unchanged when no precision does.
    """
    for precision in range(20):  # loop over precisions, not rows
        scale = float(10 ** precision)
        floored = np.floor(breaks * scale) / scale
        if np.unique(floored).size == breaks.size:
            return np.r_[floored[:-1], breaks[-1:]]
    return breaks


_NUMBER = (bool, np.bool_, int, float, np.integer, np.floating)


def _numeric_labels(labels: Sequence[Any], *, lenient: bool = False) -> np.ndarray | None:
    """The vocabulary as float64 when every value is a number (``None`` otherwise).

    With ``lenient=True`` a value that is not a number reads as missing instead.
    """
    out = np.full(len(labels), np.nan, dtype="float64")
    for i, v in enumerate(labels):  # loop over distinct values, not rows
        if isinstance(v, _NUMBER):
            out[i] = float(v)
        elif not lenient:
            return None
    return out if len(labels) or lenient else None


def _values(block: Block, encoder: Encoder, col: str) -> np.ndarray:
    """float64 values of a numeric column, or of a categorical column whose values are numbers."""
    if col in block.num_columns:
        return block.num[:, block.num_columns.index(col)]
    codes = block.cat[:, block.cat_columns.index(col)]
    labels = _numeric_labels(encoder.labels(col), lenient=True)
    size = max(len(labels), int(codes.max(initial=-1)) + 1)
    lut = np.full(size + 1, np.nan)
    lut[1:len(labels) + 1] = labels  # code -1 (missing) -> index 0 -> NaN
    return lut[codes + 1]


def _mostlyai_numeric(x: np.ndarray, max_bins: int, datetime: bool) -> tuple[float, ...]:
    """Inner edges (closed on the left) of one numeric or datetime column, mostlyai-qa's rules."""
    finite = x[~np.isnan(x)]
    if finite.size == 0:
        return ()
    distinct = np.unique(finite)
    if datetime:
        # one value: one bin [v, v + 1 day); else order statistics (no per-value rule), no flooring
        breaks = distinct[:1] if distinct.size == 1 else order_statistic_edges(finite, max_bins)
        return tuple(float(b) for b in breaks[1:-1]) if breaks.size > 1 else ()
    if distinct.size <= max_bins:
        breaks = np.r_[distinct, distinct[-1] + 1.0]  # one bin per value
    else:
        breaks = order_statistic_edges(finite, max_bins)
    breaks = floor_edges(np.unique(breaks))
    return tuple(float(b) for b in breaks[1:-1])


def fit_specs(block: Block, encoder: Encoder, columns: Sequence[str], *, max_bins: int = 10,
              max_categories: int = 10, min_count: int = 1, binning: str = "mostlyai",
              min_category_count: int = 5) -> list[BinSpec]:
    """Bin specifications of ``columns`` learnt from the original's encoded rows ``block``.

    Parameters
    ----------
    block : Block
        The original's encoded rows.
    encoder : Encoder
        The encoder that made ``block`` (vocabularies and schema).
    columns : sequence of str
        Columns to bin.
    max_bins, max_categories : int
        Bins of a numeric column; categories kept by name.
    min_count : int
        A category seen fewer times is never kept by name (coarse profiles).
    binning : {"mostlyai", "quantile"}
        mostlyai-qa 1.10's rules (see the module docstring) or synthguard's earlier deciles.
    min_category_count : int
        ``binning="mostlyai"``: a category is kept by name only when seen this often (mostlyai-qa: 5).

    Returns
    -------
    list of BinSpec
    """
    schema = encoder.schema
    specs = []
    for col in columns:
        is_dt = schema.columns[col].sdtype == "datetime"
        if binning == "mostlyai" and (col in block.num_columns
                                      or _numeric_labels(encoder.labels(col)) is not None):
            edges = _mostlyai_numeric(_values(block, encoder, col), max_bins, is_dt)
            specs.append(BinSpec(col, "numeric", edges=edges, datetime=is_dt, closed="left"))
        elif col in block.num_columns:
            x = block.num[:, block.num_columns.index(col)]
            finite = x[~np.isnan(x)]
            qedges: tuple[float, ...] = ()
            if finite.size:
                q = np.quantile(finite, np.linspace(0.0, 1.0, max_bins + 1)[1:-1])
                qedges = tuple(float(v) for v in np.unique(q))
            specs.append(BinSpec(col, "numeric", edges=qedges, datetime=is_dt))
        else:
            codes = block.cat[:, block.cat_columns.index(col)]
            labels = encoder.labels(col)
            counts = np.bincount(codes[codes >= 0], minlength=len(labels))
            floor = max(min_count, 1)
            if binning == "mostlyai":
                floor = max(floor, min_category_count)
            present = np.flatnonzero(counts >= 1)  # loops below are over distinct categories, not rows
            order = sorted(present.tolist(), key=lambda c: (-int(counts[c]), str(labels[c])))
            if binning == "mostlyai":
                # a missing value competes for one of the max_categories places (mostlyai-qa's "(n/a)")
                n_missing = int((codes < 0).sum())
                ahead = sum(1 for c in order if int(counts[c]) > n_missing)
                slots = max_categories - 1 if n_missing and ahead < max_categories else max_categories
                kept = [c for c in order[:slots] if counts[c] >= floor]
                kept += [c for c in order if labels[c] == "" and c not in kept]  # "(empty)" always kept
            else:
                kept = [c for c in order if counts[c] >= floor][:max_categories]
            specs.append(BinSpec(col, "categorical", categories=tuple(_plain(labels[c]) for c in kept)))
    return specs


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return value


def bin_matrix(block: Block, encoder: Encoder, specs: Sequence[BinSpec]) -> np.ndarray:
    """``(n, len(specs))`` int64 bin codes of the encoded rows ``block``."""
    out = np.empty((block.n_rows, len(specs)), dtype=np.int64)
    for j, spec in enumerate(specs):
        if spec.kind == "numeric":
            x = _values(block, encoder, spec.column)
            side = "right" if spec.closed == "left" else "left"
            b = np.searchsorted(np.asarray(spec.edges, dtype="float64"), x, side=side).astype(np.int64)
            b[np.isnan(x)] = spec.missing_bin
        else:
            codes = block.cat[:, block.cat_columns.index(spec.column)]
            size = max(len(encoder.labels(spec.column)), int(codes.max(initial=-1)) + 1)
            lut = np.full(size + 1, len(spec.categories), dtype=np.int64)  # default: (other)
            lut[0] = spec.missing_bin  # code -1 (missing) lands at index 0
            for i, cat in enumerate(spec.categories):  # loop over kept categories, not rows
                code = encoder.code_of(spec.column, cat)
                if code is not None and code < size:
                    lut[code + 1] = i
            b = lut[codes + 1]
        out[:, j] = b
    return out


def joint_counts(mat: np.ndarray, cols: Sequence[int], sizes: Sequence[int]) -> np.ndarray:
    """Counts of the joint bins of ``cols`` (flattened, C order) with one ``bincount``."""
    combined = mat[:, cols[0]].copy()
    total = sizes[cols[0]]
    for c in cols[1:]:
        combined = combined * sizes[c] + mat[:, c]
        total *= sizes[c]
    return np.bincount(combined, minlength=total)


def sample_triples(p: int, n_triples: int, rng: np.random.Generator) -> list[tuple[int, int, int]]:
    """Every triple of ``p`` columns when there are at most ``n_triples``, else a seeded sample."""
    if p < 3 or n_triples <= 0:
        return []
    total = p * (p - 1) * (p - 2) // 6
    if total <= n_triples:
        return list(itertools.combinations(range(p), 3))
    if total <= 1_000_000:  # draw without replacement among all triples at once
        combos = np.fromiter(itertools.chain.from_iterable(itertools.combinations(range(p), 3)),
                             dtype=np.int64, count=3 * total).reshape(total, 3)
        pick = np.sort(rng.choice(total, n_triples, replace=False))
        return [(int(a), int(b), int(c)) for a, b, c in combos[pick]]
    seen: set[tuple[int, int, int]] = set()
    while len(seen) < n_triples:  # loop over drawn triples, not rows
        a, b, c = sorted(int(v) for v in rng.choice(p, 3, replace=False))
        seen.add((a, b, c))
    return sorted(seen)


@dataclass(frozen=True)
class Reference:
    """The original's binned counts: all the ``accuracy`` metric needs from the original."""

    specs: tuple[BinSpec, ...]
    n: int
    uni: tuple[np.ndarray, ...]
    pairs: tuple[np.ndarray, ...]  # every pair (i < j), in itertools.combinations order
    triples: tuple[tuple[int, int, int], ...]
    tri: tuple[np.ndarray, ...]
    params: Mapping[str, Any]

    @property
    def sizes(self) -> list[int]:
        return [s.n_bins for s in self.specs]

    @property
    def pair_index(self) -> list[tuple[int, int]]:
        return list(itertools.combinations(range(len(self.specs)), 2))

    def to_dict(self) -> dict[str, Any]:
        return {"params": dict(self.params), "n_rows": self.n,
                "columns": [s.to_dict() for s in self.specs],
                "univariate": [c.tolist() for c in self.uni],
                "bivariate": [c.tolist() for c in self.pairs],
                "triples": [list(t) for t in self.triples],
                "trivariate": [c.tolist() for c in self.tri]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Reference:
        arr = [np.asarray(c, dtype=np.int64) for c in data["univariate"]]
        return cls(tuple(BinSpec.from_dict(s) for s in data["columns"]), int(data["n_rows"]), tuple(arr),
                   tuple(np.asarray(c, dtype=np.int64) for c in data["bivariate"]),
                   tuple(tuple(int(v) for v in t) for t in data["triples"]),  # type: ignore[misc]
                   tuple(np.asarray(c, dtype=np.int64) for c in data["trivariate"]),
                   _read_params(data["params"]))


def _read_params(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A stored reference's parameters (a profile without ``binning`` was made with deciles)."""
    out: dict[str, Any] = {k: (str(v) if k == "binning" else int(v)) for k, v in dict(raw).items()}
    out.setdefault("binning", "quantile")
    return out


def build_reference(block: Block, encoder: Encoder, columns: Sequence[str], *, max_bins: int,
                    max_categories: int, n_triples: int, rng: np.random.Generator,
                    min_count: int = 1, binning: str = "mostlyai",
                    min_category_count: int = 5) -> Reference:
    """Fit the bins on the original's rows ``block`` and count its marginals, pairs and triples.

    ``binning`` is ``"mostlyai"`` (mostlyai-qa 1.10's rules) or ``"quantile"`` (see the module
    docstring); it is recorded in the reference's ``params``.
    """
    specs = fit_specs(block, encoder, columns, max_bins=max_bins, max_categories=max_categories,
                      min_count=min_count, binning=binning, min_category_count=min_category_count)
    mat = bin_matrix(block, encoder, specs)
    sizes = [s.n_bins for s in specs]
    uni = tuple(np.bincount(mat[:, j], minlength=sizes[j]) for j in range(len(specs)))
    pairs = tuple(joint_counts(mat, ij, sizes) for ij in itertools.combinations(range(len(specs)), 2))
    triples = tuple(sample_triples(len(specs), n_triples, rng))
    tri = tuple(joint_counts(mat, t, sizes) for t in triples)
    params: dict[str, Any] = {"max_bins": max_bins, "max_categories": max_categories,
                              "n_triples": n_triples, "binning": binning}
    if binning == "mostlyai":
        params["min_category_count"] = min_category_count
    if min_count > 1:
        params["min_count"] = min_count
    return Reference(tuple(specs), int(block.n_rows), uni, pairs, triples, tri, params)


def expected_accuracy(ref: np.ndarray, n_other: int) -> float:
    """mostlyai-qa's expected accuracy of a sample of ``n_other`` rows drawn from ``ref``'s frequencies.

    ``1 - 1/2 sum_b E|p_b - q_b|`` with the normal approximation of each bin's binomial difference:
    ``E|.| = sqrt(2 / pi * p (1 - p) (1 / n_ref + 1 / n_other))`` (mostlyai-qa's ``accuracy_max``).
    """
    n_ref = ref.sum()
    if n_ref == 0 or n_other == 0:
        return float("nan")
    p = ref / n_ref
    var = p * (1.0 - p) * (1.0 / n_ref + 1.0 / n_other)
    return 1.0 - 0.5 * float(np.sqrt(var * 2.0 / np.pi).sum())


def tv_accuracy(ref: np.ndarray, other: np.ndarray) -> float:
    """``1 - total variation distance`` of two count vectors over the same bins."""
    n_ref, n_other = ref.sum(), other.sum()
    if n_ref == 0 or n_other == 0:
        return float("nan")
    return 1.0 - 0.5 * float(np.abs(ref / n_ref - other / n_other).sum())
