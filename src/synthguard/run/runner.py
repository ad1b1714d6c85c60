"""``evaluate``: load and validate the inputs, run the chosen metrics, collect a :class:`Report`."""

from __future__ import annotations

import dataclasses
import time
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .. import __version__
from ..core.results import MetricResult
from ..data.encoding import EncodedView
from ..data.tables import Tables, input_row_records, prepare_tables
from ..engine.memory import release_free_memory
from ..engine.parallel import resolve_jobs
from ..errors import ConfigError, InputError, MetricError
from ..registry import (
    ORIGINAL_ROWS_NEEDED,
    RUN_METRICS_KEY,
    Context,
    get_metric,
    metric_info,
    missing_inputs,
    release_memos,
)
from ..report import Report
from .config import RunConfig, build_config, validate_seed
from .verdict import RiskRule, assess

# families whose metrics run one at a time after the others: spaCy may fork worker processes
# (n_process), which must not happen while other threads run
SERIAL_FAMILIES = frozenset({"text"})


def evaluate(original: Any = None, synthetic: Any = None, control: Any = None, metadata: Any = None,
             metrics: Any = None, config: Mapping[str, Any] | str | Path | None = None,
             seed: int | None = None, *, preset: str | None = None, backend: str = "auto",
             progress: bool = False, generator: Any = None, cache: Any = None,
             on_progress: Callable[[str, int, int], Any] | None = None,
             original_stats: Any = None, risk_rule: str | None = None,
             materiality: float | None = None, release_type: str | None = None,
             alpha: float | None = None,
             entity_key: str | None = None, sequence_key: str | None = None,
             original_context: Any = None, synthetic_context: Any = None,
             control_context: Any = None, client: Any = None, jobs: int | None = None,
             retest_columns: int = 2) -> Report:
    """Evaluate a synthetic release against the real data it was made from.

    Parameters
    ----------
    original : DataFrame or path, or None
        The real rows the generator was trained on (CSV or Parquet path, or a DataFrame). ``None``
        when ``original_stats`` is given. Default: the config's ``data.original``.
    synthetic : DataFrame or path
        The release to evaluate. Default: the config's ``data.synthetic`` (likewise ``control``
        and ``metadata`` default to ``data.control`` / ``data.metadata``).
    control : DataFrame or path, optional
        Real rows held out from training; gives residual risks and holdout baselines.
    metadata : mapping or path, optional
        SynEval-style metadata (sdtypes, quasi-identifiers, sensitive and text columns).
        Missing sdtypes are inferred and listed under ``inferred_metadata`` in the report.
    metrics : list of str or mapping, optional
        Metric names, or ``{name: {param: value}}``. Default: the config's, else the preset's, else
        every default metric.
    config : mapping or path, optional
        ``{"metrics": ..., "thresholds": {name: {...}}, "preset": ...}`` (YAML or JSON file).
    seed : int, optional
        Seed of every random choice: the same seed gives the same numbers. Default: the config's
        ``seed``, else 0.
    preset : str, optional
        ``"quick"``, ``"privacy"`` or ``"full"``.
    backend : {"auto", "numba", "numpy"}
        Neighbour-engine backend.
    progress : bool
        Show a progress bar on stderr.
    generator : object, optional
        For metrics that need a generator.
    cache : bool, str, Path or DiskCache, optional
        Disk cache of metric results (off by default). ``True`` uses ``$SYNTHGUARD_CACHE_DIR``
        (else ``~/.cache/synthguard``); a path uses that folder. Results read back from the cache
        are marked ``"cached": true`` in the JSON report. See :mod:`synthguard.engine.cache`.
    on_progress : callable, optional
        Called as ``on_progress(metric, step, total)`` after each metric finishes (ran, skipped,
        failed or read from the cache), ``step`` counting from 1 to ``total``: for notebooks and
        services. Works with or without ``progress``. An exception it raises stops the evaluation.
    original_stats : path, mapping or OriginalStats, optional
        The original's statistics (``synthguard profile`` / :func:`synthguard.run.profile.profile`)
        instead of its rows: every metric that can run from them does (``accuracy``,
        ``quality_report``), the rest are skipped as needing the original rows.
    risk_rule : {"calibrated", "reference"}, optional
        How risk levels and the verdict are decided (:mod:`synthguard.run.verdict`). Default: the
        config's ``risk_rule``, else ``"calibrated"`` (tests of training rows against the control).
    materiality : float, optional
        Share of training records exposed beyond chance that matters (default 0.01).
    release_type : {"synthetic", "anonymised"}, optional
        Default: the config's, else the metadata's ``release_type``, else ``"synthetic"``.
    alpha : float, optional
        Family-wise false-alarm rate of the verdict (default 0.05).
    entity_key : str, optional
        Column naming the person each row belongs to (sequential data: many rows per person). Every
        privacy metric then runs on one row per entity (``docs/entity-level.md``) and the entity-level
        metrics (``entity_copies``, ``subsequence_copies``, sequence fidelity) are added. Also read from
        the metadata (``entity_key``, SDV sequential or multi-table metadata).
    sequence_key : str, optional
        Column ordering a person's events (number or date).
    original_context, synthetic_context, control_context : DataFrame or path, optional
        One row per entity (constant per person), joined on the entity key.
    jobs : int, optional
        Metrics run at once (threads). Default (``None``): 1, one metric at a time, each neighbour
        search on every core (measured faster and lighter than overlapping metrics, see
        ``docs/performance.md``); ``0`` or less: one thread per core. The numbers are identical
        whatever ``jobs`` (see :mod:`synthguard.engine.parallel`).
    client : distributed.Client, optional
        Run on this Dask cluster (needs ``synthguard[dask]``): inputs may then also be partitioned
        Parquet datasets (a folder or glob) or dask DataFrames; the metrics of
        :data:`synthguard.distributed.SUPPORTED` run over partitions with the same numbers as here, the
        others are reported ``skipped``. See ``docs/scaling.md``.

    retest_columns : int
        When singling out or attribute inference alarms, at most this many of the columns driving
        it are re-tested coarsened (quantile bins, or the most frequent categories): one more run
        of the verdict's tests each; the report gives each risk's level after
        (:mod:`synthguard.run.actions`). ``0`` switches it off. Default 2.

    Returns
    -------
    Report
        ``report["dcr"]``, ``report.to_dict()``, ``report.to_json(path)``.

    Raises
    ------
    InputError, ConfigError
        Bad inputs or configuration, before any metric runs.
    """
    from ..engine.cache import as_cache

    seed = validate_seed(seed)
    if client is not None:
        from ..distributed import evaluate_distributed

        return evaluate_distributed(original, synthetic, control, metadata, metrics, config, seed,
                                    client=client, preset=preset, backend=backend,
                                    risk={"rule": risk_rule, "materiality": materiality,
                                          "release_type": release_type, "alpha": alpha})
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
                              on_progress=on_progress, entities=run, jobs=jobs)
        tables = prepare_tables(original, synthetic, control, metadata, canonical_columns=True)
    # reordered here rather than in run_tables, so that the input-order copies (our private copies,
    # not the caller's data) are freed before any metric runs: about 0.3 GB at 1 M rows
    tables = tables.in_canonical_order()
    release_free_memory()
    return run_tables(tables, run_config, seed=seed, backend=backend, progress=progress,
                      generator=generator, cache=disk, risk=overrides, on_progress=on_progress,
                      jobs=jobs, canonical=True, retest_columns=retest_columns)


