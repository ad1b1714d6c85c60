"""Words against numbers over every report of the calibration suite.

Every evaluation of the calibration tests goes through ``_suite.evaluate``, which checks its report
with ``_suite.consistency``: a risk read low has every verdict-driving test under it bounded below
the materiality (one-sided upper bound) and every leak family it answers for with a limit below
it; a risk's bound is the largest of those numbers; the verdict's summary, each risk's summary
and the dossier state the bound the numbers give. The test over all of them runs last
(``conftest.py``); run alone, it produces a few reports of its own first.
"""

from __future__ import annotations

import copy

import pytest

from synthguard.core.format import pct

from . import _suite as S

pytestmark = pytest.mark.slow

#: reports the test makes when it runs alone: a low, an inconclusive and a high verdict
OWN = [("nhefs", "n800", 0, "fresh", None, 0.05),
       ("acs12", "equal", 0, "fresh", None, 0.01),
       ("anes96", "standard", 0, "exact", 0.05, 0.01)]


class _Doctored:
    """A report whose verdict (as a dict) and dossier are given: for the check's own test."""

    def __init__(self, rep, verdict: dict, dossier: str) -> None:
        self._rep, self._v, self._d = rep, verdict, dossier
        self.verdict = self

    def to_dict(self) -> dict:
        return self._v

    def to_dossier(self) -> str:
        return self._d

    def result(self, name: str):
        return self._rep.result(name)


def test_the_consistency_check_finds_words_that_say_more_than_the_numbers():
    """The check can fail: a low risk with a test bounded above the materiality, an interval
    printed beside it reaching the materiality, a test under it not read low, a bound that is not
    the largest number under it, a summary stating another bound, a medium risk whose excess a
    material leak fits, are each found."""
    name, split, seed, kind, share, m = OWN[0]
    p = S.parts(name, split, seed)
    rep = S.evaluate("consistency/own", p["original"], p["fresh"], p["control"],
                     metadata=S.META[name], metrics=list(S.FAMILY_TESTS), seed=seed, materiality=m)
    v, dossier = rep.verdict.to_dict(), rep.to_dossier()
    assert S.consistency(rep) == []
    low = next(i for i, r in enumerate(v["risks"]) if r["level"] == "low")
    risk = v["risks"][low]

    raised = copy.deepcopy(v)  # a family's limit above the materiality under a low risk
    fam = next(iter(raised["risks"][low]["detection_limits"]))
    raised["risks"][low]["detection_limits"][fam]["value"] = 2 * m
    assert any("not ruled out" in x for x in S.consistency(_Doctored(rep, raised, dossier)))

    moved = copy.deepcopy(v)  # a bound that is not the largest number under the risk
    moved["risks"][low]["bound"] = risk["bound"] / 2
    assert any("not the largest" in x for x in S.consistency(_Doctored(rep, moved, dossier)))

    reworded = copy.deepcopy(v)  # a summary that states another bound
    reworded["risks"][low]["summary"] = risk["summary"].replace(pct(risk["bound"]), "0.1 %")
    assert any("summary does not state" in x for x in
               S.consistency(_Doctored(rep, reworded, dossier)))

    medium = copy.deepcopy(v)  # a medium risk whose excess a material leak fits
    medium["risks"][low].update(level="medium", partial={
        "family": "near2", "metric": risk["tests"][0], "visible": 0.5, "upper": m,
        "consistent": 2 * m})
    assert any("medium although a leak" in x for x in S.consistency(_Doctored(rep, medium, dossier)))
    assert any("does not state the leak" in x for x in S.consistency(_Doctored(rep, medium, dossier)))

    shown = copy.deepcopy(v)  # an interval printed beside a low risk's test reaching past m
    row = next(t for t in shown["tests"] if t["metric"] == risk["tests"][0])
    row["effect_ci"] = [row["effect_ci"][0], 1.2 * m]
    assert any("beside intervals reaching" in x for x in S.consistency(_Doctored(rep, shown, dossier)))

    unsure = copy.deepcopy(v)  # a test under a low risk that does not read low itself
    next(t for t in unsure["tests"] if t["metric"] == risk["tests"][0])["level"] = "inconclusive"
    assert any("not read low" in x for x in S.consistency(_Doctored(rep, unsure, dossier)))

    loose = copy.deepcopy(v)  # a low risk whose test is bounded above the materiality
    test = loose["risks"][low]["tests"][0]
    real = rep.result(test)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(type(real.evidence), "upper", property(lambda self: 2 * m))
        assert any("bounded at or above" in x for x in S.consistency(_Doctored(rep, loose, dossier)))


def test_every_report_of_the_calibration_suite_states_its_bounds():
    if len(S.REPORTS) < 10:  # run alone: make a few reports (a full run has made dozens)
        for name, split, seed, kind, share, m in OWN:
            S.run(name, split, seed, kind, share, metrics="families", materiality=m)
    bad = [(r["label"], r["violations"]) for r in S.REPORTS if r["violations"]]
    lows = sum(lv == "low" for r in S.REPORTS for lv in r["risks"].values())
    assert not bad, bad
    assert lows >= 1, "no report read low on any risk: the check of low risks was not exercised"
