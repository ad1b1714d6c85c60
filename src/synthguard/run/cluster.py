"""The run of :func:`synthguard.evaluate` on a Dask cluster (``client=``): partitioned tables, the
metrics whose card says ``backend="any"`` over partitions (the same numbers as in one process), the
others reported ``skipped`` with the reason; the same executor, loop and header as in one process
(:mod:`.loop`). The only module of ``run/`` that imports :mod:`synthguard.distributed`."""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Any

import numpy as np

from ..core.results import MetricResult
from ..errors import MetricError, MetricUnavailable
from ..registry import Context, get_metric
from .config import RunConfig
from .executor import Entry, RunOutput, build_report, execute
from .loop import check_run_config, run_all, run_header
from .options import ENTITY_OPTIONS, EvaluateOptions
from .sample import dropped_with_copies, list_copies, runs_near_copies, with_release_queries
from .verdict import risk_rule_of, with_sample

__all__ = ["CLUSTER_KEPT_BYTES", "CLUSTER_REFUSES", "cancelled_on_cluster", "distributed_metrics",
           "full_table_copies", "not_distributed", "refuse_on_cluster", "run_on_cluster",
           "run_tables_on_cluster", "sample_on_cluster", "stop_on_lost_worker", "worker_ids"]

#: The most bytes of results a cluster run keeps on the driver for its drop-and-retest (the real
#: records' arrays, :func:`synthguard.engine.reuse.real_memo`, and the release rows' pairs), and
#: as many of its neighbour searches' answers: past it a result is not kept, and the re-test asks
#: it of the cluster again (at 10M real records an unsampled run's canonical orders, shares and
#: crowds came to about 1 GB)
CLUSTER_KEPT_BYTES = 256 * 2**20

_ONE_ROW_PER_PERSON = "entity-level runs (one row per person) run in one process"
#: The options a run on a cluster cannot honour, with why (every other option is honoured).
CLUSTER_REFUSES: dict[str, str] = {
    "original_stats": "the original's statistics stand in for rows of one process",
    **{k: _ONE_ROW_PER_PERSON for k in ENTITY_OPTIONS},
    "generator": "generator-in-the-loop metrics run in one process",
    "cache": "cached results are keyed by the inputs' content hashes, which a partitioned run does "
             "not compute",
    "jobs": "metrics run one at a time on a cluster (the cluster parallelises each one): leave jobs "
            "unset or 1",
}


def refuse_on_cluster(options: EvaluateOptions) -> None:
    """Before any work: one line naming the extra to install when Dask is missing, or the first
    option a run on a cluster cannot honour (:data:`CLUSTER_REFUSES`), with why; nothing when every
    option can be honoured (``retest_rows=0`` and ``jobs=1`` can, and so can ``max_records``:
    :func:`sample_on_cluster`)."""
    from ..distributed import require_dask

    require_dask("evaluate(client=...)")
    if options.retest_rows == 0:
        options = options.replace(retest_rows=None)
    options.refuse("evaluate(client=...)",
                   {k: f"{why}; run without client= for it" for k, why in CLUSTER_REFUSES.items()})


