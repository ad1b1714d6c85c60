"""The run behind :func:`synthguard.evaluate`: load and validate the inputs, run the chosen metrics
through the one executor (:mod:`synthguard.run.executor`), in one process or on a Dask cluster, and
return the report's data (:class:`~synthguard.run.executor.RunOutput`; :mod:`synthguard.api` makes the
:class:`~synthguard.report.Report` of it)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .._version import __version__
from ..core.results import MetricResult
from ..data.encoding import EncodedView
from ..data.tables import Tables, prepare_tables
from ..engine.memory import release_free_memory
from ..engine.parallel import resolve_jobs
from ..errors import ConfigError, InputError, MetricError
from ..registry import Context, get_metric, metric_info
from .config import RunConfig, build_config, validate_seed
from .executor import Entry, RunOutput, build_report, execute
from .verdict import risk_rule_of

# families whose metrics run one at a time after the others: spaCy may fork worker processes
# (n_process), which must not happen while other threads run
SERIAL_FAMILIES = frozenset({"text"})
#: columns the coarsen-and-retest re-tests by default (in one process; see :mod:`.actions`)
RETEST_COLUMNS = 2

__all__ = ["SERIAL_FAMILIES", "run_evaluation", "run_tables", "risk_rule_of"]


def run_evaluation(original: Any = None, synthetic: Any = None, control: Any = None,
                   metadata: Any = None, metrics: Any = None,
                   config: Mapping[str, Any] | str | Path | None = None, seed: int | None = None, *,
                   preset: str | None = None, backend: str = "auto", progress: bool = False,
                   generator: Any = None, cache: Any = None,
                   on_progress: Callable[[str, int, int], Any] | None = None,
                   original_stats: Any = None, risk_rule: str | None = None,
                   materiality: float | None = None, release_type: str | None = None,
                   alpha: float | None = None, entity_key: str | None = None,
                   sequence_key: str | None = None, original_context: Any = None,
                   synthetic_context: Any = None, control_context: Any = None, client: Any = None,
                   jobs: int | None = None, retest_columns: int | None = None,
                   on_plan: Callable[[Any], Any] | None = None) -> RunOutput:
    """The run of :func:`synthguard.evaluate` (same parameters), as plain data. ``on_plan`` is
    called with the run's :class:`~synthguard.run.plan.Plan` once the inputs are read, before any
    metric runs (``--dry-run`` stops there by raising :class:`~synthguard.run.plan.PlanOnly`).

    Returns
    -------
    RunOutput
        Header, entries, results and verdict.
    """
    from ..engine.cache import as_cache

    seed = validate_seed(seed)
    if client is not None:
        from ..distributed import require_dask

        require_dask("evaluate(client=...)")
        _refuse_on_cluster(original_stats=original_stats, entity_key=entity_key,
                           sequence_key=sequence_key, original_context=original_context,
                           synthetic_context=synthetic_context, control_context=control_context,
                           generator=generator, jobs=jobs,
                           retest_columns=retest_columns or None,
                           cache=None if cache is False else cache)
    run_config = build_config(metrics, config, preset)
    paths = dict(run_config.data)
    if original is None and original_stats is None:
        original = paths.get("original")
    synthetic = synthetic if synthetic is not None else paths.get("synthetic")
    control = control if control is not None else paths.get("control")
    metadata = metadata if metadata is not None else paths.get("metadata")
    if synthetic is None:
        raise InputError("evaluate: no synthetic table: pass it, or name it under 'data:' in the "
                         "config")
    if seed is None:
        seed = run_config.seed if run_config.seed is not None else 0
    disk = as_cache(cache)
    overrides = {"rule": risk_rule, "materiality": materiality, "release_type": release_type,
                 "alpha": alpha}
    risk_rule_of(run_config, None, overrides)  # validate before any work
    if client is not None:
        return run_on_cluster(original, synthetic, control, metadata, run_config, client=client,
                              seed=seed, backend=backend, progress=progress,
                              risk=overrides, on_progress=on_progress, on_plan=on_plan)

    if original_stats is not None:
        if original is not None:
            raise ConfigError("give the original rows or their statistics (original_stats), not both")
        from .profile import tables_from_stats

        tables = tables_from_stats(original_stats, synthetic, control, metadata)
    else:
        if original is None:
            raise ConfigError("no original: give the original rows, or their statistics with "
                              "original_stats= ('synthguard profile' writes them)")
        from ..data.entities import wants_entities

        if wants_entities(original, metadata, entity_key, sequence_key, original_context):
            from ..data.entities import build_entity_run, prepare_entities
            from .config import add_entity_metrics

            data = prepare_entities(original, synthetic, control, metadata, entity_key=entity_key,
                                    sequence_key=sequence_key, original_context=original_context,
                                    synthetic_context=synthetic_context,
                                    control_context=control_context)
            run = build_entity_run(data)
            if metrics is None:
                run_config = add_entity_metrics(run_config)
            return run_tables(run.rows, run_config, seed=seed, backend=backend, progress=progress,
                              generator=generator, cache=disk, risk=overrides,
                              on_progress=on_progress, entities=run, jobs=jobs, on_plan=on_plan)
        from .plan import stage

        with stage("reading inputs", progress):
            tables = prepare_tables(original, synthetic, control, metadata, canonical_columns=True)
    # reordered here rather than in run_tables, so that the input-order copies (our private copies,
    # not the caller's data) are freed before any metric runs: about 0.3 GB at 1 M rows
    tables = tables.in_canonical_order()
    release_free_memory()
    return run_tables(tables, run_config, seed=seed, backend=backend, progress=progress,
                      generator=generator, cache=disk, risk=overrides, on_progress=on_progress,
                      jobs=jobs, canonical=True, on_plan=on_plan,
                      retest_columns=RETEST_COLUMNS if retest_columns is None else retest_columns)




def _refuse_on_cluster(**given: Any) -> None:
    """One line naming the first argument a Dask run cannot honour (``None`` = not given)."""
    why = {"original_stats": "the original's statistics stand in for rows of one process",
           "entity_key": "entity-level runs (one row per person) run in one process",
           "sequence_key": "entity-level runs (one row per person) run in one process",
           "original_context": "entity-level runs (one row per person) run in one process",
           "synthetic_context": "entity-level runs (one row per person) run in one process",
           "control_context": "entity-level runs (one row per person) run in one process",
           "generator": "generator-in-the-loop metrics run in one process",
           "cache": "cached results are keyed by the inputs' content hashes, which a partitioned "
                    "run does not compute",
           "retest_columns": "the coarsen-and-retest re-runs tests on pandas tables of one process: "
                             "leave it unset or 0",
           "jobs": "metrics run one at a time on a cluster (the cluster parallelises each one): "
                   "leave jobs unset or 1"}
    for arg, val in given.items():
        if val is None or (arg == "jobs" and val == 1):
            continue
        raise ConfigError(f"evaluate(client=...) cannot take {arg}=: {why[arg]}; run without "
                          "client= for it")


def distributed_metrics() -> list[str]:
    """The metrics that run on the Dask backend (their card says ``backend="any"``)."""
    from ..registry import metric_infos

    return [i.name for i in metric_infos() if i.backend == "any"]


def not_distributed(ctx: Any, **params: Any) -> MetricResult:
    """Stands in for the function of a metric whose card says ``backend="local"`` in a distributed
    run: the run's executor reports it ``skipped`` with this reason."""
    raise MetricError("not available in a distributed run: it runs in one process only (synthguard "
                      "evaluate without --scheduler/--workers); distributed metrics: "
                      f"{', '.join(distributed_metrics())}")


