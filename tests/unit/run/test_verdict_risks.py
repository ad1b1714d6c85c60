"""The verdict per risk: joint max-T over record flags, low only when every leak type is ruled out,
and detection limits measured by injecting leaks."""

from __future__ import annotations

import numpy as np
import pytest

from synthguard.core.results import Evidence, MetricResult, RecordFlags
from synthguard.run.verdict import assess
from synthguard.stats import fisher_greater
from synthguard.stats.maxt import injection_limit, joint_minp


def _flags(n1, n2, k1, k2, rng, responds=("exact",), vis=1.0):
    m = np.zeros(n1, bool)
    m[rng.choice(n1, k1, replace=False)] = True
    c = np.zeros(n2, bool)
    c[rng.choice(n2, k2, replace=False)] = True
    resp = {t: rng.random(n1) < vis for t in responds}
    return RecordFlags(m, c, resp)


def _res(name, ev, family="privacy"):
    return MetricResult(name, family, 0.0, "lower is safer", evidence=ev)


def test_joint_minp_keeps_the_family_wise_error_on_dependent_tests():
    rng = np.random.default_rng(5)
    alarms = 0
    runs = 300
    for r in range(runs):
        base = rng.random(1200) < 0.04
        overlap = base | (rng.random(1200) < 0.01)   # strongly dependent on the first
        rare = rng.random(1200) < 0.003
        tests = (base, overlap, rare)
        jt = joint_minp([t[:600] for t in tests], [t[600:] for t in tests], [3, 1, 1],
                        n_perm=300, seed=r)
        alarms += bool((jt.p_adjusted < 0.05).any())
    assert alarms / runs <= 0.07  # 5 % plus Monte Carlo error


def test_joint_minp_of_one_test_is_its_fisher_test():
    m = np.r_[np.ones(12, bool), np.zeros(488, bool)]
    c = np.r_[np.ones(3, bool), np.zeros(497, bool)]
    jt = joint_minp([m], [c], n_perm=4000, seed=1)
    p = fisher_greater(12, 500, 3, 500)
    assert jt.p_raw[0] == pytest.approx(p)
    assert jt.p_adjusted[0] == pytest.approx(p, abs=0.01)


def test_dependent_tests_lose_less_than_holm():
    """Two copies of one test: the joint test charges them once, Holm twice."""
    m = np.r_[np.ones(9, bool), np.zeros(591, bool)]
    c = np.r_[np.ones(1, bool), np.zeros(599, bool)]
    jt = joint_minp([m, m | np.r_[np.zeros(599, bool), True]], [c, c], n_perm=3000, seed=2)
    p = fisher_greater(9, 600, 1, 600)
    assert jt.p_adjusted.min() < 1.5 * p + 0.004  # Holm would give 2p


def test_a_risk_is_low_only_when_every_leak_type_is_ruled_out():
    rng = np.random.default_rng(0)
    exact = Evidence.from_flags("exact copy", _flags(2000, 2000, 0, 0, rng), sees=("exact", "rare"),
                                risk="presence", weight=3)
    res = {"exact_matches": _res("exact_matches", exact)}
    out, v = assess(res)
    presence = next(r for r in v.risks if r["risk"] == "presence")
    assert presence["level"] == "inconclusive" and list(presence["unresolved"]) == ["near"]
    assert v.level == "inconclusive"  # nothing could see near-copies
    near = Evidence.from_flags("near copy", _flags(2000, 2000, 1, 1, rng, ("near", "exact")),
                               sees=("near", "exact", "rare"), risk="presence")
    res["near_copies"] = _res("near_copies", near)
    out, v = assess(res)
    assert v.level == "low", v.summary
    for r in v.risks:
        assert r["level"] == ("low" if r["risk"] == "presence" else "not assessed")


def test_low_visibility_cannot_rule_out_the_materiality():
    """A test that only one in five leaked records would move must rule out m x 0.2."""
    rng = np.random.default_rng(1)
    flags = _flags(2000, 2000, 0, 0, rng, ("exact", "near", "rare"), vis=0.2)
    ev = Evidence.from_flags("near copy", flags, sees=("exact", "near", "rare"), risk="presence")
    assert ev.effect_ci[1] < 0.01 and ev.visibility["near"] == pytest.approx(0.2, abs=0.03)
    _, v = assess({"near_copies": _res("near_copies", ev)})
    assert v.level == "inconclusive"


def test_a_capped_tail_test_raises_alarms_but_never_supports_low():
    rng = np.random.default_rng(2)
    tail = Evidence.from_flags("in the pooled 5 % tail", _flags(1000, 1000, 50, 50, rng), sees=(),
                               risk="presence")
    _, v = assess({"dcr": _res("dcr", tail)})
    assert v.level == "inconclusive"
    leak = Evidence.from_flags("in the pooled 5 % tail", _flags(1000, 1000, 90, 10, rng), sees=(),
                               risk="presence")
    _, v = assess({"dcr": _res("dcr", leak)})
    assert v.level == "high"


