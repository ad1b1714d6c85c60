"""In one process the trio's canonical release rows and the release rows behind its findings come
from one hashing of the release (``_common._release_groups``): the same rows as the backend's
``distinct_order`` and as hashing the release again."""

from __future__ import annotations

import numpy as np
import pandas as pd

import synthguard.metrics.anonymeter._common as common
from synthguard.data import hashing
from synthguard.data.hashing import row_hashes
from synthguard.engine.backend import LocalBackend
from synthguard.registry import Context

from ....helpers import counted_row_hashes


def _ctx() -> Context:
    rng = np.random.default_rng(3)
    n = 300
    syn = pd.DataFrame({"a": rng.integers(0, 4, n), "b": rng.choice(["x", "y", "z"], n),
                        "c": np.round(rng.normal(size=n), 1)})
    real = syn.sample(frac=1.0, random_state=1).reset_index(drop=True)
    return Context.from_frames(real, syn, real.iloc[:100].reset_index(drop=True), canonical=False)


def test_the_release_is_hashed_once_for_its_canonical_rows_and_its_findings_rows(monkeypatch):
    ctx = _ctx()
    cols = ["a", "b", "c"]
    # every name the release could be hashed through: the hashing module (the backend's
    # distinct_order, distinct_groups) and the trio's module
    calls = counted_row_hashes(monkeypatch, hashing, common)
    canon = common.canonical(ctx, "synthetic", cols)
    pairs = common.release_ties(ctx, cols, np.array([0, 1]), np.array([0, 2]), "nearest row")
    assert calls == [len(ctx.tables.synthetic)]  # one hashing of the release for both
    backend = LocalBackend(ctx.tables, ctx.encoded, ctx.backend, ctx.memo)
    assert np.array_equal(canon.rows, backend.distinct_order("synthetic", cols))
    h = row_hashes(ctx.tables.synthetic[cols])
    of_row = np.unique(h, return_inverse=True)[1].ravel()
    # every release row with the distinct row's content, for each finding
    for record, distinct in ((0, 0), (1, 2)):
        want = np.flatnonzero(of_row == distinct)
        got = pairs.row[pairs.record == record]
        assert np.array_equal(np.sort(got), want)
