"""A cluster of more than five workers is seen whole: older distributed reports five unless asked
for all, which miscounted the report's workers and could not see a lost sixth."""

from __future__ import annotations

import pytest

from synthguard import evaluate

from .test_distributed_equality import META, _frame

distributed = pytest.importorskip("distributed",
                                  reason="distributed is not installed: pip install 'synthguard[dask]'")


def test_a_run_on_seven_workers_counts_seven_and_watches_each():
    from synthguard.run.cluster import worker_ids

    with distributed.LocalCluster(n_workers=7, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        client.wait_for_workers(7)
        report = evaluate(_frame(40, 0), _frame(40, 1), None, META, metrics=["exact_matches"],
                          client=client).to_dict()
        assert report["distributed"]["workers"] == 7
        assert len(worker_ids(client)) == 7
