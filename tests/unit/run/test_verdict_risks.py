"""The verdict per risk: joint max-T over record flags; a risk's bound is the largest of its tests'
one-sided upper bounds and its leak families' detection limits, measured by injecting leak rows; low
only when that bound is below the materiality and no family is unassessed."""

from __future__ import annotations

import numpy as np
import pytest

from synthguard.core.results import (
    LEAK_FAMILIES,  # noqa: E402
    Evidence,
    LeakResponse,
    MetricResult,
    RecordFlags,
)
from synthguard.run.limits import InjectionTest, family_limits
from synthguard.run.verdict import assess
from synthguard.stats import fisher_greater
from synthguard.stats.maxt import joint_minp


def _scored(n1, n2, k1, k2, rng, respond=None, families=("exact",)):
    """Flags with scores (1 = flagged) and leak responses: ``respond`` maps a family to the share of
    the training records whose leak row would flag them (their own record)."""
    m = np.zeros(n1)
    m[rng.choice(n1, k1, replace=False)] = 1.0
    c = np.zeros(n2)
    c[rng.choice(n2, k2, replace=False)] = 1.0
    src = np.arange(n1)
    leaks = {}
    for fam, share in (respond or {}).items():
        hit = src[rng.random(n1) < share]
        leaks[fam] = LeakResponse(src, hit, hit, np.ones(hit.size))
    return RecordFlags.from_scores(m, c, leaks=leaks,
                                   families={f: (None if f in families else "does not apply")
                                             for f in LEAK_FAMILIES})


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


def test_a_risk_is_low_only_when_every_family_it_answers_for_is_ruled_out():
    rng = np.random.default_rng(0)
    fams = ("exact", "near1")
    exact = Evidence.from_flags("exact copy", _scored(2000, 2000, 0, 0, rng, {"exact": 1.0}, fams),
                                risk="presence", weight=3)
    res = {"exact_matches": _res("exact_matches", exact)}
    _, v = assess(res)
    presence = next(r for r in v.risks if r["risk"] == "presence")
    assert presence["level"] == "inconclusive" and "near1" in presence["unassessed"]
    assert "copies with one cell changed (no test of this run sees it)" in presence["summary"]
    assert v.level == "inconclusive"  # nothing could see one-cell copies
    near = Evidence.from_flags("near copy", _scored(2000, 2000, 1, 1, rng,
                                                    {"near1": 1.0, "exact": 1.0}, fams),
                               risk="presence")
    res["near_copies"] = _res("near_copies", near)
    _, v = assess(res)
    assert v.level == "low", v.summary
    presence = next(r for r in v.risks if r["risk"] == "presence")
    assert presence["bound"] < 0.01 and not presence["unassessed"]
    assert set(presence["detection_limits"]) == set(fams)


def test_a_family_few_leak_rows_would_show_is_not_ruled_out():
    """A test that only one in ten leaked records would move cannot rule a 1 % leak out."""
    rng = np.random.default_rng(1)
    ev = Evidence.from_flags("near copy", _scored(2000, 2000, 0, 0, rng, {"exact": 0.1}),
                             risk="presence")
    assert ev.upper < 0.01
    _, v = assess({"near_copies": _res("near_copies", ev)})
    presence = next(r for r in v.risks if r["risk"] == "presence")
    assert v.level == "inconclusive" and presence["bound"] >= 0.01
    assert presence["bound_by"] == "exact copies"
    assert "not 1.0 %" in presence["summary"]


def test_every_number_under_a_low_risk_is_below_the_materiality():
    """A test whose interval reaches above the materiality keeps its risk from reading low."""
    rng = np.random.default_rng(4)
    copies = Evidence.from_flags("exact copy", _scored(2000, 2000, 0, 0, rng, {"exact": 1.0}),
                                 risk="presence", weight=3)
    wide = Evidence.from_counts("attack succeeds", 3, 150, 2, 150)  # no excess, a wide interval
    wide = Evidence(**{**wide.__dict__, "risk": "presence"})
    _, v = assess({"exact_matches": _res("exact_matches", copies),
                   "membership_attacks": _res("membership_attacks", wide, "attacks")})
    presence = next(r for r in v.risks if r["risk"] == "presence")
    assert presence["level"] == "inconclusive" and presence["bound_by"] == "membership_attacks"
    assert presence["bound"] == pytest.approx(wide.upper)
    assert "membership_attacks (its interval reaches" in presence["summary"]