def run_on_cluster(original: Any, synthetic: Any, control: Any, metadata: Any,
                   run_config: RunConfig, *, client: Any, seed: int = 0, backend: str = "auto",
                   progress: bool = False, risk: Mapping[str, Any] | None = None,
                   on_progress: Callable[[str, int, int], Any] | None = None,
                   npartitions: int = 4, on_plan: Callable[[Any], Any] | None = None) -> RunOutput:
    """Run a validated configuration on a Dask cluster: partitioned tables, the metrics of
    whose card says ``backend="any"`` over partitions (the same numbers as in one process), the
    others reported ``skipped`` (:func:`not_distributed`); the same executor, loop and report as :func:`run_tables`.

    ``original``, ``synthetic``, ``control``: Parquet file / folder / glob (or CSV), dask or pandas
    DataFrames (pandas ones are split into ``npartitions``).
    """
    from dataclasses import replace

    from ..distributed import cluster_backend
    from ..distributed._tables import load_tables
    from .plan import plan_for_run, stage

    with stage("reading inputs", progress):
        dt = load_tables(original, synthetic, control, metadata, client=client, npartitions=npartitions)
    rule = risk_rule_of(run_config, dt, risk)
    if on_plan is not None:
        on_plan(plan_for_run(dt, run_config, skipped={
            n: "not available in a distributed run" for n in run_config.metrics
            if get_metric(_metric_of(run_config, n)).backend != "any"}))
    dt.release_type = rule.release_type
    # one context for the run, whose backend is the cluster: the metrics run their own code
    names = list(run_config.metrics)
    ctx = Context(tables=dt, encoded=None, seed=seed, backend=backend,  # type: ignore[arg-type]
                  release_type=rule.release_type, materiality=rule.materiality,
                  data_backend=cluster_backend(dt, backend)).for_run(names)

    def one(name: str) -> Entry:
        metric = _metric_of(run_config, name)
        spec = get_metric(metric)
        if spec.backend != "any":  # skipped with the reason (after any missing input)
            spec = replace(spec, func=not_distributed)
        return execute(spec, ctx, run_config.metrics[name], name=name,
                       thresholds=run_config.thresholds.get(name, run_config.thresholds.get(metric)))

    done = _run_all(names, one, run_config, ctx, jobs=1, progress=progress, on_progress=on_progress)
    info = client.scheduler_info()
    header = {
        "synthguard_version": __version__,
        "seed": seed,
        "inputs": {role: dict(dt.fingerprints.get(role, {}), source=dt.get(role).label)
                   for role in dt.roles},
        "inferred_metadata": dt.schema.inferred(),
        "schema": dt.schema.to_dict(),
        "config": run_config.to_dict(),
        "distributed": {"scheduler": getattr(client, "scheduler", None) and client.scheduler.address,
                        "workers": len(info.get("workers", {}))},
    }
    return build_report(header, done, rule, tables=dt, has_control=dt.has_control, seed=seed,
                        metrics={n: _metric_of(run_config, n) for n in names},
                        unavailable=run_config.unavailable)


