"""A column coarsened label-free: the labels do not depend on how a number was written (-0.0 and
0.0, 1 and 1.0), so that one process and a cluster (which compute the edges and count the
categories differently) name the same bins and categories."""

from __future__ import annotations

import numpy as np
import pandas as pd

from synthguard.data.coarsening import FrameValues, coarsen_column, plan_coarsening


def test_a_negative_zero_edge_is_labelled_zero():
    # the pooled median is -0.0 by NumPy's interpolation (numpy 2); a cluster's exact order
    # statistics give 0.0
    x = np.r_[-5.0, -4, -3, -2, -1, [-0.0] * 6, 1, 2, 3, 4, 5]
    frames = {"original": pd.DataFrame({"x": x}), "control": pd.DataFrame({"x": x.copy()})}
    plan = plan_coarsening(FrameValues(frames), "x", "numerical", bins=4)
    assert plan is not None and 0.0 in plan.inner
    assert not any(np.signbit(plan.inner) & (plan.inner == 0))
    assert not any("-0 " in label or label.startswith("-0") or label.endswith(" -0")
                   for label in plan.labels), plan.labels


def test_one_and_one_point_zero_are_one_category_in_every_table():
    # an integer code in the training rows, the same codes as floats where the control misses one
    cats = np.arange(12)
    original = pd.DataFrame({"c": np.repeat(cats, np.arange(12, 0, -1))}, dtype=object)
    control = pd.DataFrame({"c": [float(v) for v in original["c"]] + [None]}, dtype=object)
    frames = {"original": original, "synthetic": original.copy(), "control": control}
    out, how = coarsen_column(frames, "c", "categorical", top=3)
    for role in ("original", "control"):
        kept = set(out[role].dropna()) - {"other"}
        assert kept == {"0", "1", "2"}, (role, kept, how)
    assert (out["control"].iloc[:12] == "0").all()  # 0.0 keeps its category's label
