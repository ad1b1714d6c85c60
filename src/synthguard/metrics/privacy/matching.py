"""Exact-row matching: ``exact_matches`` (SynEval's copy rate) and ``ims`` (identical match share).

Rows are compared on every column except ``id`` columns (text columns included: a copied review is a
copied row), with exact equality per cell and missing equal to missing, through the encoded view's
hash-free row identities (:meth:`~synthguard.data.encoding.EncodedView.row_ids`). No Python loop over rows.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ...core.arrays import isin_codes, search_sorted
from ...core.format import pct
from ...core.results import (
    Baseline,
    Evidence,
    Headline,
    MetricResult,
    RecordFlags,
    RowPairs,
    level_from_thresholds,
)
from ...errors import MetricError
from ...registry import LEVEL_FROM_THRESHOLDS, Context, Param, RecordsCard, register
from ...stats import difference_ci, proportion

__all__ = ["compared_columns", "copy_counts", "copy_pairs", "copy_evidence_counts", "copy_flags",
           "copy_record_flags", "exact_matches", "exact_matches_result", "first_copies", "ims",
           "ims_flags", "ims_result", "matching_columns", "row_identities_for"]


def compared_columns(schema: Any) -> list[str]:
    """Columns compared by exact matching in ``schema`` (a :class:`~synthguard.data.schema.Schema`):
    every column but ``id`` columns (an empty list when every column is one)."""
    return [c for c, s in schema.columns.items() if s.sdtype != "id"]


def first_copies(tables: Any, preferred: np.ndarray | None = None, *,
                 ids: dict[str, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Every release row of ``tables`` equal to some training row on :func:`compared_columns`
    (exact values, missing equal to missing: the identity of ``exact_matches``), and the first
    training row it equals: the first among the ``preferred`` training rows (a boolean mask,
    ``None``: all) when it equals one of them, else the first of all. Positions in the tables as
    given; one join of the row identities, no loop over rows.

    Parameters
    ----------
    tables : Tables
        Prepared tables holding ``original`` and ``synthetic``.
    preferred : ndarray of bool, optional
        Per training row, whether it is named before the others (e.g. the sampled records).
    ids : dict, optional
        The ``original`` and ``synthetic`` row identities on :func:`compared_columns`, when the
        caller holds them (:func:`synthguard.data.encoding.row_identities`); else computed here.

    Returns
    -------
    release, training : ndarray of int64
        Release positions (ascending) and the training position each one copies.

    Examples
    --------
    >>> import pandas as pd
    >>> from synthguard.data.tables import prepare_tables
    >>> o = pd.DataFrame({"a": [1, 2, 1], "b": ["x", "y", "x"]})
    >>> s = pd.DataFrame({"a": [1, 9, 2], "b": ["x", "q", "y"]})
    >>> t = prepare_tables(o, s, None, strict_control=False)
    >>> [x.tolist() for x in first_copies(t)]
    [[0, 2], [0, 1]]
    >>> [x.tolist() for x in first_copies(t, np.array([False, True, True]))]
    [[0, 2], [2, 1]]
    """
    from ...data.encoding import EncodedView

    cols = compared_columns(tables.schema)
    if not cols:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if ids is None:
        ids = EncodedView(tables).row_ids(cols, roles=("original", "synthetic"))
    orig, syn = ids["original"], ids["synthetic"]
    n = orig.size
    first = np.ones(n, dtype=bool) if preferred is None else np.asarray(preferred, dtype=bool)
    # per distinct row: its first preferred training position, else its first position (a stable
    # sort by (identity, not preferred, position))
    order = np.lexsort((np.arange(n), ~first, orig))
    uniq, at_first = np.unique(orig[order], return_index=True)
    lead = order[at_first]
    release = np.flatnonzero(isin_codes(syn, uniq))
    training = lead[search_sorted(uniq, syn[release])]
    return release.astype(np.int64), training.astype(np.int64)


