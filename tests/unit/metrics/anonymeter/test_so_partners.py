"""The multivariate singling-out search's partners (metrics/anonymeter/partners.py): an attempt a
partner shares surely selects two rows, and a search that skips counting those attempts keeps the
same queries and attempts as one that counts every attempt."""

from __future__ import annotations

import numpy as np
import pytest

from synthguard.engine import queries as Q
from synthguard.metrics.anonymeter import singling_out as S
from synthguard.metrics.anonymeter.partners import partners_of, release_partners


def _release(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A release matrix with few distinct values (most attempts select two rows or more), numeric
    columns with ties, -0.0 beside 0.0, and missing values."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, 4, n), rng.integers(0, 3, n), rng.integers(0, 6, n),
                         rng.integers(0, 50, n) / 2.0, rng.normal(size=n).round(1),
                         rng.choice([0.0, -0.0, 1.0], n), rng.integers(0, 2, n)]).astype(float)
    X[rng.random(n) < 0.05, 4] = np.nan
    X[rng.random(n) < 0.03, 1] = np.nan
    is_num = np.array([False, False, False, True, True, True, False])
    with np.errstate(all="ignore"):
        med = np.array([np.nanmedian(X[:, j]) if is_num[j] else np.nan for j in range(X.shape[1])])
    return X, is_num, med


def _attempts(X: np.ndarray, is_num: np.ndarray, med: np.ndarray, b: int, k: int, seed: int):
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, X.shape[0], b)
    cols = Q.smallest_columns(rng.random((b, X.shape[1])), k)
    vals = X[rows[:, None], cols]
    nan = np.isnan(vals)
    op = np.where(is_num[cols], np.where(vals > med[cols], Q.GE, Q.LE), Q.EQ)
    return rows, cols, np.where(nan, Q.ISNULL, op).astype(np.int64), np.where(nan, 0.0, vals)


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_an_attempt_a_partner_shares_selects_two_rows_or_more(k):
    X, is_num, med = _release(3000)
    partners = release_partners(X, is_num, med)
    rows, cols, op, vals = _attempts(X, is_num, med, 20_000, k, seed=k)
    sure = partners.shared(rows, cols)
    counts = Q.count_matches(X, cols, op, vals, cap=2)[0]
    assert sure.mean() > 0.3 and (counts[sure] == 2).all()


def test_each_partner_bit_is_the_count_kernels_comparison():
    """Rebuild every partner's mask from the kernel's own one-row queries: for row r and a column j,
    the one-predicate query of r on j holds for partner s exactly when bit j is set."""
    X, is_num, med = _release(400, seed=3)
    partners = release_partners(X, is_num, med)
    n, p = X.shape
    # find each slot's partner again: the rows whose every predicate bit agrees
    for r in range(0, n, 37):
        vals = X[r]
        nan = np.isnan(vals)
        op = np.where(is_num, np.where(vals > med, Q.GE, Q.LE), Q.EQ)
        op = np.where(nan, Q.ISNULL, op)
        holds = np.column_stack([Q.count_matches(X[s:s + 1], np.arange(p)[:, None], op[:, None],
                                                 np.where(nan, 0.0, vals)[:, None])[0] == 1
                                 for s in range(n)])  # (p, n): row s satisfies r's predicate j
        masks_all = (holds.astype(np.uint64) << np.arange(p, dtype=np.uint64)[:, None]).sum(axis=0)
        masks_all[r] = 0  # r is never its own partner
        for bits in partners.masks[r]:
            assert bits in set(masks_all.tolist())


def test_a_search_with_partners_keeps_the_queries_and_attempts_and_reads_and_counts_fewer(monkeypatch):
    X, is_num, med = _release(5000, seed=1)
    monkeypatch.setattr(S, "PARTNERS_MIN_LEFT", 1000)  # a search of 60,000 attempts counts as long
    index = Q.ColumnIndex(X)
    counted = {"plain": 0, "partners": 0}
    read = {"plain": 0, "partners": 0}

    def run(label: str, partners):
        def count(c, o, v):
            counted[label] += c.shape[0]
            return Q.count_matches(index, c, o, v, cap=2)[0]

        def values(r, c):
            read[label] += r.shape[0]
            return X[r[:, None], c]

        return S.multivariate_search(X.shape[0], is_num, med, values, count,
                                     3, 400, 60_000, np.random.default_rng(7), partners=partners)

    plain, n_plain = run("plain", None)
    with_p, n_with = run("partners", lambda: release_partners(X, is_num, med))
    assert n_plain == n_with
    for a, b in ((plain.col, with_p.col), (plain.op, with_p.op), (plain.val, with_p.val), (plain.src, with_p.src)):
        np.testing.assert_array_equal(a, b)
    assert counted["partners"] < counted["plain"] // 2, counted
    assert read["partners"] == counted["partners"], read  # a shared attempt's values are not read


def test_a_short_search_asks_for_no_partners():
    X, is_num, med = _release(300, seed=2)
    asked = []
    S.multivariate_search(X.shape[0], is_num, med, lambda r, c: X[r[:, None], c],
                          lambda c, o, v: Q.count_matches(X, c, o, v, cap=2)[0], 3, 10, 5000,
                          np.random.default_rng(0), partners=lambda: asked.append(1))
    assert asked == []


def test_no_partners_past_64_columns():
    X = np.zeros((10, 65))
    assert release_partners(X, np.zeros(65, dtype=bool), np.full(65, np.nan)) is None


def test_partners_given_as_rows_have_the_masks_of_the_sorts_partners():
    """``partners_of`` with the release's own partners (``ids``) gives ``release_partners``'
    masks; with partners of another choice (a re-test's renumbered ones, dropped slots -1), each
    mask holds exactly the columns on which that row satisfies the row's predicates."""
    X, is_num, med = _release(2000, seed=4)
    own = release_partners(X, is_num, med)
    np.testing.assert_array_equal(partners_of(X, is_num, med, own.ids).masks, own.masks)
    rng = np.random.default_rng(4)
    ids = rng.integers(-1, X.shape[0], (X.shape[0], 3))
    masks = partners_of(X, is_num, med, ids).masks
    for r in rng.choice(X.shape[0], 50, replace=False):
        for t, b in enumerate(ids[r]):
            want = 0
            if b >= 0 and b != r:
                for j in range(X.shape[1]):
                    x, y = X[r, j], X[b, j]
                    ok = np.isnan(y) if np.isnan(x) else (y >= x if x > med[j] else y <= x) if is_num[j] \
                        else y == x
                    want |= int(bool(ok)) << j
            assert int(masks[r, t]) == want, (r, t)
