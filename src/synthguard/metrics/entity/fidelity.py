"""Sequential and multi-table fidelity: does the release reproduce how people's histories look?

Each function scores ``other`` (the synthetic, or the control for the ceiling) against the original,
in [0, 1] (1 = the same), vectorised with group-bys:

* :func:`length_score` - KSComplement of the sequence-length distributions;
* :func:`gap_score` - KSComplement of the time between consecutive events of an entity;
* :func:`share_score` - within-entity coherence: for each of the 20 most frequent categories of each
  categorical event column, KSComplement of the per-entity share of events in that category; mean
  over categories, then columns;
* :func:`transition_score` - ``1 - TVD`` of the distribution of (event, next event) pairs within
  entities, per categorical event column;
* :func:`context_dependence_score` - pair trends (SDMetrics' Column Pair Trends metrics, every pair
  scored) between each context column and each sequence summary (length, span, numeric means,
  first category);
* :func:`cardinality_score` - SDMetrics' CardinalityShapeSimilarity: KSComplement of the number of
  child rows per parent (parents without children count 0);
* :func:`intertable_score` - SDMetrics' Intertable Trends: Column Pair Trends between every parent
  column and every child column of the denormalised (child joined with parent) table.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...data.entities.build import EntityRun
from ...data.entities.embedding import OrderedEvents
from ..fidelity._columns import joint_codes
from ..fidelity._pairs import column_pair_trends
from ..fidelity._shapes import ks_complement


def _nanmean(values: list[float]) -> float:
    arr = np.asarray(values, dtype="float64")
    arr = arr[~np.isnan(arr)]
    return float(arr.mean()) if arr.size else float("nan")


def length_score(run: EntityRun, role: str, *, with_empty: bool = False) -> dict[str, Any]:
    """KSComplement of sequence lengths (entities with at least one event unless ``with_empty``)."""
    lo, lr = run.ordered["original"].lengths, run.ordered[role].lengths
    if not with_empty:
        lo, lr = lo[lo > 0], lr[lr > 0]
    return {"score": ks_complement(pd.Series(lo, dtype="float64"), pd.Series(lr, dtype="float64")),
            "distribution": length_distribution(lo, lr, role),
            "mean_length": {"original": float(lo.mean()) if lo.size else float("nan"),
                            role: float(lr.mean()) if lr.size else float("nan")},
            "quantiles": {"original": np.quantile(lo, [0.1, 0.5, 0.9]).tolist() if lo.size else None,
                          role: np.quantile(lr, [0.1, 0.5, 0.9]).tolist() if lr.size else None},
            "n_entities": {"original": int(lo.size), role: int(lr.size)}}


def length_distribution(lo: np.ndarray, lr: np.ndarray, role: str, max_bins: int = 30) -> dict[str, Any]:
    """Share of entities per sequence length (for charts): one bin per length up to ``max_bins``
    lengths, the longest ones pooled into the last bin (labelled ``">=L"``)."""
    top = int(max(lo.max(initial=0), lr.max(initial=0)))
    cap = top if top < max_bins else max_bins - 1
    labels = [str(v) for v in range(cap + 1)] + ([f">={cap + 1}"] if top > cap else [])
    k = len(labels)

    def shares(x: np.ndarray) -> list[float]:
        counts = np.bincount(np.minimum(x, k - 1), minlength=k).astype("float64")
        return (counts / counts.sum()).tolist() if counts.sum() else counts.tolist()

    return {"lengths": labels, "original": shares(lo), role: shares(lr)}


def gaps(ev: OrderedEvents) -> np.ndarray:
    """Time between consecutive events of the same entity (sequence-key units; days for dates)."""
    if ev.time is None or len(ev.entity) < 2:
        return np.zeros(0)
    same = ev.entity[1:] == ev.entity[:-1]
    return (ev.time[1:] - ev.time[:-1])[same]


def gap_score(run: EntityRun, role: str) -> dict[str, Any]:
    go, gr = gaps(run.ordered["original"]), gaps(run.ordered[role])
    return {"score": ks_complement(pd.Series(go), pd.Series(gr)),
            "median_gap": {"original": float(np.median(go)) if go.size else float("nan"),
                           role: float(np.median(gr)) if gr.size else float("nan")},
            "n_gaps": {"original": int(go.size), role: int(gr.size)}}


def categorical_event_columns(run: EntityRun) -> list[str]:
    schema = run.rows.schema
    return [c for c in run.event_columns if not schema.columns[c].is_numeric]


def _codes(run: EntityRun, role: str, col: str) -> tuple[np.ndarray, np.ndarray]:
    """Codes of ``col`` in the original's and ``role``'s ordered events, one shared vocabulary
    (missing values are a category)."""
    (co, cr), _ = joint_codes(run.ordered["original"].frame[col], run.ordered[role].frame[col])
    return co, cr


def _share_matrix(ev: OrderedEvents, codes: np.ndarray, cats: np.ndarray) -> np.ndarray:
    """Per entity with events (rows), the share of its events in each of ``cats`` (columns)."""
    n = len(ev.entities)
    k = len(cats)
    which = pd.Index(cats).get_indexer(codes)
    hit = which >= 0
    mat = np.bincount(ev.entity[hit] * k + which[hit], minlength=n * k).reshape(n, k).astype("float64")
    lengths = ev.lengths
    keep = lengths > 0
    return mat[keep] / lengths[keep, None]


def share_score(run: EntityRun, role: str, *, max_categories: int = 20) -> dict[str, Any]:
    per_col: dict[str, float] = {}
    for col in categorical_event_columns(run):
        co, cr = _codes(run, role, col)
        counts = np.bincount(co)
        cats = np.argsort(-counts, kind="stable")[:max_categories]
        cats = cats[counts[cats] > 0]
        mo = _share_matrix(run.ordered["original"], co, cats)
        mr = _share_matrix(run.ordered[role], cr, cats)
        scores = [ks_complement(pd.Series(mo[:, j]), pd.Series(mr[:, j])) for j in range(len(cats))]
        per_col[col] = _nanmean(scores)
    return {"score": _nanmean(list(per_col.values())), "columns": per_col}


def _pair_freq(ev: OrderedEvents, codes: np.ndarray, size: int) -> np.ndarray:
    if len(codes) < 2:
        return np.zeros(size * size)
    same = ev.entity[1:] == ev.entity[:-1]
    pairs = codes[:-1][same] * size + codes[1:][same]
    counts = np.bincount(pairs, minlength=size * size).astype("float64")
    return counts / counts.sum() if counts.sum() else counts


def transition_score(run: EntityRun, role: str, *, top_n: int = 10) -> dict[str, Any]:
    per_col: dict[str, Any] = {}
    for col in categorical_event_columns(run):
        (co, cr), size = joint_codes(run.ordered["original"].frame[col], run.ordered[role].frame[col])
        labels = pd.concat([run.ordered["original"].frame[col], run.ordered[role].frame[col]],
                           ignore_index=True)
        _, uniques = pd.factorize(labels, use_na_sentinel=True)
        names = [str(u) for u in uniques] + ["(missing)"]
        a = _pair_freq(run.ordered["original"], co, size)
        b = _pair_freq(run.ordered[role], cr, size)
        defined = a.sum() > 0 and b.sum() > 0
        diff = b - a
        top = np.argsort(-np.abs(diff), kind="stable")[:top_n]
        top = top[np.abs(diff[top]) > 0]
        per_col[col] = {"score": 1.0 - 0.5 * float(np.abs(diff).sum()) if defined else float("nan"),
                        "largest_differences": [{"from": names[p // size], "to": names[p % size],
                                                 "original": float(a[p]), role: float(b[p])} for p in top]}
    return {"score": _nanmean([v["score"] for v in per_col.values()]), "columns": per_col}


def _summaries(run: EntityRun) -> list[str]:
    cols = ["n_events"]
    t = run.data.spec.sequence_key
    if t is not None:
        cols.append(f"{t}:span")
    schema = run.rows.schema
    for c in run.event_columns:
        cols.append(f"{c}:mean" if schema.columns[c].is_numeric else f"{c}:first")
    return [c for c in cols if c in run.entities.original.columns]


def context_dependence_score(run: EntityRun, role: str) -> dict[str, Any]:
    """Pair trends between context columns and sequence summaries on the entity tables."""
    if run.context is None:
        return {"score": float("nan"), "pairs": [], "reason": "no context table"}
    schema = run.entities.schema
    ctx_cols = [c for c in run.context.schema.columns if c in schema.columns
                and schema.columns[c].sdtype in ("numerical", "datetime", "categorical", "boolean")]
    seq_cols = _summaries(run)
    real, other = run.entities.original, run.entities.get(role)
    rows = []
    for a in ctx_cols:  # loop over column pairs, each vectorised over entities
        for b in seq_cols:
            sd = {a: schema.columns[a].sdtype, b: schema.columns[b].sdtype}
            p = column_pair_trends(real[[a, b]], other[[a, b]], sd, real_correlation_threshold=0.0,
                                   real_association_threshold=0.0, binning="shared")[0]
            rows.append(p.to_dict())
    return {"score": _nanmean([r["score"] for r in rows]), "pairs": rows}


def child_counts(run: EntityRun, role: str) -> np.ndarray:
    """Children (events) per parent (entity), parents without children included as 0."""
    return run.ordered[role].lengths


def cardinality_score(run: EntityRun, role: str) -> dict[str, Any]:
    co, cr = child_counts(run, "original"), child_counts(run, role)
    return {"score": ks_complement(pd.Series(co, dtype="float64"), pd.Series(cr, dtype="float64")),
            "mean_children": {"original": float(co.mean()), role: float(cr.mean())},
            "n_parents": {"original": int(co.size), role: int(cr.size)}}


def denormalised(run: EntityRun, role: str) -> pd.DataFrame:
    """Child rows joined with their parent's columns (parent columns first)."""
    if run.context is None:
        raise ValueError("no parent table")
    key = run.data.spec.entity_key
    ctx = run.context.get(role)
    ctx = ctx.set_index(ctx[key].map(str)).drop(columns=[key])
    ev = run.rows.get(role)
    parent = ctx.reindex(ev[key].to_numpy())
    parent.index = ev.index
    return pd.concat([parent, ev.drop(columns=[key])], axis=1)


