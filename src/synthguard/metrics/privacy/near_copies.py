"""Near-copies and memorised neighbourhoods: ``near_copies`` and ``close_neighbours``.

``near_copies``
    A training record is *near-copied* when some release row equals it on every compared cell but
    at most ``max_diff`` (a copy with a cell or two changed, which exact matching cannot see). The
    test is made label-free and honest like ``exact_matches``: only records that are *near-unique*
    in the pooled real data (no other real record, training or control, within ``max_diff`` cells
    of them) can be flagged, so a record that is merely typical (many real people within one cell
    of it) does not count as exposed when the release holds a common row. Cells are compared by
    exact value (numeric cells by their typed value, missing equal to missing), through hashes of
    each row with ``max_diff`` columns masked: one hash join per masked column set (``p`` joins for
    ``max_diff=1``, ``p(p-1)/2`` for 2), each vectorised over rows; no n x m matrix.

``close_neighbours``
    A memorised neighbourhood (SMOTE-like interpolation between training neighbours, an overfit
    mixture) puts release rows very close to training rows without copying any cell exactly. A
    record is flagged when its closest release row is much closer than its closest other real
    record: ``d_release < tau * d_real`` with ``d_real`` the Gower distance to the nearest other
    record of the pooled real data (training and control, label-free ranges). Records with a real
    duplicate (``d_real = 0``) cannot be flagged and are left out of the visibility.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from ...core.results import Baseline, Evidence, MetricResult, RecordFlags
from ...engine.neighbors import gower, kneighbors
from ...errors import MetricError
from ...registry import Context, Interval, Param, register
from ...stats import difference_ci
from .matching import matching_columns

__all__ = ["near_copies", "close_neighbours", "near_copy_flags", "masked_hashes"]

#: Most hash joins (masked column sets x pooled rows) spent on the ``max_diff=2`` detail; beyond
#: it the detail is skipped (stated in the result) so memory and time stay bounded.
MAX_PAIR_WORK = 20_000_000


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser: a fixed pseudo-random 64-bit value per input (wrapping arithmetic)."""
    z = x.astype(np.uint64)
    with np.errstate(over="ignore"):
        z = z + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def masked_hashes(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-cell hashes and row hashes of an int64 code matrix (equal codes, equal hashes).

    The row hash is the wrapping sum of the cell hashes, so the hash of a row with the columns
    ``S`` masked is ``row - cells[:, S].sum(axis=1)``: one subtraction per masked set.

    Examples
    --------
    >>> import numpy as np
    >>> cells, rows = masked_hashes(np.array([[1, 2], [1, 3]]))
    >>> masked = rows - cells[:, 1]  # column 1 masked
    >>> bool(masked[0] == masked[1])
    True
    """
    codes = np.asarray(codes, dtype=np.int64)
    col = np.arange(codes.shape[1], dtype=np.uint64)[None, :]
    with np.errstate(over="ignore"):
        cells = _mix(codes.astype(np.uint64) * np.uint64(0x100000001B3) + _mix(col))
        rows = cells.sum(axis=1, dtype=np.uint64)
    return cells, rows


def _code_matrices(ctx: Context, cols: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Pooled real (original then control) and release code matrices, exact values as codes."""
    enc = ctx.encoded.encoder

    def codes(role: str) -> np.ndarray:
        b = enc.encode(ctx.tables.get(role), cols, categorical_only=True)
        return b.cat

    real = np.concatenate([codes("original"), codes("control")], axis=0)
    return real, codes("synthetic")


def near_copy_flags(real: np.ndarray, release: np.ndarray, max_diff: int
                    ) -> tuple[np.ndarray, np.ndarray]:
    """For every pooled real record: is it near-unique, and has the release a row within
    ``max_diff`` cells of it?

    Parameters
    ----------
    real : ndarray of int64, shape (n, p)
        Codes of the pooled real records (training then control); equal values, equal codes.
    release : ndarray of int64, shape (m, p)
        Codes of the release rows, same vocabularies.
    max_diff : int
        Cells that may differ.

    Returns
    -------
    near_unique, hit : ndarray of bool, shape (n,)
        ``near_unique``: no other real record is within ``max_diff`` cells; ``hit``: some release
        row is within ``max_diff`` cells (at most ``max_diff`` cells differ).

    Examples
    --------
    >>> import numpy as np
    >>> real = np.array([[0, 0, 0], [1, 1, 1], [1, 1, 2]])
    >>> u, h = near_copy_flags(real, np.array([[0, 5, 0]]), 1)
    >>> u.tolist(), h.tolist()
    ([True, False, False], [True, False, False])
    """
    n, p = real.shape
    near_unique = np.ones(n, dtype=bool)
    hit = np.zeros(n, dtype=bool)
    if n == 0:
        return near_unique, hit
    if p <= max_diff:  # every two rows are within max_diff cells
        return np.full(n, n == 1), np.full(n, release.shape[0] > 0)
    cells_r, rows_r = masked_hashes(real)
    cells_s, rows_s = masked_hashes(release)
    cells_r, cells_s = np.asfortranarray(cells_r), np.asfortranarray(cells_s)  # column access
    for mask in combinations(range(p), max_diff):  # loop over column sets; vectorised over rows
        hr, hs = rows_r.copy(), rows_s.copy()
        with np.errstate(over="ignore"):
            for j in mask:
                hr -= cells_r[:, j]
                hs -= cells_s[:, j]
        key = pd.Series(hr, copy=False)
        near_unique &= ~key.duplicated(keep=False).to_numpy()
        hit |= key.isin(hs).to_numpy()
    return near_unique, hit


def _qi_unique_copies(ctx: Context, cols: list[str], n_o: int) -> dict[str, Any]:
    """Verbatim copies (all compared cells) of records unique on the quasi-identifiers (pooled)."""
    qis = [c for c in ctx.tables.schema.quasi_identifiers if c in cols] or list(cols)
    ids = ctx.encoded.row_ids(qis, ("original", "control"))
    pooled_qi = np.concatenate([ids["original"], ids["control"]])
    _, inv, counts = np.unique(pooled_qi, return_inverse=True, return_counts=True)
    unique = counts[inv.ravel()] == 1
    full = ctx.memo("matching.row_ids", lambda: ctx.encoded.row_ids(cols))
    pooled_full = np.concatenate([full["original"], full["control"]])
    copied = unique & np.isin(pooled_full, full["synthetic"])
    rows = np.flatnonzero(copied[:n_o])
    return {"quasi_identifiers": qis, "qi_unique_training": int(unique[:n_o].sum()),
            "qi_unique_control": int(unique[n_o:].sum()),
            "copied_training": int(rows.size), "copied_control": int(copied[n_o:].sum()),
            "rows": rows}


@register(
    "near_copies", family="privacy", direction="lower is safer",
    needs=("original", "synthetic", "control"),
    params=[Param("max_diff", 1, "cells a release row may differ in and still be a near-copy (1 or 2)",
                  int, interval=Interval(1, 2)),
            Param("top_n", 20, "how many near-copied training rows to list in records", "positive int"),
            Param("confidence_level", 0.95, "level of the intervals", "probability")],
    thresholds={"medium": 0.01, "high": 0.05}, weight=2.0,
    description="share of training records (near-unique in the real data) with a release row equal "
                "on all cells but max_diff, against control records",
    risk='presence',
    knowledge=("a person's full record; looks for a release row equal to it in all cells but one "
               'or two'),
    sees=('near', 'exact', 'rare'),
    presets=('quick', 'privacy', 'full'),
    order=20,
    explainer=('Counts training records that the release reproduces with one (or two) cells '
               'changed, among records no other real person is that close to, against the same '
               'share among held-out people. Exact matching cannot see such copies.')
)
def near_copies(ctx: Context, *, max_diff: int = 1, top_n: int = 20,
                confidence_level: float = 0.95) -> MetricResult:
    """Near-copies of training records: release rows equal on all cells but ``max_diff``.

    Parameters
    ----------
    ctx : Context
        The evaluation context (needs a control table).
    max_diff : int
        Cells that may differ (1 or 2); the other value is reported in ``details`` too.
    top_n : int
        Number of near-copied training rows listed in ``records``.
    confidence_level : float
        Level of the intervals.

    Returns
    -------
    MetricResult
        ``value`` = share of training records flagged (near-unique in the pooled real data with a
        release row within ``max_diff`` cells); ``baseline`` = the same share of control records.
        Details: ``near_unique_share`` (the visibility), ``by_max_diff`` (k=1 and k=2 when
        affordable), ``qi_unique_copies`` (verbatim copies of records unique on the
        quasi-identifiers, reported even below the materiality). ``records``: flagged training rows
        and QI-unique copied training rows.

    Examples
    --------
    >>> import pandas as pd
    >>> from synthguard.registry import Context
    >>> o = pd.DataFrame({"a": [1, 2, 3, 4], "b": list("wxyz"), "c": [5, 6, 7, 8]})
    >>> c = pd.DataFrame({"a": [9, 10], "b": list("pq"), "c": [0, 11]})
    >>> s = pd.DataFrame({"a": [1, 10], "b": ["w", "r"], "c": [99, 12]})
    >>> r = near_copies(Context.from_frames(o, s, c).for_metric(near_copies.spec))
    >>> r.value, r.baseline.value
    (0.25, 0.0)
    """
    if not ctx.tables.has_control or len(ctx.tables.control) == 0:
        raise MetricError("near_copies needs control rows (real records the generator never saw)")
    if len(ctx.tables.synthetic) == 0 or len(ctx.tables.original) == 0:
        raise MetricError("the synthetic or original table has no rows; give both at least one row")
    cols = matching_columns(ctx)
    real, rel = _code_matrices(ctx, cols)
    n_o = len(ctx.tables.original)
    cl = float(confidence_level)
    by_k: dict[str, Any] = {}
    flags = None
    for k in (1, 2):
        work = real.shape[0] * (len(cols) * (len(cols) - 1) // 2 if k == 2 else len(cols))
        if k != max_diff and work > MAX_PAIR_WORK:
            by_k[str(k)] = {"skipped": f"{work} hash-join rows exceed the budget {MAX_PAIR_WORK}"}
            continue
        unique, hit = near_copy_flags(real, rel, k)
        flag = unique & hit
        f = RecordFlags(flag[:n_o], flag[n_o:], {t: unique[:n_o] for t in ("near", "exact", "rare")})
        diff = difference_ci(int(f.member.sum()), n_o, int(f.non_member.sum()), f.non_member.size, cl)
        by_k[str(k)] = {"training_flagged": int(f.member.sum()), "control_flagged":
                        int(f.non_member.sum()), "near_unique_training": float(unique[:n_o].mean()),
                        "near_unique_control": float(unique[n_o:].mean()), "difference": diff}
        if k == max_diff:
            flags = f
    assert flags is not None
    vis = float(flags.responds["near"].mean())
    evidence = Evidence.from_flags(
        f"share of records near-unique in the real data with a release row equal on all cells but "
        f"{max_diff}", flags, sees=("near", "exact", "rare"), risk="presence",
        baseline="control rows: real people the generator never saw, against the same release",
        confidence_level=cl,
        note=f"{100 * vis:.1f} % of the training records are near-unique (no other real record within "
             f"{max_diff} cell(s)); near-copies of the others cannot be told from common rows")
    qi = _qi_unique_copies(ctx, cols, n_o)
    k_m, k_c = int(flags.member.sum()), int(flags.non_member.sum())
    n_c = int(flags.non_member.size)
    base = k_c / n_c
    value = k_m / n_o
    excess = difference_ci(k_m, n_o, k_c, n_c, cl)
    level = "high" if excess["ci"][0] > 0 and excess["value"] >= ctx.thresholds.get("high", 0.05) \
        else "medium" if excess["ci"][0] > 0 else "low"
    records = [{"original_row": int(i), "kind": "near_copy"}
               for i in np.flatnonzero(flags.member)[:top_n]]
    records += [{"original_row": int(i), "kind": "qi_unique_verbatim_copy"}
                for i in qi.pop("rows")[:top_n]]
    warning = None
    n_c_all = len(ctx.tables.control)
    if qi["copied_training"] and qi["copied_training"] / n_o > qi["copied_control"] / n_c_all:
        warning = (f"{qi['copied_training']} of {n_o} training records unique on the "
                   f"quasi-identifiers {qi['quasi_identifiers']} have an identical row in the "
                   f"release, against {qi['copied_control']} of {n_c_all} control records (chance)")
    if vis < 0.8:
        extra = (f"only {100 * vis:.0f} % of the training records are near-unique: near-copies of "
                 "the others are indistinguishable from common rows")
        warning = f"{warning}; {extra}" if warning else extra
    details = {"max_diff": max_diff, "near_unique_share": vis, "by_max_diff": by_k,
               "difference_to_baseline": excess, "qi_unique_copies": qi, "columns": cols,
               "method": "cells compared by exact value (missing equals missing); hash joins with "
                         "max_diff columns masked"}
    return MetricResult("near_copies", "privacy", value, "lower is safer",
                        Baseline(base, "control vs release: share of control records near-unique "
                                 "with a release row as close"), tuple(excess["ci"]), n_o, level,
                        warning, details, records, evidence=evidence)


def _pooled_block(ctx: Context, cols: list[str]) -> Any:
    from ...data.encoding import Block

    o, c = ctx.encoded.block("original", cols), ctx.encoded.block("control", cols)
    return Block(np.concatenate([o.num, c.num]), np.concatenate([o.cat, c.cat]),
                 o.num_columns, o.cat_columns)


@register(
    "close_neighbours", family="privacy", direction="lower is safer",
    needs=("original", "synthetic", "control"),
    params=[Param("tau", 0.25, "a record is flagged when its closest release row is closer than tau "
                  "times its closest other real record (0 < tau < 1)", "probability"),
            Param("top_n", 20, "how many flagged training rows to list in records", "positive int"),
            Param("confidence_level", 0.95, "level of the intervals", "probability")],
    thresholds={"medium": 0.01, "high": 0.05},
    description="share of training records whose closest release row is much closer (< tau x) than "
                "their closest other real record, against control records",
    risk='presence',
    knowledge=("a person's full record; looks for a release row much closer to it than any other "
               'real person is'),
    sees=('neighbourhood', 'near', 'exact'),
    presets=('quick', 'privacy', 'full'),
    order=30,
    explainer=('Flags a record when its closest release row is much closer than its closest '
               'other real person, the signature of memorised neighbourhoods (interpolations, '
               'overfit mixtures), and compares training records with held-out people.')
)
def close_neighbours(ctx: Context, *, tau: float = 0.25, top_n: int = 20,
                     confidence_level: float = 0.95) -> MetricResult:
    """Memorised neighbourhoods: records with a release row far closer than any other real record.

    Distances are Gower (clip, normalise) with numeric ranges from the original and the control
    together (label-free), on every tabular column; neighbours come from the shared engine.

    Parameters
    ----------
    ctx : Context
        The evaluation context (needs a control table).
    tau : float
        Ratio cut: flagged when ``d_release < tau * d_real``.
    top_n : int
        Number of flagged training rows listed in ``records``.
    confidence_level : float
        Level of the intervals.

    Returns
    -------
    MetricResult
        ``value`` = share of training records flagged; ``baseline`` = share of control records.
        Details: ``visible_share`` (records without a real duplicate), ``ratio_quantiles``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from synthguard.registry import Context
    >>> rng = np.random.default_rng(0)
    >>> o, c = (pd.DataFrame({"x": rng.normal(size=50), "y": rng.normal(size=50)}) for _ in "oc")
    >>> s = o + 1e-4  # a row right next to every training row
    >>> r = close_neighbours(Context.from_frames(o, s, c).for_metric(close_neighbours.spec))
    >>> r.value, r.baseline.value < 0.2
    (1.0, True)
    """
    if not ctx.tables.has_control or len(ctx.tables.control) == 0:
        raise MetricError("close_neighbours needs control rows (real records the generator never saw)")
    if len(ctx.tables.synthetic) == 0 or len(ctx.tables.original) < 1:
        raise MetricError("the synthetic or original table has no rows; give both at least one row")
    cols = ctx.tables.schema.tabular_columns()
    if not cols:
        raise MetricError("no tabular column to measure distances on (only text/id columns)")
    metric = gower(ctx.encoded.ranges(cols, ("original", "control")), clip=True, normalise=True)
    real = _pooled_block(ctx, cols)
    rel = ctx.encoded.block("synthetic", cols)
    d_real = kneighbors(real, real, metric, 1, exclude_self=True, backend=ctx.backend).distances[:, 0]
    d_rel = kneighbors(real, rel, metric, 1, backend=ctx.backend).distances[:, 0]
    n_o = len(ctx.tables.original)
    visible = d_real > 0
    flag = visible & (d_rel < tau * d_real)
    p = len(cols)
    flags = RecordFlags(flag[:n_o], flag[n_o:], {
        "neighbourhood": visible[:n_o], "exact": visible[:n_o],
        # a copy with one cell changed is at most 1/p away (Gower, clipped, normalised)
        "near": (tau * d_real[:n_o]) > 1.0 / p})
    cl = float(confidence_level)
    evidence = Evidence.from_flags(
        f"share of records whose closest release row is closer than {tau:g} x their closest other "
        "real record", flags, sees=("neighbourhood", "near", "exact"), risk="presence",
        baseline="control rows: real people the generator never saw, against the same release",
        confidence_level=cl,
        note="records with a real duplicate (nearest other real record at distance 0) cannot be "
             "flagged; Gower ranges from original and control together")
    k_m, k_c = int(flag[:n_o].sum()), int(flag[n_o:].sum())
    n_c = int(flag.size - n_o)
    excess = difference_ci(k_m, n_o, k_c, n_c, cl)
    level = "high" if excess["ci"][0] > 0 and excess["value"] >= ctx.thresholds.get("high", 0.05) \
        else "medium" if excess["ci"][0] > 0 else "low"
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(visible, d_rel / np.where(visible, d_real, 1.0), np.nan)
    qs = {f"q{q:g}": {"training": float(np.nanpercentile(ratio[:n_o], q)) if visible[:n_o].any()
                      else None,
                      "control": float(np.nanpercentile(ratio[n_o:], q)) if visible[n_o:].any()
                      else None} for q in (1, 5, 50)}
    records = [{"original_row": int(i), "ratio": float(ratio[i])}
               for i in np.flatnonzero(flag[:n_o])[:top_n]]
    details = {"tau": tau, "visible_share": float(visible[:n_o].mean()),
               "difference_to_baseline": excess, "ratio_quantiles": qs,
               "distance": "gower(ranges of original and control, clip, normalise)"}
    return MetricResult("close_neighbours", "privacy", k_m / n_o, "lower is safer",
                        Baseline(k_c / n_c, "share of control records with a release row as close"),
                        tuple(excess["ci"]), n_o, level, None, details, records,
                        evidence=evidence)
