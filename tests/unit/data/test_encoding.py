"""The shared encoding: vocabularies across tables, extra frames, ranges and exact-row identities."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synthguard.data import infer_schema, prepare_tables
from synthguard.data.encoding import (
    NAN_CODE,
    Block,
    EncodedView,
    Encoder,
    row_hash128,
    row_identities,
    value_ranges,
)


def _tables():
    orig = pd.DataFrame({"x": [1.0, 2.0, np.nan, 4.0], "c": ["a", "b", None, "a"],
                         "d": pd.to_datetime(["2020-01-01", "2020-01-03", None, "1970-01-02"]),
                         "f": [True, False, True, True]})
    syn = pd.DataFrame({"x": [2.0, 9.0, 1.0], "c": ["b", "z", "a"],
                        "d": pd.to_datetime(["2020-01-01", "2020-01-02", "2020-01-01"]),
                        "f": [False, False, True]})
    ctrl = pd.DataFrame({"x": [0.5], "c": ["q"], "d": pd.to_datetime(["2021-01-01"]), "f": [True]})
    return prepare_tables(orig, syn, ctrl)


def test_codes_shared_across_tables_and_nan():
    view = EncodedView(_tables())
    o, s, c = (view.block(r) for r in ("original", "synthetic", "control"))
    j = o.cat_columns.index("c")
    assert o.cat[0, j] == o.cat[3, j] == s.cat[2, j]  # "a" everywhere
    assert o.cat[1, j] == s.cat[0, j]  # "b"
    assert o.cat[2, j] == NAN_CODE
    assert len({o.cat[0, j], o.cat[1, j], s.cat[1, j], c.cat[0, j]}) == 4  # a, b, z, q distinct
    assert (o.cat[:, j] >= -1).all()
    # datetimes are days since the epoch; NaT -> NaN
    d = o.num[:, o.num_columns.index("d")]
    assert d[3] == 1.0 and np.isnan(d[2])
    # booleans are categorical
    assert "f" in o.cat_columns
    # the same block object is served from the cache
    assert view.block("original") is o


def test_extra_frame_reuses_codes_and_never_collides():
    view = EncodedView(_tables())
    known = {int(v) for r in ("original", "synthetic", "control") for v in view.block(r).cat.ravel()}
    extra = pd.DataFrame({"x": [1.0, 3.0], "c": ["a", "new"], "d": pd.to_datetime(["2020-01-01", None]),
                          "f": [True, False]})
    e = view.encode(extra)
    o = view.block("original")
    j = o.cat_columns.index("c")
    assert e.cat[0, j] == o.cat[0, j]
    assert e.cat[1, j] not in known and e.cat[1, j] >= 0
    # a second unseen value gets yet another code; the earlier one is stable
    e2 = view.encode(pd.DataFrame({"x": [1.0], "c": ["newer"], "d": pd.to_datetime(["2020-01-01"]), "f": [True]}))
    assert e2.cat[0, j] not in known | {int(e.cat[1, j])}
    assert view.encode(extra).cat[1, j] == e.cat[1, j]


def test_a_run_tables_columns_are_factorised_once_with_the_codes_of_a_fresh_encoding(monkeypatch):
    # the run's own tables (learnt once) keep each column's factorisation: blocks of other column
    # sets, categorical-only blocks and row identities code a column without factorising it again,
    # with the codes an encoder without that record gives (extra frames in between included)
    tables = _tables()
    view = EncodedView(tables)
    calls = []
    factorize = pd.factorize
    monkeypatch.setattr(pd, "factorize", lambda *a, **k: calls.append(1) or factorize(*a, **k))
    first = {r: view.encoder.encode(tables.get(r), categorical_only=True) for r in tables.roles}
    view.encode(pd.DataFrame({"x": [7.5], "c": ["new"], "d": pd.to_datetime([None]), "f": [False]}),
                categorical_only=True)
    n = len(calls)
    again = {r: view.encoder.encode(tables.get(r), categorical_only=True) for r in tables.roles}
    assert len(calls) == n  # nothing factorised again
    fresh = Encoder(view.schema)
    for r in tables.roles:
        np.testing.assert_array_equal(again[r].cat, first[r].cat)
    for r in tables.roles:  # a fresh encoder learning in the same order gives the same codes
        fresh.learn(tables.get(r), [c for c in view.schema.tabular_columns()
                                    if not fresh.is_numeric(c)])
    for r in tables.roles:
        np.testing.assert_array_equal(fresh.encode(tables.get(r), categorical_only=True).cat,
                                      first[r].cat)


def test_learning_a_frame_gathers_no_codes(monkeypatch):
    """Learning a frame factorises its columns (kept when learnt once) but gathers no row's code:
    the codes are written when a block or code matrix asks for them."""
    tables = _tables()
    gathered = []
    for name in ("kept_codes", "_frame_codes", "codes"):
        real = getattr(Encoder, name)
        monkeypatch.setattr(Encoder, name, lambda self, *a, _r=real, _n=name, **k:
                            gathered.append(_n) or _r(self, *a, **k))
    enc = Encoder(infer_schema(tables.original))
    for r in tables.roles:
        enc.learn(tables.get(r), once=True)
    enc.learn(tables.original.copy())  # a frame not held
    assert gathered == []
    assert enc.labels("c") == ["a", "b", "z", "q"]


def test_fill_codes_writes_the_codes_of_encode_a_row_block_at_a_time():
    """``fill_codes`` writes, in place, the codes ``encode(categorical_only=True)`` gives column by
    column, across row blocks (more than 65,536 rows), missing values, held and other frames; and
    ``distinct_codes`` counts each vocabulary value and the missing code as the codes do."""
    rng = np.random.default_rng(3)
    n = 70_000
    a = pd.DataFrame({"x": rng.integers(0, 50, n).astype(float), "c": rng.choice(list("abcde"), n)})
    a.loc[rng.choice(n, 30, replace=False), "x"] = np.nan
    b = pd.DataFrame({"x": rng.integers(40, 90, 500).astype(float), "c": rng.choice(list("efg"), 500)})
    enc = Encoder(infer_schema(a))
    for f in (a, b):
        enc.learn(f, once=True)
    for f in (a, b, a.copy()):
        out = np.full((len(f), 2), 99, dtype=np.int64)
        got = enc.fill_codes(f, ["c", "x"], out)
        assert got is out
        want = np.column_stack([enc.codes(f["c"]), enc.codes(f["x"])])
        np.testing.assert_array_equal(got, want)
    both = np.concatenate([enc.fill_codes(f, ["c", "x"], np.empty((len(f), 2), np.int64)) for f in (a, b)])
    assert enc.distinct_codes([a, b], ["c", "x"]).tolist() == [np.unique(both[:, j]).size for j in range(2)]
    assert NAN_CODE in both[:, 1]


@pytest.mark.parametrize("seconds_first", [False, True])
def test_a_block_in_days_and_in_seconds_share_one_categorical_code_matrix(seconds_first):
    # a large release is encoded in days (most searches) and in seconds (exact-datetime searches):
    # the categorical codes are the same in both, held once; each block equals a fresh encoding
    t = _tables()
    view = EncodedView(t)
    kinds = [True, False] if seconds_first else [False, True]
    got = {exact: view.block("synthetic", exact_datetimes=exact) for exact in kinds}
    assert got[True].cat is got[False].cat
    fresh = Encoder(t.schema)
    for role in t.roles:
        fresh.learn(t.get(role), [c for c in t.schema.tabular_columns() if not fresh.is_numeric(c)], once=True)
    fresh.datetime_origins.update(view.encoder.datetime_origins)
    for exact, block in got.items():
        want = fresh.encode(t.synthetic, exact_datetimes=exact)
        assert block.num_columns == want.num_columns and block.cat_columns == want.cat_columns
        assert np.array_equal(block.num, want.num, equal_nan=True) and np.array_equal(block.cat, want.cat)
    assert not np.array_equal(got[True].num, got[False].num, equal_nan=True)  # days against seconds


def test_one_and_one_point_zero_share_a_category():
    frame = pd.DataFrame({"k": pd.Series([1, 1.0, 2, None, -0.0, 0], dtype=object)})
    enc = Encoder(infer_schema(frame, {"columns": {"k": {"sdtype": "categorical"}}}))
    codes = enc.codes(frame["k"])
    assert codes[0] == codes[1] and codes[0] != codes[2]
    assert codes[3] == NAN_CODE
    assert codes[4] == codes[5]


def test_value_ranges_and_view_ranges():
    view = EncodedView(_tables())
    cols = ["x", "d"]
    r = view.ranges(cols, ("original",))
    assert r[0] == 3.0
    both = view.ranges(cols, ("original", "synthetic"))
    assert both[0] == 8.0
    const = pd.DataFrame({"x": [2.0, 2.0, np.nan]})
    enc = Encoder(infer_schema(const, {"columns": {"x": {"sdtype": "numerical"}}}))
    assert value_ranges(enc.encode(const)).tolist() == [0.0]
    assert value_ranges().size == 0


# ----------------------------------------------------------------------------- row identities
def _oracle_groups(frames: list[pd.DataFrame]) -> np.ndarray:
    """pandas' notion of equal rows: group ids over the stacked frames (NaN equal to NaN)."""
    stacked = pd.concat(frames, ignore_index=True)
    canon = stacked.copy()
    for c in canon.columns:  # pandas groups 1 and 1.0 and -0.0/0.0 together already; make it explicit
        if canon[c].dtype == object:
            canon[c] = canon[c].map(lambda v: ("num", float(v)) if isinstance(v, (int, float)) and v == v
                                    else ("na",) if v is None or v != v else ("str", v))
    return canon.groupby(list(canon.columns), dropna=False, sort=False).ngroup().to_numpy()


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    pairs = pd.DataFrame({"a": a, "b": b}).drop_duplicates()
    return pairs["a"].is_unique and pairs["b"].is_unique


