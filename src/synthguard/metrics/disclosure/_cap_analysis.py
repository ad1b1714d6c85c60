"""One CAP evaluation on the tables of a context: codes, per-row probabilities, baseline, breakdowns.

Shared by the CAP metrics and DisclosureProtection(Estimate), so they cannot drift apart.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ...core.results import Evidence, RecordFlags, RowPairs
from ...registry import Context
from ...stats import wilson_interval
from ._cap_core import CapRows, cap_rows, copy_responds
from ._common import column_codes, evidence_roles, joint_ids, nunique_codes, rare_records

CLASS_SIZE_BINS = ((1, 1), (2, 4), (5, 9), (10, 19), (20, 49), (50, None))


@dataclass(frozen=True)
class CapAnalysis:
    """Everything one CAP run produced (see :func:`analyse`)."""

    method: str
    keys: list[str]
    sensitive: list[str]
    rows: CapRows
    n_categories: list[int]
    per_field: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def baseline(self) -> float:
        """Protection of a uniform guess among the original's sensitive values: ``1 - 1/prod(n)``."""
        return 1.0 - 1.0 / float(np.prod(np.asarray(self.n_categories, dtype=float)))

    @property
    def n_counted(self) -> int:
        return int(self.rows.counted.sum())

    @property
    def n_rows(self) -> int:
        """Original rows analysed."""
        return int(self.rows.probability.size)

    @property
    def n_exact_key_match(self) -> int:
        """Original rows whose key some synthetic row has."""
        return int((self.rows.distance == 0).sum())

    def class_sizes(self) -> list[dict[str, Any]]:
        """:func:`class_size_breakdown` of the rows."""
        return class_size_breakdown(self.rows)

    def top_records(self, limit: int) -> list[dict[str, Any]]:
        """:func:`records` of the analysis."""
        return records(self, limit)

    @property
    def cap_protection(self) -> float:
        """``1 - mean(probability)`` over counted rows (NaN when none is counted); the sum is exactly
        rounded, so it does not depend on the order of the rows (nor on how they are partitioned)."""
        n = self.n_counted
        return float(1.0 - self.sum_probability() / n) if n else float("nan")

    def sum_probability(self) -> float:
        """Exactly rounded sum of the counted probabilities."""
        return exact_sum(self.rows.probability[self.rows.counted])

    def sum_complement(self) -> float:
        """Exactly rounded sum of ``1 - p`` over the counted rows."""
        return exact_sum(1.0 - self.rows.probability[self.rows.counted])

    def protection_ci(self, confidence_level: float = 0.95) -> tuple[float, float] | None:
        """Wilson interval of ``1 - mean(p)`` with ``sum(1 - p)`` as the fractional success count.

        Each ``p`` lies in [0, 1], so its variance is at most that of a 0/1 outcome with the same
        mean: the interval is conservative (at least as wide as needed).
        """
        n = self.n_counted
        if n == 0:
            return None
        k = self.sum_complement()
        return wilson_interval(min(max(k, 0.0), n), n, confidence_level)


