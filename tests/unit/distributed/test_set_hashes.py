"""The Dask backend's keys on many column sets (:func:`synthguard.distributed._tables.set_hashes`,
every cell hashed once): the keys of the set's columns hashed on their own, grouping rows exactly
as the whole-row identities of those columns (:func:`~synthguard.distributed._tables.identity_hashes`)
do: missing values, ``-0.0`` next to ``0.0``, a free-text column, a boolean."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from synthguard.data.encoding import Encoder
from synthguard.data.schema import infer_schema
from synthguard.distributed._tables import identity_hashes, set_hashes


def _partition(keys: np.ndarray) -> np.ndarray:
    _, inv = np.unique(np.asarray(keys).reshape(len(keys), -1), axis=0, return_inverse=True)
    return pd.factorize(inv.ravel())[0]


def test_set_keys_group_rows_as_the_identities_of_the_set_and_equal_its_own_keys():
    rng = np.random.default_rng(4)
    n = 300
    df = pd.DataFrame({"a": rng.integers(0, 3, n).astype(float), "b": rng.choice(["x", "y", None], n),
                       "c": rng.choice([0.0, -0.0, np.nan, 1.5], n), "d": rng.choice([True, False], n),
                       "t": rng.choice(["one text", "another", None], n)})
    meta = {"columns": {"a": {"sdtype": "numerical"}, "b": {"sdtype": "categorical"},
                        "c": {"sdtype": "numerical"}, "d": {"sdtype": "boolean"}, "t": {"sdtype": "text"}}}
    enc = Encoder(infer_schema(df, meta))
    enc.learn(df, ["b", "d"])
    cols = list(df.columns)
    sets = [[c for j, c in enumerate(cols) if j not in m] for d in range(3)
            for m in combinations(range(len(cols)), d)] + [["t", "a"], ["c"]]
    for s, got in zip(sets, set_hashes(enc, df, sets), strict=True):
        assert got.shape == (n, 2) and got.dtype == np.uint64
        np.testing.assert_array_equal(_partition(got), _partition(identity_hashes(enc, df, s)))
        (own,) = set_hashes(enc, df[s], [s])  # the set's columns alone, in a frame of their own
        np.testing.assert_array_equal(got, own)
    assert len(np.unique(_partition(set_hashes(enc, df, [cols])[0]))) > 50  # rows told apart


def test_keys_found_by_both_words_where_first_words_are_shared():
    """The joins of :meth:`DaskBackend.key_counts` sort and search 128-bit keys by their first word,
    by both where several keys share it (rare with hashes; forced here)."""
    from synthguard.distributed._backend import _distinct_pairs, _find_pairs

    keys = np.array([[5, 9], [5, 2], [1, 7], [5, 2], [8, 0]], dtype=np.uint64)
    uniq, inv = _distinct_pairs(keys)
    assert uniq.tolist() == [[1, 7], [5, 2], [5, 9], [8, 0]]
    np.testing.assert_array_equal(uniq[inv], keys)
    rows = np.array([[5, 9], [5, 3], [8, 0], [0, 0], [9, 9], [5, 2], [1, 7], [5, 10]], dtype=np.uint64)
    assert _find_pairs(uniq, rows).tolist() == [2, -1, 3, -1, -1, 1, 0, -1]
    assert _find_pairs(uniq[:0], rows).tolist() == [-1] * 8
    assert _find_pairs(uniq, rows[:0]).tolist() == []


def test_keys_found_in_any_row_order_as_a_dictionary_finds_them():
    """The rows searched in ascending order of their first word (the search walks the keys) find
    each key where it is, whatever the rows' order, with runs of keys sharing a first word."""
    from synthguard.distributed._backend import _distinct_pairs, _find_pairs

    rng = np.random.default_rng(5)
    keys = np.column_stack([rng.integers(0, 40, 300), rng.integers(0, 4, 300)]).astype(np.uint64)
    uniq, _ = _distinct_pairs(keys)
    rows = np.column_stack([rng.integers(0, 45, 2000), rng.integers(0, 5, 2000)]).astype(np.uint64)
    where = {(int(a), int(b)): j for j, (a, b) in enumerate(uniq)}
    want = [where.get((int(a), int(b)), -1) for a, b in rows]
    assert _find_pairs(uniq, rows).tolist() == want
    assert _find_pairs(uniq, rows[::-1]).tolist() == want[::-1]
    assert 0 < sum(w >= 0 for w in want) < len(want)


@pytest.mark.parametrize("shared_first_words", [False, True])
def test_distinct_keys_sorted_by_both_words_as_a_two_word_sort_sorts_them(shared_first_words):
    """The keys are sorted by their first word alone unless two distinct keys share one: the same
    distinct keys and indices as the two-word sort either way (duplicates many, as a release's
    rows on a column set give)."""
    from synthguard.distributed._backend import _distinct_pairs

    rng = np.random.default_rng(2)
    if shared_first_words:  # 10 first words, 5 second words: distinct keys share first words
        pool = np.column_stack([rng.integers(0, 2**63, 10)[rng.integers(0, 10, 50)],
                                rng.integers(0, 2**63, 5)[rng.integers(0, 5, 50)]])
    else:
        pool = rng.integers(0, 2**63, (40, 2))
    keys = pool.astype(np.uint64)[rng.integers(0, len(pool), 3000)]
    order = np.lexsort((keys[:, 1], keys[:, 0]))
    s = keys[order]
    new = np.r_[True, (s[1:] != s[:-1]).any(axis=1)]
    uniq, inv = _distinct_pairs(keys)
    np.testing.assert_array_equal(uniq, s[new])
    np.testing.assert_array_equal(uniq[inv], keys)
    assert bool((uniq[1:, 0] == uniq[:-1, 0]).any()) == shared_first_words