def test_the_interval_beside_a_test_ends_at_the_bound_the_low_risk_uses():
    """A test's printed interval is its two one-sided bounds: where a two-sided 95 % interval
    would reach past the materiality (5.3 % at 5.1 %) while the one-sided bound (4.5 %) rules the
    leak out, the risk reads low, its test reads low, and no interval printed under it reaches
    the materiality (before: the risk low, its test inconclusive, 'interval -4.0 % to 5.3 %')."""
    from synthguard.run.verdict import RiskRule
    from synthguard.stats import difference_ci

    m = 0.051
    guess = Evidence.from_counts("secret guessed", 521, 800, 516, 800)
    assert guess.effect_ci[1] == guess.upper < m < difference_ci(521, 800, 516, 800, 0.95)["ci"][1]
    guess = Evidence(**{**guess.__dict__, "risk": "presence"})
    rng = np.random.default_rng(6)
    copies = Evidence.from_flags("exact copy", _scored(2000, 2000, 0, 0, rng, {"exact": 1.0}),
                                 risk="presence", weight=3)
    _, v = assess({"exact_matches": _res("exact_matches", copies),
                   "membership_attacks": _res("membership_attacks", guess, "attacks")},
                  RiskRule(materiality=m))
    presence = next(r for r in v.risks if r["risk"] == "presence")
    assert presence["level"] == "low", presence["summary"]
    shown = {t["metric"]: (t["level"], t["effect_ci"][1]) for t in v.tests}
    assert all(level == "low" and hi < m for level, hi in shown.values()), shown
    assert presence["effect_ci"][1] < m


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


def test_copies_count_under_every_criterion_and_every_assessed_risk_must_be_low():
    rng = np.random.default_rng(2)
    fams = ("exact", "near1")
    quiet = Evidence.from_flags("exact copy", _scored(3000, 3000, 0, 0, rng,
                                                      {"exact": 1.0, "near1": 1.0}, fams),
                                risk="presence", weight=3)
    _, v = assess({"exact_matches": _res("exact_matches", quiet)})
    levels = {r["risk"]: r["level"] for r in v.risks}
    # exact_matches' card: a copy singles out, links and exposes attributes as well
    assert levels == {"presence": "low", "singling_out": "low", "linkability": "low",
                      "inference": "low"}, v.summary
    assert v.level == "low"
    link = Evidence.from_counts("linked", 30, 300, 28, 300)  # no excess, a wide interval
    link = Evidence(**{**link.__dict__, "risk": "linkability"})
    _, v = assess({"exact_matches": _res("exact_matches", quiet),
                   "linkability": _res("linkability", link, "anonymeter")})
    levels = {r["risk"]: r["level"] for r in v.risks}
    assert levels["presence"] == "low" and levels["linkability"] == "inconclusive"
    assert v.level == "inconclusive"
    loud = Evidence.from_counts("linked", 90, 300, 20, 300)
    loud = Evidence(**{**loud.__dict__, "risk": "linkability"})
    _, v = assess({"exact_matches": _res("exact_matches", quiet),
                   "linkability": _res("linkability", loud, "anonymeter")})
    assert v.level == "high" and v.driver == "linkability"
    copied = Evidence.from_flags("exact copy", _scored(3000, 3000, 900, 0, rng, {"exact": 1.0}, fams),
                                 risk="presence", weight=3)
    _, v = assess({"exact_matches": _res("exact_matches", copied)})
    assert {r["risk"]: r["level"] for r in v.risks} == dict.fromkeys(
        ("presence", "singling_out", "linkability", "inference"), "high")