def risk_rule_of(run_config: RunConfig, tables: Tables | None,
                 overrides: Mapping[str, Any] | None = None) -> RiskRule:
    """The :class:`~synthguard.run.verdict.RiskRule` of a run: explicit arguments, else the config's
    keys, else the metadata's ``release_type``, else the defaults."""
    kw: dict[str, Any] = {}
    if tables is not None and tables.schema.extra.get("release_type") is not None:
        kw["release_type"] = tables.schema.extra["release_type"]
    for key, val in dict(run_config.risk or {}).items():
        kw["rule" if key == "risk_rule" else key] = val
    for key, val in dict(overrides or {}).items():
        if val is not None:
            kw[key] = val
    return RiskRule(**kw)


def run_tables(tables: Tables, run_config: RunConfig, *, seed: int = 0, backend: str = "auto",
               progress: bool = False, generator: Any = None, encoded: EncodedView | None = None,
               cache: Any = None, risk: Mapping[str, Any] | None = None,
               on_progress: Callable[[str, int, int], Any] | None = None,
               entities: Any = None, jobs: int | None = None, canonical: bool = False,
               retest_columns: int = 2) -> Report:
    """Run a validated configuration on validated tables (the engine behind :func:`evaluate`).

    With ``entities`` (an :class:`~synthguard.data.entities.EntityRun`), ``tables`` are the event tables:
    privacy metrics run on the entity tables instead (``unit: "entity"`` in the report).
    ``jobs`` metrics run at once in threads (default 1; 0 = one per core; see
    :mod:`synthguard.engine.parallel`); the report is the same, in the configured order, whatever ``jobs``.
    ``canonical=True``: ``tables`` already come from :meth:`Tables.in_canonical_order` (as in
    :func:`evaluate`, which then no longer holds the input-order copies); otherwise they are
    reordered here. ``retest_columns``: see :func:`evaluate`.
    """
    rule = risk_rule_of(run_config, tables, risk)
    if encoded is None and not canonical:
        # canonical content order: no metric can depend on the order of the input rows
        tables = tables.in_canonical_order()
    ctx = Context(tables=tables, encoded=encoded or EncodedView(tables), seed=seed, backend=backend,
                  generator=generator, release_type=rule.release_type, entities=entities)
    entity_ctx = None
    if entities is not None:
        from dataclasses import replace as _replace


        entity_ctx = _replace(ctx, tables=entities.entities, encoded=EncodedView(entities.entities),
                              cache={})  # memos of the row tables must not leak into the entity tables
    names = list(run_config.metrics)
    ctx.cache[RUN_METRICS_KEY] = tuple(names)
    if entity_ctx is not None:
        entity_ctx.cache[RUN_METRICS_KEY] = tuple(names)
    n_jobs = min(resolve_jobs(jobs), max(1, len(names)))
    bar = None
    if progress and names:
        from tqdm.auto import tqdm

        # disable=None: no bar when stderr is not a terminal (logs, CI), not hundreds of \r updates
        bar = tqdm(total=len(names), desc="synthguard", unit="metric", leave=False, disable=None)
    step = 0

    def finished(name: str) -> None:
        nonlocal step
        step += 1
        if bar is not None:
            bar.set_postfix_str(name)
            bar.update(1)
        if on_progress is not None:
            on_progress(name, step, len(names))

    def one(name: str) -> tuple[dict[str, Any], MetricResult | None]:
        return _run_one(name, run_config, ctx, entity_ctx, entities, seed, cache)

    done: dict[str, tuple[dict[str, Any], MetricResult | None]] = {}
    concurrent = [n for n in names if n_jobs > 1
                  and metric_info(run_config.metric_of(n) if hasattr(run_config, "metric_of") else n
                                  ).family not in SERIAL_FAMILIES]
    if len(concurrent) > 1:
        from concurrent.futures import ThreadPoolExecutor, as_completed

        pool = ThreadPoolExecutor(max_workers=n_jobs, thread_name_prefix="synthguard-metric")
        try:
            futures = {pool.submit(one, name): name for name in concurrent}
            pending = set(names)
            for fut in as_completed(futures):
                done[futures[fut]] = fut.result()
                pending.discard(futures[fut])
                release_memos(ctx.cache, pending)
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
        release_memos(ctx.cache, set(names) - set(done))
        release_free_memory()  # what the metric freed goes back to the OS (lower peak; same numbers)
        finished(name)
    if bar is not None:
        bar.close()
    entries: dict[str, dict[str, Any]] = {}
    results: dict[str, MetricResult] = {}
    for name in names:  # the configured order, whatever order the metrics finished in
        entries[name], res = done[name]
        if res is not None:
            results[name] = res
    # row numbers in records: from the tables' canonical content order back to the input rows
    for name, res in list(results.items()):
        if res.records:
            results[name] = dataclasses.replace(res, records=input_row_records(res.records, tables, name))
    for name, reason in dict(getattr(run_config, "unavailable", {}) or {}).items():
        entries.setdefault(name, {"params": {}, "status": "skipped", "reason": reason, "seconds": 0.0})
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
    results, verdict = assess(results, rule, has_control=tables.has_control, seed=seed,
                              metrics={n: run_config.metric_of(n) for n in names})
    if retest_columns and entities is None and getattr(tables, "original_stats", None) is None:
        from .actions import coarsen_retest  # the alarming risks re-tested with drivers coarsened

        verdict, cost = coarsen_retest(tables, run_config, verdict, results, seed=seed,
                                       backend=backend, risk=risk, jobs=jobs,
                                       max_columns=int(retest_columns))
        if cost is not None:
            header["actions"] = {"coarsen_retest": cost}
    return Report(header, entries, results, verdict)


