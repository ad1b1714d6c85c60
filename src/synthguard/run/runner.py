"""The run behind :func:`synthguard.evaluate`: load and validate the inputs, run the chosen metrics
through the one executor (:mod:`synthguard.run.executor`) in one process, and return the report's
data (:class:`~synthguard.run.executor.RunOutput`; :mod:`synthguard.api` makes the
:class:`~synthguard.report.Report` of it). A run on a Dask cluster goes to :mod:`.cluster`.

Every option arrives in one :class:`~synthguard.run.options.EvaluateOptions`, validated when it
was built."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..data.encoding import EncodedView
from ..data.tables import Tables, prepare_tables
from ..engine.memory import release_free_memory, small_pages
from ..engine.parallel import retest_jobs
from ..engine.reuse import derive_searches, forget_searches, keep_searches
from ..errors import ConfigError, InputError
from ..registry import Context, get_metric
from .advice import RETEST_COLUMNS, advice_budget, advise, planned_retests
from .config import RunConfig, build_config
from .executor import Entry, RunOutput, build_report, execute
from .loop import SERIAL_FAMILIES, check_run_config, run_all, run_header
from .options import EvaluateOptions
from .sample import (
    dropped_with_copies,
    list_copies,
    runs_near_copies,
    sample_tables,
    with_release_queries,
)
from .verdict import risk_rule_of

#: columns the coarsen-and-retest re-tests by default (in one process; see :mod:`.actions`)

__all__ = ["RETEST_COLUMNS", "SERIAL_FAMILIES", "run_evaluation", "run_tables", "risk_rule_of"]


def run_evaluation(original: Any = None, synthetic: Any = None, control: Any = None,
                   metadata: Any = None, options: EvaluateOptions | None = None) -> RunOutput:
    """The run of :func:`synthguard.evaluate` (the tables, their metadata and the options), as
    plain data; NumPy's arrays on ordinary pages meanwhile
    (:func:`~synthguard.engine.memory.small_pages`: less of the kernel's page zeroing).

    Returns
    -------
    RunOutput
        Header, entries, results and verdict.
    """
    with small_pages():
        return _run_evaluation(original, synthetic, control, metadata, options)


def _run_evaluation(original: Any, synthetic: Any, control: Any, metadata: Any,
                    options: EvaluateOptions | None) -> RunOutput:
    options = EvaluateOptions() if options is None else options
    if options.client is not None:
        from .cluster import refuse_on_cluster

        refuse_on_cluster(options)  # before any work
    run_config = build_config(options.metrics, options.config, options.preset)
    options = options.with_config(run_config)
    paths = dict(run_config.data)
    if original is None and options.original_stats is None:
        original = paths.get("original")
    synthetic = synthetic if synthetic is not None else paths.get("synthetic")
    control = control if control is not None else paths.get("control")
    metadata = metadata if metadata is not None else paths.get("metadata")
    if synthetic is None:
        raise InputError("evaluate: no synthetic table: pass it, or name it under 'data:' in the "
                         "config")
    risk_rule_of(run_config, None, options.risk_overrides())  # validate before any work
    if options.client is not None:
        from .cluster import run_on_cluster

        return run_on_cluster(original, synthetic, control, metadata, run_config, options)

    if options.original_stats is not None:
        if original is not None:
            raise ConfigError("give the original rows or their statistics (original_stats), not both")
        from .profile import tables_from_stats

        tables = tables_from_stats(options.original_stats, synthetic, control, metadata)
    else:
        if original is None:
            raise ConfigError("no original: give the original rows, or their statistics with "
                              "original_stats= ('synthguard profile' writes them)")
        from ..data.entities import wants_entities

        if wants_entities(original, metadata, options.entity_key, options.sequence_key,
                          options.original_context):
            if options.max_records:
                raise ConfigError(f"max_records={options.max_records}: entity-level runs (one row "
                                  f"per person) test every person; leave max_records unset")
            from ..data.entities import build_entity_run, prepare_entities
            from .config import add_entity_metrics

            data = prepare_entities(original, synthetic, control, metadata,
                                    entity_key=options.entity_key,
                                    sequence_key=options.sequence_key,
                                    original_context=options.original_context,
                                    synthetic_context=options.synthetic_context,
                                    control_context=options.control_context)
            run = build_entity_run(data)
            if options.metrics is None:
                run_config = add_entity_metrics(run_config)
            return run_tables(run.rows, run_config, options, entities=run)
        from .plan import stage

        with stage("reading inputs", options.progress):
            tables = prepare_tables(original, synthetic, control, metadata, canonical_columns=True)
    # reordered here rather than in run_tables, so that the input-order copies (our private copies,
    # not the caller's data) are freed before any metric runs: about 0.3 GB at 1 M rows
    tables = tables.in_canonical_order()
    release_free_memory()
    # above max_records training or control records, a seeded sample of them (the full tables are
    # freed here, once the full-table copy join is done)
    tables, sample, copies = sample_tables(tables, options.max_records, int(options.seed or 0),
                                           near=runs_near_copies(run_config),
                                           retest=advice_budget(options)[0] > 0)
    release_free_memory()
    out = run_tables(tables, run_config, options, canonical=True, sample=sample, copies=copies)
    return out if copies is None else list_copies(out, copies, run_config.metric_of, run_config.metrics)


def run_tables(tables: Tables, run_config: RunConfig, options: EvaluateOptions | None = None, *,
               encoded: EncodedView | None = None, entities: Any = None,
               canonical: bool = False, sample: dict[str, Any] | None = None,
               derived: tuple[EncodedView, np.ndarray] | None = None,
               release_queries: int | None = None,
               copies: Mapping[str, Mapping[str, np.ndarray]] | None = None,
               retest: bool = False) -> RunOutput:
    """Run a validated configuration on validated tables (the engine behind :func:`run_evaluation`).

    ``options`` (default: every default) give the seed (unset = 0), the neighbour backend, the
    progress bar and callback, the plan callback (``on_plan``: called with the run's
    :class:`~synthguard.run.plan.Plan` before any metric runs), the generator, the disk cache, the risk rule's keys, ``jobs``,
    ``retest_columns`` and ``retest_rows``; the options about inputs (``original_stats``, the entity options,
    ``client``) were used to build ``tables`` and ``entities`` and are not read here.
    With ``entities`` (an :class:`~synthguard.data.entities.EntityRun`), ``tables`` are the event
    tables: privacy metrics run on the entity tables instead (``unit: "entity"`` in the report).
    ``jobs`` metrics run at once in threads (default 2 where kernels can share the cores and tables are small, else 1;
    0 = one per core; see
    :mod:`synthguard.engine.parallel`); the report is the same, in the configured order, whatever
    ``jobs``. ``canonical=True``: ``tables`` already come from :meth:`Tables.in_canonical_order`
    (as in :func:`run_evaluation`, which then no longer holds the input-order copies); otherwise
    they are reordered here. ``sample``: the tables are a seeded sample of the inputs' training
    and control records (:func:`synthguard.run.sample.draw_sample`): the report's header states it
    and the verdict says so. ``derived``: ``(view, kept)`` when ``tables`` are the run on ``view``'s
    tables without some release rows (the drop-and-retest; ``kept``: each release row's position in
    that run): searches that run already made answer this one where they can
    (:mod:`synthguard.engine.reuse`: the same numbers). ``release_queries``: above how many release
    rows the tests whose queries are release rows ask of a seeded sample of them
    (:attr:`~synthguard.registry.Context.release_queries`; ``None``: the sample's ``max_records``
    in a sampled run, else never); a re-test passes its run's. ``copies``: a sampled run's
    full-table copies (:func:`synthguard.run.sample.sample_tables`): the drop-and-retest drops
    those the records export marks ``drop`` with the run's own rows
    (:func:`~synthguard.run.sample.dropped_with_copies`). ``retest``: the run is a re-test of the
    advice, its verdict read for levels (:func:`synthguard.run.verdict.assess` ``levels_only``).
    """
    options = EvaluateOptions() if options is None else options
    run_config = check_run_config(run_config)
    seed = int(options.seed or 0)
    rule = risk_rule_of(run_config, tables, options.risk_overrides())
    if options.on_plan is not None:
        from .plan import plan_for_run

        options.on_plan(plan_for_run(tables, run_config, sample=sample,
                                     retests=planned_retests(tables, run_config, options, rule,
                                                              entities)))
    if encoded is None and not canonical:
        # canonical content order: no metric can depend on the order of the input rows
        tables = tables.in_canonical_order()
    names = list(run_config.metrics)
    view = encoded or EncodedView(tables)
    stats_only = getattr(tables, "original_stats", None) is not None
    if derived is not None:  # a drop-and-retest: searches answered from the run's (engine.reuse)
        derive_searches(view, *derived)
    elif advice_budget(options)[0] and planned_retests(tables, run_config, options, rule, entities):
        # for the drop-and-retest of the advice; none without a control table, in an entity or
        # statistics-only run or under another rule (no re-test: nothing kept for the run's length)
        keep_searches(view)
    if release_queries is None:
        release_queries = int(sample["max_records"]) if sample is not None else 0
    ctx = Context(tables=tables, encoded=view, seed=seed,
                  backend=options.backend, generator=options.generator,
                  release_type=rule.release_type, materiality=rule.materiality,
                  entities=entities, release_queries=release_queries).for_run(run_config.metric_ids(names))
    entity_ctx = None
    if entities is not None:
        # a memo of its own: memos of the row tables must not leak into the entity tables
        entity_ctx = dataclasses.replace(ctx, tables=entities.entities,
                                         encoded=EncodedView(entities.entities)).for_run(run_config.metric_ids(names))

    def one(name: str) -> Entry:
        """``name`` is the run's name of the metric (a named run may run one metric several
        times); with an entity run, privacy metrics run on ``entity_ctx`` (one row per entity)."""
        metric = run_config.metric_of(name)
        spec = get_metric(metric)
        unit = None
        if entities is not None:
            from ..data.entities import metric_unit

            unit = metric_unit(spec)
        base = entity_ctx if unit == "entity" and entity_ctx is not None else ctx
        return execute(spec, base, run_config.metrics[name], name=name, cache=options.cache,
                       unit=unit,
                       thresholds=run_config.thresholds.get(name, run_config.thresholds.get(metric)))

    done = run_all(names, one, run_config, ctx, jobs=options.jobs, progress=options.progress,
                   on_progress=options.on_progress)
    # the metrics are done: what they shared (memos) and the encoded blocks are not read again (a
    # re-test has a memo and a view of its own, and checks the blocks it reuses searches of by
    # encoding this run's rows again: engine.reuse). Freed before the report and the advice, so
    # that a re-test does not run beside this run's intermediates (same numbers)
    for c in (ctx, entity_ctx):
        if c is not None:
            c.forget_memos()
    if encoded is None:
        view.forget_blocks()
    release_free_memory()
    if sample is not None:
        sample = with_release_queries(sample, release_queries, tables,
                                      [run_config.metric_of(n) for n in names])
    header = run_header(
        seed, run_config, engine={"backend": _resolve_backend(options.backend)},
        # the inputs as given (a sampled table's fingerprint also names its sample, for the cache;
        # the header states the sample under "sample")
        inputs={role: {**{k: v for k, v in dict(tables.fingerprints.get(role, {})).items()
                          if k != "sample"}, "source": tables.labels.get(role)}
                for role in tables.roles},
        original_stats=(dict(tables.fingerprints.get("original", {}),
                             source=tables.labels.get("original")) if stats_only else None),
        inferred=tables.inferred_metadata(), warnings=list(tables.warnings),
        schema=tables.schema.to_dict(),
        extra={"unit": "entity", "entities": entities.summary()} if entities is not None else
        {"sample": sample} if sample is not None else None)
    out = build_report(header, done, rule, tables=tables, has_control=tables.has_control, seed=seed,
                       metrics={n: run_config.metric_of(n) for n in names},
                       unavailable=run_config.unavailable, levels_only=retest)
    if sample is not None:
        from .verdict import with_sample

        out = dataclasses.replace(out, verdict=with_sample(out.verdict, sample))
    if entities is None and not stats_only:
        def rerun(new: Tables, sub: RunConfig, again: EvaluateOptions, kept: np.ndarray | None = None
                  ) -> RunOutput:
            if kept is None:  # the coarsen-and-retest comes after every drop round: nothing more to answer
                forget_searches(view)
            # a large re-test runs one metric at a time by default (it also holds the run's searches)
            again = again.replace(jobs=retest_jobs(again.jobs, max(len(new.get(r)) for r in new.roles)))
            return run_tables(new, sub, again, canonical=True,
                              derived=None if kept is None else (view, kept),
                              release_queries=release_queries, retest=True)

        out = advise(out, tables, run_config, options, rerun=rerun, also=dropped_with_copies(copies))
        forget_searches(view)
    if not retest:  # the run is over: no tree of its rows outlives it (engine.neighbors' spare trees)
        from ..engine.neighbors.engine import forget_spare_trees

        forget_spare_trees()
    return out


def _resolve_backend(backend: str) -> str:
    """The neighbour-engine backend ``backend`` runs on (``"auto"`` -> numba when installed)."""
    from ..engine.neighbors.engine import _resolve

    return _resolve(backend)
