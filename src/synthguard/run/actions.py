"""The advice, re-tested in the run: drop the release rows behind the findings, and coarsen the
columns that drive what remains; every test runs again and the report states the levels after.

Drop and re-test (:func:`drop_retest`)
    The records export lists every release row an alarming test ties to one of its flagged
    training records (:mod:`synthguard.run.drops`). Of the rows it marks ``drop``, the copies
    (verbatim, or within a cell and identifying their record) are removed first, else the close
    neighbours and linkage rows, and every test of the verdict is run again, through the normal
    metric code and :func:`synthguard.run.verdict.assess`, on the release without them: the same
    code and seed as a new evaluation of that release, so its levels are what such an evaluation
    reads. When a test that names rows to drop still reads ``high``, the rows named on the reduced
    release are dropped in a further round (copies first again; at most ``max_rounds``). The
    export's ``drop`` rows are the rows a round dropped; a row a test named that no round needed
    is a row to review. Each alarming risk states its level after, the columns the release
    without the rows is typed otherwise (a code shared only through the dropped copies reads as
    an identifier and is no longer compared: the level after is not a test on the same columns),
    and what still alarms with why (:class:`~synthguard.core.report_model.DropRetest`). Cost: one more run of the verdict's tests
    per round (at most :data:`DROP_ROUNDS`), only when a test names rows to drop (a release whose
    copies are gone often no longer needs the coarsen-and-retest's runs);
    ``retest_rows=0`` switches it off.

Coarsen and re-test (:func:`coarsen_retest`): what binning or generalising a driving column does to
the risk it drives.

When singling out or attribute inference alarms (``high`` or ``medium``), the columns behind it are
found from the run's own results (the columns tested by the singling-out queries that isolate
training records; the secret whose inference attack shows the largest excess; the most
identifying key of a CAP-style test) and, for at most ``max_columns`` of them, every test of the
verdict is run again, through the normal metric code and :func:`synthguard.run.verdict.assess`, on
tables where that one column is coarsened in the release, the training rows and the control alike:

* numerical and datetime columns: ``bins`` quantile bins, their edges taken from the training and
  control values pooled (label-free, so training and control records stay exchangeable);
* categorical and boolean columns: the ``top`` most frequent categories of the pooled real rows
  kept, the rest merged into ``"other"``.

Each re-test states the column, the coarsening, the risk's level and excess before and after
(:func:`coarsen_retest`); the report shows it under the risk (``verdict.risks[i]["coarsening"]``,
the renderers advise only a coarsening whose re-test lowered the level) and its cost under
``actions`` in the JSON (each run with the risks it ``lowers``). When rows were dropped and
singling out or inference still alarms after, the columns are coarsened on the release without
those rows (``rows_dropped_first``): the advice is to drop, then coarsen. Cost: one more run of
the verdict's tests per re-tested column (at most ``max_columns``, default 2), only when singling
out or inference alarms; ``retest_columns=0`` in :func:`synthguard.evaluate` switches it off.

One code path for one process and a Dask cluster: what decides a coarsening (the pooled real
values' quantiles and category counts), the ranking of the driving columns and the coarsened tables
come from a :class:`~synthguard.data.coarsening.ColumnValues` provider:
:class:`~synthguard.data.coarsening.FrameValues` on the pandas tables of one
process, :class:`synthguard.distributed._coarsen.ClusterValues` on partitioned tables (the
backend's questions, the tables coarsened partition by partition, no table gathered); the same
:class:`~synthguard.data.coarsening.ColumnCoarsening` maps a whole column or one partition's.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..core.report_model import Coarsening, DropRetest
from ..data.coarsening import (
    BINS,
    TOP,
    ColumnValues,
    FrameValues,
    plan_coarsening,
)
from ..data.leaks import FAMILY_OF_CELLS
from .wording import NOTHING_LEFT, retest_cost, still_alarming

#: Risks whose alarms name driving columns (presence is answered by the rows to drop).
COARSEN_RISKS = ("singling_out", "inference")
MAX_COLUMNS = 2
#: Rounds of dropping the named rows and re-testing, at most, by default: one (the copies; on the
#: leaky demo a second round cost about a third more of the run than the first, see
#: benchmarks/bench_drop_retest.py); ``retest_rows`` in :func:`synthguard.evaluate` asks for more.
DROP_ROUNDS = 1
LEVEL_RANK = {"high": 4, "medium": 3, "inconclusive": 2, "low": 1}
ALARM = ("high", "medium")


def local_values(tables: Any) -> FrameValues:
    """The :class:`~synthguard.data.coarsening.ColumnValues` of one process's tables: their pandas
    frames, and a :class:`~synthguard.engine.backend.LocalBackend` over them (with an encoded view
    of its own: ``tables`` may be the release without the rows a drop-and-retest dropped) for the
    questions every backend answers alike (the unique-value excess)."""
    from ..data.encoding import EncodedView
    from ..engine.backend import LocalBackend

    return FrameValues.of_tables(tables, LocalBackend(tables, EncodedView(tables)))


def driving_columns(verdict: Any, results: Mapping[str, Any], schema: Any,
                    values: ColumnValues) -> list[tuple[str, list[str]]]:
    """Columns behind the alarming singling-out and inference tests, most important first, each
    with the risks it drives: ``[(column, [risk, ...]), ...]``.

    Singling out: the columns of the queries that isolate training records (the metric's listed
    records), ranked by their unique-value excess
    (:func:`~synthguard.data.coarsening.unique_value_excesses`, asked of the backend), then by how
    often they appear. Inference:
    the secret with the largest excess over control; for CAP-style tests, the key column with the
    most distinct values in the pooled real rows. Each risk's first column comes before any
    risk's second. ``values``: the run's :class:`~synthguard.data.coarsening.ColumnValues`
    (:func:`local_values` in one process).
    """
    usable = {c for c, s in schema.columns.items() if s.sdtype not in ("text", "id")}
    alarms = {r["risk"] for r in verdict.risks if r.get("level") in ALARM}
    tests = [t for t in verdict.tests if t.get("level") in ALARM and t.get("risk") in alarms]
    per_risk: dict[str, list[str]] = {"singling_out": [], "inference": []}

    def add(col: str, risk: str) -> None:
        if col in usable and col not in per_risk[risk]:
            per_risk[risk].append(col)

    if "singling_out" in alarms:
        counts: dict[str, int] = {}
        for t in tests:
            res = results.get(t["metric"])
            if t["risk"] != "singling_out" or res is None:
                continue
            for rec in res.records or ():
                for col in {str(p[0]) for p in rec.get("predicates") or () if p}:
                    counts[col] = counts.get(col, 0) + 1
        cols = [c for c in counts if c in usable]
        excess = values.unique_value_excesses(cols)
        for col in sorted(cols, key=lambda c: (-excess[c], -counts[c], c)):
            add(col, "singling_out")
    if "inference" in alarms:
        for t in sorted((t for t in tests if t["risk"] == "inference"),
                        key=lambda t: (-(t.get("effect") or 0.0), t["metric"])):
            res = results.get(t["metric"])
            det = dict(res.details or {}) if res is not None else {}
            per = det.get("per_secret") or []
            if per:
                top = max(per, key=lambda d: (float(d.get("risk") or 0.0), str(d["secret_column"])))
                add(str(top["secret_column"]), "inference")
            keys = [k for k in det.get("key_fields") or () if k in usable]
            if keys:
                pooled = values.distinct_real(keys)
                add(max(keys, key=lambda k: (pooled[k], k)), "inference")
    # each alarming risk's first driver before any risk's second: a budget of two columns
    # re-tests the top driver of singling out and of inference
    found: dict[str, list[str]] = {}
    for rank in range(max((len(v) for v in per_risk.values()), default=0)):
        for risk in COARSEN_RISKS:
            if rank < len(per_risk[risk]):
                found.setdefault(per_risk[risk][rank], [])
    for risk in COARSEN_RISKS:
        for col in per_risk[risk]:
            found[col].append(risk)
    return list(found.items())


def coarsen_retest(tables: Any, run_config: Any, verdict: Any, results: Mapping[str, Any], *,
                   rerun: Callable[[Any, Any], Any], max_columns: int = MAX_COLUMNS,
                   bins: int = BINS, top: int = TOP, rows_dropped_first: int = 0,
                   values: Callable[[Any], ColumnValues] | None = None
                   ) -> tuple[Any, dict[str, Any] | None]:
    """Re-test the alarming singling-out and inference risks with their driving column coarsened.

    Parameters
    ----------
    tables : Tables
        The run's tables (canonical order).
    run_config : RunConfig
        The run's configuration; the verdict's tests are run again with their parameters.
    verdict : Verdict
        The run's verdict.
    results : mapping
        The run's results (records and details name the driving columns).
    rerun : callable
        ``rerun(tables, run_config) -> RunOutput``: the run's own runner with the run's options
        (same seed: the same random choices), applied to the coarsened tables and the verdict's
        tests (:func:`synthguard.run.runner.run_tables` passes itself).
    max_columns : int
        At most this many columns are re-tested (one more run of the verdict's tests each).
    bins, top : int
        Quantile bins of a numerical column; categories kept of a categorical one.
    rows_dropped_first : int
        Release rows already dropped from ``tables`` (the drop-and-retest's): stated on every
        entry, whose levels are then those of the release without them.
    values : callable, optional
        ``values(tables) -> ColumnValues``: the pooled real values that decide a coarsening, the
        driving columns' ranking and the coarsened tables (default :func:`local_values`, the
        pandas tables of one process and their one-process backend; a cluster run answers on its
        partitions).

    Returns
    -------
    (Verdict, dict or None)
        The verdict with ``"coarsening"`` entries under the risks re-tested, and the cost
        (``None`` when nothing was re-tested: no alarm, no control, or switched off).

    Examples
    --------
    >>> import numpy as np, pandas as pd, synthguard
    >>> rng = np.random.default_rng(0)
    >>> def people(n):
    ...     return pd.DataFrame({"income": rng.integers(1, 10**6, n) * 1.0,
    ...                          "g": rng.choice(["a", "b"], n)})
    >>> o, c = people(400), people(400)
    >>> s = c.assign(income=o["income"].to_numpy())
    >>> rep = synthguard.evaluate(o, s, control=c, metrics=["singling_out_univariate"])
    >>> [x["column"] for x in rep.risks()[1]["coarsening"]]
    ['income']
    """
    if max_columns <= 0 or not tables.has_control or verdict.rule.rule != "calibrated":
        return verdict, None
    if not any(r.get("level") in ALARM and r["risk"] in COARSEN_RISKS for r in verdict.risks):
        return verdict, None
    provider = (local_values if values is None else values)(tables)
    candidates = driving_columns(verdict, results, tables.schema, provider)
    names = [t["metric"] for t in verdict.tests]
    sub = dataclasses.replace(
        run_config, metrics={n: run_config.metrics[n] for n in names if n in run_config.metrics},
        unavailable={}, runs={n: m for n, m in dict(run_config.runs).items() if n in names})
    before = {r["risk"]: r for r in verdict.risks}
    added: dict[str, list[dict[str, Any]]] = {}
    runs: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for col, drives in candidates:
        if len(runs) >= max_columns:
            break
        sdtype = tables.schema.sdtype(col)
        plan = plan_coarsening(provider, col, sdtype, bins=bins, top=top)
        if plan is None:
            continue
        how = plan.how
        t1 = time.perf_counter()
        spec = dataclasses.replace(tables.schema.columns[col], sdtype="categorical", inferred=False,
                                   reason="coarsened", datetime_format=None, unit=None)
        schema = dataclasses.replace(tables.schema, columns={**tables.schema.columns, col: spec})
        from ..errors import SynthguardError

        try:
            coarse_tables = provider.coarsened(plan, schema)
            rep = rerun(coarse_tables, sub)
        except SynthguardError as exc:  # said in the report, never silent; the run stands
            runs.append({"column": col, "coarsening": how, "error": str(exc),
                         "seconds": round(time.perf_counter() - t1, 4)})
            continue
        after = {r["risk"]: r for r in rep.verdict.risks}
        entry = {"column": col, "coarsening": how,
                 "levels_after": {k: r.get("level") for k, r in after.items()},
                 "seconds": round(time.perf_counter() - t1, 4)}
        gone = {n: e.get("reason") for n, e in rep.entries.items() if e["status"] != "ok"}
        if gone:  # a test that could not run on the coarsened tables: the level is without it
            entry["not_rerun"] = gone
        runs.append(entry)
        lowered = []
        for k in drives:
            b, a = before[k], after.get(k, {})
            e = _entry(k, col, how, b, a, top, sdtype, gone, int(rows_dropped_first or 0))
            if gone:
                e["not_rerun"] = sorted(gone)
            if rows_dropped_first:
                e["rows_dropped_first"] = int(rows_dropped_first)
            added.setdefault(k, []).append(e)
            if LEVEL_RANK.get(e["level_after"], 5) < LEVEL_RANK.get(e["level_before"], 0):
                lowered.append(k)
        entry["lowers"] = lowered
    cost = {"max_columns": max_columns, "bins": bins, "top": top,
            "candidates": [c for c, _ in candidates],
            "columns_retested": [r["column"] for r in runs if "error" not in r],
            "metrics_rerun": names, "runs": runs, "seconds": round(time.perf_counter() - t0, 4),
            "cost": retest_cost("columns", len(names), len(runs), max_columns)}
    risks = tuple(r.replace(coarsening=tuple(Coarsening.from_dict(e) for e in added[r["risk"]]))
                  if r["risk"] in added else r for r in verdict.risks)
    return dataclasses.replace(verdict, risks=risks), cost


def _entry(risk: str, col: str, how: str, b: Mapping[str, Any], a: Mapping[str, Any], top: int,
           sdtype: str, not_run: Mapping[str, Any] | None = None, rows_dropped_first: int = 0
           ) -> dict[str, Any]:
    """One coarsen-and-retest entry of a risk; its ``text`` written by :mod:`.wording`."""
    from .verdict import RISK_TITLES
    from .wording import coarsening_text

    lb, la = str(b.get("level")), str(a.get("level", "not assessed"))
    text = coarsening_text(RISK_TITLES[risk][0], lb, col, how, top, la, a.get("effect"),
                           a.get("effect_ci"), not_run, rows_dropped_first)
    return {"column": col, "sdtype": sdtype, "coarsening": how, "level_before": lb,
            "level_after": la, "effect_before": b.get("effect"), "effect_after": a.get("effect"),
            "effect_ci_after": a.get("effect_ci"), "metric_after": a.get("metric"), "text": text}


def _sub_config(run_config: Any, names: list[str]) -> Any:
    """The run's configuration restricted to the verdict's tests ``names``."""
    return dataclasses.replace(
        run_config, metrics={n: run_config.metrics[n] for n in names if n in run_config.metrics},
        unavailable={}, runs={n: m for n, m in dict(run_config.runs).items() if n in names})


def _without_rows(tables: Any, dropped: np.ndarray) -> tuple[Any, np.ndarray, np.ndarray | None]:
    """``tables`` (canonical order) with the release rows marked in ``dropped`` (canonical
    positions) removed, in canonical order as a new evaluation of that release would have them;
    for each of their release rows its canonical position in ``tables``, and for each of their
    training rows its canonical position in ``tables`` (``None``: the same positions).

    A new evaluation types the tables again, and fewer release rows can change what the rows
    say about a column: a code unique on every row that the release shares with the training
    table only through copied rows is compared in the run, and a surrogate identifier once the
    copies are gone. So the run's schema goes through the two checks that read the rows
    (:func:`~synthguard.data.quirks.detect_row_numbers`,
    :func:`~synthguard.data.quirks.detect_surrogate_ids`) on the tables without the rows. When
    neither changes it, the run's typed rows are taken as they are (typing typed rows again
    changes no value, and the kept rows are already in canonical order: a stable sort by content
    hash keeps any subset of sorted rows in order), the training and control frames are the
    run's, and the release's fingerprint is that of the run's release and the kept positions;
    otherwise the tables are typed again under the changed schema.

    Examples
    --------
    >>> import numpy as np, synthguard
    >>> from synthguard.data.tables import prepare_tables
    >>> from synthguard.demo import make_demo
    >>> d = make_demo(200, seed=0)
    >>> t = prepare_tables(d["original"], d["leaky"], d["control"]).in_canonical_order()
    >>> gone = np.zeros(len(t.synthetic), dtype=bool); gone[:5] = True
    >>> new, pos, training = _without_rows(t, gone)
    >>> len(new.synthetic), int(pos[0]), training is None, new.original is t.original
    (95, 5, True, True)
    """
    import hashlib

    from ..data.tables import prepare_tables, take_rows

    kept = np.flatnonzero(~np.asarray(dropped, dtype=bool)).astype(np.int64)
    syn = take_rows(tables.synthetic, kept)
    frames = {r: (syn if r == "synthetic" else tables.get(r)) for r in tables.roles}
    schema = _identifiers(frames, tables)
    if schema != tables.schema:  # the rows left type a column otherwise: typed again
        new = prepare_tables(tables.original, syn, tables.control, schema, canonical_columns=True,
                             detect_identifiers=False).in_canonical_order()
        new = dataclasses.replace(new, whole_columns=tables.whole_columns)
        nums = new.row_numbers.get("synthetic")
        return new, (kept if nums is None else kept[np.asarray(nums)]), new.row_numbers.get("original")
    before = dict(tables.fingerprints.get("synthetic", {}))
    sha = hashlib.sha256(str(before.get("sha256", "")).encode() + kept.tobytes()).hexdigest()
    prints = {**tables.fingerprints, "synthetic": {**before, "rows": int(kept.size), "sha256": sha}}
    numbers = {r: np.arange(len(f), dtype=np.int64) for r, f in frames.items()}
    new = dataclasses.replace(tables, synthetic=syn, fingerprints=prints, row_numbers=numbers,
                              row_hashes={})
    return new, kept, None


def _identifiers(frames: Mapping[str, pd.DataFrame], tables: Any) -> Any:
    """``tables``' schema after the two checks that read the rows
    (:func:`~synthguard.data.quirks.detect_row_numbers`,
    :func:`~synthguard.data.quirks.detect_surrogate_ids`) on ``frames`` (the run's tables with
    another release). A sampled run's checks read its whole tables' candidate columns
    (``tables.whole_columns``) in place of the samples: a new evaluation decides identifiers before
    it samples."""
    from ..data.quirks import detect_row_numbers, detect_surrogate_ids

    whole = tables.whole_columns
    schema = tables.schema
    if whole:
        cols = [c for c in schema.columns if all(c in w for w in whole.values())]
        frames = {r: (whole[r] if r in whole else f)[cols] for r, f in frames.items()}
        schema = schema.restrict(cols)
    schema, _ = detect_row_numbers(frames, schema, tables.labels)
    schema, _ = detect_surrogate_ids(frames, schema, tables.labels)
    if not whole:
        return schema
    return dataclasses.replace(tables.schema, columns={c: schema.columns.get(c, s)
                                                       for c, s in tables.schema.columns.items()})


def _typed_otherwise(before: Any, after: Any) -> dict[str, Any]:
    """``{"typed_otherwise": [...]}``: the columns the release without the dropped rows is typed
    otherwise than the run's tables (a new evaluation of it reads a code shared only through the
    dropped copies as a surrogate identifier: :func:`_without_rows`), each with its sdtype before
    and after and why; ``{}`` when none is (a round says so only then).

    Examples
    --------
    >>> from synthguard.data.schema import ColumnSpec, Schema
    >>> a = Schema({"code": ColumnSpec("code", "numerical"), "x": ColumnSpec("x", "categorical")})
    >>> b = Schema({"code": ColumnSpec("code", "id", reason="unique"), "x": ColumnSpec("x", "categorical")})
    >>> _typed_otherwise(a, b)
    {'typed_otherwise': [{'column': 'code', 'sdtype_before': 'numerical', 'sdtype_after': 'id', 'reason': 'unique'}]}
    >>> _typed_otherwise(a, a)
    {}
    """
    changed = [{"column": c, "sdtype_before": before.columns[c].sdtype, "sdtype_after": s.sdtype,
                "reason": s.reason} for c, s in after.columns.items()
               if c in before.columns and s.sdtype != before.columns[c].sdtype]
    return {"typed_otherwise": changed} if changed else {}


def _back(rows: pd.DataFrame, release_pos: np.ndarray, training_pos: np.ndarray | None
          ) -> pd.DataFrame:
    """Rows of :func:`synthguard.run.drops.rows_behind` on reduced tables, with their release and
    training positions those of the full run's tables."""
    out = rows.copy()
    out["release"] = release_pos[out["release"].to_numpy(dtype=np.int64)]
    if training_pos is not None:  # the training rows keep their order (already canonical)
        out["training"] = np.asarray(training_pos)[out["training"].to_numpy(dtype=np.int64)]
    return out