def sample_on_cluster(dt: Any, max_records: int | None, seed: int, *, near: bool = False,
                      retest: bool = True
                      ) -> tuple[Any, dict[str, Any] | None, dict[str, dict[str, np.ndarray]] | None]:
    """:func:`synthguard.run.sample.sample_tables` on partitioned tables ``dt``: above
    ``max_records`` training or control records, the tables with those cut to the seeded sample
    one process draws (:func:`~synthguard.run.sample.sample_positions` from the rows alone, in
    canonical order), filtered on the cluster (:func:`~synthguard.distributed._tables.without_rows`,
    the input row numbers kept: the report names the records as the user gave them; the release
    whole), the header's ``sample`` entry and the full-table copies of the whole tables
    (:func:`full_table_copies`, before the whole tables are let go); ``dt, None, None`` when
    nothing is sampled.

    Parameters
    ----------
    dt : DistTables
        The loaded, canonicalised tables.
    max_records : int or None
        The run's ``max_records`` (:func:`~synthguard.run.sample.resolve_max_records`).
    seed : int
        The run's seed.
    near : bool
        Whether the run tests copies with one cell changed
        (:func:`~synthguard.run.sample.runs_near_copies`): their full-table join too.
    retest : bool
        Whether the run can re-test its release without some rows: the whole tables' columns
        that could read as an identifier are kept for that re-test's typing
        (``DistTables.whole_columns``); without, none is looked for.

    Returns
    -------
    tuple
        The tables the run tests, the header's ``sample`` entry and the full-table copies (as
        :func:`~synthguard.run.sample.sample_tables` returns them).
    """
    from ..distributed._tables import whole_identifier_columns, without_rows
    from .sample import resolve_max_records, sample_header, sample_positions

    limit = resolve_max_records(max_records)
    drawn = sample_positions({r: dt.get(r).n_rows for r in ("original", "control") if r in dt.roles},
                             limit, seed)
    if drawn is None:
        return dt, None, None
    at = drawn["original"][1]
    copies = full_table_copies(dt, at, near=near)
    info: dict[str, Any] = {}
    sampled = dt
    for role, (n, keep) in drawn.items():
        if keep is None:
            info[role] = {"rows": n, "of": n}
            continue
        dropped = np.ones(n, dtype=bool)
        dropped[keep] = False
        sampled, _ = without_rows(sampled, dropped, role, input_numbers=True)
        info[role] = {"rows": int(limit), "of": int(n)}
    # the header names the inputs as given (one process's too: its sample under "sample")
    sampled.fingerprints = dict(dt.fingerprints)
    # the whole tables' columns that could read as an identifier, for the re-test's typing (the
    # rest of the whole tables let go)
    sampled.whole, sampled.whole_columns = whole_identifier_columns(
        dt, [r for r, (_, keep) in drawn.items() if keep is not None]) if retest else ({}, ())
    return sampled, sample_header(info, seed, limit, copies), copies


def full_table_copies(dt: Any, sampled: np.ndarray | None, *, near: bool = False
                      ) -> dict[str, dict[str, np.ndarray]]:
    """The full-table joins of a sampled run on partitioned tables ``dt`` (the whole tables), as
    :func:`synthguard.run.sample.exact_copies` and (``near``)
    :func:`~synthguard.run.sample.near_copies_of` find them in one process: ``"exact"``, every
    release row equal to a training row on the compared columns (the backend's row identities,
    :func:`~synthguard.distributed._backend.first_positions`: one group-by; the training row named
    is the first sampled one it equals, else the first of all, in canonical order), and
    ``"near1"``, every release row that differs in one compared cell from a training row that is
    the only real record within one cell of it (the near-copy test's own join on the backend,
    :func:`~synthguard.metrics.privacy._copies.backend_matches`, the release rows as queries; a
    verbatim copy is an exact one). ``sampled``: the canonical positions of the sampled training
    rows (``None``: all). Each family's arrays as :func:`~synthguard.run.sample.exact_copies`
    returns them (input row numbers, ``outside``, ``release_at``).
    """
    from ..distributed import cluster_backend
    from ..distributed._backend import first_positions
    from ..metrics.privacy._copies import backend_matches
    from ..metrics.privacy.matching import compared_columns, first_copies
    from .sample import _found, _in_sample

    none = np.zeros(0, dtype=np.int64)
    n_o = dt.get("original").n_rows
    in_sample = _in_sample(n_o, sampled)
    cols = compared_columns(dt.schema)
    if not cols:
        empty = _found(dt, none.copy(), none.copy(), in_sample)
        return {"exact": empty, **({"near1": _found(dt, none.copy(), none.copy(), in_sample)}
                                   if near else {})}
    # the exact-copy test's own join (first_copies) on the cluster's row identities: the first
    # pooled position of each content, equal for equal rows in every role
    release, training = first_copies(dt, in_sample,
                                     ids=first_positions(dt, cols, ("original", "synthetic")))
    copies = {"exact": _found(dt, release.copy(), training, in_sample)}
    if near:
        if dt.control is None:
            copies["near1"] = _found(dt, none.copy(), none.copy(), in_sample)
        else:
            # the release's keys joined on the workers, its rows never taken whole to the driver
            # (only the candidates the cell check reads): at 10M rows taking them held past 3 GB
            # a worker until gathered
            data = cluster_backend(dt)
            q, r = backend_matches(data, [None], cols, 1, rows_of=[("synthetic", None)])[0]
            keep = (r < n_o) & ~np.isin(q, release)  # a training record; not a verbatim copy
            copies["near1"] = _found(dt, q[keep].astype(np.int64), r[keep].astype(np.int64),
                                     in_sample)
    return copies


