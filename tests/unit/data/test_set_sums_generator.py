"""A column-set hash generator dropped before its end and finalised in another thread leaves
numpy's error state alone: nothing is raised into the interpreter's unraisable hook (the 10M run
printed "ValueError: <Token ...> was created in a different Context" from ``iter_set_sums``)."""

from __future__ import annotations

import gc
import sys
import threading

import numpy as np

from synthguard.data.hashing import cell_hashes, iter_set_sums


def test_a_dropped_set_sums_generator_finalised_in_another_thread_raises_nothing(monkeypatch):
    cells = cell_hashes(np.arange(40).reshape(10, 4), np.arange(4, dtype=np.uint64))
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append(u))
    holder = []

    def start():  # each branch of the generator left suspended at its first yield
        for sets in ([[0]], [[0, 1, 2]]):
            gen = iter_set_sums(cells, sets)
            next(gen)
            holder.append(gen)

    t = threading.Thread(target=start)
    t.start()
    t.join()

    def finish():
        holder.clear()  # the last references dropped here: the generators are closed in this thread
        gc.collect()

    t = threading.Thread(target=finish)
    t.start()
    t.join()
    assert seen == [], [str(u.exc_value) for u in seen]
