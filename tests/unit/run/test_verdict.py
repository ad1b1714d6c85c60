"""The calibrated verdict: its statistics, its level rule, Holm, the detection limit, the CLI gate."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats as st

import synthguard
from synthguard.cli import main
from synthguard.core.results import Evidence, MetricResult
from synthguard.errors import ConfigError
from synthguard.run.verdict import RiskRule, assess, fails, level_of
from synthguard.stats import (
    binomial_greater,
    detection_limit,
    fisher_greater,
    holm_adjust,
    tail_counts,
)
from tests.console_text import flat


@pytest.mark.parametrize("k1,n1,k2,n2", [(10, 1000, 0, 1000), (5, 50, 3, 70), (0, 10, 4, 10),
                                         (300, 1000, 280, 1000), (7, 7, 0, 3)])
def test_fisher_greater_equals_scipy(k1, n1, k2, n2):
    expected = st.fisher_exact([[k1, n1 - k1], [k2, n2 - k2]], alternative="greater").pvalue
    assert fisher_greater(k1, n1, k2, n2) == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_binomial_greater_equals_scipy():
    for k, n, p in [(3, 100, 0.01), (0, 10, 0.5), (10, 10, 0.9), (55, 100, 0.5)]:
        assert binomial_greater(k, n, p) == pytest.approx(st.binomtest(k, n, p, "greater").pvalue, abs=1e-12)


def test_holm_known_answer():
    # textbook example: p = (0.01, 0.04, 0.03) -> adjusted (0.03, 0.06, 0.06)
    assert holm_adjust([0.01, 0.04, float("nan"), 0.03])[:2] == pytest.approx([0.03, 0.06])
    adj = holm_adjust([0.01, 0.04, float("nan"), 0.03])
    assert np.isnan(adj[2]) and adj[3] == pytest.approx(0.06)
    assert holm_adjust([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    # weighted (Holm 1979): order by p/w; p/w times the weight still in play
    assert holm_adjust([0.015, 0.001, 0.5], [3, 1, 1]) == pytest.approx([0.02, 0.005, 0.5])
    assert holm_adjust([0.01, 0.04, 0.03], [1, 1, 1]) == pytest.approx(holm_adjust([0.01, 0.04, 0.03]))


@pytest.mark.parametrize("n1,n2,p0", [(1000, 1000, 0.0), (800, 600, 0.05), (500, None, 0.01)])
def test_detection_limit_has_its_power(n1, n2, p0):
    """Simulate the test at the stated limit: about 80 % of leaks of that size are detected,
    and clearly fewer at half of it."""
    d = detection_limit(n1, n2, p0)
    rng = np.random.default_rng(1)
    def power(delta: float) -> float:
        k1 = rng.binomial(n1, min(1.0, p0 + delta), 1500)
        if n2 is None:
            p = st.binom.sf(k1 - 1, n1, p0)
        else:
            k2 = rng.binomial(n2, p0, 1500)
            p = st.hypergeom.sf(k1 - 1, n1 + n2, k1 + k2, n1)
        return float(np.mean(p < 0.05))
    assert 0.75 <= power(d) <= 0.9
    assert power(d / 2) < 0.6


def test_tail_counts_pools_the_cut_and_keeps_tied_top_groups():
    m = np.r_[np.zeros(5), -np.arange(1, 96) / 100]
    c = -np.arange(1, 101) / 100 - 0.005
    k_m, k_c, cut = tail_counts(m, c, 0.01)  # 2 of 200 allowed, but 5 tied at the top: all taken
    assert (k_m, k_c, cut) == (5, 0, 0.0)
    k_m, k_c, cut = tail_counts(-np.arange(100.0), -np.arange(100.0) - 0.5, 0.1)
    assert k_m + k_c == 20 and k_m == 10


def _ev(p, effect, ci_hi, drives=True):
    return Evidence("s", 0.0, 100, 0.0, 100, effect, (effect - 0.01, ci_hi), p, "t", "b",
                    drives_verdict=drives)


def test_level_rule():
    assert level_of(_ev(0.001, 0.05, 0.08), 0.01, 0.05) == "high"
    assert level_of(_ev(0.001, 0.005, 0.008), 0.01, 0.05) == "medium"
    # significant, small point estimate, but a material leak is not ruled out: precautionary high
    assert level_of(_ev(0.001, 0.008, 0.02), 0.01, 0.05) == "high"
    assert level_of(_ev(0.4, 0.0, 0.009), 0.01, 0.05) == "low"
    assert level_of(_ev(0.4, 0.0, 0.03), 0.01, 0.05) == "inconclusive"


def test_assess_holm_reference_and_not_assessed():
    def res(name, ev, fam="privacy", lvl="high"):
        return MetricResult(name, fam, 0.1, "lower is safer", risk_level=lvl, evidence=ev)

    results = {"a": res("a", _ev(0.02, 0.05, 0.09)), "b": res("b", _ev(0.5, 0.0, 0.005)),
               "c": res("c", None), "q": res("q", None, fam="fidelity", lvl="low"),
               "d": res("d", _ev(0.001, 0.2, 0.3, drives=False))}
    out, v = assess(results, RiskRule())
    # a alone would be significant (0.02) but not after Holm over two driving tests (0.04 < 0.05: still)
    assert out["a"].evidence.p_adjusted == pytest.approx(0.04)
    assert out["a"].risk_level == "high" and v.level == "high" and v.driver == "a"
    assert out["b"].risk_level == "low"
    assert out["c"].risk_level == "not assessed" and out["c"].reference_level == "high"
    assert out["d"].risk_level == "not assessed" and "d" in v.not_assessed
    assert out["q"].risk_level == "low"  # quality levels are left alone
    # no test states leak responses: no limit is measured, and none is made up from a formula
    assert v.detection_limit is None and not v.detection_limits
    # three significant-looking tests at 0.02 each: Holm makes none significant
    many = {n: res(n, _ev(0.02, 0.05, 0.09)) for n in "xyz"}
    assert assess(many)[1].level == "inconclusive"
    ref = assess(results, RiskRule(rule="reference"))
    assert ref[1].level == "high" and ref[0]["c"].risk_level == "high"
    nothing = assess({"c": res("c", None)})[1]
    assert nothing.level == "inconclusive" and "control" in nothing.summary


def test_rule_validation_and_fail_on():
    with pytest.raises(ConfigError, match="materiality"):
        RiskRule(materiality=1.5)
    with pytest.raises(ConfigError, match="release_type"):
        RiskRule(release_type="public")
    with pytest.raises(ConfigError, match="risk_rule"):
        RiskRule(rule="strict")
    assert fails("high", "high") and fails("high", "medium") and not fails("medium", "high")
    assert not fails("low", "inconclusive") and fails("inconclusive", "inconclusive")
    assert not fails("high", None)


def _write(tmp_path, frames):
    paths = {}
    for name, df in frames.items():
        paths[name] = tmp_path / f"{name}.csv"
        df.to_csv(paths[name], index=False)
    return paths


def test_fail_on_gates_a_pipeline_and_json_carries_the_verdict(tmp_path, demo_data):
    p = _write(tmp_path, {k: demo_data[k] for k in ("original", "control", "leaky", "safe")})
    base = ["evaluate", "-o", str(p["original"]), "-c", str(p["control"]), "--metrics",
            "exact_matches,near_copies,near_copies_2,close_neighbours,ims,dcr,closest_distance_mia",
            "--no-progress", "--materiality", "0.05"]
    leaky = CliRunner().invoke(main, base + ["-s", str(p["leaky"]), "--fail-on", "high",
                                             "--json", str(tmp_path / "leaky.json")])
    assert leaky.exit_code == 3, leaky.output
    assert "VERDICT: HIGH" in flat(leaky.output)
    data = json.loads((tmp_path / "leaky.json").read_text())
    assert data["verdict"]["level"] == "high" and data["verdict"]["drivers"]
    assert data["verdict"]["rule"] == "calibrated" and data["verdict"]["materiality"] == 0.05
    assert data["metrics"]["exact_matches"]["result"]["evidence"]["p_adjusted"] < 1e-6
    safe = CliRunner().invoke(main, base + ["-s", str(p["safe"]), "--fail-on", "high"])
    assert safe.exit_code == 0, safe.output
    assert "VERDICT: LOW" in flat(safe.output)
    # without a test that sees interpolated neighbours, low cannot be claimed: the run says so
    CliRunner().invoke(main, [a.replace(",close_neighbours", "") for a in base]
                       + ["-s", str(p["safe"]), "--json", str(tmp_path / "blind.json")])
    verdict = json.loads((tmp_path / "blind.json").read_text())["verdict"]
    assert verdict["level"] == "inconclusive" and "interpolated neighbours" in verdict["summary"]
    ref = CliRunner().invoke(main, base + ["-s", str(p["leaky"]), "--risk-rule", "reference",
                                           "--materiality", "0.02"])
    assert ref.exit_code == 0 and "rule: reference" in flat(ref.output)
    bad = CliRunner().invoke(main, base + ["-s", str(p["safe"]), "--materiality", "2"])
    assert bad.exit_code == 2 and "materiality" in bad.output


def test_release_type_from_metadata_and_config(demo_data, demo_metadata):
    meta = dict(demo_metadata, release_type="anonymised")
    rep = synthguard.evaluate(demo_data["original"].head(300), demo_data["safe"].head(300),
                              control=demo_data["control"].head(300), metadata=meta,
                              metrics=["exact_matches"])
    assert rep.verdict.rule.release_type == "anonymised"
    rep = synthguard.evaluate(demo_data["original"].head(300), demo_data["safe"].head(300),
                              control=demo_data["control"].head(300),
                              config={"metrics": ["exact_matches"], "materiality": 0.05,
                                      "risk_rule": "reference"})
    assert rep.verdict.rule.materiality == 0.05 and rep.verdict.rule.rule == "reference"
    with pytest.raises(ConfigError):
        synthguard.evaluate(demo_data["original"].head(30), demo_data["safe"].head(30),
                            config={"metrics": ["exact_matches"], "alpha": 0.9})


def test_leak_rows_cover_five_times_the_runs_own_materiality():
    """The detection limits inject up to five times the run's materiality (not a fixed 1 %): at 5 %
    on 6,000 training records each family gets 1,500 candidates (1,000 at 1 %), so a family the
    tests read high only between 1,000 records and 25 % is measured, not called unreadable."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)

    def table(n):
        return pd.DataFrame({"a": rng.integers(0, 1000, n), "b": rng.normal(size=n).round(3),
                             "c": rng.choice(list("xyz"), n)})

    o, s, c = table(6000), table(6000), table(2000)
    for materiality, candidates in ((0.01, 1000), (0.05, 1500)):
        rep = synthguard.evaluate(o, s, control=c, config={"metrics": ["exact_matches"],
                                                           "materiality": materiality})
        presence = next(r for r in rep.verdict.risks if r.risk == "presence")
        assert {lim.candidates for lim in presence.detection_limits.values()} == {candidates}
        near1 = presence.detection_limits["near1"]
        assert f"all {candidates} candidate" in near1.text


def test_fail_on_passes_a_fresh_real_sample_and_stops_copies(tmp_path, shared_data):
    """On real data (acs12): a fresh sample of real people exits 0 under --fail-on high, the same
    release with 10 % of the training records copied in exits 3."""
    import pandas as pd

    from synthguard.calibration import calibration_split, leaky_release

    parts = calibration_split(pd.read_csv(shared_data / "acs12.csv"), 0)
    leak = leaky_release(parts["fresh"], parts["original"], 0.1, 0)
    p = _write(tmp_path, {"original": parts["original"], "control": parts["control"],
                          "fresh": parts["fresh"], "leak": leak})
    base = ["evaluate", "-o", str(p["original"]), "-c", str(p["control"]), "--preset", "quick",
            "--fail-on", "high", "--no-progress"]
    fresh = CliRunner().invoke(main, base + ["-s", str(p["fresh"])])
    assert fresh.exit_code == 0, fresh.output
    leaky = CliRunner().invoke(main, base + ["-s", str(p["leak"])])
    assert leaky.exit_code == 3, leaky.output
