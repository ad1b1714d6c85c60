"""The label-free release neighbours (metrics/privacy/_labelfree.py): one search per real role and
run, whichever tests ask for it, with the answers each test had from its own search."""

from __future__ import annotations

import numpy as np
import pandas as pd

import synthguard
from synthguard.engine.backend import LocalBackend
from synthguard.engine.neighbors import gower
from synthguard.registry import Context


def _tables(seed: int = 0):
    rng = np.random.default_rng(seed)

    def frame(n):
        return pd.DataFrame({"x": rng.normal(size=n).round(1), "y": rng.integers(0, 5, n),
                             "c": rng.choice(list("abcd"), n)})

    o = frame(300)
    return o, pd.concat([o.head(30), frame(270)], ignore_index=True), frame(150)


def test_close_neighbours_and_the_dcr_evidence_share_one_release_search_per_real_role(monkeypatch):
    calls = []
    search = LocalBackend.kneighbors

    def counted(self, query, reference, *args, **kwargs):
        if not any(v is not None for v in kwargs.values()):  # whole tables (not some rows)
            calls.append((query, reference))
        return search(self, query, reference, *args, **kwargs)

    monkeypatch.setattr(LocalBackend, "kneighbors", counted)
    o, s, c = _tables()
    rep = synthguard.evaluate(o, s, control=c, metrics=["close_neighbours", "dcr"], seed=0)
    assert all(rep.to_dict()["metrics"][m]["status"] == "ok" for m in ("close_neighbours", "dcr"))
    # before: close_neighbours searched each real role's nearest release row (k=1) and dcr's
    # evidence its two nearest (k=2): four searches of the whole release from the whole real roles
    assert sorted(c for c in calls if c[1] == "synthetic" and c[0] != "synthetic") == \
        [("control", "synthetic"), ("original", "synthetic")]


def test_the_shared_search_gives_the_nearest_release_row_a_search_of_one_gives():
    o, s, c = _tables(1)
    ctx = Context.from_frames(o, s, c)
    from synthguard.metrics.privacy._labelfree import labelfree_setup, release_neighbours

    cols, metric = labelfree_setup(ctx)
    for role in ("original", "control"):
        d2, i2 = release_neighbours(ctx, role)
        d1, i1 = ctx.data.kneighbors(role, "synthetic", cols, metric, 1)
        np.testing.assert_array_equal(d2[:, 0], d1[:, 0])
        np.testing.assert_array_equal(i2[:, 0], i1[:, 0])
    # the metric is the label-free one: ranges of the original and the control together
    want = gower(ctx.data.ranges(cols, ("original", "control")), clip=True, normalise=True)
    assert repr(metric) == repr(want)
