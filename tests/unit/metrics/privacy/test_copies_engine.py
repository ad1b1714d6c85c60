"""The copy engine's block join (pigeonhole over column groups) finds exactly the pairs within k cells
that brute force finds, on random tables with ties, repeated rows and coarse columns."""

from __future__ import annotations

import numpy as np
import pytest

from synthguard.metrics.privacy._copies import near_copy_flags, near_pairs, within_pairs


def _brute(a: np.ndarray, b: np.ndarray, k: int, same: bool = False) -> set[tuple[int, int]]:
    d = (a[:, None, :] != b[None, :, :]).sum(axis=2)
    ia, ib = np.nonzero(d <= k)
    return {(int(x), int(y)) for x, y in zip(ia, ib, strict=True) if not (same and x == y)}


def _table(rng: np.random.Generator, n: int, p: int) -> np.ndarray:
    levels = rng.integers(2, 6, p)  # coarse columns: many chance near-matches
    t = rng.integers(0, levels, size=(n, p))
    t[rng.random((n, p)) < 0.05] = np.iinfo(np.int64).min  # missing codes compare equal
    dup = rng.choice(n, n // 10, replace=False)
    t[dup] = t[rng.choice(n, dup.size)]  # repeated rows
    return t


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [1, 2, 3])
def test_block_join_finds_every_pair_within_k_cells(seed, k):
    rng = np.random.default_rng(seed)
    p = int(rng.integers(k + 2, 14))
    a, b = _table(rng, 120, p), _table(rng, 90, p)
    got = within_pairs(a, b, k)
    assert got is not None
    assert set(zip(got[0].tolist(), got[1].tolist(), strict=True)) == _brute(a, b, k)
    twins = within_pairs(a, a, k, same=True)
    assert set(zip(twins[0].tolist(), twins[1].tolist(), strict=True)) == _brute(a, a, k, same=True)


@pytest.mark.parametrize("seed", range(4))
def test_near_copy_flags_and_pairs_agree_with_brute_force_on_wide_tables(seed):
    rng = np.random.default_rng(seed)
    real, rel, q = _table(rng, 150, 20), _table(rng, 80, 20), _table(rng, 60, 20)
    real[:5], q[:5] = rel[:5], real[10:15]  # some copies
    q[:5, 3] += 7  # ... with one cell changed
    for k in (1, 2):
        d_rr = (real[:, None] != real[None]).sum(2)
        np.fill_diagonal(d_rr, 99)
        unique = (d_rr > k).all(axis=1)
        hit = ((real[:, None] != rel[None]).sum(2) <= k).any(axis=1)
        u, h = near_copy_flags(real, rel, k)
        assert np.array_equal(u, unique) and np.array_equal(h, hit)
        qi, ri = near_pairs(real, unique, q, k)
        want = sorted((x, y) for x, y in _brute(q, real, k) if unique[y])
        assert list(zip(qi.tolist(), ri.tolist(), strict=True)) == want


def test_block_join_gives_up_over_budget():
    a = np.zeros((300, 6), dtype=np.int64)
    assert within_pairs(a, a, 1, budget=1000) is None
