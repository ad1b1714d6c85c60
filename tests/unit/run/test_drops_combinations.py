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


def test_plain_records_equal_to_jsonable_of_to_dict():
    from synthguard.core.results import to_jsonable
    from synthguard.run.drops import plain_records

    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"metric": rng.choice(["dcr", "inference"], 50).astype(object),
                          "release_row": rng.integers(0, 10**6, 50), "rank": np.arange(1, 51),
                          "copy": rng.random(50) < 0.5,
                          "reason": rng.choice(["verbatim copy", "copy with 1 cell(s) changed"], 50)})
    assert plain_records(frame) == to_jsonable(frame.to_dict("records"))
    assert all(type(r["release_row"]) is int and type(r["copy"]) is bool for r in plain_records(frame))
    frame.loc[3, "reason"] = np.nan  # a missing value: the general path (None in the JSON)
    assert plain_records(frame) == to_jsonable(frame.to_dict("records"))
    assert plain_records(frame)[3]["reason"] is None
