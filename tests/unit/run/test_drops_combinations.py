"""The tests tying each release row, found at once, equal the per-row groupby they replace."""

from __future__ import annotations

import numpy as np
import pandas as pd

from synthguard.run.drops import tie_combinations


def test_tie_combinations_equal_the_groupby_tuples_in_order():
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"release": rng.integers(0, 300, 2000), "test": rng.integers(0, 6, 2000),
                          "contrib": rng.random(2000)})
    ties = frame.sort_values(["release", "contrib"], ascending=[True, False], kind="stable") \
        .drop_duplicates(["release", "test"])
    want = ties.groupby("release")["test"].agg(tuple)
    codes, combos = tie_combinations(ties["release"].to_numpy(), ties["test"].to_numpy())
    got = [tuple(int(j) for j in combos[c] if j >= 0) for c in codes]
    assert got == [tuple(int(j) for j in t) for t in want.to_numpy()]
    assert len({tuple(c) for c in combos}) == len(combos) < len(got)  # shared combinations
