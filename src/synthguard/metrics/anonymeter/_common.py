"""Helpers shared by the GDPR trio: canonical row order, parameter checks, the result contract.

Every attack works on *canonical* tables: exact duplicate rows removed and the remaining rows sorted
by a hash of their content, so neither the input row order nor duplicated rows change a result.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ...core.results import Baseline, Evidence, MetricResult, RowPairs
from ...data.encoding import NAN_CODE, Block, ranges_from_bounds
from ...data.hashing import distinct_groups
from ...engine.neighbors import gower
from ...errors import ConfigError, MetricError
from ...registry import LEVEL_FROM_THRESHOLDS, Context, Param
from ...stats import Rate, risk_from_rates, wilson_rate

FAMILY = "anonymeter"
DIRECTION = "lower is safer"
THRESHOLDS = {"medium": 0.3, "high": 0.5}
NOT_MEANINGFUL = "not meaningful"


def common_params(n_attacks: int = 2000) -> list[Param]:
    """Parameters every attack of the trio takes."""
    return [
        Param("n_attacks", n_attacks, "number of attacks (targets / queries) per attack type",
              kind="positive int"),
        Param("max_n_attacks", False, "use as many attacks as the data allows (every distinct original "
              "row, capped by the control size) instead of n_attacks (PETsARD's switch)", kind=bool),
        Param("confidence_level", 0.95, "confidence level of the Wilson rates and the risk interval",
              kind="probability"),
        Param("n_records", 20, "how many exposed original rows to list in 'records' (0 = none)", kind="non-negative int"),
    ]


# the metrics that read the trio's shared intermediates (freed by the runner once they have all run)
TRIO_USERS = ("singling_out_univariate", "singling_out_multivariate", "linkability", "inference",
              "anonymeter")


def memoised(name: str) -> Callable[[Callable[..., MetricResult]], Callable[..., MetricResult]]:
    """Memoise a metric's result in the run's ``ctx.memo`` by its parameters and thresholds, so the
    ``anonymeter`` summary and the stand-alone metrics compute each attack once per run."""
    def deco(fn: Callable[..., MetricResult]) -> Callable[..., MetricResult]:
        @functools.wraps(fn)
        def wrapper(ctx: Context, **kw: Any) -> MetricResult:
            key = (f"anonymeter:result:{name}:{sorted(kw.items())!r}:"
                   f"{sorted(dict(ctx.thresholds).items())!r}")
            return ctx.memo(key, lambda: fn(ctx, **kw))
        return wrapper
    return deco


# ------------------------------------------------------------------------------------------ canonical rows
@dataclass(frozen=True)
class Canonical:
    """Positions (in the validated table) of its distinct rows, in content-hash order."""

    rows: np.ndarray
    key: str = ""

    @property
    def n(self) -> int:
        return int(self.rows.size)


def canonical(ctx: Context, role: str, columns: Sequence[str]) -> Canonical:
    """Distinct rows of ``role`` on ``columns``, ordered by a hash of their content (cached per run;
    a drop-and-retest reads the training and control rows' from the run it re-tests,
    :func:`~synthguard.metrics._leakrows.real_result`).

    The position kept for a group of duplicates is its first occurrence (used only to name rows in
    ``records``). 64-bit hash collisions between distinct rows are ignored (probability ~ n^2 / 2^64).
    """
    from .._leakrows import real_result

    key = f"anonymeter:canonical:{role}:{tuple(columns)}"

    def compute() -> Canonical:  # sorted by hash: independent of the row order (asked of the backend)
        return Canonical(np.asarray(ctx.data.distinct_order(role, list(columns)), dtype=np.int64), key)

    if role == "synthetic":
        if ctx.data_backend is None:  # one process: from the release's groups release_ties reads too
            return ctx.memo(key, lambda: Canonical(_release_groups(ctx, columns)[0], key), users=TRIO_USERS)
        return ctx.memo(key, compute, users=TRIO_USERS)
    return ctx.memo(key, lambda: real_result(ctx, (key, role), compute, list(columns)), users=TRIO_USERS)


def _release_groups(ctx: Context, columns: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """One process: the release's distinct rows on ``columns`` by a hash of their content, as
    ``(the first position of each, in hash order; each row's distinct row)``: the canonical rows
    (what ``LocalBackend.distinct_order`` returns) and :func:`release_ties`' rows, from one
    hashing and one sort of the release (:func:`~synthguard.data.hashing.distinct_groups`; each
    hashed it before: at 10M rows 8 CPU s a call)."""
    key = f"anonymeter:release_groups:{tuple(columns)}"
    return ctx.memo(key, lambda: distinct_groups(ctx.tables.get("synthetic")[list(columns)]),
                    users=TRIO_USERS)


def release_ties(ctx: Context, columns: Sequence[str], records: np.ndarray, distinct: np.ndarray,
                 tie: str) -> RowPairs | None:
    """The release rows behind an attack's findings: ``(pooled real record, canonical distinct
    synthetic row on columns)`` pairs, each expanded to every release row with that content on
    ``columns`` (duplicates included), as :class:`~synthguard.core.results.RowPairs` to *review*
    (an attack's row is evidence, not a copy: removing it need not clear the finding). On a
    cluster each release row's distinct row is asked of the backend (its content hash, a
    per-record array). Vectorised over the pairs.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from synthguard.registry import Context
    >>> o = pd.DataFrame({"a": [1, 2]})
    >>> ctx = Context.from_frames(o, pd.DataFrame({"a": [5, 6, 5]}), o + 10, canonical=False)
    >>> d = int(np.flatnonzero(ctx.tables.synthetic["a"].to_numpy()[canonical(ctx, "synthetic", ["a"]).rows] == 5)[0])
    >>> release_ties(ctx, ["a"], np.array([0]), np.array([d]), "nearest row").pairs_of(np.array([True, False, False, False])).tolist()
    [[0, 0], [0, 2]]
    """
    records = np.asarray(records, dtype=np.int64)
    distinct = np.asarray(distinct, dtype=np.int64)
    key = f"anonymeter:canonical_of_rows:synthetic:{tuple(columns)}"

    def compute() -> np.ndarray:
        if ctx.data_backend is not None:
            return ctx.data.distinct_index("synthetic", list(columns))
        return _release_groups(ctx, columns)[1]  # canonical order

    of_row = ctx.memo(key, compute, users=TRIO_USERS)
    order = np.argsort(of_row, kind="stable")
    lo = np.searchsorted(of_row[order], distinct, "left")
    cnt = np.searchsorted(of_row[order], distinct, "right") - lo
    start = np.repeat(lo - np.r_[0, np.cumsum(cnt)[:-1]], cnt)
    rows = order[start + np.arange(int(cnt.sum()))]
    return RowPairs(np.repeat(records, cnt), rows, int(of_row.size), tie=tie, action="review")


def encoded_cells(ctx: Context, role: str, columns: Sequence[str], rows: np.ndarray | None) -> Block:
    """Encoded rows of ``role`` at canonical positions ``rows`` (``None``: every row) on
    ``columns``: asked of the backend on a cluster (only those rows travel); in one process sliced
    from the run's encoded block of ``role`` (no block kept per column set, see :func:`block_of`)."""
    if ctx.data_backend is not None:
        at = np.arange(ctx.data.n_rows(role)) if rows is None else np.asarray(rows, dtype=np.int64)
        return ctx.data.encoded_rows(role, list(columns), at)
    block = ctx.encoded.block(role).select(list(columns))
    return block if rows is None else block.take(np.asarray(rows, dtype=np.int64))


