"""Unit, known-answer and property tests of the GDPR trio (no reference library needed)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthguard.engine import queries as Q
from synthguard.errors import ConfigError, MetricError
from synthguard.metrics.anonymeter import singling_out as so
from synthguard.metrics.anonymeter._common import Outcome, build_result, summarise
from synthguard.metrics.anonymeter.inference import correct_guesses
from synthguard.metrics.anonymeter.linkability import default_split, random_links
from synthguard.registry import Context, canonical_name, get_metric
from synthguard.run.executor import run_metric

TRIO = ("singling_out_univariate", "singling_out_multivariate", "linkability", "inference")
CONTRACT = ("attack_rate", "attack_rate_err", "baseline_rate", "baseline_rate_err", "control_rate",
            "control_rate_err", "n_attacks", "n_success", "risk", "risk_ci", "relative_to")


def population(n: int, rng: np.random.Generator) -> pd.DataFrame:
    z = rng.normal(size=n)
    return pd.DataFrame({
        "age": np.clip(40 + 12 * z + rng.normal(0, 5, n), 18, 90).round(),
        "income": np.exp(10 + 0.5 * z + rng.normal(0, 0.3, n)).round(-1),
        "score": rng.normal(0, 1, n).round(3),
        "edu": rng.choice(["a", "b", "c", "d"], n),
        "region": rng.choice([f"r{i}" for i in range(12)], n),
        "sex": np.where(z + rng.normal(0, 1, n) > 0, "F", "M"),
        "owner": rng.random(n) < 0.4,
    })


def leaky(n: int = 1200, seed: int = 0, share: float = 0.5):
    rng = np.random.default_rng(seed)
    ori, ctl, syn = population(n, rng), population(n, rng), population(n, rng)
    take = rng.random(n) < share
    syn.loc[take] = ori.sample(int(take.sum()), random_state=seed).to_numpy()
    return ori, syn.astype(ori.dtypes.to_dict()), ctl


def run(name: str, ori, syn, ctl=None, metadata=None, seed: int = 0, **params):
    ctx = Context.from_frames(ori, syn, ctl, metadata, seed=seed)
    spec = get_metric(name)
    return run_metric(spec, ctx.for_metric(spec), spec.resolve_params(params))


SMALL = {"n_attacks": 300}


@pytest.fixture(scope="module")
def data():
    return leaky()


@pytest.mark.parametrize("name", TRIO)
def test_contract_and_ranges(data, name):
    res = run(name, *data, **SMALL)
    d = res.to_dict()
    for key in CONTRACT:
        assert key in d, key
    lo, hi = d["risk_ci"]
    assert 0.0 <= lo <= d["risk"] <= hi <= 1.0
    assert d["family"] == "anonymeter" and d["value"] == d["risk"]
    assert d["risk_level"] in ("low", "medium", "high", "not meaningful")
    assert d["relative_to"].startswith("residual")
    assert res.baseline is not None and res.baseline.value == pytest.approx(d["baseline_rate"])
    assert d["records"], "a leaky release must expose some rows"
    if name == "inference":
        assert len(d["per_secret"]) == 7 and d["max_risk"] == d["risk"]
        assert {p["secret_column"] for p in d["per_secret"]} == set(data[0].columns)


@pytest.mark.parametrize("name", TRIO)
def test_seeded_and_order_and_duplicate_free(data, name):
    ori, syn, ctl = data
    a = run(name, ori, syn, ctl, seed=3, **SMALL).to_dict()
    b = run(name, ori, syn, ctl, seed=3, **SMALL).to_dict()
    assert a == b
    rng = np.random.default_rng(1)
    shuffled = [f.iloc[rng.permutation(len(f))].reset_index(drop=True) for f in (ori, syn, ctl)]
    dup = [pd.concat([f, f.iloc[:50]], ignore_index=True) for f in shuffled]
    for frames in (shuffled, dup):
        c = run(name, *frames, seed=3, **SMALL).to_dict()
        for key in ("risk", "risk_ci", "attack_rate", "baseline_rate", "control_rate", "n_success"):
            assert c[key] == a[key], (name, key)


def test_copy_is_high_risk_and_independent_is_near_control():
    rng = np.random.default_rng(5)
    ori, ctl, other = population(1000, rng), population(1000, rng), population(1000, rng)
    split = [["age", "income", "edu"], ["score", "region", "sex"]]  # each half near-unique
    copy = run("linkability", ori, ori.copy(), ctl, n_attacks=300, aux_cols=split)
    assert copy.value > 0.9 and copy.risk_level == "high"
    inf = run("inference", ori, ori.copy(), ctl, n_attacks=300, secret="income")
    assert inf.value > 0.9
    so_copy = run("singling_out_univariate", ori, ori.copy(), ctl, n_attacks=300)
    assert so_copy.details["attack_rate"] > 0.9
    for name in TRIO:
        indep = run(name, ori, other, ctl, n_attacks=300)
        assert indep.ci[0] <= 0.08, name  # the interval reaches (near) zero for an independent release


def test_not_meaningful_when_attack_no_better_than_baseline():
    ctx = Context.from_frames(*leaky(200))
    d, att, base, ctl, warning = summarise(Outcome(100, 10, 100, 20, 100, 5), 0.95)
    assert warning and not d["meaningful"]
    res = build_result(ctx, "linkability", d, base, warning, [], None, "x")
    assert res.risk_level == "not meaningful" and "no better than the naive baseline" in res.warning


def test_without_control_risk_is_absolute(data):
    ori, syn, _ = data
    res = run("linkability", ori, syn, None, **SMALL)
    assert res.details["control_rate"] is None
    assert res.value == pytest.approx(res.details["attack_rate"])
    assert res.details["relative_to"].startswith("absolute")


def test_nan_and_datetime_columns(make_mixed):
    ori, syn, ctl = (make_mixed(600, s, nan_rate=0.1) for s in (0, 1, 2))
    syn.iloc[:200] = ori.iloc[:200].to_numpy()
    for name in TRIO:
        res = run(name, ori, syn, ctl, n_attacks=200)
        assert 0 <= res.value <= 1, name
    res = run("singling_out_multivariate", ori, syn, ctl, n_attacks=100, n_cols=2,
              columns=["when", "num", "cat"])
    assert res.details["n_queries"] > 0


def _brute_counts(X, qcol, qop, qval):
    out = []
    for c, o, v in zip(qcol, qop, qval, strict=True):
        m = np.ones(X.shape[0], dtype=bool)
        for cc, oo, vv in zip(c, o, v, strict=True):
            x = X[:, cc]
            with np.errstate(invalid="ignore"):
                r = {Q.EQ: x == vv, Q.NE: x != vv, Q.GT: x > vv, Q.LT: x < vv, Q.GE: x >= vv,
                     Q.LE: x <= vv, Q.ISNULL: np.isnan(x), Q.NOTNULL: ~np.isnan(x)}[oo]
            if oo not in (Q.ISNULL, Q.NOTNULL):
                r = r & ~np.isnan(x)
            m &= r
        out.append(int(m.sum()))
    return np.array(out)


def test_query_counts_numba_numpy_and_brute_force(monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, (500, 5)).astype(float)
    X[rng.random(X.shape) < 0.1] = np.nan
    qcol = np.sort(np.argsort(rng.random((300, 5)), axis=1)[:, :2], axis=1)
    qop = rng.integers(0, 8, (300, 2))
    qval = rng.integers(0, 4, (300, 2)).astype(float)
    want = _brute_counts(X, qcol, qop, qval)
    got, first = Q.count_matches(X, qcol, qop, qval)
    np.testing.assert_array_equal(got, want)
    capped, _ = Q.count_matches(X, qcol, qop, qval, cap=2)
    np.testing.assert_array_equal(capped, np.minimum(want, 2))
    offsets, rows = Q.match_lists(X, qcol, qop, qval, got)
    idx_got, idx_first = Q.count_matches(Q.ColumnIndex(X), qcol, qop, qval)
    np.testing.assert_array_equal(idx_got, want)
    np.testing.assert_array_equal(idx_first, first)
    idx_capped, _ = Q.count_matches(Q.ColumnIndex(X), qcol, qop, qval, cap=2)
    np.testing.assert_array_equal(idx_capped, np.minimum(want, 2))
    monkeypatch.setattr(Q, "_HAS_NUMBA", False)
    got2, first2 = Q.count_matches(X, qcol, qop, qval)
    np.testing.assert_array_equal(got2, want)
    np.testing.assert_array_equal(first2, first)
    o2, r2 = Q.match_lists(X, qcol, qop, qval, got)
    np.testing.assert_array_equal(r2, rows)
    # one-column queries: binary search on sorted columns agrees with the scan
    q1 = so.Queries(qcol[:, :1], qop[:, :1], qval[:, :1], np.zeros(300, np.int64))
    np.testing.assert_array_equal(so.count_univariate(X, q1), _brute_counts(X, qcol[:, :1], qop[:, :1],
                                                                            qval[:, :1]))


def test_generated_queries_single_out_in_synthetic(data):
    ctx = Context.from_frames(*data)
    sod = so.prepare(ctx, list(data[0].columns))
    rng = np.random.default_rng(0)
    uq = so.univariate_queries(sod.syn, sod.is_num, 200, rng)
    assert (_brute_counts(sod.syn, uq.col, uq.op, uq.val) == 1).all()
    mq, _ = so.multivariate_queries(sod.syn, sod.is_num, 3, 200, 100_000, rng)
    assert mq.size == 200 and (_brute_counts(sod.syn, mq.col, mq.op, mq.val) == 1).all()
    keys = {mq.col[i].tobytes() + mq.op[i].tobytes() + mq.val[i].tobytes() for i in range(mq.size)}
    assert len(keys) == mq.size


def test_records_name_rows_the_query_singles_out(data):
    ori, syn, ctl = data
    res = run("singling_out_univariate", ori, syn, ctl, **SMALL)
    for rec in res.records:
        col, op, val = rec["query"].split(" ", 2)
        v = eval(val)  # repr of a plain value
        s = ori[col]
        hits = s == v if op == "==" else (s <= v if op == "<=" else s >= v)
        assert int(hits.sum()) == 1 and bool(hits.iloc[rec["row"]])


def test_control_correction_fit():
    n_ori, n_ctl = 4000, 1000
    sizes = np.repeat(np.linspace(1000 // 4, n_ctl, 10).astype(int), 5)
    # a curve generated by the model itself is recovered
    for w, norm in ((1 / 3000, 2000.0), (1 / 200, 50.0)):
        ys = so._model(sizes, w, norm)
        f = so.correction_factor(sizes, ys, n_ori, n_ctl)
        assert f == pytest.approx(so._model(n_ori, w, norm) / so._model(n_ctl, w, norm), rel=1e-3)
    # noisy sub-linear growth (where a single start can stall at w = 1, the 1.1.0-like flat answer)
    rng = np.random.default_rng(0)
    ys = 2 * np.sqrt(sizes) + rng.normal(0, 2, sizes.size)
    f = so.correction_factor(sizes, ys, n_ori, n_ctl)
    assert abs(f - (n_ctl + 1) / (n_ori + 1)) > 0.3


def test_control_curve_counts_are_correct(data):
    ori, syn, ctl = data
    ctx = Context.from_frames(ori, syn, ctl)
    sod = so.prepare(ctx, list(ori.columns))
    q = so.univariate_queries(sod.syn, sod.is_num, 300, np.random.default_rng(0))
    xs, ys = so.measure_control_curve(sod.ctl, q, np.random.default_rng(1))
    full = _brute_counts(sod.ctl, q.col, q.op, q.val)
    assert (ys[xs == sod.ctl.shape[0]] == int((full == 1).sum())).all()
    assert not (ys == ys[0]).all()  # not 1.1.0's constant count


def test_linkability_baseline_rate():
    rng = np.random.default_rng(0)
    hits = random_links(500, 20000, 3, rng)
    expected = 1 - (1 - 3 / 500) ** 3
    assert hits.mean() == pytest.approx(expected, abs=0.004)


def test_regression_scoring_fixes_negative_guess():
    g = np.array([-10.0, 100.0, 100.0, 0.0, np.nan, np.nan])
    s = np.array([50.0, 104.0, 106.0, 0.0, np.nan, 1.0])
    np.testing.assert_array_equal(correct_guesses(g, s, True, 0.05), [False, True, False, True, True, False])
    np.testing.assert_array_equal(correct_guesses(g, s, False, 0.05), [False, False, False, True, True, False])


def test_defaults_split_and_aux():
    ori, syn, ctl = leaky(300)
    meta = {"quasi_identifiers": ["age", "sex", "region", "edu"]}
    ctx = Context.from_frames(ori, syn, ctl, meta)
    assert default_split(ctx) == (["age", "edu", "region", "sex"], ["income", "owner", "score"])
    ctx2 = Context.from_frames(ori, syn, ctl)
    # without quasi-identifiers: every column, in the canonical (sorted) order a run gives them
    assert default_split(ctx2) == (["age", "edu", "income", "owner"], ["region", "score", "sex"])
    res = run("inference", ori, syn, ctl, meta, secret="income", n_attacks=100)
    assert res.details["aux_cols"] == ["age", "sex", "region", "edu"]


def test_max_n_attacks_and_clipping():
    ori, syn, ctl = leaky(400)
    res = run("linkability", ori, syn, ctl.iloc[:250], max_n_attacks=True)
    assert res.n == 250
    res = run("inference", ori, syn, None, secret="sex", n_attacks=5000)
    assert res.n == 400 and res.details["notes"]


def test_bad_parameters():
    ori, syn, ctl = leaky(200)
    with pytest.raises(ConfigError, match="aux_cols"):
        run("linkability", ori, syn, ctl, aux_cols=[["age"]])
    with pytest.raises(ConfigError, match="not tabular columns"):
        run("linkability", ori, syn, ctl, aux_cols=[["age"], ["nope"]])
    with pytest.raises(ConfigError, match="contains the secret"):
        run("inference", ori, syn, ctl, secret="age", aux_cols=["age", "sex"])
    with pytest.raises(ConfigError, match="regression"):
        run("inference", ori, syn, ctl, secret="age", regression="maybe")
    with pytest.raises(ConfigError, match="n_cols"):
        run("singling_out_multivariate", ori, syn, ctl, n_cols=50)
    with pytest.raises(ConfigError, match="confidence_level"):
        run("linkability", ori, syn, ctl, confidence_level=1.5)
    same = pd.DataFrame({"a": ["x", "y"] * 25, "b": ["u", "u", "v", "v"] * 12 + ["u", "u"]})
    with pytest.raises(MetricError, match="no query singles out"):
        run("singling_out_univariate", same, same, None)


def test_aliases_and_summary(data):
    assert canonical_name("anonymeter-singlingout") == "singling_out_multivariate"
    assert canonical_name("Anonymeter-Linkability") == "linkability"
    assert canonical_name("anonymeter_inference") == "inference"
    ori, syn, ctl = data
    res = run("anonymeter", ori, syn, ctl, n_attacks=200)
    parts = res.details["parts"]
    assert set(parts) == set(TRIO)
    assert res.details["overall_risk"] == max(p["risk"] for p in parts.values() if p["meaningful"])
    assert res.details["overall_risk"] == res.value
    for name in TRIO:  # the summary runs each attack exactly as it runs alone
        assert parts[name]["risk"] == run(name, ori, syn, ctl, n_attacks=200).value
    ctx = Context.from_frames(ori, syn, ctl)
    spec = get_metric("anonymeter")
    low = run_metric(spec, ctx.for_metric(spec, {"medium": 0.99, "high": 0.999}),
                     spec.resolve_params({"n_attacks": 200}))
    assert low.risk_level == "low"
