"""``evaluate_distributed``: the :func:`synthguard.evaluate` flow on a Dask cluster."""

from __future__ import annotations

import dataclasses
import time
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.results import MetricResult
from ..errors import ConfigError, MetricError
from ._deps import require_dask

#: metrics whose counting, searches and samples the Dask backend (:mod:`._backend`) answers; each runs
#: its own function (the same code as in one process) on a context whose ``data_backend`` is the Dask
#: backend. Every other metric is reported ``skipped``.
SUPPORTED: tuple[str, ...] = ("exact_matches", "ims", "dcr", "nndr", "cap", "zero_cap", "k_anonymity",
                              "distinguishability")


def make_client(scheduler: str | None = None, workers: int | None = None, *,
                threads_per_worker: int = 1, memory_limit: str | None = None, processes: bool = True) -> Any:
    """A ``distributed.Client``: connected to ``scheduler`` (``tcp://host:8786``), else on a new
    ``LocalCluster`` of ``workers`` workers."""
    require_dask("--scheduler / --workers")
    from distributed import Client, LocalCluster

    if scheduler:
        try:
            return Client(scheduler, timeout="20s")
        except OSError as exc:
            raise ConfigError(f"cannot reach the Dask scheduler at {scheduler!r} ({exc}): check the address "
                              "(tcp://host:8786) and that 'dask scheduler' is running") from exc
    kwargs: dict[str, Any] = {"n_workers": int(workers or 2), "threads_per_worker": threads_per_worker,
                              "processes": processes, "dashboard_address": None}
    if memory_limit is not None:
        kwargs["memory_limit"] = memory_limit
    return Client(LocalCluster(**kwargs))


def evaluate_distributed(original: Any, synthetic: Any, control: Any = None, metadata: Any = None,
                         metrics: Any = None, config: Mapping[str, Any] | str | Path | None = None,
                         seed: int | None = None, *, client: Any = None, scheduler: str | None = None,
                         workers: int | None = None, preset: str | None = None, backend: str = "auto",
                         npartitions: int = 4, risk: Mapping[str, Any] | None = None) -> Any:
    """Evaluate on a Dask cluster: the metrics of :data:`SUPPORTED` run over partitions, with the
    same numbers as :func:`synthguard.evaluate` in one process for the same seed.

    Parameters
    ----------
    original, synthetic, control : path, dask DataFrame or pandas DataFrame
        Parquet file / folder / glob (or CSV), or frames.
    client : distributed.Client, optional
        An existing client; else one is made from ``scheduler`` or ``workers`` (a LocalCluster,
        closed at the end).
    npartitions : int
        Partitions for pandas inputs.
    risk : mapping, optional
        ``risk_rule`` / ``materiality`` / ``release_type`` / ``alpha`` overrides, as in ``evaluate``.

    Other parameters are those of :func:`synthguard.evaluate`. Metrics without a distributed
    implementation are reported ``skipped`` with the reason.
    """
    require_dask("evaluate(client=...)")
    from .. import __version__
    from ..data.tables import input_row_records
    from ..registry import Context, get_metric
    from ..report import Report
    from ..run.config import build_config
    from ..run.runner import risk_rule_of
    from ..run.verdict import assess
    from ._backend import dask_backend
    from ._tables import load_tables

    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise ConfigError(f"seed must be an integer, got {seed!r}")
    run_config = build_config(metrics, config, preset)
    if seed is None:
        seed = run_config.seed if run_config.seed is not None else 0
    risk_rule_of(run_config, None, risk)  # validate before any work
    own = client is None
    if own:
        client = make_client(scheduler, workers)
    try:
        dt = load_tables(original, synthetic, control, metadata, client=client, npartitions=npartitions)
        rule = risk_rule_of(run_config, dt, risk)  # type: ignore[arg-type]
        dt.release_type = rule.release_type
        entries: dict[str, dict[str, Any]] = {}
        results: dict[str, MetricResult] = {}
        # the hook: one context for the run, whose backend is the cluster (the metrics run unchanged)
        run_ctx = Context(tables=dt, encoded=None, seed=seed, backend=backend,  # type: ignore[arg-type]
                          release_type=dt.release_type, data_backend=dask_backend(dt, backend))
        for name in run_config.metrics:
            params = dict(run_config.metrics[name])
            metric = run_config.metric_of(name)  # named runs: {"dcr_b": {"metric": "dcr", ...}}
            spec = get_metric(metric)
            t0 = time.perf_counter()
            entry: dict[str, Any] = {"params": params, "status": "ok", "reason": None}
            if metric != name:
                entry["metric"] = metric
            if "control" in spec.needs and not dt.has_control:
                entry.update(status="skipped", reason="needs a control table (real rows held out from "
                                                      "training: --control)")
            elif spec.name not in SUPPORTED:
                entry.update(status="skipped", reason=(
                    "not available in a distributed run: it runs in one process only (synthguard evaluate "
                    f"without --scheduler/--workers); distributed metrics: {', '.join(SUPPORTED)}"))
            else:
                try:
                    ctx = run_ctx.for_metric(spec, run_config.thresholds.get(
                        name, run_config.thresholds.get(metric)))
                    res = spec.func(ctx, **params)
                    results[name] = res if metric == name else dataclasses.replace(res, name=name)
                except (MetricError, ConfigError) as exc:
                    entry.update(status="skipped", reason=str(exc))
                except Exception as exc:  # noqa: BLE001 - one failing metric must not sink the report
                    entry.update(status="error", reason=f"{type(exc).__name__}: {exc}",
                                 traceback=traceback.format_exc(limit=8))
            entry["seconds"] = round(time.perf_counter() - t0, 4)
            entries[name] = entry
        # row numbers in records: from the canonical content order back to the input rows, as in one process
        for name, res in list(results.items()):
            if res.records:
                results[name] = dataclasses.replace(
                    res, records=input_row_records(res.records, dt, name))  # type: ignore[arg-type]
        for name, reason in dict(run_config.unavailable or {}).items():
            entries.setdefault(name, {"params": {}, "status": "skipped", "reason": reason, "seconds": 0.0})
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
        results, verdict = assess(results, rule, has_control=dt.has_control, seed=seed,
                                  metrics={n: run_config.metric_of(n) for n in results})
        return Report(header, entries, results, verdict)
    finally:
        if own:
            cluster = getattr(client, "cluster", None)
            client.close()
            if cluster is not None:
                cluster.close()
