"""Compiled kernel of the joint label permutation (:mod:`synthguard.stats.maxt`).

Compiled on first use without an on-disk cache (nothing is written next to the package).
"""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=False, nogil=True)
def urn_counts(seed: int, reps: int, indptr: np.ndarray, tests: np.ndarray, n1: int, big_n: int,
               n_tests: int) -> np.ndarray:  # pragma: no cover - compiled
    """Member count of every test under ``reps`` relabellings (numba's generator, seeded here).

    The labels of the flagged records are drawn one after another from an urn of ``n1`` members
    among ``big_n`` records (record ``i`` is a member with probability members left / records
    left): exactly the labels a uniformly random relabelling gives them. Record ``i`` is flagged
    by tests ``tests[indptr[i]:indptr[i + 1]]``.
    """
    np.random.seed(seed)  # noqa: NPY002 - numba's own generator, seeded per call
    u = indptr.size - 1
    # per test, the records it flags (ascending): a test's count is a sum over its records
    start = np.zeros(n_tests + 1, dtype=np.int64)
    for p in range(tests.size):
        start[tests[p] + 1] += 1
    start = np.cumsum(start)
    fill = start[:-1].copy()
    recs = np.empty(tests.size, dtype=np.int64)
    for i in range(u):
        for p in range(indptr[i], indptr[i + 1]):
            recs[fill[tests[p]]] = i
            fill[tests[p]] += 1
    out = np.zeros((reps, n_tests), dtype=np.int64)
    lab = np.empty(u, dtype=np.int64)
    for b in range(reps):
        # one draw per record, in record order: np.random.random(u) is the stream that u calls of
        # np.random.random() read (the same labels as drawing them one at a time), and the labels
        # are set without a branch (a coin-flip branch mispredicts half the time)
        r = np.random.random(u)  # noqa: NPY002
        ones = n1
        left = big_n
        for i in range(u):
            m = r[i] * left < ones
            lab[i] = m
            ones -= m
            left -= 1
        for j in range(n_tests):  # sums into a register, not one memory cell added to again and again
            s = 0
            for q in range(start[j], start[j + 1]):
                s += lab[recs[q]]
            out[b, j] = s
    return out