def matching_columns(ctx: Context) -> list[str]:
    """Columns compared by exact matching: every column but ``id`` columns
    (:func:`compared_columns`); refused when none is left."""
    cols = compared_columns(ctx.tables.schema)
    if not cols:
        raise MetricError("every column is an id column, so rows cannot be compared; "
                          "mark at least one column as non-id in the metadata")
    return cols


def row_identities_for(ctx: Context) -> dict[str, np.ndarray]:
    """Exact-row ids per role (memoised with ``ctx.memo``): equal rows get equal ids in every role."""
    return ctx.memo("matching.row_ids", lambda: ctx.data.row_ids(matching_columns(ctx)))


def _in(ids: np.ndarray, reference: np.ndarray) -> np.ndarray:
    return np.isin(ids, reference)


def all_exact_copies(original: Any, synthetic: Any, metadata: Any = None) -> list[dict[str, Any]]:
    """Every release row equal to some training row (all columns but ``id`` columns, missing equal
    to missing), with the first training row it copies; input row numbers, from 0 (the rows to drop,
    in the schema of :data:`synthguard.report.records.COLUMNS`).

    Parameters
    ----------
    original, synthetic : DataFrame or path
        The training rows and the release, as given to :func:`synthguard.evaluate`.
    metadata : mapping or path, optional
        As given to :func:`synthguard.evaluate` (id columns are left out of the comparison).

    Returns
    -------
    list of dict
        One record per copied release row.

    Examples
    --------
    >>> import pandas as pd
    >>> o = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": ["x", "y", "z"]})
    >>> s = pd.DataFrame({"a": [2.0, 9.0], "b": ["y", "q"]})
    >>> [(r["release_row"], r["training_row"]) for r in all_exact_copies(o, s)]
    [(0, 1)]
    """
    from ...data.tables import prepare_tables

    tables = prepare_tables(original, synthetic, None, metadata, strict_control=False)
    hit, train = first_copies(tables)
    return [{"metric": "exact_matches", "risk": "presence", "action": "drop",
             "release_row": int(r), "training_row": int(t),
             "reason": f"verbatim copy of training row {int(t)}"}
            for r, t in zip(hit.tolist(), train.tolist(), strict=True)]


def copied_release_rows(result: Any) -> tuple[int, int] | None:
    """(release rows identical to a training row, release rows) from an ``exact_matches`` JSON
    result; ``None`` when it has no such count."""
    rate = result.get("synthetic_match_rate") if hasattr(result, "get") else None
    if hasattr(rate, "get") and rate.get("k") is not None and rate.get("n"):
        return int(rate["k"]), int(rate["n"])
    return None