@st.composite
def id_frames(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n1, n2 = draw(st.integers(1, 40)), draw(st.integers(1, 40))

    def make(n):
        x = rng.choice([0.0, -0.0, 1.5, np.nan, 2.0], n)
        k = pd.Series(rng.choice(np.array([1, 1.0, "a", None, 0, -0.0, np.nan], dtype=object), n), dtype=object)
        return pd.DataFrame({"x": x, "k": k, "b": rng.random(n) < 0.5})

    return make(n1), make(n2)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(id_frames())
def test_row_identities_match_pandas(frames):
    a, b = frames
    meta = {"columns": {"x": {"sdtype": "numerical"}, "k": {"sdtype": "categorical"},
                        "b": {"sdtype": "boolean"}}}
    enc = Encoder(infer_schema(a, meta))
    ids = row_identities(enc.encode(a, categorical_only=True), enc.encode(b, categorical_only=True))
    got = np.concatenate(ids)
    assert _same_partition(got, _oracle_groups([a, b]))
    # exact-match pairs agree with a pandas merge on every column (NaN keys match NaN)
    key = pd.DataFrame({"g": _oracle_groups([a, b])})
    ga, gb = key["g"][: len(a)].to_numpy(), key["g"][len(a):].to_numpy()
    merged = pd.merge(pd.DataFrame({"g": ga, "i": np.arange(len(a))}),
                      pd.DataFrame({"g": gb, "j": np.arange(len(b))}), on="g")
    want = set(zip(merged["i"], merged["j"], strict=True))
    have = {(i, j) for i in range(len(a)) for j in range(len(b)) if ids[0][i] == ids[1][j]}
    assert have == want


def test_view_row_ids_with_pandas_merge():
    rng = np.random.default_rng(0)
    orig = pd.DataFrame({"x": rng.integers(0, 3, 200).astype(float), "c": rng.choice(["u", "v"], 200),
                         "d": pd.to_datetime("2020-01-01") + pd.to_timedelta(rng.integers(0, 2, 200), unit="D")})
    orig.loc[::17, "x"] = np.nan
    syn = orig.sample(150, random_state=1, replace=True).reset_index(drop=True)
    syn.loc[::5, "x"] = -0.0
    view = EncodedView(prepare_tables(orig, syn))
    ids = view.row_ids()
    merged = pd.merge(syn.reset_index(names="i"), orig.reset_index(names="j"), on=["x", "c", "d"])
    want = set(zip(merged["i"], merged["j"], strict=True))
    have = {(i, j) for i in range(len(syn)) for j in range(len(orig)) if ids["synthetic"][i] == ids["original"][j]}
    assert have == want
    assert set(ids) == {"original", "synthetic"}
    sub = view.row_ids(["c"], roles=("original",))
    assert len(np.unique(sub["original"])) == 2


@pytest.mark.parametrize("n", [1, 5000])
def test_row_identities_dense_ids(n):
    rng = np.random.default_rng(n)
    df = pd.DataFrame({"x": rng.integers(0, 4, n).astype(float), "c": rng.choice(list("ab"), n)})
    enc = Encoder(infer_schema(df, {"columns": {"x": {"sdtype": "numerical"}, "c": {"sdtype": "categorical"}}}))
    (ids,) = row_identities(enc.encode(df, categorical_only=True))
    assert ids.min() == 0 and ids.max() == len(df.drop_duplicates()) - 1


def test_row_identities_of_numeric_blocks_number_rows_by_first_appearance_across_blocks():
    num_a = np.array([[0.0, 1.5], [-0.0, 1.5], [np.nan, 2.0], [7.0, np.inf]])
    num_b = np.array([[7.0, np.inf], [np.nan, 2.0], [0.0, 1.5], [0.0, 2.0]])
    cat_a, cat_b = np.array([[1], [1], [2], [3]]), np.array([[3], [2], [1], [1]])
    a = Block(num_a, cat_a, ("n", "m"), ("c",))
    b = Block(num_b, cat_b, ("n", "m"), ("c",))
    ids_a, ids_b = row_identities(a, b)
    # -0.0 equals 0.0, missing equals missing; new rows numbered as they first appear
    assert ids_a.tolist() == [0, 0, 1, 2] and ids_b.tolist() == [2, 1, 0, 3]
    with pytest.raises(ValueError, match="different widths"):
        row_identities(a, Block(num_b[:, :1], cat_b, ("n",), ("c",)))


def test_row_hash_identity_rules():
    num = np.array([[0.0], [-0.0], [np.nan], [np.nan], [1.0]])
    cat = np.array([[1], [1], [-1], [-1], [1]], dtype=np.int64)
    h = row_hash128(Block(num, cat, ("n",), ("c",)))
    assert h.shape == (5, 2) and h.dtype == np.uint64
    assert (h[0] == h[1]).all() and (h[2] == h[3]).all()  # -0.0 == 0.0, missing == missing
    assert not (h[0] == h[4]).all() and not (h[0] == h[2]).all()
    assert (h[:, 0] != h[:, 1]).all()  # two independent keys


def test_row_hash_of_no_rows_with_text_hashes():
    """A partition without rows hashes to no identities, text columns included (the reshape of
    ``(0, 2)`` text hashes to ``(0, -1)`` failed)."""
    from synthguard.data.encoding import text_hash128

    block = Block(np.zeros((0, 1)), np.zeros((0, 1), dtype=np.int64), ("n",), ("c",))
    h = row_hash128(block, text_hash128(pd.Series([], dtype=object)))
    assert h.shape == (0, 2) and h.dtype == np.uint64
    one = Block(np.ones((1, 1)), np.ones((1, 1), dtype=np.int64), ("n",), ("c",))
    text = text_hash128(pd.Series(["a note"], dtype=object))
    assert (row_hash128(one, text) == row_hash128(one, text.ravel())).all()  # flat columns as before
