"""The shared statistics module: intervals, risk, bootstrap, ROC, seeded streams."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as st
from sklearn import metrics as skm

from synthguard.errors import ConfigError
from synthguard.stats import (
    Rate,
    auc_ci,
    auc_null,
    auc_score,
    bootstrap_ci,
    clopper_pearson,
    make_rng,
    percentile_ci,
    proportion,
    risk_from_rates,
    roc_curve,
    thin_roc,
    tpr_at_fpr,
    wilson_interval,
    wilson_rate,
    z_value,
)

Z95 = 1.959963984540054


# ----------------------------------------------------------------------------- Wilson / exact
def test_wilson_hand_computed_values():
    r = wilson_rate(0, 500)
    assert r.value == pytest.approx(0.0038121702307761206, rel=1e-12)  # anonymeter's value
    assert r.error == pytest.approx(0.00381217023077612, rel=1e-12)
    assert r.ci == (0.0, pytest.approx(0.0076243404615522))
    z2 = Z95**2
    r = wilson_rate(30, 100)
    assert r.value == pytest.approx((30 + z2 / 2) / (100 + z2), rel=1e-12)
    assert r.error == pytest.approx(Z95 / (100 + z2) * math.sqrt(30 * 70 / 100 + z2 / 4), rel=1e-12)
    assert r.raw == 0.3 and r.n == 100 and r.k == 30
    r = wilson_rate(100, 100)
    assert r.ci[1] == 1.0 and r.value < 1.0
    lo, hi = wilson_interval(30, 100)
    assert (lo, hi) == pytest.approx((0.2189489, 0.3958485), abs=1e-6)  # textbook Wilson interval
    assert wilson_rate(30, 100, 0.90).error < wilson_rate(30, 100).error


def test_wilson_fractional_successes_and_errors():
    assert wilson_rate(2.5, 10).k == 2.5
    for bad in [(-1, 10), (11, 10)]:
        with pytest.raises(ConfigError):
            wilson_rate(*bad)
    with pytest.raises(ConfigError):
        wilson_rate(0, 0)
    for cl in (0.0, 1.0, 1.5):
        with pytest.raises(ConfigError):
            z_value(cl)
    assert z_value(0.95) == pytest.approx(Z95, rel=1e-12)


@pytest.mark.parametrize("k,n", [(0, 7), (3, 7), (7, 7), (41, 500), (0, 500)])
def test_wilson_interval_matches_scipy(k, n):
    want = st.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert wilson_interval(k, n) == pytest.approx((want.low, want.high), abs=1e-12)


@pytest.mark.parametrize("k,n", [(0, 1), (0, 20), (1, 20), (7, 20), (20, 20), (3, 1000), (512, 1000)])
@pytest.mark.parametrize("cl", [0.9, 0.95, 0.99])
def test_clopper_pearson_matches_scipy(k, n, cl):
    want = st.binomtest(k, n).proportion_ci(confidence_level=cl, method="exact")
    got = clopper_pearson(k, n, cl)
    assert got == pytest.approx((want.low, want.high), abs=1e-12)


def test_proportion():
    p = proportion(3, 10)
    assert p["value"] == 0.3 and p["n"] == 10 and p["k"] == 3
    assert p["ci"] == pytest.approx(list(wilson_interval(3, 10)))
    empty = proportion(0, 0)
    assert math.isnan(empty["value"]) and empty["n"] == 0


# ----------------------------------------------------------------------------- risk
def _rate(v: float, e: float) -> Rate:
    return Rate(value=v, error=e, n=100, k=v * 100, confidence_level=0.95)


def test_risk_known_values():
    r = risk_from_rates(_rate(0.5, 0.1), _rate(0.2, 0.05))
    e = math.sqrt((0.1 / 0.8) ** 2 + (0.05 * (0.5 - 1) / 0.8**2) ** 2)
    assert r.value == pytest.approx(0.375, rel=1e-12)
    assert r.ci == pytest.approx((0.375 - e, 0.375 + e), rel=1e-12)
    assert "control" in r.relative_to


def test_risk_clipping_and_edges():
    low = risk_from_rates(_rate(0.1, 0.02), _rate(0.4, 0.05))  # attack worse than control
    assert low.value == 0.0 and low.ci[0] == 0.0 and 0.0 <= low.ci[1] <= 1.0
    high = risk_from_rates(_rate(0.99, 0.2), _rate(0.0, 0.0))
    assert high.value == pytest.approx(0.99) and high.ci[1] == 1.0
    edge = risk_from_rates(_rate(0.9, 0.01), _rate(1.0, 0.0))  # control always succeeds
    assert math.isnan(edge.value) and all(math.isnan(x) for x in edge.ci)
    absolute = risk_from_rates(_rate(0.3, 0.05))
    assert absolute.value == 0.3 and absolute.ci == pytest.approx((0.25, 0.35))
    assert "absolute" in absolute.relative_to


@pytest.mark.conformance
@pytest.mark.oracle("anonymeter")
@pytest.mark.parametrize("n,k_attack,k_control", [(500, 0, 0), (500, 120, 60), (300, 30, 90), (1000, 999, 10)])
def test_risk_matches_anonymeter(n, k_attack, k_control):
    import warnings

    from anonymeter.stats.confidence import EvaluationResults

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = EvaluationResults(n_attacks=n, n_success=k_attack, n_baseline=0, n_control=k_control)
        want = ref.risk()
    a, c = wilson_rate(k_attack, n), wilson_rate(k_control, n)
    assert a.value == pytest.approx(ref.attack_rate.value, rel=1e-12)
    assert a.error == pytest.approx(ref.attack_rate.error, rel=1e-12)
    got = risk_from_rates(a, c)
    assert got.value == pytest.approx(want.value, abs=1e-12)
    assert got.ci == pytest.approx(tuple(want.ci), abs=1e-12)


# ----------------------------------------------------------------------------- bootstrap
def test_bootstrap_reproducible_and_seed_dependent():
    x = np.random.default_rng(0).normal(size=200)
    a = bootstrap_ci(np.mean, [x], n_boot=300, seed=7)
    b = bootstrap_ci(np.mean, [x], n_boot=300, seed=7)
    c = bootstrap_ci(np.mean, [x], n_boot=300, seed=8)
    assert a == b and a != c
    assert a[0] < x.mean() < a[1]
    assert percentile_ci(x, 50, n_boot=300, seed=3) == percentile_ci(x, 50, n_boot=300, seed=3)
    assert percentile_ci(np.array([np.nan]), 50) != percentile_ci(x, 50)  # NaN-only -> (nan, nan)
    with pytest.raises(ConfigError):
        bootstrap_ci(np.mean, [x], confidence_level=1.0)


def test_bootstrap_coverage_sanity():
    """Over 120 samples from N(0, 1), the 90 % interval of the mean covers 0 most of the time."""
    rng = np.random.default_rng(1)
    hits_mean = hits_median = 0
    reps = 120
    for i in range(reps):
        x = rng.normal(size=60)
        lo, hi = bootstrap_ci(np.mean, [x], n_boot=200, confidence_level=0.9, seed=i)
        hits_mean += lo <= 0.0 <= hi
        lo, hi = percentile_ci(x, 50, n_boot=200, confidence_level=0.9, seed=i)
        hits_median += lo <= 0.0 <= hi
    # nominal 90 %: a binomial(120, 0.9) falls below 0.78 with probability < 1e-4
    assert 0.78 <= hits_mean / reps <= 0.99
    assert 0.78 <= hits_median / reps <= 1.0


def test_stratified_bootstrap_keeps_both_classes():
    labels = np.r_[np.ones(5, int), np.zeros(200, int)]
    scores = np.random.default_rng(2).random(labels.size) + labels
    lo, hi = auc_ci(labels, scores, n_boot=200, seed=0)
    assert not math.isnan(lo) and lo <= auc_score(labels, scores) <= hi
    assert auc_ci(labels, scores, n_boot=200, seed=0) == (lo, hi)


# ----------------------------------------------------------------------------- ROC / AUC
@pytest.mark.parametrize("seed", range(5))
def test_auc_and_roc_match_sklearn(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 400))
    labels = rng.random(n) < rng.uniform(0.1, 0.9)
    labels[0], labels[1] = True, False
    scores = rng.normal(size=n) + labels * rng.uniform(0, 2)
    if seed % 2:
        scores = scores.round(1)  # ties
    assert auc_score(labels, scores) == pytest.approx(skm.roc_auc_score(labels, scores), abs=1e-12)
    fpr, tpr, thr = roc_curve(labels, scores)
    sf, st_, sthr = skm.roc_curve(labels, scores, drop_intermediate=False)
    np.testing.assert_allclose(fpr, sf, atol=1e-12)
    np.testing.assert_allclose(tpr, st_, atol=1e-12)
    np.testing.assert_array_equal(thr[1:], sthr[1:])
    for target in (0.0, 0.01, 0.1, 0.5, 1.0):
        want = float(st_[sf <= target + 1e-12].max())
        assert tpr_at_fpr(labels, scores, target) == pytest.approx(want, abs=1e-12)


def test_roc_known_values_and_degenerate():
    labels = np.array([1, 1, 0, 1, 0, 0])
    scores = np.array([0.9, 0.8, 0.7, 0.6, 0.55, 0.1])
    assert auc_score(labels, scores) == pytest.approx(8 / 9)
    assert tpr_at_fpr(labels, scores, 0.0) == pytest.approx(2 / 3)
    assert tpr_at_fpr(labels, scores, 1 / 3) == 1.0
    assert auc_score(np.ones(4), np.arange(4.0)) != auc_score(np.ones(4), np.arange(4.0))  # NaN
    fpr, tpr, _ = roc_curve(labels, scores)
    pts = thin_roc(np.linspace(0, 1, 1000), np.linspace(0, 1, 1000), max_points=11)
    assert len(pts) <= 13 and pts[0] == [0.0, 0.0] and pts[-1] == [1.0, 1.0]
    assert thin_roc(fpr, tpr)[-1] == [1.0, 1.0]


def _permuted_aucs(labels, scores, draws, seed):
    """AUCs of ``draws`` random relabellings of fixed scores (the same class sizes), vectorised."""
    ranks = st.rankdata(scores)
    m, n = int(labels.sum()), int(labels.size - labels.sum())
    pos = np.random.default_rng(seed).random((draws, labels.size)).argsort(axis=1)[:, :m]
    return (ranks[pos].sum(axis=1) - m * (m + 1) / 2.0) / (m * n)


@pytest.mark.parametrize("m, n, levels", [(5, 9, 0), (5, 9, 3), (6, 6, 2), (3, 11, 4)])
def test_auc_null_sd_is_the_exact_sd_of_every_relabelling(m, n, levels):
    # every one of the C(m + n, m) labellings enumerated: the formula's variance must be the exact
    # variance of the AUC over them, to rounding (a wrong N + 1, a missing or wrong tie term fails)
    import itertools

    rng = np.random.default_rng(m * 100 + n + levels)
    scores = rng.normal(size=m + n) if levels == 0 else rng.integers(0, levels, m + n).astype(float)
    labels = np.r_[np.ones(m, bool), np.zeros(n, bool)]
    ranks = st.rankdata(scores)
    pos = np.array(list(itertools.combinations(range(m + n), m)))
    aucs = (ranks[pos].sum(axis=1) - m * (m + 1) / 2.0) / (m * n)
    out = auc_null(labels, scores)
    assert aucs.mean() == pytest.approx(0.5, abs=1e-12) and out["mean"] == 0.5
    assert out["sd"] == pytest.approx(aucs.std(), rel=1e-10)


@pytest.mark.parametrize("ties", [False, True])
def test_auc_null_interval_and_p_value_match_shuffled_held_out_scores(ties):
    # 20,000 label permutations of fixed scores (400 held-out, 150 positives): the null interval
    # holds ~95 % of the permuted AUCs, its sd theirs, and the p-value the share at least as high
    rng = np.random.default_rng(7)
    labels = np.r_[np.ones(150, bool), np.zeros(250, bool)]
    scores = rng.normal(size=400) + 0.3 * labels
    if ties:
        scores = np.floor(scores * 2)  # ~10 distinct values: the tie term matters
    aucs = _permuted_aucs(labels, scores, 20_000, seed=1)
    out = auc_null(labels, scores, confidence_level=0.95)
    lo, hi = out["ci"]
    assert out["sd"] == pytest.approx(aucs.std(), rel=0.02)
    assert lo < 0.5 < hi and hi - 0.5 == pytest.approx(0.5 - lo)
    assert np.mean((aucs < lo) | (aucs > hi)) == pytest.approx(0.05, abs=0.008)
    observed = auc_score(labels, scores)
    assert out["p_value"] == pytest.approx(np.mean(aucs >= observed), abs=0.005)
    assert out["p_below"] == pytest.approx(np.mean(aucs <= observed), abs=0.005)
    assert (observed > hi) == (out["p_value"] < 0.025)


def test_auc_null_sd_is_not_the_untied_formula_on_heavily_tied_scores():
    # 90 % of the scores tied: the untied variance m n (N + 1) / 12 overstates the sd ~2-fold
    labels = np.r_[np.ones(60, bool), np.zeros(140, bool)]
    scores = np.r_[np.zeros(180), np.ones(20)]
    aucs = _permuted_aucs(labels, scores, 20_000, seed=2)
    untied = math.sqrt(60 * 140 * 201 / 12.0) / (60 * 140)
    assert auc_null(labels, scores)["sd"] == pytest.approx(aucs.std(), rel=0.02)
    assert untied > 1.5 * aucs.std()


def test_auc_null_degenerate_cases():
    labels = np.r_[np.ones(5, bool), np.zeros(5, bool)]
    tied = auc_null(labels, np.ones(10))
    assert tied["sd"] == 0.0 and tied["ci"] == (0.5, 0.5) and tied["p_value"] == 1.0
    one_class = auc_null(np.ones(4, bool), np.arange(4.0))
    assert math.isnan(one_class["sd"]) and math.isnan(one_class["p_value"])


# ----------------------------------------------------------------------------- streams
def test_make_rng_reproducible_and_independent():
    a1 = make_rng(5, "attack", 2).random(1000)
    a2 = make_rng(5, "attack", 2).random(1000)
    b = make_rng(5, "attack", 3).random(1000)
    c = make_rng(5, "other").random(1000)
    d = make_rng(6, "attack", 2).random(1000)
    np.testing.assert_array_equal(a1, a2)
    for other in (b, c, d):
        assert not np.array_equal(a1, other)
        assert abs(np.corrcoef(a1, other)[0, 1]) < 0.15
    g = np.random.default_rng(0)
    assert make_rng(g, "x") is g
    np.testing.assert_array_equal(make_rng(None).random(3), make_rng(0).random(3))


def test_auc_ci_delong_agrees_with_bootstrap_and_is_used_for_large_inputs():
    import numpy as np

    from synthguard import stats

    rng = np.random.default_rng(3)
    y = np.r_[np.ones(3000), np.zeros(3000)].astype(int)
    s = np.r_[rng.normal(0.4, 1, 3000), rng.normal(0, 1, 3000)].round(1)  # ties on purpose
    auc = stats.auc_score(y, s)
    lo_d, hi_d = stats.auc_ci(y, s, method="delong")
    lo_b, hi_b = stats.auc_ci(y, s, method="bootstrap", n_boot=400, seed=0)
    assert lo_d < auc < hi_d
    assert abs((hi_d - lo_d) - (hi_b - lo_b)) < 0.25 * (hi_b - lo_b)
    assert abs(lo_d - lo_b) < 0.01 and abs(hi_d - hi_b) < 0.01
    # DeLong's placement mean is the AUC itself
    big_y = np.r_[np.ones(30_000), np.zeros(30_000)].astype(int)
    big_s = np.r_[rng.normal(0.1, 1, 30_000), rng.normal(0, 1, 30_000)]
    assert stats.auc_ci(big_y, big_s) == stats.auc_ci(big_y, big_s, method="delong")
    with pytest.raises(stats.ConfigError):
        stats.auc_ci(y, s, method="exact")


def test_median_ci_is_the_sign_test_interval():
    import numpy as np

    from synthguard.stats import clopper_pearson, median_ci

    v = np.arange(101, dtype=float)
    lo, hi = median_ci(v)
    qlo, qhi = clopper_pearson(50, 101)
    assert (lo, hi) == (np.quantile(v, qlo), np.quantile(v, qhi))
    assert lo < np.median(v) < hi
    assert all(np.isnan(median_ci(np.array([np.nan]))))


def test_chi_square_matches_scipy_on_occupied_cells():
    import numpy as np
    from scipy.stats import chi2_contingency

    from synthguard.stats import chi_square

    rng = np.random.default_rng(5)
    a = rng.integers(0, 4, 500)
    b = (a + rng.integers(0, 3, 500)) % 5 + 7  # non-dense labels
    chi2, r, c = chi_square(a, b)
    table = np.zeros((4, 5))
    np.add.at(table, (a, b - 7), 1)
    ref = chi2_contingency(table, correction=False)[0]
    assert (r, c) == (4, 5)
    assert chi2 == pytest.approx(ref, rel=1e-12)
    neg_chi2, _, _ = chi_square(a - 10, b)  # negative codes are shifted, not rejected
    assert neg_chi2 == pytest.approx(chi2, rel=1e-12)
    assert np.isnan(chi_square(np.array([], dtype=int), np.array([], dtype=int))[0])


def test_distribution_wrappers_equal_scipy_stats_bit_for_bit():
    """The wrappers that skip importing scipy.stats give exactly its values, also at and outside the
    support's edges and for impossible parameters (NaN)."""
    from scipy import stats as st

    from synthguard.stats import _beta_ppf, _binom_pmf, _binom_sf, _hypergeom_sf

    for q in (1e-9, 0.025, 0.5, 0.975, 1 - 1e-12, 0.0, 1.0):
        for a, b in ((1, 1), (3, 998), (500, 501), (0.5, 7)):
            assert np.array_equal(_beta_ppf(q, a, b), st.beta.ppf(q, a, b), equal_nan=True), (q, a, b)
    k = np.arange(-3, 60)
    for n in (0, 1, 10, 57):
        for p in (0.0, 1e-6, 0.03, 0.5, 0.999, 1.0):
            assert np.array_equal(_binom_sf(k, n, p), st.binom.sf(k, n, p), equal_nan=True), (n, p)
            assert np.array_equal(_binom_pmf(k, n, p), st.binom.pmf(k, n, p), equal_nan=True), (n, p)
            assert np.array_equal(_binom_sf(5, n, p), st.binom.sf(5, n, p), equal_nan=True)
    rng = np.random.default_rng(0)
    M = rng.integers(0, 300, 4000)
    n = rng.integers(-2, 320, 4000)
    N = rng.integers(-2, 320, 4000)
    kk = rng.integers(-3, 320, 4000)
    got, want = _hypergeom_sf(kk, M, n, N), st.hypergeom.sf(kk, M, n, N)
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(_hypergeom_sf(3, 1000, 40, 500), st.hypergeom.sf(3, 1000, 40, 500))


