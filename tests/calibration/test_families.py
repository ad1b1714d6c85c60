"""No false all-clear, and limits that hold (issue #29): for every leak family, a leak of twice the
materiality never makes a risk that answers for it read low, and a leak of 1.5 times the detection
limit the run states for it reads high.

Releases come from :func:`synthguard.calibration.family_release`, which builds leak rows with the
row builders a run uses to measure its own limits (``test_builders.py`` proves they are the same
rows), into fresh real rows, with the ground truth. Runs use the tests that state their responses
to the families (``_suite.FAMILY_TESTS``) and are cached in ``_suite`` (each release evaluated
once). The full table (the whole privacy preset, 5 tables x 6 seeds, sizes 1 % and 5 % and 1.5x the
limit) is ``benchmarks/calibration.py``; its figures are in ``docs/calibration.md``.
"""

from __future__ import annotations

import math

import pytest

from synthguard.calibration import FAMILY_KINDS
from synthguard.run.verdict import RISK_FAMILIES

from . import _suite as S

pytestmark = pytest.mark.slow

#: 1.5x the stated limit: the two small tables (the benchmark: all five, 6 seeds)
LIMIT_TABLES = ("anes96", "diabetes_raw")
LIMIT_SEEDS = (0, 1, 2)
#: twice the materiality: nhefs at materiality 5 %, where fresh releases read low on singling out
#: and linkability, so a false low could happen there (hhs_breaches, used before, no longer reads
#: low: its near2 limit is 5.45 %)
LOW_TABLE, LOW_MATERIALITY = "nhefs", 0.05


def _at_least(share: float, n: int) -> int:
    return math.ceil(share * n - 1e-9)


def _lows(run: dict, family: str) -> list[str]:
    """The risks that answer for ``family`` and read low."""
    return [r["risk"] for r in run["verdict"]["risks"]
            if r["level"] == "low" and family in RISK_FAMILIES[r["risk"]]]


# -------------------------------------------------------------------------- never a false low
def test_a_low_is_reachable_where_the_never_low_tests_look():
    """The fresh release of the table the next test uses reads low on some risk: a false low
    could show there (else the next test could not fail)."""
    r = S.run(LOW_TABLE, "standard", 0, "fresh", metrics="families", materiality=LOW_MATERIALITY)
    assert {"singling_out", "linkability"} & {x["risk"] for x in r["verdict"]["risks"]
                                               if x["level"] == "low"}, r["verdict"]["risks"]


@pytest.mark.parametrize("family", FAMILY_KINDS)
def test_a_leak_of_twice_the_materiality_never_reads_low(family):
    r = S.run(LOW_TABLE, "standard", 0, family, 2 * LOW_MATERIALITY, metrics="families",
              materiality=LOW_MATERIALITY)
    assert r["leak_share"] >= 2 * LOW_MATERIALITY - 1 / r["n_original"], r["leak_share"]
    assert _lows(r, family) == [], (family, r["leak_share"], _lows(r, family))


@pytest.mark.parametrize("kind", ["smote", "mixture"])
def test_generator_like_releases_never_read_low(kind):
    """A SMOTE-like release and an overfit mixture (n/5 components) leak no single family; every
    release row is drawn from training records."""
    r = S.run("anes96", "standard", 0, kind, metrics="families")
    assert r["level"] != "low", r["verdict"]["summary"]


def test_person_copies_never_read_low():
    r = S.person_run(0, 0.05)
    assert r["leak_share"] >= 0.01 and r["level"] != "low", r["verdict"]["summary"]


# ------------------------------------------------------------- 1.5 x the stated detection limit
@pytest.mark.parametrize("family", FAMILY_KINDS)
def test_a_leak_of_one_and_a_half_times_the_stated_limit_reads_high(family):
    """Each seed's fresh release states a detection limit for the family; a leak of the family of
    1.5 x that limit, on the same split, reads high in >= 80 % of runs (2 tables x 3 seeds)."""
    levels = []
    for d in LIMIT_TABLES:
        for s in LIMIT_SEEDS:
            fresh = S.run(d, "standard", s, "fresh", metrics="families")
            share = S.times_limit(fresh, family)
            r = S.run(d, "standard", s, family, share, metrics="families")
            # every leak row built (rare, linkage: clipped to the family's candidates)
            assert r["leak_share"] == pytest.approx(share) or r["family"] in ("rare", "linkage")
            levels.append((d, s, round(S.limit(fresh, family), 4), round(r["leak_share"], 4),
                           r["level"]))
    highs = sum(lv == "high" for *_, lv in levels)
    assert highs >= _at_least(0.8, len(levels)), levels