def exact_sum(values: np.ndarray, counts: np.ndarray | None = None) -> float:
    """``sum(values * counts)`` correctly rounded (``math.fsum`` over the exact products), so equal
    multisets give equal bits whatever the order: per-row values in one process, (value, count)
    tables merged from partitions by the Dask backend. ``counts`` (default 1) must be
    integers below 2**53."""
    v = np.asarray(values, dtype=np.float64).ravel()
    if counts is None:
        uniq, cnt = np.unique(v, return_counts=True)  # fewer terms; the exact total is the same
        cnt = cnt.astype(np.float64)
    else:
        uniq, cnt = v, np.asarray(counts, dtype=np.float64).ravel()
    if uniq.size == 0:
        return 0.0
    # Dekker's exact product: uniq * cnt == hi + lo without rounding error (Veltkamp splitting)
    hi = uniq * cnt
    split = 134217729.0  # 2**27 + 1
    with np.errstate(over="ignore", invalid="ignore"):
        a_big = split * uniq
        a_hi = a_big - (a_big - uniq)
        a_lo = uniq - a_hi
        b_big = split * cnt
        b_hi = b_big - (b_big - cnt)
        b_lo = cnt - b_hi
        lo = ((a_hi * b_hi - hi) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    lo = np.where(np.isfinite(lo), lo, 0.0)
    return math.fsum(np.concatenate([hi, lo]).tolist())


def cap_codes(ctx: Context, keys: Sequence[str], sensitive: Sequence[str], *,
              continuous: Sequence[str] = (), bins: int = 10) -> dict[str, np.ndarray]:
    """Codes of ``keys + sensitive`` for original and synthetic (``continuous`` columns binned)."""
    return column_codes(ctx, list(keys) + list(sensitive), ("original", "synthetic"),
                        continuous=continuous, bins=bins)


def analyse(ctx: Context, keys: Sequence[str], sensitive: Sequence[str], method: str, *,
            continuous: Sequence[str] = (), bins: int = 10, per_field: bool = True) -> CapAnalysis:
    """CAP of the original rows against the synthetic rows on ``keys`` -> ``sensitive``.

    ``continuous`` columns are cut into ``bins`` equal-width bins from the original table;
    every other column is matched on its exact value, missing values form their own category.
    """
    codes = cap_codes(ctx, keys, sensitive, continuous=continuous, bins=bins)
    return analyse_codes(codes["original"], codes["synthetic"], keys, sensitive, method,
                         per_field=per_field)


CAP_STATISTIC = ("share of real records whose sensitive value the attacker gets right by majority: more "
                 "than half of the synthetic rows it pools for the record's key fields (the CAP rule) "
                 "carry the record's true sensitive value")


def cap_evidence(ctx: Context, keys: Sequence[str], sensitive: Sequence[str], method: str, *,
                 continuous: Sequence[str] = (), bins: int = 10, repeats: str | None = None) -> Evidence:
    """CAP of the training rows against the CAP of the control rows, attacked with the same
    synthetic rows (same key/sensitive columns, same CAP variant; bins of ``continuous`` columns
    from the original AND control rows pooled, so a record's bin does not depend on its label).

    Per-record flags (:class:`~synthguard.core.results.RecordFlags`) over every training and every
    control row: a record is *exposed* when its correct attribution probability exceeds 1/2, i.e.
    the attacker's majority guess from the synthetic rows is the record's true sensitive tuple.
    Records the variant skips (key absent from the synthetic data under ``cap``) are not exposed.
    ``responds["exact"]``: the record would be exposed once its exact copy is in the release
    (:func:`~synthguard.metrics.disclosure._cap_core.copy_responds`); ``"rare"``: the same for
    records unique on the key fields among the real rows pooled. ``repeats`` names the metric whose
    test this one repeats on the same records: the evidence then informs without driving the
    verdict (one test, one vote).
    """
    codes = column_codes(ctx, list(keys) + list(sensitive), ("original", "synthetic", "control"),
                         continuous=continuous, bins=bins, edges_from=evidence_roles(ctx))
    q = len(keys)
    syn = codes["synthetic"]
    flags = {}
    for role in ("original", "control"):  # two sides
        real = codes[role]
        flags[role] = exposed(cap_rows(real[:, :q], real[:, q:], syn[:, :q], syn[:, q:], method).probability)
    real = codes["original"]
    exact = copy_responds(real[:, :q], real[:, q:], syn[:, :q], syn[:, q:])
    rare = rare_records({r: codes[r][:, :q] for r in ("original", "control")})["original"]
    ev = cap_evidence_from_flags(flags["original"], flags["control"], exact, rare, repeats=repeats)
    if method == "generalized_cap" or ev.flags is None:
        return ev  # its pooled keys are the nearest ones: no key cell to name
    # the release rows behind a flag: those with its key fields and its sensitive values (the
    # majority the attacker reads its value from)
    io, ic, is_ = joint_ids(codes["original"], codes["control"], syn)
    pairs = RowPairs.groups(np.r_[io, ic], is_, action="review",
                            tie="a release row with its key fields and its sensitive values")
    return replace(ev, flags=replace(ev.flags, pairs=pairs))


def exposed(probability: np.ndarray) -> np.ndarray:
    """The CAP evidence's per-record flag: correct attribution probability above 1/2 (the
    attacker's majority guess is right); NaN (a record the variant skips) is not exposed.

    Examples
    --------
    >>> import numpy as np
    >>> exposed(np.array([0.5, 0.75, np.nan])).tolist()
    [False, True, False]
    """
    with np.errstate(invalid="ignore"):
        return np.asarray(probability, dtype=np.float64) > 0.5


def cap_evidence_from_flags(exposed_o: np.ndarray, exposed_c: np.ndarray, exact: np.ndarray,
                            rare: np.ndarray, *, repeats: str | None = None) -> Evidence:
    """The :func:`cap_evidence` from its per-record arrays (from the
    backend's key lookups): ``exposed_o`` / ``exposed_c`` (:func:`exposed`, per training /
    control record), ``exact`` (:func:`~._cap_core.copy_responds`, per training record) and
    ``rare`` (key unique among the real records pooled, per training record).

    Examples
    --------
    >>> import numpy as np
    >>> ev = cap_evidence_from_flags(np.array([True, False]), np.array([False, False]),
    ...                              np.array([True, True]), np.array([True, False]))
    >>> ev.risk, ev.k_member, ev.visibility["rare"]
    ('inference', 1, 0.5)
    """
    rf = RecordFlags(exposed_o, exposed_c, {"exact": exact, "rare": exact & rare})
    note = None
    if repeats:
        note = (f"the same test as {repeats!r} on the same records (CAP probability above 1/2): reported, "
                "but only one of them drives the verdict")
    return Evidence.from_flags(CAP_STATISTIC, rf, sees=("exact", "rare"), risk="inference",
                               baseline="control rows (never trained on) attacked with the same "
                                        "synthetic rows", drives_verdict=repeats is None, note=note)


def analyse_codes(real: np.ndarray, syn: np.ndarray, keys: Sequence[str], sensitive: Sequence[str],
                  method: str, *, per_field: bool = True,
                  n_categories: list[int] | None = None) -> CapAnalysis:
    """:func:`analyse` on code matrices (columns ``keys + sensitive``); ``n_categories`` overrides
    the category counts of the sensitive columns (e.g. from the full table when ``real`` is a
    subsample)."""
    q = len(keys)
    rk, rs, sk, ss = real[:, :q], real[:, q:], syn[:, :q], syn[:, q:]
    n_cat = n_categories if n_categories is not None else nunique_codes(rs)
    rows = cap_rows(rk, rs, sk, ss, method)
    fields: dict[str, dict[str, Any]] = {}
    if per_field and len(sensitive) > 1:
        for j, name in enumerate(sensitive):  # loop over sensitive columns
            r = cap_rows(rk, rs[:, [j]], sk, ss[:, [j]], method)
            p = r.probability[r.counted]
            fields[name] = {"cap_protection": float(1 - exact_sum(p) / p.size) if p.size else None,
                            "baseline_protection": 1.0 - 1.0 / n_cat[j], "n": int(p.size)}
    return CapAnalysis(method, list(keys), list(sensitive), rows, n_cat, fields)


def class_size_breakdown(rows: CapRows) -> list[dict[str, Any]]:
    """Protection by size of the pooled synthetic class (``0`` = key absent from the synthetic data)."""
    out = []
    bins = ((0, 0),) + CLASS_SIZE_BINS
    for lo, hi in bins:  # loop over a handful of size bins
        sel = (rows.pool >= lo) & (rows.pool <= (hi if hi is not None else np.iinfo(np.int64).max))
        p = rows.probability[sel & rows.counted]
        n_rows = int(sel.sum())
        if n_rows == 0:
            continue
        label = f"{lo}" if lo == hi else (f"{lo}-{hi}" if hi is not None else f"{lo}+")
        out.append({"class_size": label, "n_original_rows": n_rows, "n_counted": int(p.size),
                    "cap_protection": float(1 - exact_sum(p) / p.size) if p.size else None})
    return out


def records(analysis: CapAnalysis, limit: int) -> list[dict[str, Any]]:
    """The ``limit`` original rows whose sensitive values the attacker attributes most confidently."""
    rows = analysis.rows
    if limit <= 0:
        return []
    ok = np.flatnonzero(rows.counted)
    if ok.size == 0:
        return []
    order = ok[np.lexsort((ok, -rows.probability[ok]))][:limit]
    return [{"original_row": int(i), "probability": float(rows.probability[i]),
             "synthetic_rows_pooled": int(rows.pool[i]), "key_distance": int(rows.distance[i])}
            for i in order]


def safe_ratio(value: float, baseline: float) -> float:
    """``min(value / baseline, 1)``; NaN when the baseline is 0 or the value undefined."""
    if baseline <= 0 or not math.isfinite(value):
        return float("nan")
    return min(value / baseline, 1.0)


# --- cap / zero_cap through the context's backend (one process or a cluster, the same code) ------

def _pool_bin(pool: np.ndarray) -> np.ndarray:
    """Class-size bin of each pooled size: 0 = key absent, then :data:`CLASS_SIZE_BINS` from 1."""
    edges = np.array([lo for lo, _ in CLASS_SIZE_BINS], dtype=np.int64)
    return np.searchsorted(edges, np.asarray(pool, dtype=np.int64), side="right").astype(np.int64)


def _scored(f: Any, zero: bool) -> Any:
    """Per real row of a key lookup (``pos``, ``pool``, ``pair``): ``p`` (NaN = not counted),
    ``pool`` and its class-size ``bin``."""
    import pandas as pd

    pool = f["pool"].to_numpy(np.int64)
    pair = f["pair"].to_numpy(np.int64)
    matched = pool > 0
    p = np.full(len(f), np.nan)
    p[matched] = pair[matched] / pool[matched]
    if zero:
        p[~matched] = 0.0
    return pd.DataFrame({"pos": f["pos"].to_numpy(np.int64), "pool": pool, "p": p,
                         "bin": _pool_bin(pool)})


def _cap_lookups(keys: Sequence[str], sensitive: Sequence[str]) -> dict[str, Any]:
    return {"pool": (list(keys), ("synthetic",)), "pair": (list(keys) + list(sensitive), ("synthetic",))}


def _cap_counts(data: Any, keys: Sequence[str], sensitive: Sequence[str], zero: bool,
                top: int, bins: dict[str, np.ndarray] | None = None) -> dict[str, Any]:
    """Counts, exactly rounded sums, the class-size breakdown and the top records of one CAP run
    over the original rows, from the backend's key lookups ((bin, p) -> rows tables); ``bins``:
    continuous columns cut at these inner edges first."""
    rows = data.key_rows("original", _cap_lookups(keys, sensitive), bins=bins or None)
    scored = lambda f: _scored(f, zero)  # noqa: E731
    table = rows.counts(lambda f: scored(f).dropna(subset=["p"])[["bin", "p"]])
    per_bin = rows.counts(lambda f: scored(f)["bin"])
    out = _summarise(table, per_bin)
    out["top"] = rows.top(top, ["p", "pos"], [False, True], where=lambda g: g["p"].notna().to_numpy(),
                          derive=scored) if top > 0 else None
    return out


def _summarise(pb: Any, per_bin: Any) -> dict[str, Any]:
    """Counts, exact sums and the class-size breakdown from the (bin, p) -> rows table."""
    pb = pb.sort_index()
    p_vals = pb.index.get_level_values("p").to_numpy(dtype=np.float64) if len(pb) else np.zeros(0)
    bins_of = pb.index.get_level_values("bin").to_numpy() if len(pb) else np.zeros(0, dtype=np.int64)
    w = pb.to_numpy(dtype=np.float64)
    out: dict[str, Any] = {
        "n_counted": int(w.sum()), "n_rows": int(per_bin.sum()),
        "n_exact": int(per_bin[per_bin.index > 0].sum()),
        "sum_p": exact_sum(p_vals, w), "sum_1mp": exact_sum(1.0 - p_vals, w),
    }
    sizes = []
    labels = ((0, 0),) + CLASS_SIZE_BINS
    for b, (lo, hi) in enumerate(labels):  # a handful of size bins
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


@dataclass(frozen=True)
class CountedCapAnalysis(CapAnalysis):
    """A :class:`CapAnalysis` from the backend's reductions (counts, exact sums, breakdown, top
    records) instead of per-row arrays: ``cap`` and ``zero_cap`` in one process and on a cluster."""

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
        top = top.iloc[:limit]
        return [{"original_row": int(pos), "probability": float(p), "synthetic_rows_pooled": int(pool),
                 "key_distance": 0 if pool > 0 else -1}
                for pos, p, pool in zip(top["pos"], top["p"], top["pool"], strict=True)]


def analyse_counted(ctx: Context, keys: Sequence[str], sensitive: Sequence[str], method: str, *,
                    max_records: int = 100, per_field: bool = True,
                    bins: dict[str, np.ndarray] | None = None) -> CountedCapAnalysis:
    """:func:`analyse` of ``cap`` / ``zero_cap`` (exact key matches) through ``ctx.data``;
    ``bins``: continuous columns cut at these inner edges (:func:`~._common.backend_bins`) first."""
    if method not in ("cap", "zero_cap"):
        raise ValueError(f"counted CAP runs cap or zero_cap, not {method!r}")
    data = ctx.data
    zero = method == "zero_cap"
    counts = _cap_counts(data, keys, sensitive, zero, max(max_records, 0), bins)
    # distinct original values per sensitive column (missing counted once; binned: bins present)
    n_cat = [int(data.key_groups([c], ("original",), bins=bins or None).sums(lambda f: f["n_original"] > 0)[0])
             for c in sensitive]
    fields: dict[str, dict[str, Any]] = {}
    if per_field and len(sensitive) > 1:
        for j, name in enumerate(sensitive):  # loop over sensitive columns
            s = _cap_counts(data, keys, [name], zero, 0, bins)
            fields[name] = {"cap_protection": float(1 - s["sum_p"] / s["n_counted"]) if s["n_counted"]
                            else None, "baseline_protection": 1.0 - 1.0 / n_cat[j], "n": s["n_counted"]}
    return CountedCapAnalysis(method, list(keys), list(sensitive), None, n_cat, fields,  # type: ignore[arg-type]
                              counts)


def cap_evidence_counted(ctx: Context, keys: Sequence[str], sensitive: Sequence[str], method: str, *,
                         repeats: str | None = None, continuous: Sequence[str] = (), bins: int = 10,
                         pairs: bool = False) -> Evidence:
    """:func:`cap_evidence` of ``cap`` / ``zero_cap`` through ``ctx.data``: per training and
    control record, exposed (:func:`exposed`), and per training record whether a copy would expose
    it (:func:`~._cap_core.copy_responds_counts`) and whether its key is unique among the real
    records pooled. ``continuous`` columns are cut into ``bins`` equal-width bins from the original
    AND control rows pooled (label-free, as :func:`cap_evidence`). ``pairs``: the release rows
    behind a flag as :func:`cap_evidence` ties them (on a cluster from the backend's key ids cut at
    the same edges, one number per row)."""
    from ._cap_core import copy_responds_counts
    from ._common import backend_bins

    edges = backend_bins(ctx.data, list(continuous), bins, "equal_width", evidence_roles(ctx)) or None
    lookups = {**_cap_lookups(keys, sensitive), "real": (list(keys), ("original", "control"))}
    zero = method == "zero_cap"
    got = {}
    for role in ("original", "control"):
        fns = {"exposed": lambda f: exposed(_scored(f, zero)["p"].to_numpy())}
        if role == "original":
            fns["exact"] = lambda f: copy_responds_counts(f["pair"].to_numpy(), f["pool"].to_numpy())
            fns["rare"] = lambda f: f["real"].to_numpy() == 1
        got[role] = ctx.data.key_rows(role, lookups, bins=edges).flags(**fns)
    o = got["original"]
    ev = cap_evidence_from_flags(o["exposed"], got["control"]["exposed"], o["exact"], o["rare"],
                                 repeats=repeats)
    if not pairs or ev.flags is None:
        return ev
    # the release rows behind a flag: those with its key fields and its sensitive values
    if ctx.data_backend is not None:
        ids = ctx.data.key_ids(list(keys) + list(sensitive), ("original", "control", "synthetic"),
                               bins=edges)
        io, ic, is_ = ids["original"], ids["control"], ids["synthetic"]
    else:
        codes = column_codes(ctx, list(keys) + list(sensitive), ("original", "synthetic", "control"),
                             continuous=continuous, bins=bins, edges_from=evidence_roles(ctx))
        io, ic, is_ = joint_ids(codes["original"], codes["control"], codes["synthetic"])
    found = RowPairs.groups(np.r_[io, ic], is_, action="review",
                            tie="a release row with its key fields and its sensitive values")
    return replace(ev, flags=replace(ev.flags, pairs=found))