def neighbours_among(ctx: Context, queries: Sequence[tuple[str, np.ndarray | None]], columns: Sequence[str],
                     k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest canonical (distinct) synthetic rows on ``columns`` of the query rows
    (``(role, canonical positions or None = every row)``, stacked), asked of the backend:
    ``(distances, indices into the canonical synthetic rows)``, ties to the lower canonical row.
    The distance is anonymeter's (:func:`synthguard.engine.neighbors.gower`) with ranges over the
    query rows and the synthetic rows."""
    data = ctx.data
    canon = canonical(ctx, "synthetic", tabular_columns(ctx))
    roles = [r for r, _ in queries]
    lo, hi = data.value_bounds(list(columns), [*roles, "synthetic"],
                               rows={r: rows for r, rows in queries if rows is not None})
    metric = gower(ranges_from_bounds(lo, hi), clip=False, normalise=False, nan_rule="anonymeter")
    return data.kneighbors_among(queries, "synthetic", canon.rows, list(columns), metric,
                                 min(int(k), canon.n))


def block_of(ctx: Context, role: str, columns: Sequence[str], canon: Canonical) -> Block:
    """Encoded rows of ``role`` (columns in the order given) in canonical order.

    Sliced from the run's encoded block of ``role`` (encoded once), then reordered: only the
    columns asked for are copied, and no reordered copy of the whole table is kept (at 1 M rows
    that copy held about 0.25 GB through the whole trio, beside the singling-out matrices).
    """
    return ctx.encoded.block(role).select(list(columns)).take(canon.rows)


def float_matrix(block: Block) -> np.ndarray:
    """One float64 matrix of a block: numeric values, then categorical codes (missing -> NaN)."""
    cat = block.cat.astype(np.float64)
    cat[block.cat == NAN_CODE] = np.nan
    return np.ascontiguousarray(np.concatenate([block.num, cat], axis=1))


def tabular_columns(ctx: Context) -> list[str]:
    cols = ctx.tables.schema.tabular_columns()
    if not cols:
        raise MetricError("no tabular columns (every column is text or id): the trio needs tabular data")
    return cols


def check_columns(ctx: Context, columns: Sequence[str], param: str) -> list[str]:
    """``columns`` validated against the tabular columns of the schema."""
    known = set(ctx.tables.schema.tabular_columns())
    cols = [str(c) for c in columns]
    bad = [c for c in cols if c not in known]
    if bad:
        raise ConfigError(f"parameter {param!r}: column(s) {bad} are not tabular columns of the data "
                          f"(text and id columns are excluded): use some of {sorted(known)}")
    if len(set(cols)) != len(cols):
        raise ConfigError(f"parameter {param!r} names a column twice: {cols}")
    return cols


def resolve_n_attacks(n_attacks: int, max_n_attacks: bool, available: Mapping[str, int],
                      metric: str) -> tuple[int, str | None]:
    """The number of attacks to run and a note when it had to be clipped.

    ``available`` maps a role to the number of distinct rows that can serve as targets.
    """
    cap = min(available.values())
    if max_n_attacks:
        return cap, None
    if n_attacks > cap:
        where = ", ".join(f"{k} has {v}" for k, v in available.items())
        return cap, (f"n_attacks={n_attacks} exceeds the distinct rows available ({where}): "
                     f"ran {cap} attacks")
    return n_attacks, None


# ------------------------------------------------------------------------------------------ every record
def pooled_neighbours(ctx: Context, columns: Sequence[str], k: int) -> np.ndarray:
    """The ``k`` nearest (canonical, distinct) synthetic rows of every training and every control
    record on ``columns``: indices, shape ``(n_original + n_control, k)``, -1 where none is finite.

    Label-free, so per-record outcomes built on it can be compared between training and control
    records exactly (the verdict permutes their labels): the distance is anonymeter's (see
    :func:`synthguard.engine.neighbors.gower`) with ranges over the pooled real records and the
    synthetic rows, and ties go to the lower canonical synthetic row. Asked of the backend
    (:meth:`~synthguard.engine.backend.Backend.kneighbors_among`): in one process each distinct
    real row is searched once (duplicates share their neighbours) through the shared neighbour
    engine, which works in chunks; on a cluster the partitioned search. Memory is
    ``O((n_original + n_control) * k)``, never a real x synthetic matrix. Memoised per run
    (:func:`pooled_search`).
    """
    return pooled_search(ctx, columns, k)[1]


def _pooled_roles(ctx: Context) -> tuple[str, ...]:
    return ("original", "control") if ctx.tables.has_control else ("original",)


def pooled_search(ctx: Context, columns: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`pooled_neighbours` with the distances: ``(distances, indices)``, memoised per run."""
    key = f"anonymeter:pooled_nn:{tuple(columns)}:{int(k)}"

    def compute() -> tuple[np.ndarray, np.ndarray]:
        return neighbours_among(ctx, [(r, None) for r in _pooled_roles(ctx)], columns, k)

    return ctx.memo(key, compute, users=TRIO_USERS)


