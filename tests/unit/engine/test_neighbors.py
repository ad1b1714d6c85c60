"""The neighbour engine against an independent brute force, for both backends, bit for bit."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synthguard.data import infer_schema
from synthguard.data.encoding import Block, Encoder, value_ranges
from synthguard.engine.neighbors import (
    DistanceMetric,
    available_backends,
    count_within,
    gower,
    kneighbors,
    kneighbors_within,
    nearest_distances,
    nearest_ties,
    pairwise_distances,
)
from synthguard.errors import ConfigError

BACKENDS = available_backends()
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ----------------------------------------------------------------------------- the oracle
def _term(a: float, b: float, scale: float, clip: bool, p: float, nan_rule: str) -> float:
    """One numeric term, straight from the formula in ``neighbors/metric.py``'s docstring."""
    a_nan, b_nan = math.isnan(a), math.isnan(b)
    if a_nan and b_nan:
        return 0.0 if nan_rule == "max" else 1.0
    if a_nan or b_nan:
        return 1.0 if nan_rule == "max" else math.inf
    diff = abs(a - b)
    t = diff / scale if scale > 0 else (0.0 if diff == 0 else 1.0)
    if clip:
        t = min(t, 1.0)
    if p == 2.0:
        return t * t  # the engine squares by multiplication (libm pow(t, 2) may differ by an ulp)
    return t ** p if p != 1.0 else t


def brute_sums_scalar(q: Block, r: Block, m: DistanceMetric) -> np.ndarray:
    """Per-pair pure-Python weighted sums (numeric columns first, then categorical)."""
    wn, wc = _weights(m, q)
    out = np.empty((q.n_rows, r.n_rows))
    for i in range(q.n_rows):
        for j in range(r.n_rows):
            s = 0.0
            for c in range(q.num.shape[1]):
                s += float(wn[c]) * _term(float(q.num[i, c]), float(r.num[j, c]), float(m.scale[c]),
                                          m.clip, m.p, m.nan_rule)
            for c in range(q.cat.shape[1]):
                if q.cat[i, c] != r.cat[j, c]:
                    s += float(wc[c])
            out[i, j] = s
    return out


def brute_sums_vector(q: Block, r: Block, m: DistanceMetric) -> np.ndarray:
    """The same sums, vectorised per column (for the larger cases)."""
    wn, wc = _weights(m, q)
    s = np.zeros((q.n_rows, r.n_rows))
    for c in range(q.num.shape[1]):
        a, b = q.num[:, c][:, None], r.num[:, c][None, :]
        with np.errstate(invalid="ignore"):
            diff = np.abs(a - b)
            t = diff / m.scale[c] if m.scale[c] > 0 else np.where(diff == 0, 0.0, 1.0)
        if m.clip:
            t = np.minimum(t, 1.0)
        if m.p == 2.0:
            t = t * t
        elif m.p != 1.0:
            t = t ** m.p
        an, bn = np.isnan(a) & np.ones_like(b, bool), np.isnan(b) & np.ones_like(a, bool)
        both, one = an & bn, an ^ bn
        t = np.where(both, 0.0 if m.nan_rule == "max" else 1.0, t)
        t = np.where(one, 1.0 if m.nan_rule == "max" else np.inf, t)
        s += wn[c] * t
    for c in range(q.cat.shape[1]):
        s += wc[c] * (q.cat[:, c][:, None] != r.cat[:, c][None, :])
    return s


def _weights(m: DistanceMetric, q: Block) -> tuple[np.ndarray, np.ndarray]:
    wn = np.ones(q.num.shape[1]) if m.num_weights is None else np.asarray(m.num_weights, float)
    wc = np.ones(q.cat.shape[1]) if m.cat_weights is None else np.asarray(m.cat_weights, float)
    return wn, wc


def brute_distances(q: Block, r: Block, m: DistanceMetric, scalar: bool) -> np.ndarray:
    s = brute_sums_scalar(q, r, m) if scalar else brute_sums_vector(q, r, m)
    wn, wc = _weights(m, q)
    total = wn.sum() + wc.sum()
    d = s / total if (m.normalise and total > 0) else s
    return np.sqrt(d) if m.p == 2.0 else d


def brute_knn(d: np.ndarray, k: int, exclude_self: bool) -> tuple[np.ndarray, np.ndarray]:
    nq, nr = d.shape
    dist = np.full((nq, k), np.inf)
    idx = np.full((nq, k), -1, dtype=np.int64)
    for i in range(nq):
        cand = np.array([j for j in range(nr) if not (exclude_self and j == i)], dtype=np.int64)
        if cand.size == 0:
            continue
        order = cand[np.lexsort((cand, d[i, cand]))][:k]
        dist[i, : order.size] = d[i, order]
        idx[i, : order.size] = order
    return dist, idx