def cancelled_on_cluster(entry: Entry) -> bool:
    """Whether a test failed because the cluster gave up its tasks: a worker killed by them
    (``KilledWorker``), or tasks cancelled because the data they read was gone when they were
    submitted (``FutureCancelledError``, "lost dependencies": the partitions of a lost worker, or a
    key the scheduler had just forgotten as a client released it).

    Examples
    --------
    >>> from synthguard.run.executor import Entry
    >>> cancelled_on_cluster(Entry(name="ims", metric="ims", params={}, status="ok"))
    False
    """
    err = entry.error
    return entry.status == "error" and (type(err).__name__ == "KilledWorker" or (
        type(err).__name__ == "FutureCancelledError" and "lost dependencies" in str(err)))


def worker_ids(client: Any) -> frozenset[str]:
    """The addresses of the cluster's workers now (a worker restarted by its nanny comes back under
    another address)."""
    from ..distributed import cluster_workers

    return frozenset(cluster_workers(client))


def stop_on_lost_worker(entry: Entry, lost: bool = True) -> None:
    """Stop the run when a test failed because the cluster gave up its tasks
    (:func:`cancelled_on_cluster`). ``lost``: a worker of the run's start has left (a worker past
    95 % of its memory limit is restarted by its nanny; a task that kills its workers again is
    given up): the tables' partitions it held are gone, so every later test would fail too and the
    verdict would stand on the tests before it. Otherwise the tasks were cancelled with every
    worker in place, twice (:func:`run_tables_on_cluster` runs such a test a second time first).
    One line naming the test and what to do (:class:`~synthguard.errors.SynthguardError`); nothing
    for any other outcome.

    Examples
    --------
    >>> from synthguard.run.executor import Entry
    >>> stop_on_lost_worker(Entry(name="ims", metric="ims", params={}, status="ok"))
    """
    from ..errors import SynthguardError

    if not cancelled_on_cluster(entry):
        return
    if lost:
        raise SynthguardError(
            f"{entry.name}: the cluster lost a worker during this test (a worker past its memory "
            "limit is restarted, and the tables' partitions it held are gone): rerun with more "
            "memory per worker (dask worker --memory-limit, --worker-memory with --workers) or "
            "more workers; see docs/scaling.md") from entry.error
    raise SynthguardError(
        f"{entry.name}: the cluster cancelled this test's tasks twice with every worker in place "
        f"({entry.error}): the scheduler no longer held data they read; rerun, and if it recurs "
        "report it with the dask and distributed versions") from entry.error


def distributed_metrics() -> list[str]:
    """The metrics that run on the Dask backend (their card says ``backend="any"``)."""
    from ..registry import metric_infos

    return [i.name for i in metric_infos() if i.backend == "any"]


#: the parameters of a one-process test that name its key (quasi-identifier) columns
_KEY_PARAMS = ("key_fields", "known_column_names", "quasi_identifiers")


def not_distributed(ctx: Any, **params: Any) -> MetricResult:
    """Stands in for the function of a metric whose card says ``backend="local"`` in a distributed
    run: the run's executor reports it ``skipped`` with this reason.

    A test the data leave nothing to test with (a text test without a text column, a key test
    without key columns) says so first, as it would in one process (:class:`MetricError`: not
    named under its risk); any other is unavailable here (:class:`MetricUnavailable`: named under
    its risk as a test that did not run)."""
    from ..metrics.text._common import text_columns

    spec = get_metric(ctx.metric) if ctx.metric else None
    if spec is not None and spec.family == "text":
        text_columns(ctx, params.get("columns"), spec.name)  # MetricError: no text column
    keyed = [k for k in _KEY_PARAMS if k in params]
    if keyed and all(params[k] is None for k in keyed) and not ctx.tables.schema.quasi_identifiers:
        raise MetricError(f"no key columns: set the parameter {keyed[0]!r} or declare "
                          "'quasi_identifiers' in the metadata")
    raise MetricUnavailable("not available in a distributed run: it runs in one process only (synthguard "
                            "evaluate without --scheduler/--workers); distributed metrics: "
                            f"{', '.join(distributed_metrics())}")