def run_tables(tables: Tables, run_config: RunConfig, *, seed: int = 0, backend: str = "auto",
               progress: bool = False, generator: Any = None, encoded: EncodedView | None = None,
               cache: Any = None, risk: Mapping[str, Any] | None = None,
               on_progress: Callable[[str, int, int], Any] | None = None,
               entities: Any = None, jobs: int | None = None, canonical: bool = False,
               retest_columns: int = 2, on_plan: Callable[[Any], Any] | None = None) -> RunOutput:
    """Run a validated configuration on validated tables (the engine behind :func:`run_evaluation`).

    With ``entities`` (an :class:`~synthguard.data.entities.EntityRun`), ``tables`` are the event tables:
    privacy metrics run on the entity tables instead (``unit: "entity"`` in the report).
    ``jobs`` metrics run at once in threads (default 1; 0 = one per core; see
    :mod:`synthguard.engine.parallel`); the report is the same, in the configured order, whatever ``jobs``.
    ``canonical=True``: ``tables`` already come from :meth:`Tables.in_canonical_order` (as in
    :func:`run_evaluation`, which then no longer holds the input-order copies); otherwise they are
    reordered here. ``retest_columns``: see :func:`synthguard.evaluate`. ``on_plan`` is called with
    the run's :class:`~synthguard.run.plan.Plan` before any metric runs.
    """
    rule = risk_rule_of(run_config, tables, risk)
    if on_plan is not None:
        from .plan import plan_for_run

        on_plan(plan_for_run(tables, run_config))
    if encoded is None and not canonical:
        # canonical content order: no metric can depend on the order of the input rows
        tables = tables.in_canonical_order()
    names = list(run_config.metrics)
    ctx = Context(tables=tables, encoded=encoded or EncodedView(tables), seed=seed, backend=backend,
                  generator=generator, release_type=rule.release_type, materiality=rule.materiality,
                  entities=entities).for_run(names)
    entity_ctx = None
    if entities is not None:
        from dataclasses import replace as _replace

        # a memo of its own: memos of the row tables must not leak into the entity tables
        entity_ctx = _replace(ctx, tables=entities.entities,
                              encoded=EncodedView(entities.entities)).for_run(names)

    def one(name: str) -> Entry:
        """``name`` is the run's name of the metric (a named run may run one metric several
        times); with an entity run, privacy metrics run on ``entity_ctx`` (one row per entity)."""
        metric = _metric_of(run_config, name)
        spec = get_metric(metric)
        unit = None
        if entities is not None:
            from ..data.entities import metric_unit

            unit = metric_unit(spec)
        base = entity_ctx if unit == "entity" and entity_ctx is not None else ctx
        return execute(spec, base, run_config.metrics[name], name=name, cache=cache, unit=unit,
                       thresholds=run_config.thresholds.get(name, run_config.thresholds.get(metric)))

    done = _run_all(names, one, run_config, ctx, jobs=jobs, progress=progress,
                    on_progress=on_progress)
    header = {
        "synthguard_version": __version__,
        "seed": seed,
        "engine": {"backend": _resolve_backend(backend)},
        "inputs": {role: dict(tables.fingerprints.get(role, {}), source=tables.labels.get(role))
                   for role in tables.roles},
        **({"original_stats": dict(tables.fingerprints.get("original", {}),
                                   source=tables.labels.get("original"))}
           if getattr(tables, "original_stats", None) is not None else {}),
        "inferred_metadata": tables.inferred_metadata(),
        "warnings": list(tables.warnings),
        "schema": tables.schema.to_dict(),
        "config": run_config.to_dict(),
    }
    if entities is not None:
        header["unit"] = "entity"
        header["entities"] = entities.summary()
    out = build_report(header, done, rule, tables=tables, has_control=tables.has_control, seed=seed,
                       metrics={n: _metric_of(run_config, n) for n in names},
                       unavailable=getattr(run_config, "unavailable", None))
    if retest_columns and entities is None and getattr(tables, "original_stats", None) is None:
        from .actions import coarsen_retest  # the alarming risks re-tested with drivers coarsened
        from .plan import stage

        with stage("re-testing coarsened columns", progress):
            verdict, cost = coarsen_retest(tables, run_config, out.verdict, out.results, seed=seed,
                                           backend=backend, risk=risk, jobs=jobs,
                                           max_columns=int(retest_columns))
        if cost is not None:
            out.header["actions"] = {"coarsen_retest": cost}
        out = dataclasses.replace(out, verdict=verdict)
    return out


