"""The attack targets' nearest release rows read from the search of every real record equal a
search of the targets themselves (linkability and inference read them so)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from synthguard.metrics.anonymeter import _common as C
from synthguard.registry import Context


def _tables(seed: int = 0, n: int = 600):
    rng = np.random.default_rng(seed)

    def table(m: int) -> pd.DataFrame:
        return pd.DataFrame({"age": rng.integers(18, 90, m).astype(float), "score": rng.normal(size=m).round(2),
                             "edu": rng.choice(list("abcd"), m), "region": rng.choice(list("pqrstu"), m)})

    return table(n), table(n), table(n // 2)


def _targets(ctx: Context, seed: int) -> list[tuple[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    tab = C.tabular_columns(ctx)
    out = []
    for role in ("original", "control"):
        canon = C.canonical(ctx, role, tab)
        out.append((role, canon.rows[np.sort(rng.choice(canon.n, 50, replace=False))]))
    return out


def test_targets_read_from_every_records_search_equal_their_own_search(monkeypatch):
    ori, syn, ctl = _tables()
    ctx = Context.from_frames(ori, syn, ctl, seed=0)
    targets = _targets(ctx, 1)
    real = C.neighbours_among
    calls: list[list[str]] = []

    def counted(c, queries, *args, **kwargs):
        calls.append([r for r, _ in queries])
        return real(c, queries, *args, **kwargs)

    for cols, k in ((["age", "edu"], 1), (["score", "region", "edu"], 3)):
        want = real(ctx, targets, cols, k)
        calls.clear()
        with monkeypatch.context() as m:
            m.setattr(C, "neighbours_among", counted)
            got = C.target_neighbours(ctx, targets, cols, k, pooled=True)
        assert calls == [["original", "control"]]  # the pooled search is the only one made
        assert np.array_equal(got[1], want[1]) and np.array_equal(got[0], want[0])


def test_targets_are_searched_when_their_value_ranges_differ_from_every_records():
    # a training record far outside every other value: the targets' distance is not the pooled one
    ori, syn, ctl = _tables(2)
    ori.loc[0, "score"] = 1e6
    ctx = Context.from_frames(ori, syn, ctl, seed=0)
    targets = [(r, rows[rows != 0] if r == "original" else rows) for r, rows in _targets(ctx, 3)]
    want = C.neighbours_among(ctx, targets, ["score", "edu"], 2)
    got = C.target_neighbours(ctx, targets, ["score", "edu"], 2, pooled=True)
    assert np.array_equal(got[1], want[1]) and np.array_equal(got[0], want[0])
    pooled = C.pooled_search(ctx, ["score", "edu"], 2)
    start = {"original": 0, "control": len(ori)}
    at = np.concatenate([start[r] + rows for r, rows in targets])
    assert not np.array_equal(pooled[0][at], want[0])  # the pooled distances differ here
