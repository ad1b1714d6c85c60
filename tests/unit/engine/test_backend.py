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



def test_key_groups_many_stacks_each_column_sets_key_groups_with_its_index():
    """One relation for many key sets: each set's rows are its own key groups (binned columns cut
    first), tagged with the set's index; no set, no row."""
    ctx = _ctx()
    roles = ("original", "control", "synthetic")
    sets = [["a"], ["b"], ["a", "b"], ["a"]]
    bins = {"a": np.array([2.5])}
    for cut in (None, bins):
        many = ctx.data.key_groups_many(sets, roles, bins=cut).frame
        assert many["set"].tolist() == sorted(many["set"].tolist())
        for j, cols in enumerate(sets):
            one = ctx.data.key_groups(cols, roles, bins=cut).frame
            got = many[many["set"] == j].drop(columns="set").reset_index(drop=True)
            pd.testing.assert_frame_equal(got, one)
    # 6 distinct a (missing one of them), 4 b: the groups per set
    assert ctx.data.key_groups_many(sets[:2], roles).counts(lambda f: f["set"]).to_dict() == {0: 6, 1: 4}
    assert ctx.data.key_groups_many([["a"]], roles, bins=bins).sums(lambda f: f["n_original"]) == [5]
    assert len(ctx.data.key_groups_many([], roles).frame) == 0


def test_key_ids_are_the_ids_key_rows_counts_with():
    """key_ids (one process): equal value tuples (binned by bin, missing its own value), equal ids
    across the roles asked, so a metric can name the rows behind key_rows' counts."""
    ctx = _ctx()
    roles = ("original", "control", "synthetic")
    for bins in (None, {"a": np.array([2.5])}):
        ids = ctx.data.key_ids(["a", "b"], roles, bins=bins)
        rows = ctx.data.key_rows("original", {"n": (["a", "b"], roles)}, bins=bins).flags(
            one=lambda f: f["n"] == 1)
        pooled = np.concatenate([ids[r] for r in roles])
        assert [ids[r].size for r in roles] == [5, 2, 4]
        assert np.array_equal(np.bincount(pooled)[ids["original"]] == 1, rows["one"])
    o, c = ctx.tables.original, ctx.tables.control  # (2, y) in both tables
    exact = ctx.data.key_ids(["a", "b"], roles)
    assert exact["original"][(o["a"] == 2).to_numpy()][0] == exact["control"][(c["a"] == 2).to_numpy()][0]
    binned = ctx.data.key_ids(["a"], roles, bins={"a": np.array([2.5])})
    assert len(set(binned["original"][o["a"].isin([1, 2]).to_numpy()].tolist())) == 1  # one bin
    assert binned["original"][o["a"].isna().to_numpy()][0] not in set(binned["synthetic"].tolist())


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


def test_content_draw_rows_on_hand_searches_and_near_counts_of_the_membership_attacks():
    """content_draw: the seeded draw over the canonical content order (pooled roles, among some
    rows; all rows without touching the generator when n covers them); kneighbors_block: a whole
    table searched for rows on hand; near_counts: rows equal on every cell / every cell but one,
    brute-force checked (missing equals missing)."""
    from synthguard.data.hashing import row_hashes
    from synthguard.engine.neighbors import gower

    ctx = _ctx()
    data, cols = ctx.data, ["a", "b"]
    pooled = pd.concat([ctx.tables.original[cols], ctx.tables.control[cols]], ignore_index=True)
    rng = np.random.default_rng(5)
    order = np.argsort(row_hashes(pooled), kind="stable")
    want = np.sort(order[np.random.default_rng(5).choice(7, 3, replace=False)])
    assert data.content_draw(("original", "control"), cols, 3, rng).tolist() == want.tolist()
    among = np.array([0, 2, 3, 6])
    got = data.content_draw(("original", "control"), cols, 2, np.random.default_rng(1), among=among)
    assert got.size == 2 and set(got) <= set(among) and (np.diff(got) > 0).all()
    untouched = np.random.default_rng(2)
    assert data.content_draw(("control",), cols, 5, untouched).tolist() == [0, 1]
    assert untouched.integers(0, 2**31) == np.random.default_rng(2).integers(0, 2**31)
    query = data.encoded_rows("synthetic", cols, np.arange(4))
    metric = gower(data.ranges(cols, ("original", "synthetic", "control")), clip=True)
    d, i = data.kneighbors_block(query, "original", cols, metric, 2)
    want_d, want_i = data.kneighbors("synthetic", "original", cols, metric, 2)
    np.testing.assert_array_equal(d, want_d)
    np.testing.assert_array_equal(i, want_i)
    exact, within = data.near_counts("original", cols, query)
    orig = data.encoded_rows("original", cols, np.arange(5))
    q, o = np.c_[query.num, query.cat], np.c_[orig.num, orig.cat]
    eq = ((q[:, None, :] == o[None, :, :]) | (np.isnan(q[:, None, :]) & np.isnan(o[None, :, :]))).sum(axis=2)
    assert exact.tolist() == (eq == 2).sum(axis=1).tolist() and exact.max() == 2  # (1, x) twice
    assert within.tolist() == (eq >= 1).sum(axis=1).tolist() and (within > exact).any()


