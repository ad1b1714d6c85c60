"""detect_surrogate_ids compares the tables' values as text; _shares_text compares numbers first
(cheap) and as text only the values equal as numbers: the same answer."""

from __future__ import annotations

import numpy as np
import pandas as pd

from synthguard.data.quirks import _shares_text


def test_shares_text_answers_as_the_text_comparison():
    rng = np.random.default_rng(0)
    pools = [lambda n: pd.Series(rng.integers(-5, 5, n)),
             lambda n: pd.Series(rng.choice([0.0, -0.0, 1.0, 2.5, 1e16, 1e16 + 2, 3.0], n)),
             lambda n: pd.Series(rng.choice(["a", "b", "1", "1.0"], n)),
             lambda n: pd.Series(rng.integers(0, 6, n).astype("float32")),
             lambda n: pd.Series(rng.choice([1, 2, 3], n).astype(str(rng.choice(["int64", "float64"]))))]
    for k in range(1000):
        make = pools[k % len(pools)]
        a, b = make(int(rng.integers(1, 20))), make(int(rng.integers(1, 20)))
        assert _shares_text(a, b) == bool(pd.Index(a.astype(str)).isin(b.astype(str)).any()), (a, b)
    assert not _shares_text(pd.Series([0.0, 1.0]), pd.Series([-0.0, 2.0]))  # "-0.0" is not "0.0"
