"""The copy engine's block join (pigeonhole over column groups) finds exactly the pairs within k cells
that brute force finds, and the near-copy tests' identifying matches and visibility equal their
brute-force definitions through both the block join and the masked hash joins, on random tables
with ties, repeated rows and coarse columns."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from synthguard.metrics.privacy._copies import (
    _code_matrices,
    backend_identifiable_share,
    backend_matches,
    identifiable_share,
    identifying_matches,
    near_pairs,
    within_pairs,
)


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


def _identifying_brute(real: np.ndarray, q: np.ndarray, k: int) -> list[tuple[int, int]]:
    """(query, record) where the record is the only real record within k cells of the query."""
    near = (q[:, None, :] != real[None, :, :]).sum(axis=2) <= k
    return [(int(x), int(np.flatnonzero(near[x])[0])) for x in np.flatnonzero(near.sum(axis=1) == 1)]


def _share_brute(real: np.ndarray, k: int) -> np.ndarray:
    masks = list(combinations(range(real.shape[1]), k))
    got = np.zeros(real.shape[0])
    for m in masks:
        keep = np.setdiff1d(np.arange(real.shape[1]), m)
        same = (real[:, None, keep] == real[None, :, keep]).all(axis=2).sum(axis=1)
        got += same == 1
    return got / len(masks)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("p", [4, 9, 20])
def test_identifying_matches_equal_their_definition_through_both_joins(seed, p):
    rng = np.random.default_rng(seed)
    real, q = _table(rng, 120, p), _table(rng, 50, p)
    q[:5] = real[10:15]  # copies ...
    q[:3, 1] += 7  # ... some with one cell changed
    q[5:8] = real[20:23]
    q[5:8, [0, 2]] += 9  # two cells changed
    for k in (1, 2):
        want = _identifying_brute(real, q, k)
        for budget in (10**9, 0):  # block join; masked hash joins over budget
            got = identifying_matches(real, q, k, budget=budget)
            assert list(zip(got[0].tolist(), got[1].tolist(), strict=True)) == want


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("p", [4, 9, 20])
def test_identifiable_share_is_the_share_of_masks_a_record_is_unique_outside(seed, p):
    rng = np.random.default_rng(seed)
    real = _table(rng, 150, p)
    for k in (1, 2):
        want = _share_brute(real, k)
        for budget in (10**9, 0):
            assert np.allclose(identifiable_share(real, k, budget=budget), want)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("p", [7, 9, 11])
def test_identifiable_share_is_the_same_float_whatever_the_block_budget(seed, p):
    """The shares are integer counts of column sets divided once: the block join (default budget)
    and the masked hash counts (a budget of one pair) give the same bytes, not merely close ones."""
    rng = np.random.default_rng(seed)
    real = rng.integers(0, 3, size=(400, p))
    for k in (1, 2):
        assert within_pairs(real, real, k, same=True) is not None  # the block join answers
        assert within_pairs(real, real, k, same=True, budget=1) is None  # the masks answer
        joined = identifiable_share(real, k)
        masked = identifiable_share(real, k, budget=1)
        assert ((joined > 0) & (joined < 1)).any()  # shares that are not 0 or 1 (rounded ones)
        assert joined.tobytes() == masked.tobytes(), (k, np.flatnonzero(joined != masked)[:5])


@pytest.mark.parametrize("seed", range(4))
def test_near_pairs_agree_with_brute_force_on_wide_tables(seed):
    rng = np.random.default_rng(seed)
    real, q = _table(rng, 150, 20), _table(rng, 60, 20)
    q[:5] = real[10:15]  # some copies
    q[:5, 3] += 7  # ... with one cell changed
    for k in (1, 2):
        d_rr = (real[:, None] != real[None]).sum(2)
        np.fill_diagonal(d_rr, 99)
        unique = (d_rr > k).all(axis=1)
        qi, ri = near_pairs(real, unique, q, k)
        want = sorted((x, y) for x, y in _brute(q, real, k) if unique[y])
        assert list(zip(qi.tolist(), ri.tolist(), strict=True)) == want


def test_block_join_gives_up_over_budget():
    a = np.zeros((300, 6), dtype=np.int64)
    assert within_pairs(a, a, 1, budget=1000) is None


def _frame_of(codes: np.ndarray) -> pd.DataFrame:
    """Codes as a frame of labels (the missing code as a missing value)."""
    out = {}
    for j in range(codes.shape[1]):
        col = pd.Series([f"v{c}" for c in codes[:, j]], dtype=object)
        col[codes[:, j] == np.iinfo(np.int64).min] = None
        out[f"x{j}"] = col
    return pd.DataFrame(out)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("p", [4, 6, 9])
def test_backend_answers_equal_the_code_matrix_engine(seed, p):
    """The backend path of the near-copy tests (one process here; a Dask cluster answers the same
    questions) gives the pairs of the block join and the identifiable shares bit for bit, through
    both of identifiable_share's forms (masks for few columns, the block join's for more)."""
    from synthguard.registry import Context

    rng = np.random.default_rng(seed)
    o, c, s = _table(rng, 90, p), _table(rng, 60, p), _table(rng, 50, p)
    for t in (o, c, s):  # two wide columns: records a few cells apart from most others
        t[:, -2:] = rng.integers(0, 12, (len(t), 2))
    s[:5] = o[10:15]
    s[:3, 1] = o[0, 1]  # one cell changed
    s[5:8] = c[20:23]
    s[5:8, [0, 2]] = o[1, [0, 2]]  # two cells changed
    ctx = Context.from_frames(_frame_of(o), _frame_of(s), _frame_of(c), canonical=False)
    cols = [f"x{j}" for j in range(p)]
    real, rel = _code_matrices(ctx, cols)
    leak = _frame_of(o[30:40])
    found = 0
    for k in (1, 2):
        got = backend_matches(ctx.data, [ctx.tables.synthetic, leak], cols, k)
        want = [identifying_matches(real, rel, k), identifying_matches(real, real[30:40], k)]
        for (gq, gr), (wq, wr) in zip(got, want, strict=True):
            np.testing.assert_array_equal(gq, wq)
            np.testing.assert_array_equal(gr, wr)
        found += want[0][0].size + want[1][0].size
        share = backend_identifiable_share(ctx.data, cols, k)
        assert share.tobytes() == identifiable_share(real, k).tobytes()
    assert found  # some rows identify a record


def test_masked_set_joins_ask_the_backend_in_bounded_batches_with_the_same_pairs(monkeypatch):
    """The copy tests' masked-set joins ask ``key_counts`` a few column sets at a time (a batch
    of at most KEY_COUNT_KEYS query rows x sets: the driver of a cluster holds one batch of keys),
    and find the pairs one call over every set finds."""
    from synthguard.metrics.privacy import _copies
    from synthguard.registry import Context

    rng = np.random.default_rng(3)
    p = 6
    o, c, s = _table(rng, 90, p), _table(rng, 60, p), _table(rng, 50, p)
    s[:5] = o[10:15]
    s[:3, 1] = o[0, 1]
    ctx = Context.from_frames(_frame_of(o), _frame_of(s), _frame_of(c), canonical=False)
    cols = [f"x{j}" for j in range(p)]
    frames = [ctx.tables.synthetic]
    whole = backend_matches(ctx.data, frames, cols, 2)
    asked = []
    key_counts = type(ctx.data).key_counts

    def spy(self, frames, sets, roles):
        asked.append(len(sets))
        return key_counts(self, frames, sets, roles)

    monkeypatch.setattr(type(ctx.data), "key_counts", spy)
    monkeypatch.setattr(_copies, "KEY_COUNT_KEYS", 3 * 50)  # 3 sets of 50 release rows a batch
    got = backend_matches(ctx.data, frames, cols, 2)
    assert max(asked) == 3 and sum(asked) == 1 + 6 + 15  # every mask within two cells, in batches
    for (gq, gr), (wq, wr) in zip(got, whole, strict=True):
        np.testing.assert_array_equal(gq, wq)
        np.testing.assert_array_equal(gr, wr)
    assert whole[0][0].size
