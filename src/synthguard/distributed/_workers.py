"""The cluster's workers as the scheduler knows them now."""

from __future__ import annotations

from typing import Any

__all__ = ["cluster_workers"]


def cluster_workers(client: Any) -> dict[str, dict]:
    """Every worker of the cluster now, by address, with what the scheduler knows of it (memory
    limit, held bytes). Asked of the scheduler each call, for all of them: older distributed
    (2026.1.1 among them) reports five workers unless asked for all (``n_workers=-1``), so a larger
    cluster would be miscounted and a lost worker past the fifth not seen.

    Examples
    --------
    >>> class Client:  # an older distributed's client, with seven workers
    ...     def scheduler_info(self, n_workers=5):
    ...         return {"workers": {f"tcp://w{i}": {} for i in range(7)[:None if n_workers < 0 else n_workers]}}
    >>> len(cluster_workers(Client()))
    7
    """
    import inspect

    takes = "n_workers" in inspect.signature(client.scheduler_info).parameters
    info = client.scheduler_info(n_workers=-1) if takes else client.scheduler_info()
    return dict(info.get("workers", {}))
