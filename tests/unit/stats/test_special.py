"""The distribution functions of ``synthguard.stats._special``: SciPy's own Boost ufuncs, found on
every supported SciPy (1.10 keeps them in ``scipy.stats._boost``), with the bits of ``scipy.stats``."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st

from synthguard.stats import _special as sp

NAMES = ("_beta_ppf", "_binom_sf", "_binom_pmf", "_hypergeom_sf")


@pytest.mark.parametrize("name", NAMES)
def test_every_wrapper_finds_scipys_boost_ufunc_on_this_scipy(name):
    # without it the wrapper goes through scipy.stats' per-call argument handling: on SciPy 1.10
    # the console summary of a 500-row run took about 70 s (the control-size planning bisection)
    assert isinstance(sp._boost(name), np.ufunc)


def test_wrappers_give_the_bits_of_scipy_stats_inside_and_outside_the_support():
    rng = np.random.default_rng(0)
    big_m = rng.integers(1, 2000, 4000)
    n = rng.integers(0, big_m + 1)
    draws = rng.integers(0, big_m + 1)
    k = rng.integers(-2, big_m + 2)
    assert np.array_equal(sp._hypergeom_sf(k, big_m, n, draws), st.hypergeom.sf(k, big_m, n, draws),
                          equal_nan=True)
    assert np.isnan(sp._hypergeom_sf(1, 10, 11, 3))  # impossible parameters: NaN, as in SciPy
    ks = np.arange(-2, 60)
    for p in (0.0, 0.03, 0.5, 1.0):
        assert np.array_equal(sp._binom_sf(ks, 50, p), st.binom.sf(ks, 50, p))
        assert np.array_equal(sp._binom_pmf(ks, 50, p), st.binom.pmf(ks, 50, p))
    for q, a, b in ((0.3, 2.5, 4.0), (0.975, 1.0, 800.0), (0.025, 31.0, 770.0)):
        assert sp._beta_ppf(q, a, b) == st.beta.ppf(q, a, b)


def test_summed_tail_equals_scipys_on_every_kind_of_argument():
    rng = np.random.default_rng(1)
    for big in (40, 2_000, 100_000):
        big_m = rng.integers(1, big, 5000)
        n = rng.integers(0, big_m + 1)
        draws = rng.integers(0, big_m + 1)
        k = rng.integers(-2, big_m + 2)
        got, want = sp._hypergeom_sf_summed(k, big_m, n, draws), sp._hypergeom_sf(k, big_m, n, draws)
        assert np.array_equal(np.isnan(got), np.isnan(want))
        ok = ~np.isnan(want)
        assert np.allclose(got[ok], want[ok], rtol=1e-9, atol=1e-12)
    assert np.shape(sp._hypergeom_sf_summed(30, 2000, 90, 1000)) == ()
    assert sp._hypergeom_sf_summed(np.array([[30, 31]]), 2000, 90, 1000).shape == (1, 2)


def test_fisher_critical_values_are_those_of_scipys_p_values(monkeypatch):
    """The critical-value search compares summed p-values with the level: the same answers as
    with SciPy's own p-values, on every size and rate the detection limits meet."""
    import synthguard.stats.limits as lim

    cases = [(n1, n2, p0, alpha) for n1 in (7, 120, 800, 5000) for n2 in (n1 // 4 + 1, n1)
             for p0 in (0.0, 0.01, 0.093, 0.5) for alpha in (0.05, 0.005)]
    cases.append((12000, 12000, 0.093, 0.005))  # (SciPy 1.10's own p-values take ~10 s beyond)

    def criticals():
        out = []
        for n1, n2, p0, alpha in cases:
            sd = np.sqrt(max(n2 * p0 * (1 - p0), 1.0))
            k2 = np.arange(max(0, int(n2 * p0 - 7 * sd)), min(n2, int(n2 * p0 + 7 * sd) + 1) + 1)
            out.append(lim._fisher_critical(k2, n1, n2, alpha))
        return out

    summed = criticals()
    monkeypatch.setattr(lim, "_hypergeom_sf_summed", sp._hypergeom_sf)
    scipys = criticals()
    assert all(np.array_equal(a, b) for a, b in zip(summed, scipys, strict=True))
