"""Compiled kernel of the joint label permutation (:mod:`synthguard.stats.maxt`).

Compiled with numba's on-disk cache, as the engine's kernels are (``__pycache__`` next to the
package, numba's user folder, or the folder :mod:`synthguard._jit` chose when neither is
writable): compiling the urn took ~1.8 CPU s in every run's verdict. Where no folder can hold the
cache the kernels compile once per process, with one warning (:mod:`synthguard._jit`).

The labels are drawn from the stream of numba's own generator seeded per call
(``np.random.seed(seed)`` then ``np.random.random(u)`` per relabelling, as the first version of the
kernel did). :func:`urn_counts` draws the same stream from an implementation of the Mersenne
Twister written here (MT19937 as published by Matsumoto and Nishimura: the seeding, state update,
tempering and 53-bit doubles that numba's generator also uses, so the doubles are equal), a block
of 624 words at a time: the same doubles, drawn without a call and a branch per word.
:func:`numba_stream` (numba's generator itself) is the reference the tests hold it to.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit


def _njit(**options):
    """The package's ``njit`` (:mod:`synthguard._jit`: its on-disk cache, or a temp folder, or
    none with one warning) with ``cache=True, nogil=True``."""
    return njit(cache=True, nogil=True, **options)


_MT_N = 624
_MT_M = 397
_MATRIX_A = 0x9908B0DF
_UPPER = 0x80000000
_LOWER = 0x7FFFFFFF
_MASK32 = 0xFFFFFFFF


@_njit(inline="always")
def _mt_init(seed: int) -> np.ndarray:  # pragma: no cover - compiled
    """The state numba's ``np.random.seed(seed)`` sets (Knuth's initialisation, ``numba_rnd_init``)."""
    mt = np.empty(_MT_N, dtype=np.int64)
    s = seed & _MASK32
    for pos in range(_MT_N):
        mt[pos] = s
        s = (1812433253 * (s ^ (s >> 30)) + pos + 1) & _MASK32
    return mt


@_njit(inline="always")
def _mt_block(mt: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """Advance the state by one block (``numba_rnd_shuffle``) and write its 624 tempered words."""
    for i in range(_MT_N - _MT_M):
        y = (mt[i] & _UPPER) | (mt[i + 1] & _LOWER)
        mt[i] = mt[i + _MT_M] ^ (y >> 1) ^ (_MATRIX_A * (y & 1))
    for i in range(_MT_N - _MT_M, _MT_N - 1):
        y = (mt[i] & _UPPER) | (mt[i + 1] & _LOWER)
        mt[i] = mt[i + _MT_M - _MT_N] ^ (y >> 1) ^ (_MATRIX_A * (y & 1))
    y = (mt[_MT_N - 1] & _UPPER) | (mt[0] & _LOWER)
    mt[_MT_N - 1] = mt[_MT_M - 1] ^ (y >> 1) ^ (_MATRIX_A * (y & 1))
    for i in range(_MT_N):  # tempering, every word at once (no dependency between them)
        y = mt[i]
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C5680
        y ^= (y << 15) & 0xEFC60000
        y ^= y >> 18
        out[i] = y


@_njit(inline="always")
def _scaled_floors(mt: np.ndarray, words: np.ndarray, pos: int, fx: np.ndarray,
                   big_n: int) -> int:  # pragma: no cover - compiled
    """``fx[i] = floor(r_i * (big_n - i))`` for the next ``fx.size`` doubles ``r_i`` of the stream
    (two words each, ``(a >> 5, b >> 6)`` as numba's ``random()``); returns the new word position."""
    u = fx.size
    i = 0
    while i < u:
        if pos >= _MT_N:
            _mt_block(mt, words)
            pos = 0
        n = min((_MT_N - pos) // 2, u - i)  # a double's two words never straddle a block (624 even)
        for t in range(n):
            a = words[pos + 2 * t] >> 5
            b = words[pos + 2 * t + 1] >> 6
            r = (a * 67108864.0 + b) / 9007199254740992.0
            fx[i + t] = np.int64(r * (big_n - i - t))  # r * left >= 0: truncation is the floor
        pos += 2 * n
        i += n
    return pos


@_njit()
def numba_stream(seed: int, n: int) -> np.ndarray:  # pragma: no cover - compiled
    """``n`` doubles of numba's own generator after ``np.random.seed(seed)`` (the reference)."""
    np.random.seed(seed)  # noqa: NPY002 - numba's own generator
    return np.random.random(n)  # noqa: NPY002


@_njit()
def stream_floors(seed: int, reps: int, u: int, big_n: int) -> np.ndarray:  # pragma: no cover
    """Per relabelling (row), ``floor(r * (big_n - i))`` of its ``u`` doubles ``r`` of the stream
    (the kernel's Mersenne Twister: for the tests)."""
    mt = _mt_init(seed)
    words = np.empty(_MT_N, dtype=np.int64)
    out = np.empty((reps, u), dtype=np.int64)
    pos = _MT_N
    for b in range(reps):
        pos = _scaled_floors(mt, words, pos, out[b], big_n)
    return out


@_njit(inline="always")
def _runs(recs: np.ndarray, start: np.ndarray, n_tests: int) -> tuple[np.ndarray, np.ndarray,
                                                                      np.ndarray, np.ndarray]:  # pragma: no cover
    """Per test, its records as runs of consecutive records ``[lo, hi)``, kept for the tests with
    fewer than half as many runs as records (``use``; the others are summed record by record)."""
    use = np.zeros(n_tests, dtype=np.bool_)
    runs_at = np.zeros(n_tests + 1, dtype=np.int64)
    for j in range(n_tests):
        c = 0
        for q in range(start[j], start[j + 1]):
            if q == start[j] or recs[q] != recs[q - 1] + 1:
                c += 1
        use[j] = 2 * c < start[j + 1] - start[j]
        runs_at[j + 1] = runs_at[j] + (c if use[j] else 0)
    lo = np.empty(runs_at[n_tests], dtype=np.int64)
    hi = np.empty(runs_at[n_tests], dtype=np.int64)
    for j in range(n_tests):
        if use[j]:
            w = runs_at[j]
            for q in range(start[j], start[j + 1]):
                if q == start[j] or recs[q] != recs[q - 1] + 1:
                    lo[w] = recs[q]
                    w += 1
                hi[w - 1] = recs[q] + 1
    return use, runs_at, lo, hi


@_njit()
def urn_counts(seed: int, reps: int, indptr: np.ndarray, tests: np.ndarray, n1: int, big_n: int,
               n_tests: int) -> np.ndarray:  # pragma: no cover - compiled
    """Member count of every test under ``reps`` relabellings (numba's generator, seeded here).

    The labels of the flagged records are drawn one after another from an urn of ``n1`` members
    among ``big_n`` records (record ``i`` is a member with probability members left / records
    left): exactly the labels a uniformly random relabelling gives them. Record ``i`` is flagged
    by tests ``tests[indptr[i]:indptr[i + 1]]``. Relabelling ``b`` reads the next ``u`` doubles
    ``r`` of the stream numba's ``np.random.random`` gives after ``np.random.seed(seed)``.
    """
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
    # a test flagging long runs of consecutive records (one flagging nearly every record) is
    # counted per run, from the members drawn before each record: two reads a run
    use_runs, runs_at, lo, hi = _runs(recs, start, n_tests)
    out = np.zeros((reps, n_tests), dtype=np.int64)
    lab = np.empty(u, dtype=np.uint8)
    drawn = np.empty(u + 1, dtype=np.int64)  # members among the records before each one
    fx = np.empty(u, dtype=np.int64)
    mt = _mt_init(seed)
    words = np.empty(_MT_N, dtype=np.int64)
    pos = _MT_N
    for b in range(reps):
        # record i is a member when r * left < ones, i.e. (ones an integer) floor(r * left) < ones:
        # the floors are found first, so the urn's chain is an integer comparison and a subtraction
        pos = _scaled_floors(mt, words, pos, fx, big_n)
        ones = n1
        for i in range(u):
            m = fx[i] < ones
            lab[i] = m
            drawn[i] = n1 - ones
            ones -= m
        drawn[u] = n1 - ones
        for j in range(n_tests):  # sums into a register, not one memory cell added to again and again
            s = 0
            if use_runs[j]:
                for q in range(runs_at[j], runs_at[j + 1]):
                    s += drawn[hi[q]] - drawn[lo[q]]
            else:
                for q in range(start[j], start[j + 1]):
                    s += lab[recs[q]]
            out[b, j] = s
    return out
