"""Known answers, brute-force equivalence, determinism, order invariance and errors of the
disclosure metrics (the SDMetrics comparisons live in tests/oracles)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from synthguard import evaluate
from synthguard.errors import ConfigError, MetricError
from synthguard.metrics.disclosure._cap_core import cap_rows
from synthguard.metrics.disclosure.anonymity import k_anonymity, l_diversity
from synthguard.metrics.disclosure.cap import cap, cap_per_record, generalized_cap, zero_cap
from synthguard.metrics.disclosure.dcr_protection import (
    dcr_baseline_protection,
    dcr_overfitting_protection,
    median_ci,
)
from synthguard.metrics.disclosure.disclosure_protection import (
    disclosure_protection,
    disclosure_protection_estimate,
)
from synthguard.metrics.disclosure.new_row_synthesis import match_rows, new_row_synthesis
from synthguard.registry import Context, get_metric

from ....helpers import run

CAT_META = {"columns": {"k": {"sdtype": "categorical"}, "s": {"sdtype": "categorical"}}}


def _ctx(real, syn, control=None, meta=None, seed=0, backend="numpy"):
    # the numpy backend gives the same results as numba (engine contract) without its compile time
    return Context.from_frames(real, syn, control, meta, seed=seed, backend=backend)


# ---------------------------------------------------------------- CAP known answers
def test_cap_worked_example():
    real = pd.DataFrame({"k": list("aaab"), "s": list("xxyy")})
    syn = pd.DataFrame({"k": list("aabb"), "s": list("xyyy")})
    c = _ctx(real, syn, meta=CAT_META)
    for f in (cap, zero_cap, generalized_cap):
        r = f(c, key_fields=["k"], sensitive_fields=["s"])
        assert r.value == pytest.approx(0.375)
        assert r["baseline_protection"] == pytest.approx(0.5)
    recs = run(cap, ctx=c, key_fields=["k"], sensitive_fields=["s"]).records
    assert recs[0] == {"original_row": 3, "probability": 1.0, "synthetic_rows_pooled": 2, "key_distance": 0}


def test_cap_variants_on_unmatched_keys_and_hamming_ties():
    # original key (a, 1) is absent; synthetic keys (a, 2) and (b, 1) are both at distance 1
    real = pd.DataFrame({"k1": ["a"], "k2": ["1"], "s": ["x"]})
    syn = pd.DataFrame({"k1": ["a", "b", "b", "c"], "k2": ["2", "1", "1", "3"], "s": ["x", "x", "y", "x"]})
    meta = {"columns": {c: {"sdtype": "categorical"} for c in ("k1", "k2", "s")}}
    c = _ctx(real, syn, meta=meta)
    kw = dict(key_fields=["k1", "k2"], sensitive_fields=["s"])
    assert run(cap, ctx=c, **kw).value is None or np.isnan(run(cap, ctx=c, **kw).value)
    assert run(cap, ctx=c, **kw).risk_level == "unknown"
    assert run(zero_cap, ctx=c, **kw).value == 1.0
    g = run(generalized_cap, ctx=c, **kw)
    assert g.value == pytest.approx(1 - 2 / 3)  # pooled: x, x, y (the (c, 3) key is at distance 2)
    assert g.records[0]["synthetic_rows_pooled"] == 3 and g.records[0]["key_distance"] == 1


def _naive_cap(rk, rs, sk, ss, method):
    out = []
    keys = [tuple(x) for x in sk]
    distinct = sorted(set(keys))
    for k, s in zip(map(tuple, rk), map(tuple, rs), strict=True):
        pool = [tuple(ss[i]) for i in range(len(sk)) if keys[i] == k]
        if not pool:
            if method == "cap":
                out.append(np.nan)
                continue
            if method == "zero_cap":
                out.append(0.0)
                continue
            d = [sum(a != b for a, b in zip(k, kk, strict=True)) for kk in distinct]
            near = {distinct[i] for i in range(len(distinct)) if d[i] == min(d)}
            pool = [tuple(ss[i]) for i in range(len(sk)) if keys[i] in near]
        out.append(sum(x == s for x in pool) / len(pool))
    return np.array(out)


@pytest.mark.parametrize("seed", range(12))
def test_cap_core_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    n, m = rng.integers(1, 50, 2)
    q, s = rng.integers(1, 4), rng.integers(1, 3)
    rk, sk = rng.integers(-1, 3, (n, q)), rng.integers(-1, 3, (m, q))
    rs, ss = rng.integers(0, 3, (n, s)), rng.integers(0, 3, (m, s))
    for method in ("cap", "zero_cap", "generalized_cap"):
        got = cap_rows(rk, rs, sk, ss, method).probability
        np.testing.assert_allclose(got, _naive_cap(rk, rs, sk, ss, method), equal_nan=True)


def test_missing_values_are_their_own_category():
    real = pd.DataFrame({"k": ["a", None, None, "b"], "s": ["x", "y", "y", None]})
    syn = pd.DataFrame({"k": ["a", None, "b", "b"], "s": ["x", "y", None, "x"]})
    c = _ctx(real, syn, meta=CAT_META)
    r = run(cap, ctx=c, key_fields=["k"], sensitive_fields=["s"])
    # p = [1, 1, 1, 1/2]
    assert r.value == pytest.approx(1 - 3.5 / 4)
    assert r["n_sensitive_categories"] == [3]
    per = cap_per_record(real, syn, ["k"], ["s"], metadata=CAT_META)
    np.testing.assert_allclose(per["probability"], [1, 1, 1, 0.5])


def test_cap_breakdowns_and_per_field(demo_data, demo_metadata):
    c = _ctx(demo_data["original"], demo_data["leaky"], meta=demo_metadata)
    r = run(cap, ctx=c, key_fields=["sex", "zip", "education"], sensitive_fields=["diagnosis", "occupation"])
    assert set(r["per_sensitive_field"]) == {"diagnosis", "occupation"}
    sizes = r["per_class_size"]
    assert sum(b["n_original_rows"] for b in sizes) == len(demo_data["original"])
    lo, hi = r.ci
    assert lo <= r.value <= hi
    assert len(r.records) == 100
    probs = [x["probability"] for x in r.records]
    assert probs == sorted(probs, reverse=True)


def test_defaults_from_metadata_and_errors(demo_data, demo_metadata):
    c = _ctx(demo_data["original"], demo_data["safe"], meta=demo_metadata)
    r = run(cap, ctx=c)
    assert r["key_fields"] == list(demo_metadata["quasi_identifiers"])
    assert r["sensitive_fields"] == ["diagnosis"]
    bare = _ctx(demo_data["original"], demo_data["safe"])
    with pytest.raises(MetricError, match="quasi_identifiers"):
        run(cap, ctx=bare)
    with pytest.raises(MetricError, match="sensitive"):
        run(disclosure_protection, ctx=bare, known_column_names=["sex"])
    with pytest.raises(ConfigError, match="nope"):
        run(cap, ctx=c, key_fields=["nope"], sensitive_fields=["diagnosis"])
    with pytest.raises(ConfigError, match="both"):
        run(cap, ctx=c, key_fields=["sex"], sensitive_fields=["sex"])
    with pytest.raises(MetricError, match="quasi_identifiers"):
        run(k_anonymity, ctx=bare)
    with pytest.raises(ConfigError):
        get_metric("disclosure_protection").resolve_params({"computation_method": "nope"})


def test_runner_reports_missing_roles_as_skipped(demo_data):
    rep = evaluate(demo_data["original"], demo_data["safe"], metrics=["cap", "k_anonymity"])
    for name in ("cap", "k_anonymity"):
        assert rep[name]["status"] == "skipped"
        assert "quasi_identifiers" in rep[name]["reason"]


# ---------------------------------------------------------------- DisclosureProtection
def test_disclosure_protection_binning_and_baseline():
    real = pd.DataFrame({"age": [1.0, 2, 3, 4, 5, 6, 7, 8, 9, 10], "s": list("xyxyxyxyxy")})
    syn = pd.DataFrame({"age": [-50.0, 100, 2.2, 9.9], "s": list("xyyx")})
    meta = {"columns": {"age": {"sdtype": "numerical"}, "s": {"sdtype": "categorical"}}}
    c = _ctx(real, syn, meta=meta)
    # 2 bins from the original: (0.991, 5.5], (5.5, 10]; -50 -> bin 0, 100 -> bin 1
    r = run(disclosure_protection, ctx=c, known_column_names=["age"], sensitive_column_names=["s"],
                              continuous_column_names=["age"], num_discrete_bins=2)
    assert r["baseline_protection"] == 0.5
    assert r["cap_protection"] == pytest.approx(0.5)  # each bin holds one x and one y
    assert r.value == pytest.approx(1.0)
    assert r.risk_level == "not meaningful" and r.warning
    exact = run(disclosure_protection, ctx=c, known_column_names=["age"], sensitive_column_names=["s"])
    assert exact["n_counted"] == 0  # raw floats: no original key occurs in the synthetic data


def test_estimate_is_seeded_and_honours_parameters(demo_data, demo_metadata):
    a = run(disclosure_protection_estimate, ctx=_ctx(demo_data["original"], demo_data["leaky"], meta=demo_metadata,
                                            seed=1), num_rows_subsample=200, num_iterations=3)
    b = run(disclosure_protection_estimate, ctx=_ctx(demo_data["original"], demo_data["leaky"], meta=demo_metadata,
                                            seed=1), num_rows_subsample=200, num_iterations=3)
    d = run(disclosure_protection_estimate, ctx=_ctx(demo_data["original"], demo_data["leaky"], meta=demo_metadata,
                                            seed=2), num_rows_subsample=200, num_iterations=3)
    assert a.value == b.value and a["cap_protection_per_iteration"] == b["cap_protection_per_iteration"]
    assert a.value != d.value
    assert len(a["cap_protection_per_iteration"]) == 3


def test_leaky_release_is_less_protected(demo_data, demo_metadata):
    keys = ["age", "sex", "zip", "education"]
    res = {}
    for rel in ("leaky", "safe"):
        c = _ctx(demo_data["original"], demo_data[rel], meta=demo_metadata)
        res[rel] = run(disclosure_protection, ctx=c, known_column_names=keys, sensitive_column_names=["diagnosis"],
                                         computation_method="zero_cap").value
    assert res["leaky"] < res["safe"]


# ---------------------------------------------------------------- order invariance, no mutation
def test_row_order_does_not_change_results(demo_data, demo_metadata):
    o, s, ctl = demo_data["original"], demo_data["leaky"], demo_data["control"]
    before = (o.copy(), s.copy())
    rng = np.random.default_rng(0)
    o2 = o.iloc[rng.permutation(len(o))].reset_index(drop=True)
    s2 = s.iloc[rng.permutation(len(s))].reset_index(drop=True)
    c1, c2 = _ctx(o, s, ctl, demo_metadata), _ctx(o2, s2, ctl, demo_metadata)
    for f, kw in ((generalized_cap, {}), (disclosure_protection, {"continuous_column_names": ["age"]}),
                  (new_row_synthesis, {}), (k_anonymity, {}), (l_diversity, {}),
                  (dcr_overfitting_protection, {}), (dcr_baseline_protection, {})):
        v1, v2 = f(c1, **kw).value, f(c2, **kw).value
        assert v1 == pytest.approx(v2, abs=1e-12), f.__name__
    pd.testing.assert_frame_equal(o, before[0])
    pd.testing.assert_frame_equal(s, before[1])


# ---------------------------------------------------------------- DCR
def test_dcr_known_answers(demo_data, demo_metadata):
    o = demo_data["original"]
    copy = _ctx(o, o.copy(), demo_data["control"], demo_metadata)
    r = run(dcr_baseline_protection, ctx=copy)
    assert r.value == 0.0 and r["share_exact_copies"] == 1.0
    assert r.risk_level == "high"
    ov = run(dcr_overfitting_protection, ctx=copy)
    assert ov["synthetic_data_percentages"]["closer_to_training"] == 1.0 and ov.value == 0.0
    # real rows never trained on, split into a "release" and a holdout of the training's size
    # (the control must not be the training data itself: that is an InputError now)
    c, h = demo_data["control"], len(demo_data["control"]) // 2
    indep = _ctx(o.iloc[:h], c.iloc[:h], c.iloc[h:], demo_metadata)
    ov2 = run(dcr_overfitting_protection, ctx=indep)
    assert ov2.value > 0.8  # an independent sample is not closer to training than to a holdout


def test_dcr_subsampling_is_seeded_and_query_side_only(demo_data, demo_metadata):
    args = (demo_data["original"], demo_data["leaky"], demo_data["control"], demo_metadata)
    a = run(dcr_baseline_protection, ctx=_ctx(*args, seed=3), num_rows_subsample=300, num_iterations=2)
    b = run(dcr_baseline_protection, ctx=_ctx(*args, seed=3), num_rows_subsample=300, num_iterations=2)
    full = run(dcr_baseline_protection, ctx=_ctx(*args, seed=3))
    assert a.value == b.value and a["n_synthetic"] == 300
    # the reference is not subsampled: the synthetic median stays close to the full-data one
    assert abs(a["median_DCR_to_real_data"]["synthetic_data"]
               - full["median_DCR_to_real_data"]["synthetic_data"]) < 0.02
    o = run(dcr_overfitting_protection, ctx=_ctx(*args, seed=3), num_rows_subsample=300)
    assert o.n == 300


def test_median_ci_covers_median():
    v = np.random.default_rng(0).random(1001)
    lo, hi = median_ci(v)
    assert lo < np.median(v) < hi and hi - lo < 0.15


# ---------------------------------------------------------------- NewRowSynthesis
def _brute_match(rn, rc, sn, sc, tol, rel):
    out = []
    for i in range(sn.shape[0]):
        hit = False
        for j in range(rn.shape[0]):
            if not np.array_equal(rc[j], sc[i]):
                continue
            ok = True
            for c in range(rn.shape[1]):
                a, b = rn[j, c], sn[i, c]
                if np.isnan(a) or np.isnan(b):
                    ok &= bool(np.isnan(a) and np.isnan(b))
                else:
                    ok &= bool(abs(a - b) <= (abs(tol[c] * b) if rel else tol[c]))
            hit |= ok
        out.append(hit)
    return np.array(out)


@pytest.mark.parametrize("seed", range(8))
def test_match_rows_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    n, m, p, q = 60, 50, int(rng.integers(0, 3)), int(rng.integers(0, 3))
    rn = rng.integers(0, 6, (n, p)).astype(float)
    rn[rng.random((n, p)) < 0.1] = np.nan
    rc = rng.integers(-1, 2, (n, q))
    pick = rng.integers(0, n, m)
    sn = rn[pick] + rng.choice([0, 0.05, 0.3, 1.0], (m, p))
    sc = np.where(rng.random((m, q)) < 0.8, rc[pick], rng.integers(-1, 2, (m, q)))
    tol = np.full(p, 0.3)
    for rel in (False, True):
        got = match_rows(rn, rc, sn, sc, tol, relative_to_synthetic=rel)
        np.testing.assert_array_equal(got, _brute_match(rn, rc, sn, sc, tol, rel))


def test_new_row_synthesis_known_answers(demo_data, demo_metadata):
    o = demo_data["original"]
    r = run(new_row_synthesis, ctx=_ctx(o, o.copy(), meta=demo_metadata))
    assert r.value == 0.0 and r["num_matched_rows"] == len(o)
    fresh = run(new_row_synthesis, ctx=_ctx(o, demo_data["control"], meta=demo_metadata))
    assert fresh.value > 0.95
    s = run(new_row_synthesis, ctx=_ctx(o, demo_data["leaky"], meta=demo_metadata), synthetic_sample_size=500)
    assert s.n == 500 and 0.2 < s.value < 0.7


# ---------------------------------------------------------------- k-anonymity, l-diversity
def test_k_anonymity_and_l_diversity_exact_classes():
    real = pd.DataFrame({"q1": list("aaabbc"), "q2": ["1"] * 6, "s": list("xyxxxz")})
    syn = pd.DataFrame({"q1": list("aabbbb"), "q2": ["1"] * 6, "s": list("xxxyzz")})
    meta = {"columns": {c: {"sdtype": "categorical"} for c in ("q1", "q2", "s")},
            "quasi_identifiers": ["q1", "q2"], "sensitive": ["s"]}
    c = _ctx(real, syn, meta=meta)
    k = run(k_anonymity, ctx=c, k=3)
    assert k.value == 2 and k["original"]["k"] == 1
    assert k["original"]["share_records_below"] == pytest.approx(3 / 6)  # classes b (2) and c (1)
    assert k["synthetic"]["n_records_below"] == 2
    assert [r["synthetic_row"] for r in k.records] == [0, 1]
    ld = run(l_diversity, ctx=c)
    assert ld.value == 1 and ld["original"]["l"] == 1  # class a -> {x} in synthetic; b, c -> 1 in original
    assert ld["synthetic"]["n_records_below"] == 2
    assert ld["original"]["n_records_below"] == 3
    assert ld.risk_level == "high"


def test_registry_names_and_aliases():
    for alias, name in (("CategoricalCAP", "cap"), ("DisclosureProtection", "disclosure_protection"),
                        ("DCRBaselineProtection", "dcr_baseline_protection"),
                        ("NewRowSynthesis", "new_row_synthesis")):
        assert get_metric(alias).name == name
    assert get_metric("dcr_overfitting_protection").needs == ("original", "synthetic", "control")
    names = [p.name for p in get_metric("disclosure_protection").params]
    for p in ("known_column_names", "sensitive_column_names", "computation_method",
              "continuous_column_names", "num_discrete_bins"):
        assert p in names
    assert list(itertools.islice(names, 0, 1)) == ["known_column_names"]


@pytest.mark.parametrize("n_num", [0, 1, 3])
def test_match_counts_count_every_matching_original_row_and_agree_with_match_rows(n_num):
    from synthguard.engine.backend import match_counts, match_rows

    rng = np.random.default_rng(n_num)
    real_num = np.round(rng.normal(size=(300, n_num)), 1)
    real_num[rng.random(real_num.shape) < 0.05] = np.nan
    syn_num = np.round(rng.normal(size=(200, n_num)), 1)
    syn_num[rng.random(syn_num.shape) < 0.05] = np.nan
    real_cat, syn_cat = rng.integers(0, 3, (300, 2)), rng.integers(0, 3, (200, 2))
    tol = np.full(n_num, 0.15)
    counts = match_counts(real_num, real_cat, syn_num, syn_cat, tol)
    want = np.zeros(200, dtype=np.int64)  # brute force: every pair
    for i in range(200):  # loop over the synthetic rows (a test's oracle)
        same = (real_cat == syn_cat[i]).all(axis=1)
        for j in range(n_num):  # loop over numeric columns
            s, r = syn_num[i, j], real_num[:, j]
            same &= (np.abs(r - s) <= tol[j]) | (np.isnan(r) & np.isnan(s))
        want[i] = same.sum()
    assert counts.tolist() == want.tolist()
    assert ((counts > 0) == match_rows(real_num, real_cat, syn_num, syn_cat, tol)).all()
