"""The masked-row hashes (:mod:`synthguard.data.hashing`): a row's key on a column set, summed from
its cells' hashes or as the whole row minus the left-out cells, is the key of the column subset
hashed on its own, and tells rows apart exactly as their values on the set do."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from synthguard.data.hashing import cell_hashes, column_ids, float_codes, masked, set_sums


def _partition(keys: np.ndarray) -> np.ndarray:
    """Rows labelled by their key (``(n,)`` or ``(n, c)``), labels in order of first appearance:
    two labellings are equal exactly when they group the rows alike."""
    keys = np.asarray(keys).reshape(len(keys), -1)
    if keys.shape[1] == 0:
        return np.zeros(len(keys), dtype=np.int64)
    _, inv = np.unique(keys, axis=0, return_inverse=True)
    return pd.factorize(inv.ravel())[0]


def _cells(codes: np.ndarray, names: list[str]) -> np.ndarray:
    ids = column_ids(names)
    return np.stack([cell_hashes(codes, ids, k) for k in (0, 1)], axis=2)  # (n, p, 2 chains)


def test_set_keys_are_the_subset_hashed_on_its_own_and_group_rows_as_their_values():
    rng = np.random.default_rng(0)
    n, p = 400, 7
    codes = rng.integers(-1, 3, (n, p))  # few values: many rows equal on the leave-few-out sets
    names = [f"c{j}" for j in range(p)]
    cells = _cells(codes, names)
    sets = [[j for j in range(p) if j not in m] for d in range(4) for m in combinations(range(p), d)]
    sets += [[3, 1], [5], [], [2, 2]]
    keys = set_sums(cells, sets)
    assert len(keys) == len(sets)
    for s, got in zip(sets, keys, strict=True):
        assert got.shape == (n, 2) and got.dtype == np.uint64
        own = _cells(codes[:, s], [names[j] for j in s]).sum(axis=1, dtype=np.uint64)
        np.testing.assert_array_equal(got, own)  # the same words as the subset's own table
        np.testing.assert_array_equal(_partition(got), _partition(codes[:, s]))  # equal iff equal values
    # one chain: the same sums, one word a row
    for s, got in zip(sets, set_sums(cells[:, :, 0], sets), strict=True):
        np.testing.assert_array_equal(got, keys[sets.index(s)][:, 0])


def test_a_wrong_mask_groups_rows_otherwise():
    """The check above can fail: leaving out another column than the set's groups the rows
    differently (and gives other words)."""
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 3, (300, 5))
    cells = _cells(codes, list("abcde"))
    total = cells.sum(axis=1, dtype=np.uint64)
    (want,) = set_sums(cells, [[0, 2, 3, 4]])  # column 1 left out
    wrong = masked(total, cells, [0])
    assert not np.array_equal(want, wrong)
    assert not np.array_equal(_partition(wrong), _partition(codes[:, [0, 2, 3, 4]]))
    np.testing.assert_array_equal(masked(total, cells, [1]), want)


def test_cell_hashes_keyed_by_column_and_float_codes_by_value():
    v = np.array([0.0, -0.0, np.nan, 1.0, 2.0])
    c = float_codes(v)
    assert c[0] == c[1] and c[2] == float_codes(np.array([-np.nan]))[0] and len(set(c[[0, 2, 3, 4]])) == 4
    ids = column_ids(["a", "b"])
    same = np.array([[5, 5]])
    h0, h1 = cell_hashes(same, ids, 0), cell_hashes(same, ids, 1)
    assert h0[0, 0] != h0[0, 1]  # one value in two columns: two hashes
    assert (h0 != h1).all()  # two chains
    np.testing.assert_array_equal(cell_hashes(same[:, 1], ids[1], 0), h0[:, 1])  # one column at a time


def test_row_hashes_by_row_blocks_equal_the_whole_frames_hashes():
    """Hashed a block of rows at a time, every row gets pandas' hash of the whole frame, whatever
    its columns' types (numbers with NaN, text, categories, datetimes, booleans, missing text)."""
    from synthguard.data import hashing

    n = hashing.ROW_BLOCK * 2 + 123
    rng = np.random.default_rng(0)
    x = rng.normal(size=n)
    x[rng.random(n) < 0.1] = np.nan
    text = rng.choice(["a", "bb", "ccc", None], size=n)
    frame = pd.DataFrame({
        "x": x, "i": rng.integers(0, 50, n), "s": pd.array(text, dtype="string"),
        "o": pd.Series(text, dtype=object), "c": pd.Categorical(rng.choice(["u", "v", "w"], n)),
        "d": pd.to_datetime("2020-01-01") + pd.to_timedelta(rng.integers(0, 1000, n), unit="D"),
        "b": rng.random(n) < 0.5,
    })
    whole = pd.util.hash_pandas_object(frame, index=False).to_numpy().astype(np.uint64)
    got = hashing.row_hashes(frame)
    assert got.dtype == np.uint64 and np.array_equal(got, whole)
    assert np.array_equal(hashing.row_hashes(frame.iloc[::-1]), whole[::-1])
