"""A small in-process Dask cluster for the distributed equality tests (skipped without Dask)."""

from __future__ import annotations

import logging

import pytest


@pytest.fixture(scope="session")
def dask_client():
    """``LocalCluster(n_workers=2, threads_per_worker=1, processes=False)`` shared by the tests."""
    pytest.importorskip("dask.dataframe", reason="dask is not installed: pip install 'synthguard[dask]'")
    distributed = pytest.importorskip("distributed",
                                      reason="distributed is not installed: pip install 'synthguard[dask]'")
    logging.getLogger("distributed.shuffle").setLevel(logging.ERROR)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=None)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()
