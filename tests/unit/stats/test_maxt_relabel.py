"""The relabellings of the joint max-T test: the sort-based member sets equal the argsort-based ones."""

from __future__ import annotations

import numpy as np

from synthguard.stats.maxt import relabelled_counts, smallest_keys


def _members_by_argsort(keys: np.ndarray, h: np.ndarray) -> np.ndarray:
    lab = np.zeros(keys.shape, dtype=bool)
    np.put_along_axis(lab, np.argsort(keys, axis=1), np.arange(keys.shape[1])[None, :] < h[:, None], axis=1)
    return lab


def _counts_by_argsort(flags_u: np.ndarray, n1: int, n2: int, reps: int, rng: np.random.Generator,
                       chunk: int) -> np.ndarray:
    u = flags_u.shape[0]
    out = np.zeros((reps, flags_u.shape[1]), dtype=np.int64)
    for start in range(0, reps, chunk):
        b = min(chunk, reps - start)
        h = rng.hypergeometric(n1, n2, u, size=b) if n2 else np.full(b, u)
        lab = _members_by_argsort(rng.random((b, u)), h)
        out[start:start + b] = np.rint(lab.astype(float) @ flags_u.astype(float)).astype(np.int64)
    return out


def test_smallest_keys_equal_the_argsort_members_with_and_without_ties():
    rng = np.random.default_rng(3)
    keys = rng.random((200, 57))
    keys[:40] = np.round(keys[:40] * 6) / 6  # many ties, some at the h-th key
    h = rng.integers(0, 58, 200)
    h[:3] = [0, 57, 1]
    got = smallest_keys(keys, h)
    assert np.array_equal(got, _members_by_argsort(keys, h))
    assert np.array_equal(got.sum(axis=1), h)