def intertable_score(run: EntityRun, role: str, *, real_correlation_threshold: float = 0.5,
                     real_association_threshold: float = 0.3) -> dict[str, Any]:
    if run.context is None:
        return {"score": float("nan"), "pairs": []}
    pcols = [c for c, s in run.context.schema.columns.items()
             if s.sdtype in ("numerical", "datetime", "categorical", "boolean")]
    ccols = [c for c, s in run.rows.schema.columns.items()
             if s.sdtype in ("numerical", "datetime", "categorical", "boolean")]
    sd = {c: run.context.schema.columns[c].sdtype for c in pcols}
    sd.update({c: run.rows.schema.columns[c].sdtype for c in ccols})
    real, other = denormalised(run, "original"), denormalised(run, role)
    rows = []
    for a in pcols:  # loop over column pairs, each vectorised over rows
        for b in ccols:
            p = column_pair_trends(real[[a, b]], other[[a, b]], {a: sd[a], b: sd[b]},
                                   real_correlation_threshold=real_correlation_threshold,
                                   real_association_threshold=real_association_threshold)[0]
            rows.append(p.to_dict())
    return {"score": _nanmean([r["score"] for r in rows if r["meets_threshold"]]), "pairs": rows,
            "n_pairs": len(rows), "n_pairs_meeting_threshold": sum(bool(r["meets_threshold"]) for r in rows)}