def test_injected_detection_limit_has_its_power():
    """A leak of 1.5 x the stated limit is detected in at least 80 % of fresh simulations."""
    rng = np.random.default_rng(6)
    n = 1000
    scores = (rng.random(2 * n) < 0.01).astype(float)
    visible = np.flatnonzero(rng.random(n) < 0.8)  # a leak row of these records flags them
    resp = LeakResponse(np.arange(n), visible, visible, np.ones(visible.size))
    test = InjectionTest("copies", scores, None, n, 0.05, ("presence",), {"exact": resp})
    k = family_limits([test], "exact", ["presence"], materiality=0.01, reps=60, seed=0)["presence"]["k"]
    assert k is not None and 5 <= k <= 100
    hits = 0
    sims = 300
    for _ in range(sims):
        m = rng.random(n) < 0.01
        c = rng.random(n) < 0.01
        leak = rng.choice(n, int(1.5 * k), replace=False)
        m[np.intersect1d(leak, visible)] = True
        hits += fisher_greater(int(m.sum()), n, int(c.sum()), n) <= 0.05
    assert hits / sims >= 0.8


def test_verdict_states_detection_limits_per_family():
    rng = np.random.default_rng(7)
    n = 1500
    fams = ("exact", "rare", "near1")
    exact = Evidence.from_flags("exact", _scored(n, n, 0, 0, rng, {"exact": 1.0, "rare": 1.0}, fams),
                                risk="presence", weight=3)
    near = Evidence.from_flags("near", _scored(n, n, 0, 3, rng, dict.fromkeys(fams, 1.0), fams),
                               risk="presence")
    res = {"exact_matches": _res("exact_matches", exact), "near_copies": _res("near_copies", near)}
    _, v = assess(res, seed=3)
    d = v.to_dict()
    assert set(d["detection_limits"]) == set(fams)
    for t, lim in d["detection_limits"].items():
        assert 0 < lim["value"] < 0.01, (t, lim)
        assert "leak rows built from training records put into the release" in lim["text"]
    assert d["detection_limit"]["value"] == max(x["value"] for x in d["detection_limits"].values())
    assert assess(res, seed=3)[1].to_dict() == d  # seeded: same verdict, same bytes


@pytest.mark.parametrize("cores", [2, 3])
def test_detection_limits_of_families_in_threads_equal_one_family_at_a_time(monkeypatch, cores):
    """The verdict measures the families' detection limits in threads (one per core): the verdict
    is the same, byte for byte, as measuring them one family after another."""
    import json

    import synthguard.engine.parallel as parallel

    rng = np.random.default_rng(11)
    n = 1200
    fams = ("exact", "rare", "near1", "near2")
    exact = Evidence.from_flags("exact", _scored(n, n, 0, 0, rng, {"exact": 1.0, "rare": 1.0}, fams),
                                risk="presence", weight=3)
    near = Evidence.from_flags("near", _scored(n, n, 2, 3, rng, dict.fromkeys(fams, 1.0), fams),
                               risk="presence")
    res = {"exact_matches": _res("exact_matches", exact), "near_copies": _res("near_copies", near)}
    monkeypatch.setattr(parallel, "default_jobs", lambda: 1)
    one_at_a_time = json.dumps(assess(res, seed=5)[1].to_dict(), sort_keys=True, default=str)
    monkeypatch.setattr(parallel, "default_jobs", lambda: cores)
    threaded = json.dumps(assess(res, seed=5)[1].to_dict(), sort_keys=True, default=str)
    assert threaded == one_at_a_time
    assert len(json.loads(threaded)["detection_limits"]) == len(fams)


