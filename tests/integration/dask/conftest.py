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


@pytest.fixture(scope="package", autouse=True)
def _collections_scan_only_the_tests_objects():
    """The collection after each test (:func:`_cluster_settled_between_tests`) freezes what
    outlives the test (``gc.freeze``: the session's modules, fixtures and reports), so the next
    one scans only the objects made since: in a whole suite's process a full collection grew to
    1-2 s a test (121 teardowns of over a second, 178.5 s in all, in the newest suite of one CI
    run). Over the 17 tests of test_whole_text_types.py alone the collections took 0.15-0.42 s
    each before; after, 0.19 s for the first (the whole heap, then frozen) and 0.00-0.13 s
    (median 0.03 s) for the 16 others. The collections Python makes by itself during a test scan
    less too: one CI run each, before (5e0da8c, with ``--durations=0`` added) and after
    (7e541ff), the newest suite took 50:43 and 42:01, its heaviest Dask test 172.6 s and 88.3 s.
    A frozen object is still freed when its last reference goes (only cycles
    wait); after the last Dask test everything is thawed, so the tests that follow collect as
    before."""
    import gc

    yield
    gc.unfreeze()


#: how long after a test the shared cluster may take to forget that test's keys (seconds)
SETTLE_SECONDS = 5.0


@pytest.fixture(autouse=True)
def _cluster_settled_between_tests(request):
    """After a test on the shared cluster, its keys are forgotten before the next test starts.

    Dask's keys are content hashes, so two tests building the same tables ask for the same keys;
    a key the previous test's objects release (when they are collected) while the next test's
    graph reads it is cancelled as "lost dependencies" (a race of distributed's, seen in CI on the
    drop-list questions). The objects are collected here and the scheduler asked until it holds
    no task the client no longer holds."""
    yield
    if "dask_client" not in request.fixturenames:
        return
    import gc
    import time

    client = request.getfixturevalue("dask_client")
    gc.collect()
    gc.freeze()  # what outlives this test is not scanned again (see the package fixture above)
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        held = client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))
        if held <= len(client.futures) or time.monotonic() > deadline:
            return
        time.sleep(0.02)
