"""The release rows behind the findings: every release row an alarming test ties to one of its
flagged training records, each with its training row, ranked so the first rows remove most of the
excess.

A test that flags records states, for them, the release rows responsible
(:class:`~synthguard.core.results.RowPairs` in its :class:`~synthguard.core.results.RecordFlags`):
copies within a few cells, the rows within a record's closeness radius, the rows sharing its key.
:func:`rows_behind` collects them over the tests that read ``high`` or ``medium``, for their
flagged *training* records (a flagged control record is chance, not a leak):

* each (test, flagged training record) carries the test's weight times the share of its flagged
  training records that is excess over the control (``(member - control) / member``: how likely a
  flagged record is a leak rather than chance), split evenly over the rows tied to it;
* a release row's score is the sum over everything it is tied to: the rows that explain the most
  flagged records of the most alarming tests come first (rows to drop before rows to review);
* a test whose every tie is a copy (its pairs say ``copies``: verbatim copies, or copies within a
  few cells that identify their training record) also lists the copies of training records it does
  not flag (a verbatim copy of a row other real records share; a near-copy of a record another real
  record is near), after the others, with score 0.

The action of a row is ``drop`` when a test ties it as a copy (a verbatim copy of a training row,
or a copy within a cell that identifies its training record) beyond chance, or as a close
neighbour or a linkage row
(:data:`~synthguard.core.results.PAIR_ACTIONS`) of a test at least :data:`DROP_SHARE` of whose
flagged training records are beyond what the control shows (a test that flags many records by
chance names its rows for review: dropping them blindly would remove about as many innocent rows
as leaks), else ``review``.

A copy is beyond chance by the control, stratum by stratum: a release row among many real records
(its :attr:`~synthguard.core.results.RowPairs.crowd`: real records within one cell more than the
tie allows) equals or nears one of them by chance, as a fresh person would. Walking the crowds from
the sparsest, the rows tied to training records are compared with the chance the control shows
(the release rows tied to control records, and the control records that tie to training records
as a release row would); the copies up to the largest crowd at
which at least :data:`COPY_SHARE` of the training ties so far are beyond that rate are rows to drop,
the others rows to review (:func:`chance_cut`; one stratum when the test states no crowds). Everything is vectorised over the pairs; the rows
come back in canonical positions, :func:`export_rows` maps them to input rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..core.arrays import first_per_key
from ..data.leaks import FAMILY_OF_CELLS

__all__ = ["ALARM", "CONTEXT", "COPY_SHARE", "DROP_SHARE", "EXPORT_COLUMNS", "alarming_tests", "chance_cut",
           "excess_share", "export_rows", "flagged_records", "plain_records", "row_ties",
           "rows_behind"]

#: Levels whose tests name rows.
ALARM = ("high", "medium")
#: The action of a record the export lists apart from the findings: one a test that reads low,
#: inconclusive or not meaningful lists itself (not a finding, never counted as a leaked row).
CONTEXT = "context"
#: The share of a test's flagged training records beyond the control's rate, ``(member - control)
#: / member``, from which the rows it ties as neighbours are rows to drop (below it, rows to
#: review); for copies, the same share of the training ties up to a crowd (:func:`chance_cut`).
DROP_SHARE = 0.9
#: The share of a copy test's training ties beyond chance up to a crowd (:func:`chance_cut`) from
#: which its copies up to that crowd are rows to drop: the precision the drop list aims at (a point
#: estimate of the chance ties, not a bound: 0.85-1.0 measured over 14 splits of the shared tables).
COPY_SHARE = 0.95
#: The export's columns: the records schema, then the rank, the leak family the row's cells show,
#: every test that ties the row (or flags its training record without naming release rows:
#: :func:`flagged_records`), and the drop-and-retest round that found it.
EXPORT_COLUMNS = ("metric", "risk", "action", "release_row", "training_row", "reason", "rank",
                  "family", "tests", "round")
_COLUMNS = ("release", "training", "score", "action", "copy", "metric", "risk", "tests", "tie",
            "cells", "changed1", "changed2", "ignored")


def alarming_tests(verdict: Any, results: Mapping[str, Any]) -> list[tuple[Any, Any, Any]]:
    """``(test row, evidence, pairs)`` of every verdict test that reads ``high`` or ``medium`` and
    states the release rows behind its flags (tests counted as another test's twin are left out:
    they vote once, through it)."""
    out = []
    for t in getattr(verdict, "tests", ()) or ():
        if t.get("level") not in ALARM or t.get("same_as") or t.get("contained_in"):
            continue
        ev = getattr(results.get(t["metric"]), "evidence", None)
        flags = row_ties(ev)
        if flags is None:
            continue
        out.append((t, ev, flags.pairs))
    return out


def row_ties(ev: Any) -> Any:
    """The per-record flags of an evidence that name the release rows behind them: its
    :attr:`~synthguard.core.results.Evidence.flags` when they carry pairs, else its
    :attr:`~synthguard.core.results.Evidence.ties` (a combined test's, for the export only);
    ``None`` when the test names no release row."""
    for flags in (getattr(ev, "flags", None), getattr(ev, "ties", None)):
        if flags is not None and flags.pairs is not None:
            return flags
    return None


def flagged_records(verdict: Any, results: Mapping[str, Any], tables: Any,
                    rows: pd.DataFrame | None = None) -> tuple[pd.DataFrame | None, list[dict[str, Any]]]:
    """The training records an alarming test flags when it names no release row behind them
    (its flags carry no pairs: a nearest-key attack, a match within a tolerance, a rare
    combination echoed), every one: the people a finding concerns, whose release rows the test
    does not say. Twins are left out (they vote, and list, through their test).

    Parameters
    ----------
    verdict, results, tables
        As :func:`rows_behind`.
    rows : DataFrame, optional
        The export's rows so far (:func:`rows_behind`'s frame, canonical positions).

    Returns
    -------
    (DataFrame or None, list of dict)
        ``rows`` with such a test added to the ``tests`` of every row whose training record it
        flags (its release rows are listed there: the record is not listed again); and the other
        flagged records in the export's schema (:data:`EXPORT_COLUMNS`; no release row, action
        ``review``, one row per record with every test flagging it, ranked after ``rows`` by the
        strongest test's weight times its excess share, then by input row).
    """
    from .wording import flagged_reason

    parts, tests = [], []
    for t in getattr(verdict, "tests", ()) or ():
        if t.get("level") not in ALARM or t.get("same_as") or t.get("contained_in"):
            continue
        ev = getattr(results.get(t["metric"]), "evidence", None)
        flags = getattr(ev, "flags", None)
        if flags is None or row_ties(ev) is not None:
            continue
        rec = np.flatnonzero(np.asarray(flags.member, dtype=bool))
        if not rec.size:
            continue
        tests.append(t)
        parts.append(pd.DataFrame({"training": rec, "test": len(tests) - 1,
                                   "score": float(ev.weight) * excess_share(t),
                                   "metric": t["metric"], "risk": t["risk"],
                                   "reason": flagged_reason(t["metric"], str(ev.statistic))}))
    if not parts:
        return rows, []
    names = [str(t["metric"]) for t in tests]
    every = pd.concat(parts, ignore_index=True)
    # one row per record: its strongest test first, every test flagging it named once per
    # distinct combination (tie_combinations: no loop over records)
    every = every.sort_values(["training", "score", "test"], ascending=[True, False, True],
                              kind="stable").reset_index(drop=True)
    codes, combos = tie_combinations(every["training"].to_numpy(), every["test"].to_numpy())
    first = every.drop_duplicates("training").reset_index(drop=True)
    first["tests"] = np.asarray([", ".join(names[j] for j in c if j >= 0) for c in combos],
                                dtype=object)[codes]
    if rows is not None and len(rows):
        trn = rows["training"].to_numpy(dtype=np.int64)
        at = pd.Index(first["training"].to_numpy(dtype=np.int64)).get_indexer(trn)
        hit = at >= 0
        rows = rows.copy()
        more = first["tests"].to_numpy(dtype=object)[at[hit]]
        rows.loc[hit, "tests"] = rows["tests"].to_numpy(dtype=object)[hit] + ", " + more
        first = first[~np.isin(first["training"].to_numpy(dtype=np.int64), trn)]
    if not len(first):
        return rows, []
    first = first.sort_values(["score", "test", "training"], ascending=[False, True, True],
                              kind="stable").reset_index(drop=True)
    nums = (getattr(tables, "row_numbers", None) or {}).get("original")
    trn = first["training"].to_numpy(dtype=np.int64)
    start = (0 if rows is None else len(rows)) + 1
    frame = pd.DataFrame({"metric": first["metric"].astype(object), "risk": first["risk"],
                          "action": "review", "release_row": None,
                          "training_row": trn if nums is None else np.asarray(nums)[trn],
                          "reason": first["reason"],
                          "rank": np.arange(start, start + len(first), dtype=np.int64), "family": "",
                          "tests": first["tests"], "round": 1})
    return rows, plain_records(frame[list(EXPORT_COLUMNS)])


def excess_share(t: Any) -> float:
    """The share of a test's flagged training records beyond the control's rate,
    ``(member - control) / member`` in ``[0, 1]``: how likely a flagged record is a leak rather
    than chance.

    Examples
    --------
    >>> excess_share({"member": 0.2, "non_member": 0.01})
    0.95
    """
    p1, p0 = t.get("member"), t.get("non_member")
    if p1 is None or p0 is None or not p1 > 0:
        return 0.0
    return round(max(0.0, min(1.0, (float(p1) - float(p0)) / float(p1))), 12)


def _tied_rows(pairs: Any, n_o: int) -> tuple[np.ndarray, np.ndarray]:
    """Per release row: is it tied to some training record, to some control record?"""
    n = int(pairs.n_rows)
    train, ctl = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    if pairs.record.size:
        t = pairs.record < n_o
        train[pairs.row[t]] = True
        ctl[pairs.row[~t]] = True
    if pairs.row_key is not None:
        rk, at = pairs.record_key, np.flatnonzero(pairs.row_key >= 0)
        k = pairs.row_key[at]
        train[at] |= np.isin(k, rk[:n_o][rk[:n_o] >= 0])
        ctl[at] |= np.isin(k, rk[n_o:][rk[n_o:] >= 0])
    return train, ctl


def chance_cut(crowd: np.ndarray, train: np.ndarray, ctl: np.ndarray, n_o: int, n_c: int,
               chance_crowd: np.ndarray | None = None) -> float:
    """The largest crowd up to which a copy test's ties to training records are beyond chance.

    Per release row, ``crowd`` (real records around it), ``train`` / ``ctl`` (tied to some
    training / control record); ``chance_crowd``: per control record taken as a fresh row, its
    crowd when it ties to a training record, else ``-1``. Among the release rows with a crowd up
    to ``c``, ``T`` are tied to training records. A fresh row ties to a real record of either side
    at the same rate per record, so ``C * n_o / n_c`` of them are chance, with ``C`` the release
    rows tied to control records; and a control record ties to a training record as often as a
    fresh release row does, so ``Q * n_rel / n_c`` are chance, with ``Q`` the control records tied
    with a crowd up to ``c``. The chance count is the mean of the two (the first alone without
    ``chance_crowd``); the cut is the largest ``c`` with ``1 - chance / T >= COPY_SHARE`` (the
    sparsest crowds first: a copy of a record no other real person is near is no chance match);
    ``-1`` when none, ``inf`` without control records (no baseline: every copy counts).

    Examples
    --------
    >>> import numpy as np
    >>> crowd = np.repeat([1, 5], [20, 6])  # 20 rows alone, 6 in a crowd of 5 real records
    >>> train = np.arange(26) < 24  # 24 tied to training records
    >>> ctl = ~train  # 2 tied to control records
    >>> chance_cut(crowd, train, ctl, 100, 100)  # up to crowd 5, 2 of the 24 are chance
    1.0
    >>> chance_cut(crowd, train, ctl, 100, 100, np.full(100, -1))  # no control record ties: 1
    5.0
    """
    if n_c <= 0:
        return float("inf")
    tied = np.flatnonzero(train | ctl)
    if not tied.size:
        return -1.0
    levels, inv = np.unique(crowd[tied], return_inverse=True)
    t = np.cumsum(np.bincount(inv.ravel(), weights=train[tied], minlength=levels.size))
    chance = np.cumsum(np.bincount(inv.ravel(), weights=ctl[tied], minlength=levels.size)) \
        * (n_o / n_c)
    if chance_crowd is not None:
        q = np.asarray(chance_crowd)
        q_up_to = np.searchsorted(np.sort(q[q >= 0]), levels, "right")
        chance = (chance + q_up_to * (crowd.size / n_c)) / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        share = 1.0 - chance / t
    ok = (t > 0) & (share >= COPY_SHARE - 1e-12)
    return float(levels[ok].max()) if ok.any() else -1.0


def _test_entries(pairs: Any, member: np.ndarray, weight: float
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(release row, training record, contribution)`` of one test: every tie of a flagged
    training record, its share of the test's weight; for pairs of copies also the copies of
    unflagged training records (contribution 0)."""
    n_o = member.size
    rows, recs, contrib = [], [], []
    if pairs.record.size:
        train = pairs.record < n_o
        sel = train.copy()
        sel[train] = member[pairs.record[train]]
        rec, row = pairs.record[sel], pairs.row[sel]
        if rec.size:
            deg = np.bincount(rec, minlength=n_o)[rec]
            rows.append(row)
            recs.append(rec)
            contrib.append(weight / deg)
        if pairs.copies:  # copies of training records the test does not flag
            rest = train & ~sel
            rows.append(pairs.row[rest])
            recs.append(pairs.record[rest])
            contrib.append(np.zeros(int(rest.sum())))
    if pairs.row_key is not None:
        rk = pairs.record_key[:n_o]
        n_keys = int(max(rk.max(initial=-1), pairs.row_key.max(initial=-1))) + 1
        flagged_keys = np.where(member, rk, -1)
        nf = np.bincount(flagged_keys[flagged_keys >= 0], minlength=n_keys)
        first_flagged = first_per_key(flagged_keys, n_keys)
        row_ok = np.flatnonzero(pairs.row_key >= 0)
        k = pairs.row_key[row_ok]
        n_rows = np.bincount(k, minlength=n_keys)
        hit = nf[k] > 0
        rows.append(row_ok[hit])
        recs.append(first_flagged[k[hit]])
        contrib.append(weight * nf[k[hit]] / n_rows[k[hit]])
        if pairs.copies:  # every copy of a training row, flagged or not
            first_any = first_per_key(rk, n_keys)
            copy = ~hit & (first_any[k] >= 0)
            rows.append(row_ok[copy])
            recs.append(first_any[k[copy]])
            contrib.append(np.zeros(int(copy.sum())))
    if not rows:
        z = np.zeros(0, dtype=np.int64)
        return z, z, np.zeros(0)
    return (np.concatenate(rows).astype(np.int64), np.concatenate(recs).astype(np.int64),
            np.concatenate(contrib).astype(float))


