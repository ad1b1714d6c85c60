"""The coarsening the re-test applies (``run/actions.py``)."""

import numpy as np
import pandas as pd

from synthguard.data.coarsening import coarsen_column


def test_categories_keep_the_most_frequent_real_labels_and_merge_the_rest():
    o = pd.DataFrame({"c": ["a"] * 5 + ["b"] * 4 + [1] * 3 + ["1"] * 1 + ["z"] + [None]})
    c = pd.DataFrame({"c": ["b", "a", "y", None]})
    s = pd.DataFrame({"c": ["a", "q", 1, None]})
    out, how = coarsen_column({"original": o, "control": c, "synthetic": s}, "c", "categorical",
                              top=3)
    # 1 and "1" are one label by their text (4 rows); y, z and q merge into 'other'
    assert out["synthetic"].tolist()[:3] == ["a", "other", "1"]
    assert pd.isna(out["synthetic"].iloc[3]) and pd.isna(out["control"].iloc[3])
    assert set(out["original"].dropna()) == {"a", "b", "1", "other"}
    assert "3 most frequent" in how and "other 2 merged" in how
    assert np.all(out["original"].index == o.index)
