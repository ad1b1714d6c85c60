"""core/arrays: NumPy's answers by a route that stays fast on every NumPy version."""

from __future__ import annotations

import numpy as np
import pytest

from synthguard.core.arrays import unique_codes


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint64, np.uint8, np.bool_])
@pytest.mark.parametrize("seed", range(4))
def test_unique_codes_equals_numpys_unique_for_every_integer_dtype(dtype, seed):
    rng = np.random.default_rng(seed)
    high = 2 if dtype is np.bool_ else 200 if dtype is np.uint8 else 10 ** (seed + 1)
    for size in (0, 1, 2, 1000):
        a = rng.integers(0, high, size=size).astype(dtype)
        got, want = unique_codes(a), np.unique(a)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    two_d = rng.integers(-50, 50, size=(30, 7)).astype(np.int64)  # flattened, as np.unique does
    np.testing.assert_array_equal(unique_codes(two_d), np.unique(two_d))


def test_unique_codes_leaves_its_input_as_it_was_and_refuses_floats():
    a = np.array([3, 1, 3, 2])
    unique_codes(a)
    np.testing.assert_array_equal(a, [3, 1, 3, 2])
    with pytest.raises(TypeError, match="integers"):
        unique_codes(np.array([0.5, np.nan]))


@pytest.mark.parametrize("large", [False, True])
@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.float64])
def test_search_sorted_and_equal_range_equal_numpys_searchsorted_on_both_routes(monkeypatch, large, dtype):
    import synthguard.core.arrays as arrays

    if large:  # the keys-in-order route from 1,000 sorted values (the route long arrays take)
        monkeypatch.setattr(arrays, "LARGE_SORTED", 1000)
    rng = np.random.default_rng(3)
    a = np.sort(rng.integers(0, 5000, 20_000).astype(dtype))  # many repeated values
    v = rng.integers(-10, 5010, (250, 200)).astype(dtype)  # 2-D keys, some outside ``a``
    if dtype is np.float64:
        a[-3:], v[0, :5] = np.nan, np.nan  # NaN sorts last, as NumPy orders it
    for side in ("left", "right"):
        got = arrays.search_sorted(a, v, side)
        assert got.shape == v.shape
        np.testing.assert_array_equal(got, np.searchsorted(a, v, side=side))
    lo, hi = arrays.equal_range(a, v)
    np.testing.assert_array_equal(lo, np.searchsorted(a, v, "left"))
    np.testing.assert_array_equal(hi, np.searchsorted(a, v, "right"))
    if dtype is not np.float64:
        np.testing.assert_array_equal(arrays.isin_codes(v, a[:100]), np.isin(v, a[:100]))


def test_search_sorted_takes_the_keys_in_order_only_for_long_sorted_arrays(monkeypatch):
    import synthguard.core.arrays as arrays

    calls = []
    real = np.argsort
    monkeypatch.setattr(arrays.np, "argsort", lambda *a, **k: calls.append(1) or real(*a, **k))
    keys = np.arange(40_000)[::-1].copy()
    arrays.search_sorted(np.arange(1000), keys)
    assert calls == []
    monkeypatch.setattr(arrays, "LARGE_SORTED", 1000)
    arrays.search_sorted(np.arange(1000), keys)
    assert calls == [1]


@pytest.mark.parametrize("case", ["dense int64", "negative int32", "uint64 above 2**63", "wide hashes",
                                  "mixed dtypes"])
def test_isin_codes_equals_numpys_isin_by_table_and_by_search(monkeypatch, case):
    import synthguard.core.arrays as arrays

    rng = np.random.default_rng(5)
    if case == "dense int64":  # row identities: the table route
        among, values = rng.integers(0, 60_000, 40_000), rng.integers(-5, 70_000, 50_000)
    elif case == "negative int32":
        among = rng.integers(-30_000, 30_000, 40_000).astype(np.int32)
        values = rng.integers(-40_000, 40_000, 50_000).astype(np.int32)
    elif case == "uint64 above 2**63":  # a narrow range of huge codes: no overflow on the way
        base = np.uint64(2**63 + 12345)
        among = base + rng.integers(0, 60_000, 40_000).astype(np.uint64)
        values = np.concatenate([base + rng.integers(0, 70_000, 40_000).astype(np.uint64),
                                 rng.integers(0, 2**62, 10_000).astype(np.uint64)])
    elif case == "wide hashes":  # the search route
        among = rng.integers(0, 2**62, 40_000).astype(np.uint64)
        values = np.concatenate([among[:20_000], rng.integers(0, 2**62, 30_000).astype(np.uint64)])
    else:
        among, values = rng.integers(0, 60_000, 40_000), rng.integers(0, 70_000, 50_000).astype(np.int32)
    table = arrays._range_table(np.asarray(values), np.asarray(among))
    assert (table is not None) == (case in ("dense int64", "negative int32", "uint64 above 2**63"))
    want = np.isin(values, among)
    assert 0 < want.sum() < want.size
    np.testing.assert_array_equal(arrays.isin_codes(values, among), want)
    np.testing.assert_array_equal(arrays.isin_codes(values.reshape(50, -1), among), want.reshape(50, -1))


@pytest.mark.parametrize("case", ["small_ints", "wide_ints", "negative", "huge", "float_codes", "float_values"])
@pytest.mark.parametrize("seed", [0, 1])
def test_stable_order_equals_numpys_stable_argsort_on_every_route(case, seed):
    from synthguard.core.arrays import stable_order

    rng = np.random.default_rng(seed)
    n = 5000
    if case == "small_ints":  # one 16-bit pass
        a = rng.integers(0, 90, n).astype(np.int64)
    elif case == "wide_ints":  # two passes (low half, then high half)
        a = rng.integers(0, 2**32, n, dtype=np.int64)
        a[:100] = a[100:200]  # ties across both halves
    elif case == "negative":  # np.argsort itself
        a = rng.integers(-3, 70_000, n)
    elif case == "huge":
        a = rng.integers(0, 2**40, n).astype(np.uint64)
    elif case == "float_codes":  # integer floats, NaN last, -0.0 tied with 0.0
        a = rng.integers(0, 300, n).astype(float)
        a[rng.random(n) < 0.1] = np.nan
        a[rng.random(n) < 0.05] = -0.0
        a[rng.random(n) < 0.05] = 0.0
    else:  # fractions: np.argsort itself
        a = np.round(rng.normal(size=n), 1)
        a[rng.random(n) < 0.1] = np.nan
    assert np.array_equal(stable_order(a), np.argsort(a, kind="stable"))