def _metric_of(run_config: Any, name: str) -> str:
    """The registered metric the run's ``name`` runs (itself unless it is a named run)."""
    return run_config.metric_of(name) if hasattr(run_config, "metric_of") else name


def _run_all(names: list[str], one: Callable[[str], Entry], run_config: Any, ctx: Context, *,
             jobs: int | None, progress: bool,
             on_progress: Callable[[str, int, int], Any] | None) -> dict[str, Entry]:
    """Every metric of the run through ``one``, ``jobs`` at once (threads), with the progress bar
    and ``on_progress`` after each; the entries in the configured order, whatever order the metrics
    finished in. Memos no pending metric needs are dropped as metrics finish (``ctx`` comes from
    :meth:`Context.for_run` with ``names``)."""
    n_jobs = min(resolve_jobs(jobs), max(1, len(names)))
    bar = None
    if progress and names:
        from tqdm.auto import tqdm

        # disable=None: no bar when stderr is not a terminal (logs, CI), not hundreds of \r updates
        bar = tqdm(total=len(names), desc="metrics", unit="metric", leave=False, disable=None)
    step = 0

    def finished(name: str) -> None:
        nonlocal step
        step += 1
        if bar is not None:
            bar.set_postfix_str(name)
            bar.update(1)
        if on_progress is not None:
            on_progress(name, step, len(names))

    done: dict[str, Entry] = {}
    concurrent = [n for n in names if n_jobs > 1
                  and metric_info(_metric_of(run_config, n)).family not in SERIAL_FAMILIES]
    if len(concurrent) > 1:
        from concurrent.futures import ThreadPoolExecutor, as_completed

        pool = ThreadPoolExecutor(max_workers=n_jobs, thread_name_prefix="synthguard-metric")
        try:
            futures = {pool.submit(one, name): name for name in concurrent}
            pending = set(names)
            for fut in as_completed(futures):
                done[futures[fut]] = fut.result()
                pending.discard(futures[fut])
                ctx.release_memos(pending)
                release_free_memory()
                finished(futures[fut])
        except BaseException:
            # Ctrl-C (or a failing on_progress): queued metrics are cancelled, not waited for; the
            # ones already running finish in the background (the CLI exits at once, see cli.main)
            pool.shutdown(wait=False, cancel_futures=True)
            if bar is not None:
                bar.close()
            raise
        pool.shutdown(wait=True)
    for name in names:  # jobs=1, and the families that must run alone
        if name in done:
            continue
        done[name] = one(name)
        ctx.release_memos(set(names) - set(done))
        release_free_memory()  # what the metric freed goes back to the OS (lower peak; same numbers)
        finished(name)
    if bar is not None:
        bar.close()
    return {name: done[name] for name in names}


def _resolve_backend(backend: str) -> str:
    """The neighbour-engine backend ``backend`` runs on (``"auto"`` -> numba when installed)."""
    from ..engine.neighbors.engine import _resolve

    return _resolve(backend)
