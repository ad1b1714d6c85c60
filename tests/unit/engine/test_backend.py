"""The local backend answers the questions metrics count through (``ctx.data``) on one process."""

from __future__ import annotations

import numpy as np
import pandas as pd

from synthguard.engine.backend import Backend, LocalBackend, Relation
from synthguard.registry import Context


def _ctx() -> Context:
    orig = pd.DataFrame({"a": [1, 1, 2, 3, None], "b": ["x", "x", "y", "y", "z"]})
    syn = pd.DataFrame({"a": [1, 3, 3, 9], "b": ["x", "y", "y", "q"]})
    ctl = pd.DataFrame({"a": [2, 5], "b": ["y", "x"]})
    return Context.from_frames(orig, syn, ctl)


def test_context_data_is_a_local_backend_satisfying_the_protocol():
    ctx = _ctx()
    assert isinstance(ctx.data, LocalBackend) and isinstance(ctx.data, Backend)
    assert isinstance(ctx.data.key_groups(["a", "b"], ("original",)), Relation)


def test_key_groups_count_rows_per_value_tuple_and_first_positions():
    ctx = _ctx()
    g = ctx.data.key_groups(["a", "b"], ("original", "synthetic", "control"))
    n_syn_copying, n_dup = g.sums(lambda f: f["n_synthetic"] * (f["n_original"] > 0),
                                  lambda f: f["n_original"] * (f["n_original"] > 1))
    assert (n_syn_copying, n_dup) == (3, 2)  # (1, x) once, (3, y) twice; (1, x) twice in the original
    top = g.top(5, ["n_synthetic", "first_original"], [False, True],
                where=lambda f: (f["n_synthetic"] > 0) & (f["n_original"] > 0))
    assert top[["n_synthetic", "n_original"]].to_numpy().tolist() == [[2, 1], [1, 2]]
    pos = ctx.tables.original  # canonical order: the first original position of each copied row
    for row, first in zip(top.itertuples(), top["first_original"], strict=True):
        assert (pos.iloc[first]["b"] == "y") == (row.n_synthetic == 2)


def test_key_rows_flags_and_binned_counts():
    ctx = _ctx()
    rows = ctx.data.key_rows("original", {"real": (["a", "b"], ("original", "control")),
                                          "release": (["a", "b"], ("synthetic",))})
    flags = rows.flags(unique=lambda f: f["real"] == 1, hit=lambda f: f["release"] > 0)
    o = ctx.tables.original
    want_hit = [(a, b) in {(1.0, "x"), (3.0, "y")} for a, b in zip(o["a"], o["b"], strict=True)]
    assert flags["hit"].tolist() == want_hit and int(flags["unique"].sum()) == 2  # (3, y), (missing, z)
    # a binned column: values compared by bin (edges 2.5), missing its own value
    sizes = ctx.data.key_groups(["a"], ("original",), bins={"a": np.array([2.5])}).counts(
        lambda f: f["n_original"])
    assert sizes.to_dict() == {1: 2, 3: 1}  # bins {1, 1, 2} (3 rows), {3} and {missing}



def test_key_distinct_counts_distinct_value_tuples_per_class_binned_and_missing():
    """key_distinct: per row, its class size on the key columns and the distinct value tuples of
    the other columns in the class (missing a value of its own; binned columns by bin)."""
    ctx = _ctx()
    o = ctx.tables.original  # canonical order: the positions of the relation
    want = {"x": (2, 1), "y": (2, 2), "z": (1, 1)}  # b -> (class size, distinct a)
    rel = ctx.data.key_distinct("original", ["b"], ["a"])
    got = rel.top(10, ["pos"], [True])
    assert got["pos"].tolist() == list(range(5))
    assert list(zip(got["size"], got["distinct"], strict=True)) == [want[b] for b in o["b"]]
    # a in bins (edge 2.5): {1, 1, 2} -> b in {x, y}; {3} -> y; missing -> z
    binned = ctx.data.key_distinct("original", ["a"], ["b"], bins={"a": np.array([2.5])})
    got = binned.top(10, ["pos"], [True])
    want_a = [(3, 2) if a <= 2.5 else (1, 1) for a in o["a"].fillna(99)]
    assert list(zip(got["size"], got["distinct"], strict=True)) == want_a
    # two value columns, a binned: x's a values (1, 1) share a bin, y's (2, 3) do not
    two = ctx.data.key_distinct("original", ["b"], ["a", "b"], bins={"a": np.array([2.5])})
    assert two.counts(lambda f: f[["size", "distinct"]]).to_dict() == {(1, 1): 1, (2, 1): 2, (2, 2): 2}