def _taker(take: Any, tables: Any) -> Any:
    """``take(role, positions, columns)`` of ``tables`` from ``take(tables, role, positions,
    columns)`` (``None`` stays ``None``)."""
    return None if take is None else functools.partial(take, tables)


def _to_drop(rows: pd.DataFrame, copies_first: bool = True) -> np.ndarray:
    """The release rows (canonical positions) a round drops: the rows to drop that a test ties as
    copies of their training records when there are any (the surest: a test of neighbours names
    innocent rows beside the leaks, and often stops alarming once the copies are gone), else every
    row to drop."""
    if not len(rows):
        return np.zeros(0, np.int64)
    to_drop = rows["action"].to_numpy() == "drop"
    if copies_first:
        copy = to_drop & rows["copy"].to_numpy(dtype=bool)
        if copy.any():
            to_drop = copy
    return rows["release"].to_numpy(dtype=np.int64)[to_drop]


def _naming(rows: pd.DataFrame, drop: np.ndarray) -> set[str]:
    """Every test tying one of the release rows ``drop``."""
    at = rows["release"].isin(drop).to_numpy()
    return {n.strip() for ts in rows.loc[at, "tests"] for n in str(ts).split(",")}


def _also_dropped(rows: pd.DataFrame, also: Mapping[int, np.ndarray] | None) -> np.ndarray:
    """The release rows of ``also`` (``{cells changed: canonical release positions}``, copies a
    full-table join found beyond the run's own rows) a first round drops: those of as many
    changed cells as a copy the run itself drops (its chance cut let such copies through)."""
    if not also or not len(rows):
        return np.zeros(0, np.int64)
    own = rows["action"].to_numpy() == "drop"
    own &= rows["copy"].to_numpy(dtype=bool)
    cells = set(rows["cells"].to_numpy(dtype=np.int64)[own].tolist())
    parts = [np.asarray(pos, dtype=np.int64) for k, pos in also.items() if k in cells]
    return np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)


