"""Scale-out on Dask (``dask.distributed``): the same evaluation over partitioned tables.

Inputs are partitioned Parquet datasets (a folder or a glob), dask DataFrames, or pandas DataFrames
(split into partitions). Vocabularies and ranges are computed across partitions; exact-row metrics
run as group-bys and joins on a 128-bit row hash; the neighbour engine runs as a map over
(query partition x reference partition) with a top-k merge per query. Every number equals the
single-process result for the same seed (``tests/integration/dask/``).

Dask is an optional extra: ``pip install 'synthguard[dask]'``. Nothing here is imported by
``import synthguard``.
"""

from __future__ import annotations

from ._deps import require_dask
from ._runner import SUPPORTED, evaluate_distributed, make_client

__all__ = ["SUPPORTED", "evaluate_distributed", "make_client", "require_dask"]
