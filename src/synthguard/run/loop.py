"""What a run in one process (:mod:`.runner`) and a run on a Dask cluster (:mod:`.cluster`) share:
the loop over the run's metrics (:func:`run_all`) and the report's header (:func:`run_header`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._version import __version__
from ..engine.memory import release_free_memory
from ..engine.parallel import resolve_jobs, sharing
from ..errors import ConfigError
from ..registry import Context, metric_info
from .config import RunConfig
from .executor import Entry

# families whose metrics run one at a time after the others: spaCy may fork worker processes
# (n_process), which must not happen while other threads run
SERIAL_FAMILIES = frozenset({"text"})

__all__ = ["SERIAL_FAMILIES", "check_run_config", "run_all", "run_header"]


def check_run_config(run_config: Any) -> RunConfig:
    """``run_config`` when it is a :class:`~synthguard.run.config.RunConfig`, else one line saying
    how to make one."""
    if not isinstance(run_config, RunConfig):
        raise ConfigError(f"a run needs a RunConfig (synthguard.run.config.build_config makes one), "
                          f"got {type(run_config).__name__}")
    return run_config


def run_header(seed: int, run_config: RunConfig, *, inputs: Mapping[str, Any], inferred: Any,
               schema: Mapping[str, Any], engine: Mapping[str, Any] | None = None,
               original_stats: Mapping[str, Any] | None = None, warnings: list[Any] | None = None,
               extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The report's header, in its one order: version, seed, engine, inputs, the original's
    statistics, inferred metadata, warnings, schema, configuration, then ``extra`` (the entity
    summary, the cluster). A section given as ``None`` is left out."""
    header: dict[str, Any] = {"synthguard_version": __version__, "seed": seed}
    if engine is not None:
        header["engine"] = dict(engine)
    header["inputs"] = dict(inputs)
    if original_stats is not None:
        header["original_stats"] = dict(original_stats)
    header["inferred_metadata"] = inferred
    if warnings is not None:
        header["warnings"] = list(warnings)
    header["schema"] = dict(schema)
    header["config"] = run_config.to_dict()
    header.update(extra or {})
    return header


def run_all(names: list[str], one: Callable[[str], Entry], run_config: RunConfig, ctx: Context, *,
            jobs: int | None, progress: bool,
            on_progress: Callable[[str, int, int], Any] | None) -> dict[str, Entry]:
    """Every metric of the run through ``one``, ``jobs`` at once (threads), with the progress bar
    and ``on_progress`` after each; the entries in the configured order, whatever order the metrics
    finished in. Memos no pending metric needs are dropped as metrics finish (``ctx`` comes from
    :meth:`Context.for_run` with the metrics of ``names``; a memo's users are metrics, and a named
    run may run one metric under several names)."""
    rows = max((len(ctx.tables.get(r)) for r in ctx.tables.roles), default=0) if jobs is None else None
    n_jobs = min(resolve_jobs(jobs, rows), max(1, len(names)))
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
                  and metric_info(run_config.metric_of(n)).family not in SERIAL_FAMILIES]
    if len(concurrent) > 1:
        from concurrent.futures import ThreadPoolExecutor, as_completed

        pool = ThreadPoolExecutor(max_workers=n_jobs, thread_name_prefix="synthguard-metric")
        try:
            def one_sharing(name: str) -> Entry:
                # the metric's kernels on its share of the cores, beside the other metrics' kernels
                with sharing(n_jobs):  # every core again once it runs alone
                    return one(name)

            futures = {pool.submit(one_sharing, name): name for name in concurrent}
            pending = set(names)
            for fut in as_completed(futures):
                done[futures[fut]] = fut.result()
                pending.discard(futures[fut])
                ctx.release_memos({run_config.metric_of(n) for n in pending})
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
        ctx.release_memos({run_config.metric_of(n) for n in names if n not in done})
        release_free_memory()  # what the metric freed goes back to the OS (lower peak; same numbers)
        finished(name)
    if bar is not None:
        bar.close()
    return {name: done[name] for name in names}
