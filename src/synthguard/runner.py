"""``evaluate``: load and validate the inputs, run the chosen metrics, collect a :class:`Report`."""

from __future__ import annotations

import time
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import __version__
from .config import RunConfig, build_config
from .data.tables import Tables, prepare_tables
from .encoding import EncodedView
from .errors import ConfigError, MetricError
from .parallel import resolve_jobs
from .registry import (
    RUN_METRICS_KEY,
    Context,
    get_metric,
    metric_info,
    missing_inputs,
    release_memos,
)
from .report import Report
from .results import MetricResult

# families whose metrics run one at a time after the others: spaCy may fork worker processes
# (n_process), which must not happen while other threads run
SERIAL_FAMILIES = frozenset({"text"})


def evaluate(original: Any, synthetic: Any, control: Any = None, metadata: Any = None,
             metrics: Any = None, config: Mapping[str, Any] | str | Path | None = None,
             seed: int | None = None, *, preset: str | None = None, backend: str = "auto",
             progress: bool = False, generator: Any = None, cache: Any = None,
             jobs: int | None = None) -> Report:
    """Evaluate a synthetic release against the real data it was made from.

    Parameters
    ----------
    original : DataFrame or path
        The real rows the generator was trained on (CSV or Parquet path, or a DataFrame).
    synthetic : DataFrame or path
        The release to evaluate.
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
        are marked ``"cached": true`` in the JSON report. See :mod:`synthguard.cache`.
    jobs : int, optional
        Metrics run at once (threads). Default (``None``): 1, one metric at a time, each neighbour
        search on every core (measured faster and lighter than overlapping metrics, see
        ``docs/performance.md``); ``0`` or less: one thread per core. The numbers are identical
        whatever ``jobs`` (see :mod:`synthguard.parallel`).

    Returns
    -------
    Report
        ``report["dcr"]``, ``report.to_dict()``, ``report.to_json(path)``.

    Raises
    ------
    InputError, ConfigError
        Bad inputs or configuration, before any metric runs.
    """
    from .cache import as_cache

    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise ConfigError(f"seed must be an integer, got {seed!r}")
    run_config = build_config(metrics, config, preset)
    if seed is None:
        seed = run_config.seed if run_config.seed is not None else 0
    disk = as_cache(cache)
    tables = prepare_tables(original, synthetic, control, metadata)
    return run_tables(tables, run_config, seed=seed, backend=backend, progress=progress,
                      generator=generator, cache=disk, jobs=jobs)


def run_tables(tables: Tables, run_config: RunConfig, *, seed: int = 0, backend: str = "auto",
               progress: bool = False, generator: Any = None, encoded: EncodedView | None = None,
               cache: Any = None, jobs: int | None = None) -> Report:
    """Run a validated configuration on validated tables (the engine behind :func:`evaluate`).

    ``jobs`` metrics run at once in threads (default 1; 0 = one per core; see
    :mod:`synthguard.parallel`); the report is the same, in the configured order, whatever ``jobs``.
    """
    ctx = Context(tables=tables, encoded=encoded or EncodedView(tables), seed=seed, backend=backend,
                  generator=generator)
    names = list(run_config.metrics)
    ctx.cache[RUN_METRICS_KEY] = tuple(names)
    n_jobs = min(resolve_jobs(jobs), max(1, len(names)))
    bar = None
    if progress and names:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(names), desc="synthguard", unit="metric", leave=False)
    done: dict[str, tuple[dict[str, Any], MetricResult | None]] = {}
    concurrent = [n for n in names if n_jobs > 1 and metric_info(n).family not in SERIAL_FAMILIES]
    if len(concurrent) > 1:
        from concurrent.futures import ThreadPoolExecutor, as_completed

        with ThreadPoolExecutor(max_workers=n_jobs, thread_name_prefix="synthguard-metric") as pool:
            futures = {pool.submit(_run_one, name, run_config, ctx, tables, seed, cache): name
                       for name in concurrent}
            pending = set(names)
            for fut in as_completed(futures):
                done[futures[fut]] = fut.result()
                pending.discard(futures[fut])
                release_memos(ctx.cache, pending)
                if bar is not None:
                    bar.set_postfix_str(futures[fut])
                    bar.update(1)
    for name in names:  # jobs=1, and the families that must run alone
        if name in done:
            continue
        if bar is not None:
            bar.set_postfix_str(name)
        done[name] = _run_one(name, run_config, ctx, tables, seed, cache)
        release_memos(ctx.cache, set(names) - set(done))
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    entries: dict[str, dict[str, Any]] = {}
    results: dict[str, MetricResult] = {}
    for name in names:  # the configured order, whatever order the metrics finished in
        entries[name], res = done[name]
        if res is not None:
            results[name] = res
    for name, reason in dict(getattr(run_config, "unavailable", {}) or {}).items():
        entries.setdefault(name, {"params": {}, "status": "skipped", "reason": reason, "seconds": 0.0})
    header = {
        "synthguard_version": __version__,
        "seed": seed,
        "engine": {"backend": _resolve_backend(backend)},
        "inputs": {role: dict(tables.fingerprints.get(role, {}), source=tables.labels.get(role))
                   for role in tables.roles},
        "inferred_metadata": tables.schema.inferred(),
        "schema": tables.schema.to_dict(),
        "config": run_config.to_dict(),
    }
    return Report(header, entries, results)


def _resolve_backend(backend: str) -> str:
    """The neighbour-engine backend ``backend`` runs on (``"auto"`` -> numba when installed)."""
    from .neighbors.engine import _resolve

    return _resolve(backend)


def _run_one(name: str, run_config: RunConfig, ctx: Context, tables: Tables, seed: int,
             cache: Any) -> tuple[dict[str, Any], MetricResult | None]:
    """One metric's report entry and result (``None`` when skipped or failed)."""
    params = dict(run_config.metrics[name])
    spec = get_metric(name)
    t0 = time.perf_counter()
    entry: dict[str, Any] = {"params": params, "status": "ok", "reason": None}
    result: MetricResult | None = None
    missing = missing_inputs(spec, ctx)
    if missing:
        entry["status"] = "skipped"
        entry["reason"] = ("needs " + " and ".join(
            {"control": "a control table (real rows held out from training: --control)",
             "generator": "a generator (use 'synthguard attack')"}.get(m, m) for m in missing))
    else:
        mctx = ctx.for_metric(spec, run_config.thresholds.get(name))
        key = None
        if cache is not None and "generator" not in spec.needs and ctx.generator is None:
            key = cache.key(tables, name, params, seed, mctx.thresholds)
            hit = cache.get(key)
            if hit is not None:
                result = hit
                entry["cached"] = True
        if result is None:
            try:
                res = spec.func(mctx, **params)
                if not isinstance(res, MetricResult):
                    raise TypeError(f"metric {name!r} returned {type(res).__name__}, not MetricResult")
                result = res
                if cache is not None and key is not None:
                    cache.put(key, res)
            except (MetricError, ConfigError) as exc:
                entry["status"] = "skipped"
                entry["reason"] = str(exc)
            except Exception as exc:  # noqa: BLE001 - one failing metric must not sink the report
                entry["status"] = "error"
                entry["reason"] = f"{type(exc).__name__}: {exc}"
                entry["traceback"] = traceback.format_exc(limit=8)
    entry["seconds"] = round(time.perf_counter() - t0, 4)
    return entry, result
