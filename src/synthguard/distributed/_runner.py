"""The Dask backend metrics run through over partitions (the metrics whose card says
``backend="any"``), and the Dask client (:func:`make_client`). The run itself (loop, entries, report) is
:func:`synthguard.run.cluster.run_on_cluster`, the same executor and loop as in one process."""

from __future__ import annotations

from typing import Any

from ..errors import ConfigError
from ._deps import require_dask


def make_client(scheduler: str | None = None, workers: int | None = None, *,
                threads_per_worker: int = 1, memory_limit: str | int | None = None, processes: bool = True) -> Any:
    """A ``distributed.Client``: connected to ``scheduler`` (``tcp://host:8786``), else on a new
    ``LocalCluster`` of ``workers`` workers, each capped at ``memory_limit`` (``"4GB"``, or bytes;
    ``None``: Dask's default, the machine's memory shared among the workers); a size Dask cannot
    read is a :class:`~synthguard.errors.ConfigError`."""
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
        from dask.utils import parse_bytes

        try:
            kwargs["memory_limit"] = int(parse_bytes(memory_limit))
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"memory limit {memory_limit!r}: give a size such as 4GB or 500MiB") from exc
    return Client(LocalCluster(**kwargs))


def cluster_backend(dt: Any, backend: str = "auto") -> Any:
    """The Dask backend of the partitioned tables ``dt`` (the context's ``data_backend``: the
    metrics whose card says ``backend="any"`` run their own code through it)."""
    from ._backend import dask_backend

    return dask_backend(dt, backend)