# ----------------------------------------------------------------------------- random tables
def random_blocks(rng: np.random.Generator, nq: int, nr: int, n_num: int, n_cat: int, nan_rate: float,
                  ties: bool, dup_share: float) -> tuple[Block, Block]:
    def num_col(n: int, kind: str) -> np.ndarray:
        if kind == "const":
            return np.full(n, 3.5)
        if kind == "ties":
            return rng.integers(0, 4, n).astype(float) * 0.5
        if kind == "signed_zero":
            return rng.choice([-0.0, 0.0, 1.0], n)
        return rng.normal(10, 5, n).round(3)

    kinds = [rng.choice(["const", "ties", "cont", "signed_zero"]) if ties else "cont" for _ in range(n_num)]
    levels = [int(rng.integers(1, 6)) for _ in range(n_cat)]

    def make(n: int) -> Block:
        num = np.column_stack([num_col(n, k) for k in kinds]) if n_num else np.zeros((n, 0))
        cat = (np.column_stack([rng.integers(0, lv, n) for lv in levels]).astype(np.int64) if n_cat
               else np.zeros((n, 0), dtype=np.int64))
        if nan_rate > 0:
            num[rng.random(num.shape) < nan_rate] = np.nan
            cat[rng.random(cat.shape) < nan_rate] = -1
        return Block(np.ascontiguousarray(num), np.ascontiguousarray(cat),
                     tuple(f"n{i}" for i in range(n_num)), tuple(f"c{i}" for i in range(n_cat)))

    r = make(nr)
    q = make(nq)
    n_dup = int(dup_share * nq)
    if n_dup:  # copies of reference rows among the queries (exact matches, ties at distance 0)
        src = rng.integers(0, nr, n_dup)
        num, cat = q.num.copy(), q.cat.copy()
        num[:n_dup], cat[:n_dup] = r.num[src], r.cat[src]
        q = Block(num, cat, q.num_columns, q.cat_columns)
    return q, r


@st.composite
def cases(draw, large: bool = False):
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n_num = draw(st.integers(0, 4))
    n_cat = draw(st.integers(0 if n_num else 1, 3))
    if large:
        nr = draw(st.integers(256, 420))
        nq = draw(st.integers(1, 60))
    else:
        nr = draw(st.integers(1, 12))
        nq = draw(st.integers(1, 12))
    exclude_self = draw(st.booleans())
    nan_rate = draw(st.sampled_from([0.0, 0.15, 0.5]))
    ties = draw(st.booleans())
    dup_share = draw(st.sampled_from([0.0, 0.5]))
    q, r = random_blocks(rng, nq, nr, n_num, n_cat, nan_rate, ties, dup_share)
    if exclude_self:
        q = r
    scale_kind = draw(st.sampled_from(["range", "random", "zeros"]))
    if scale_kind == "range":
        scale = value_ranges(q, r)
    elif scale_kind == "random":
        scale = rng.choice([0.0, 0.7, 2.0, 25.0], n_num)
    else:
        scale = np.zeros(n_num)
    weighted = draw(st.booleans())
    wn = rng.choice([0.5, 1.0, 2.0, 0.3], n_num) if weighted else None
    wc = rng.choice([0.5, 1.0, 3.0, 0.7], n_cat) if weighted else None
    metric = DistanceMetric(scale, p=draw(st.sampled_from([1.0, 2.0])), clip=draw(st.booleans()),
                            normalise=draw(st.booleans()), nan_rule=draw(st.sampled_from(["max", "anonymeter"])),
                            num_weights=wn, cat_weights=wc)
    k = draw(st.integers(1, nr + 3)) if not large else draw(st.integers(1, 4))
    return q, r, metric, k, exclude_self


def _check_knn(q, r, metric, k, exclude_self, scalar):
    d = brute_distances(q, r, metric, scalar)
    want_d, want_i = brute_knn(d, k, exclude_self)
    got = {}
    for b in BACKENDS:
        res = kneighbors(q, r, metric, k, exclude_self=exclude_self, backend=b)
        np.testing.assert_array_equal(res.indices, want_i, err_msg=f"backend {b}")
        np.testing.assert_array_equal(res.distances, want_d, err_msg=f"backend {b}")
        got[b] = res
    if len(got) == 2:  # bit for bit
        assert got["numba"].distances.tobytes() == got["numpy"].distances.tobytes()
        assert np.array_equal(got["numba"].indices, got["numpy"].indices)


@settings(max_examples=80, **SETTINGS)
@given(cases())
def test_kneighbors_matches_scalar_brute_force(case):
    q, r, metric, k, exclude_self = case
    np.testing.assert_array_equal(brute_sums_scalar(q, r, metric), brute_sums_vector(q, r, metric))
    _check_knn(q, r, metric, k, exclude_self, scalar=True)


@settings(max_examples=25, **SETTINGS)
@given(cases(large=True))
def test_kneighbors_matches_brute_force_on_pruned_sizes(case):
    q, r, metric, k, exclude_self = case
    _check_knn(q, r, metric, k, exclude_self, scalar=False)


def _check_count(q, r, metric, exclude_self, radius):
    d = brute_distances(q, r, metric, scalar=False)
    if exclude_self:
        np.fill_diagonal(d, np.inf)
    lo = (d <= radius).sum(axis=1)
    hi = (d <= radius * (1 + 1e-9)).sum(axis=1)  # the engine forgives rounding at the radius
    outs = []
    for b in BACKENDS:
        got = count_within(q, r, metric, radius, exclude_self=exclude_self, backend=b)
        assert np.all(got >= lo) and np.all(got <= hi), b
        outs.append(got)
    for o in outs[1:]:
        np.testing.assert_array_equal(o, outs[0])


@settings(max_examples=40, **SETTINGS)
@given(cases(), st.integers(0, 2**31))
def test_count_within_matches_brute_force(case, pick):
    q, r, metric, _, exclude_self = case
    d = brute_distances(q, r, metric, scalar=False)
    finite = np.unique(d[np.isfinite(d)])
    radius = float(finite[pick % finite.size]) if finite.size else 0.5  # radius = an actual distance (ties)
    _check_count(q, r, metric, exclude_self, radius)


@settings(max_examples=15, **SETTINGS)
@given(cases(large=True), st.integers(0, 2**31))
def test_count_within_on_pruned_sizes(case, pick):
    q, r, metric, _, exclude_self = case
    d = brute_distances(q, r, metric, scalar=False)
    finite = np.sort(np.unique(d[np.isfinite(d)]))
    radius = float(finite[pick % max(1, min(finite.size, 40))]) if finite.size else 0.5
    _check_count(q, r, metric, exclude_self, radius)


