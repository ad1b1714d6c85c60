"""Work a cluster run does once, not once per training record: the interpolation leak rows' nearest
training records are searched for their few sources only. The numbers stay one process's."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from synthguard import evaluate

from ...helpers import without_seconds
from .test_distributed_equality import META, _frame

pytest.importorskip("dask.dataframe", reason="dask is not installed: pip install 'synthguard[dask]'")
pytest.importorskip("distributed", reason="distributed is not installed: pip install 'synthguard[dask]'")


def test_interpolation_partners_search_only_their_sources_on_a_cluster(dask_client, monkeypatch):
    """The interpolation family's leak rows read each source's nearest other training record: on a
    cluster the sources (a few rows) are the queries, never every training record (the whole-table
    search cost 70 s at 100,000 rows for a few thousand sources); the entries and the detection
    limits are one process's."""
    from synthguard.distributed._backend import DaskBackend

    searched: list[tuple[str, str, int | None]] = []
    whole, block = DaskBackend.kneighbors, DaskBackend.kneighbors_block

    def whole_search(self, query, reference, *args, **kwargs):
        searched.append((query, reference, None))
        return whole(self, query, reference, *args, **kwargs)

    def block_search(self, query, reference, *args, **kwargs):
        searched.append(("block", reference, query.n_rows))
        return block(self, query, reference, *args, **kwargs)

    from synthguard.metrics import _leakrows

    monkeypatch.setattr(_leakrows, "MIN_CANDIDATES", 40)  # 40 sources a family, in both runs
    monkeypatch.setattr(DaskBackend, "kneighbors", whole_search)
    monkeypatch.setattr(DaskBackend, "kneighbors_block", block_search)
    orig = _frame(400, 11)
    syn = pd.concat([_frame(360, 12), orig.iloc[:4]], ignore_index=True)
    ctl = _frame(400, 13)
    single = evaluate(orig, syn, ctl, META, metrics=["exact_matches"], seed=7)
    dist = evaluate(orig, syn, ctl, META, metrics=["exact_matches"], seed=7, client=dask_client)
    assert ("original", "original", None) not in searched
    blocks = [n for q, r, n in searched if q == "block" and r == "original"]
    assert blocks == [40]  # the interpolation family's sources, not the 400 training records
    a, b = (json.dumps(without_seconds(dict(r["exact_matches"])), sort_keys=True, default=str)
            for r in (single, dist))
    assert a == b
    limits = [json.dumps(r.to_dict()["verdict"]["detection_limits"], sort_keys=True, default=str)
              for r in (single, dist)]
    assert limits[0] == limits[1]
    assert "interpolation" in single.to_dict()["verdict"]["detection_limits"]
