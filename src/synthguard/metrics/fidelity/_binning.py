"""Binned columns for the ``accuracy`` metric and the data-owner profile.

A column is cut into a few bins learnt from the original table:

* numerical and datetime columns: quantile edges of the original's non-missing values (``max_bins``
  bins, fewer when quantiles coincide), bins closed on the right, the outer bins open;
* categorical and boolean columns: the ``max_categories`` most frequent categories of the original
  (ties broken by the category's text, so row order never matters), plus one ``(other)`` bin;
* a missing value always has its own last bin.

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

from ...encoding import Block, Encoder
from ...results import to_jsonable


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
        Inner edges (numeric): bin ``i`` holds ``edges[i-1] < x <= edges[i]``.
    categories : tuple
        Kept categories, most frequent first (categorical); the rest fall in ``(other)``.
    datetime : bool
        Numeric edges are days since 1970-01-01 (labels are written as dates).
    """

    column: str
    kind: str
    edges: tuple[float, ...] = ()
    categories: tuple[Any, ...] = ()
    datetime: bool = False

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
            mids = [f"({a}, {b}]" for a, b in zip(e[:-1], e[1:], strict=True)]
            return [f"<= {e[0]}", *mids, f"> {e[-1]}", "(missing)"]
        return [str(c) for c in self.categories] + ["(other)", "(missing)"]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"column": self.column, "kind": self.kind}
        if self.kind == "numeric":
            out["edges"] = [float(x) for x in self.edges]
            out["datetime"] = self.datetime
        else:
            out["categories"] = to_jsonable(list(self.categories))
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BinSpec:
        return cls(str(data["column"]), str(data["kind"]), tuple(float(x) for x in data.get("edges", ())),
                   tuple(data.get("categories", ())), bool(data.get("datetime", False)))


def _short(x: float) -> str:
    return f"{x:.4g}"


def _date(days: float) -> str:
    """A day count since 1970-01-01 as a date (labels only: the bins keep the exact edges)."""
    import pandas as pd

    ts = pd.Timestamp(0) + pd.to_timedelta(days, unit="D")
    return ts.strftime("%Y-%m-%d")


def fit_specs(block: Block, encoder: Encoder, columns: Sequence[str], *, max_bins: int = 10,
              max_categories: int = 10, min_count: int = 1) -> list[BinSpec]:
    """Bin specifications of ``columns`` learnt from the original's encoded rows ``block``.

    A category seen fewer than ``min_count`` times is never kept by name (coarse profiles).
    """
    schema = encoder.schema
    specs = []
    for col in columns:
        if col in block.num_columns:
            x = block.num[:, block.num_columns.index(col)]
            finite = x[~np.isnan(x)]
            edges: tuple[float, ...] = ()
            if finite.size:
                q = np.quantile(finite, np.linspace(0.0, 1.0, max_bins + 1)[1:-1])
                edges = tuple(float(v) for v in np.unique(q))
            specs.append(BinSpec(col, "numeric", edges=edges,
                                 datetime=schema.columns[col].sdtype == "datetime"))
        else:
            codes = block.cat[:, block.cat_columns.index(col)]
            labels = encoder.labels(col)
            counts = np.bincount(codes[codes >= 0], minlength=len(labels))
            present = np.flatnonzero(counts >= max(min_count, 1))  # loop below is over distinct categories, not rows
            order = sorted(present.tolist(), key=lambda c: (-int(counts[c]), str(labels[c])))
            specs.append(BinSpec(col, "categorical",
                                 categories=tuple(_plain(labels[c]) for c in order[:max_categories])))
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
            x = block.num[:, block.num_columns.index(spec.column)]
            b = np.searchsorted(np.asarray(spec.edges, dtype="float64"), x, side="left").astype(np.int64)
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
    params: Mapping[str, int]

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
                   {k: int(v) for k, v in dict(data["params"]).items()})


def build_reference(block: Block, encoder: Encoder, columns: Sequence[str], *, max_bins: int,
                    max_categories: int, n_triples: int, rng: np.random.Generator,
                    min_count: int = 1) -> Reference:
    """Fit the bins on the original's rows ``block`` and count its marginals, pairs and triples."""
    specs = fit_specs(block, encoder, columns, max_bins=max_bins, max_categories=max_categories,
                      min_count=min_count)
    mat = bin_matrix(block, encoder, specs)
    sizes = [s.n_bins for s in specs]
    uni = tuple(np.bincount(mat[:, j], minlength=sizes[j]) for j in range(len(specs)))
    pairs = tuple(joint_counts(mat, ij, sizes) for ij in itertools.combinations(range(len(specs)), 2))
    triples = tuple(sample_triples(len(specs), n_triples, rng))
    tri = tuple(joint_counts(mat, t, sizes) for t in triples)
    params = {"max_bins": max_bins, "max_categories": max_categories, "n_triples": n_triples}
    if min_count > 1:
        params["min_count"] = min_count
    return Reference(tuple(specs), int(block.n_rows), uni, pairs, triples, tri, params)


def tv_accuracy(ref: np.ndarray, other: np.ndarray) -> float:
    """``1 - total variation distance`` of two count vectors over the same bins."""
    n_ref, n_other = ref.sum(), other.sum()
    if n_ref == 0 or n_other == 0:
        return float("nan")
    return 1.0 - 0.5 * float(np.abs(ref / n_ref - other / n_other).sum())