# ----------------------------------------------------------------------------- fixed cases
def _mixed(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "x": rng.normal(0, 1, n).round(1),
        "i": rng.integers(0, 5, n),
        "when": pd.to_datetime("2021-01-01") + pd.to_timedelta(rng.integers(0, 30, n), unit="D"),
        "flag": rng.random(n) < 0.5,
        "cat": rng.choice(["a", "b", "c"], n),
    })
    df["x"] = df["x"].mask(rng.random(n) < 0.1)
    df["cat"] = df["cat"].mask(rng.random(n) < 0.1)
    df["when"] = df["when"].mask(rng.random(n) < 0.1)
    return df


@pytest.mark.parametrize("nan_rule", ["max", "anonymeter"])
@pytest.mark.parametrize("k", [1, 2, 5])
def test_mixed_frames_with_datetime_and_boolean(nan_rule, k):
    orig, syn = _mixed(600, 1), _mixed(300, 2)
    syn.iloc[:100] = orig.iloc[:100].to_numpy()  # copies
    enc = Encoder(infer_schema(orig))
    o, s = enc.encode(orig), enc.encode(syn)
    assert "when" in o.num_columns and "flag" in o.cat_columns
    metric = gower(value_ranges(o, s), clip=nan_rule == "max", normalise=nan_rule == "max", nan_rule=nan_rule)
    _check_knn(s, o, metric, k, False, scalar=False)
    _check_knn(o, o, metric, k, True, scalar=False)


def test_k_larger_than_reference_and_one_row():
    rng = np.random.default_rng(0)
    q, r = random_blocks(rng, 5, 1, 2, 1, 0.0, False, 0.0)
    m = gower(value_ranges(q, r))
    for b in BACKENDS:
        res = kneighbors(q, r, m, 3, backend=b)
        assert (res.indices[:, 0] == 0).all() and (res.indices[:, 1:] == -1).all()
        assert np.isinf(res.distances[:, 1:]).all()
        self_res = kneighbors(r, r, m, 1, exclude_self=True, backend=b)
        assert self_res.indices[0, 0] == -1 and np.isinf(self_res.distances[0, 0])


def test_exclude_self_keeps_duplicates_and_lowest_index():
    num = np.array([[1.0], [1.0], [1.0], [5.0]])
    blk = Block(num, np.zeros((4, 0), np.int64), ("x",), ())
    m = gower(np.array([4.0]))
    for b in BACKENDS:
        res = kneighbors(blk, blk, m, 2, exclude_self=True, backend=b)
        np.testing.assert_array_equal(res.indices, [[1, 2], [0, 2], [0, 1], [0, 1]])
        np.testing.assert_array_equal(res.distances[:3], 0.0)
        np.testing.assert_array_equal(nearest_distances(blk, blk, m, exclude_self=True, backend=b),
                                      [0, 0, 0, 1.0])


def test_pairwise_and_errors():
    rng = np.random.default_rng(3)
    q, r = random_blocks(rng, 7, 9, 2, 2, 0.2, True, 0.3)
    m = gower(value_ranges(q, r), clip=True)
    np.testing.assert_array_equal(pairwise_distances(q, r, m), brute_distances(q, r, m, scalar=True))
    with pytest.raises(ConfigError):
        kneighbors(q, r, m, 0)
    with pytest.raises(ConfigError):
        kneighbors(q, r, m, 1, backend="gpu")
    with pytest.raises(ConfigError):
        kneighbors(q, r, m, 1, exclude_self=True)
    with pytest.raises(ConfigError):
        kneighbors(q, r.select(["n0"]), m, 1)


@pytest.mark.parametrize("seed", [0, 1])
def test_large_realistic_tables_both_backends_agree(seed):
    """A few thousand rows of correlated mixed data with copies: pruning is heavily exercised."""
    rng = np.random.default_rng(seed)
    n = 2000
    z = rng.normal(size=(n, 2))
    num = np.column_stack([(40 + 12 * z[:, 0]).round(), np.exp(10 + 0.5 * z[:, 1]).round(-1),
                           rng.integers(0, 3000, n).astype(float), (25 + 3 * z[:, 0] + rng.normal(size=n)).round(1)])
    num[rng.random(num.shape) < 0.03] = np.nan
    cat = np.column_stack([(z[:, 0] > 0).astype(int), rng.integers(0, 40, n), (z[:, 1] * 2).round().astype(int) % 7])
    ref = Block(num, cat.astype(np.int64), ("a", "b", "c", "d"), ("e", "f", "g"))
    qrows = rng.integers(0, n, 400)
    qnum = ref.num[qrows].copy()
    qnum[200:, 0] += 1
    query = Block(qnum, ref.cat[qrows].copy(), ref.num_columns, ref.cat_columns)
    m = gower(value_ranges(ref), clip=True)
    for k, excl, q in [(1, False, query), (2, True, ref), (3, False, query)]:
        got = [kneighbors(q, ref, m, k, exclude_self=excl, backend=b) for b in BACKENDS]
        if len(got) == 2:
            assert got[0].distances.tobytes() == got[1].distances.tobytes()
            np.testing.assert_array_equal(got[0].indices, got[1].indices)
        if excl:
            sub = np.arange(0, n, 15)
            d = brute_distances(ref.take(sub), ref, m, scalar=False)
            d[np.arange(sub.size), sub] = np.inf
            want_d, want_i = brute_knn(d, k, False)
            np.testing.assert_array_equal(got[0].indices[sub], want_i)
            np.testing.assert_array_equal(got[0].distances[sub], want_d)