def target_neighbours(ctx: Context, queries: Sequence[tuple[str, np.ndarray]], columns: Sequence[str],
                      k: int, *, pooled: bool) -> tuple[np.ndarray, np.ndarray]:
    """:func:`neighbours_among` of an attack's targets (``(role, canonical positions)``), read
    from the run's search of every real record (:func:`pooled_search`) when the attack runs it
    anyway (``pooled``) and the distance is the same: the value ranges over the targets and the
    release equal those over every real record and the release (a row's nearest release rows
    depend on its values, the release and the distance only). Else searched."""
    roles = _pooled_roles(ctx)
    if pooled and all(r in roles for r, _ in queries):
        data = ctx.data
        mine = data.value_bounds(list(columns), [*(r for r, _ in queries), "synthetic"],
                                 rows={r: rows for r, rows in queries})
        every = data.value_bounds(list(columns), [*roles, "synthetic"])
        if all(np.array_equal(a, b, equal_nan=True) for a, b in zip(mine, every, strict=True)):
            dist, idx = pooled_search(ctx, columns, k)
            start = dict(zip(roles, np.cumsum([0, *(data.n_rows(r) for r in roles[:-1])]), strict=True))
            at = np.concatenate([int(start[r]) + np.asarray(rows, dtype=np.int64) for r, rows in queries])
            return dist[at], idx[at]
    return neighbours_among(ctx, queries, columns, k)