def multi_table_quality_score(run: EntityRun, role: str, *, real_correlation_threshold: float = 0.5,
                              real_association_threshold: float = 0.3) -> dict[str, Any]:
    """SDMetrics' multi-table QualityReport: Column Shapes and Column Pair Trends pooled over the
    columns / qualifying pairs of both tables, Cardinality, Intertable Trends; overall = mean of the
    defined properties."""
    from ..fidelity._columns import STATISTICAL
    from ..fidelity.quality import compute_quality

    kw = {"real_correlation_threshold": real_correlation_threshold,
          "real_association_threshold": real_association_threshold}
    tables = [("child", run.rows)]
    if run.context is not None:
        tables.insert(0, ("parent", run.context))
    shapes: list[float] = []
    pairs: list[float] = []
    per_table: dict[str, Any] = {}
    for label, t in tables:
        sd = {c: s.sdtype for c, s in t.schema.columns.items() if s.sdtype in STATISTICAL}
        if not sd:
            continue
        q = compute_quality(t.original, t.get(role), sd, **kw)
        shapes.extend(r["score"] for r in q["column_shapes_table"])
        pairs.extend(p["score"] for p in q["column_pair_trends_table"] if p["meets_threshold"])
        per_table[label] = {"column_shapes": q["column_shapes"], "column_pair_trends": q["column_pair_trends"]}
    props = {"column_shapes": _nanmean(shapes), "column_pair_trends": _nanmean(pairs),
             "cardinality": float("nan"), "intertable_trends": float("nan")}
    if run.context is not None:
        props["cardinality"] = cardinality_score(run, role)["score"]
        props["intertable_trends"] = intertable_score(run, role, **kw)["score"]
    return {"score": _nanmean(list(props.values())), "properties": props, "tables": per_table}