@pytest.mark.parametrize("n", [12, 300, 2000])
def test_auc_ci_bootstrap_equals_the_generic_bootstrap_of_auc_score_bit_for_bit(n):
    """auc_ci counts draws per distinct score instead of re-ranking each resample: same bits."""
    rng = np.random.default_rng(n)
    y = rng.integers(0, 2, n)
    s = np.round(rng.random(n), 2) + 0.1 * y  # ties
    got = auc_ci(y, s, n_boot=200, seed=7, method="bootstrap")
    want = bootstrap_ci(auc_score, [y.astype(int), s], n_boot=200, seed=7, stratify=y.astype(int))
    assert got == want


@pytest.mark.parametrize(("n1", "n2", "p0", "alpha"), [
    (40, 40, 0.0, 0.05), (600, 900, 0.08, 0.005), (3000, 3000, 0.3, 0.05), (5000, 2000, 0.01, 0.001)])
def test_fisher_critical_equals_a_plain_binary_search(n1, n2, p0, alpha):
    """The detection limit's critical counts (interpolated, checked, stepped) are the smallest
    significant member counts a binary search over every count finds."""
    from synthguard.stats.limits import _fisher_critical, _fisher_search

    sd = math.sqrt(max(n2 * p0 * (1 - p0), 1.0))
    k2 = np.arange(max(0, int(n2 * p0 - 7 * sd)), min(n2, int(n2 * p0 + 7 * sd) + 1) + 1)
    want = _fisher_search(k2, n1, n2, alpha, np.zeros(k2.shape, dtype=np.int64),
                          np.full(k2.shape, n1 + 1, dtype=np.int64))
    assert np.array_equal(_fisher_critical(k2, n1, n2, alpha), want)


def test_relabelled_fisher_p_values_equal_scipy_for_every_count_drawn():
    """The max-T null looks up one-sided Fisher p-values only for the member counts the
    relabellings draw; each equals scipy's ``hypergeom.sf(k - 1, N, K, n1)``, counts repeated or not."""
    from synthguard.stats.maxt import _perm_p

    rng = np.random.default_rng(3)
    n1, n2, k_total = 700, 300, 120
    k1 = rng.hypergeometric(k_total, n1 + n2 - k_total, n1, size=500)
    got = _perm_p(k1, k_total, n1, n1 + n2)
    want = np.minimum(1.0, st.hypergeom.sf(k1 - 1, n1 + n2, k_total, n1))
    assert got.shape == k1.shape and np.unique(k1).size < k1.size
    assert np.allclose(got, want, rtol=1e-12, atol=0)