@pytest.mark.parametrize("bad", [0.0, -1.0, np.nan, np.inf])
def test_bad_weights_are_config_errors(bad):
    rng = np.random.default_rng(0)
    q, r = random_blocks(rng, 3, 4, 2, 1, 0.0, False, 0.0)
    m = DistanceMetric(value_ranges(q, r), num_weights=np.array([1.0, bad]), cat_weights=np.array([1.0]))
    with pytest.raises(ConfigError, match="weights"):
        kneighbors(q, r, m, 1)


def test_tree_reuse_is_keyed_on_arrays_and_metric():
    rng = np.random.default_rng(5)
    q, r = random_blocks(rng, 50, 400, 3, 2, 0.1, True, 0.3)
    m1, m2 = gower(value_ranges(q, r), clip=True), gower(value_ranges(q, r), clip=False, nan_rule="anonymeter")
    first = kneighbors(q, r, m1, 2)
    again = kneighbors(q, r, m1, 2)  # served from the reused tree
    other = kneighbors(q, r, m2, 2)  # another metric: another tree
    r2 = Block(r.num.copy(), r.cat.copy(), r.num_columns, r.cat_columns)
    r2.num[:10] += 1.0  # different data in a new array: a new tree
    for got, blk, m in [(first, r, m1), (again, r, m1), (other, r, m2),
                        (kneighbors(q, r2, m1, 2), r2, m1)]:
        want_d, want_i = brute_knn(brute_distances(q, blk, m, scalar=False), 2, False)
        np.testing.assert_array_equal(got.indices, want_i)
        np.testing.assert_array_equal(got.distances, want_d)


def test_no_columns_every_distance_is_zero():
    q = Block(np.zeros((3, 0)), np.zeros((3, 0), np.int64), (), ())
    r = Block(np.zeros((5, 0)), np.zeros((5, 0), np.int64), (), ())
    m = gower(np.zeros(0))
    for b in BACKENDS:
        res = kneighbors(q, r, m, 2, backend=b)
        np.testing.assert_array_equal(res.indices, [[0, 1]] * 3)
        np.testing.assert_array_equal(res.distances, 0.0)
        np.testing.assert_array_equal(count_within(q, r, m, 0.0, backend=b), [5, 5, 5])


def test_row_order_does_not_change_distances():
    rng = np.random.default_rng(11)
    q, r = random_blocks(rng, 1200, 900, 3, 3, 0.05, True, 0.4)
    m = gower(value_ranges(r), clip=True)
    base = kneighbors(q, r, m, 3)
    pr, pq = rng.permutation(r.n_rows), rng.permutation(q.n_rows)
    shuffled = kneighbors(q.take(pq), r.take(pr), m, 3)
    np.testing.assert_array_equal(shuffled.distances, base.distances[pq])
    # the neighbours are the same rows up to ties: distances to the mapped-back rows agree
    back = pr[shuffled.indices]
    d = brute_distances(q.take(pq), r, m, scalar=False)
    np.testing.assert_array_equal(np.take_along_axis(d, back, axis=1), shuffled.distances)


def _mixed_block(rng: np.random.Generator, n: int) -> Block:
    z = rng.normal(size=(n, 2))
    num = np.column_stack([(40 + 12 * z[:, 0]).round(), (25 + 3 * z[:, 1]).round(0)])
    num[rng.random(num.shape) < 0.05] = np.nan
    cat = np.column_stack([(z[:, 0] > 0).astype(int), rng.integers(0, 4, n)]).astype(np.int64)
    return Block(num, cat, ("a", "b"), ("c", "d"))


# the NumPy backend is only ever given increasing ids (one partition per block)
STEP_CASES = [(b, shuffled) for b in BACKENDS for shuffled in (False, True) if not (b == "numpy" and shuffled)]


def _step_blocks(rng: np.random.Generator, n: int, copies: int, shuffled_ids: bool):
    """Reference rows with ``copies`` exact copies, their Gower distance, an id per row (shuffled
    or not), four blocks of rows (with shuffled ids, a block's ids interleave with the others') and
    the union ordered by id (row ``g`` has id ``g``)."""
    ref = _mixed_block(rng, n)
    ref = Block(np.vstack([ref.num, ref.num[:copies]]), np.vstack([ref.cat, ref.cat[:copies]]),
                ref.num_columns, ref.cat_columns)
    m = gower(value_ranges(ref), clip=True, normalise=True)
    ids = rng.permutation(ref.n_rows).astype(np.int64) if shuffled_ids else np.arange(ref.n_rows, dtype=np.int64)
    blocks = np.array_split(np.arange(ref.n_rows), 4)
    if shuffled_ids:
        blocks = [b[np.argsort(ids[b])][::-1].copy() for b in blocks]
    return ref, m, ids, blocks, ref.take(np.argsort(ids))


