"""The run's one memo (issue #24): reached only through ``Context.memo``, one name, no raw dict."""

from __future__ import annotations

import threading

import pandas as pd

from synthguard.registry import Context, get_metric


def _ctx() -> Context:
    frame = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]})
    return Context.from_frames(frame, frame.iloc[:2])


def test_memo_computes_an_entry_once_and_returns_it_after():
    ctx = _ctx()
    calls = []
    assert ctx.memo("k", lambda: calls.append(1) or "v") == "v"
    assert ctx.memo("k", lambda: calls.append(1) or "w") == "v"
    assert calls == [1]


def test_memo_computes_once_when_threads_ask_for_the_same_key_together():
    ctx = _ctx()
    calls = []
    gate = threading.Barrier(8)

    def compute():
        calls.append(1)
        return object()

    got = []

    def worker():
        gate.wait()
        got.append(ctx.memo("shared", compute))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert all(g is got[0] for g in got)


def test_contexts_derived_for_a_metric_share_the_memo_of_their_run():
    ctx = _ctx().for_run(["dcr", "nndr"])
    ctx.memo("k", lambda: 1)
    part = ctx.for_metric(get_metric("dcr"))
    assert part.memo("k", lambda: 2) == 1
    assert part.run_metrics == ("dcr", "nndr")


def test_for_run_gives_a_fresh_memo_and_the_run_metric_list():
    ctx = _ctx()
    assert ctx.run_metrics == ()
    ctx.memo("k", lambda: 1)
    run = ctx.for_run(["dcr", "exact_matches"])
    assert run.run_metrics == ("dcr", "exact_matches")
    assert run.memo("k", lambda: 2) == 2
    assert ctx.memo("k", lambda: 3) == 1


def test_release_drops_entries_once_their_declared_users_finished_and_keeps_the_rest():
    ctx = _ctx().for_run(["a", "b", "c"])
    ctx.memo("for_a_b", lambda: 1, users=("a", "b"))
    ctx.memo("undeclared", lambda: 2)
    ctx.release_memos({"b", "c"})
    assert ctx.memo("for_a_b", lambda: 10) == 1
    ctx.release_memos({"c"})
    assert ctx.memo("for_a_b", lambda: 10) == 10
    assert ctx.memo("undeclared", lambda: 20) == 2


def test_the_memo_has_one_name_no_cache_dict_beside_it():
    ctx = _ctx()
    assert not hasattr(ctx, "cache")
    assert "cache" not in Context.__dataclass_fields__