# ------------------------------------------------------------------------------------------ results
@dataclass(frozen=True)
class Outcome:
    """Counts of one attack type, turned into the JSON contract by :func:`summarise`."""

    n_attacks: int
    n_success: float
    n_baseline_attacks: int
    n_baseline: float
    n_control_attacks: int | None = None
    n_control: float | None = None


def summarise(o: Outcome, confidence_level: float) -> tuple[dict[str, Any], Rate, Rate, Rate | None,
                                                          str | None]:
    """The result contract (anonymeter's rates, the risk and its interval) and the warning, if any."""
    att = wilson_rate(o.n_success, o.n_attacks, confidence_level)
    base = wilson_rate(o.n_baseline, o.n_baseline_attacks, confidence_level)
    ctl = None
    if o.n_control is not None and o.n_control_attacks:
        ctl = wilson_rate(min(o.n_control, o.n_control_attacks), o.n_control_attacks, confidence_level)
    risk = risk_from_rates(att, ctl)
    d: dict[str, Any] = {
        "risk": risk.value,
        "risk_ci": [risk.ci[0], risk.ci[1]],
        "relative_to": risk.relative_to,
        "attack_rate": att.value,
        "attack_rate_err": att.error,
        "baseline_rate": base.value,
        "baseline_rate_err": base.error,
        "control_rate": ctl.value if ctl is not None else None,
        "control_rate_err": ctl.error if ctl is not None else None,
        "n_attacks": int(o.n_attacks),
        "n_success": _num(o.n_success),
        "n_baseline_attacks": int(o.n_baseline_attacks),
        "n_baseline": _num(o.n_baseline),
        "n_control_attacks": None if o.n_control_attacks is None else int(o.n_control_attacks),
        "n_control": None if o.n_control is None else _num(o.n_control),
    }
    warning = None
    if base.value >= att.value:
        warning = (f"the attack is no better than the naive baseline (attack rate {att.value:.4f} <= "
                   f"baseline rate {base.value:.4f}): the risk estimate cannot be trusted; it does not "
                   "mean there is no risk")
    d["meaningful"] = warning is None
    return d, att, base, ctl, warning


def _num(x: float) -> float | int:
    return int(x) if float(x).is_integer() else float(x)


def risk_level(d: Mapping[str, Any], thresholds: Mapping[str, float]) -> str:
    if not d.get("meaningful", True):
        return NOT_MEANINGFUL
    return LEVEL_FROM_THRESHOLDS  # the risk against the declared thresholds (the executor)


def build_result(ctx: Context, name: str, d: dict[str, Any], base: Rate, warning: str | None,
                 notes: Sequence[str], records: list[dict[str, Any]] | None,
                 baseline_text: str, evidence: Evidence | None = None) -> MetricResult:
    """A :class:`MetricResult` from the contract ``d`` (value = risk) and the attack's evidence over
    every training and every control record (``None`` without a control: nothing to test)."""
    warn = "; ".join([w for w in [warning, *notes] if w]) or None
    return MetricResult(
        name=name, family=FAMILY, value=d["risk"], direction=DIRECTION,
        baseline=Baseline(base.value, baseline_text, base.ci),
        ci=(d["risk_ci"][0], d["risk_ci"][1]), n=d["n_attacks"],
        risk_level=risk_level(d, ctx.thresholds), warning=warn, details=d, records=records,
        evidence=evidence)


def top_records(records: list[dict[str, Any]], n: int) -> list[dict[str, Any]] | None:
    return records[:n] if n > 0 else None


def format_cell(ctx: Context, role: str, row: int, column: str) -> Any:
    """The value of one cell of a validated table, as plain JSON (dates as ISO strings)."""
    return plain_cell(ctx.tables.get(role)[column].iloc[int(row)])


def plain_cell(v: Any) -> Any:
    """A cell's value as plain JSON: missing -> ``None``, timestamps as ISO strings, NumPy scalars
    as Python ones.

    Examples
    --------
    >>> plain_cell(np.int64(3)), plain_cell(pd.Timestamp("2020-01-02")), plain_cell(float("nan"))
    (3, '2020-01-02T00:00:00', None)
    """
    if v is None or (not isinstance(v, str) and pd.isna(v)):
        return None
    if isinstance(v, pd.Timestamp):
        return v.isoformat()
    if isinstance(v, (np.generic,)):
        return v.item()
    return v