def test_anonymeter_questions_distinct_rows_by_hash_bounds_and_neighbours_among_rows_in_any_order():
    """``distinct_order``: the lowest position of each distinct row, in content-hash order;
    ``value_bounds``: encoded min/max of whole roles or of rows by position; ``kneighbors_among``:
    the engine's search of the stacked query rows against the reference rows in the order given
    (ties by their index there), duplicate query rows sharing their neighbours."""
    from synthguard.data.encoding import value_bounds
    from synthguard.data.hashing import row_hashes
    from synthguard.engine.neighbors import gower, kneighbors

    ctx = _ctx()
    data = ctx.data
    o = data.distinct_order("original", ["a", "b"])
    first = np.flatnonzero(~ctx.tables.original[["a", "b"]].duplicated().to_numpy())
    assert o.size == 4 and sorted(o.tolist()) == first.tolist()  # (1, x) twice: its lowest position
    assert (np.diff(row_hashes(ctx.tables.original[["a", "b"]]).take(o).astype(np.float64)) > 0).all()
    assert data.distinct_order("synthetic", ["b"]).size == 3
    lo, hi = data.value_bounds(["a", "b"], ("original", "control"))
    assert (lo.tolist(), hi.tolist()) == ([1.0], [5.0])  # missing skipped
    lo, hi = data.value_bounds(["a"], ("synthetic", "control"), rows={"synthetic": np.array([0, 1])})
    want = value_bounds(ctx.encoded.block("synthetic", ["a"]).take(np.array([0, 1])),
                        ctx.encoded.block("control", ["a"]))
    assert (lo.tolist(), hi.tolist()) == (want[0].tolist(), want[1].tolist())
    metric = gower(np.array([8.0]), clip=False, normalise=False, nan_rule="anonymeter")
    ref = np.array([3, 1, 2, 0])  # any order: ties go to the lower index in it
    rows = np.array([4, 0, 1, 0])
    d, i = data.kneighbors_among([("original", rows), ("control", None)], "synthetic", ref, ["a", "b"],
                                 metric, 2)
    q = ctx.encoded.block("original", ["a", "b"]).take(rows)
    c = ctx.encoded.block("control", ["a", "b"])
    stacked = type(q)(np.concatenate([q.num, c.num]), np.concatenate([q.cat, c.cat]), q.num_columns,
                      q.cat_columns)
    nb = kneighbors(stacked, ctx.encoded.block("synthetic", ["a", "b"]).take(ref), metric, 2)
    np.testing.assert_array_equal(d, nb.distances)
    np.testing.assert_array_equal(i, nb.indices)
    assert d.shape == (6, 2) and (i[1] == i[3]).all()


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


