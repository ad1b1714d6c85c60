"""The Gower search's first steps over the query's categorical groups (the reference rows sharing all
its codes, then those sharing all but one) against the NumPy brute force: same distances bit for bit,
same indices (ties to the lower row), same tie counts, whatever part the tree still searches."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synthguard.data.encoding import Block, value_ranges
from synthguard.engine.neighbors import available_backends, gower, kneighbors, nearest_ties
from synthguard.engine.neighbors import engine as engine_mod

pytestmark = pytest.mark.skipif("numba" not in available_backends(), reason="the compiled backend needs numba")
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _block(num: np.ndarray, cat: np.ndarray) -> Block:
    return Block(np.ascontiguousarray(num, dtype=float), np.ascontiguousarray(cat, dtype=np.int64),
                 tuple(f"n{i}" for i in range(num.shape[1])), tuple(f"c{i}" for i in range(cat.shape[1])))


def _grouped_tables(rng: np.random.Generator, nr: int, nq: int, n_num: int, n_cat: int, missing: bool
                    ) -> tuple[Block, Block]:
    """Few codes per column (large groups, many one-code-away rows), coarse numbers (ties across
    groups), copies of reference rows among the queries, codes the reference lacks (a query outside
    its code range on one or two columns) and, optionally, missing values."""
    levels = rng.integers(1, 5, n_cat)

    def make(n: int) -> tuple[np.ndarray, np.ndarray]:
        num = rng.integers(0, 5, (n, n_num)).astype(float) * 0.25
        cat = np.column_stack([rng.integers(0, lv, n) for lv in levels]) if n_cat else np.zeros((n, 0), int)
        if missing:
            num[rng.random(num.shape) < 0.1] = np.nan
            cat[rng.random(cat.shape) < 0.1] = -1
        return num, cat

    rn, rc = make(nr)
    qn, qc = make(nq)
    n_copy = nq // 3
    src = rng.integers(0, nr, n_copy)
    qn[:n_copy], qc[:n_copy] = rn[src], rc[src]
    if n_cat:
        far = rng.random(nq) < 0.15
        qc[far, rng.integers(0, n_cat)] = 7  # a code no reference row has
        far2 = rng.random(nq) < 0.05
        qc[far2] = 9  # codes the reference lacks on every column
    return _block(qn, qc), _block(rn, rc)


@settings(max_examples=40, **SETTINGS)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(0, 3), st.integers(1, 5), st.booleans(),
       st.booleans(), st.sampled_from([0, 3, 40, 4096]), st.booleans())
def test_group_first_search_equals_the_brute_force(seed, k, n_num, n_cat, missing, exclude_self, budget,
                                                   weighted):
    """Every budget (0: the tree does all; 3: a part of the groups; 4096: the groups, then the tree
    only where rows with more mismatches may qualify) returns the NumPy brute force's neighbours,
    distances bit for bit, and counts of rows at the nearest distance."""
    rng = np.random.default_rng(seed)
    q, r = _grouped_tables(rng, int(rng.integers(300, 700)), 80, n_num, n_cat, missing)
    if exclude_self:
        q = r
    wc = rng.choice([0.5, 1.0, 2.0, 0.7], n_cat) if weighted else None
    wn = rng.choice([0.5, 1.0, 3.0], n_num) if weighted else None
    m = gower(value_ranges(q, r), clip=True, normalise=True, num_weights=wn, cat_weights=wc)
    old = engine_mod._GROUP_BUDGET
    engine_mod._GROUP_BUDGET = budget
    try:
        want = kneighbors(q, r, m, k, exclude_self=exclude_self, backend="numpy")
        got = kneighbors(q, r, m, k, exclude_self=exclude_self, backend="numba")
        assert got.distances.tobytes() == want.distances.tobytes()
        np.testing.assert_array_equal(got.indices, want.indices)
        if not exclude_self:
            nb_want, ties_want = nearest_ties(q, r, m, backend="numpy")
            nb_got, ties_got = nearest_ties(q, r, m, backend="numba")
            np.testing.assert_array_equal(nb_got.indices, nb_want.indices)
            np.testing.assert_array_equal(ties_got, ties_want)
    finally:
        engine_mod._GROUP_BUDGET = old


def test_a_row_one_code_away_at_the_groups_distance_wins_the_tie_by_its_lower_index():
    """Query (codes 0, 0; number 0). Row 0 mismatches one code and nothing else: sum 1. Row 1 shares
    every code but is a whole range away on the number: sum 1 too, the same distance. The group's
    best (row 1) leaves the threshold AT the smallest categorical weight, so the rows one code away
    must still be searched, and row 0 wins the tie. Row 2 (two codes away) follows at sum 2: with
    k = 3 the tree must be searched past the rows one code away, without visiting a row twice."""
    r = _block(np.array([[0.0], [1.0], [0.0], [0.5]]), np.array([[1, 0], [0, 0], [1, 1], [0, 0]]))
    q = _block(np.array([[0.0]]), np.array([[0, 0]]))
    m = gower(np.ones(1), clip=True, normalise=True)
    for k, want in [(1, [3]), (2, [3, 0]), (3, [3, 0, 1]), (4, [3, 0, 1, 2])]:
        got = kneighbors(q, r, m, k, backend="numba")
        assert got.indices[0].tolist() == want
        assert got.distances.tobytes() == kneighbors(q, r, m, k, backend="numpy").distances.tobytes()
    r2 = _block(r.num[:3], r.cat[:3])  # without row 3: rows 0 and 1 tie at the nearest distance
    nb, ties = nearest_ties(q, r2, m, backend="numba")
    assert nb.indices[0].tolist() == [0] and ties.tolist() == [2]


def test_groups_hold_every_row_sharing_the_codes_and_none_other():
    """The ranges of a query's groups list exactly the reference rows with all its codes (level 0)
    and with all but column ``c``'s (level ``c + 1``), codes outside the reference's included."""
    rng = np.random.default_rng(5)
    rc = rng.integers(-1, 3, (500, 3))
    qc = np.vstack([rng.integers(-1, 3, (50, 3)), [[5, 0, 0], [0, -4, 1], [9, 9, 0]]])
    g = engine_mod._Groups.of(rc)
    start, end = g.ranges(qc)
    for i in range(qc.shape[0]):  # loop over a few query rows of a test
        same = (rc == qc[i]).sum(axis=1)
        assert sorted(g.pos[0, start[i, 0]:end[i, 0]].tolist()) == np.flatnonzero(same == 3).tolist()
        for c in range(3):
            others = np.delete(rc == qc[i], c, axis=1).all(axis=1)
            assert sorted(g.pos[c + 1, start[i, c + 1]:end[i, c + 1]].tolist()) == np.flatnonzero(others).tolist()


def _ranges_by_searching_every_rows_key(g, rc, qc):
    """The slow path of ``_Groups.ranges``: each level's left and right ends found among every
    reference row's sorted key (the groups' ranges before the search moved to the distinct keys)."""
    sorted_keys = {lv: np.sort(key) for lv, key, _ in g.level_keys(rc)}
    start = np.zeros((qc.shape[0], qc.shape[1] + 1), dtype=np.int64)
    end = np.zeros_like(start)
    for lv, key, ok in g.level_keys(qc):
        start[:, lv] = np.where(ok, np.searchsorted(sorted_keys[lv], key, side="left"), 0)
        end[:, lv] = np.where(ok, np.searchsorted(sorted_keys[lv], key, side="right"), 0)
    return start, end


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_group_ranges_found_among_distinct_keys_equal_searching_every_rows_key(seed):
    """``_Groups.ranges`` looks a query's key up among each level's distinct keys: the starts and
    ends are exactly those of searching every reference row's sorted key, left and right, for keys
    inside the reference's groups, between them, below the smallest and above the largest, and
    for codes outside the reference's (one column: only that column's level; two: none)."""
    rng = np.random.default_rng(seed)
    rc = np.stack([rng.integers(0, c, 3000) for c in (2, 5, 3, 7)], axis=1)
    rc = rc[(rc[:, 1] != 3) & ~((rc[:, 0] == 1) & (rc[:, 2] == 2))]  # gaps among the keys
    qc = np.vstack([np.stack([rng.integers(0, c, 400) for c in (2, 5, 3, 7)], axis=1),
                    [[0, 0, 0, 0], [1, 4, 2, 6], [1, 3, 2, 6], [5, 0, 0, 0], [0, 9, 9, 0], [-1, 0, 0, 0]]])
    g = engine_mod._Groups.of(rc)
    got, want = g.ranges(qc), _ranges_by_searching_every_rows_key(g, rc, qc)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert (got[1] > got[0]).any() and (got[1] == got[0]).any()


@pytest.mark.parametrize("budget", [1, 4096])
def test_the_tree_is_searched_when_the_threshold_sits_exactly_on_a_mismatch_count(budget):
    """Unnormalised Gower (a distance IS its sum, so the threshold is exactly it). Query (codes 0, 0;
    number 0). First table: row 1 shares the codes at sum 1 (the number a range away), row 0 mismatches
    one code at sum 1 and wins the tie; with budget 1 the rows one code away are not listed, so the
    tree must be searched although the threshold equals the smallest categorical weight. Second
    table: nobody shares the codes; row 1 (one code away, number a range away) and row 0 (two codes
    away) both sum 2: the tree must be searched at a threshold equal to two weights."""
    m = gower(np.ones(1), clip=True, normalise=False)
    q = _block(np.array([[0.0]]), np.array([[0, 0]]))
    for num, cat in [([[0.0], [1.0]], [[1, 0], [0, 0]]), ([[0.0], [1.0]], [[1, 1], [0, 1]])]:
        r = _block(np.array(num), np.array(cat))
        old = engine_mod._GROUP_BUDGET
        engine_mod._GROUP_BUDGET = budget
        try:
            got = kneighbors(q, r, m, 1, backend="numba")
            nb, ties = nearest_ties(q, r, m, backend="numba")
        finally:
            engine_mod._GROUP_BUDGET = old
        assert got.indices.tolist() == [[0]] and nb.indices.tolist() == [[0]] and ties.tolist() == [2]
        assert got.distances.tobytes() == kneighbors(q, r, m, 1, backend="numpy").distances.tobytes()