@pytest.mark.parametrize(("backend", "shuffled_ids"), STEP_CASES)
def test_kneighbors_step_over_blocks_equals_one_search(backend, shuffled_ids):
    """A search run block after block (each step seeded with the previous k best) returns exactly the
    one search over the union: same distances, same ids, ties by the lower id (coarse columns make
    many ties), self excluded by id; the compiled backend accepts ids in any order within a block."""
    from synthguard.engine.neighbors.engine import kneighbors_step, reference_index

    rng = np.random.default_rng(7)
    ref, m, ids, blocks, union = _step_blocks(rng, 900, 100, shuffled_ids)
    n = ref.n_rows
    query = _mixed_block(rng, 300)
    for k, q, q_ids, excl in [(1, query, np.arange(300), False), (3, query, np.arange(300), False),
                              (2, union, np.arange(n), True)]:
        want = kneighbors(q, union, m, k, exclude_self=excl, backend=backend)
        state = None
        for b in blocks:
            blk = ref.take(b)
            # a tree that consumed (reordered in place) its own copy of the rows, as the Dask path builds it
            tree = reference_index(ref.take(b), m, backend, consume=shuffled_ids)
            state = kneighbors_step(q, None if tree is not None else blk, m, k, query_ids=q_ids,
                                    reference_ids=ids[b], exclude_self=excl, start=state, index=tree,
                                    backend=backend)
        assert state[0].tobytes() == want.distances.tobytes()
        np.testing.assert_array_equal(state[2], want.indices)


@pytest.mark.parametrize(("backend", "shuffled_ids"), STEP_CASES)
def test_kneighbors_step_carries_the_count_of_rows_at_the_nearest_distance(backend, shuffled_ids):
    """With ``ties``, the count carried block after block is the one search's over the union
    (:func:`nearest_ties`): coarse columns and copies put many rows at one distance, some of them
    in several blocks, and a nearer row in a later block resets the count."""
    from synthguard.engine.neighbors.engine import kneighbors_step, reference_index

    rng = np.random.default_rng(11)
    ref, m, ids, blocks, union = _step_blocks(rng, 700, 150, shuffled_ids)
    n = ref.n_rows
    q = _mixed_block(rng, 300)
    want, want_n = nearest_ties(q, union, m, backend=backend)
    assert (want_n > 1).sum() > 30 and (want_n == 1).sum() > 30  # tied and untied query rows
    state = None
    for b in blocks:
        tree = reference_index(ref.take(b), m, backend, consume=shuffled_ids)
        state = kneighbors_step(q, None if tree is not None else ref.take(b), m, 1, query_ids=np.arange(300),
                                reference_ids=ids[b], start=state, index=tree, backend=backend, ties=True)
    assert state[0].tobytes() == want.distances.tobytes()
    np.testing.assert_array_equal(state[2], want.indices)
    np.testing.assert_array_equal(state[3], want_n)
    with pytest.raises(ConfigError, match="exclude_self"):
        kneighbors_step(union, union, m, 1, query_ids=np.arange(n), reference_ids=np.arange(n),
                        exclude_self=True, backend=backend, ties=True)


def test_kneighbors_step_refuses_what_it_cannot_do_exactly():
    """The NumPy backend breaks ties by row order, so it refuses ids that do not increase; ids must
    match the rows; a step without a reference block needs its tree."""
    from synthguard.engine.neighbors.engine import kneighbors_step

    rng = np.random.default_rng(3)
    ref, q = _mixed_block(rng, 20), _mixed_block(rng, 5)
    m = gower(value_ranges(ref), clip=True)
    with pytest.raises(ConfigError, match="increasing reference ids"):
        kneighbors_step(q, ref, m, 1, query_ids=np.arange(5), reference_ids=np.arange(20)[::-1],
                        backend="numpy")
    with pytest.raises(ConfigError, match="one id per"):
        kneighbors_step(q, ref, m, 1, query_ids=np.arange(5), reference_ids=np.arange(19), backend="numpy")
    with pytest.raises(ConfigError, match="its index"):
        kneighbors_step(q, None, m, 1, query_ids=np.arange(5), reference_ids=np.arange(20))


@settings(max_examples=30, **SETTINGS)
@given(cases(large=True), st.integers(0, 2**31))
def test_kneighbors_within_is_the_plain_search_cut_at_each_radius(case, pick):
    """Radii drawn from the actual distances (ties at the radius): the k nearest within each
    query's radius are the plain search's, in its order, and nothing past the radius."""
    q, r, metric, k, _ = case
    rng = np.random.default_rng(pick)
    d = brute_distances(q, r, metric, scalar=False)
    radius = np.array([rng.choice(row[np.isfinite(row)]) if np.isfinite(row).any() else 0.5
                       for row in d])  # loop over the few query rows of a test case
    radius[rng.random(radius.size) < 0.2] = -1.0  # no neighbour at all
    for b in BACKENDS:
        plain = kneighbors(q, r, metric, k, backend=b)
        got = kneighbors_within(q, r, metric, k, radius, backend=b)
        keep = plain.distances <= radius[:, None]
        np.testing.assert_array_equal(got.indices, np.where(keep, plain.indices, -1), err_msg=b)
        np.testing.assert_array_equal(got.distances, np.where(keep, plain.distances, np.inf),
                                      err_msg=b)


@settings(max_examples=40, **SETTINGS)
@given(st.one_of(cases(), cases(large=True)))
def test_nearest_ties_counts_every_reference_row_at_the_nearest_distance(case):
    """Ties on purpose (few values, copies of reference rows, missing values, signed zeros): the
    nearest row is kneighbors' (lower index first) and the count is the number of reference rows
    whose brute-force distance equals the nearest one, exactly, for both backends."""
    q, r, metric, _, _ = case
    d = brute_distances(q, r, metric, scalar=False)
    want_d, want_i = brute_knn(d, 1, False)
    want_n = (d == want_d).sum(axis=1)
    for b in BACKENDS:
        nb, ties = nearest_ties(q, r, metric, backend=b)
        np.testing.assert_array_equal(nb.indices, want_i, err_msg=b)
        assert nb.distances.tobytes() == want_d.tobytes(), b
        np.testing.assert_array_equal(ties, want_n, err_msg=b)


