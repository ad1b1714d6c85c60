"""``evaluate``: load and validate the inputs, run the chosen metrics, collect a :class:`Report`."""

from __future__ import annotations

import time
import traceback
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from . import __version__
from .config import RunConfig, build_config, validate_seed
from .data.tables import Tables, input_row_records, prepare_tables
from .encoding import EncodedView
from .errors import ConfigError, MetricError
from .registry import Context, get_metric, missing_inputs
from .report import Report
from .results import MetricResult
from .verdict import RiskRule, assess


def evaluate(original: Any, synthetic: Any, control: Any = None, metadata: Any = None,
             metrics: Any = None, config: Mapping[str, Any] | str | Path | None = None,
             seed: int | None = None, *, preset: str | None = None, backend: str = "auto",
             progress: bool = False, generator: Any = None, cache: Any = None,
             risk_rule: str | None = None, materiality: float | None = None,
             release_type: str | None = None, alpha: float | None = None) -> Report:
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
    risk_rule : {"calibrated", "reference"}, optional
        How risk levels and the verdict are decided (:mod:`synthguard.verdict`). Default: the
        config's ``risk_rule``, else ``"calibrated"`` (tests of training rows against the control).
    materiality : float, optional
        Share of training records exposed beyond chance that matters (default 0.01).
    release_type : {"synthetic", "anonymised"}, optional
        Default: the config's, else the metadata's ``release_type``, else ``"synthetic"``.
    alpha : float, optional
        Family-wise false-alarm rate of the verdict (default 0.05).

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

    seed = validate_seed(seed)
    run_config = build_config(metrics, config, preset)
    if seed is None:
        seed = run_config.seed if run_config.seed is not None else 0
    disk = as_cache(cache)
    overrides = {"rule": risk_rule, "materiality": materiality, "release_type": release_type,
                 "alpha": alpha}
    risk_rule_of(run_config, None, overrides)  # validate before any work
    tables = prepare_tables(original, synthetic, control, metadata)
    return run_tables(tables, run_config, seed=seed, backend=backend, progress=progress,
                      generator=generator, cache=disk, risk=overrides)


def risk_rule_of(run_config: RunConfig, tables: Tables | None,
                 overrides: Mapping[str, Any] | None = None) -> RiskRule:
    """The :class:`~synthguard.verdict.RiskRule` of a run: explicit arguments, else the config's
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
               cache: Any = None, risk: Mapping[str, Any] | None = None) -> Report:
    """Run a validated configuration on validated tables (the engine behind :func:`evaluate`)."""
    rule = risk_rule_of(run_config, tables, risk)
    if encoded is None:
        # canonical content order: no metric can depend on the order of the input rows
        tables = tables.in_canonical_order()
    ctx = Context(tables=tables, encoded=encoded or EncodedView(tables), seed=seed, backend=backend,
                  generator=generator, release_type=rule.release_type)
    entries: dict[str, dict[str, Any]] = {}
    results: dict[str, MetricResult] = {}
    names = list(run_config.metrics)
    bar = None
    if progress and names:
        from tqdm.auto import tqdm

        # disable=None: no bar when stderr is not a terminal (logs, CI), not hundreds of \r updates
        bar = tqdm(total=len(names), desc="synthguard", unit="metric", leave=False, disable=None)
    for name in names:
        params = dict(run_config.metrics[name])
        spec = get_metric(name)
        if bar is not None:
            bar.set_postfix_str(name)
        t0 = time.perf_counter()
        entry: dict[str, Any] = {"params": params, "status": "ok", "reason": None}
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
                    results[name] = hit
                    entry["cached"] = True
            if name not in results:
                try:
                    res = spec.func(mctx, **params)
                    if not isinstance(res, MetricResult):
                        raise TypeError(f"metric {name!r} returned {type(res).__name__}, not MetricResult")
                    results[name] = res
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
        entries[name] = entry
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    # row numbers in records: from the tables' canonical content order back to the input rows
    for name, res in list(results.items()):
        if res.records:
            results[name] = replace(res, records=input_row_records(res.records, tables, name))
    for name, reason in dict(getattr(run_config, "unavailable", {}) or {}).items():
        entries.setdefault(name, {"params": {}, "status": "skipped", "reason": reason, "seconds": 0.0})
    header = {
        "synthguard_version": __version__,
        "seed": seed,
        "inputs": {role: dict(tables.fingerprints.get(role, {}), source=tables.labels.get(role))
                   for role in tables.roles},
        "inferred_metadata": tables.inferred_metadata(),
        "warnings": list(tables.warnings),
        "schema": tables.schema.to_dict(),
        "config": run_config.to_dict(),
    }
    results, verdict = assess(results, rule)
    return Report(header, entries, results, verdict)
