"""Scale-out on Dask (``dask.distributed``): the same evaluation over partitioned tables.

Inputs are partitioned Parquet datasets (a folder or a glob), dask DataFrames, or pandas DataFrames
(split into partitions). Vocabularies and ranges are computed across partitions. The metrics run
their own code on a context whose backend (:class:`synthguard.engine.backend.Backend`) is
:class:`~._backend.DaskBackend`: key groups and lookups as group-bys and joins on a 128-bit row
hash, the neighbour engine in waves over trees of reference partitions. Every number equals the
single-process result for the same seed (``tests/integration/dask/``).

Dask is an optional extra: ``pip install 'synthguard[dask]'``. Nothing here is imported by
``import synthguard``; ``synthguard.evaluate(client=...)`` runs it
(:func:`synthguard.run.cluster.run_on_cluster`).
"""

from __future__ import annotations

from ._deps import require_dask
from ._runner import cluster_backend, make_client
from ._workers import cluster_workers

__all__ = ["cluster_backend", "cluster_workers", "make_client", "require_dask"]