def test_relabelled_counts_equal_the_argsort_relabellings():
    rng = np.random.default_rng(5)
    flags_u = rng.random((300, 4)) < np.array([0.1, 0.5, 0.9, 0.02])
    for n1, n2, reps, cells in ((900, 400, 250, 5_000_000), (900, 400, 250, 7_000), (300, 0, 20, 5_000_000)):
        got = relabelled_counts(flags_u, n1, n2, reps, np.random.default_rng(11), max_cells=cells)
        want = _counts_by_argsort(flags_u, n1, n2, reps, np.random.default_rng(11),
                                  chunk=max(1, min(reps, cells // flags_u.shape[0])))
        assert np.array_equal(got, want)


def _urn_by_single_draws(seed: int, reps: int, flags_u: np.ndarray, n1: int, big_n: int) -> np.ndarray:
    """The urn one draw at a time, as the compiled kernel describes it: NumPy's legacy Mersenne
    Twister (numba's generator, seeded the same way), record ``i`` a member when
    ``random() * records left < members left``."""
    draw = np.random.RandomState(seed)
    u, n_tests = flags_u.shape
    out = np.zeros((reps, n_tests), dtype=np.int64)
    for b in range(reps):  # loop over relabellings (a few)
        ones, left = n1, big_n
        for i in range(u):  # loop over records (a few hundred): the reference, one draw each
            if draw.random_sample() * left < ones:
                ones -= 1
                out[b] += flags_u[i]
            left -= 1
    return out


def test_the_compiled_urn_draws_the_labels_of_one_draw_per_record():
    """urn_counts draws a relabelling's labels in bulk and counts them per test: the counts are
    those of drawing each record's label in turn from the seeded stream (several tests flagging
    a record, a record flagged by none, every member placed before the last record)."""
    pytest = __import__("pytest")
    numba_kernel = pytest.importorskip("synthguard.stats._maxt_numba")
    rng = np.random.default_rng(11)
    for u, n1, big_n, n_tests in ((300, 120, 500, 4), (250, 250, 260, 3), (40, 5, 45, 1)):
        flags_u = rng.random((u, n_tests)) < 0.4
        flags_u[::17] = False
        rows, cols = np.nonzero(flags_u)
        indptr = np.r_[0, np.cumsum(np.bincount(rows, minlength=u))].astype(np.int64)
        got = numba_kernel.urn_counts(1234 + u, 7, indptr, cols.astype(np.int64), n1, big_n, n_tests)
        assert np.array_equal(got, _urn_by_single_draws(1234 + u, 7, flags_u, n1, big_n))


def test_the_kernels_own_generator_reads_numbas_stream_across_blocks():
    """The urn reads numba's ``np.random.random`` stream from its own copy of the generator: per
    relabelling, ``floor(r * records left)`` of the stream's doubles, in order, relabelling after
    relabelling (odd and even record counts, many 624-word blocks, seeds up to 2**31 - 2; a
    count of records near 2**52 resolves every bit of the doubles)."""
    pytest = __import__("pytest")
    numba_kernel = pytest.importorskip("synthguard.stats._maxt_numba")
    for seed, reps, u, big_n in ((0, 5, 311, 400), (2**31 - 2, 3, 1000, 1000), (177259866, 4, 1, 9), (5, 3, 777, 2**52)):
        r = numba_kernel.numba_stream(seed, reps * u).reshape(reps, u)
        want = np.floor(r * (big_n - np.arange(u))[None, :]).astype(np.int64)
        assert np.array_equal(numba_kernel.stream_floors(seed, reps, u, big_n), want)


def test_the_compiled_urn_counts_runs_of_records_as_record_by_record():
    """Tests flagging long runs of consecutive records are counted per run (members drawn before
    the run's end minus before its start): the counts equal drawing each label in turn, with a
    test flagging every record, one every record but a few, runs at the first and last records,
    a test of single scattered records, and one flagging none."""
    pytest = __import__("pytest")
    numba_kernel = pytest.importorskip("synthguard.stats._maxt_numba")
    rng = np.random.default_rng(7)
    u = 1500
    flags_u = np.zeros((u, 6), dtype=bool)
    flags_u[:, 0] = True
    flags_u[:, 1] = True
    flags_u[rng.choice(u, 9, replace=False), 1] = False
    flags_u[:100, 2] = flags_u[700:900, 2] = flags_u[-50:, 2] = True
    flags_u[rng.choice(u, 80, replace=False), 3] = True
    flags_u[u - 1, 4] = True  # one record, the last
    # column 5: no record
    rows, cols = np.nonzero(flags_u)
    indptr = np.r_[0, np.cumsum(np.bincount(rows, minlength=u))].astype(np.int64)
    for n1, big_n in ((700, 1600), (1500, 1500), (3, 1500)):
        got = numba_kernel.urn_counts(99 + n1, 3, indptr, cols.astype(np.int64), n1, big_n, 6)
        assert np.array_equal(got, _urn_by_single_draws(99 + n1, 3, flags_u, n1, big_n))
        assert (got[:, 5] == 0).all()


def test_the_compiled_urn_is_loaded_from_numbas_disk_cache_by_the_next_process(tmp_path):
    """The urn is compiled with numba's on-disk cache: a second process loads it from the cache
    (no compile in every run's verdict) and counts the same as the process that compiled it."""
    import json
    import os
    import subprocess
    import sys

    pytest = __import__("pytest")
    pytest.importorskip("synthguard.stats._maxt_numba")
    code = (
        "import json, numpy as np\n"
        "from synthguard.stats._maxt_numba import urn_counts\n"
        "indptr = np.arange(0, 41, 2, dtype=np.int64); tests = np.tile(np.array([0, 1]), 20).astype(np.int64)\n"
        "out = urn_counts(5, 3, indptr, tests, 8, 30, 2)\n"
        "print(json.dumps({'hits': sum(urn_counts.stats.cache_hits.values()), 'counts': out.tolist()}))\n"
    )
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    runs = [json.loads(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                      check=True).stdout) for _ in range(2)]
    assert runs[0]["hits"] == 0 and runs[1]["hits"] == 1
    assert runs[0]["counts"] == runs[1]["counts"]


def _large_flags(seed: int, u: int = 25_000) -> np.ndarray:
    """Flags of ``u`` records by 4 tests with few patterns (u x 1,000 relabellings > COMPILED_CELLS);
    test 3 flags exactly the records tests 0 or 1 flag, which never overlap."""
    rng = np.random.default_rng(seed)
    kind = rng.choice(4, size=u, p=[0.5, 0.2, 0.2, 0.1])
    f = np.zeros((u, 4), dtype=bool)
    f[:, 0] = kind == 0
    f[:, 1] = kind == 1
    f[:, 2] = (kind == 2) | (kind == 0) & (rng.random(u) < 0.3)
    f[:, 3] = f[:, 0] | f[:, 1]
    return f


def test_large_relabellings_draw_per_flag_pattern_whatever_the_record_order():
    from synthguard.stats.maxt import COMPILED_CELLS

    f = _large_flags(1)
    assert f.shape[0] * 1000 > COMPILED_CELLS
    got = relabelled_counts(f, 30_000, 20_000, 1000, np.random.default_rng(4))
    shuffled = relabelled_counts(f[np.random.default_rng(9).permutation(len(f))], 30_000, 20_000, 1000,
                                 np.random.default_rng(4))
    assert np.array_equal(got, shuffled)  # a record-by-record urn depends on the records' order
    assert np.array_equal(got[:, 3], got[:, 0] + got[:, 1])  # a count is a sum over its groups


def test_large_relabelling_counts_have_the_hypergeometric_means_and_variances():
    """Each test's member count under a uniform relabelling is hypergeometric: ``m`` flagged records
    drawn from ``n1`` members among ``N``; two tests' counts covary through the records both flag."""
    f = _large_flags(2)
    n1, n2, reps = 30_000, 20_000, 4000
    big_n = n1 + n2
    got = relabelled_counts(f, n1, n2, reps, np.random.default_rng(6)).astype(float)
    m = f.sum(axis=0).astype(float)
    mean = m * n1 / big_n
    var = m * (n1 / big_n) * (n2 / big_n) * (big_n - m) / (big_n - 1)
    assert (np.abs(got.mean(axis=0) - mean) < 5 * np.sqrt(var / reps)).all()
    assert (np.abs(got.var(axis=0) / var - 1) < 0.15).all()
    # covariance of tests 0 and 2 (they share the records both flag): that of the shared count
    # less what the disjoint parts take from each other
    both, only0, only2 = (f[:, 0] & f[:, 2]).sum(), (f[:, 0] & ~f[:, 2]).sum(), (f[:, 2] & ~f[:, 0]).sum()
    p, q = n1 / big_n, n2 / big_n
    shrink = (big_n - 1)

    def cov(a: float, b: float) -> float:  # covariance of the member counts of two disjoint groups
        return -a * b * p * q / shrink

    v_both = both * p * q * (big_n - both) / shrink
    want = v_both + cov(both, only2) + cov(only0, both) + cov(only0, only2)
    sd = np.sqrt(var[0] * var[2] / reps) * 1.2
    assert abs(np.cov(got[:, 0], got[:, 2])[0, 1] - want) < 5 * sd


def test_large_relabellings_with_many_flag_patterns_draw_from_the_urn():
    from synthguard.stats import maxt

    rng = np.random.default_rng(3)
    f = rng.random((25_000, 24)) < 0.5  # nearly every record its own pattern
    pattern, size = maxt.flag_patterns(f)
    assert size.size * maxt.PATTERN_RECORDS > f.shape[0]
    got = relabelled_counts(f, 30_000, 20_000, 1000, np.random.default_rng(4))
    shuffled = relabelled_counts(f[::-1], 30_000, 20_000, 1000, np.random.default_rng(4))
    assert not np.array_equal(got, shuffled)  # the urn draws record by record