@register(
    "exact_matches", family="privacy", direction="lower is safer",
    optional_needs=("control",),
    params=[Param("top_n", 20, "how many copied original rows to list in records", "positive int"),
            Param("confidence_level", 0.95, "level of the Wilson intervals", "probability")],
    thresholds={"high": 0.05}, weight=3.0,
    description="share of synthetic rows identical to some original row (SynEval's exact_matches)",
    also=("singling_out", "linkability", "inference"),
    risk='presence',
    knowledge="a person's full record; looks for an identical row in the release",
    sees=('exact', 'rare'),
    presets=('quick', 'privacy', 'full'),
    order=10,
    backend='any',
    records=RecordsCard(verbatim=True, complete=all_exact_copies, count=copied_release_rows,
                        meaning="a training row with verbatim copies in the release"),
    explainer=('Counts training records that appear verbatim in the release, and compares the '
               'share with held-out real people (the control) who also happen to have an '
               'identical release row. Only records unique among all real people can be flagged, '
               'so common rows that any generator reproduces do not count. A verbatim copy '
               'exposes its person under every GDPR criterion.')
)
def exact_matches(ctx: Context, *, top_n: int = 20, confidence_level: float = 0.95) -> MetricResult:
    """Share of synthetic rows equal to some original row, with the control rate as baseline.

    Parameters
    ----------
    ctx : Context
        The evaluation context.
    top_n : int
        Number of copied original rows listed in ``records``.
    confidence_level : float
        Level of every Wilson interval.

    Returns
    -------
    MetricResult
        ``value`` = copy rate (fraction), ``percentage``, ``original_duplication_rate``,
        ``control_match_rate`` (the baseline), each a ``{"value", "ci", "n", "k"}`` rate;
        ``records`` = ``{"original_row", "synthetic_copies", "original_duplicates"}``.
    """
    cols = matching_columns(ctx)
    data = ctx.data
    n_syn, n_orig = data.n_rows("synthetic"), data.n_rows("original")
    if n_syn == 0 or n_orig == 0:
        raise MetricError("the synthetic or original table has no rows; give both at least one row")
    has_ctl = ctx.tables.has_control
    roles = ("original", "synthetic", "control") if has_ctl else ("original", "synthetic")
    # one row per distinct row: how many rows of each table carry it, its first original position
    groups = data.key_groups(cols, roles)
    sums = [lambda f: f["n_synthetic"] * (f["n_original"] > 0),   # synthetic rows copying an original row
            lambda f: f["n_original"] * (f["n_original"] > 1)]    # original rows occurring more than once
    if has_ctl:
        sums.append(lambda f: f["n_control"] * (f["n_original"] > 0))  # control rows in the original
    counts = groups.sums(*sums)
    top = groups.top(top_n, ["n_synthetic", "first_original"], [False, True],
                     where=lambda f: (f["n_synthetic"] > 0) & (f["n_original"] > 0))
    records = [{"original_row": int(a), "synthetic_copies": int(b), "original_duplicates": int(c)}
               for a, b, c in zip(top["first_original"], top["n_synthetic"], top["n_original"],
                                  strict=True)]
    control = evidence = flags = None
    if has_ctl:
        n_ctl = data.n_rows("control")
        control = (int(counts[2]), n_ctl)
        if n_ctl:
            per_record = _pooled_unique_hit_of(data, cols)
            evidence, flags = copy_counts(*per_record), copy_record_flags(*per_record)
            # leak rows measured against the same identity: the pooled-unique real rows they equal
            from .._leakrows import family_eligible, family_status
            from ._copies import exact_copy_responses

            flags = replace(flags, scores=np.concatenate([flags.member, flags.non_member])
                            .astype(float), leaks=exact_copy_responses(ctx, cols),
                            families=family_status(ctx), eligible=family_eligible(ctx),
                            pairs=copy_pairs(ctx))
    return exact_matches_result(
        ctx.thresholds, cols, k=int(counts[0]), n_synthetic=n_syn, n_duplicated=int(counts[1]),
        n_original=n_orig, control=control, records=records, evidence_counts=evidence,
        confidence_level=confidence_level, flags=flags)


def copy_pairs(ctx: Context) -> RowPairs:
    """The release rows behind the exact-copy flags: every release row ties to the real records
    equal to it on every compared cell (key groups of the row identities, so rows shared by many
    records stay ``n + m`` numbers); every such row is a verbatim copy. Each release row's crowd
    is the number of real records within one cell of it (its chance stratum); the control records
    equal to a training record, with their crowds, are the chance baseline. On a cluster the row
    identities, crowds and chance baseline are asked of the backend (per-record arrays; only the
    tied release rows and the control records equal to a training record are fetched)."""
    from ._copies import control_chance, copy_crowd

    ids = row_identities_for(ctx)
    cols = matching_columns(ctx)
    pooled = np.concatenate([ids["original"], ids["control"]])
    tied = np.flatnonzero(np.isin(ids["synthetic"], pooled))
    return RowPairs.groups(pooled, ids["synthetic"], tie="equal on every compared cell", copies=True,
                           crowd=copy_crowd(ctx, cols, 1, tied),
                           chance_crowd=control_chance(ctx, cols, 0))