def test_nearest_ties_without_reference_rows_counts_none():
    """An empty reference: no nearest row (``-1``, ``inf``) and a count of 0, on both backends."""
    rng = np.random.default_rng(5)
    q, r = random_blocks(rng, 4, 6, 2, 1, 0.0, False, 0.0)
    empty = r.take(np.zeros(0, dtype=np.int64))
    for b in BACKENDS:
        nb, ties = nearest_ties(q, empty, gower(value_ranges(q, r)), backend=b)
        assert nb.indices[:, 0].tolist() == [-1] * 4 and np.isinf(nb.distances).all(), b
        assert ties.tolist() == [0] * 4, b


@pytest.mark.skipif("numba" not in BACKENDS, reason="the kept trees belong to the compiled backend")
def test_a_kept_tree_is_dropped_with_its_reference_block_and_reused_while_it_lives():
    import gc

    from synthguard.engine.neighbors import engine

    rng = np.random.default_rng(4)

    def block(n: int) -> Block:
        return Block(rng.random((n, 2)), rng.integers(0, 3, (n, 1)), ("a", "b"), ("c",))

    q, m = block(50), gower(np.array([1.0, 1.0]))
    r = block(300)
    first = kneighbors(q, r, m, 2, backend="numba")
    kept = [e for e in engine._TREES if e[0]() is r.num]
    assert len(kept) == 1
    np.testing.assert_array_equal(kneighbors(q, r, m, 2, backend="numba").indices, first.indices)
    assert [e for e in engine._TREES if e[0]() is r.num][0][3] is kept[0][3]  # the same tree, reused
    del r, kept
    gc.collect()
    assert all(e[0]() is not None and e[1]() is not None for e in engine._TREES)


@pytest.mark.skipif("numba" not in BACKENDS, reason="the kept trees belong to the compiled backend")
def test_small_trees_do_not_evict_a_large_kept_tree():
    """Searches of a few rows as the reference (the records of a tail, the sampled records)
    between two searches of a large reference keep its tree (it was built again before); a
    tree of comparable size still keeps only the most recent other tree."""
    from synthguard.engine.neighbors import engine

    rng = np.random.default_rng(6)

    def block(n: int) -> Block:
        return Block(rng.random((n, 2)), rng.integers(0, 3, (n, 1)), ("a", "b"), ("c",))

    q, m = block(40), gower(np.array([1.0, 1.0]))
    big = block(800)
    kneighbors(q, big, m, 1, backend="numba")
    tree = [e for e in engine._TREES if e[0]() is big.num][0][3]
    smalls = [block(20) for _ in range(3)]
    for s in smalls:
        kneighbors(q, s, m, 1, backend="numba")
    assert [e[3] for e in engine._TREES if e[0]() is big.num] == [tree]  # kept, not built again
    others = [block(700), block(600)]
    for o in others:
        kneighbors(q, o, m, 1, backend="numba")
    assert not [e for e in engine._TREES if e[0]() is big.num]  # two trees as large: gone
    assert len(engine._TREES) == 2


def test_a_reference_searched_against_itself_is_ordered_by_the_tree_without_descending_it(monkeypatch):
    """Queries that are the reference rows themselves (bit for bit, missing values included) are
    searched in the tree's own order (no home-leaf descent); the neighbours, ties and counts are
    those of the search in home-leaf order."""
    if "numba" not in BACKENDS:
        pytest.skip("numba not installed")
    from synthguard.engine.neighbors import _numba
    from synthguard.engine.neighbors import engine as E

    rng = np.random.default_rng(5)
    n = 3000
    num = np.round(rng.normal(size=(n, 2)), 1)
    num[rng.random(n) < 0.05, 0] = np.nan
    b = Block(num, rng.integers(0, 3, (n, 2)).astype(np.int64), ("a", "b"), ("c", "d"))
    m = gower(np.array([4.0, 4.0]), clip=True, normalise=True)
    leaves = _numba.home_leaves
    monkeypatch.setattr(E, "_is_reference", lambda q, tree: False)
    want = kneighbors(b, b, m, 3, exclude_self=True, backend="numba")
    want_c = count_within(b, b, m, 0.05, backend="numba")
    monkeypatch.undo()

    def descended(*a):  # noqa: ANN002, ANN202
        raise AssertionError("the reference's own rows were descended the tree again")

    monkeypatch.setattr(_numba, "home_leaves", descended)
    got = kneighbors(b, b, m, 3, exclude_self=True, backend="numba")
    got_c = count_within(b, b, m, 0.05, backend="numba")
    assert got.distances.tobytes() == want.distances.tobytes()
    assert got.indices.tobytes() == want.indices.tobytes()
    assert got_c.tobytes() == want_c.tobytes()
    # other queries (one changed cell) still take the descent
    monkeypatch.setattr(_numba, "home_leaves", leaves)
    other = Block(num.copy(), b.cat.copy(), ("a", "b"), ("c", "d"))
    other.num[0, 1] += 1.0
    tree = E._build(b, m, *m.weights(2, 2))
    assert not E._is_reference(other, tree) and E._is_reference(b, tree)


