"""The bucket join of ``DaskBackend.key_counts_rows`` (issue #31), without a cluster: the worker
functions that split keys into buckets and join one bucket's asked and pooled keys."""

from __future__ import annotations

import numpy as np
import pytest

from synthguard.distributed._backend import _join_bucket, _keys_in_buckets


def _reference(query, real):
    """Per asked ``(set, key, position)``, the pooled rows with that set and key: count and lowest
    position, by a dictionary (the asked keys some pooled row holds, sorted by position)."""
    seen: dict[tuple[int, int, int], list[int]] = {}
    for s, h, g in real:
        for i in range(s.size):
            seen.setdefault((int(s[i]), int(h[i, 0]), int(h[i, 1])), []).append(int(g[i]))
    out = []
    for s, h, g in query:
        for i in range(s.size):
            got = seen.get((int(s[i]), int(h[i, 0]), int(h[i, 1])))
            if got:
                out.append((int(s[i]), int(g[i]), len(got), min(got)))
    return sorted(out, key=lambda t: (t[1], t[0]))


def _pieces(rng, n_pieces: int, rows: int, n_sets: int, words: int, start: int):
    out = []
    for p in range(n_pieces):
        s = rng.integers(0, n_sets, rows).astype(np.int32)
        h = rng.integers(0, words, (rows, 2)).astype(np.uint64)
        g = start + p * rows + rng.permutation(rows).astype(np.int64)
        out.append((s, h, g))
    return out


@pytest.mark.parametrize("words", [3, 50, 2**40])
def test_bucket_join_counts_and_lowest_positions_as_a_dictionary_finds_them(words):
    """Keys from few words (a first word shared by keys of other second words and other sets: the
    two-word sort's fallback), from many (the one-word sort), from distinct ones: per asked key,
    the pooled rows holding it in its set and the lowest of their positions, the pooled positions
    shuffled within and across pieces (the first met is not the lowest)."""
    rng = np.random.default_rng(words % 1000)
    query = _pieces(rng, 2, 40, 3, words, 0)
    real = _pieces(rng, 3, 60, 3, words, 1000)
    for p in range(3):  # some asked keys held by pooled rows of every piece, several times
        real[p][1][:10] = query[0][1][:10]
        real[p][0][:10] = query[0][0][:10]
    s, g, c, f = _join_bucket(query, real)
    got = sorted(zip(s.tolist(), g.tolist(), c.tolist(), f.tolist(), strict=True), key=lambda t: (t[1], t[0]))
    want = _reference(query, real)
    assert got == want
    assert any(t[2] > 1 for t in want)  # keys several pooled rows hold: the lowest is asked


def test_bucket_join_of_empty_sides():
    rng = np.random.default_rng(0)
    query, real = _pieces(rng, 1, 5, 2, 4, 0), _pieces(rng, 1, 5, 2, 4, 0)
    empty = [(np.zeros(0, np.int32), np.zeros((0, 2), np.uint64), np.zeros(0, np.int64))]
    for q, r in ((query, empty), (empty, real)):
        assert all(a.size == 0 for a in _join_bucket(q, r))


def test_keys_split_into_buckets_keep_every_key_once_equal_keys_together():
    rng = np.random.default_rng(3)
    hashes = [rng.integers(0, 7, (30, 2)).astype(np.uint64) for _ in range(4)]
    pos = rng.permutation(30).astype(np.int64) + 100
    parts = _keys_in_buckets(iter(hashes), 4, pos, 3)
    assert len(parts) == 3
    rows = sorted((int(s), int(h[0]), int(h[1]), int(g)) for s_, h_, g_ in parts
                  for s, h, g in zip(s_, h_, g_, strict=True))
    want = sorted((j, int(h[i, 0]), int(h[i, 1]), int(pos[i])) for j, h in enumerate(hashes) for i in range(30))
    assert rows == want
    for b, (s, h, _) in enumerate(parts):
        assert (h[:, 0] % 3 == b).all() and (np.diff(s) >= 0).all()  # a bucket's keys by set


@pytest.mark.parametrize("buckets", [1, 3])
def test_a_pass_keeps_its_slice_of_the_buckets_and_the_passes_every_key_once(buckets):
    """``part = (p, passes)``: pass ``p`` gives the buckets ``p * buckets ..`` of ``passes *
    buckets`` (the first word modulo them), the same pieces as splitting into every bucket at
    once; over the passes, every key once."""
    rng = np.random.default_rng(4)
    hashes = [rng.integers(0, 2**40, (50, 2)).astype(np.uint64) for _ in range(3)]
    pos = rng.permutation(50).astype(np.int64)
    passes = 4
    whole = _keys_in_buckets(iter(hashes), 3, pos, passes * buckets)
    for p in range(passes):
        got = _keys_in_buckets(iter(hashes), 3, pos, buckets, (p, passes))
        assert len(got) == buckets
        for (s, h, g), (ws, wh, wg) in zip(got, whole[p * buckets:(p + 1) * buckets], strict=True):
            np.testing.assert_array_equal(s, ws)
            np.testing.assert_array_equal(h, wh)
            np.testing.assert_array_equal(g, wg)
    assert sum(g.size for p in range(passes) for _, _, g in _keys_in_buckets(iter(hashes), 3, pos, buckets,
                                                                             (p, passes))) == 150