def _resolve_backend(backend: str) -> str:
    """The neighbour-engine backend ``backend`` runs on (``"auto"`` -> numba when installed)."""
    from ..engine.neighbors.engine import _resolve

    return _resolve(backend)


def _run_one(name: str, run_config: RunConfig, ctx: Context, entity_ctx: Context | None,
             entities: Any, seed: int, cache: Any) -> tuple[dict[str, Any], MetricResult | None]:
    """One metric's report entry and result (``None`` when skipped or failed).

    ``name`` is the run's name of the metric (a named run may run one metric several times);
    with an entity run, privacy metrics run on ``entity_ctx`` (one row per entity).
    """
    params = dict(run_config.metrics[name])
    metric = run_config.metric_of(name) if hasattr(run_config, "metric_of") else name
    spec = get_metric(metric)
    unit = None
    if entities is not None:
        from ..data.entities import metric_unit

        unit = metric_unit(spec)
    mctx_base = entity_ctx if unit == "entity" and entity_ctx is not None else ctx
    t0 = time.perf_counter()
    entry: dict[str, Any] = {"params": params, "status": "ok", "reason": None}
    if metric != name:
        entry["metric"] = metric
    if unit is not None:
        entry["unit"] = unit
    result: MetricResult | None = None
    missing = missing_inputs(spec, mctx_base)
    if missing:
        entry["status"] = "skipped"
        entry["reason"] = ("needs " + " and ".join(
            {"control": "a control table (real rows held out from training: --control)",
             "original": ORIGINAL_ROWS_NEEDED,
             "generator": "a generator (use 'synthguard attack')"}.get(m, m) for m in missing))
    else:
        mctx = mctx_base.for_metric(spec, run_config.thresholds.get(name,
                                                               run_config.thresholds.get(metric)))
        key = None
        if cache is not None and "generator" not in spec.needs and ctx.generator is None:
            key = cache.key(mctx.tables, metric, params, seed, mctx.thresholds, spec.func)
            hit = cache.get(key)
            if hit is not None:
                result = hit if metric == name else dataclasses.replace(hit, name=name)
                entry["cached"] = True
        if result is None:
            try:
                res = spec.func(mctx, **params)
                if not isinstance(res, MetricResult):
                    raise TypeError(f"metric {name!r} returned {type(res).__name__}, not MetricResult")
                if unit == "entity" and res.evidence is not None and res.evidence.unit != "entities":
                    # the metric ran on one row per entity
                    res = dataclasses.replace(res, evidence=dataclasses.replace(res.evidence,
                                                                                 unit="entities"))
                if cache is not None and key is not None:
                    cache.put(key, res)
                if metric != name:  # a named run: the result carries its run name
                    res = dataclasses.replace(res, name=name)
                result = res
            except (MetricError, ConfigError) as exc:
                entry["status"] = "skipped"
                entry["reason"] = str(exc)
            except Exception as exc:  # noqa: BLE001 - one failing metric must not sink the report
                entry["status"] = "error"
                entry["reason"] = f"{type(exc).__name__}: {exc}"
                entry["traceback"] = traceback.format_exc(limit=8)
    entry["seconds"] = round(time.perf_counter() - t0, 4)
    return entry, result