def drop_retest(tables: Any, run_config: Any, verdict: Any, results: Mapping[str, Any], *,
                rerun: Any, max_rounds: int = DROP_ROUNDS, without: Any = None, take: Any = None,
                also: Mapping[int, np.ndarray] | None = None
                ) -> tuple[Any, list[dict[str, Any]], dict[str, Any] | None, Any]:
    """List the release rows behind the findings, drop those to drop and re-test, in rounds.

    Parameters
    ----------
    tables : Tables
        The run's tables (canonical order).
    run_config : RunConfig
        The run's configuration; the verdict's tests are run again with their parameters.
    verdict : Verdict
        The run's verdict.
    results : mapping
        The run's results (their evidence names the rows behind each flag).
    rerun : callable
        ``rerun(tables, run_config, kept=None) -> RunOutput``: the run's own runner with the run's
        seed, backend, risk rule and jobs, and no re-test of its own; ``kept``: for each release
        row of ``tables``, its position in the run's release (one process answers searches from
        the run's own: :mod:`synthguard.engine.reuse`).
    max_rounds : int
        Rounds of dropping and re-testing at most (``0``: list the rows, re-test nothing).
    without : callable, optional
        ``without(tables, dropped) -> (tables, release positions, training positions or None)``:
        the tables without the release rows marked in ``dropped``, as a new evaluation of that
        release reads them (default: :func:`_without_rows`, pandas tables of one process; a
        cluster run filters its partitions).
    take : callable, optional
        ``take(tables, role, positions, columns)``: rows of ``tables`` fetched by canonical
        position, for :func:`synthguard.run.drops.rows_behind` (a cluster run fetches only the rows
        behind the pairs); default: read from the tables' frames.
    also : mapping, optional
        ``{cells changed: canonical release positions}``: copies a full-table join found beyond
        what the run's tests see (a sampled run: copies of training records outside the sample,
        :mod:`synthguard.run.sample`). The first round drops those of as many changed cells as a
        copy the run itself drops (its chance cut let such copies through), so the level after is
        that of the release without every row listed to drop; the cost's ``full_table_copies``
        (``{family: rows dropped}``) says how many, and the records export marks those ``drop``.

    Returns
    -------
    (Verdict, list of dict, dict or None, tuple or None)
        The verdict with a :class:`~synthguard.core.report_model.DropRetest` under every risk that
        alarmed; the records export (:data:`synthguard.run.drops.EXPORT_COLUMNS`, input row
        numbers, every round's rows); the cost and the rounds (``None`` when nothing was
        re-tested); and ``(tables, RunOutput)`` of the release without the dropped rows (``None``
        likewise).

    Examples
    --------
    A release of 60 training rows and 40 fresh ones: once the 60 copies are dropped, presence no
    longer reads high; the 40 rows left are too few to rule out a leak of the materiality, so it
    reads inconclusive, not low.

    >>> import numpy as np, pandas as pd, synthguard
    >>> rng = np.random.default_rng(0)
    >>> o, c, f = (pd.DataFrame({"x": rng.normal(size=300), "g": rng.choice(list("abc"), 300)})
    ...            for _ in "ocf")
    >>> rep = synthguard.evaluate(o, pd.concat([o.head(60), f.head(40)]), control=c,
    ...                           metrics=["exact_matches", "near_copies"])
    >>> [(r["risk"], r["level"], r["drop_retest"]["level_after"]) for r in rep.risks()[:1]]
    [('presence', 'high', 'inconclusive')]
    """
    from .drops import ALARM, export_rows, flagged_records, rows_behind

    without = _without_rows if without is None else without
    rows = rows_behind(verdict, results, tables, _taker(take, tables))

    def listed(found: pd.DataFrame, rounds: Any = None) -> list[dict[str, Any]]:
        # then the training records the alarming tests flag without naming release rows
        found, flagged = flagged_records(verdict, results, tables, found)
        return export_rows(found, tables, rounds) + flagged

    alarm = {r["risk"]: r for r in verdict.risks if r.get("level") in ALARM}
    drop = _to_drop(rows)
    extra = np.setdiff1d(_also_dropped(rows, also), drop) if drop.size else np.zeros(0, np.int64)
    # how many of each family's full-table copies the first round drops beyond the run's own rows
    # (list_copies marks a family's copies to drop when it dropped some)
    joined = {FAMILY_OF_CELLS[k]: int(np.isin(np.asarray(v, dtype=np.int64), extra).sum())
              for k, v in (also or {}).items()}
    drop = np.union1d(drop, extra) if extra.size else drop
    if max_rounds <= 0 or not drop.size or not alarm or not tables.has_control \
            or verdict.rule.rule != "calibrated":
        return verdict, listed(rows), None, None
    if np.unique(drop).size >= len(tables.synthetic):  # nothing would be left to re-test
        return verdict, listed(rows), {
            "skipped": NOTHING_LEFT}, None
    names = [t["metric"] for t in verdict.tests]
    sub = _sub_config(run_config, names)
    dropped = np.zeros(len(tables.synthetic), dtype=bool)
    when = np.zeros(len(tables.synthetic), dtype=np.int64)  # the round that dropped a row
    found = [rows.assign(round=1)]
    named = _naming(rows, drop)  # tests that named the dropped rows
    rounds: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    new = rep = None
    review_only: dict[str, int] | None = None  # set when a round found rows to review only
    for r in range(1, int(max_rounds) + 1):
        t1 = time.perf_counter()
        dropped[drop] = True
        when[drop] = r
        new, release_pos, training_pos = without(tables, dropped)
        rep = rerun(new, sub, kept=release_pos)
        high = sorted(t["metric"] for t in rep.verdict.tests if t.get("level") == "high")
        rounds.append({"round": r, "rows_dropped": int(drop.size),
                       "levels_after": {x["risk"]: x.get("level") for x in rep.verdict.risks},
                       "still_high": high, **_typed_otherwise(tables.schema, new.schema),
                       "seconds": round(time.perf_counter() - t1, 4)})
        if r == max_rounds or not (set(high) & (named | _naming(rows, _to_drop(rows, False)))):
            break  # no test that names rows to drop still reads high
        more = _back(rows_behind(rep.verdict, rep.results, new, _taker(take, new)),
                     release_pos, training_pos)
        more = more[~dropped[more["release"].to_numpy(dtype=np.int64)]]
        drop = _to_drop(more)
        if not drop.size:  # the rows the tests still name are to review: no round drops them
            review_only = _rows_per_test(more)
            found.append(more.assign(round=r + 1))  # listed (rows listed before keep their round)
            break
        if int((~dropped).sum()) - np.unique(drop).size < 1:
            break  # nothing would be left to re-test
        named |= _naming(more, drop)
        found.append(more.assign(round=r + 1))
    every = pd.concat(found, ignore_index=True)
    # a row is to drop when a round dropped it (listed with that round); a row a test named to
    # drop that no round needed (its test no longer alarmed once the copies were gone) is a row
    # to review
    pos = every["release"].to_numpy(dtype=np.int64)
    every["action"] = np.where(dropped[pos], "drop", "review")
    every["round"] = np.where(dropped[pos], when[pos], every["round"].to_numpy())
    every = every.assign(_review=every["action"] != "drop").sort_values(
        ["_review", "round"], kind="stable").drop(columns="_review")
    every = every.drop_duplicates("release").reset_index(drop=True)
    export = listed(every, every["round"].to_numpy())
    assert rep is not None
    after = {x["risk"]: x for x in rep.verdict.risks}
    n_dropped = int(dropped.sum())
    risks = []
    for row in verdict.risks:
        if row["risk"] not in alarm:
            risks.append(row)
            continue
        risks.append(row.replace(drop_retest=_drop_entry(
            row, after.get(row["risk"], {}), rep, n_dropped, len(rounds), named, review_only,
            rounds[-1].get("typed_otherwise"))))
    cost = {"rows_dropped": n_dropped, "max_rounds": int(max_rounds), "rounds": rounds,
            **({"full_table_copies": joined} if also is not None else {}),
            "metrics_rerun": names, "seconds": round(time.perf_counter() - t0, 4),
            "cost": retest_cost("rows", len(names), len(rounds), max_rounds)}
    return dataclasses.replace(verdict, risks=tuple(risks)), export, cost, (new, rep)


