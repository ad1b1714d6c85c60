"""The run of :func:`synthguard.evaluate` on a Dask cluster (``client=``): partitioned tables, the
metrics whose card says ``backend="any"`` over partitions (the same numbers as in one process), the
others reported ``skipped`` with the reason; the same executor, loop and header as in one process
(:mod:`.loop`). The only module of ``run/`` that imports :mod:`synthguard.distributed`."""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Any

from ..core.results import MetricResult
from ..errors import ConfigError, MetricError, MetricUnavailable
from ..registry import Context, get_metric
from .config import RunConfig
from .executor import Entry, RunOutput, build_report, execute
from .loop import check_run_config, run_all, run_header
from .options import ENTITY_OPTIONS, EvaluateOptions
from .verdict import risk_rule_of

__all__ = ["CLUSTER_REFUSES", "cancelled_on_cluster", "distributed_metrics", "not_distributed", "refuse_on_cluster",
           "refuse_sample", "run_on_cluster", "run_tables_on_cluster", "stop_on_lost_worker",
           "worker_ids"]

_ONE_ROW_PER_PERSON = "entity-level runs (one row per person) run in one process"
#: The options a run on a cluster cannot honour, with why (every other option is honoured).
CLUSTER_REFUSES: dict[str, str] = {
    "original_stats": "the original's statistics stand in for rows of one process",
    **{k: _ONE_ROW_PER_PERSON for k in ENTITY_OPTIONS},
    "generator": "generator-in-the-loop metrics run in one process",
    "cache": "cached results are keyed by the inputs' content hashes, which a partitioned run does "
             "not compute",
    "max_records": "a cluster run tests every record (sampled queries run in one process): leave it "
                   "unset, or set it to at least the training and control rows",
    "jobs": "metrics run one at a time on a cluster (the cluster parallelises each one): leave jobs "
            "unset or 1",
}


def refuse_on_cluster(options: EvaluateOptions) -> None:
    """Before any work: one line naming the extra to install when Dask is missing, or the first
    option a run on a cluster cannot honour (:data:`CLUSTER_REFUSES`), with why; nothing when every
    option can be honoured (``retest_rows=0`` and ``jobs=1`` can; ``max_records`` is checked on
    the loaded tables' rows, :func:`refuse_sample`)."""
    from ..distributed import require_dask

    require_dask("evaluate(client=...)")
    if options.retest_rows == 0:
        options = options.replace(retest_rows=None)
    if options.max_records is not None:  # checked on the tables' rows: refuse_sample
        options = options.replace(max_records=None)
    options.refuse("evaluate(client=...)",
                   {k: f"{why}; run without client= for it" for k, why in CLUSTER_REFUSES.items()})


def refuse_sample(options: EvaluateOptions, rows: dict[str, int]) -> None:
    """Once the tables are loaded (``rows``: role -> rows): a ``max_records`` that would sample
    (more training or control rows than it, :func:`synthguard.run.sample.draw_sample`) is refused
    in one line naming the table; one that would not (``0``, or at least the rows of both) leaves a
    one-process run unchanged, and so the cluster's.

    Examples
    --------
    >>> refuse_sample(EvaluateOptions(max_records=200_000), {"original": 100_000, "control": 25_000})
    >>> refuse_sample(EvaluateOptions(max_records=200_000), {"original": 300_000, "synthetic": 10})
    Traceback (most recent call last):
    ...
    synthguard.errors.ConfigError: evaluate(client=...) cannot take max_records=200000: the original table holds 300,000 rows; a cluster run tests every record (sampled queries run in one process): leave it unset, or set it to at least the training and control rows
    """
    from .sample import resolve_max_records

    limit = resolve_max_records(options.max_records)
    over = [r for r in ("original", "control") if limit and rows.get(r, 0) > limit]
    if over:
        raise ConfigError(f"evaluate(client=...) cannot take max_records={limit}: the {over[0]} table "
                          f"holds {rows[over[0]]:,} rows; {CLUSTER_REFUSES['max_records']}")


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
    return frozenset(client.scheduler_info().get("workers", {}))


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
    from ..distributed._tables import load_tables
    from .plan import plan_for_run, stage

    refuse_on_cluster(options)
    run_config = check_run_config(run_config)
    client = options.client
    with stage("reading inputs", options.progress):
        dt = load_tables(original, synthetic, control, metadata, client=client,
                         npartitions=npartitions)
    refuse_sample(options, {r: dt.get(r).n_rows for r in dt.roles})
    rule = risk_rule_of(run_config, dt, options.risk_overrides())
    if options.on_plan is not None:
        from .advice import planned_retests

        # the advice's re-tests (drop rounds, coarsened columns) run on the cluster too
        options.on_plan(plan_for_run(dt, run_config, skipped={
            n: "not available in a distributed run" for n in run_config.metrics
            if get_metric(run_config.metric_of(n)).backend != "any"},
            retests=planned_retests(dt, run_config, options, rule, None)))
    dt.release_type = rule.release_type
    out = run_tables_on_cluster(dt, run_config, options)
    # the advice on the driver over the per-record flags and pairs: the release rows behind the
    # findings listed (only they are fetched), dropped on the cluster and the tests run again; then
    # the driving columns coarsened on the cluster (edges and categories asked of the backend) and
    # the tests run again
    from ..distributed._backend import fetch_rows
    from ..distributed._coarsen import cluster_values
    from ..distributed._tables import without_rows
    from .advice import advise

    def without(tables: Any, dropped: Any) -> tuple[Any, Any, None]:
        new, release_pos = without_rows(tables, dropped)
        return new, release_pos, None  # the training table is the same

    return advise(out, dt, run_config, options, rerun=_rerun_on_cluster, without=without,
                  take=fetch_rows, values=cluster_values)


def _rerun_on_cluster(dt: Any, run_config: RunConfig, options: EvaluateOptions, *,
                      kept: Any = None) -> RunOutput:
    """The advice's re-run on a cluster: every search again (``kept``, the kept release rows'
    positions, is for one process's reuse of its searches: :mod:`synthguard.engine.reuse`)."""
    return run_tables_on_cluster(dt, run_config, options)


def run_tables_on_cluster(dt: Any, run_config: RunConfig, options: EvaluateOptions) -> RunOutput:
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

    Returns
    -------
    RunOutput
        Header, entries, results and verdict.
    """
    from ..distributed import cluster_backend
    from ..distributed._memory import release_freed

    client, seed = dt.client, int(options.seed or 0)
    workers = worker_ids(client)  # a test that loses one of them stops the run
    rule = risk_rule_of(run_config, dt, options.risk_overrides())
    # one context for the run, whose backend is the cluster: the metrics run their own code
    names = list(run_config.metrics)
    ctx = Context(tables=dt, encoded=None, seed=seed, backend=options.backend,  # type: ignore[arg-type]
                  release_type=rule.release_type, materiality=rule.materiality,
                  data_backend=cluster_backend(dt, options.backend)).for_run(run_config.metric_ids(names))

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
    info = client.scheduler_info()
    header = run_header(
        seed, run_config,
        inputs={role: dict(dt.fingerprints.get(role, {}), source=dt.get(role).label)
                for role in dt.roles},
        inferred=dt.schema.inferred(), schema=dt.schema.to_dict(),
        extra={"distributed": {"scheduler": getattr(client, "scheduler", None)
                               and client.scheduler.address,
                               "workers": len(info.get("workers", {}))}})
    return build_report(header, done, rule, tables=dt, has_control=dt.has_control, seed=seed,
                        metrics={n: run_config.metric_of(n) for n in names},
                        unavailable=run_config.unavailable)