def _id_columns(tables: Any) -> list[str]:
    """The columns every test ignores (id columns: :func:`~synthguard.metrics.privacy.matching.
    compared_columns` leaves them out) that both the training and the release tables hold, at most
    63 (one bit each in :func:`_cells_differing`'s mask)."""
    syn, orig = getattr(tables, "synthetic", None), getattr(tables, "original", None)
    have = [c for c in getattr(syn, "columns", ()) if c in getattr(orig, "columns", ())]
    return [c for c, s in tables.schema.columns.items() if s.sdtype == "id" and c in have][:63]


def _cells_differing(tables: Any, release: np.ndarray, training: np.ndarray,
                     take: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """How many compared cells (every column but id columns) of each release row differ from its
    training row (missing equals missing), which, and which id columns differ: one pass per
    column, vectorised over the rows. ``take(role, positions, columns)`` fetches rows by canonical
    position (a backend's :meth:`~synthguard.engine.backend.Backend.take`: on a cluster, only these
    rows travel); default: read from ``tables``' frames.

    Returns ``(cells, first, second, ignored)``: the count; the positions in
    :func:`~synthguard.metrics.privacy.matching.compared_columns` of the first two differing
    cells (``-1`` for none); a bit mask over :func:`_id_columns` of the id columns whose values
    differ (a row id the tests do not compare)."""
    from ..metrics.privacy.matching import compared_columns

    cols = compared_columns(tables.schema)
    ids = _id_columns(tables)
    n = release.size
    out, first, second = (np.zeros(n, dtype=np.int64), np.full(n, -1, dtype=np.int64),
                          np.full(n, -1, dtype=np.int64))
    ignored = np.zeros(n, dtype=np.int64)
    if not n:
        return out, first, second, ignored
    if take is None:
        syn = tables.synthetic.iloc[release].reset_index(drop=True)
        orig = tables.original.iloc[training].reset_index(drop=True)
    else:
        syn, orig = take("synthetic", release, cols + ids), take("original", training, cols + ids)

    def differ(c: str) -> np.ndarray:
        a, b = syn[c], orig[c]
        both_na = (a.isna() & b.isna()).to_numpy()
        same = a.astype(object).eq(b.astype(object)).fillna(False).to_numpy(dtype=bool)
        return ~(same | both_na)

    for j, c in enumerate(cols):  # loop over columns
        d = differ(c)
        second = np.where(d & (first >= 0) & (second < 0), j, second)
        first = np.where(d & (first < 0), j, first)
        out += d
    for j, c in enumerate(ids):  # loop over id columns
        ignored |= differ(c).astype(np.int64) << j
    return out, first, second, ignored


def rows_behind(verdict: Any, results: Mapping[str, Any], tables: Any, take: Any = None
                ) -> pd.DataFrame:
    """Every release row an alarming test ties to one of its flagged training records, ranked.

    Parameters
    ----------
    verdict : Verdict
        The run's verdict (its tests' levels and rates).
    results : mapping
        The run's results (their evidence's flags and pairs).
    tables : Tables
        The run's tables, canonical order (cells are compared to name the leak family).
    take : callable, optional
        ``take(role, positions, columns)``: the rows behind the pairs fetched by canonical
        position (a cluster run's backend; only those rows travel); default: read from ``tables``.

    Returns
    -------
    DataFrame
        One row per release row, ranked (drops first, then by score): ``release`` and
        ``training`` (canonical positions), ``score``, ``action`` (``drop`` | ``review``),
        ``copy`` (a test ties it as a copy of its training record: the surest rows to drop),
        ``metric`` and ``risk`` (the test that explains the row most), ``tests`` (every test tying
        it, strongest first), ``tie`` (the strongest test's words), ``cells`` (compared cells
        that differ from the training row), ``changed1`` / ``changed2`` (the first two of them, as
        positions among the compared columns, ``-1`` for none) and ``ignored`` (a bit mask of the
        id columns, which no test compares, whose values differ: :func:`_cells_differing`).

    Examples
    --------
    >>> import numpy as np, pandas as pd, synthguard
    >>> from synthguard.data.tables import prepare_tables
    >>> from synthguard.run.config import build_config
    >>> from synthguard.run.options import EvaluateOptions
    >>> from synthguard.run.runner import run_tables
    >>> rng = np.random.default_rng(0)
    >>> o, c, f = (pd.DataFrame({"x": rng.normal(size=200), "y": rng.normal(size=200)})
    ...            for _ in "ocf")
    >>> t = prepare_tables(o, pd.concat([o.head(40), f.head(60)]), c).in_canonical_order()
    >>> out = run_tables(t, build_config(["exact_matches"], None, None),
    ...                  EvaluateOptions(retest_columns=0, retest_rows=0), canonical=True)
    >>> rows = rows_behind(out.verdict, out.results, t)
    >>> len(rows), set(rows["action"]), int(rows["cells"].max())
    (40, {'drop'}, 0)
    """
    tests = alarming_tests(verdict, results)
    n_rel = len(tables.synthetic)
    parts = []
    for i, (t, ev, pairs) in enumerate(tests):
        share = excess_share(t)
        flags = row_ties(ev)
        member = np.asarray(flags.member, dtype=bool)
        row, rec, contrib = _test_entries(pairs, member, float(ev.weight) * share)
        drop = np.full(row.size, pairs.action == "drop" and (pairs.copies or share >= DROP_SHARE))
        if drop.any() and pairs.copies:  # copies beyond chance only
            train, ctl = _tied_rows(pairs, member.size)
            crowd, chance = pairs.crowd, pairs.chance_crowd
            if crowd is None:  # crowds unknown: one stratum
                crowd = np.zeros(int(pairs.n_rows), dtype=np.int64)
                chance = None if chance is None else np.where(chance >= 0, 0, -1)
            cut = chance_cut(crowd, train, ctl, member.size, flags.non_member.size, chance)
            drop &= crowd[row] <= cut
        parts.append(pd.DataFrame({"release": row, "training": rec, "contrib": contrib, "test": i,
                                   "drop": drop, "copy": drop & pairs.copies}))
    if not parts or not sum(len(p) for p in parts):
        return pd.DataFrame({c: pd.Series(dtype=object) for c in _COLUMNS})
    every = pd.concat(parts, ignore_index=True)
    # the strongest tie of each row: a tie to drop before one to review, then the largest
    # contribution, then the test's order, then the record
    every = every.sort_values(["release", "drop", "contrib", "test", "training"],
                              ascending=[True, False, False, True, True], kind="stable")
    first = every.drop_duplicates("release").set_index("release")
    score = every.groupby("release")["contrib"].sum()
    drop = every.groupby("release")["drop"].any()
    copy = every.groupby("release")["copy"].any()
    # every test tying a row, strongest first (names joined once per distinct combination)
    ties = every.drop_duplicates(["release", "test"])
    combo = tie_combinations(ties["release"].to_numpy(), ties["test"].to_numpy())
    names = [t["metric"] for t, _, _ in tests]
    out = pd.DataFrame({"release": first.index.to_numpy(dtype=np.int64),
                        "training": first["training"].to_numpy(dtype=np.int64),
                        "score": score.reindex(first.index).to_numpy(dtype=float),
                        "action": np.where(drop.reindex(first.index).to_numpy(), "drop", "review"),
                        "copy": copy.reindex(first.index).to_numpy(dtype=bool),
                        "test": first["test"].to_numpy()})
    out["metric"] = np.asarray(names, dtype=object)[out["test"].to_numpy()]
    out["risk"] = np.asarray([t["risk"] for t, _, _ in tests],
                             dtype=object)[out["test"].to_numpy()]
    out["tie"] = np.asarray([p.tie for _, _, p in tests], dtype=object)[out["test"].to_numpy()]
    # the names joined once per distinct combination (a loop over combinations, not rows); the
    # releases of `first` are those of `ties`, in the same (ascending) order
    codes, combos = combo
    out["tests"] = np.asarray([", ".join(names[j] for j in c if j >= 0) for c in combos],
                              dtype=object)[codes]
    out = out[(out["release"] >= 0) & (out["release"] < n_rel)]
    out = out.sort_values(["action", "score", "release"], ascending=[True, False, True],
                          kind="stable").reset_index(drop=True)  # "drop" sorts before "review"
    out["cells"], out["changed1"], out["changed2"], out["ignored"] = _cells_differing(
        tables, out["release"].to_numpy(), out["training"].to_numpy(), take)
    return out[list(_COLUMNS)]


def tie_combinations(release: np.ndarray, test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The tests tying each release row, in the order given: ``(codes, combos)``, ``combos[codes[i]]``
    the tests of the ``i``-th distinct release (ascending), padded with ``-1``.

    ``release`` must be sorted (the tests of one row consecutive, strongest first, each once).
    Vectorised: the tests of each row as one row of a matrix, the distinct matrix rows found at once.

    Examples
    --------
    >>> codes, combos = tie_combinations(np.array([3, 3, 5, 8, 8]), np.array([1, 0, 1, 1, 0]))
    >>> [[int(j) for j in combos[c] if j >= 0] for c in codes]
    [[1, 0], [1], [1, 0]]
    """
    release = np.asarray(release)
    if release.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.int64)
    _, first, counts = np.unique(release, return_index=True, return_counts=True)
    group = np.repeat(np.arange(first.size), counts)
    pos = np.arange(release.size) - np.repeat(first, counts)
    mat = np.full((first.size, int(counts.max())), -1, dtype=np.int64)
    mat[group, pos] = np.asarray(test, dtype=np.int64)
    combos, codes = np.unique(mat, axis=0, return_inverse=True)
    return np.asarray(codes, dtype=np.int64).reshape(-1), combos


def _family(cells: np.ndarray, metric: np.ndarray, action: np.ndarray,
            risk: np.ndarray | None = None) -> np.ndarray:
    """The leak family a row's cells show: ``exact`` (no cell differs), ``near1`` / ``near2`` (one
    or two), else ``linkage`` (tied by a test of linkability), ``neighbourhood`` (a close row: one
    to drop, or one a presence test ties, such as a membership test's close neighbours) or ``key``
    (a row sharing a disclosure test's key, to review)."""
    from .verdict import card_risk

    near = action == "drop"
    if risk is not None:
        near = near | (np.asarray(risk, dtype=object) == "presence")
    fam = np.where(near, "neighbourhood", "key").astype(object)
    linking = [m for m in pd.unique(metric) if card_risk(str(m)) == "linkability"]  # per test
    fam[np.isin(metric, linking)] = "linkage"
    for n, family in FAMILY_OF_CELLS.items():
        fam[cells == n] = family
    return fam


def export_rows(rows: pd.DataFrame, tables: Any, rounds: Sequence[int] | None = None
                ) -> list[dict[str, Any]]:
    """The rows of :func:`rows_behind` in the export's schema (:data:`EXPORT_COLUMNS`), with input
    row numbers (the tables' ``row_numbers``; positions when the tables are in input order) and a
    reason per row naming its training row and the tests; ``rounds``: the drop-and-retest round
    that found each row (default 1)."""
    if rows is None or not len(rows):
        return []
    rel = rows["release"].to_numpy(dtype=np.int64)
    trn = rows["training"].to_numpy(dtype=np.int64)
    nums = getattr(tables, "row_numbers", None) or {}
    if nums.get("synthetic") is not None:
        rel = np.asarray(nums["synthetic"])[rel]
    if nums.get("original") is not None:
        trn = np.asarray(nums["original"])[trn]
    cells = rows["cells"].to_numpy(dtype=np.int64)
    action = rows["action"].to_numpy(dtype=object)
    metric = rows["metric"].to_numpy(dtype=object)
    frame = pd.DataFrame({"metric": metric, "risk": rows["risk"].to_numpy(dtype=object),
                          "action": action, "release_row": rel, "training_row": trn})
    # the row numbers are columns of their own: the reason names none (it does not depend on
    # the order of the input rows); written once per distinct combination (run.wording)
    frame["reason"] = _reasons(rows, tables)
    frame["rank"] = np.arange(1, len(rows) + 1)
    frame["family"] = _family(cells, metric, action, rows["risk"].to_numpy(dtype=object))
    frame["tests"] = rows["tests"].to_numpy(dtype=object)
    frame["round"] = np.ones(len(rows), dtype=np.int64) if rounds is None else np.asarray(rounds)
    return plain_records(frame[list(EXPORT_COLUMNS)])


def _reasons(rows: pd.DataFrame, tables: Any) -> np.ndarray:
    """The reason of each row of :func:`rows_behind` (:func:`synthguard.run.wording.copy_reason`:
    what differs from its training row, then the tests), one call per distinct combination of
    cells, changed columns, differing id columns, tests and tie (a loop over combinations, not
    rows)."""
    from ..metrics.privacy.matching import compared_columns
    from .wording import copy_reason

    cols, ids = compared_columns(tables.schema), _id_columns(tables)
    n = len(rows)

    def col(name: str, fill: Any) -> pd.Series:
        return rows[name].reset_index(drop=True) if name in rows else pd.Series(np.full(n, fill))

    keys = pd.DataFrame({"cells": col("cells", 0).astype(np.int64),
                         "c1": col("changed1", -1).astype(np.int64),
                         "c2": col("changed2", -1).astype(np.int64),
                         "ign": col("ignored", 0).astype(np.int64),
                         "tests": col("tests", "").astype(str), "tie": col("tie", "").astype(str)})
    distinct = keys.drop_duplicates().reset_index(drop=True)
    text = []
    for k in distinct.itertuples(index=False):  # loop over distinct combinations
        changed = [cols[j] for j in (k.c1, k.c2) if 0 <= j < len(cols)] if k.cells <= 2 else []
        differ = [c for j, c in enumerate(ids) if (int(k.ign) >> j) & 1]
        text.append(copy_reason(int(k.cells), changed, differ, k.tests, k.tie))
    distinct["reason"] = text
    return keys.merge(distinct, how="left", on=list(keys.columns))["reason"].to_numpy(dtype=object)


def plain_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """``to_jsonable(frame.to_dict("records"))``, built from each column's values at once when every
    column holds integers, booleans or strings only (one list per column, one dict per row);
    otherwise (a missing value, a float) through ``to_dict`` and ``to_jsonable`` themselves.

    Examples
    --------
    >>> plain_records(pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}))
    [{'a': 1, 'b': 'x'}, {'a': 2, 'b': 'y'}]
    """
    cols = [str(c) for c in frame.columns]
    lists = []
    for c in frame.columns:  # loop over columns
        values = frame[c].to_numpy()
        plain = values.dtype.kind in "iub" or (
            values.dtype == object and pd.api.types.infer_dtype(values, skipna=False) == "string")
        if not plain:
            from ..core.results import to_jsonable

            return to_jsonable(frame.to_dict("records"))
        lists.append(values.tolist())
    return [dict(zip(cols, row, strict=True)) for row in zip(*lists, strict=True)]