def _one_family_run(n, family, sources, seen, name="exact_matches", seed=3):
    """``n`` training and ``n`` control records, no excess; one test that sees every exact copy and
    the leak rows of ``family`` built from ``sources`` whose own records are in ``seen``."""
    src = np.arange(n)
    leaks = {"exact": LeakResponse(src, src, src, np.ones(n)),
             family: LeakResponse(sources, seen, seen, np.ones(seen.size))}
    flags = RecordFlags.from_scores(np.zeros(n), np.zeros(n), leaks=leaks,
                                    families={f: (None if f in ("exact", family) else "n/a")
                                              for f in LEAK_FAMILIES},
                                    eligible={"exact": n, family: int(sources.size)})
    ev = Evidence.from_flags("copy", flags, risk="presence", weight=3)
    _, v = assess({name: _res(name, ev)}, seed=seed)
    return v, next(r for r in v.risks if r["risk"] == "presence")


def _rare_run(n_rare, visible, seed=3):
    """2,000 records a side and ``n_rare`` of them rare (unique on their quasi-identifiers), of
    whose copies the test sees one in ``visible``."""
    rare = np.sort(np.random.default_rng(seed).choice(2000, n_rare, replace=False))
    return _one_family_run(2000, "rare", rare, rare[::visible])


def test_a_family_that_too_few_records_can_leak_cannot_hold_a_risk_up():
    """15 rare records of 2,000 (0.75 %) cannot leak 1 %: the family is ruled out by the data
    however little the tests see of it, and the risk reads low; 40 of them (2 %) could, and a
    test that sees one copy in ten leaves the family unassessed."""
    v, presence = _rare_run(15, 10)
    rare = presence["detection_limits"]["rare"]
    assert rare["ceiling"] is True and rare["eligible"] == 15 and rare["k"] is None
    assert rare["value"] == pytest.approx(15 / 2000)
    assert presence["level"] == "low" and not presence["unassessed"], presence["summary"]
    assert "only 15 of the 2,000 training records can leak this way" in rare["text"]
    assert "cannot reach the materiality" in v.detection_limit["text"]
    v, presence = _rare_run(40, 10)
    rare = presence["detection_limits"]["rare"]
    assert "ceiling" not in rare and rare["eligible"] == 40 and rare["value"] is None
    assert presence["level"] == "inconclusive" and list(presence["unassessed"]) == ["rare"]


def test_a_measured_limit_is_kept_when_the_family_is_small():
    """A family the tests read high below its ceiling states the measured limit, not the ceiling."""
    _, presence = _rare_run(15, 1)
    rare = presence["detection_limits"]["rare"]
    assert "ceiling" not in rare and rare["k"] is not None and rare["k"] <= 15
    assert presence["level"] == "low"


def test_a_family_the_tests_see_in_part_is_settled_by_the_records_its_advice_names():
    """4,000 records a side, a test that sees every exact copy but one near1 copy in twenty: near1
    reads high only from about 3 %, so the risk is inconclusive; a leak of the family reads high
    once the test is significant and the leak its interval allows (upper end over the visible
    share) reaches 1 %, both of which come with more records, so the advice names a record count,
    and with that many records the same visibility reads low."""
    import re

    def run(n):
        src = np.arange(n)
        return _one_family_run(n, "near1", src, src[np.random.default_rng(7).random(n) < 0.05],
                               name="near_copies")[1]

    presence = run(4000)
    assert presence["level"] == "inconclusive" and presence["bound_by"] == "copies with one cell changed"
    assert presence["bound"] > 0.02
    need = int(re.search(r"up to about ([\d,]+) control and as many training records \(now 4,000\)",
                         presence["settle"]).group(1).replace(",", ""))
    settled = run(need)
    assert settled["level"] == "low" and settled["bound"] < 0.01