def test_neighbours_and_seeded_sample_through_the_backend():
    from synthguard.engine.neighbors import gower

    ctx = _ctx()
    metric = gower(ctx.data.ranges(["a"], ("original",)), clip=True, normalise=True)
    d, i = ctx.data.kneighbors("synthetic", "original", ["a"], metric, 1)
    assert d.shape == (4, 1) and d[0, 0] == 0.0
    rows = ctx.data.balanced_rows("original", ["a", "b"], 3, seed=1)
    assert rows.tolist() == sorted(rows.tolist()) and rows.size == 3
    assert ctx.data.take("original", rows, ["b"]).shape == (3, 1)
    assert ctx.data.encoded_rows("original", ["a", "b"], rows).n_rows == 3


def test_masked_key_counts_unique_sets_and_cells_of_the_near_copy_tests():
    """key_counts: per asked row and column set, the pooled rows (training, then control) with its
    values and the first of them; unique_sets: on how many sets each pooled row is alone;
    cells_equal: cell by cell against pooled rows by position (missing equals missing)."""
    orig = pd.DataFrame({"a": [1, 1, 2, 3, None], "b": ["x", "x", "y", "y", "z"]})
    ctl = pd.DataFrame({"a": [2, 5], "b": ["y", "x"]})
    ctx = Context.from_frames(orig, orig.iloc[:2], ctl, canonical=False)
    asked = pd.DataFrame({"a": [1, 2, None, 7], "b": ["x", "q", "z", "x"]})
    roles = ("original", "control")
    got = ctx.data.key_counts([asked], [["a", "b"], ["a"], ["b"], []], roles)
    want = [([2, 0, 1, 0], [0, -1, 4, -1]), ([2, 2, 1, 0], [0, 2, 4, -1]),
            ([3, 0, 1, 3], [0, -1, 4, 0]), ([7, 7, 7, 7], [0, 0, 0, 0])]
    assert [(c.tolist(), f.tolist()) for ((c, f),) in got] == want
    assert ctx.data.unique_sets([["a", "b"], ["a"], ["b"]], roles).tolist() == [0, 0, 0, 2, 3, 0, 2]
    eq = ctx.data.cells_equal(asked, np.array([1, 5, 4, 6]), ["a", "b"], roles)
    assert eq.tolist() == [[True, True], [True, False], [True, True], [False, True]]
    assert ctx.data.key_matches([asked], ["a", "b"], roles)[0][0].tolist() == [2]  # (missing, z)


def test_value_summaries_and_driver_rows_searched_in_seconds():
    """The random baseline's questions in one process: per column rows, missing values, bounds
    (datetimes in int64 nanoseconds), whole-number / whole-day flags and the distinct values in an
    order-free order; rows of the driver searched like rows of a role (datetimes in seconds)."""
    from synthguard.metrics.disclosure._dcr import dcr_metric

    t = pd.to_datetime(["2021-01-02 00:00:00", "2021-01-05 00:00:00.5", None, "2021-01-03 00:00:00",
                        "2021-01-01 00:00:00"], format="ISO8601")
    orig = pd.DataFrame({"a": [1.0, 1.0, 2.0, 3.0, None], "b": ["y", "x", None, "y", "z"], "t": t})
    syn = pd.DataFrame({"a": [1.0, 3.0, 3.0, 9.5], "b": ["x", "y", "y", "q"], "t": t[[0, 3, 4, 0]]})
    meta = {"columns": {"a": {"sdtype": "numerical"}, "b": {"sdtype": "categorical"},
                        "t": {"sdtype": "datetime"}}}
    data = Context.from_frames(orig, syn, None, meta).data
    got = data.value_summaries("original", ["a", "b", "t"])
    assert got["a"] == {"rows": 5, "missing": 1, "lo": 1.0, "hi": 3.0, "whole": True}
    assert got["b"] == {"rows": 5, "missing": 1, "values": ["x", "y", "z"]}
    assert got["t"]["lo"] == pd.Timestamp("2021-01-01").value and not got["t"]["whole_days"]
    assert got["t"]["hi"] == pd.Timestamp("2021-01-05 00:00:00.5").value
    syn_sum = data.value_summaries("synthetic", ["a", "t"])
    assert syn_sum["t"]["whole_days"] and not syn_sum["a"]["whole"]
    cols = ["a", "b", "t"]
    metric = dcr_metric(data.ranges_seconds(cols))
    want = data.kneighbors_seconds("synthetic", "original", cols, metric, 2)
    got = data.kneighbors_frame_seconds(data.take("synthetic", np.arange(4), cols), "original", cols, metric, 2)
    for w, g in zip(want, got, strict=True):
        np.testing.assert_array_equal(w, g)
