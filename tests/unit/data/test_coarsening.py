"""A column coarsened label-free: the labels do not depend on how a number was written (-0.0 and
0.0, 1 and 1.0), so that one process and a cluster (which compute the edges and count the
categories differently) name the same bins and categories; the unique-value excess that ranks the
columns to coarsen, asked of the backend (the group of missing values no value)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthguard.data.coarsening import (
    FrameValues,
    coarsen_column,
    plan_coarsening,
    unique_value_excesses,
)
from synthguard.data.tables import prepare_tables
from synthguard.run.actions import local_values

from ...helpers import (
    EXCESS_META,
    excess_people,
    one_real_missing,
    unique_value_excess_by_definition,
)


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


META = EXCESS_META


def _tables(original: pd.DataFrame, synthetic: pd.DataFrame, control: pd.DataFrame | None):
    meta = {"columns": {c: s for c, s in META["columns"].items() if c in original}}
    return prepare_tables(original, synthetic, control, meta, canonical_columns=True).in_canonical_order()


def _frames(tables) -> dict[str, pd.DataFrame]:
    return {r: tables.get(r) for r in tables.roles}


def test_the_excess_leaves_out_the_lone_missing_value_the_release_holds():
    # x: the one training record missing x and a release row missing x (missing is no value);
    # 2.0 held by two training records; 1.5 and 9.0 alone and released. c (categories written as
    # numbers): 1 (training) and 1.0 (control) one category, so the released 1 singles no record
    # out; 7 alone and released; the control's lone missing c and the release's, again no value
    original = pd.DataFrame({"x": [1.5, 2.0, 2.0, np.nan], "c": pd.Series([1, 7, 8, 8], dtype=object)})
    control = pd.DataFrame({"x": [9.0, 3.0, 4.0], "c": pd.Series([1.0, 5.0, None], dtype=object)})
    synthetic = pd.DataFrame({"x": [1.5, np.nan, 9.0, 2.0], "c": pd.Series([1, None, 7, 6], dtype=object)})
    tables = _tables(original, synthetic, control)
    # (the tables keep 1 and 1.0 as they were written: the backend's categories merge them)
    assert {repr(v) for v in tables.get("control")["c"]} >= {"1.0"}
    assert {repr(v) for v in tables.get("original")["c"]} >= {"1"}
    got = local_values(tables).unique_value_excesses(["x", "c"])
    assert got == {"x": 1 / 4 - 1 / 3, "c": 1 / 4}
    frames = _frames(tables)
    for col in ("x", "c"):
        assert got[col] == unique_value_excess_by_definition(frames, col)
    # the test tells the missing group apart: counted as a value, both would be other numbers
    assert unique_value_excess_by_definition(frames, "x", missing_is_value=True) == 2 / 4 - 1 / 3
    assert unique_value_excess_by_definition(frames, "c", missing_is_value=True) == 1 / 4 - 1 / 3


@pytest.mark.parametrize("seed", range(6))
def test_the_excess_of_the_backend_is_the_definition(seed):
    # few values (repeats), missing values, and in odd seeds exactly one real record (training or
    # control) missing each column with the release missing too
    r = np.random.default_rng(seed)
    original, control, synthetic = excess_people(r, 30), excess_people(r, 25), excess_people(r, 40)
    if seed % 2:
        one_real_missing(original, control, synthetic, ("original" if seed % 4 == 1 else "control", 3))
    tables = _tables(original, synthetic, control)
    got = local_values(tables).unique_value_excesses(["x", "c", "k", "x"])
    frames = _frames(tables)
    assert got == {c: unique_value_excess_by_definition(frames, c) for c in ("x", "c", "k")}
    if seed % 2:
        for c in ("x", "c", "k"):
            assert got[c] != unique_value_excess_by_definition(frames, c, missing_is_value=True)


def test_without_control_the_excess_is_zero_and_no_backend_is_asked():
    frames = {"original": pd.DataFrame({"x": [1.0]}), "synthetic": pd.DataFrame({"x": [1.0]})}
    assert FrameValues(frames).unique_value_excesses(["x"]) == {"x": 0.0}
    assert unique_value_excesses(None, ["x", "y"], has_control=False) == {"x": 0.0, "y": 0.0}
    with pytest.raises(TypeError, match="backend"):
        FrameValues({**frames, "control": frames["original"]}).unique_value_excesses(["x"])