def test_identical_tests_are_collapsed_into_one():
    rng = np.random.default_rng(3)
    f = _flags(800, 800, 20, 2, rng)
    a = Evidence.from_flags("cap", f, risk="inference")
    b = Evidence.from_flags("disclosure protection", f, risk="inference")
    _, v = assess({"cap": _res("cap", a, "disclosure"),
                   "disclosure_protection": _res("disclosure_protection", b, "disclosure")})
    rows = {t["metric"]: t for t in v.tests}
    assert rows["disclosure_protection"]["same_as"] == "cap"
    assert rows["cap"]["p_adjusted"] == rows["disclosure_protection"]["p_adjusted"]


def test_overall_low_needs_every_leak_type_of_every_assessed_risk_ruled_out():
    quiet = RecordFlags(np.zeros(3000, bool), np.zeros(3000, bool),
                        {t: np.ones(3000, bool) for t in ("exact", "near", "rare")})
    near = Evidence.from_flags("near copy", quiet, sees=("exact", "near", "rare"), risk="presence")
    link = Evidence.from_counts("linked", 30, 300, 28, 300)  # wide interval, sees no leak type
    _, v = assess({"near_copies": _res("near_copies", near),
                   "linkability": _res("linkability", link, "anonymeter")})
    levels = {r["risk"]: r["level"] for r in v.risks}
    # the copies through which records could be linked are ruled out by the presence tests
    assert levels == {"presence": "low", "linkability": "low", "singling_out": "not assessed",
                      "inference": "not assessed"}
    assert v.level == "low"
    # a linkability test that says it sees whole persons: nothing rules a person-level leak out
    seen = Evidence.from_flags("linked", RecordFlags(np.zeros(300, bool), np.zeros(300, bool),
                                                     {"person": np.ones(300, bool)}),
                               sees=("person",), risk="linkability")
    _, v = assess({"near_copies": _res("near_copies", near),
                   "linkability": _res("linkability", seen, "anonymeter")})
    levels = {r["risk"]: r["level"] for r in v.risks}
    assert levels["presence"] == "low" and levels["linkability"] == "inconclusive"
    assert v.level == "inconclusive" and "whole persons" in v.summary
    # an alarm of any risk makes the verdict high
    loud = Evidence.from_counts("linked", 90, 300, 20, 300)
    _, v = assess({"near_copies": _res("near_copies", near),
                   "linkability": _res("linkability", loud, "anonymeter")})
    assert v.level == "high" and v.driver == "linkability"


def test_injected_detection_limit_has_its_power():
    """A leak of 1.5 x the stated limit is detected in at least 80 % of fresh simulations."""
    rng = np.random.default_rng(6)
    n = 1000
    base_m = rng.random(n) < 0.01
    base_c = rng.random(n) < 0.01
    visible = rng.random(n) < 0.8
    out = injection_limit([base_m], [base_c], [visible], [1.0], 0.05, reps=60, seed=0)
    k = out["k"]
    assert k is not None and 5 <= k <= 100
    hits = 0
    sims = 300
    for _ in range(sims):
        m = rng.random(n) < 0.01
        c = rng.random(n) < 0.01
        leak = rng.choice(n, int(1.5 * k), replace=False)
        m[leak] |= visible[leak]
        hits += fisher_greater(int(m.sum()), n, int(c.sum()), n) <= 0.05
    assert hits / sims >= 0.8


def test_verdict_states_detection_limits_per_leak_type():
    rng = np.random.default_rng(7)
    n = 1500
    allf = {t: np.ones(n, bool) for t in ("exact", "near", "rare")}
    exact = Evidence.from_flags("exact", RecordFlags(np.zeros(n, bool), np.zeros(n, bool),
                                                     {"exact": allf["exact"], "rare": allf["rare"]}),
                                sees=("exact", "rare"), risk="presence", weight=3)
    near = Evidence.from_flags("near", RecordFlags(np.zeros(n, bool), rng.random(n) < 0.002, allf),
                               sees=("exact", "near", "rare"), risk="presence")
    _, v = assess({"exact_matches": _res("exact_matches", exact),
                   "near_copies": _res("near_copies", near)}, seed=3)
    d = v.to_dict()
    assert set(d["detection_limits"]) == {"exact", "near", "rare"}
    for t, lim in d["detection_limits"].items():
        assert 0 < lim["value"] < 0.01, (t, lim)
    assert d["detection_limit"]["value"] == max(x["value"] for x in d["detection_limits"].values())
    again = assess({"exact_matches": _res("exact_matches", exact),
                    "near_copies": _res("near_copies", near)}, seed=3)[1].to_dict()
    assert again == d  # seeded: same verdict, same bytes
