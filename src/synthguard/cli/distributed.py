"""The ``--scheduler`` / ``--workers`` branch of ``synthguard evaluate``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ConfigError


def run_distributed(original: Path, synthetic: tuple[Path, ...], control: Path | None, metadata: Path | None,
                    options: Any, scheduler: str | None, workers: int | None, json_path: Path | None,
                    html_path: Path | None, write_outputs: Callable[..., None], *,
                    worker_memory: str | None = None) -> Any:
    """Evaluate one release on a Dask cluster with the command's ``options`` (an
    :class:`~synthguard.run.options.EvaluateOptions`; the run refuses, by name, any it cannot honour)
    and print / write the report (``worker_memory``: each local worker's memory limit, e.g.
    ``"4GB"``, with ``workers``)."""
    from ..api import evaluate
    from ..distributed import make_client, require_dask

    require_dask("--scheduler / --workers")
    if scheduler and workers:
        raise ConfigError("give either --scheduler (an existing cluster) or --workers (a local cluster), "
                          "not both")
    if len(synthetic) > 1:
        raise ConfigError("a distributed run evaluates one release: give one --synthetic")
    client = make_client(scheduler, workers, memory_limit=worker_memory)
    try:
        as_arg = (lambda t: str(t) if isinstance(t, Path) else t)  # noqa: E731 - sources stay objects
        report: Any = evaluate(as_arg(original), as_arg(synthetic[0]), as_arg(control), metadata,
                               options=options.replace(client=client))
    finally:
        cluster = getattr(client, "cluster", None) if not scheduler else None
        client.close()
        if cluster is not None:
            cluster.close()
    from .output import say

    say(report.to_console())
    write_outputs(report, json_path, html_path)
    return report
