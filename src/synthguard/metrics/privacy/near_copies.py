"""Near-copies and memorised neighbourhoods: ``near_copies`` and ``close_neighbours``.

``near_copies``
    A training record is *near-copied* when some release row equals it on every compared cell but
    at most ``max_diff`` (a copy with a cell or two changed, which exact matching cannot see) and
    no other real record (training or control) is within ``max_diff`` cells of the row: the row
    points at that one person (and no other real record shares its untouched cells). A row within
    ``max_diff`` cells of several real people, e.g. a common row among records told apart by one cell, points at no one and does
    not count. The test is label-free like ``exact_matches`` (the same rule for training and
    control records; the control share is chance). Cells are compared by exact value (numeric
    cells by their typed value, missing equal to missing), through hashes of each row: a block
    join finds the real records within ``max_diff`` cells of each release row; over the join's
    budget, hash counts per masked column set give the same pairs. No n x m matrix. On a Dask
    cluster the backend counts the real records per masked key (release and leak rows as the
    queries) and the candidates are checked cell by cell on the driver: the same numbers.

``close_neighbours``
    A memorised neighbourhood (SMOTE-like interpolation between training neighbours, an overfit
    mixture) puts release rows very close to training rows without copying any cell exactly. A
    record is flagged when its closest release row is much closer than its closest other real
    record: ``d_release < tau * d_real`` with ``d_real`` the Gower distance to the nearest other
    record of the pooled real data (training and control, label-free ranges). Records with a real
    duplicate (``d_real = 0``) cannot be flagged and are left out of the visibility.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ...core.results import Baseline, Evidence, MetricResult, RecordFlags, RowPairs, tail_flags
from ...errors import MetricError
from ...registry import Context, Interval, Param, RecordsCard, register
from ...stats import difference_ci, wilson_interval
from .._leakrows import family_eligible, family_status, real_result, reuse_view
from ._copies import (
    _code_matrices,
    backend_identifiable_share,
    backend_matches,
    control_chance,
    copy_crowd,
    copy_responses,
    identifiable_share,
    identifying_matches,
    masked_hashes,
    near_pairs,
)
from ._labelfree import REAL, labelfree_setup, release_neighbours
from .matching import matching_columns, row_identities_for

__all__ = ["near_copies", "near_copies_2", "close_neighbours", "copy_responses",
           "identifying_matches", "materiality_tail", "near_pairs", "masked_hashes", "ratio_responses",
           "release_pairs"]

#: Most hash joins (masked column sets x pooled rows) spent on the ``max_diff=2`` detail; beyond
#: it the detail is skipped (stated in the result) so memory and time stay bounded.
MAX_PAIR_WORK = 20_000_000
#: The fewest real records the closeness test's default tail holds.
MIN_TAIL_RECORDS = 20
#: How many material leaks (materiality x training records) the closeness test's default tail has
#: room for: a tail test's effect is capped by its tail, and a wider tail holds more chance matches.
#: Measured on the shared tables at materiality 5 % (docs/calibration.md): 2.5 against 3 lowers
#: the noise limits of nhefs 800 / 800 from 4.9-5.0 % to 4.1-4.3 % (seeds 0-2) and moves acs12's
#: bound from 8.1 % to 8.4 % on seed 0 (7.75 % on seed 1 either way); 1.5 would lift acs12's noise10
#: limit from 8 % to 25 % (its narrow tail fills with fresh people equal to unique real records by
#: chance).
TAIL_ROOM = 2.5


def materiality_tail(n_real: int, n_training: int, materiality: float) -> float:
    """The default width of a pooled tail test: a share of the ``n_real`` records scored.

    ``max(0.02, MIN_TAIL_RECORDS / n_real, TAIL_ROOM * materiality * n_training / n_real)``, at
    most 0.5: room for :data:`TAIL_ROOM` material leaks (a tail test's effect is capped by its
    tail, and a wider tail holds more chance members), and at least :data:`MIN_TAIL_RECORDS`
    records. Used by ``close_neighbours`` and ``membership_attacks``.

    Parameters
    ----------
    n_real : int
        Records scored, training and control pooled (the tail is a share of them).
    n_training : int
        Training records among them (the materiality is a share of these).
    materiality : float
        The run's materiality, a share of training records.

    Returns
    -------
    float
        The tail, a share in ``[0.02, 0.5]``.

    Examples
    --------
    >>> materiality_tail(1600, 800, 0.05)  # 2.5 x 5 % x 800 = 100 of 1,600 records
    0.0625
    >>> materiality_tail(200, 100, 0.01)  # at least 20 records
    0.1
    """
    n_real = max(int(n_real), 1)
    return min(0.5, max(0.02, MIN_TAIL_RECORDS / n_real,
                        TAIL_ROOM * float(materiality) * int(n_training) / n_real))


def _qi_unique_copies(ctx: Context, cols: list[str], n_o: int) -> dict[str, Any]:
    """Verbatim copies (all compared cells) of records unique on the quasi-identifiers (pooled),
    from the backend's exact-row ids."""
    qis = [c for c in ctx.tables.schema.quasi_identifiers if c in cols] or list(cols)
    ids = ctx.data.row_ids(qis)
    pooled_qi = np.concatenate([ids["original"], ids["control"]])
    _, inv, counts = np.unique(pooled_qi, return_inverse=True, return_counts=True)
    unique = counts[inv.ravel()] == 1
    full = row_identities_for(ctx)
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
    description="share of training records that are the only real record within max_diff cells of "
                "a release row, against control records",
    also=("singling_out", "linkability", "inference"),
    risk='presence',
    knowledge=("a person's full record; looks for a release row equal to it in all cells but one "
               'or two'),
    sees=('near', 'exact', 'rare'),
    presets=('quick', 'privacy', 'full'),
    order=20,
    backend='any',
    explainer=('Counts training records that the release reproduces with one (or two) cells '
               'changed, where the copy points at that one person (no other real person within '
               'one (two) cells of it), against the same share among held-out people. Exact '
               'matching cannot see such copies.')
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
        ``value`` = share of training records flagged (the only real record within ``max_diff``
        cells of a release row); ``baseline`` = the same share of control records. Details:
        ``identifiable_share`` (the visibility: the share of the run's copies with ``max_diff``
        cells changed that flag their training record, measured; without them, the share of
        column sets outside which the records are unique, an upper bound), ``by_max_diff`` (k=1
        and k=2 when affordable), ``qi_unique_copies`` (verbatim copies of records unique on the
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
    return _near_copies(ctx, "near_copies", max_diff, top_n, confidence_level)


@register(
    "near_copies_2", family="privacy", direction="lower is safer",
    needs=("original", "synthetic", "control"),
    params=[Param("top_n", 20, "how many near-copied training rows to list in records", "positive int"),
            Param("confidence_level", 0.95, "level of the intervals", "probability")],
    thresholds={"medium": 0.01, "high": 0.05},
    description="share of training records that are the only real record within two cells of a "
                "release row, against control records",
    also=("singling_out", "linkability", "inference"),
    risk="presence",
    knowledge="a person's full record; looks for a release row equal to it in all cells but two",
    sees=("near", "exact", "rare"),
    presets=("privacy", "full"),
    order=25,
    backend="any",
    records=RecordsCard(meaning="a training record with a release row equal on all cells but two"),
    explainer=("Counts training records the release reproduces with two cells changed, where the "
               "copy points at that one person (no other real person within two cells of it), "
               "against the same share among held-out people: the copies a generator makes when it "
               "memorises a record and resamples a few of its values."))
def near_copies_2(ctx: Context, *, top_n: int = 20, confidence_level: float = 0.95) -> MetricResult:
    """Near-copies with two cells changed: :func:`near_copies` at ``max_diff=2`` as a test of its
    own, so that both one- and two-cell copies drive the verdict.

    Parameters
    ----------
    ctx : Context
        The evaluation context (needs a control table).
    top_n : int
        Number of near-copied training rows listed in ``records``.
    confidence_level : float
        Level of the intervals.

    Returns
    -------
    MetricResult
        As :func:`near_copies`.
    """
    return _near_copies(ctx, "near_copies_2", 2, top_n, confidence_level)


def _identified(ctx: Context, cols: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
    """The near-copy pairs of the release at ``k`` cells (:func:`~._copies.identifying_matches`):
    release rows and the pooled real records they identify; memoised per column set and ``k``.
    On a cluster (``ctx.data_backend``) asked of the backend with the release rows as queries
    (:func:`~._copies.backend_matches`, their keys joined on the workers). A release row's pair is
    its own (the one real record within ``k`` cells of its values): a drop-and-retest reads the
    run's pairs of the rows it keeps (:func:`~synthguard.engine.reuse.release_pairs_memo`), in
    one process or on a cluster."""
    def fresh() -> tuple[np.ndarray, np.ndarray]:
        if ctx.data_backend is not None:
            # the release's keys joined on the workers (rows_of), its rows never taken whole to the
            # driver: the cell checks fetch their candidate rows
            return backend_matches(ctx.data, [None], cols, k, rows_of=[("synthetic", None)])[0]
        return identifying_matches(*_code_matrices(ctx, cols), k)

    def compute() -> tuple[np.ndarray, np.ndarray]:
        view = reuse_view(ctx)
        if view is None:
            return fresh()
        from ...engine.reuse import release_pairs_memo

        return release_pairs_memo(view, ("near-copy-matches", tuple(cols), k), fresh, cols)

    return ctx.memo(("near-copy-matches", tuple(cols), k), compute)


def _identifiable(ctx: Context, cols: list[str], k: int) -> np.ndarray:
    """Per pooled real record, :func:`~._copies.identifiable_share` at ``k`` cells (memoised; on a
    cluster asked of the backend, :func:`~._copies.backend_identifiable_share`)."""
    def fresh() -> np.ndarray:
        if ctx.data_backend is not None:
            return backend_identifiable_share(ctx.data, cols, k)
        return identifiable_share(_code_matrices(ctx, cols)[0], k)

    def compute() -> np.ndarray:  # the real records alone: a drop-and-retest reads the run's
        return real_result(ctx, ("near-copy-identifiable", tuple(cols), k), fresh, cols)

    return ctx.memo(("near-copy-identifiable", tuple(cols), k), compute)


def _near_copies(ctx: Context, name: str, max_diff: int, top_n: int,
                 confidence_level: float) -> MetricResult:
    """``near_copies`` (and ``near_copies_2``): the result of the near-copy test at ``max_diff``,
    every count asked of the run's backend on a cluster, the release rows behind the flags (for the
    drop list) included."""
    data = ctx.data
    if not ctx.tables.has_control or data.n_rows("control") == 0:
        raise MetricError(f"{name} needs control rows (real records the generator never saw)")
    if data.n_rows("synthetic") == 0 or data.n_rows("original") == 0:
        raise MetricError("the synthetic or original table has no rows; give both at least one row")
    cols = matching_columns(ctx)
    n_o = data.n_rows("original")
    n_real = n_o + data.n_rows("control")
    cl = float(confidence_level)
    by_k: dict[str, Any] = {}
    flags = None
    share = np.zeros(n_real)
    for k in (1, 2):
        work = n_real * (len(cols) * (len(cols) - 1) // 2 if k == 2 else len(cols))
        if k != max_diff and work > MAX_PAIR_WORK:
            by_k[str(k)] = {"skipped": f"{work} hash-join rows exceed the budget {MAX_PAIR_WORK}"}
            continue
        rows, recs = _identified(ctx, cols, k)
        flag = np.zeros(n_real, dtype=bool)
        flag[recs] = True
        if k == max_diff:
            share = _identifiable(ctx, cols, k)
            alone = share[:n_o] == 1.0  # no other real record within k cells: a copy is alone
            # the release rows behind the flags (on a cluster, the pairs found on the driver and
            # the crowds asked of the backend for the tied rows only)
            pairs = _near_pairs(data.n_rows("synthetic"), (rows, recs), k, ctx, cols)
            f = RecordFlags(flag[:n_o], flag[n_o:], {"near": share[:n_o] > 0, "exact": alone,
                                                     "rare": alone},
                            scores=flag.astype(float), leaks=copy_responses(ctx, cols, k),
                            families=family_status(ctx), eligible=family_eligible(ctx), pairs=pairs)
        else:
            f = RecordFlags(flag[:n_o], flag[n_o:])
        diff = difference_ci(int(f.member.sum()), n_o, int(f.non_member.sum()), f.non_member.size, cl)
        by_k[str(k)] = {"training_flagged": int(f.member.sum()), "control_flagged":
                        int(f.non_member.sum()), "difference": diff}
        if k == max_diff:
            flags = f
    assert flags is not None
    measured = _own_share(flags.leaks.get(f"near{max_diff}"))
    vis = measured if measured is not None else float(share[:n_o].mean()) if n_o else 0.0
    how = (f"{100 * vis:.1f} % of the run's copies of training records with {max_diff} cell(s) "
           "changed are flagged (measured)" if measured is not None else
           f"a copy of a training record with {max_diff} cell(s) changed can be flagged in at most "
           f"{100 * vis:.1f} % of cases (the record is unique on the untouched cells)")
    evidence = Evidence.from_flags(
        f"share of records that are the only real record within {max_diff} cell(s) of a release "
        "row", flags, sees=("near", "exact", "rare"), risk="presence",
        baseline="control rows: real people the generator never saw, against the same release",
        confidence_level=cl,
        note=f"{how}; a copy with another real record within {max_diff} cell(s) of it cannot be "
             "told from a common row")
    evidence = replace(evidence, visibility={**(evidence.visibility or {}), "near": vis})
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
    n_c_all = data.n_rows("control")
    if qi["copied_training"] and qi["copied_training"] / n_o > qi["copied_control"] / n_c_all:
        # a fact beside the value (which counts records identified within max_diff cells), not
        # what the value measures: said so, so that no reader takes it for the headline
        warning = (f"besides the value: {qi['copied_training']} of {n_o} training records unique "
                   f"on the quasi-identifiers {qi['quasi_identifiers']} are copied verbatim into "
                   f"the release, against {qi['copied_control']} of {n_c_all} control records "
                   "(chance)")
    if vis < 0.8:
        extra = (f"only {100 * vis:.0f} % of the copies with {max_diff} cell(s) changed can be told "
                 f"from common rows{'' if measured is not None else ' (at most)'}: the others have "
                 f"another real record within {max_diff} cell(s)")
        warning = f"{warning}; {extra}" if warning else extra
    details = {"max_diff": max_diff, "identifiable_share": vis, "by_max_diff": by_k,
               "difference_to_baseline": excess, "qi_unique_copies": qi, "columns": cols,
               "method": "cells compared by exact value (missing equals missing); a release row "
                         "flags a record when that record is the only real record within max_diff "
                         "cells of it (block hash joins, or hash counts per masked column set)"}
    return MetricResult(name, "privacy", value, "lower is safer",
                        Baseline(base, "control vs release: share of control records that are the "
                                 "only real record within max_diff cells of a release row"),
                        wilson_interval(k_m, n_o, cl), n_o, level,
                        warning, details, records, evidence=evidence)


def _own_share(leak: Any) -> float | None:
    """The share of a leak family's rows that flag their own training record (measured), or
    ``None`` without leak rows."""
    if leak is None or leak.sources.size == 0:
        return None
    return float(np.isin(leak.sources, leak.src[leak.src == leak.target]).mean())


def _near_pairs(n_rel: int, matches: tuple[np.ndarray, np.ndarray], k: int, ctx: Context,
                cols: list[str]) -> RowPairs:
    """The release rows behind the near-copy flags (``matches``: each row with the one real record
    within ``k`` cells of it). One changed cell: listed as copies, with each row's crowd (its
    chance stratum: the real records within two cells of it) and the control records that
    identify a training record as a release row would, with their crowds (the chance baseline).
    Two changed cells leave few enough untouched that a release row is alone near some real
    record by chance as often as a copy is: listed for review, not as copies."""
    tie = f"a copy with at most {k} cell(s) changed, identifying the record"
    rows, recs = matches
    if k != 1:
        return RowPairs(recs, rows, n_rel, tie=tie)
    return RowPairs(recs, rows, n_rel, tie=tie, copies=True,
                    crowd=copy_crowd(ctx, cols, k + 1, rows), chance_crowd=control_chance(ctx, cols, k))


def _nearest(data: Any, cols: list[str], metric: Any, reference: str) -> np.ndarray:
    """Per pooled real record, the distance to its nearest ``reference`` row (itself excluded)."""
    out = []
    for role in REAL:
        n_ref = data.n_rows(reference) - (1 if role == reference else 0)
        if n_ref <= 0:
            out.append(np.full(data.n_rows(role), np.inf))
            continue
        out.append(data.kneighbors(role, reference, cols, metric, 1)[0][:, 0])
    return np.concatenate(out)


def release_pairs(data: Any, cols: list[str], metric: Any, radius: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Every ``(pooled real record, release row)`` pair at distance ``<= radius[record]`` (records
    with a negative radius take no part), asked of the backend: a k-NN search of the release,
    widened (k doubled) for the records whose k-th neighbour is still inside their radius. Pairs
    sorted by record, then distance, then release row.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from synthguard.registry import Context
    >>> from synthguard.engine.neighbors import gower
    >>> o, c = pd.DataFrame({"x": [0.0, 5.0]}), pd.DataFrame({"x": [7.0]})
    >>> ctx = Context.from_frames(o, pd.DataFrame({"x": [0.1, 0.2, 9.0]}), c, canonical=False)
    >>> release_pairs(ctx.data, ["x"], gower(np.array([10.0])), np.array([0.05, -1.0, -1.0]))
    (array([0, 0]), array([0, 1]))
    """
    n_rel = data.n_rows("synthetic")
    out_q, out_r, out_d, start = [], [], [], 0
    for role in REAL:
        n = data.n_rows(role)
        rad = radius[start:start + n]
        pending = np.flatnonzero(rad >= 0)
        k = min(8, n_rel)
        while pending.size and k > 0:
            d, idx = data.kneighbors(role, "synthetic", cols, metric, k, query_rows=pending)
            complete = (k >= n_rel) | (d[:, -1] > rad[pending])
            jj, kk = np.nonzero(complete[:, None] & (d <= rad[pending, None]))
            out_q.append(start + pending[jj])
            out_r.append(idx[jj, kk])
            out_d.append(d[jj, kk])
            pending = pending[~complete]
            k = min(2 * k, n_rel)
        start += n
    if not out_q:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    q, r, d = (np.concatenate(a) for a in (out_q, out_r, out_d))
    order = np.lexsort((r, d, q))
    return q[order].astype(np.int64), r[order].astype(np.int64)


def ratio_responses(ctx: Context, cols: list[str], metric: Any, d_real: np.ndarray, d_rel: np.ndarray,
                    cut: float) -> dict[str, Any]:
    """The leak responses of the closeness test: for each family, every pooled real record ``j``
    whose score a leak row ``r`` raises into reach of the tail (``d(j, r) <= cut * d_real(j)`` and
    below its closest release row), with the score ``-d(j, r) / d_real(j)``.

    Exact: every leak row within each record's radius, asked of the backend
    (:meth:`~synthguard.engine.backend.Backend.within`: the real records searched against an
    index of the leak rows, in one process or partition by partition). A raised score below the
    old tail cut can never enter the tail (the cut only rises when scores rise), so leaving those
    out changes no flag.
    """
    from .._leakrows import leak_sets, response, row_families

    data = ctx.data
    radius = np.where(d_real > 0, cut * d_real, -1.0)
    families = row_families(ctx)
    sets = leak_sets(ctx)
    frames = [sets[f].rows for f in families]
    per_role, start = [], 0
    for role in REAL:
        n = data.n_rows(role)
        per_role.append((start, data.within(role, cols, metric, frames, radius[start:start + n])))
        start += n
    out = {}
    for i, family in enumerate(families):
        j = np.concatenate([s + got[i][0] for s, got in per_role])
        r = np.concatenate([got[i][1] for _, got in per_role])
        d = np.concatenate([got[i][2] for _, got in per_role])
        keep = d < d_rel[j]
        j, r, d = j[keep], r[keep], d[keep]
        resp = response(ctx, family, (r, j, -d / np.where(d_real[j] > 0, d_real[j], 1.0)))
        if resp is not None:
            out[family] = resp
    return out


@register(
    "close_neighbours", family="privacy", direction="lower is safer",
    needs=("original", "synthetic", "control"),
    params=[Param("tail", None, "share of all real records (training and control pooled) read as the "
                  "closest to the release: the records whose closeness ratio is in this pooled tail "
                  "are flagged; default: room for 2.5 material leaks (2.5 x materiality x "
                  "training records), at least 2 % and 20 records", "probability"),
            Param("top_n", 20, "how many flagged training rows to list in records", "positive int"),
            Param("confidence_level", 0.95, "level of the intervals", "probability")],
    thresholds={"medium": 0.01, "high": 0.05},
    description="share of training records among the real records closest to the release (distance "
                "to the closest release row over the distance to the closest other real record, "
                "pooled tail), against control records",
    risk='presence',
    knowledge=("a person's full record; looks for a release row much closer to it than any other "
               'real person is'),
    sees=('neighbourhood', 'near', 'exact'),
    presets=('quick', 'privacy', 'full'),
    order=30,
    backend='any',
    explainer=('Ranks every real record by how close its closest release row is, relative to its '
               'closest other real person (a scale-free ratio, so dense and sparse regions compare), '
               'and compares how many training records and how many held-out people fall among the '
               'closest few per cent. Memorised records with noise added, interpolations between '
               'neighbours and overfit mixtures put training records there.')
)
def close_neighbours(ctx: Context, *, tail: float | None = None, top_n: int = 20,
                     confidence_level: float = 0.95) -> MetricResult:
    """Memorised neighbourhoods: training records among the real records closest to the release.

    Per real record (training and control pooled), the ratio of its distance to the closest release
    row over its distance to the closest other real record; the records in the pooled ``tail`` of
    the smallest ratios are flagged (a rank cut, label-free, no fixed distance). Distances are Gower
    (clip, normalise) with numeric ranges from the original and the control together, on every
    tabular column; neighbours come from the shared engine. The run's leak rows are measured against
    the same ratios (:func:`ratio_responses`).

    Parameters
    ----------
    ctx : Context
        The evaluation context (needs a control table).
    tail : float, optional
        The pooled share of real records read as closest to the release; default
        ``max(0.02, 20 / n_real, 2.5 * materiality * n_training / n_real)``: a tail that can hold
        2.5 material leaks (a tail test's effect is capped by its tail; :data:`TAIL_ROOM`), and 20
        records.
    top_n : int
        Number of flagged training rows listed in ``records``.
    confidence_level : float
        Level of the intervals.

    Returns
    -------
    MetricResult
        ``value`` = share of training records flagged; ``baseline`` = share of control records.
        Details: ``visible_share`` (records without a real duplicate), ``ratio_cut`` (the ratio at
        the tail's edge), ``ratio_quantiles``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from synthguard.registry import Context
    >>> rng = np.random.default_rng(0)
    >>> o, c = (pd.DataFrame({"x": rng.normal(size=50), "y": rng.normal(size=50)}) for _ in "oc")
    >>> s = o.head(2) + 1e-4  # two rows right next to training rows
    >>> ctx = Context.from_frames(o, s, c).for_metric(close_neighbours.spec)
    >>> r = close_neighbours(ctx, tail=0.02)  # the closest 2 of the 100 real records
    >>> r.value, r.baseline.value
    (0.04, 0.0)
    """
    data = ctx.data
    if not ctx.tables.has_control or data.n_rows("control") == 0:
        raise MetricError("close_neighbours needs control rows (real records the generator never saw)")
    if data.n_rows("synthetic") == 0 or data.n_rows("original") < 1:
        raise MetricError("the synthetic or original table has no rows; give both at least one row")
    cols = ctx.tables.schema.tabular_columns()
    if not cols:
        raise MetricError("no tabular column to measure distances on (only text/id columns)")
    cols, metric = labelfree_setup(ctx)
    # the nearest other real record, training and control pooled (one search of the pooled rows)
    d_real = data.nearest_other(REAL, cols, metric)
    # the nearest release row: the search dcr's and nndr's evidence use too (two nearest)
    d_rel = (np.concatenate([release_neighbours(ctx, role)[0][:, 0] for role in REAL])
             if data.n_rows("synthetic") >= 2 else _nearest(data, cols, metric, "synthetic"))
    n_o = data.n_rows("original")
    visible = d_real > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(visible, d_rel / np.where(visible, d_real, 1.0), np.inf)
    score = -ratio
    if tail is None:
        tail = materiality_tail(ratio.size, n_o, ctx.materiality)
    flag = tail_flags(score, tail)
    cut = float(ratio[flag].max()) if flag.any() else 0.0
    leaks = ratio_responses(ctx, cols, metric, d_real, d_rel, cut)
    # the release rows behind a flag: every row within the record's radius at the tail's cut
    # (the flagged records' searches only, asked of the backend: on a cluster their k nearest
    # release rows come to the driver, a few numbers per flagged record)
    recs, rows = release_pairs(data, cols, metric, np.where(flag, cut * d_real * (1 + 1e-9), -1.0))
    pairs = RowPairs(recs, rows, data.n_rows("synthetic"),
                     tie="closer to it than its closest other real record is, at the closeness "
                         "tail's cut")
    flags = RecordFlags(flag[:n_o], flag[n_o:], scores=score, tail=tail, leaks=leaks,
                        families=family_status(ctx), eligible=family_eligible(ctx), pairs=pairs)
    cl = float(confidence_level)
    evidence = Evidence.from_flags(
        f"share of records among the {100 * tail:g} % of all real records closest to the release "
        "(closest release row over closest other real record)", flags,
        sees=("neighbourhood", "near", "exact"), risk="presence",
        baseline="control rows: real people the generator never saw, against the same release",
        confidence_level=cl,
        note="records with a real duplicate (nearest other real record at distance 0) cannot be "
             "flagged; Gower ranges from original and control together; the tail is a rank cut "
             "over training and control records pooled (label-free)")
    k_m, k_c = int(flag[:n_o].sum()), int(flag[n_o:].sum())
    n_c = int(flag.size - n_o)
    excess = difference_ci(k_m, n_o, k_c, n_c, cl)
    level = "high" if excess["ci"][0] > 0 and excess["value"] >= ctx.thresholds.get("high", 0.05) \
        else "medium" if excess["ci"][0] > 0 else "low"
    shown = np.where(np.isfinite(ratio), ratio, np.nan)
    qs = {f"q{q:g}": {"training": float(np.nanpercentile(shown[:n_o], q)) if visible[:n_o].any()
                      else None,
                      "control": float(np.nanpercentile(shown[n_o:], q)) if visible[n_o:].any()
                      else None} for q in (1, 5, 50)}
    records = [{"original_row": int(i), "ratio": float(ratio[i])}
               for i in np.flatnonzero(flag[:n_o])[:top_n]]
    details = {"tail": tail, "ratio_cut": cut, "visible_share": float(visible[:n_o].mean()),
               "difference_to_baseline": excess, "ratio_quantiles": qs,
               "distance": "gower(ranges of original and control, clip, normalise)"}
    return MetricResult("close_neighbours", "privacy", k_m / n_o, "lower is safer",
                        Baseline(k_c / n_c, "share of control records with a release row as close"),
                        wilson_interval(k_m, n_o, cl), n_o, level, None, details, records,
                        evidence=evidence)
