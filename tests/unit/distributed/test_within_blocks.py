"""A partition's pairs within a radius are searched a block of rows at a time with the pairs of
the whole partition at once."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("dask", reason="dask is not installed: pip install 'synthguard[dask]'")


def test_pairs_within_a_radius_are_the_same_searched_in_row_blocks(monkeypatch):
    from synthguard.data.encoding import Encoder
    from synthguard.data.schema import infer_schema
    from synthguard.distributed import _backend
    from synthguard.engine.neighbors import gower

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(size=200), "y": rng.normal(size=200),
                          "c": rng.choice(["a", "b", "c"], 200)})
    enc = Encoder(infer_schema(frame, {"columns": {"c": {"sdtype": "categorical"}}}))
    enc.learn(frame, ["c"])
    cols = ("c", "x", "y")
    ref = enc.encode(frame.iloc[:20], list(cols))
    positions = rng.permutation(1000)[:200]  # canonical positions of the partition's rows
    radius = np.full(1000, -1.0)
    radius[positions] = rng.uniform(-0.1, 0.3, 200)  # some rows take no part
    metric = gower(np.array([4.0, 4.0]))
    whole = _backend._within_part(enc, frame, positions, cols, ref, radius, metric, "numpy")
    monkeypatch.setattr(_backend, "BLOCK_ROWS", 7)
    blocks = _backend._within_part(enc, frame, positions, cols, ref, radius, metric, "numpy")
    assert whole[0].size > 20
    order = [np.lexsort((g[1], g[2], g[0])) for g in (whole, blocks)]
    for a, b in zip(whole, blocks, strict=True):
        np.testing.assert_array_equal(a[order[0]], b[order[1]])
