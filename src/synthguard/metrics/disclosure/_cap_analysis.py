"""One CAP evaluation on the tables of a context: codes, per-row probabilities, baseline, breakdowns.

Shared by the CAP metrics and DisclosureProtection(Estimate), so they cannot drift apart.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...core.results import Evidence, RecordFlags
from ...registry import Context
from ...stats import wilson_interval
from ._cap_core import CapRows, cap_rows, copy_responds
from ._common import column_codes, evidence_roles, nunique_codes, rare_records

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
    tables merged from partitions in :mod:`synthguard.distributed`. ``counts`` (default 1) must be
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
    return cap_evidence_from_flags(flags["original"], flags["control"], exact, rare, repeats=repeats)


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
    """The :func:`cap_evidence` from its per-record arrays (shared with
    :mod:`synthguard.distributed`): ``exposed_o`` / ``exposed_c`` (:func:`exposed`, per training /
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