def _pooled_unique_hit_of(data: Any, cols: list[str]) -> tuple[np.ndarray, ...]:
    """Per training and per control record (canonical order): is its row unique in the pooled real
    data (one training or control record), and does the release hold it? ``(unique_o, hit_o,
    unique_c, hit_c)``, through the backend's key lookups."""
    lookups = {"real": (cols, ("original", "control")), "release": (cols, ("synthetic",))}
    out = []
    for role in ("original", "control"):
        got = data.key_rows(role, lookups).flags(unique=lambda f: f["real"] == 1,
                                                 hit=lambda f: f["release"] > 0)
        out += [got["unique"], got["hit"]]
    return tuple(out)


def copy_flags(orig: np.ndarray, ctl: np.ndarray, syn: np.ndarray) -> RecordFlags:
    """Per-record flags of the exact-copy test from row identities (equal rows, equal ids).

    A training or control record is flagged when it is unique in the pooled real data (no other
    training or control record has the same row: decided without the labels) and the release holds
    an exact copy of it. A copy of any pooled-unique record would set its flag, so the leak types
    ``"exact"`` and ``"rare"`` respond on exactly the pooled-unique training records.

    Examples
    --------
    >>> import numpy as np
    >>> f = copy_flags(np.array([1, 2, 2]), np.array([3, 4]), np.array([1, 3, 2]))
    >>> f.member.tolist(), f.non_member.tolist(), f.responds["exact"].tolist()
    ([True, False, False], [True, False], [True, False, False])
    """
    return copy_record_flags(*_pooled_unique_hit(orig, ctl, syn))


