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
    out = np.zeros((reps, n_tests), dtype=np.int64)
    for b in range(reps):
        ones = n1
        left = big_n
        for i in range(u):
            if np.random.random() * left < ones:  # noqa: NPY002
                ones -= 1
                for p in range(indptr[i], indptr[i + 1]):
                    out[b, tests[p]] += 1
            left -= 1
    return out
