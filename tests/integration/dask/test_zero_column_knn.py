"""Neighbour searches over no column on a cluster equal one process's (issue 31).

A text-only release has no tabular column: the row-level metrics then search neighbours over zero
columns, where every distance is the same and ties go to the lower index. The partitioned search
used to fail there (an empty tree); it now answers on the driver as one process does.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from synthguard import evaluate

from ...helpers import without_seconds

pytest.importorskip("dask.dataframe", reason="dask is not installed: pip install 'synthguard[dask]'")
pytest.importorskip("distributed", reason="distributed is not installed: pip install 'synthguard[dask]'")

_WORDS = np.array("the a cat dog sat on mat ran far home blue red".split())


def _texts(r: np.random.Generator, n: int) -> pd.DataFrame:
    return pd.DataFrame({"note": [" ".join(r.choice(_WORDS, 6)) for _ in range(n)]})


def test_partitioned_search_over_no_column_equals_engine(dask_client):
    from synthguard.data.encoding import EncodedView
    from synthguard.data.tables import prepare_tables
    from synthguard.distributed._knn import kneighbors_distributed
    from synthguard.distributed._tables import load_tables
    from synthguard.engine.neighbors import gower, kneighbors

    r = np.random.default_rng(4)
    orig = pd.DataFrame({"u": r.integers(0, 3, 40).astype(float)})
    syn = pd.DataFrame({"u": r.integers(0, 3, 13).astype(float)})
    meta = {"columns": {"u": {"sdtype": "numerical"}}}
    view = EncodedView(prepare_tables(orig, syn, None, meta).in_canonical_order())
    metric = gower(view.ranges([]), clip=True, normalise=True)
    dt = load_tables(orig, syn, None, meta, client=dask_client, npartitions=4)
    ref = view.block("original", [])
    for k in (1, 3, 45):  # 45: more neighbours than rows (inf, -1)
        for q, exclude in (("synthetic", False), ("original", True)):
            want = kneighbors(view.block(q, []), ref, metric, k, exclude_self=exclude)
            for backend in ("auto", "numpy"):
                d, i = kneighbors_distributed(dt, q, "original", [], metric, k, backend=backend)
                np.testing.assert_array_equal(d, want.distances)
                np.testing.assert_array_equal(i, want.indices)
        for subset in (np.arange(5, 30, 2), np.array([17, 3, 25, 8])):  # sorted, any order
            want = kneighbors(view.block("synthetic", []), ref.take(subset), metric, k)
            d, i = kneighbors_distributed(dt, "synthetic", "original", [], metric, k, reference_rows=subset)
            np.testing.assert_array_equal(d, want.distances)
            np.testing.assert_array_equal(i, want.indices)
        block = view.block("synthetic", []).take(np.arange(7))
        want = kneighbors(block, ref, metric, k)
        d, i = kneighbors_distributed(dt, "synthetic", "original", [], metric, k, query_block=block)
        np.testing.assert_array_equal(d, want.distances)
        np.testing.assert_array_equal(i, want.indices)


@pytest.mark.metric_on_dask
def test_text_only_release_equals_one_process(dask_client):
    """Row-level metrics of a text-only release (exact copies of the original's texts inside): the
    same entries and verdict on a cluster as in one process."""
    r = np.random.default_rng(0)
    orig, ctl = _texts(r, 200), _texts(r, 200)
    syn = pd.concat([_texts(r, 180), orig.iloc[:20]], ignore_index=True)
    meta = {"columns": {"note": {"sdtype": "text"}}}
    metrics = {"exact_matches": {}, "near_copies": {}, "text_exact_matches": {}}
    single = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=1)
    dist = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=1, client=dask_client)
    for name in metrics:
        assert dist[name]["status"] == "ok", (name, dist[name].get("reason"), dist[name].get("error"))
        assert json.dumps(without_seconds(dict(single[name])), sort_keys=True, default=str) == \
            json.dumps(without_seconds(dict(dist[name])), sort_keys=True, default=str), name
    assert single.to_dict()["verdict"]["level"] == dist.to_dict()["verdict"]["level"]