def test_a_risk_names_its_tests_that_could_not_run_and_only_those():
    # a test of the run unavailable here (a cluster, a missing package) or failed is named under
    # the risks its card answers for; the others name none
    from synthguard.run.config import is_registered

    plugin = is_registered("rare_qi_echo")  # loads the installed plugins' cards, as a run does
    rng = np.random.default_rng(3)
    res = {"exact_matches": _res("exact_matches", Evidence.from_flags(
        "has a copy", _flags(1000, 1000, 0, 0, rng), sees=("exact",), risk="presence"))}
    _, verdict = assess(res, seed=0, not_run={
        "rare_qi_echo": "not available in a distributed run",
        "near_copies": "failed: ValueError: boom"})
    rows = {r["risk"]: r for r in verdict.to_dict()["risks"]}
    assert rows["presence"]["not_run"] == ["near_copies (failed: ValueError: boom)"]
    assert rows["presence"]["summary"].endswith("; did not run: near_copies (failed: ValueError: boom)")
    # the example plugin's test answers for singling out only (when installed: a card to read)
    echo = [r for r, row in rows.items() if "rare_qi_echo" in str(row.get("not_run"))]
    assert echo == (["singling_out"] if plugin else [])
    _, alone = assess(res, seed=0)
    assert all("not_run" not in r for r in alone.to_dict()["risks"])


def _half_seen_alarm(materiality):
    """2,000 records a side; one copy test flags 80 training and 40 control records (an excess of
    2 %) and sees one one-cell copy in two (its leak rows flag their own record for half of them)."""
    from synthguard.run.verdict import RiskRule

    n = 2000
    src = np.arange(n)
    half = src[np.random.default_rng(5).random(n) < 0.5]
    m, c = np.zeros(n), np.zeros(n)
    m[:80], c[:40] = 1.0, 1.0
    leaks = {"near1": LeakResponse(src, half, half, np.ones(half.size))}
    flags = RecordFlags.from_scores(m, c, leaks=leaks,
                                    families={f: (None if f == "near1" else "n/a")
                                              for f in LEAK_FAMILIES})
    ev = Evidence.from_flags("copy", flags, risk="presence", weight=3)
    out, v = assess({"near_copies": _res("near_copies", ev)}, RiskRule(materiality=materiality))
    return out["near_copies"].evidence, next(r for r in v.risks if r["risk"] == "presence"), v


def test_an_excess_from_a_test_that_sees_half_a_family_reads_high_when_a_material_leak_fits_it():
    """An excess of 2 % (interval up to about 3.2 %) from a test that sees half of the family's
    leak rows is consistent with a leak of up to about 6.4 %: at materiality 5 % the risk reads
    ``high`` (not ``medium``, "below the materiality"), its sentence naming the visible share; the
    test's own level stays ``medium`` (its interval is below 5 %)."""
    ev, presence, verdict = _half_seen_alarm(0.05)
    assert ev.level == "medium" and ev.effect_ci[1] < 0.05
    part = presence["partial"]
    assert part["family"] == "near1" and part["metric"] == "near_copies"
    assert 0.45 < part["visible"] < 0.55 and part["upper"] == ev.effect_ci[1]
    assert part["consistent"] == pytest.approx(ev.effect_ci[1] / part["visible"]) and part["consistent"] >= 0.05
    assert presence["level"] == "high" and verdict.level == "high"
    assert "not ruled out below the materiality 5.0 %" in presence["summary"]
    assert [d.metric for d in verdict.drivers] == ["near_copies"]
    assert "a leak of the materiality (5.0 %) is not ruled out" in verdict.summary


def test_an_excess_consistent_only_with_leaks_below_the_materiality_stays_medium_and_says_how_large():
    """The same release at materiality 10 %: a leak of up to about 6.4 % fits the excess, below
    10 %: ``medium``, with that number in its sentence and JSON."""
    ev, presence, verdict = _half_seen_alarm(0.10)
    assert presence["level"] == "medium" == verdict.level
    assert presence["partial"]["consistent"] < 0.10
    assert "below the materiality 10.0 %" in presence["summary"]


def _mixed_run(rng):
    """Presence, singling out and inference quiet (an exact-copy test that finds none), linkability
    alarming (a loud linkage test)."""
    fams = ("exact", "near1")
    quiet = Evidence.from_flags("exact copy", _scored(2000, 2000, 0, 0, rng,
                                                      {"exact": 1.0, "near1": 1.0}, fams),
                                risk="presence", weight=3)
    loud = Evidence.from_counts("linked", 90, 300, 20, 300)
    loud = Evidence(**{**loud.__dict__, "risk": "linkability"})
    return {"exact_matches": _res("exact_matches", quiet),
            "linkability": _res("linkability", loud, "anonymeter")}