@pytest.mark.skipif("numba" not in BACKENDS, reason="the kept trees belong to the compiled backend")
def test_a_block_of_the_same_rows_made_again_reads_the_tree_of_the_first(monkeypatch):
    """Each test pools the training and control rows into a block of its own: a block of the same
    rows, bit for bit (missing values included), reads the tree built for the first, kept or
    spared once that block is freed; a block differing in one cell builds its own; the neighbours
    are those of a tree built for it."""
    import gc

    from synthguard.engine.neighbors import engine

    monkeypatch.setattr(engine, "_SPARE", [])
    monkeypatch.setattr(engine, "_TREES", [])
    rng = np.random.default_rng(8)
    num = rng.random((500, 2))
    num[rng.random(500) < 0.05, 1] = np.nan
    cat = rng.integers(0, 3, (500, 1))
    q, m = Block(rng.random((60, 2)), rng.integers(0, 3, (60, 1)), ("a", "b"), ("c",)), gower(np.array([1.0, 1.0]))
    first = Block(num.copy(), cat.copy(), ("a", "b"), ("c",))
    want = kneighbors(q, first, m, 3, backend="numba")
    built = []
    real = engine._build_tree
    monkeypatch.setattr(engine, "_build_tree", lambda *a, **k: built.append(1) or real(*a, **k))
    again = Block(num.copy(), cat.copy(), ("a", "b"), ("c",))  # alive beside the first
    got = kneighbors(q, again, m, 3, backend="numba")
    assert not built
    del first, again
    gc.collect()
    assert engine._SPARE  # both blocks freed: the tree spared
    third = Block(num.copy(), cat.copy(), ("a", "b"), ("c",))
    got3 = kneighbors(q, third, m, 3, backend="numba")
    assert not built
    for g in (got, got3):
        assert g.indices.tobytes() == want.indices.tobytes()
        assert g.distances.tobytes() == want.distances.tobytes()
    other = num.copy()
    other[499, 0] += 1e-9  # one cell of the last row
    got_o = kneighbors(q, Block(other, cat.copy(), ("a", "b"), ("c",)), m, 3, backend="numba")
    assert built == [1]
    monkeypatch.undo()
    fresh = kneighbors(q, Block(other, cat.copy(), ("a", "b"), ("c",)), m, 3, backend="numba")
    assert got_o.indices.tobytes() == fresh.indices.tobytes()


@pytest.mark.skipif("numba" not in BACKENDS, reason="the kept trees belong to the compiled backend")
def test_spare_trees_hold_at_most_their_budget(monkeypatch):
    """Trees no block holds are kept within SPARE_TREE_BYTES, the most recent first; a tree larger
    than the budget is dropped with its block, as before."""
    import gc

    from synthguard.engine.neighbors import engine

    rng = np.random.default_rng(9)
    m = gower(np.array([1.0, 1.0]))
    q = Block(rng.random((20, 2)), rng.integers(0, 3, (20, 1)), ("a", "b"), ("c",))
    monkeypatch.setattr(engine, "_SPARE", [])
    sizes = []
    for n in (900, 1000, 1100):
        r = Block(rng.random((n, 2)), rng.integers(0, 3, (n, 1)), ("a", "b"), ("c",))
        kneighbors(q, r, m, 1, backend="numba")
        sizes.append([e[3] for e in engine._TREES if e[0]() is r.num][0].nbytes)
        del r
        gc.collect()
    assert len(engine._SPARE) == 3
    monkeypatch.setattr(engine, "SPARE_TREE_BYTES", sizes[2] + sizes[1])
    r = Block(rng.random((1200, 2)), rng.integers(0, 3, (1200, 1)), ("a", "b"), ("c",))
    kneighbors(q, r, m, 1, backend="numba")
    big = [e[3] for e in engine._TREES if e[0]() is r.num][0]
    assert big.nbytes > sizes[2]
    del r
    gc.collect()
    held = [t.nbytes for _, t in engine._SPARE]
    assert sum(held) <= engine.SPARE_TREE_BYTES and held[0] == big.nbytes
    monkeypatch.setattr(engine, "SPARE_TREE_BYTES", 1)
    r = Block(rng.random((1300, 2)), rng.integers(0, 3, (1300, 1)), ("a", "b"), ("c",))
    kneighbors(q, r, m, 1, backend="numba")
    tree = [e[3] for e in engine._TREES if e[0]() is r.num][0]
    del r
    gc.collect()
    assert all(t is not tree for _, t in engine._SPARE)


@pytest.mark.skipif("numba" not in BACKENDS, reason="the kept trees belong to the compiled backend")
@pytest.mark.parametrize("k", [1, 3])
def test_a_block_of_some_rows_of_a_searched_block_reads_its_tree_without_the_others(monkeypatch, k):
    """A drop-and-retest's release is its run's without some rows: declared so, its search reads
    the run's tree (kept, or spare once its block is freed) without the other rows, and finds the
    neighbours, ids, distances and counts of a tree built for it; rows that differ from the
    declaration (a changed cell) build their own."""
    import gc

    from synthguard.engine.neighbors import engine

    monkeypatch.setattr(engine, "_SPARE", [])  # no tree of another test's blocks
    monkeypatch.setattr(engine, "_TREES", [])
    rng = np.random.default_rng(21)
    n = 3000
    num = np.round(rng.normal(size=(n, 2)), 1)
    num[rng.random(n) < 0.05, 1] = np.nan
    cat = rng.integers(0, 4, (n, 2))
    m = gower(np.array([4.0, 4.0]), clip=True, normalise=True)
    q = Block(np.round(rng.normal(size=(400, 2)), 1), rng.integers(0, 4, (400, 2)), ("a", "b"), ("c", "d"))
    whole = Block(num.copy(), cat.copy(), ("a", "b"), ("c", "d"))  # arrays of its own: freed with it
    kneighbors(q, whole, m, k, backend="numba")  # the run's search: its tree kept
    real = engine._build_tree
    kept = np.sort(rng.choice(n, n - 300, replace=False))
    part = Block(num[kept].copy(), cat[kept].copy(), ("a", "b"), ("c", "d"))
    monkeypatch.setattr(engine, "_build_tree", lambda *a, **kw: pytest.fail("built a tree"))
    withdraw = engine.searched_subset(n, kept)
    try:
        got = kneighbors(q, part, m, k, backend="numba")
        got_c = count_within(q, part, m, 0.05, backend="numba")
        del whole, part
        gc.collect()  # the run's block freed: its tree spare
        # only the whole's tree to read from (the part's own tree, spare too, dropped)
        engine._SPARE[:] = [e for e in engine._SPARE if e[1].perm.size == n]
        assert len(engine._SPARE) == 1
        part2 = Block(num[kept].copy(), cat[kept].copy(), ("a", "b"), ("c", "d"))
        got2 = kneighbors(q, part2, m, k, backend="numba")
        built = []
        monkeypatch.setattr(engine, "_build_tree", lambda *a, **kw: built.append(1) or real(*a, **kw))
        moved = num[kept].copy()
        moved[5, 0] += 0.1
        kneighbors(q, Block(moved, cat[kept].copy(), ("a", "b"), ("c", "d")), m, k, backend="numba")
        assert built == [1]
    finally:
        withdraw()
    engine._SPARE[:], engine._TREES[:] = [], []
    fresh = Block(num[kept].copy(), cat[kept].copy(), ("a", "b"), ("c", "d"))
    want = kneighbors(q, fresh, m, k, backend="numba")
    want_c = count_within(q, fresh, m, 0.05, backend="numba")
    for g in (got, got2):
        assert g.indices.tobytes() == want.indices.tobytes()
        assert g.distances.tobytes() == want.distances.tobytes()
    assert got_c.tobytes() == want_c.tobytes()


