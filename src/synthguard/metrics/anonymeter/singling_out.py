"""Singling out (anonymeter semantics, 1.0.0 control correction), univariate and multivariate.

An attacker builds predicate queries from the synthetic rows that select exactly one synthetic row,
and succeeds when a query also selects exactly one original row. The naive baseline uses random
queries; the control attack runs the same queries on real held-out rows, rescaled to the original's
size by the fitted singling-out curve of Cohen & Nissim (2020) (with the success count measured
correctly, as in anonymeter 1.0.0; 1.1.0's fit is flat and always gives ``(|ctl|+1)/(|ori|+1)``).

The attack asks the run's backend (``ctx.data``) for everything it reads (:class:`_Asked`), in one
process as on a cluster: the release's value flags and medians, the release rows the drawn queries
come from and every count of a batch of queries (the original's, the control's, the control
curve's subsamples, the pooled evidence's) (``Backend.value_flags``, ``medians``, ``encoded_rows``,
``query_counts``, ``query_subset_counts``); the queries are drawn by the same generation code
(:func:`multivariate_search`, :func:`random_search`, :func:`univariate_candidates`), so both give
the same JSON. The matrix kernels (:func:`prepare`, :func:`univariate_queries`,
:func:`multivariate_queries`, :func:`measure_control_curve`) are the same attack written on whole
matrices, kept as the reference the conformance tests hold against anonymeter.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...core.results import Evidence, MetricResult, RecordFlags
from ...engine import queries as Q
from ...errors import ConfigError, MetricError
from ...registry import Context, Param, register
from ._common import (
    DIRECTION,
    FAMILY,
    THRESHOLDS,
    Canonical,
    Outcome,
    block_of,
    build_result,
    canonical,
    check_columns,
    common_params,
    float_matrix,
    memoised,
    plain_cell,
    release_ties,
    resolve_n_attacks,
    summarise,
    tabular_columns,
)
from .partners import Partners, partners_of, release_partners

N_SIZES = 10
N_REPEATS = 5
_CSR_LIMIT = 25_000_000
#: the multivariate search reads the values of its drawn rows from the whole release's query matrix,
#: fetched once, when that matrix is at most this large (else each batch asks for its rows)
RELEASE_MATRIX_BYTES = 256 * 2**20
#: a multivariate search asks for the release rows' partners (:mod:`.partners`) after its first
#: batch of attempts (PARTNERS_AFTER of them), once the attempts still to come (those allowed, and
#: those its rate of hits so far needs) are at least PARTNERS_PER_ROW per release row and at least
#: PARTNERS_MIN_LEFT: building them costs about what counting 2.6 attempts per row does (at a
#: million rows 1.0 s, against about 0.5 us an attempt of which partners spare 78 %), and a long
#: search makes millions
PARTNERS_AFTER = 1_000
PARTNERS_PER_ROW = 3
PARTNERS_MIN_LEFT = 100_000


@dataclass(frozen=True)
class Queries:
    """A batch of conjunctive queries (see :mod:`synthguard.engine.queries`), with the synthetic row each came from."""

    col: np.ndarray
    op: np.ndarray
    val: np.ndarray
    src: np.ndarray

    @property
    def size(self) -> int:
        return int(self.col.shape[0])

    def take(self, idx: np.ndarray) -> Queries:
        return Queries(self.col[idx], self.op[idx], self.val[idx], self.src[idx])


@dataclass(frozen=True)
class SOData:
    """Canonical float matrices of the three tables plus the column kinds."""

    columns: list[str]
    ori: np.ndarray
    syn: np.ndarray
    ctl: np.ndarray | None
    canon: dict[str, Canonical]
    is_num: np.ndarray
    bool_codes: dict[int, tuple[float, float]]


def prepare(ctx: Context, columns: list[str]) -> SOData:
    """Encode the three tables once (canonical order, duplicates dropped)."""
    return ctx.memo(f"anonymeter:so:{tuple(columns)}", lambda: _prepare(ctx, columns),
                    users=("singling_out_univariate", "singling_out_multivariate", "anonymeter"))


def _prepare(ctx: Context, columns: list[str]) -> SOData:
    schema = ctx.tables.schema
    num_cols = [c for c in columns if schema.columns[c].is_numeric]
    order = num_cols + [c for c in columns if c not in num_cols]
    canon = {r: canonical(ctx, r, order) for r in ctx.tables.roles}
    mats = {r: float_matrix(block_of(ctx, r, order, canon[r])) for r in ctx.tables.roles}
    is_num = np.array([c in num_cols for c in order])
    bools: dict[int, tuple[float, float]] = {}
    import pandas as pd

    for j, c in enumerate(order):
        if schema.columns[c].sdtype == "boolean":
            codes = ctx.encoded.encode(pd.DataFrame({c: [True, False]}), [c]).cat[:, 0]
            bools[j] = (float(codes[0]), float(codes[1]))
    return SOData(order, mats["original"], mats["synthetic"], mats.get("control"), canon, is_num, bools)


# ------------------------------------------------------------------------------------------ generation
def univariate_queries(X: np.ndarray, is_num: np.ndarray, n: int, rng: np.random.Generator) -> Queries:
    """Up to ``n`` distinct one-column queries that single out a row of ``X`` (from value counts).

    Candidates per column: ``IS NULL`` when exactly one value is missing, ``<= min`` / ``>= max`` for
    numeric columns whose extreme is unique, ``== v`` for every value seen once; ``n`` of them are
    drawn uniformly without replacement.
    """
    cols, ops, vals, srcs = [], [], [], []
    for j in range(X.shape[1]):  # loop over columns; each step is vectorised
        x = X[:, j]
        nan = np.isnan(x)
        if nan.sum() == 1:
            cols.append([j]), ops.append([Q.ISNULL]), vals.append([0.0])
            srcs.append(np.flatnonzero(nan)[:1])
        pos = np.flatnonzero(~nan)
        if pos.size == 0:
            continue
        u, first, cnt = np.unique(x[pos], return_index=True, return_counts=True)
        if is_num[j]:
            for end, op in ((0, Q.LE), (-1, Q.GE)):
                if cnt[end] == 1:
                    cols.append([j]), ops.append([op]), vals.append([u[end]])
                    srcs.append(pos[first[[end]]])
        once = np.flatnonzero(cnt == 1)
        once = once[np.argsort(first[once], kind="stable")]  # by canonical row: free of code order
        m = int(once.size)
        cols.append(np.full(m, j)), ops.append(np.full(m, Q.EQ)), vals.append(u[once])
        srcs.append(pos[first[once]])
    col = np.concatenate([np.asarray(c, dtype=np.int64) for c in cols]) if cols else np.zeros(0, np.int64)
    op = np.concatenate([np.asarray(o, dtype=np.int64) for o in ops]) if ops else np.zeros(0, np.int64)
    val = np.concatenate([np.asarray(v, dtype=float) for v in vals]) if vals else np.zeros(0)
    src = np.concatenate([np.asarray(s, dtype=np.int64) for s in srcs]) if srcs else np.zeros(0, np.int64)
    pick = rng.permutation(col.size)[:n]
    return Queries(col[pick, None], op[pick, None], val[pick, None], src[pick])


def multivariate_queries(X: np.ndarray, is_num: np.ndarray, n_cols: int, n: int, max_attempts: int,
                         rng: np.random.Generator) -> tuple[Queries, int]:
    """Up to ``n`` distinct ``n_cols``-column queries that single out a row of ``X``.

    Each attempt takes a random row and ``n_cols`` random columns: a missing value gives ``IS NULL``,
    a numeric value ``>= v`` if above the column median else ``<= v``, anything else ``== v``.
    Attempts are drawn and counted in batches; generation stops at ``max_attempts`` or once every
    possible query has almost surely been drawn (``pool * (ln(pool) + 10)`` attempts for a pool of
    ``rows x column sets``). Returns the queries and the attempts made (:func:`multivariate_search`
    over the rows of ``X``).
    """
    p = X.shape[1]
    with np.errstate(all="ignore"):
        med = np.array([np.nanmedian(X[:, j]) if is_num[j] and not np.isnan(X[:, j]).all() else np.nan
                        for j in range(p)])
    index = Q.ColumnIndex(X)
    return multivariate_search(X.shape[0], is_num, med, lambda rows, cols: X[rows[:, None], cols],
                               lambda c, o, v: Q.count_matches(index, c, o, v, cap=2)[0],
                               n_cols, n, max_attempts, rng)


def multivariate_search(ns: int, is_num: np.ndarray, med: np.ndarray,
                        values: Callable[[np.ndarray, np.ndarray], np.ndarray],
                        count: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
                        n_cols: int, n: int, max_attempts: int, rng: np.random.Generator,
                        partners: Callable[[], Partners | None] | None = None) -> tuple[Queries, int]:
    """:func:`multivariate_queries` over ``ns`` release rows known through ``values(rows, cols)``
    (their values at ``rows[:, None], cols``) and ``count(col, op, val)`` (how many release rows
    each query selects, at most 2), with the numeric columns' medians ``med``: the same queries
    and attempts whoever answers (a matrix in one process, the backend on a cluster).

    ``partners``: asked once a search has made :data:`PARTNERS_AFTER` attempts and has at least
    :data:`PARTNERS_PER_ROW` times ``ns`` (and :data:`PARTNERS_MIN_LEFT`) still to come, as many
    as allowed and as its hits so far say it needs (a long search), for the release rows' partners
    (:mod:`.partners`; ``None``: none); from then on an attempt a partner shares counts 2 without
    its values being read or its rows counted. The queries and attempts are the same with or
    without them."""
    p = int(is_num.size)
    k = min(n_cols, p)
    # every possible query (row x column set) has almost surely been drawn after pool*(ln(pool)+10)
    # attempts (coupon collector): stop there instead of spinning up to max_attempts on small data
    pool = float(ns) * math.comb(p, k)
    max_attempts = int(min(max_attempts, math.ceil(pool * (math.log(pool) + 10.0))))
    seen: set[bytes] = set()
    keep_col, keep_op, keep_val, keep_src = [], [], [], []
    attempts, batch, found = 0, 1000, 0
    shared: Partners | None = None
    while found < n and attempts < max_attempts:
        if partners is not None and attempts >= PARTNERS_AFTER:
            # the attempts still to come: those allowed, and those the hits so far say the rest needs
            to_come = min(max_attempts - attempts, (n - found) * attempts / max(found, 1))
            if to_come >= max(PARTNERS_PER_ROW * ns, PARTNERS_MIN_LEFT):
                shared, partners = partners(), None  # asked once
        b = int(min(batch, max_attempts - attempts))
        rows = rng.integers(0, ns, b)
        cols = _pick_columns(rng, b, p, k)
        # an attempt a partner shares selects two rows or more: only the others are read and counted
        todo = None if shared is None else np.flatnonzero(~shared.shared(rows, cols))
        if todo is not None:
            rows, cols = rows[todo], cols[todo]
        if rows.size:
            vals = values(rows, cols)
            nan = np.isnan(vals)
            op = np.where(is_num[cols], np.where(vals > med[cols], Q.GE, Q.LE), Q.EQ)
            op = np.where(nan, Q.ISNULL, op).astype(np.int64)
            vals = np.where(nan, 0.0, vals)
            hits = np.flatnonzero(count(cols, op, vals) == 1)
        else:
            hits = np.zeros(0, dtype=np.int64)
        attempts += b
        for i in hits:  # loop over successful attempts only (at most n kept), in the order drawn
            key = cols[i].tobytes() + op[i].tobytes() + vals[i].tobytes()
            if key in seen:
                continue
            seen.add(key)
            # copies: a view of row i would keep the whole batch's arrays alive (up to 7 MB per
            # batch with a hit, hundreds of MB over a long search)
            keep_col.append(cols[i].copy()), keep_op.append(op[i].copy()), keep_val.append(vals[i].copy())
            keep_src.append(rows[i])
            found += 1
            if found >= n:
                break
        rate = max(hits.size / b, 1e-4)
        batch = int(np.clip(1.3 * (n - found) / rate, 1000, 100_000))
    if not keep_col:
        empty = np.zeros((0, k), dtype=np.int64)
        return Queries(empty, empty.copy(), np.zeros((0, k)), np.zeros(0, np.int64)), attempts
    return Queries(np.array(keep_col), np.array(keep_op), np.array(keep_val), np.array(keep_src)), attempts


def _pick_columns(rng: np.random.Generator, b: int, p: int, k: int) -> np.ndarray:
    """``k`` distinct random columns per row (a uniform k-subset), ascending."""
    u = rng.random((b, p))
    if k >= p:
        return np.tile(np.arange(p), (b, 1))
    return Q.smallest_columns(u, k)


def random_search(p: int, is_num: np.ndarray, bool_codes: dict[int, tuple[float, float]], n: int, n_cols: int,
                  rng: np.random.Generator, n_values: Callable[[int], int], has_missing: Callable[[int], bool],
                  values_at: Callable[[list[tuple[int, np.ndarray]]], list[np.ndarray]]) -> Queries:
    """``n`` naive queries of ``n_cols`` columns each: random columns, values drawn from each
    column's distinct release values (missing included), random operators (``==, !=, >, <, >=, <=``
    for numeric columns, ``==, !=`` otherwise, true/false for booleans, ``is null`` / ``is not
    null`` for a missing value), over release columns known through ``n_values(j)`` (distinct
    non-missing values of column ``j``), ``has_missing(j)`` and ``values_at([(j, ranks), ...])``
    (the distinct values of each column at ``ranks`` of their first-row order, asked once for
    every column after the draws): the same queries whoever answers."""
    k = min(n_cols, p)
    cols = _pick_columns(rng, n, p, k)
    vals = np.zeros((n, k))
    op = np.zeros((n, k), dtype=np.int64)
    u_op = rng.random((n, k))
    drawn = []
    for j in range(p):  # loop over columns: the draws, in column order
        sel = cols == j
        m = int(sel.sum())
        if m == 0:
            continue
        nv = n_values(j)
        r = rng.integers(0, nv + (1 if has_missing(j) else 0), m)  # the last rank: missing
        drawn.append((j, sel, r, nv))
    got = values_at([(j, r[r < nv] if j not in bool_codes else r[:0]) for j, _, r, nv in drawn])
    for (j, sel, r, nv), found in zip(drawn, got, strict=True):  # loop over columns
        m = r.size
        v = np.full(m, np.nan)
        if j not in bool_codes:
            v[r < nv] = found
        u = u_op[sel]
        if j in bool_codes:
            o = np.full(m, Q.EQ)
            v = np.where(u < 0.5, bool_codes[j][0], bool_codes[j][1])
        elif is_num[j]:
            o = np.array([Q.EQ, Q.NE, Q.GT, Q.LT, Q.GE, Q.LE])[np.minimum((u * 6).astype(int), 5)]
        else:
            o = np.where(u < 0.5, Q.EQ, Q.NE)
        isnan = np.isnan(v)
        o = np.where(isnan, np.where(u < 0.5, Q.ISNULL, Q.NOTNULL), o)
        vals[sel] = np.where(isnan, 0.0, v)
        op[sel] = o
    return Queries(cols, op, vals, np.full(n, -1, dtype=np.int64))


# ------------------------------------------------------------------------------------------ counting
def count_univariate(X: np.ndarray, q: Queries) -> np.ndarray:
    """Exact counts of one-column queries on ``X`` from sorted columns (binary search, no scan)."""
    out = np.zeros(q.size, dtype=np.int64)
    n = X.shape[0]
    for j in np.unique(q.col[:, 0]):  # loop over columns
        sel = np.flatnonzero(q.col[:, 0] == j)
        x = X[:, j]
        s = np.sort(x[~np.isnan(x)])
        nn = s.size
        v = q.val[sel, 0]
        op = q.op[sel, 0]
        left = np.searchsorted(s, v, "left")
        right = np.searchsorted(s, v, "right")
        eq = right - left
        c = np.select([op == Q.EQ, op == Q.NE, op == Q.GT, op == Q.LT, op == Q.GE, op == Q.LE,
                       op == Q.ISNULL, op == Q.NOTNULL],
                      [eq, nn - eq, nn - right, left, nn - left, right,
                       np.full(sel.size, n - nn), np.full(sel.size, nn)])
        out[sel] = c
    return out


def count_queries(X: np.ndarray | Q.ColumnIndex, q: Queries, cap: int | None = None) -> np.ndarray:
    """Rows selected by each query (one-column queries by binary search; others by the kernel,
    which only scans the narrowest predicate's slice when ``X`` is a :class:`ColumnIndex`)."""
    if q.col.shape[1] == 1:
        c = count_univariate(X.X if isinstance(X, Q.ColumnIndex) else X, q)
        return c if cap is None else np.minimum(c, cap)
    return Q.count_matches(X, q.col, q.op, q.val, cap=cap)[0]


# ------------------------------------------------------------------------------------------ correction
def _integral(n: np.ndarray, w: float) -> np.ndarray:
    """P(a query of weight in [0, w] singles out among n rows), integrated: Cohen & Nissim (2020)."""
    n = np.asarray(n, dtype=float)
    return (1.0 - (n * w + 1.0) * (1.0 - w) ** n) / (n + 1.0)


def _model(n: np.ndarray, w_eff: float, norm: float) -> np.ndarray:
    return norm * _integral(n, w_eff)


def fit_curve(sizes: np.ndarray, successes: np.ndarray) -> tuple[float, float]:
    """Global least-squares fit of ``norm * I(n, 0, w_eff)`` (``w`` in (0, 1], ``norm >= 0``).

    For a fixed ``w`` the best ``norm`` is linear least squares (closed form), so the fit is a 1-D
    search over ``log w``: a 400-point grid, then a bounded Brent refinement around the best point.
    anonymeter's curve_fit from a single start often stalls at ``w = 1``, where the curve is
    ``norm / (n + 1)`` and the correction degenerates to ``(|ctl|+1)/(|ori|+1)`` (the value 1.1.0
    always returns); the global optimum is never worse than anonymeter's fit of the same model.
    """
    from scipy.optimize import minimize_scalar

    n = np.asarray(sizes, dtype=float)
    y = np.asarray(successes, dtype=float)
    if n.size == 0 or not np.isfinite(y).all():
        raise RuntimeError("no successes to fit")

    def best_norm(ii: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        den = (ii * ii).sum(axis=-1)
        norm = np.where(den > 0, np.maximum((ii * y).sum(axis=-1), 0.0) / np.where(den > 0, den, 1.0), 0.0)
        rss = ((norm[..., None] * ii - y) ** 2).sum(axis=-1)
        return norm, rss

    grid = np.linspace(np.log(1e-4 / n.max()), 0.0, 400)
    ii = _integral(n[None, :], np.exp(grid)[:, None])
    _, rss = best_norm(ii)
    i = int(np.nanargmin(rss))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]

    def objective(lw: float) -> float:
        return float(best_norm(_integral(n, float(np.exp(lw))))[1])

    if i == 0 or np.exp(grid[i]) * n.min() > 30.0:
        # the best weight is at the bottom of its range (purely quadratic growth), or so large that
        # (1 - w)^n vanishes at every size and the curve is norm / (n + 1), whose ratio is 1.1.0's
        # flat (|ctl|+1)/(|ori|+1): either way the counts do not constrain the extrapolation
        raise RuntimeError("the singling-out curve is degenerate (best weight at the edge of its "
                           "range): the subsample counts do not constrain it")
    lw = grid[i]
    if hi > lo:
        opt = minimize_scalar(objective, bounds=(lo, hi), method="bounded", options={"xatol": 1e-10})
        if opt.success and opt.fun <= rss[i]:
            lw = float(opt.x)
    w = float(np.exp(lw))
    norm = float(best_norm(_integral(n, w))[0])
    if not (np.isfinite(norm) and norm > 0):
        raise RuntimeError("the singling-out curve could not be fitted (no query singles out)")
    return w, norm


def correction_factor(sizes: np.ndarray, successes: np.ndarray, n_ori: int, n_ctl: int) -> float:
    """``model(n_ori) / model(n_ctl)`` for the singling-out curve fitted to ``successes`` at ``sizes``
    (:func:`fit_curve`). Raises ``RuntimeError`` when the fit fails."""
    w, norm = fit_curve(sizes, successes)
    f = float(_model(np.array([n_ori]), w, norm)[0] / _model(np.array([n_ctl]), w, norm)[0])
    if not np.isfinite(f):
        raise RuntimeError("the fitted singling-out curve is degenerate")
    return f


MIN_CURVE_SIZES = 3


def curve_sizes(n: int) -> np.ndarray:
    """Distinct subsample sizes of the control curve: ``N_SIZES`` sizes from ``n // 10`` to ``n``.

    anonymeter draws them from ``min(1000, n)``, so below 1,000 control rows every size is ``n`` and
    the fit is degenerate; from ``n // 10`` they vary at any size (at least 1 row each)."""
    return np.unique(np.linspace(max(1, n // 10), n, N_SIZES).astype(int))


def measure_control_curve(Xc: np.ndarray, q: Queries, rng: np.random.Generator, *,
                          index: Q.ColumnIndex | np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Queries singling out in random subsamples of the control rows (:func:`curve_sizes` x 5
    repeats, sizes from ``n // 10`` to ``n``), counted correctly (anonymeter 1.0.0 semantics)."""
    n = Xc.shape[0]
    sizes = curve_sizes(n)
    counts = count_queries(index if index is not None else Xc, q)
    use_csr = counts.sum() <= _CSR_LIMIT
    if use_csr:
        # the lists scan only the narrowest predicate's slice of a column index (one-column
        # queries included: their slice is exactly their matches)
        lists_x = index if isinstance(index, Q.ColumnIndex) else Q.ColumnIndex(Xc)
        if q.col.shape[1] == 1:
            offsets, rows = _univariate_lists(lists_x, q, counts)
        else:
            offsets, rows = Q.match_lists(lists_x, q.col, q.op, q.val, counts)
        if n < 2**31:  # halves the lists' memory (up to 25 M entries)
            rows = rows.astype(np.int32)
        ends = offsets[1:]
    xs, ys = [], []
    for size in sizes:  # 50 subsamples: loop over subsamples, vectorised over queries
        for _ in range(N_REPEATS):
            pick = rng.choice(n, size=int(size), replace=False)
            if use_csr:
                inside = np.zeros(n, dtype=bool)
                inside[pick] = True
                # matches of each query inside the subsample: differences of one running count
                # (int32 per entry, instead of a per-entry query id and float weights)
                run = np.zeros(rows.size + 1, dtype=np.int64 if rows.size >= 2**31 else np.int32)
                np.cumsum(inside[rows], out=run[1:])
                c = run[ends] - run[offsets[:-1]]
            else:
                c = count_queries(Xc[np.sort(pick)], q, cap=2)
            xs.append(size)
            ys.append(int((c == 1).sum()))
    return np.array(xs), np.array(ys)


def _univariate_lists(X: np.ndarray | Q.ColumnIndex, q: Queries, counts: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """CSR match lists of one-column queries (a slice of the column's order with an index)."""
    return Q.match_lists(X, q.col, q.op, q.val, counts)


def univariate_candidates(flags: dict[str, np.ndarray], is_num: np.ndarray, n: int, rng: np.random.Generator
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`univariate_queries` from the release's value flags (``Backend.value_flags`` of its
    distinct rows): the same candidates in the same order, ``n`` drawn by ``rng`` as there;
    returns each drawn query's column, operator and release row (its value is that row's)."""
    cols, ops, srcs = [], [], []
    for j in range(is_num.size):  # loop over columns; each step is vectorised
        miss = flags["missing"][j]
        if miss.sum() == 1:
            cols.append([j]), ops.append([Q.ISNULL]), srcs.append(np.flatnonzero(miss)[:1])
        if miss.all():
            continue
        if is_num[j]:
            for op, end in ((Q.LE, "low"), (Q.GE, "high")):
                if flags[end][j] >= 0:
                    cols.append([j]), ops.append([op]), srcs.append([flags[end][j]])
        once = np.flatnonzero(flags["once"][j])  # by canonical row, as univariate_queries orders them
        cols.append(np.full(once.size, j)), ops.append(np.full(once.size, Q.EQ)), srcs.append(once)
    col = np.concatenate([np.asarray(c, dtype=np.int64) for c in cols]) if cols else np.zeros(0, np.int64)
    op = np.concatenate([np.asarray(o, dtype=np.int64) for o in ops]) if ops else np.zeros(0, np.int64)
    src = np.concatenate([np.asarray(s, dtype=np.int64) for s in srcs]) if srcs else np.zeros(0, np.int64)
    pick = rng.permutation(col.size)[:n]
    return col[pick], op[pick], src[pick]


# ------------------------------------------------------------------------------------------ the tables
class _Asked:
    """The tables as the run's backend (``ctx.data``) answers for them: no table is held (but the
    whole release's values during a long multivariate search, when small enough); the release's
    value flags and medians, the rows queries are built from, and the counts of the queries are
    asked (``Backend.value_flags``, ``medians``, ``query_values``, ``query_counts``,
    ``query_subset_counts``), in one process as on a cluster. (A cluster's backend counts a long
    search's later batches on the driver, over the whole rows it handed out: its business.)"""

    def __init__(self, ctx: Context, columns: list[str]) -> None:
        import pandas as pd

        self.ctx, self.data = ctx, ctx.data
        schema = ctx.tables.schema
        num_cols = [c for c in columns if schema.columns[c].is_numeric]
        self.columns = num_cols + [c for c in columns if c not in num_cols]
        self.is_num = np.array([c in num_cols for c in self.columns])
        self.canon = {r: canonical(ctx, r, self.columns) for r in ctx.tables.roles}
        self.n = {r: c.n for r, c in self.canon.items()}
        self.bool_codes: dict[int, tuple[float, float]] = {}
        for j, c in enumerate(self.columns):
            if schema.columns[c].sdtype == "boolean":
                codes = self.data.encode_frame(pd.DataFrame({c: [True, False]}), [c]).cat[:, 0]
                self.bool_codes[j] = (float(codes[0]), float(codes[1]))
        self._flags: dict[str, np.ndarray] | None = None
        self._release: np.ndarray | None = None  # the whole release, during a long search only
        self._batches = 0

    def _whole_release(self) -> np.ndarray:
        """The query matrix of every search row of the release, in the search's order: read from
        the query table the search's counts ask of (:meth:`Backend.query_values`, whole rows; on a
        cluster the partitions' held matrices travel, none read or encoded again: at 1M release
        rows about 7 s less than fetching and encoding the rows on the driver)."""
        rows = self.canon["synthetic"].rows
        return self.data.query_values("synthetic", self.columns, rows, None, rows=rows)

    def _release_values(self, src: np.ndarray, col: np.ndarray, *, many: bool = False) -> np.ndarray:
        """The values of the distinct release rows ``src`` at columns ``col`` (same shape).
        ``many``: one of a search's batches; from the second on, the whole release is fetched once
        and kept for the search when its matrix is at most :data:`RELEASE_MATRIX_BYTES`."""
        n = self.n["synthetic"]
        self._batches += many
        if (self._batches >= 2 and self._release is None
                and n * len(self.columns) * 8 <= RELEASE_MATRIX_BYTES):  # a long search: all at once
            self._release = self._whole_release()
        if self._release is not None:  # one flat gather (twice as fast as indexing by two arrays)
            return np.take(self._release.reshape(-1), src * self._release.shape[1] + col)
        rows = self.canon["synthetic"].rows  # the search's rows (held as a query table on a cluster)
        return self.data.query_values("synthetic", self.columns, rows[np.asarray(src, dtype=np.int64)], col,
                                      rows=rows)

    def _partners(self, med: np.ndarray) -> Partners | None:
        """The release rows' partners, from the whole release's query matrix when it is at most
        :data:`RELEASE_MATRIX_BYTES` (the one the search then reads its values from), else none.
        In one process a run keeps them for its drop-and-retest, whose search compares its rows
        with the run's partners of the rows it keeps (:func:`~.partners.partners_of`: no sort of
        the release again; any partners give the same queries, see :mod:`.partners`)."""
        n = self.n["synthetic"]
        if self._release is None and n * len(self.columns) * 8 <= RELEASE_MATRIX_BYTES:
            self._release = self._whole_release()
        if self._release is None:
            return None
        from ...engine.reuse import keep_release_structure, renumbering, run_release_structure
        from .._leakrows import reuse_view

        rows = self.canon["synthetic"].rows  # the search's rows, as release positions
        key = ("so partners", tuple(self.columns))
        view = reuse_view(self.ctx)
        got = None if view is None else run_release_structure(view, key)
        if got is not None:  # a drop-and-retest: the run's partners of the rows it keeps, renumbered
            (their_rows, their_ids), parent = got
            mine = renumbering(their_rows, parent[rows])  # their search row -> mine (-1: dropped)
            theirs = renumbering(parent[rows], their_rows)  # my search row -> theirs (-1: none)
            ids = np.where(theirs[:, None] >= 0, their_ids[np.maximum(theirs, 0)], -1)
            ids = np.where(ids >= 0, mine[np.maximum(ids, 0)], -1)
            del mine, theirs
            return partners_of(self._release, self.is_num, med, ids)
        out = release_partners(self._release, self.is_num, med)
        if view is not None and out is not None:
            keep_release_structure(view, key, (np.array(rows, dtype=np.int64), out.ids))
        return out

    def flags(self) -> dict[str, np.ndarray]:
        if self._flags is None:  # asked once per run for both singling-out tests (the same columns)
            self._flags = self.ctx.memo(
                f"anonymeter:so_flags:{tuple(self.columns)}",
                lambda: self.data.value_flags("synthetic", self.columns, self.canon["synthetic"].rows),
                users=("singling_out_univariate", "singling_out_multivariate", "anonymeter"))
        return self._flags

    def univariate(self, n: int, rng: np.random.Generator) -> Queries:
        col, op, src = univariate_candidates(self.flags(), self.is_num, n, rng)
        val = np.where(op == Q.ISNULL, 0.0, self._release_values(src, col))
        return Queries(col[:, None], op[:, None], val[:, None], src)

    def multivariate(self, n_cols: int, n: int, max_attempts: int, rng: np.random.Generator
                     ) -> tuple[Queries, int]:
        med = np.full(len(self.columns), np.nan)
        num = np.flatnonzero(self.is_num)
        if num.size:
            med[num] = self.data.medians("synthetic", [self.columns[j] for j in num], self.canon["synthetic"].rows)
        try:
            return multivariate_search(
                self.n["synthetic"], self.is_num, med,
                lambda r, c: self._release_values(np.broadcast_to(r[:, None], c.shape), c, many=True),
                self._release_counts, n_cols, n, max_attempts, rng, partners=lambda: self._partners(med))
        finally:  # the release's values are not read again: freed (the backend keeps what it counts)
            self._release, self._batches = None, 0

    def _release_counts(self, col: np.ndarray, op: np.ndarray, val: np.ndarray) -> np.ndarray:
        """How many of the search's release rows each query of a batch selects (at most 2)."""
        return self.data.query_counts("synthetic", self.columns, (col, op, val), cap=2,
                                      rows=self.canon["synthetic"].rows)[0]

    def random(self, n: int, k: int, rng: np.random.Generator) -> Queries:
        f = self.flags()
        firsts: dict[int, np.ndarray] = {}

        def first_rows(j: int) -> np.ndarray:
            if j not in firsts:
                firsts[j] = np.flatnonzero(f["first"][j])
            return firsts[j]

        def values_at(asked: list[tuple[int, np.ndarray]]) -> list[np.ndarray]:
            src = np.concatenate([first_rows(j)[r] for j, r in asked]) if asked else np.zeros(0, np.int64)
            col = np.concatenate([np.full(r.size, j) for j, r in asked]) if asked else np.zeros(0, np.int64)
            got = self._release_values(src.astype(np.int64), col.astype(np.int64))
            return np.split(got, np.cumsum([r.size for _, r in asked])[:-1])

        return random_search(len(self.columns), self.is_num, self.bool_codes, n, k, rng,
                             lambda j: int(first_rows(j).size), lambda j: bool(f["missing"][j].any()), values_at)

    def counts(self, role: str, q: Queries) -> tuple[np.ndarray, np.ndarray]:
        """Per query, how many distinct rows of ``role`` it selects (at most 2) and the position of
        the lowest one (the one row, when it singles one out; -1: none)."""
        return self.data.query_counts(role, self.columns, (q.col, q.op, q.val), cap=2,
                                      rows=self.canon[role].rows)

    def done(self, role: str) -> None:
        """Nothing to free here: the backend keeps at most the one table the last count asked of
        (one process), replaced by the next."""

    def curve(self, q: Queries, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        n = self.n["control"]
        sizes = curve_sizes(n)
        subsets = [self.canon["control"].rows[rng.choice(n, size=int(size), replace=False)]
                   for size in sizes for _ in range(N_REPEATS)]  # the draws of measure_control_curve
        c = self.data.query_subset_counts("control", self.columns, (q.col, q.op, q.val), subsets, cap=2)
        return np.repeat(sizes, N_REPEATS), (c == 1).sum(axis=1)

    def counts_among(self, role: str, q: Queries, pick: np.ndarray) -> np.ndarray:
        return self.data.query_counts(role, self.columns, (q.col, q.op, q.val), cap=2,
                                      rows=self.canon[role].rows[pick])[0]

    def every_row(self, role: str, q: Queries) -> tuple[np.ndarray, np.ndarray]:
        """Per query, how many rows of ``role`` it selects, duplicates kept (at most 2), and the
        lowest one's position (-1: none)."""
        return self.data.query_counts(role, self.columns, (q.col, q.op, q.val), cap=2)

    def pooled(self, q: Queries, original: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Per query, how many of every training and control row it selects (at most 2), and the
        lowest one's pooled position (control rows after the training rows), from ``original``
        (:meth:`every_row` of the original, asked while its table was kept)."""
        c_o, f_o = original
        c_c, f_c = self.every_row("control", q)
        n_o = self.data.n_rows("original")
        return np.minimum(c_o + c_c, 2), np.where(c_o > 0, f_o, np.where(f_c >= 0, f_c + n_o, -1))

    def release_rows(self, src: np.ndarray) -> np.ndarray:
        return self.canon["synthetic"].rows[src]


# ------------------------------------------------------------------------------------------ the metric
def singling_out(ctx: Context, *, mode: str, n_attacks: int = 2000, n_cols: int = 3,
                 max_attempts: int = 10_000_000, max_n_attacks: bool = False, confidence_level: float = 0.95,
                 columns: list[str] | None = None, n_records: int = 20) -> MetricResult:
    """Run the singling-out attack (``mode`` ``"univariate"`` or ``"multivariate"``): on the
    backend's answers (:class:`_Asked`), in one process as on a cluster (the same JSON)."""
    if mode not in ("univariate", "multivariate"):
        raise ConfigError(f"singling out mode must be 'univariate' or 'multivariate', got {mode!r}")
    cols = check_columns(ctx, columns, "columns") if columns else tabular_columns(ctx)
    if mode == "multivariate" and n_cols > len(cols):
        raise ConfigError(f"parameter 'n_cols'={n_cols} exceeds the {len(cols)} usable columns: "
                          f"lower n_cols to at most {len(cols)}")
    data = _Asked(ctx, cols)
    # queries are built from synthetic rows and tried on every table: unlike linkability and
    # inference targets, their number is not bounded by the original's or the control's size
    # (anonymeter does not bound it either), only by the synthetic rows they come from
    avail = {"synthetic": data.n["synthetic"]}
    n, note = resolve_n_attacks(n_attacks, max_n_attacks, avail, ctx.metric)
    notes: list[str] = []
    info = [note] if note else []
    rng_q, rng_b, rng_c = ctx.rng("queries"), ctx.rng("baseline"), ctx.rng("correction")

    if mode == "univariate":
        queries = data.univariate(n, rng_q)
        attempts = None
        k_base = 1
    else:
        queries, attempts = data.multivariate(n_cols, n, max_attempts, rng_q)
        k_base = n_cols
    n_q = queries.size
    if n_q < n:
        notes.append(f"only {n_q} of the {n} requested singling-out queries could be generated from the "
                     "synthetic data" + (f" in {attempts} attempts (max_attempts)" if attempts else "")
                     + "; rates use the number generated")
    base_q = data.random(n, k_base, rng_b)
    n_base = int((data.counts("original", base_q)[0] == 1).sum())

    if n_q == 0:
        raise MetricError("no query singles out a synthetic row (every value combination repeats): "
                          "the singling-out attack cannot be run on this synthetic data")
    ori_counts, ori_first = data.counts("original", queries)
    # the pooled evidence's count over every original row, asked while the original's table is kept
    wants_evidence = "control" in data.n and ctx.evidence
    every_original = data.every_row("original", queries) if wants_evidence else None
    data.done("original")  # the original's counts are not asked below (but the equal-size fallback's)
    success = ori_counts == 1
    n_succ = int(success.sum())

    n_ctl_attacks = n_ctl = None
    corr: dict[str, Any] = {"applied": False}
    if "control" in data.n:
        n_ctl_attacks = n_q
        n_ctl_raw = int((data.counts("control", queries)[0] == 1).sum())
        n_ctl = float(n_ctl_raw)
        n_o, n_c = data.n["original"], data.n["control"]
        corr = {"applied": False, "n_control_raw": n_ctl_raw, "factor": 1.0}
        if n_o != n_c and n_ctl_raw > 0:
            reason = None
            if curve_sizes(n_c).size < MIN_CURVE_SIZES:
                reason = f"the control has only {n_c} rows, too few subsample sizes to fit the curve"
            else:
                sizes, ys = data.curve(queries, rng_c)
                try:
                    f = correction_factor(sizes, ys, n_o, n_c)
                    corr = {"applied": True, "n_control_raw": n_ctl_raw, "factor": f,
                            "method": "singling-out curve fitted on control subsamples "
                                      f"(sizes {int(sizes.min())}..{int(sizes.max())}; anonymeter 1.0.0 model)"}
                    n_ctl = min(n_ctl_raw * f, float(n_q))
                except (RuntimeError, ValueError) as exc:
                    reason = str(exc)
            if reason is not None:
                # equal-size comparison: the attack is counted on a random subsample of the original
                # with as many rows as the control, and the control count is used as measured
                pick = np.sort(ctx.rng("equal_size").choice(n_o, size=n_c, replace=False))
                success_sub = data.counts_among("original", queries, pick) == 1
                n_succ = int(success_sub.sum())
                corr = {"applied": False, "n_control_raw": n_ctl_raw, "factor": 1.0,
                        "method": f"equal-size comparison: attack counted on {n_c} of the {n_o} original "
                                  "rows (random subsample), control count uncorrected",
                        "n_success_full_original": int(success.sum()), "reason": reason}
                notes.append(f"control-size correction could not be fitted ({reason}): fell back to an "
                             f"equal-size comparison (attack counted on a random {n_c}-row subsample of "
                             "the original)")
    evidence = None
    if every_original is not None:  # the control's table is kept from the counts above
        evidence = _paired_evidence(ctx, data, queries, every_original, confidence_level)
    data.done("control")

    out = Outcome(n_q, n_succ, n, n_base, n_ctl_attacks, n_ctl)
    d, _att, base, _ctl, warning = summarise(out, confidence_level)
    d.update(mode=mode, n_cols=1 if mode == "univariate" else n_cols, n_queries=n_q, notes=info,
             control_correction=corr, columns=list(data.columns))
    if attempts is not None:
        d["n_query_attempts"] = attempts
    records = _records(ctx, data, queries, success, ori_first, n_records) if n_records else None
    text = (f"naive attacker: {n} random {k_base}-column queries on synthetic values "
            "(baseline_rate); the risk itself is " + d["relative_to"])
    return build_result(ctx, ctx.metric or f"singling_out_{mode}", d, base, warning, notes, records, text,
                        evidence)


def _paired_evidence(ctx: Context, data: _Asked, queries: Queries, every_original: tuple[np.ndarray, np.ndarray],
                     confidence_level: float) -> Evidence:
    """Per-record evidence: which real records the release's queries isolate.

    Every query built from the release is run on the *pooled* real records (every training and
    every control record, duplicates kept); a query that matches exactly one of them singles that
    record out. A record is flagged when some query singles it out. The flags are decided without
    the labels, so they do not move when training and control labels are exchanged: the test of
    training against control records is exact (Fisher's, and jointly with the other record-flag
    tests in the verdict), whatever the dependence between queries. Comparing query success on two
    separate tables instead (a paired, per-query test) treats correlated queries as independent
    coin flips and raised false alarms on real splits.
    """
    n_o = ctx.data.n_rows("original")
    counts, first = data.pooled(queries, every_original)
    flagged = np.zeros(n_o + ctx.data.n_rows("control"), dtype=bool)
    flagged[first[counts == 1]] = True
    single = np.flatnonzero((counts == 1) & (queries.src >= 0))
    pairs = release_ties(ctx, list(data.columns), first[single], queries.src[single],
                         "the release row whose values make the query that singles it out")
    flags = RecordFlags(flagged[:n_o], flagged[n_o:], pairs=pairs)
    return Evidence.from_flags(
        "share of records singled out in the pooled real data (training and control together) by a "
        "query built from the release", flags, risk="singling_out",
        baseline="control records singled out by the same queries",
        confidence_level=confidence_level,
        note=f"{int((counts == 1).sum())} of {counts.size} queries isolate one real record")


def _records(ctx: Context, data: _Asked, q: Queries, success: np.ndarray, first: np.ndarray, n_records: int
             ) -> list[dict[str, Any]]:
    """The first ``n_records`` successful queries and the original row each singles out (``first``:
    the lowest matching original position of every query, the one row of a success)."""
    idx = np.flatnonzero(success)[:n_records]
    if idx.size == 0:
        return []
    sub = q.take(idx)
    rows = first[idx]
    # the release cells the queries' values come from (a few rows, typed as the tables hold them)
    cells = ctx.data.take("synthetic", data.release_rows(sub.src), list(data.columns))
    out = []
    for i in range(idx.size):  # at most n_records
        parts, preds = [], []
        for t in range(sub.col.shape[1]):
            c = data.columns[int(sub.col[i, t])]
            op = int(sub.op[i, t])
            if op in (Q.ISNULL, Q.NOTNULL):
                parts.append(f"{c} {Q.OP_TEXT[op]}")
                preds.append([c, Q.OP_TEXT[op], None])
            else:
                v = plain_cell(cells[c].iloc[i])
                parts.append(f"{c} {Q.OP_TEXT[op]} {v!r}")
                preds.append([c, Q.OP_TEXT[op], v])
        out.append({"row": int(rows[i]), "query": " and ".join(parts), "predicates": preds})
    out.sort(key=lambda r: r["row"])
    return out


_SO_PARAMS = [
    *common_params(2000),
    Param("columns", None, "columns the queries may use (default: every tabular column)", kind=list),
    Param("max_attempts", 10_000_000, "cap on multivariate query-generation attempts (anonymeter default; PETsARD uses 500000)",
          kind="positive int"),
]


@register("singling_out_univariate", family=FAMILY, direction=DIRECTION, params=_SO_PARAMS,
          thresholds=THRESHOLDS, optional_needs=("control",),
          description="singling-out risk from one-column queries (anonymeter): share of queries built "
                      "from the synthetic data that isolate exactly one original row, beyond control",
          risk='singling_out',
          knowledge='the release only; writes one-column conditions that match exactly one person',
          presets=('privacy', 'full'),
          order=110,
          warmup=True,
          backend='any',
          explainer=("anonymeter's singling-out attack with one-column conditions built from the "
                     'release: the share of conditions that isolate exactly one training person, '
                     'against the same conditions on held-out people.'))
@memoised('singling_out_univariate')
def singling_out_univariate(ctx: Context, *, n_attacks: int = 2000, max_n_attacks: bool = False,
                            confidence_level: float = 0.95, n_records: int = 20,
                            columns: list[str] | None = None, max_attempts: int = 10_000_000
                            ) -> MetricResult:
    """Univariate singling out: queries ``col == v`` (values unique in the synthetic data), ``col <=
    min``, ``col >= max`` and ``col is null`` that isolate one synthetic row."""
    return singling_out(ctx, mode="univariate", n_attacks=n_attacks, max_n_attacks=max_n_attacks,
                        confidence_level=confidence_level, columns=columns, n_records=n_records)


@register("singling_out_multivariate", family=FAMILY, direction=DIRECTION,
          params=[*_SO_PARAMS, Param("n_cols", 3, "columns per query", kind="positive int")],
          thresholds=THRESHOLDS, optional_needs=("control",), aliases=("anonymeter_singlingout",),
          description="singling-out risk from n_cols-column queries (anonymeter, PETsARD's default mode): "
                      "share of synthetic-built queries isolating exactly one original row, beyond control",
          risk='singling_out',
          knowledge='the release only; writes several-column conditions that match exactly one person',
          presets=('privacy', 'full'),
          order=120,
          warmup=True,
          backend='any',
          explainer=("anonymeter's singling-out attack with conditions over several columns built from "
                     'the release rows.'))
@memoised('singling_out_multivariate')
def singling_out_multivariate(ctx: Context, *, n_attacks: int = 2000, n_cols: int = 3,
                              max_attempts: int = 10_000_000, max_n_attacks: bool = False,
                              confidence_level: float = 0.95, n_records: int = 20,
                              columns: list[str] | None = None) -> MetricResult:
    """Multivariate singling out: conjunctions over ``n_cols`` random columns of a random synthetic
    row (``>= v`` above the median, ``<= v`` below, ``== v`` for categories)."""
    return singling_out(ctx, mode="multivariate", n_attacks=n_attacks, n_cols=n_cols,
                        max_attempts=max_attempts, max_n_attacks=max_n_attacks,
                        confidence_level=confidence_level, columns=columns, n_records=n_records)