def _pooled_unique_hit(orig: np.ndarray, ctl: np.ndarray,
                       syn: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per training and per control record: is its row unique in the pooled real data, and does
    the release hold it? ``(unique_o, hit_o, unique_c, hit_c)``."""
    pooled = np.concatenate([orig, ctl])
    _, inv, counts = np.unique(pooled, return_inverse=True, return_counts=True)
    unique = counts[inv.ravel()] == 1
    hit = _in(pooled, syn)
    n_o = orig.size
    return unique[:n_o], hit[:n_o], unique[n_o:], hit[n_o:]


def copy_record_flags(unique_o: np.ndarray, hit_o: np.ndarray, unique_c: np.ndarray,
                      hit_c: np.ndarray) -> RecordFlags:
    """The exact-copy flags (:func:`copy_flags`) from, per training (``_o``) and control (``_c``)
    record, whether its row is unique in the pooled real data and whether the release holds it
    (from the backend's key lookups).

    Examples
    --------
    >>> import numpy as np
    >>> f = copy_record_flags(np.array([True, False]), np.array([True, True]), np.array([True]),
    ...                       np.array([False]))
    >>> f.member.tolist(), f.non_member.tolist(), f.responds["rare"].tolist()
    ([True, False], [False], [True, False])
    """
    return RecordFlags(unique_o & hit_o, unique_c & hit_c, {"exact": unique_o, "rare": unique_o})


def copy_evidence_counts(orig: np.ndarray, ctl: np.ndarray, syn: np.ndarray) -> dict[str, int]:
    """The counts behind the exact-copy evidence (see :func:`copy_flags`)."""
    return copy_counts(*_pooled_unique_hit(orig, ctl, syn))


def copy_counts(unique_o: np.ndarray, hit_o: np.ndarray, unique_c: np.ndarray,
                hit_c: np.ndarray) -> dict[str, int]:
    """:func:`copy_evidence_counts` from the per-record arrays of :func:`copy_record_flags`.

    Examples
    --------
    >>> import numpy as np
    >>> c = copy_counts(np.array([True, False]), np.array([True, True]), np.array([True]),
    ...                 np.array([False]))
    >>> c["unique_hit_o"], c["hit_o"], c["unique_c"], c["n_c"]
    (1, 2, 1, 1)
    """
    return {"unique_hit_o": int((hit_o & unique_o).sum()), "unique_o": int(unique_o.sum()),
            "unique_hit_c": int((hit_c & unique_c).sum()), "unique_c": int(unique_c.sum()),
            "hit_o": int(hit_o.sum()), "hit_c": int(hit_c.sum()),
            "n_o": int(unique_o.size), "n_c": int(unique_c.size)}


def exact_matches_result(thresholds: Any, columns: list[str], *, k: int, n_synthetic: int,
                         n_duplicated: int, n_original: int, control: tuple[int, int] | None,
                         records: list[dict[str, Any]], evidence_counts: dict[str, int] | None = None,
                         confidence_level: float = 0.95,
                         flags: RecordFlags | None = None) -> MetricResult:
    """The :func:`exact_matches` result from its counts.

    ``k`` synthetic rows of ``n_synthetic`` equal some original row; ``n_duplicated`` of the
    ``n_original`` original rows occur more than once; ``control`` = ``(matched, n_control)``;
    ``evidence_counts`` from :func:`copy_evidence_counts` (non-empty control only); ``flags`` from
    :func:`copy_flags` (same counts, per record): the evidence then carries them for the joint
    verdict.
    """
    rate = proportion(k, n_synthetic, confidence_level)
    dup = proportion(n_duplicated, n_original, confidence_level)
    details: dict[str, Any] = {
        "percentage": 100.0 * rate["value"],
        "synthetic_match_rate": rate,
        "original_duplication_rate": dup,
        "control_match_rate": None,
        "difference_to_baseline": None,
        "threshold": thresholds.get("high"),
        "columns": columns,
    }
    warning = None
    if control is not None:
        kc, n_ctl = control
        base = proportion(kc, n_ctl, confidence_level) if n_ctl else None
        if base is None:
            baseline = Baseline(None, "no baseline: the control table has no rows")
        else:
            details["control_match_rate"] = base
            diff = difference_ci(k, n_synthetic, kc, n_ctl, confidence_level)
            details["difference_to_baseline"] = diff
            baseline = Baseline(base["value"], "control vs original: share of real held-out rows "
                                "equal to some original row", tuple(base["ci"]))
            if k and diff["ci"][0] <= 0:
                warning = ("the copy rate is within sampling error of the control rate: real unseen "
                           "rows match the original as often (common rows, not memorisation)")
    else:
        baseline = Baseline(None, "no baseline: no control given")
    high = thresholds.get("high")
    if high is not None and rate["value"] >= high and warning is None:  # the level will be high
        warning = (f"{k} of {n_synthetic} synthetic rows ({100 * rate['value']:.1f} %) are copies of "
                   "original rows")
    evidence = None
    if evidence_counts is not None:
        e = evidence_counts
        note = (f"{e['n_o'] - e['unique_o']} training and {e['n_c'] - e['unique_c']} control records "
                "whose row other real records share cannot be flagged (see all_records_evidence)")
        statistic = "share of records unique in the real data with an exact copy in the release"
        base = "control rows: real people the generator never saw, against the same release"
        if flags is not None:
            evidence = Evidence.from_flags(statistic, flags, sees=("exact", "rare"), risk="presence",
                                           baseline=base, confidence_level=confidence_level,
                                           note=note)
        else:  # counts only (partitioned runs): the same numbers, joined by Holm
            evidence = Evidence.from_counts(
                statistic, e["unique_hit_o"], e["n_o"], e["unique_hit_c"], e["n_c"], baseline=base,
                confidence_level=confidence_level, note=note)
            vis = e["unique_o"] / e["n_o"] if e["n_o"] else 1.0
            evidence = replace(evidence, risk="presence", sees=("exact", "rare"),
                               visibility={"exact": vis, "rare": vis})
        details["all_records_evidence"] = Evidence.from_counts(
            "share of records with an exact copy in the release", e["hit_o"], e["n_o"], e["hit_c"],
            e["n_c"], confidence_level=confidence_level).to_dict()
    head = Headline(rate["value"], dup["value"], "share of release rows that are verbatim training rows",
                    "the training rows' own duplicates",
                    f"{k} of the {n_synthetic} release rows ({pct(rate['value'])}) are verbatim training "
                    f"rows, while {pct(dup['value'])} of the training rows repeat another training row "
                    "(what a generator reproducing the data's own duplicates would show)",
                    direction="lower is safer")
    return MetricResult("exact_matches", "privacy", rate["value"], "lower is safer", baseline,
                        tuple(rate["ci"]), n_synthetic, LEVEL_FROM_THRESHOLDS, warning, details,
                        records, evidence=evidence, headline=head)


@register(
    "ims", family="privacy", direction="lower is safer",
    optional_needs=("control",),
    params=[Param("confidence_level", 0.95, "level of the Wilson and Newcombe intervals", "probability")],
    thresholds={"medium": 0.01, "high": 0.05},
    description="identical match share: share of distinct synthetic rows found in the original, "
                "against the same share for control rows",
    risk='presence',
    knowledge="a person's full record; looks for an identical row in the release",
    presets=('quick', 'privacy', 'full'),
    order=40,
    backend='any',
    records=RecordsCard(verbatim=True, meaning="a release row found verbatim in the training data"),
    explainer=("The share of release rows found verbatim in the training data (SynEval's "
               'identical-match share), beside the same share for held-out rows; informative: '
               'common rows raise it.')
)
def ims(ctx: Context, *, confidence_level: float = 0.95) -> MetricResult:
    """Identical match share (SynEval's IMS) with an honest control baseline.

    ``value`` = share of DISTINCT synthetic rows that occur in the original. The baseline is the same
    share for distinct control rows (real rows the generator never saw). Without control there is no
    baseline and ``passed`` is ``None`` (SynEval compared the original with a shuffled copy of itself,
    which always gives 1.0 and always passes: we do not).

    Parameters
    ----------
    ctx : Context
        The evaluation context.
    confidence_level : float
        Level of the intervals.

    Returns
    -------
    MetricResult
        ``passed`` (``value <= baseline``, SynEval's rule, or ``None``), ``difference_to_baseline``
        (Newcombe interval), ``significantly_above_baseline``; risk thresholds apply to the excess
        over the baseline (to the value itself without control).
    """
    cols = matching_columns(ctx)
    data = ctx.data
    if data.n_rows("synthetic") == 0 or data.n_rows("original") == 0:
        raise MetricError("the synthetic or original table has no rows; give both at least one row")
    has_ctl = ctx.tables.has_control and data.n_rows("control") > 0
    roles = ("original", "synthetic", "control") if has_ctl else ("original", "synthetic")
    groups = data.key_groups(cols, roles)
    in_orig = lambda f: f["n_original"] > 0  # noqa: E731
    sums = [lambda f: f["n_synthetic"] > 0,                           # distinct synthetic rows
            lambda f: (f["n_synthetic"] > 0) & in_orig(f)]           # ... found in the original
    if has_ctl:
        sums += [lambda f: f["n_control"] > 0, lambda f: (f["n_control"] > 0) & in_orig(f),
                 lambda f: f["n_synthetic"] * in_orig(f), lambda f: f["n_control"] * in_orig(f)]
    got = [int(v) for v in groups.sums(*sums)]
    control = flags = None
    if has_ctl:
        control = (got[3], got[2], got[4], data.n_rows("synthetic"), got[5], data.n_rows("control"))
        lookups = {"release": (cols, ("synthetic",))}
        hit = {role: data.key_rows(role, lookups).flags(hit=lambda f: f["release"] > 0)["hit"]
               for role in ("original", "control")}
        flags = ims_flags(hit["original"], hit["control"])
    return ims_result(ctx.thresholds, k=got[1], n_distinct=got[0], control=control,
                      confidence_level=confidence_level, flags=flags)


def ims_flags(in_release_o: np.ndarray, in_release_c: np.ndarray) -> RecordFlags:
    """The :func:`ims` flags: per training and per control record, whether the release holds a
    verbatim copy of it; any record's copy would set its flag (from the
    backend's key lookups).

    Examples
    --------
    >>> import numpy as np
    >>> f = ims_flags(np.array([True, False]), np.array([False]))
    >>> int(f.member.sum()), f.responds["exact"].tolist()
    (1, [True, True])
    """
    return RecordFlags(in_release_o, in_release_c,
                       {"exact": np.ones(np.asarray(in_release_o).size, dtype=bool)})


def ims_result(thresholds: Any, *, k: int, n_distinct: int, control: tuple[int, ...] | None,
               confidence_level: float = 0.95, flags: RecordFlags | None = None,
               record_counts: tuple[int, int, int, int] | None = None) -> MetricResult:
    """The :func:`ims` result from its counts: ``k`` of ``n_distinct`` distinct synthetic rows occur
    in the original; ``control`` = ``(matched distinct control rows, distinct control rows, synthetic
    rows in the original, synthetic rows, control rows in the original, control rows)`` (from the
    backend's key lookups); ``flags``: per training and control record, whether the release
    holds a verbatim copy of it (the informational evidence); ``record_counts`` = ``(training
    records with a copy, training records, control records with a copy, control records)``: the
    same evidence from counts (partitioned runs; without either, the per-row counts).

    IMS is a fidelity-style share (release rows found in the original against control rows found
    in the original), not a membership test: a release of fresh real rows drawn towards common
    rows raises it. Its evidence therefore never drives the verdict; ``exact_matches`` carries the
    exact-copy test.
    """
    rate = proportion(k, n_distinct, confidence_level)
    details: dict[str, Any] = {"distinct_synthetic_rows": int(n_distinct), "matched_distinct_rows": k,
                               "passed": None, "difference_to_baseline": None,
                               "significantly_above_baseline": None,
                               "method": "distinct synthetic rows found in original vs distinct control "
                                         "rows found in original"}
    warning = None
    evidence = None
    if control is not None:
        kc, n_ctl, k_rows, n_rows, kc_rows, nc_rows = control
        base = proportion(kc, n_ctl, confidence_level)
        diff = difference_ci(k, n_distinct, kc, n_ctl, confidence_level)
        baseline = Baseline(base["value"], "control vs original: share of distinct real held-out rows "
                            "found in the original", tuple(base["ci"]))
        significant = bool(diff["ci"][0] > 0)
        details.update(passed=bool(rate["value"] <= base["value"]), difference_to_baseline=diff,
                       significantly_above_baseline=significant, distinct_control_rows=int(n_ctl))
        excess = max(0.0, diff["value"])
        level = level_from_thresholds(excess, thresholds, "lower is safer") if significant else "low"
        if not details["passed"] and not significant:
            warning = "IMS is above the control baseline but within sampling error"
        note = ("informational: IMS compares release rows found in the original with control rows "
                "found in the original (fidelity: common rows raise it), so it does not drive the "
                "verdict; exact_matches carries the exact-copy test (records unique in the real data)")
        if flags is not None:
            evidence = Evidence.from_flags(
                "share of records with a verbatim copy in the release", flags, risk="presence",
                confidence_level=confidence_level, drives_verdict=False, note=note)
        elif record_counts is not None:  # the same test from counts (partitioned runs)
            evidence = replace(Evidence.from_counts(
                "share of records with a verbatim copy in the release", *record_counts,
                confidence_level=confidence_level, drives_verdict=False, note=note), risk="presence",
                visibility={})
        else:  # per release row
            evidence = replace(Evidence.from_counts(
                "share of rows found verbatim in the original", k_rows, n_rows, kc_rows, nc_rows,
                baseline="control rows found in the original (real rows of the same population)",
                confidence_level=confidence_level, drives_verdict=False, note=note), risk="presence")
    else:
        baseline = Baseline(None, "no baseline: no control given")
        level = LEVEL_FROM_THRESHOLDS  # the raw share against the declared thresholds
        warning = ("no control given: IMS has no baseline, so 'passed' is not decided; risk level "
                   "compares the raw share with the thresholds")
    return MetricResult("ims", "privacy", rate["value"], "lower is safer", baseline, tuple(rate["ci"]),
                        int(n_distinct), level, warning, details, evidence=evidence)