@pytest.mark.skipif("numba" not in BACKENDS, reason="the kept trees belong to the compiled backend")
@pytest.mark.parametrize("metric_kind, drop", [("gower", "random"), ("gower_clip", "leaves"),
                                               ("lp", "random"), ("anonymeter_nan", "leaves"),
                                               ("gower", "all_but_one")])
def test_every_search_of_a_subset_tree_equals_that_of_a_tree_built_for_the_rows(monkeypatch, metric_kind, drop):
    """k nearest (k 1, 3), a table against itself without its own rows, nearest ties, radius
    counts and searches within radii, over 1,100 queries (the home-leaf order), through the tree
    of a whole without some rows (random rows, whole leaves, all but one): the bytes of a tree
    built for the rows, for Gower (clipped, anonymeter's missing rule) and L2 distances, with
    repeated rows, missing values and -0.0."""
    from synthguard.engine.neighbors import engine, kneighbors_within, lp, nearest_ties

    monkeypatch.setattr(engine, "_SPARE", [])
    monkeypatch.setattr(engine, "_TREES", [])
    rng = np.random.default_rng(len(metric_kind) * 7 + len(drop))
    n, names_n, names_c = 2500, ("a", "b"), ("c", "d")
    num = np.round(rng.normal(size=(n, 2)), 1)
    num[rng.random((n, 2)) < 0.1] = np.nan
    num[num == 0] = -0.0
    cat = rng.integers(0, 4, (n, 2)).astype(np.int32)
    twins = rng.integers(0, n, n // 3)
    num[rng.integers(0, n, n // 3)] = num[twins]
    scale = np.array([1.5, 0.8])
    m = {"gower": gower(scale), "gower_clip": gower(scale, clip=True, normalise=True), "lp": lp(scale, 2.0),
         "anonymeter_nan": gower(scale, nan_rule="anonymeter")}[metric_kind]
    q = Block(np.round(rng.normal(size=(1100, 2)), 1), rng.integers(-1, 5, (1100, 2)), names_n, names_c)
    whole = Block(num.copy(), cat.copy(), names_n, names_c)
    kneighbors(q, whole, m, 1, backend="numba")
    tree = [e[3] for e in engine._TREES if e[0]() is whole.num][0]
    if drop == "random":
        keep = rng.random(n) < 0.9
    elif drop == "leaves":
        keep = np.ones(n, dtype=bool)
        for leaf in rng.choice(np.flatnonzero(tree.left < 0), 3, replace=False):
            keep[tree.perm[tree.start[leaf]:tree.end[leaf]]] = False
    else:
        keep = np.zeros(n, dtype=bool)
        keep[7] = True
    kept = np.flatnonzero(keep)

    def searches(part: Block) -> list[bytes]:
        out = []
        for k in (1, 3):
            nb = kneighbors(q, part, m, min(k, part.n_rows), backend="numba")
            out += [nb.distances.tobytes(), nb.indices.tobytes()]
        if part.n_rows > 2:
            nb = kneighbors(part, part, m, 2, exclude_self=True, backend="numba")
            out += [nb.distances.tobytes(), nb.indices.tobytes()]
        nb, ties = nearest_ties(q, part, m, backend="numba")
        out += [nb.indices.tobytes(), ties.tobytes()]
        out.append(count_within(q, part, m, 0.1, backend="numba").tobytes())
        nb = kneighbors_within(q, part, m, 1, np.full(q.n_rows, 0.3), backend="numba")
        return out + [nb.distances.tobytes(), nb.indices.tobytes()]

    real = engine._build_tree
    built = []
    monkeypatch.setattr(engine, "_build_tree", lambda *a, **kw: built.append(1) or real(*a, **kw))
    withdraw = engine.searched_subset(n, kept, (tree,))
    try:
        got = searches(Block(num[kept].copy(), cat[kept].copy(), names_n, names_c))
    finally:
        withdraw()
    assert not built  # every search read the whole's tree without the other rows
    engine._SPARE[:], engine._TREES[:] = [], []
    assert searches(Block(num[kept].copy(), cat[kept].copy(), names_n, names_c)) == got
    assert built  # built for the rows this time