def run_on_cluster(original: Any, synthetic: Any, control: Any, metadata: Any,
                   run_config: RunConfig, options: EvaluateOptions, *,
                   npartitions: int = 4) -> RunOutput:
    """Run a validated configuration on the Dask cluster of ``options.client``.

    ``original``, ``synthetic``, ``control``: Parquet file / folder / glob (or CSV), dask or pandas
    DataFrames (pandas ones are split into ``npartitions``). ``options`` are checked first
    (:func:`refuse_on_cluster`); ``options.seed`` must be resolved (:meth:`EvaluateOptions.with_config`).
    """
    from ..distributed import cluster_backend
    from ..distributed._tables import load_tables
    from ..engine.reuse import derive_searches, forget_searches, keep_searches
    from .advice import advice_budget, planned_retests
    from .plan import plan_for_run, stage

    refuse_on_cluster(options)
    run_config = check_run_config(run_config)
    client = options.client
    with stage("reading inputs", options.progress):
        dt = load_tables(original, synthetic, control, metadata, client=client,
                         npartitions=npartitions)
    # above max_records training or control records, the seeded sample one process draws (the
    # full-table copy joins run first, on the whole tables)
    dt, sample, copies = sample_on_cluster(dt, options.max_records, int(options.seed or 0),
                                           near=runs_near_copies(run_config),
                                           retest=advice_budget(options)[0] > 0)
    release_queries = int(sample["max_records"]) if sample is not None else 0
    rule = risk_rule_of(run_config, dt, options.risk_overrides())
    if options.on_plan is not None:
        # the advice's re-tests (drop rounds, coarsened columns) run on the cluster too
        options.on_plan(plan_for_run(dt, run_config, skipped={
            n: "not available in a distributed run" for n in run_config.metrics
            if get_metric(run_config.metric_of(n)).backend != "any"}, sample=sample,
            retests=planned_retests(dt, run_config, options, rule, None)))
    dt.release_type = rule.release_type
    data = cluster_backend(dt, options.backend)
    run_key = data.reuse_key  # the run's, without its backend (let go after the run)
    if advice_budget(options)[0] and planned_retests(dt, run_config, options, rule, None):
        # what the drop-and-retest can read of the run: the results of the training and control
        # records alone, the release's near-copy pairs, copy crowds and structures (engine.reuse)
        keep_searches(run_key, real_bytes=CLUSTER_KEPT_BYTES, trees=False)
    out = run_tables_on_cluster(dt, run_config, options, sample=sample,
                                release_queries=release_queries, data=data)
    del data  # its held partitions and query tables go back to the workers
    # the advice on the driver over the per-record flags and pairs: the release rows behind the
    # findings listed (only they are fetched), dropped on the cluster and the tests run again; then
    # the driving columns coarsened on the cluster (edges and categories asked of the backend) and
    # the tests run again
    from ..distributed._backend import fetch_rows
    from ..distributed._coarsen import cluster_values
    from ..distributed._tables import kept_columns_alike, without_rows_retyped
    from .advice import advise

    def without(tables: Any, dropped: Any) -> tuple[Any, Any, Any]:
        # the release without the rows, its identifiers decided again as one process decides them
        return without_rows_retyped(tables, dropped)

    def rerun(new: Any, sub: RunConfig, again: EvaluateOptions, kept: Any = None) -> RunOutput:
        # ``kept``: the kept release rows' positions in the run (a drop round; None: a coarsened
        # column, after every drop round: nothing more to read of the run). The neighbour
        # searches run again; what the run kept is read where the tables say it is unchanged
        # (kept_columns_alike). The release-query sample's size as the run's
        if kept is None:
            forget_searches(run_key)
        view = cluster_backend(new, options.backend)
        if kept is not None:
            derive_searches(view.reuse_key, run_key, kept, column_same=kept_columns_alike(dt, new))
        return run_tables_on_cluster(new, sub, again, release_queries=release_queries, retest=True,
                                     data=view)

    out = advise(out, dt, run_config, options, rerun=rerun, without=without, take=fetch_rows,
                 values=cluster_values, also=dropped_with_copies(copies))
    forget_searches(run_key)
    return out if copies is None else list_copies(out, copies, run_config.metric_of, run_config.metrics)


