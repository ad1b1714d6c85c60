"""anonymisation_score: hand-computed distances, identical = 1, replaced ~ 100, registry, modes."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chi2_contingency

from synthguard.errors import ConfigError, MetricError
from synthguard.metrics.distortion import distances as dist
from synthguard.metrics.distortion.anonymisation_score import anonymisation_score, band
from synthguard.registry import Context

from ....helpers import run

S = pd.Series


def test_numeric_components_by_hand() -> None:
    a = S([0.0, 1.0, 2.0, 3.0, 4.0])
    b = a + 1
    assert dist.wasserstein(a, b, "distributional") == pytest.approx(1 / 4)  # W=1, range 4
    assert dist.ks(a, b, "distributional") == pytest.approx(1 / 5)
    assert dist.mean_shift(a, b, "distributional") == pytest.approx(1 / math.sqrt(2.5))
    assert dist.mean_shift(a, a + 100, "distributional") == 1.0  # capped
    assert dist.wasserstein(a, a + 100, "distributional") == 1.0
    const = S([2.0, 2.0])
    assert dist.wasserstein(const, const, "row_aligned") == 0.0
    assert dist.mean_shift(const, S([3.0, 3.0]), "row_aligned") == 1.0


def test_categorical_components_by_hand() -> None:
    a = S(["x", "y", "z", "x", "y", "z"] * 5)
    relabelled = a.map({"x": "p", "y": "q", "z": "r"})  # a bijection: association kept, values replaced
    assert dist.association(a, relabelled, "row_aligned") == pytest.approx(0.0, abs=1e-12)
    assert dist.jaccard(a, relabelled, "row_aligned") == 1.0
    assert dist.jaccard(S(["a", "b", "c"]), S(["b", "c", "d"]), "distributional") == pytest.approx(0.5)
    # distributional: total variation distance of the frequencies
    assert dist.association(S(["a", "a", "b", "b"]), S(["a", "b", "b", "b"]),
                            "distributional") == pytest.approx(0.25)


def test_bias_corrected_cramers_v_by_hand() -> None:
    rng = np.random.default_rng(0)
    a = rng.integers(0, 3, 200)
    b = np.where(rng.random(200) < 0.6, a, rng.integers(0, 4, 200))
    table = pd.crosstab(a, b).to_numpy()
    chi2 = chi2_contingency(table, correction=False)[0]
    n, (r, k) = table.sum(), table.shape
    phi2c = max(0, chi2 / n - (k - 1) * (r - 1) / (n - 1))
    rc, kc = r - (r - 1) ** 2 / (n - 1), k - (k - 1) ** 2 / (n - 1)
    expected = math.sqrt(phi2c / min(kc - 1, rc - 1))
    assert dist.bias_corrected_cramers_v(a, b) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(("s1", "s2", "expected"), [
    ("MARTHA", "MARHTA", 0.961111), ("DWAYNE", "DUANE", 0.84), ("DIXON", "DICKSONX", 0.813333),
    ("abc", "abc", 1.0), ("abc", "xyz", 0.0), ("", "a", 0.0)])
def test_jaro_winkler_known_values(s1: str, s2: str, expected: float) -> None:
    assert dist.jaro_winkler(s1, s2) == pytest.approx(expected, abs=1e-6)


def test_pure_jaro_winkler_agrees_with_rapidfuzz() -> None:
    from rapidfuzz.distance import JaroWinkler

    rng = np.random.default_rng(1)
    alphabet = list("abcde ")
    for _ in range(2000):
        s1 = "".join(rng.choice(alphabet, rng.integers(0, 12)))
        s2 = "".join(rng.choice(alphabet, rng.integers(0, 12)))
        assert dist.jaro_winkler(s1, s2) == pytest.approx(
            JaroWinkler.normalized_similarity(s1, s2), abs=1e-9), (s1, s2)


def test_text_components_by_hand() -> None:
    a = S(["alpha", "beta", "gamma", "alpha"])
    b = S(["alpha", "beta", "delta", "alpha"])
    assert dist.replacement(a, b, "row_aligned") == pytest.approx(1 / 3)
    sims = [1.0, 1.0, dist.jaro_winkler("gamma", "delta"), 1.0]
    assert dist.jaro_winkler_distance(a, b, "row_aligned") == pytest.approx(1 - np.mean(sims))
    # distributional: each release value against its most similar original value
    assert dist.jaro_winkler_distance(a, S(["alphx"]), "distributional") == pytest.approx(
        1 - dist.jaro_winkler("alphx", "alpha"))


def _people(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(18, 90, n).astype(float),
                         "city": rng.choice(["paris", "rome", "oslo", "lima"], n),
                         "name": [f"name{i}" for i in rng.integers(0, 10_000, n)]})


META = {"columns": {"age": {"sdtype": "numerical"}, "city": {"sdtype": "categorical"},
                    "name": {"sdtype": "text"}}}


@pytest.mark.parametrize("mode", ["row_aligned", "distributional"])
def test_identical_scores_one(mode: str) -> None:
    o = _people(300, 0)
    res = run(anonymisation_score, ctx=Context.from_frames(o, o.copy(), metadata=META), mode=mode)
    assert res.value == pytest.approx(1.0, abs=1e-9)
    assert res.details["band"] == "minimal" and res.details["mode"] == mode


@pytest.mark.parametrize("mode", ["row_aligned", "distributional"])
def test_fully_replaced_scores_near_100(mode: str) -> None:
    o = _people(300, 0)
    rng = np.random.default_rng(9)
    r = pd.DataFrame({"age": rng.uniform(1000, 2000, 300),
                      "city": rng.choice(["A1", "B2", "C3"], 300),
                      "name": ["zzzzzzz"] * 300})
    res = run(anonymisation_score, ctx=Context.from_frames(o, r, metadata=META), mode=mode)
    assert res.value > 95
    assert res.details["band"] == "very high"
    cols = {c["column"]: c for c in res.details["columns"]}
    assert set(cols["age"]["components"]) == {"wasserstein", "ks", "mean_shift"}
    assert set(cols["city"]["components"]) == {"association", "jaccard"}
    assert set(cols["name"]["components"]) == {"replacement", "jaro_winkler"}
    assert res.details["jaro_winkler_backend"] in ("rapidfuzz", "python")


def test_weights_and_bands() -> None:
    o = _people(300, 0)
    m = o.copy()
    m["age"] = m["age"] + 1000  # only age changes
    ctx = Context.from_frames(o, m, metadata=META)
    even = run(anonymisation_score, ctx=ctx, mode="row_aligned")
    heavy = run(anonymisation_score, ctx=ctx, mode="row_aligned", weights={"age": 8.0})
    age_d = next(c["distance"] for c in even.details["columns"] if c["column"] == "age")
    assert even.details["distance"] == pytest.approx(age_d / 3)
    assert heavy.details["distance"] == pytest.approx(8 * age_d / 10)
    assert heavy.value == pytest.approx(1 + 99 * heavy.details["distance"])
    assert [band(x) for x in (1, 20, 21, 40.5, 60, 80, 80.1, 100)] == [
        "minimal", "minimal", "low", "moderate", "moderate", "high", "very high", "very high"]
    with pytest.raises(ConfigError, match="weights"):
        run(anonymisation_score, ctx=ctx, weights={"nope": 1.0})


def test_custom_distance_registry() -> None:
    @dist.register_distance("numeric", "median_shift")
    def median_shift(original, anonymised, mode):
        return min(abs(anonymised.median() - original.median()) / 100, 1.0)

    try:
        o = _people(200, 0)
        m = o.copy()
        m["age"] = m["age"] + 50
        res = run(anonymisation_score, ctx=Context.from_frames(o, m, metadata=META), mode="row_aligned")
        comps = next(c["components"] for c in res.details["columns"] if c["column"] == "age")
        assert comps["median_shift"] == pytest.approx(0.5)
        with pytest.raises(ValueError, match="already registered"):
            dist.register_distance("numeric", "median_shift")(lambda a, b, m: 0.0)
    finally:
        dist.unregister_distance("numeric", "median_shift")
    assert "median_shift" not in dist.distances_for("numeric")


def test_sampling_is_seeded_and_row_aligned_needs_same_rows() -> None:
    o = _people(3000, 0)
    s = _people(2500, 1)
    ctx = Context.from_frames(o, s, metadata=META, seed=4)
    a = run(anonymisation_score, ctx=ctx, max_rows=500)
    b = run(anonymisation_score, ctx=Context.from_frames(o, s, metadata=META, seed=4), max_rows=500)
    assert a.to_dict() == b.to_dict() and a.details["n_compared"] == 500 and a.details["sampled"]
    with pytest.raises(MetricError, match="row_aligned"):
        run(anonymisation_score, ctx=ctx, mode="row_aligned")


@pytest.mark.parametrize("mode", ["row_aligned", "distributional"])
def test_pure_fallback_gives_the_same_score(mode: str, monkeypatch) -> None:
    o = _people(300, 0)
    s = _people(300, 1)
    fast = run(anonymisation_score, ctx=Context.from_frames(o, s, metadata=META), mode=mode)
    monkeypatch.setattr(dist, "jaro_winkler_backend", lambda: "python")
    slow = run(anonymisation_score, ctx=Context.from_frames(o, s, metadata=META), mode=mode)
    assert slow.details["jaro_winkler_backend"] == "python"
    assert slow.value == pytest.approx(fast.value, abs=1e-6)
