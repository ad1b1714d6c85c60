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