def test_person_leak_of_one_and_a_half_times_the_stated_limit_reads_high():
    """Whole persons of the anes96 panel, 1.5 x the person limit each seed's null run states
    (2 seeds; the benchmark: 6)."""
    levels = []
    for s in (0, 1):
        null = S.person_run(s, None)
        r = S.person_run(s, S.times_limit(null, "person"))
        levels.append((s, round(S.limit(null, "person"), 4), round(r["leak_share"], 4), r["level"]))
    assert sum(lv == "high" for *_, lv in levels) >= _at_least(0.8, len(levels)), levels


def test_text_leak_of_one_and_a_half_times_the_stated_limit_reads_high():
    null = S.text_run(0, None)
    r = S.text_run(0, S.times_limit(null, "text"))
    assert r["level"] == "high", (S.limit(null, "text"), r["leak_share"], r["level"])


# ---------------------------------------------------------------------------- persons and text
def test_text_release_with_near_verbatim_training_documents_reads_high():
    """Test reviews plus 5 % of the training reviews, each with one word changed."""
    leaky = S.text_run(0, 0.05)
    assert leaky["leak_share"] == pytest.approx(0.05) and leaky["family"] == "text"
    assert leaky["level"] == "high", (leaky["level"], leaky["levels"])


def test_person_and_text_nulls_raise_no_alarm():
    runs = [S.person_run(s, None) for s in (0, 1)] + [S.text_run(0, None)]
    alarms = [(r["dataset"], r["seed"], r["level"]) for r in runs if r["level"] in S.ALARMS]
    assert len(alarms) <= 1, alarms
    assert all(r["leak_share"] == 0 for r in runs)


# --------------------------------------------------------- a family the tables cannot hold at m
#: acs12's quasi-identifiers without age: 4 of 800 training records are unique on them (seed 0)
COARSE_ROLES = {"quasi_identifiers": ["race", "edu", "gender", "married"],
                "sensitive": ["employment", "disability"]}


def test_a_family_fewer_records_can_leak_than_the_materiality_is_ruled_out_by_its_ceiling():
    """On real data where only 4 of 800 training records are unique on the declared
    quasi-identifiers, copies of rare records and linkage rows can leak at most 0.5 %: both
    families state that ceiling (the most the family's own builder can put into a release) and no
    risk holds them unassessed; a release of every such record leaks exactly that much."""
    from synthguard.calibration import family_release

    p = S.parts("acs12", "standard", 0)
    n = len(p["original"])
    everything = family_release("rare", p, 1.0, 0, metadata=COARSE_ROLES, clip=True)
    assert everything.n_leaked == 4 and everything.share == pytest.approx(4 / n)
    rep = S.evaluate("acs12/standard/s0/fresh/coarse-roles", p["original"], p["fresh"],
                     p["control"], metadata=COARSE_ROLES, metrics=list(S.FAMILY_TESTS), seed=0)
    for r in rep.verdict.to_dict()["risks"]:
        for fam in ("rare", "linkage"):
            lim = r["detection_limits"][fam]
            assert lim["eligible"] == 4 and lim["ceiling"] is True, (r["risk"], lim)
            assert lim["value"] == pytest.approx(4 / n) and "no leak of this family can reach it" in lim["text"]
            assert fam not in r["unassessed"], (r["risk"], r["unassessed"])
    assert S.consistency(rep) == []
    said = "copies of rare records cannot reach the materiality (only 4 training records"
    for where, text in (("console", rep.to_console(width=10_000)), ("html", rep.to_html()),
                        ("dossier", rep.to_dossier())):
        assert said in text, where
