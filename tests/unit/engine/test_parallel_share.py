"""Concurrent metrics' kernels on a share of the cores (``engine.parallel.share_cores``): the gate
around kernel launches, numba's per-thread thread count, and the same searches either way."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from synthguard.engine import parallel

numba = pytest.importorskip("numba")


def _in_thread(fn):
    out: dict = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
            out["error"] = exc

    t = threading.Thread(target=run)
    t.start()
    t.join(timeout=60)
    assert not t.is_alive()
    if "error" in out:
        raise out["error"]
    return out["value"]


def test_a_sharing_thread_enters_the_kernel_gate_while_another_thread_holds_it():
    """An ordinary thread waits for the gate another thread holds (one kernel on every core at a
    time); a metric thread whose kernels share the cores goes through without waiting."""
    if not parallel._thread_safe_layer():
        pytest.skip("numba's threading layer is not thread-safe here: kernels stay one at a time")
    entered = threading.Event()
    release = threading.Event()

    def holder():
        with parallel.PARALLEL_KERNELS:
            entered.set()
            release.wait(30)

    h = threading.Thread(target=holder)
    h.start()
    assert entered.wait(30)
    try:
        def ordinary():
            got = parallel._ONE_AT_A_TIME.acquire(timeout=0.2)
            if got:
                parallel._ONE_AT_A_TIME.release()
            return got

        def sharing():
            assert parallel.share_cores(2)
            with parallel.PARALLEL_KERNELS:
                with parallel.PARALLEL_KERNELS:  # nested launches too
                    return numba.get_num_threads()

        assert _in_thread(ordinary) is False
        assert _in_thread(sharing) == max(1, numba.config.NUMBA_NUM_THREADS // 2)
    finally:
        release.set()
        h.join(30)
    # the main thread kept its own thread count and still takes the lock
    assert numba.get_num_threads() == numba.config.NUMBA_NUM_THREADS
    assert not getattr(parallel._LOCAL, "share", False)


def test_share_cores_is_a_no_op_for_one_job():
    """One metric at a time keeps every core and the gate's lock."""
    assert _in_thread(lambda: (parallel.share_cores(1), getattr(parallel._LOCAL, "share", False))) == (False, False)


def test_a_search_on_a_share_of_the_cores_equals_the_search_on_every_core():
    """The tree search and the radius counts give the same bytes from a thread whose kernels run on
    a share of the cores as from the main thread on every core (each query writes its own output)."""
    from synthguard.data.encoding import Block
    from synthguard.engine.neighbors import count_within, gower, kneighbors

    rng = np.random.default_rng(3)

    def block(n):
        return Block(rng.normal(size=(n, 3)), rng.integers(0, 4, (n, 2)).astype(np.int64),
                     ("a", "b", "c"), ("d", "e"))

    q, r = block(3000), block(5000)
    m = gower(np.full(3, 6.0), clip=True, normalise=True)
    want = kneighbors(q, r, m, 3, backend="numba")
    want_c = count_within(q, r, m, 0.1, backend="numba")

    def shared():
        parallel.share_cores(2)
        return kneighbors(q, r, m, 3, backend="numba"), count_within(q, r, m, 0.1, backend="numba")

    got, got_c = _in_thread(shared)
    assert got.distances.tobytes() == want.distances.tobytes()
    assert got.indices.tobytes() == want.indices.tobytes()
    assert got_c.tobytes() == want_c.tobytes()


def test_a_metric_running_alone_launches_its_kernels_on_every_core():
    """Kernels take the cores divided by the metrics running at each launch (``sharing``): two
    metrics at once get half each; the one left running (the end of a run) gets every core."""
    if not parallel._thread_safe_layer():
        pytest.skip("numba's threading layer is not thread-safe here: kernels stay one at a time")
    every = numba.config.NUMBA_NUM_THREADS
    both_in = threading.Barrier(2, timeout=30)
    first_out = threading.Event()
    seen: dict[str, list[int]] = {"a": [], "b": []}

    def metric(name):
        def run():
            with parallel.sharing(2):
                both_in.wait()
                with parallel.PARALLEL_KERNELS:
                    seen[name].append(numba.get_num_threads())
                both_in.wait()  # both launched side by side
                if name == "a":
                    return
                first_out.wait(30)
                with parallel.PARALLEL_KERNELS:  # "a" has finished: "b" runs alone
                    seen[name].append(numba.get_num_threads())
        return run

    def finish_a():
        metric("a")()
        first_out.set()

    ta = threading.Thread(target=finish_a)
    ta.start()
    _in_thread(metric("b"))
    ta.join(30)
    assert seen["a"] == [max(1, every // 2)]
    assert seen["b"] == [max(1, every // 2), every]
    assert parallel._RUNNING[0] == 0