def _tie_tables() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Real and release rows whose nearest real rows are known: release row 0 midway between two
    training rows (tied), 1 nearest to one training row held three times, twice in the training
    table and once in the control (identical rows: one nearest, not a tie), 2 a copy of a row
    with a missing value (unique), 3 one mismatch from two rows sharing its missing value (tied,
    one of them a control row), 4 at 0.0 between a training 0.0 and a control -0.0 (distinct rows
    at one distance: tied); then 300 filler rows a table (the tree prunes), far from them."""
    rng = np.random.default_rng(7)

    def filler(n: int) -> pd.DataFrame:
        return pd.DataFrame({"x": rng.normal(100, 10, n).round(2), "y": rng.normal(50, 5, n).round(1),
                             "g": rng.choice(["p", "q", "r"], n)})

    orig = pd.concat([pd.DataFrame({"x": [0.0, 2.0, 7.0, 7.0, np.nan, np.nan, 0.0],
                                    "y": [0.0, 0.0, 3.0, 3.0, 9.0, 9.0, 20.0],
                                    "g": ["a", "a", "b", "b", "c", "d", "e"]}), filler(300)],
                     ignore_index=True)
    ctl = pd.concat([pd.DataFrame({"x": [7.0, np.nan, -0.0], "y": [3.0, 9.0, 20.0], "g": ["b", "f", "e"]}),
                     filler(300)], ignore_index=True)
    syn = pd.concat([pd.DataFrame({"x": [1.0, 7.25, np.nan, np.nan, 0.0], "y": [0.0, 3.0, 9.0, 9.0, 20.0],
                                   "g": ["a", "b", "c", "z", "e"]}), filler(200)], ignore_index=True)
    return orig, syn, ctl


def test_nearest_reached_lists_every_tied_nearest_real_row_and_only_those():
    """Backend.nearest_reached against its definition, computed here from every pairwise distance
    (the engine's float distance): a real row is reached when it is at a release row's smallest
    distance to the pooled real rows, and a release row is tied when more than one distinct row
    (encoded bits) is at that distance; for both neighbour backends, all release rows and a
    subset. The hand-made rows check the definition's cases: a tie between two training rows, a
    unique nearest row held three times (not a tie), missing values, -0.0 next to 0.0."""
    from synthguard.engine.backend import stack_blocks
    from synthguard.engine.neighbors import pairwise_distances
    from synthguard.engine.neighbors.distinct import distinct_rows
    from synthguard.metrics.disclosure._dcr import dcr_metric

    orig, syn, ctl = _tie_tables()
    meta = {"columns": {"x": {"sdtype": "numerical"}, "y": {"sdtype": "numerical"},
                        "g": {"sdtype": "categorical"}}}
    cols = ["x", "y", "g"]
    for backend in ("numba", "numpy"):
        ctx = Context.from_frames(orig, syn, ctl, meta, backend=backend, canonical=False)
        data = ctx.data
        metric = dcr_metric(data.ranges_seconds(cols, ("original", "control")))
        blocks = [ctx.encoded.block(r, cols, exact_datetimes=True) for r in ("original", "control")]
        pooled = stack_blocks(blocks)
        _, distinct = distinct_rows(pooled)
        for rows in (None, np.array([0, 1, 2, 3, 4, 9, 40, 41])):
            q = ctx.encoded.block("synthetic", cols, exact_datetimes=True)
            q = q if rows is None else q.take(rows)
            d = pairwise_distances(q, pooled, metric)
            at = d == d.min(axis=1)[:, None]
            # per release row, the distinct rows at its smallest distance (loop over a few hundred rows)
            want_tied = np.array([np.unique(distinct[row]).size > 1 for row in at])
            (won_t, won_c), tied = data.nearest_reached("synthetic", ("original", "control"), cols, metric,
                                                        query_rows=rows)
            np.testing.assert_array_equal(np.concatenate([won_t, won_c]), at.any(axis=0), err_msg=backend)
            np.testing.assert_array_equal(tied, want_tied, err_msg=backend)
            assert tied[:5].tolist() == [True, False, False, True, True], backend
            assert won_t[:7].all() and won_c[:3].all(), backend


def test_value_flags_and_medians_read_one_column_at_a_time(monkeypatch):
    """Singling out's value flags and medians over the whole release read the run's block a column
    at a time: no copy of the rows (``_rows_of``) and no matrix of every column (at 10M release
    rows of 15 columns, 1.2 GB each); the same values as the matrix of every column."""
    import synthguard.engine.backend as B

    rng = np.random.default_rng(0)
    n = 400

    def people(m: int) -> pd.DataFrame:
        out = pd.DataFrame({"a": rng.normal(size=m).round(3), "b": rng.choice(["x", "y", None], m),
                            "c": rng.integers(0, 5, m).astype(float)})
        out.loc[::7, "a"] = np.nan
        return out

    ctx = Context.from_frames(people(50), people(n), people(40))
    cols = ["a", "c", "b"]
    rows = np.sort(rng.choice(n, 300, replace=False))
    data = ctx.data
    whole = B.query_matrix(B._rows_of(ctx.encoded.block("synthetic"), cols, rows))  # in cols' order (num, then cat)
    want_flags = B.value_flags_of(whole)
    want_medians = np.array([np.nanmedian(whole[:, j]) for j in range(len(cols))])

    widths = []
    real = B._query_matrix_at

    def one_column(block, columns, at):
        widths.append(len(columns))
        return real(block, columns, at)

    def no_row_copy(*_a, **_k):
        raise AssertionError("a copy of the release's rows")

    monkeypatch.setattr(B, "_query_matrix_at", one_column)
    monkeypatch.setattr(B, "_rows_of", no_row_copy)
    got = data.value_flags("synthetic", cols, rows)
    assert all(np.array_equal(got[k], want_flags[k]) for k in want_flags)
    assert np.array_equal(data.medians("synthetic", cols, rows), want_medians, equal_nan=True)
    assert widths and set(widths) == {1}


def test_pairs_within_searches_a_batch_of_query_rows_at_a_time(monkeypatch):
    """``pairs_within`` over a release-sized query (closest_distance_mia: every release row
    against the flagged records) searches ``_WITHIN_ROWS`` query rows at a time (at 10M release
    rows one search of them all held 8 GB of copies and k slots); the same pairs as one batch."""
    import synthguard.engine.backend as B
    import synthguard.engine.neighbors as N
    from synthguard.data.encoding import Block
    from synthguard.engine.neighbors import gower

    rng = np.random.default_rng(1)
    q = Block(rng.integers(0, 6, (300, 2)).astype(float), rng.integers(0, 3, (300, 1)), ("x", "y"), ("g",))
    r = Block(rng.integers(0, 6, (40, 2)).astype(float), rng.integers(0, 3, (40, 1)), ("x", "y"), ("g",))
    metric = gower(np.array([5.0, 5.0]))
    radius = rng.choice([-1.0, 0.0, 0.2, 0.5], 300)
    whole = B.pairs_within(q, r, metric, radius)  # 300 rows: one batch
    assert whole[0].size > 300  # queries with more than 8 rows in their radius: k doubled

    sizes = []
    real = N.kneighbors_within

    def spy(query, *a, **k):
        sizes.append(query.n_rows)
        return real(query, *a, **k)

    monkeypatch.setattr(N, "kneighbors_within", spy)
    monkeypatch.setattr(B, "_WITHIN_ROWS", 64, raising=False)
    got = B.pairs_within(q, r, metric, radius)
    assert sizes and max(sizes) <= 64
    assert all(np.array_equal(a, b) for a, b in zip(got, whole, strict=True))


def test_value_flags_of_match_a_stable_sort_of_every_column():
    """The value flags number each column's values by one hash pass (first rows by a running
    maximum of the codes) instead of a stable sort of every row: the same flags as ``np.unique``'s
    first indices and counts, with NaN, ``-0.0`` beside ``0.0``, one value, many values and a
    column without a value."""
    import synthguard.engine.backend as B

    rng = np.random.default_rng(3)
    n = 5000
    X = np.column_stack([
        rng.integers(0, 4, n).astype(float),  # few values
        rng.normal(size=n).round(2),  # many values, some once
        np.where(rng.random(n) < 0.5, 0.0, -0.0),  # -0.0 == 0.0: one value
        np.where(rng.random(n) < 0.3, np.nan, rng.integers(0, 50, n).astype(float)),
        np.full(n, np.nan),  # no value
        np.arange(n, 0, -1, dtype=float),  # every value once, descending
    ])
    X[5, 1], X[7, 1] = 1e9, -1e9  # the largest and smallest held once
    got = B.value_flags_of(X)
    for j in range(X.shape[1]):
        x = X[:, j]
        pos = np.flatnonzero(~np.isnan(x))
        first = np.zeros(n, dtype=bool)
        once = np.zeros(n, dtype=bool)
        low = high = -1
        if pos.size:
            _, at, cnt = np.unique(x[pos], return_index=True, return_counts=True)
            first[pos[at]] = True
            once[pos[at[cnt == 1]]] = True
            low = pos[at[0]] if cnt[0] == 1 else -1
            high = pos[at[-1]] if cnt[-1] == 1 else -1
        assert np.array_equal(got["first"][j], first), j
        assert np.array_equal(got["once"][j], once), j
        assert np.array_equal(got["missing"][j], np.isnan(x)), j
        assert (got["low"][j], got["high"][j]) == (low, high), j
    assert (got["low"][1], got["high"][1]) == (7, 5)


def test_one_column_of_the_query_matrix_gathered_alone_equals_that_column_of_the_whole_matrix():
    """The flags' and medians' one-column gathers (cells taken alone) give the column the row
    gather gives, missing codes as NaN, at any rows."""
    from synthguard.data.encoding import NAN_CODE, Block
    from synthguard.engine.backend import _query_matrix_of

    rng = np.random.default_rng(1)
    num = rng.normal(size=(500, 3))
    num[::7, 1] = np.nan
    cat = rng.integers(0, 4, size=(500, 2))
    cat[::5, 0] = NAN_CODE
    block = Block(num, cat, ("a", "b", "c"), ("d", "e"))
    rows = rng.permutation(500)[:321]
    whole = _query_matrix_of(block, np.arange(3), np.arange(2), rows)
    for j in range(5):
        kind = (np.array([j]), np.zeros(0, np.intp)) if j < 3 else (np.zeros(0, np.intp), np.array([j - 3]))
        one = _query_matrix_of(block, *kind, rows)
        assert one.shape == (321, 1)
        np.testing.assert_array_equal(one[:, 0], whole[:, j])
    assert np.isnan(_query_matrix_of(block, np.zeros(0, np.intp), np.array([0]), np.arange(0, 500, 5))).all()


def test_query_values_read_the_query_table_the_counts_read(monkeypatch):
    """A singling-out search's drawn cells, and the whole rows of a long search's release, come from
    the query table its counts read (made once), not from its rows encoded again each batch: the
    values of the rows taken and encoded, and no row taken; a position outside the asked rows is
    an error, not a default."""
    import pytest

    from synthguard.engine.backend import matrix_values

    b = _ctx().data
    n = b.n_rows("synthetic")
    cols = ["a", "b"]
    rows = np.arange(n)[::2]
    rng = np.random.default_rng(1)
    positions = rows[rng.integers(0, rows.size, (40, 2))]
    at = rng.integers(0, len(cols), (40, 2))
    want = matrix_values(b, "synthetic", cols, positions, at)
    want_whole = matrix_values(b, "synthetic", cols, rows, None)
    taken: list[int] = []
    inner = LocalBackend.encoded_rows
    monkeypatch.setattr(LocalBackend, "encoded_rows", lambda self, *a: taken.append(1) or inner(self, *a))
    b.query_counts("synthetic", cols, (np.zeros((1, 1), np.int64), np.zeros((1, 1), np.int64), np.zeros((1, 1))),
                   rows=rows)
    np.testing.assert_array_equal(b.query_values("synthetic", cols, positions, at, rows=rows), want)
    # cols None: the whole matrix rows (a long search's whole release), the same cells
    whole = b.query_values("synthetic", cols, rows, None, rows=rows)
    assert whole.shape == (rows.size, len(cols))
    np.testing.assert_array_equal(whole, want_whole)
    np.testing.assert_array_equal(whole[np.searchsorted(rows, positions), at], want)
    assert taken == []
    with pytest.raises(RuntimeError, match="not among the query rows"):
        b.query_values("synthetic", cols, np.array([1]), np.array([0]), rows=rows)