def test_a_levels_only_verdict_reads_every_level_of_the_full_one_and_measures_limits_only_where_they_decide_one(
        monkeypatch):
    """A re-test's verdict (``levels_only``) measures detection limits only for the risks no test
    alarms under: their rows are the full verdict's, byte for byte; an alarming risk's row states
    no limit and no family unassessed; every level is the full verdict's."""
    import synthguard.run.limits as limits_mod

    res = _mixed_run(np.random.default_rng(4))
    _, full = assess(res, seed=2)
    asked = []
    real = limits_mod.family_limits

    def spy(tests, family, risks, **kw):
        asked.append(tuple(risks))
        return real(tests, family, risks, **kw)

    monkeypatch.setattr(limits_mod, "family_limits", spy)
    _, fast = assess(res, seed=2, levels_only=True)
    full_rows = {r["risk"]: r for r in full.risks}
    fast_rows = {r["risk"]: r for r in fast.risks}
    assert {r: x["level"] for r, x in fast_rows.items()} == {r: x["level"] for r, x in full_rows.items()}
    assert full_rows["linkability"]["level"] == "high"
    assert full_rows["linkability"]["detection_limits"]  # the full verdict measures it
    assert [(t["metric"], t["level"]) for t in fast.tests] == [(t["metric"], t["level"]) for t in full.tests]
    assert fast.level == full.level == "high"
    for risk in ("presence", "singling_out", "inference"):
        assert fast_rows[risk] == full_rows[risk], risk
    link = fast_rows["linkability"]
    assert link["detection_limits"] == {} and not link["unassessed"]
    assert link["summary"] == full_rows["linkability"]["summary"]
    assert asked and all("linkability" not in r and "any" not in r for r in asked)


def test_a_levels_only_verdict_where_every_risk_alarms_measures_no_limit(monkeypatch):
    import synthguard.run.limits as limits_mod

    rng = np.random.default_rng(2)
    copied = Evidence.from_flags("exact copy", _scored(3000, 3000, 900, 0, rng, {"exact": 1.0},
                                                       ("exact", "near1")), risk="presence", weight=3)
    res = {"exact_matches": _res("exact_matches", copied)}
    _, full = assess(res)
    monkeypatch.setattr(limits_mod, "family_limits", lambda *a, **k: pytest.fail("measured a limit"))
    _, fast = assess(res, levels_only=True)
    assert [r["level"] for r in fast.risks] == [r["level"] for r in full.risks] == ["high"] * 4


def test_an_anonymised_release_names_its_anonymity_tests_when_they_are_skipped():
    """``release_type`` anonymised: k-anonymity and l-diversity are its own tests; skipped for want
    of declared quasi-identifiers, the singling-out and inference rows say so (before: the metric
    table alone did, and the decision read as a synthetic release's). A synthetic release's
    verdict does not name them (they are informative there)."""
    import pandas as pd

    import synthguard

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.integers(0, 9, 300), "b": rng.choice(list("xyz"), 300)})
    kw = dict(control=frame.iloc[200:], metrics=["exact_matches", "k_anonymity", "l_diversity"],
              retest_rows=0, retest_columns=0)
    anon = synthguard.evaluate(frame.iloc[:100], frame.iloc[100:200], release_type="anonymised", **kw)
    rows = {r["risk"]: r for r in anon.verdict.to_dict()["risks"]}
    assert any(x.startswith("k_anonymity (no key columns") for x in rows["singling_out"]["not_run"])
    assert any(x.startswith("l_diversity (no key columns") for x in rows["inference"]["not_run"])
    synth = synthguard.evaluate(frame.iloc[:100], frame.iloc[100:200], **kw)
    assert all("not_run" not in r for r in synth.verdict.to_dict()["risks"])