def run_tables_on_cluster(dt: Any, run_config: RunConfig, options: EvaluateOptions, *,
                          sample: dict[str, Any] | None = None,
                          release_queries: int = 0, retest: bool = False, data: Any = None
                          ) -> RunOutput:
    """Run a validated configuration on partitioned tables ``dt``
    (:class:`~synthguard.distributed._tables.DistTables`) on their cluster: the metrics whose card
    says ``backend="any"`` through the Dask backend, the others skipped with the reason; the
    report without the advice (:func:`run_on_cluster` adds it, re-running the tests through this
    function on the release without the rows to drop and on tables with a column coarsened).

    Parameters
    ----------
    dt : DistTables
        The loaded, canonicalised tables.
    run_config : RunConfig
        A validated configuration.
    options : EvaluateOptions
        The run's options (``options.seed`` resolved).
    sample : dict, optional
        ``dt`` holds a seeded sample of the training and control records
        (:func:`sample_on_cluster`): the header states it and the verdict says so.
    release_queries : int
        Above how many release rows the tests whose queries are release rows ask of a seeded
        sample of them (:attr:`~synthguard.registry.Context.release_queries`; ``0``: never): a
        sampled run's ``max_records``, passed on to its re-tests.
    retest : bool
        The run is a re-test of the advice, its verdict read for levels
        (:func:`synthguard.run.verdict.assess` ``levels_only``).
    data : DaskBackend, optional
        The backend the tests run through (``cluster_backend(dt, options.backend)`` unless
        given: :func:`run_on_cluster` keeps or derives what a re-test reads of the run under its
        ``reuse_key`` before the run).

    Returns
    -------
    RunOutput
        Header, entries, results and verdict.
    """
    from ..distributed import cluster_backend, cluster_workers
    from ..distributed._memory import release_freed

    client, seed = dt.client, int(options.seed or 0)
    workers = worker_ids(client)  # a test that loses one of them stops the run
    rule = risk_rule_of(run_config, dt, options.risk_overrides())
    # one context for the run, whose backend is the cluster: the metrics run their own code
    names = list(run_config.metrics)
    ctx = Context(tables=dt, encoded=None, seed=seed, backend=options.backend,  # type: ignore[arg-type]
                  release_type=rule.release_type, materiality=rule.materiality,
                  release_queries=release_queries,
                  data_backend=data if data is not None else cluster_backend(dt, options.backend)
                  ).for_run(run_config.metric_ids(names))

    def one(name: str) -> Entry:
        metric = run_config.metric_of(name)
        spec = get_metric(metric)
        if spec.backend != "any":  # skipped with the reason (after any missing input)
            spec = replace(spec, func=not_distributed)
        thresholds = run_config.thresholds.get(name, run_config.thresholds.get(metric))
        entry = execute(spec, ctx, run_config.metrics[name], name=name, thresholds=thresholds)
        if cancelled_on_cluster(entry) and not workers - worker_ids(client):
            # every worker is in place: the scheduler forgot a key a task read as a client released
            # it (a race of dask's); the test runs once more on the same tables, said aloud
            warnings.warn(f"{name}: the cluster cancelled this test's tasks ({entry.error}) with "
                          "every worker in place; running it a second time", RuntimeWarning,
                          stacklevel=2)
            entry = execute(spec, ctx, run_config.metrics[name], name=name, thresholds=thresholds)
        stop_on_lost_worker(entry, lost=bool(workers - worker_ids(client)))
        release_freed()  # the test's gathered arrays are garbage now: their pages back to the system
        return entry

    done = run_all(names, one, run_config, ctx, jobs=1, progress=options.progress,
                   on_progress=options.on_progress)
    if sample is not None:
        sample = with_release_queries(sample, release_queries, dt,
                                      [run_config.metric_of(n) for n in names])
    header = run_header(
        seed, run_config,
        inputs={role: dict(dt.fingerprints.get(role, {}), source=dt.get(role).label)
                for role in dt.roles},
        inferred=dt.inferred_metadata(), warnings=list(dt.warnings), schema=dt.schema.to_dict(),
        extra={"distributed": {"scheduler": getattr(client, "scheduler", None)
                               and client.scheduler.address,
                               "workers": len(cluster_workers(client))},
               **({"sample": sample} if sample is not None else {})})
    out = build_report(header, done, rule, tables=dt, has_control=dt.has_control, seed=seed,
                       metrics={n: run_config.metric_of(n) for n in names},
                       unavailable=run_config.unavailable, levels_only=retest)
    if sample is not None:
        out = replace(out, verdict=with_sample(out.verdict, sample))
    return out
