"""Distributed CAP (``cap``, ``zero_cap``) and ``k_anonymity``: group-bys and joins on hashed keys.

Key, sensitive-tuple and quasi-identifier values are matched exactly (missing is a category), as the
single-process code does with integer codes; here a 128-bit hash of the encoded values stands for the
code. Means of per-row probabilities are exactly rounded sums over (value, count) tables, equal to the
single-process :func:`~synthguard.metrics.disclosure._cap_analysis.exact_sum` bit for bit. The
training-vs-control evidence gathers the per-record flags of
:func:`~synthguard.metrics.disclosure._cap_analysis.cap_evidence` (one byte per real record).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..core.results import MetricResult
from ..data.encoding import Encoder
from ..errors import ConfigError, MetricError
from ..metrics.disclosure._cap_analysis import CLASS_SIZE_BINS, CapAnalysis, exact_sum
from ._tables import DistTables, gather_flags, row_hashes


class _FieldView:
    """What :func:`resolve_fields` reads from a context: ``ctx.tables.schema``."""

    def __init__(self, dt: DistTables) -> None:
        self.tables = dt


def _hash_columns(encoder: Encoder, frame: pd.DataFrame, positions: np.ndarray,
                  groups: dict[str, tuple[str, ...]], binned: dict[str, np.ndarray]) -> pd.DataFrame:
    """One partition as ``{name}1, {name}2`` hash columns per group of columns, plus ``pos`` (the
    canonical position of every row)."""
    from ..metrics.disclosure._common import _raw_numeric

    if binned:
        frame = frame.copy()
        for c, inner in binned.items():
            vals = _raw_numeric(frame[c])
            codes = np.searchsorted(inner, vals, side="left").astype(np.float64)
            codes[np.isnan(vals)] = np.nan
            frame[c] = codes  # bin numbers compared by value, missing kept missing
    out = {}
    for name, cols in groups.items():
        h = row_hashes(encoder, frame, cols)
        out[name + "1"], out[name + "2"] = h[:, 0], h[:, 1]
    out["pos"] = np.asarray(positions, dtype=np.int64)
    return pd.DataFrame(out)


def _frames(dt: DistTables, role: str, groups: dict[str, tuple[str, ...]],
            binned: dict[str, np.ndarray] | None = None) -> Any:
    import dask.dataframe as dd

    meta = pd.DataFrame({**{f"{g}{i}": pd.Series([], dtype="uint64") for g in groups for i in (1, 2)},
                         "pos": pd.Series([], dtype="int64")})
    return dd.from_delayed(dt.map(role, _hash_columns, groups, binned or {}, ordered=False), meta=meta,
                           verify_meta=False)


def _nsplit(dt: DistTables, role: str) -> int:
    return dt.split_out(role)


def _bin_of(pool: pd.Series) -> pd.Series:
    bins = ((0, 0),) + CLASS_SIZE_BINS
    out = pd.Series(-1, index=pool.index, dtype=np.int64)
    for b, (lo, hi) in enumerate(bins):
        out[(pool >= lo) & (pool <= (hi if hi is not None else np.iinfo(np.int64).max))] = b
    return out


def _scored(frame: pd.DataFrame, zero: bool) -> pd.DataFrame:
    """Per original row: pool (synthetic rows sharing the key), p (NaN = not counted), class bin."""
    pool = frame["pool"].fillna(0).astype(np.int64)
    pair = frame["pair"].fillna(0).astype(np.int64)
    matched = pool > 0
    p = np.full(len(frame), np.nan)
    p[matched.to_numpy()] = pair[matched].to_numpy() / pool[matched].to_numpy()
    if zero:
        p[~matched.to_numpy()] = 0.0
    return pd.DataFrame({"pos": frame["pos"].to_numpy(), "pool": pool.to_numpy(), "p": p,
                         "bin": _bin_of(pool).to_numpy()})


def _top(frame: pd.DataFrame, limit: int) -> pd.DataFrame:
    ok = frame[frame["p"].notna()]
    return ok.sort_values(["p", "pos"], ascending=[False, True], kind="mergesort").head(limit)


def _pooled(dt: DistTables, real: Any, syn: Any, key: str, sens: str) -> Any:
    """Real rows (``pos`` and hashes) joined with the synthetic rows sharing their key (``pool``)
    and their (key, sensitive) pair (``pair``); missing = none."""
    kcols, pcols = [key + "1", key + "2"], [key + "1", key + "2", sens + "1", sens + "2"]
    n = _nsplit(dt, "synthetic")
    sk = syn.groupby(kcols).pos.count(split_out=n).reset_index()  # pos = pool
    sp = syn.groupby(pcols).pos.count(split_out=n).reset_index()  # pos = pair count
    # (renames after split_out group-bys trip dask-expr: rename inside the partitions instead)
    sk = sk.map_partitions(lambda f: f.rename(columns={"pos": "pool"}))
    sp = sp.map_partitions(lambda f: f.rename(columns={"pos": "pair"}))
    return real[pcols + ["pos"]].merge(sk, on=kcols, how="left").merge(sp, on=pcols, how="left")


def _score_rows(dt: DistTables, orig: Any, syn: Any, key: str, sens: str, zero: bool) -> Any:
    """Original rows joined with the synthetic key counts and (key, sensitive) pair counts."""
    rows = _pooled(dt, orig, syn, key, sens)
    meta = pd.DataFrame({"pos": pd.Series([], dtype="int64"), "pool": pd.Series([], dtype="int64"),
                         "p": pd.Series([], dtype="float64"), "bin": pd.Series([], dtype="int64")})
    return rows.map_partitions(_scored, zero, meta=meta)


def _exposure_bits(f: pd.DataFrame, zero: bool) -> pd.DataFrame:
    """Per real row: exposed (:func:`~synthguard.metrics.disclosure._cap_analysis.exposed`), would a
    copy of it be exposed (``exact``, :func:`~synthguard.metrics.disclosure._cap_core.copy_responds_counts`)
    and is its key unique among the real rows pooled (``rare``)."""
    from ..metrics.disclosure._cap_analysis import exposed
    from ..metrics.disclosure._cap_core import copy_responds_counts

    scored = _scored(f, zero)
    pair = f["pair"].fillna(0).to_numpy(np.int64)
    return pd.DataFrame({"pos": scored["pos"].to_numpy(), "exposed": exposed(scored["p"].to_numpy()),
                         "exact": copy_responds_counts(pair, scored["pool"].to_numpy(np.int64)),
                         "rare": f["real"].fillna(0).to_numpy(np.int64) == 1})


def _cap_evidence(dt: DistTables, orig: Any, ctl: Any, syn: Any, zero: bool, repeats: str | None) -> Any:
    """:func:`~synthguard.metrics.disclosure._cap_analysis.cap_evidence` over partitions (cap and
    zero_cap match keys exactly, so no bins): the per-record flags are computed with joins on the
    key and (key, sensitive) hashes and gathered (one byte per real record)."""
    import dask.dataframe as dd

    from ..metrics.disclosure._cap_analysis import cap_evidence_from_flags

    kcols = ["k1", "k2"]
    real = dd.concat([orig[kcols + ["pos"]], ctl[kcols + ["pos"]]])
    rk = real.groupby(kcols).pos.count(split_out=_nsplit(dt, "original")).reset_index()
    rk = rk.map_partitions(lambda f: f.rename(columns={"pos": "real"}))
    meta = pd.DataFrame({"pos": pd.Series([], dtype="int64"), "exposed": pd.Series([], dtype=bool),
                         "exact": pd.Series([], dtype=bool), "rare": pd.Series([], dtype=bool)})
    got = {}
    for role, frame in (("original", orig), ("control", ctl)):
        rows = _pooled(dt, frame, syn, "k", "s").merge(rk, on=kcols, how="left")
        rows = rows.map_partitions(_exposure_bits, zero, meta=meta)
        got[role] = gather_flags(dt, role, rows, ("exposed", "exact", "rare") if role == "original"
                                 else ("exposed",))
    o = got["original"]
    return cap_evidence_from_flags(o["exposed"], got["control"]["exposed"], o["exact"], o["rare"],
                                   repeats=repeats)


@dataclass(frozen=True)
class DistributedCapAnalysis(CapAnalysis):
    """A :class:`CapAnalysis` whose per-row table stayed on the cluster: it carries the reductions
    the result needs (counts, exact sums, breakdown, top records) instead of the rows."""

    counts: dict[str, Any] = field(default_factory=dict)

    @property
    def n_counted(self) -> int:
        return int(self.counts["n_counted"])

    @property
    def n_rows(self) -> int:
        return int(self.counts["n_rows"])

    @property
    def n_exact_key_match(self) -> int:
        return int(self.counts["n_exact"])

    def sum_probability(self) -> float:
        return float(self.counts["sum_p"])

    def sum_complement(self) -> float:
        return float(self.counts["sum_1mp"])

    def class_sizes(self) -> list[dict[str, Any]]:
        return list(self.counts["class_sizes"])

    def top_records(self, limit: int) -> list[dict[str, Any]]:
        top = self.counts["top"]
        if limit <= 0 or top is None or len(top) == 0:
            return []
        top = _top(top, limit)
        return [{"original_row": int(pos), "probability": float(p), "synthetic_rows_pooled": int(pool),
                 "key_distance": 0 if pool > 0 else -1}
                for pos, p, pool in zip(top["pos"], top["p"], top["pool"], strict=True)]


def _reduce(dt: DistTables, scored: Any, limit: int, with_rows: bool) -> list[Any]:
    """Tasks: (p, bin) -> row count table, per-bin row counts, top records."""
    counted = scored[scored["p"].notnull()]
    tasks = [counted.groupby(["bin", "p"]).pos.count(split_out=1),
             scored.groupby("bin").pos.count(split_out=1)]
    if with_rows:
        tasks.append(scored.map_partitions(_top, max(limit, 0)))
    return tasks


def _summarise(pb: pd.Series, per_bin: pd.Series) -> dict[str, Any]:
    """Counts, exact sums and the class-size breakdown from the (bin, p) -> rows table."""
    pb = pb.sort_index()
    p_vals = pb.index.get_level_values("p").to_numpy(dtype=np.float64)
    bins_of = pb.index.get_level_values("bin").to_numpy()
    w = pb.to_numpy(dtype=np.float64)
    out: dict[str, Any] = {
        "n_counted": int(w.sum()), "n_rows": int(per_bin.sum()),
        "n_exact": int(per_bin[per_bin.index > 0].sum()),
        "sum_p": exact_sum(p_vals, w), "sum_1mp": exact_sum(1.0 - p_vals, w),
    }
    sizes = []
    labels = ((0, 0),) + CLASS_SIZE_BINS
    for b, (lo, hi) in enumerate(labels):
        n_rows = int(per_bin.get(b, 0))
        if n_rows == 0:
            continue
        sel = bins_of == b
        n_c = int(w[sel].sum())
        label = f"{lo}" if lo == hi else (f"{lo}-{hi}" if hi is not None else f"{lo}+")
        sizes.append({"class_size": label, "n_original_rows": n_rows, "n_counted": n_c,
                      "cap_protection": float(1 - exact_sum(p_vals[sel], w[sel]) / n_c) if n_c else None})
    out["class_sizes"] = sizes
    return out


def cap(dt: DistTables, thresholds: Mapping[str, float], method: str = "cap", *, key_fields: Any = None,
        sensitive_fields: Any = None, max_records: int = 100) -> MetricResult:
    """``cap`` / ``zero_cap`` over partitions (``generalized_cap`` is not distributed yet)."""
    from ..metrics.disclosure._common import resolve_fields
    from ..metrics.disclosure.cap import cap_result, repeated_test

    if method not in ("cap", "zero_cap"):
        raise ConfigError(f"{method} has no distributed implementation; use cap or zero_cap")
    keys, sens = resolve_fields(_FieldView(dt), method, "key_fields", key_fields, "sensitive_fields",  # type: ignore[arg-type]
                                sensitive_fields)
    groups: dict[str, tuple[str, ...]] = {"k": tuple(keys), "s": tuple(sens)}
    if len(sens) > 1:
        for j, c in enumerate(sens):
            groups[f"f{j}_"] = (c,)
    orig, syn = _frames(dt, "original", groups), _frames(dt, "synthetic", groups)
    zero = method == "zero_cap"
    tasks = _reduce(dt, _score_rows(dt, orig, syn, "k", "s", zero), max_records, True)
    cat_names = ["s"] if len(sens) == 1 else [f"f{j}_" for j in range(len(sens))]
    for g in cat_names:  # distinct original values per sensitive column (missing counted once)
        tasks.append(orig[[g + "1", g + "2"]].drop_duplicates(split_out=1).shape[0])
    n_main = len(tasks)
    if len(sens) > 1:
        for j in range(len(sens)):
            tasks += _reduce(dt, _score_rows(dt, orig, syn, "k", f"f{j}_", zero), 0, False)
    res = dt.compute(tasks)
    counts = _summarise(res[0], res[1])
    counts["top"] = res[2]
    n_cat = [int(v) for v in res[3:n_main]]
    evidence = None
    if dt.has_control and dt.control.n_rows:  # training vs control records attacked with the same rows
        rep = repeated_test(method)  # as the single-process metric: zero_cap repeats cap's test
        evidence = _cap_evidence(dt, orig, _frames(dt, "control", groups), syn, zero,
                                 rep if rep != method else None)
    per_field: dict[str, dict[str, Any]] = {}
    if len(sens) > 1:
        for j, name in enumerate(sens):
            s = _summarise(res[n_main + 2 * j], res[n_main + 2 * j + 1])
            per_field[name] = {"cap_protection": float(1 - s["sum_p"] / s["n_counted"]) if s["n_counted"]
                               else None, "baseline_protection": 1.0 - 1.0 / n_cat[j], "n": s["n_counted"]}
    analysis = DistributedCapAnalysis(method, list(keys), list(sens), None, n_cat, per_field,  # type: ignore[arg-type]
                                      counts)
    return cap_result(_Thresholds(thresholds), method, analysis, max_records=max_records, relative=False,
                      evidence=evidence)


class _Thresholds:
    """What :func:`cap_result` reads from a context: ``ctx.thresholds``."""

    def __init__(self, thresholds: Mapping[str, float]) -> None:
        self.thresholds = dict(thresholds)


# --- k-anonymity ------------------------------------------------------------------------------------

def _raw_bounds(frame: pd.DataFrame, positions: Any, columns: tuple[str, ...]) -> list[tuple[float, float]]:
    from ..metrics.disclosure._common import _raw_numeric

    out = []
    for c in columns:
        v = _raw_numeric(frame[c])
        v = v[~np.isnan(v)]
        out.append((float(v.min()), float(v.max())) if v.size else (np.inf, -np.inf))
    return out


def continuous_edges(dt: DistTables, columns: Sequence[str], bins: int) -> dict[str, np.ndarray]:
    """Inner equal-width edges of ``columns`` from the original's range (a min/max reduction): the
    edges of :func:`~synthguard.metrics.disclosure._common.equal_width_edges` depend on the range only."""
    from ..metrics.disclosure._common import equal_width_edges

    if not columns:
        return {}
    parts = dt.compute(dt.map("original", _raw_bounds, tuple(columns), with_encoder=False, ordered=False))
    out = {}
    for j, c in enumerate(columns):
        lo = min(p[j][0] for p in parts)
        hi = max(p[j][1] for p in parts)
        out[c] = equal_width_edges(np.array([lo, hi]) if lo <= hi else np.zeros(0), bins)
    return out


def _small_top(frame: pd.DataFrame, k: int, limit: int) -> pd.DataFrame:
    small = frame[frame["size_s"] < k]
    return small.sort_values(["size_s", "pos"], kind="mergesort").head(limit)


def k_anonymity(dt: DistTables, thresholds: Mapping[str, float], *, quasi_identifiers: Any = None,
                continuous_column_names: Any = None, num_discrete_bins: int = 10, max_records: int = 100,
                k: int = 5) -> MetricResult:
    """:func:`synthguard.metrics.disclosure.anonymity.k_anonymity` as class-size group-bys and joins."""
    from ..metrics.disclosure._common import resolve_fields
    from ..metrics.disclosure.anonymity import _continuous, k_anonymity_result

    name = "k_anonymity"
    view = _FieldView(dt)
    qis, _ = resolve_fields(view, name, "quasi_identifiers", quasi_identifiers, None, None)  # type: ignore[arg-type]
    cont = _continuous(view, name, continuous_column_names, qis)  # type: ignore[arg-type]
    binned = continuous_edges(dt, cont, num_discrete_bins)
    groups = {"q": tuple(qis)}
    orig = _frames(dt, "original", groups, binned)
    syn = _frames(dt, "synthetic", groups, binned)
    kc = ["q1", "q2"]
    so = orig.groupby(kc).pos.count(split_out=_nsplit(dt, "original")).reset_index()
    ss = syn.groupby(kc).pos.count(split_out=_nsplit(dt, "synthetic")).reset_index()
    so = so.map_partitions(lambda f: f.rename(columns={"pos": "size_o"}))
    ss = ss.map_partitions(lambda f: f.rename(columns={"pos": "size_s"}))
    both = ss.merge(so, on=kc, how="left")
    rows = syn.merge(both, on=kc, how="left")
    meta_rows = pd.DataFrame({"pos": pd.Series([], dtype="int64"), "size_s": pd.Series([], dtype="int64"),
                              "size_o": pd.Series([], dtype="int64")})
    rows = rows.map_partitions(
        lambda f: pd.DataFrame({"pos": f["pos"].to_numpy(), "size_s": f["size_s"].to_numpy(np.int64),
                                "size_o": f["size_o"].fillna(0).to_numpy(np.int64)}), meta=meta_rows)
    tasks = [so.size_o.value_counts(split_out=1), ss.size_s.value_counts(split_out=1),
             ((both.size_s == 1) & (both.size_o == 1)).sum(),
             rows.map_partitions(_small_top, k, max(max_records, 0))]
    vo, vs, unique_both, top = dt.compute(tasks)
    per_role = {}
    for role, vc in (("original", vo), ("synthetic", vs)):
        vc = vc.sort_index()
        per_role[role] = (vc.index.to_numpy(np.int64), vc.to_numpy(np.int64))
    top = _small_top(top, k, max(max_records, 0)) if max_records > 0 else top.iloc[:0]
    recs = [{"synthetic_row": int(p), "class_size": int(a), "original_class_size": int(b)}
            for p, a, b in zip(top["pos"], top["size_s"], top["size_o"], strict=True)]
    if dt.synthetic.n_rows == 0:
        raise MetricError("the synthetic table has no rows")
    return k_anonymity_result(thresholds, qis, cont, k, per_role, int(unique_both), recs,
                              release_type=dt.release_type)