def _rows_per_test(rows: pd.DataFrame) -> dict[str, int]:
    """How many of ``rows`` (release rows behind the findings) each test ties."""
    names = rows["tests"].astype(str).str.split(",").explode().str.strip()
    return {str(k): int(v) for k, v in names.value_counts(sort=False).items()}


def _drop_entry(before: Mapping[str, Any], after: Mapping[str, Any], rep: Any, n_dropped: int,
                rounds: int, named: set[str], review_only: Mapping[str, int] | None = None,
                typed_otherwise: Any = None) -> DropRetest:
    """What one alarming risk reads after the rows were dropped, and why what remains remains
    (``review_only``: the rows each test still names, when the last round found rows to review
    only; ``typed_otherwise``: the last round's columns typed otherwise, :func:`_typed_otherwise`,
    whose re-test the level after is)."""
    from .drops import COPY_SHARE, row_ties
    from .verdict import RISK_TITLES
    from .wording import drop_retest_text

    risk = before["risk"]
    la = str(after.get("level", "not assessed"))
    tests = [t for t in rep.verdict.tests if t.get("level") in ("high", "medium")
             and (t.get("risk") == risk or risk in (t.get("also") or ()))]
    why: dict[str, str] = {}
    for t in tests:
        res = rep.results.get(t["metric"])
        # the rows its finding names (a test of the release as a whole names them in its ties)
        pairs = getattr(row_ties(getattr(res, "evidence", None)), "pairs", None)
        if pairs is None:
            why[t["metric"]] = still_alarming("untied")
        elif pairs.action != "drop":
            why[t["metric"]] = still_alarming("review", pairs.tie)
        elif review_only is not None and review_only.get(t["metric"]):
            why[t["metric"]] = still_alarming("chance", rounds=rounds, rows=review_only[t["metric"]],
                                              chance=1 - COPY_SHARE)
        elif t["metric"] in named:
            why[t["metric"]] = still_alarming("rounds", rounds=rounds)
        else:
            why[t["metric"]] = still_alarming("later")
    typed = tuple(dict(c) for c in typed_otherwise or ())
    text = drop_retest_text(RISK_TITLES[risk][0], str(before["level"]), la, n_dropped, rounds,
                            after.get("effect"), after.get("effect_ci"), why, typed)
    return DropRetest(rows_dropped=n_dropped, rounds=rounds, level_before=str(before["level"]),
                      level_after=la, effect_before=before.get("effect"),
                      effect_after=after.get("effect"), effect_ci_after=after.get("effect_ci"),
                      metric_after=after.get("metric"), remaining=tuple(why), why=why, text=text,
                      **({"typed_otherwise": typed} if typed else {}))
