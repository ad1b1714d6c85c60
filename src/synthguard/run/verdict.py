"""One verdict from many privacy tests: calibrated risk levels per risk against real people the generator
never saw.

Every privacy metric that can states its :class:`~synthguard.core.results.Evidence`: the statistic on
training rows (members), the same statistic on control rows (non-members) or a null value, the
excess (effect) with its interval, and a one-sided p-value. This module alone turns evidence into
levels and a verdict; metrics and report writers never decide them.

The calibrated rule (default, ``risk_rule="calibrated"``)
    1. **Tests.** Every driving test compares training records (members) with control records
       (non-members) under the same release. Tests that state per-record flags over every
       training and every control record (:class:`~synthguard.core.results.RecordFlags`) are tested
       *jointly*: the training/control labels are permuted over all of them at once
       (Westfall-Young step-down min-P, weighted), which keeps the family-wise false-alarm rate
       exact under exchangeability and, unlike Holm, does not pay twice for tests that flag the
       same records; tests with identical flags are collapsed into one. The remaining tests
       (paired singling-out probes, sampled linkability and inference targets, AUC attacks) and
       the joint block share ``alpha`` by weighted Holm, with weights fixed per metric before any
       data is seen (``exact_matches`` 3, ``near_copies``, ``closest_distance_mia`` and
       ``membership_attacks`` 2, others 1).
    2. **Level of a test** from its adjusted p-value and the *materiality* ``m`` (the share of
       training records exposed beyond chance that matters, default 1 %): ``high`` significant
       and a leak of ``m`` not ruled out; ``medium`` significant but ruled out below ``m``;
       ``low`` not significant and ruled out; ``inconclusive`` neither.
    3. **A level per risk**: presence of training records, singling out, linkability, attribute
       inference (each metric's card names the risk its test answers, and the further risks it
       counts under: a verbatim or identifying near copy counts under all four). A risk is high
       when one of its tests is, or when one is significant and, for a leak family it answers
       for, the upper end ``U`` of the interval of its test that sees the family best (chosen
       from the flags, before any excess is read) over that test's visible share ``v`` of the
       family reaches ``m`` (a leak of ``U / v`` fits the excess: ``partial``); medium when a
       test is significant and neither holds. Otherwise its **bound** is the largest excess the run
       rules out: the largest of its tests' one-sided upper bounds and of the detection limits of
       the leak families it answers for (:data:`RISK_FAMILIES`, those that apply to the tables).
       The risk is ``low`` only when the bound is below the materiality and no family it answers
       for is unassessed (no test of the run responds to it); else ``inconclusive``, with the bound
       reached, what holds it up and what would settle it. A family that fewer training records
       than the materiality's share can leak (copies of records unique on their
       quasi-identifiers, when there are that few) is bounded by that share, its ceiling.
    4. **The verdict** is the highest level among the assessed risks; ``low`` only when every
       assessed risk is low.
    5. **Detection limits** are measured per leak family and risk in the data
       (:mod:`synthguard.run.limits`): leak rows built from the run's own training records
       (:mod:`synthguard.data.leaks`) are put into the release and the tests re-run, from each
       test's measured responses; bisection on the number of leaked records gives the smallest
       leak read ``high`` with 80 % power. The headline limit is the largest over the families.

    Privacy metrics without evidence keep their number and their reference level (in
    ``reference_level``) and read ``not assessed``: they inform, they do not drive the verdict.

The reference rule (``risk_rule="reference"``)
    Levels from the metrics' fixed cut-offs (SynEval's 5 % copies, anonymeter's 0.3/0.5, ...);
    the verdict is the worst of them. Kept for parity with those tools, not recommended.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..core.report_model import HeadlineLimit, LeakLimit, RiskRow, TestRow
from ..core.results import LEAK_FAMILIES, RISKS, Evidence, MetricResult, to_jsonable
from ..data.leaks import FAMILY_NAMES
from ..errors import ConfigError
from ..stats import holm_adjust, make_rng

__all__ = ["RiskRule", "Verdict", "assess", "level_of", "RULES", "RELEASE_TYPES", "LEVEL_ORDER",
           "NON_PRIVACY_FAMILIES", "fails", "card_risk", "RISK_TITLES", "with_sample"]

RULES = ("calibrated", "reference")
RELEASE_TYPES = ("synthetic", "anonymised")
LEVEL_ORDER = {"high": 4, "medium": 3, "inconclusive": 2, "low": 1}
# families whose levels speak about quality, not about exposure of people
NON_PRIVACY_FAMILIES = frozenset({"fidelity", "utility", "distortion", "quality", "diversity"})
# ties at the worst level of the reference rule go to attacks first
FAMILY_PRIORITY = ("anonymeter", "attacks", "privacy", "disclosure", "text")


@dataclass(frozen=True)
class RiskRule:
    """How levels and the verdict are decided.

    Parameters
    ----------
    rule : {"calibrated", "reference"}
        ``"calibrated"``: tests against the control (see the module docstring);
        ``"reference"``: the reference tools' fixed cut-offs.
    materiality : float
        Share of training records exposed beyond chance that matters (default 0.01 = 1 %).
    alpha : float
        Family-wise false-alarm rate of the verdict (default 0.05).
    power : float
        Power at which the detection limit is stated (default 0.8).
    release_type : {"synthetic", "anonymised"}
        ``"anonymised"``: each release row stands for a real person, so k-anonymity,
        l-diversity and record linkage on the release itself drive the verdict.
    """

    rule: str = "calibrated"
    materiality: float = 0.01
    alpha: float = 0.05
    power: float = 0.8
    release_type: str = "synthetic"

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise ConfigError(f"risk_rule must be one of {list(RULES)}, got {self.rule!r}")
        if self.release_type not in RELEASE_TYPES:
            raise ConfigError(f"release_type must be one of {list(RELEASE_TYPES)}, got "
                              f"{self.release_type!r} (metadata key 'release_type' or --release-type)")
        for name, lo, hi in (("materiality", 0.0, 1.0), ("alpha", 0.0, 0.5), ("power", 0.0, 1.0)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo < float(v) < hi:
                raise ConfigError(f"{name} must be a number strictly between {lo} and {hi}, got {v!r}"
                                  + (" (e.g. 0.01 for 1 %)" if name == "materiality" else ""))

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "materiality": self.materiality, "alpha": self.alpha,
                "power": self.power, "release_type": self.release_type}


def risk_rule_of(run_config: Any, tables: Any = None,
                 overrides: Mapping[str, Any] | None = None) -> RiskRule:
    """The :class:`RiskRule` of a run, resolved in this one place: explicit arguments
    (``overrides``: ``rule`` / ``materiality`` / ``release_type`` / ``alpha``, ``None`` = not
    given), else the configuration's keys (``run_config.risk``), else the metadata's
    ``release_type`` (``tables.schema.extra``), else the defaults.

    Examples
    --------
    >>> from synthguard.run.config import build_config
    >>> risk_rule_of(build_config(["dcr"], None, None), None, {"materiality": 0.02}).materiality
    0.02
    """
    kw: dict[str, Any] = {}
    if tables is not None and tables.schema.extra.get("release_type") is not None:
        kw["release_type"] = tables.schema.extra["release_type"]
    for key, val in dict(run_config.risk or {}).items():
        kw["rule" if key == "risk_rule" else key] = val
    for key, val in dict(overrides or {}).items():
        if val is not None:
            kw[key] = val
    return RiskRule(**kw)


@dataclass(frozen=True)
class Verdict:
    """The one answer of a report: level, what drives it, and what the run could not have seen."""

    level: str
    rule: RiskRule
    summary: str
    drivers: tuple[TestRow | Mapping[str, Any], ...] = ()
    tests: tuple[TestRow, ...] = ()
    detection_limit: HeadlineLimit | None = None
    not_assessed: tuple[str, ...] = ()
    counts: Mapping[str, int] = field(default_factory=dict)
    risks: tuple[RiskRow, ...] = ()
    detection_limits: Mapping[str, LeakLimit] = field(default_factory=dict)

    def __repr__(self) -> str:
        levels = ", ".join(f"{r['risk']} {r['level']}" for r in self.risks)
        return f"<Verdict {self.level.upper()}" + (f": {levels}>" if levels else f" ({self.rule.rule})>")

    @property
    def unit(self) -> str:
        """What the tests count: ``"records"``, or ``"entities"`` when an entity key is given."""
        units = {t.get("unit") for t in self.tests} - {None}
        return "entities" if "entities" in units else "records"

    @property
    def driver(self) -> str | None:
        """Name of the first metric driving the verdict (``None`` when nothing does)."""
        return self.drivers[0]["metric"] if self.drivers else None

    def to_dict(self) -> dict[str, Any]:
        out = {"level": self.level, "summary": self.summary, "unit": self.unit}
        out.update(self.rule.to_dict())
        out.update({"correction": ("Westfall-Young min-P over record flags, weighted Holm across "
                                   "the rest") if self.rule.rule == "calibrated" else None,
                    "risks": list(self.risks), "detection_limits": dict(self.detection_limits),
                    "drivers": list(self.drivers), "detection_limit": self.detection_limit,
                    "tests": list(self.tests), "not_assessed": list(self.not_assessed),
                    "counts": dict(self.counts)})
        return to_jsonable(out)


def with_sample(verdict: Verdict, sample: Mapping[str, Any]) -> Verdict:
    """``verdict`` with its summary saying the tests ran on a sample (``max_records``,
    :func:`synthguard.run.wording.sample_line`)."""
    from .wording import sample_line

    return replace(verdict, summary=f"{verdict.summary}; {sample_line(sample)}")


def level_of(ev: Evidence, materiality: float, alpha: float) -> str:
    """Calibrated level of one test (uses the adjusted p-value when the verdict has set it)."""
    p = ev.p_adjusted if ev.p_adjusted is not None else ev.p_value
    if p is None or ev.effect is None or _nan(p) or _nan(ev.effect):
        return "inconclusive"
    hi = ev.upper  # the one-sided bound: the upper end of the interval printed beside the test
    ruled_out = not _nan(hi) and hi < materiality  # a material leak is excluded by the interval
    if p < alpha:
        return "medium" if ruled_out else "high"
    return "low" if ruled_out else "inconclusive"


def fails(verdict_level: str, fail_on: str | None) -> bool:
    """Whether ``verdict_level`` reaches ``fail_on`` (``high`` | ``medium`` | ``inconclusive``)."""
    if fail_on is None:
        return False
    order = {"low": 1, "inconclusive": 2, "medium": 3, "high": 4}
    if fail_on not in ("high", "medium", "inconclusive"):
        raise ConfigError(f"--fail-on must be high, medium or inconclusive, got {fail_on!r}")
    return order.get(verdict_level, 0) >= order[fail_on]


def _nan(x: Any) -> bool:
    try:
        return math.isnan(float(x))
    except (TypeError, ValueError):
        return True


def _is_privacy(res: MetricResult) -> bool:
    return res.family not in NON_PRIVACY_FAMILIES


def _pct(x: float | None) -> str:
    if x is None or _nan(x):
        return "n/a"
    v = 100.0 * float(x)
    return f"{v:.2g} %" if abs(v) < 1 else f"{v:.1f} %"


def _test_row(name: str, res: MetricResult, ev: Evidence) -> dict[str, Any]:
    return to_jsonable({"metric": name, "family": res.family, "level": ev.level,
                        "statistic": ev.statistic, "member": ev.member, "non_member": ev.non_member,
                        "n_member": ev.n_member, "n_non_member": ev.n_non_member,
                        "effect": ev.effect, "effect_ci": ev.effect_ci, "p_value": ev.p_value,
                        "p_adjusted": ev.p_adjusted, "test": ev.test, "baseline": ev.baseline,
                        "detection_limit": ev.detection_limit, "unit": ev.unit})


def card_risk(name: str | None) -> str | None:
    """The risk a metric's card says its test answers (``None``: no card, or not one of the four
    risks)."""
    from ..registry import info_of

    info = info_of(name)
    risk = info.risk if info is not None else None
    return risk if risk in RISKS else None


#: the risk of a result no card declares (a result built by hand), by family
FAMILY_RISK = {"privacy": "presence", "attacks": "presence", "text": "presence",
               "disclosure": "inference", "entity": "presence"}
RISK_TITLES = {
    "presence": ("Presence of training records",
                 "are training records, or near-copies of them, in the release beyond chance "
                 "(membership)?"),
    "singling_out": ("Singling out", "GDPR WP216 criterion 1: can the release isolate a training "
                                     "person?"),
    "linkability": ("Linkability", "GDPR WP216 criterion 2: can records of the same training "
                                   "person be linked through the release?"),
    "inference": ("Attribute inference", "GDPR WP216 criterion 3: can a training person's "
                                         "sensitive value be deduced from the release?"),
}
#: The leak families each risk answers for (when they apply to the run's tables): presence answers
#: for every way a training record can sit in the release; the WP216 criteria for the leaks that
#: identify a person or carry their attributes (copies, near-copies, rare records' copies, and
#: quasi-identifiers shown with the sensitive values).
RISK_FAMILIES = {
    "presence": LEAK_FAMILIES,
    "singling_out": ("exact", "rare", "near1", "near2", "linkage"),
    "linkability": ("exact", "rare", "near1", "near2", "linkage"),
    "inference": ("exact", "rare", "near1", "near2", "linkage"),
}


def assess(results: Mapping[str, MetricResult], rule: RiskRule | None = None, *,
           has_control: bool | None = None, seed: int | None = 0,
           metrics: Mapping[str, str] | None = None, n_perm: int = 1000,
           not_run: Mapping[str, str] | None = None,
           levels_only: bool = False) -> tuple[dict[str, MetricResult], Verdict]:
    """Set every privacy metric's risk level under ``rule`` and decide the verdict.

    Parameters
    ----------
    results : mapping
        Metric name -> result, as the metrics returned them (levels from their reference cut-offs).
    rule : RiskRule, optional
        Default: calibrated, materiality 1 %, alpha 5 %, synthetic release.
    has_control : bool, optional
        Whether a control table was given (only words the summary when no test could run).
    seed : int, optional
        Seed of the label permutations and of the injected leaks.
    metrics : mapping, optional
        Run name -> registered metric name (named runs), to find each test's risk.
    n_perm : int
        Label permutations of the joint test.
    not_run : mapping, optional
        Metrics of the run that could not run here or failed (run name -> why, in a few words):
        each risk names those of its tests (by their card) that did not run (``not_run``).
    levels_only : bool
        The verdict of a re-test (:mod:`synthguard.run.advice`), read for its levels, effects and
        tests: detection limits are measured only where they decide a level, for the risks none
        of whose tests alarms (low or inconclusive), and for the run as a whole only when no risk
        alarms. An alarming risk's row then states no limit (``detection_limits`` empty, nothing
        ``unassessed``, its ``bound`` its tests'); every level is the one a full verdict reads.

    Returns
    -------
    (dict, Verdict)
        The results with ``risk_level`` (and ``reference_level``, adjusted evidence) filled in,
        and the verdict.

    Examples
    --------
    >>> import numpy as np
    >>> from synthguard.core.results import Evidence, MetricResult, RecordFlags
    >>> flags = RecordFlags(np.r_[np.ones(50, bool), np.zeros(950, bool)], np.zeros(1000, bool),
    ...                     {"exact": np.ones(1000, bool)})
    >>> ev = Evidence.from_flags("has a copy", flags, sees=("exact",), risk="presence")
    >>> res = {"exact_matches": MetricResult("exact_matches", "privacy", 0.05, "lower is safer",
    ...                                      evidence=ev)}
    >>> assess(res)[1].level
    'high'
    """
    rule = rule or RiskRule()
    out: dict[str, MetricResult] = {}
    for name, res in results.items():  # keep the reference level beside whatever the rule decides
        out[name] = res if res.reference_level is not None else replace(res, reference_level=res.risk_level)
    if rule.rule == "reference":
        return out, _reference_verdict(out, rule)
    metrics = dict(metrics or {})
    for name, res in list(out.items()):  # one row per person: a copied row is a copied person
        ev = res.evidence
        if ev is not None and ev.unit == "entities" and "exact" in ev.sees and "person" not in ev.sees:
            flags = ev.flags
            if flags is not None and "exact" in flags.responds:
                flags = replace(flags, responds={**flags.responds, "person": flags.responds["exact"]})
            out[name] = replace(res, evidence=replace(
                ev, sees=(*ev.sees, "person"), flags=flags,
                visibility={**(ev.visibility or {}), "person": (ev.visibility or {}).get("exact", 1.0)}))

    def risk_of(name: str, res: MetricResult) -> str:
        ev = res.evidence
        if ev is not None and ev.risk in RISKS:
            return ev.risk
        return card_risk(metrics.get(name, name)) or card_risk(res.name) or \
            FAMILY_RISK.get(res.family, "presence")

    driving = [n for n, r in out.items() if _is_privacy(r) and r.evidence is not None
               and r.evidence.drives_verdict and not _nan(r.evidence.p_value)]
    contained = _contained_tests(out, driving, metrics)
    for n, m in contained.items():  # the container carries the pair's share of the budget
        host, ev_n = out[m], out[n].evidence
        out[m] = replace(host, evidence=replace(
            host.evidence, weight=float(host.evidence.weight) + float(ev_n.weight)))  # type: ignore[union-attr, arg-type]
    joint = _joint_adjust(out, [n for n in driving if n not in contained], rule, seed, n_perm)
    for n, m in contained.items():  # the same test: counted once, reported as its container's
        joint.same_as[n] = m
        joint.adjusted[n] = joint.adjusted[m]
    tests: list[dict[str, Any]] = []
    not_assessed: list[str] = []
    risk_names: dict[str, str] = {}
    for name, res in out.items():
        if not _is_privacy(res):
            continue
        ev = res.evidence
        if ev is None:
            not_assessed.append(name)
            out[name] = replace(res, risk_level="not assessed")
            continue
        if name in driving:
            ev = replace(ev, p_adjusted=joint.adjusted[name])
        ev = replace(ev, level=level_of(ev, rule.materiality, rule.alpha))
        if name in contained:
            host = out[contained[name]].evidence
            ev = replace(ev, level=level_of(replace(host, p_adjusted=joint.adjusted[name]),  # type: ignore[arg-type]
                                            rule.materiality, rule.alpha),
                         note=((ev.note + "; ") if ev.note else "")
                         + f"counted once: its attack is one of {contained[name]}'s, tested there "
                           "jointly (level and adjusted p-value are that test's)")
        if not ev.drives_verdict or name not in driving:
            out[name] = replace(res, evidence=ev, risk_level=ev.level if ev.drives_verdict
                                else "not assessed")
            if not ev.drives_verdict:
                not_assessed.append(name)
            continue
        risk_names[name] = risk_of(name, res)
        out[name] = replace(res, evidence=ev, risk_level=ev.level)
        also = tuple(r for r in card_also(metrics.get(name, name)) if r != risk_names[name])
        # ``same_as``: the same statistic on the same records; ``contained_in``: an attack another
        # test runs and tests jointly (its numbers are its own, its level and p are the host's)
        row = dict(_test_row(name, res, ev), risk=risk_names[name],
                   same_as=None if name in contained else joint.same_as.get(name))
        if name in contained:
            row["contained_in"] = contained[name]
        if also:
            row["also"] = list(also)
        tests.append(row)

    families = _families(out, [t["metric"] for t in tests])
    best = _best_seeing(out, tests, joint, families)
    of_risk = {r: [t for t in tests if r == t["risk"] or r in t.get("also", ())] for r in RISKS}
    measured = [*RISKS, "any"]
    if levels_only:  # limits only where they decide a level: the risks no test alarms under
        measured = [r for r in RISKS if not any(t["level"] in ("high", "medium") for t in of_risk[r])]
        measured += ["any"] if len(measured) == len(RISKS) else []
    limits = _family_limits(out, tests, joint, rule, seed, families, best, measured)
    risks = [_with_not_run(_risk_row(r, of_risk[r], out, rule,
                                     limits.get(r, {}) if r in measured else None, families,
                                     risk_names, best.get(r)),
                           _not_run_of(r, not_run or {}, metrics)) for r in RISKS]
    assessed = [r for r in risks if r["level"] != "not assessed"]
    counts = {lvl: sum(1 for t in tests if t["level"] == lvl) for lvl in LEVEL_ORDER}
    if not assessed:
        level = "inconclusive"
    else:
        level = max((r["level"] for r in assessed), key=lambda lv: LEVEL_ORDER[lv])
    drivers = sorted((t for t in tests if t["level"] == level and level in ("high", "medium")),
                     key=lambda t: (-(t["effect"] or 0.0), t["p_adjusted"] or 1.0, t["metric"]))
    if level == "high" and not drivers:  # high by a family its tests see in part (_risk_row)
        drivers = sorted((t for t in tests if t["level"] == "medium"),
                         key=lambda t: (-(t["effect"] or 0.0), t["p_adjusted"] or 1.0, t["metric"]))
    if level in ("low", "inconclusive"):
        drivers = []
    run_limits = limits.get("any", {})
    limit = _headline_limit(run_limits, families)
    summary = _summary(level, drivers, limit, tests, rule, has_control, risks)
    return out, Verdict(level, rule, summary, tuple(TestRow.from_dict(t) for t in drivers),
                        tuple(TestRow.from_dict(t) for t in tests),
                        HeadlineLimit.from_dict(limit) if limit is not None else None,
                        tuple(not_assessed), counts, tuple(RiskRow.from_dict(r) for r in risks),
                        {t: LeakLimit.from_dict(v) for t, v in run_limits.items()})


def card_also(name: str | None) -> tuple[str, ...]:
    """The further risks a metric's card says its test counts under (WP216 cross-listing)."""
    from ..registry import info_of

    info = info_of(name)
    return tuple(info.card.get("also") or ()) if info is not None else ()


def _contained_tests(results: Mapping[str, MetricResult], driving: list[str],
                     metrics: Mapping[str, str]) -> dict[str, str]:
    """Driving tests contained in another driving test of the run (the card's ``contained_in``: a
    test whose attack another metric runs and tests jointly): name -> the container's name. They
    vote once, through the container (the test row's ``contained_in``)."""
    from ..registry import info_of

    by_metric: dict[str, str] = {}
    for n in driving:
        by_metric.setdefault(metrics.get(n) or results[n].name, n)
    out: dict[str, str] = {}
    for n in driving:
        info = info_of(metrics.get(n) or results[n].name)
        host = info.card.get("contained_in") if info is not None else None
        if host is not None and host in by_metric and by_metric[host] != n:
            out[n] = by_metric[host]
    return out


@dataclass
class _Joint:
    adjusted: dict[str, float]
    share: dict[str, float]
    same_as: dict[str, str]
    blocks: list[dict[str, Any]]
    total_weight: float
    #: per test, the p-value at or below which it alarms at the first step of the procedure
    thresholds: dict[str, float] = field(default_factory=dict)


def _flag_key(ev: Evidence) -> tuple[str, int, int]:
    assert ev.flags is not None
    return (ev.unit, int(ev.flags.member.size), int(ev.flags.non_member.size))


def _joint_adjust(results: Mapping[str, MetricResult], driving: list[str], rule: RiskRule,
                  seed: int | None, n_perm: int) -> _Joint:
    """Adjusted p-values of every driving test.

    Tests with per-record flags over the same records form a block tested jointly by label
    permutation (Westfall-Young step-down min-P, weighted); tests that repeat another's flags
    exactly are collapsed into it. Blocks and the remaining tests then share the false-alarm
    budget by weighted Holm, a block weighing what its distinct tests weigh.
    """
    from ..stats.maxt import joint_minp

    evs = {n: results[n].evidence for n in driving}
    groups: dict[tuple[str, int, int], list[str]] = {}
    for n in driving:
        ev = evs[n]
        if ev is not None and ev.flags is not None and ev.flags.member.size and \
                ev.flags.non_member.size:
            groups.setdefault(_flag_key(ev), []).append(n)
    same_as: dict[str, str] = {}
    blocks: list[dict[str, Any]] = []
    for key, names in groups.items():
        seen: dict[bytes, str] = {}
        uniq: list[str] = []
        for n in sorted(names, key=lambda x: (-evs[x].weight, x)):  # type: ignore[union-attr]
            f = evs[n].flags  # type: ignore[union-attr]
            # the same test: the same flags, the same records a leak would flag, and the same
            # measured responses to the run's leak rows
            sig = np.packbits(np.r_[f.member, f.non_member]).tobytes() + repr(sorted(
                (t, np.packbits(r).tobytes()) for t, r in f.responds.items())).encode() + repr(
                (f.tail, sorted((fam, r.src.tobytes(), r.target.tobytes(), r.score.tobytes())
                                for fam, r in f.leaks.items()))).encode()
            if sig in seen:
                same_as[n] = seen[sig]
            else:
                seen[sig] = n
                uniq.append(n)
        w = [float(evs[n].weight) for n in uniq]  # type: ignore[union-attr]
        jt = joint_minp([evs[n].flags.member for n in uniq],  # type: ignore[union-attr]
                        [evs[n].flags.non_member for n in uniq],  # type: ignore[union-attr]
                        w, n_perm=n_perm, seed=make_rng(seed, "verdict-joint", *key))
        blocks.append({"key": key, "names": uniq, "weights": w, "joint": jt,
                       "p": dict(zip(uniq, jt.p_adjusted.tolist(), strict=True))})
    in_block = {n for b in blocks for n in b["names"]} | set(same_as)
    singles = [n for n in driving if n not in in_block]
    unit_p = [float(evs[n].p_value) for n in singles] + [min(b["p"].values()) for b in blocks]  # type: ignore[union-attr]
    unit_w = [float(evs[n].weight) for n in singles] + [sum(b["weights"]) for b in blocks]  # type: ignore[union-attr]
    total = float(sum(unit_w)) if unit_w else 1.0
    adjusted: dict[str, float] = {}
    if unit_p:
        base = holm_adjust(unit_p, unit_w)
        for i, n in enumerate(singles):
            adjusted[n] = base[i]
        for bi, b in enumerate(blocks):
            pos = len(singles) + bi
            for n, pj in b["p"].items():  # the block's entry replaced by this test's own joint p
                ps = list(unit_p)
                ps[pos] = pj
                adjusted[n] = holm_adjust(ps, unit_w)[pos]
    for n, m in same_as.items():
        adjusted[n] = adjusted[m]
    share = {n: float(evs[n].weight) / total for n in driving}  # type: ignore[union-attr]
    thresholds = {n: rule.alpha * share[n] for n in driving}  # the first step of weighted Holm
    for b in blocks:
        b["level"] = rule.alpha * sum(b["weights"]) / total  # its first Holm step
        # the block's own first step is its min-P critical value: sharper than Bonferroni
        crit = b["joint"].critical(b["level"])
        mean_w = float(np.mean(b["weights"]))
        for n, w in zip(b["names"], b["weights"], strict=True):
            thresholds[n] = max(thresholds[n], crit * w / mean_w)
    return _Joint(adjusted, share, same_as, blocks, total, thresholds)


def _visibility(ev: Evidence | None, families: Mapping[str, str | None]) -> dict[str, float]:
    """Applicable leak family -> the test's visible share of it: the share of its candidate leak
    rows that alone newly flag their own record at the test's current flags
    (:func:`synthguard.run.limits.leak_visibility`); empty for a test without leak responses."""
    from .limits import visible_shares

    flags = getattr(ev, "flags", None)
    if flags is None or flags.scores is None or not flags.leaks:
        return {}
    fams = flags.families or {}
    return visible_shares(flags.scores, flags.tail, {
        f: r for f, r in flags.leaks.items() if fams.get(f) is None and families.get(f, "x") is None})


def _best_seeing(results: Mapping[str, MetricResult], tests: list[dict[str, Any]], joint: _Joint,
                 families: Mapping[str, str | None]) -> dict[str, dict[str, tuple[str, float]]]:
    """Risk -> leak family it answers for -> ``(test, v)``: the risk's test that sees the family
    best (the largest visible share ``v``, :func:`_visibility`; ties to the first by name),
    chosen from the flags alone, before any excess is read, so that its interval keeps its
    coverage (no minimum over tests). Families no test sees (``v = 0``) are left out: they are
    the risk's unassessed families."""
    vis = {t["metric"]: _visibility(results[t["metric"]].evidence, families) for t in tests
           if not joint.same_as.get(t["metric"])}
    out: dict[str, dict[str, tuple[str, float]]] = {}
    for risk in RISKS:
        mine = sorted(t["metric"] for t in tests if (risk == t["risk"] or risk in t.get("also", ()))
                      and t["metric"] in vis)
        out[risk] = {}
        for f in RISK_FAMILIES[risk]:
            seen = [(vis[n][f], n) for n in mine if vis[n].get(f, 0.0) > 0]
            if seen:
                v, name = min(seen, key=lambda x: (-x[0], x[1]))
                out[risk][f] = (name, float(v))
    return out


def _partial(tests: list[dict[str, Any]], best: Mapping[str, tuple[str, float]]
             ) -> dict[str, Any] | None:
    """The largest leak an alarming risk's excess is consistent with: over the families in
    ``best`` (family -> the risk's test that sees it best, its visible share ``v``), the upper end
    ``U`` of that test's interval over ``v`` (at most 1); ``None`` without any such test."""
    rows = {t["metric"]: t for t in tests}
    worst: dict[str, Any] | None = None
    for fam, (name, v) in best.items():
        t = rows.get(name)
        ci = t.get("effect_ci") if t is not None else None
        if not ci or ci[1] is None or _nan(ci[1]) or v <= 0:
            continue
        upper = float(ci[1])
        got = {"family": fam, "metric": name, "visible": float(v), "upper": upper,
               "consistent": min(1.0, max(0.0, upper) / float(v))}
        if worst is None or got["consistent"] > worst["consistent"]:
            worst = got
    return worst


def _partial_text(partial: Mapping[str, Any], unit: str, m: float) -> str:
    """The sentence of :func:`_partial`."""
    seen = (f"{partial['metric']} flags {_pct(partial['visible'])} of "
            f"{FAMILY_NAMES[partial['family']]}: a leak of up to {_pct(partial['consistent'])} of "
            f"the training {unit} is consistent with its interval (to {_pct(partial['upper'])})")
    if partial["consistent"] >= m:
        return f"{seen}, not ruled out below the materiality {_pct(m)}"
    return (f"{seen}, below the materiality {_pct(m)}: the largest such leak over the families "
            "the risk's tests see")


def _families(results: Mapping[str, MetricResult], tests: list[str]) -> dict[str, str | None]:
    """Every leak family of the run: ``None`` when it applies to the tables, else why not (from the
    tests' record flags; families no test reported on are unknown and left out)."""
    out: dict[str, str | None] = {}
    for n in tests:
        flags = results[n].evidence.flags  # type: ignore[union-attr]
        for fam, why in (getattr(flags, "families", None) or {}).items():
            if out.get(fam, "x") is not None:
                out[fam] = why
    return {f: out[f] for f in LEAK_FAMILIES if f in out}


#: repetitions of each leak size when a family's detection limit is measured
LIMIT_REPS = 40
#: the memory the families' limits measured at once (in threads) may hold together
LIMIT_THREADS_BYTES = 2 << 30


def _family_limits(results: Mapping[str, MetricResult], tests: list[dict[str, Any]], joint: _Joint,
                   rule: RiskRule, seed: int | None, families: Mapping[str, str | None],
                   best: Mapping[str, Mapping[str, tuple[str, float]]],
                   measured: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """Risk (and ``"any"``, the verdict) -> family -> detection limit, measured by injecting each
    family's leak rows into the release and re-testing (:mod:`synthguard.run.limits`), under the
    rule of :func:`_risk_row` (``best``: each risk's test that sees a family best, from
    :func:`_best_seeing`), for the risks ``measured`` (default: every risk and ``"any"``; a
    family none of them answers for is not measured). A risk's limits are the same whichever
    other risks are measured beside it (each family's draws come first, from its own stream)."""
    from ..engine.parallel import default_jobs
    from .limits import InjectionTest, Scratch, family_limits

    inj = []
    for t in tests:
        name = t["metric"]
        if joint.same_as.get(name):
            continue  # counted once, as the test it equals
        ev = results[name].evidence
        flags = ev.flags if ev is not None else None
        if flags is None or flags.scores is None or not flags.leaks:
            continue
        # the first step of weighted Holm (alpha x w / W): the block's min-P critical value is
        # measured on the observed flags (0.2 for a copy test that flags no one), not on a release
        # with the leak in it, so it could state a limit the leak run does not reach; Holm's first
        # step is what the joint procedure always beats (the limit errs on "not ruled out")
        thr = rule.alpha * joint.share.get(name, 0.0)
        inj.append(InjectionTest(name, flags.scores, flags.tail, int(flags.member.size), thr,
                                 (t["risk"], *t.get("also", ()), "any"), flags.leaks))
    out: dict[str, dict[str, Any]] = {}
    risks = [*RISKS, "any"] if measured is None else list(measured)
    n1 = inj[0].n_member if inj else _n_member(results, tests)
    eligible = _eligible(results, tests)
    todo = [fam for fam, why in families.items() if why is None]
    if measured is not None:  # the families the measured risks answer for
        answered = {f for r in risks for f in (LEAK_FAMILIES if r == "any" else RISK_FAMILIES[r])}
        todo = [fam for fam in todo if fam in answered]

    mine = threading.local()  # each thread's Scratch: its arrays kept from family to family

    def limits_of(fam: str) -> dict[str, dict[str, Any]]:
        if not hasattr(mine, "scratch"):
            mine.scratch = Scratch()
        return family_limits(inj, fam, risks, materiality=rule.materiality, power=rule.power,
                             reps=LIMIT_REPS, seed=seed if seed is not None else 0,
                             partial={r: dict(best.get(r) or {}) for r in RISKS}, scratch=mine.scratch)

    # threads, one per core, while their working sets (reps x records: the relabelling keys,
    # the places, a chunk of flags; about 24 bytes a cell) fit in LIMIT_THREADS_BYTES together
    records = max((t.scores.size for t in inj), default=0)
    n_threads = min(len(todo), default_jobs(), max(1, LIMIT_THREADS_BYTES // max(1, LIMIT_REPS * 24 * records)))
    if n_threads > 1:  # each family its own seeded stream: the same limits, read in the families' order
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=n_threads, thread_name_prefix="synthguard-limits") as pool:
            found = list(pool.map(limits_of, todo))
    else:
        found = [limits_of(fam) for fam in todo]
    for fam, got in zip(todo, found, strict=True):
        for risk, lim in got.items():
            out.setdefault(risk, {})[fam] = _limit_entry(fam, lim, n1, rule, eligible.get(fam))
    return out


def _n_member(results: Mapping[str, MetricResult], tests: list[dict[str, Any]]) -> int:
    """Training records (or persons) the tests' record flags cover (0 when none states flags)."""
    return max((int(f.member.size) for t in tests
                if (f := getattr(results[t["metric"]].evidence, "flags", None)) is not None),
               default=0)


def _eligible(results: Mapping[str, MetricResult], tests: list[dict[str, Any]]) -> dict[str, int]:
    """Leak family -> how many training records it applies to, as the tests' flags state it."""
    out: dict[str, int] = {}
    for t in tests:
        flags = getattr(results[t["metric"]].evidence, "flags", None)
        for fam, n in (getattr(flags, "eligible", None) or {}).items():
            out[fam] = max(out.get(fam, 0), int(n))
    return out


def _limit_entry(fam: str, lim: Mapping[str, Any], n1: int, rule: RiskRule,
                 eligible: int | None = None) -> dict[str, Any]:
    """One family's detection limit as the JSON states it, with its sentence.

    A family no test reads high at any size it can take, but that applies to fewer than the
    materiality's share of the training records (``eligible``: a copy of a record unique on its
    quasi-identifiers needs such a record), cannot leak the materiality: its entry states that
    ceiling (``ceiling``: the largest leak of this family the tables hold) as its value."""
    power = round(100 * rule.power)
    name = FAMILY_NAMES[fam]
    entry: dict[str, Any] = {"value": lim["share"], "k": lim["k"], "tests": list(lim["tests"]),
                             "power": rule.power, "candidates": int(lim["candidates"])}
    if eligible is not None:
        entry["eligible"] = int(eligible)
    if lim["k"] is None and eligible is not None and n1 and eligible / n1 < rule.materiality:
        entry.update(value=eligible / n1, ceiling=True)
        entry["text"] = (f"{name}: only {eligible:,} of the {n1:,} training records can leak this "
                         f"way ({_pct(eligible / n1)}), below the materiality "
                         f"{_pct(rule.materiality)}: no leak of this family can reach it")
        return entry
    if not lim["tests"]:
        entry["text"] = f"{name}: no test of this run responds to this leak (not assessed)"
    elif lim["k"] is None:
        entry["text"] = (f"{name}: not read high with {power} % power even with all "
                         f"{lim['candidates']} candidate training records leaked "
                         f"({_pct(lim['candidates'] / n1) if n1 else 'n/a'})")
    else:
        entry["text"] = (f"{name}: a leak of {lim['k']} of the {n1} training records "
                         f"({_pct(lim['share'])}) reads high with {power} % power (leak rows built "
                         f"from training records put into the release, {lim['reps']} repetitions)")
    return entry


def _risk_row(risk: str, tests: list[dict[str, Any]], results: Mapping[str, MetricResult],
              rule: RiskRule, limits: Mapping[str, Any] | None, families: Mapping[str, str | None],
              risk_names: Mapping[str, str] | None = None,
              best: Mapping[str, tuple[str, float]] | None = None) -> dict[str, Any]:
    """One risk: an alarm of any of its tests, else ``low`` only when the largest excess the run
    rules out (its tests' one-sided upper bounds and its families' detection limits) is below the
    materiality and no family it answers for is unassessed, else ``inconclusive`` with the bound
    reached and what would settle it.

    An alarm reads ``high`` when one of its tests does (significant, its interval reaching the
    materiality), and also when a leak of the materiality is consistent with the excess of a test
    that sees a family only in part: for each family the risk answers for, ``best`` names the
    risk's test that sees it best and its visible share ``v`` (:func:`_best_seeing`); a leak of
    ``U / v`` of the training records is consistent with that test's interval (upper end ``U``),
    and the largest over the families (``partial``) must be below the materiality for ``medium``.
    ``limits`` ``None``: not measured (a re-test's verdict, :func:`assess` ``levels_only``, for a
    risk one of whose tests alarms): the row states no limit and no family unassessed."""
    title, criterion = RISK_TITLES[risk]
    row: dict[str, Any] = {"risk": risk, "title": title, "criterion": criterion,
                           "tests": [t["metric"] for t in tests], "detection_limits": {},
                           "effect": None, "effect_ci": None, "metric": None, "settle": None,
                           "member": None, "non_member": None, "unresolved": []}
    answered = [f for f in RISK_FAMILIES[risk] if families.get(f, "unknown") is None]
    not_applicable = {f: families[f] for f in RISK_FAMILIES[risk] if families.get(f)}
    unknown = [f for f in RISK_FAMILIES[risk] if f not in families]
    if not tests:
        row.update(level="not assessed",  # no control given, or none of its tests chosen or run
                   summary="not assessed: no test of this risk compared training records with a "
                           "control in this run",
                   bound=None, bound_by=None, unassessed=[], not_applicable=not_applicable)
        return to_jsonable(row)
    m = rule.materiality
    if limits is None:  # not measured: only an alarming risk (its level needs no limit)
        assert any(t["level"] in ("high", "medium") for t in tests)
        limits, answered, unknown = {}, [], []
    row["detection_limits"] = {f: limits[f] for f in answered if f in limits}
    # the largest excess the run rules out: every test's one-sided bound, every family's limit
    bounds: list[tuple[float, str]] = []
    for t in tests:
        up = results[t["metric"]].evidence.upper  # type: ignore[union-attr]
        if not _nan(up):
            bounds.append((float(up), t["metric"]))
    unassessed = [f for f in answered if (limits.get(f) or {}).get("value") is None]
    unassessed += unknown
    for f in answered:
        v = (limits.get(f) or {}).get("value")
        if v is not None:
            bounds.append((float(v), FAMILY_NAMES[f]))
    bound, bound_by = max(bounds) if bounds else (None, None)
    row.update(bound=bound, bound_by=bound_by, unassessed=unassessed, not_applicable=not_applicable)
    alarms = [t for t in tests if t["level"] in ("high", "medium")]
    if alarms:
        level = "high" if any(t["level"] == "high" for t in alarms) else "medium"
        partial = _partial(tests, best or {}) if level == "medium" else None
        if partial is not None and partial["consistent"] >= m:
            level = "high"  # a leak of the materiality is consistent with a partly seen family
        top = max([t for t in alarms if t["level"] == level] or alarms,
                  key=lambda t: (t["effect"] or 0.0, -(t["p_adjusted"] or 1.0)))
        row.update(level=level, metric=top["metric"], effect=top["effect"],
                   effect_ci=top["effect_ci"], member=top["member"], non_member=top["non_member"])
        row["summary"] = (f"{top['metric']} exposes {_pct(top['member'])} of the "
                          f"training {top['unit']} against {_pct(top['non_member'])} of the control, "
                          f"an excess of {_pct(top['effect'])} (interval {_pct(top['effect_ci'][0])} "
                          f"to {_pct(top['effect_ci'][1])}), adjusted p={top['p_adjusted']:.2g}")
        if partial is not None:
            row["partial"] = partial
            row["summary"] += "; " + _partial_text(partial, top["unit"], m)
        return to_jsonable(row)
    worst = max(tests, key=lambda t: results[t["metric"]].evidence.upper  # type: ignore[union-attr]
                if not _nan(results[t["metric"]].evidence.upper) else -1.0)  # type: ignore[union-attr]
    loose = [t["metric"] for t in tests
             if _nan(results[t["metric"]].evidence.upper)  # type: ignore[union-attr]
             or results[t["metric"]].evidence.upper >= m]  # type: ignore[union-attr]
    undetected = [f for f in answered if f not in unassessed
                  and float(limits[f]["value"]) >= m]
    row.update(metric=worst["metric"], effect=worst["effect"], effect_ci=worst["effect_ci"],
               member=worst["member"], non_member=worst["non_member"],
               unresolved=[*unassessed, *undetected])
    unit = tests[0]["unit"]
    if not loose and not unassessed and not undetected and bound is not None and bound < m:
        row["level"] = "low"
        row["summary"] = (f"No test finds training {unit} exposed more than unseen people; the run "
                          f"rules out an excess of {_pct(bound)} or more (below the materiality "
                          f"{_pct(m)}), for {_family_list(answered)}")
        return to_jsonable(row)
    row["level"] = "inconclusive"
    reasons: list[tuple[float, str]] = []  # (how far it is from settled, the reason), worst first
    for f in unassessed:
        lim = limits.get(f) or {}
        why = ("no test of this run sees it" if f in unknown or not lim.get("tests")
               else f"not read high even with {lim.get('candidates')} training records leaked")
        reasons.append((2.0, f"{FAMILY_NAMES[f]} ({why})"))
    reasons += [(float(limits[f]["value"]), f"{FAMILY_NAMES[f]} (detectable from "
                 f"{_pct(limits[f]['value'])})") for f in undetected]
    reasons += [(float(results[n].evidence.upper) if not _nan(results[n].evidence.upper)  # type: ignore[union-attr]
                 else 1.5, f"{n} (its interval reaches {_pct(results[n].evidence.upper)})")  # type: ignore[union-attr]
                for n in loose]
    reasons.sort(key=lambda x: -x[0])
    more = f" and {len(reasons) - 1} more" if len(reasons) > 1 else ""
    reached = (f"rules out {_pct(bound)}, not {_pct(m)}" if bound is not None and not unassessed
               else f"cannot rule out {_pct(m)}")
    row["summary"] = f"No excess found; the run {reached}: {reasons[0][1]}{more}" if reasons \
        else f"No excess found; the run {reached}"
    row["settle"] = _settle(m, tests, results, unassessed, unknown,
                            {f: float(limits[f]["value"]) for f in undetected}, loose)
    return to_jsonable(row)


def _not_run_of(risk: str, not_run: Mapping[str, str], metrics: Mapping[str, str]) -> list[str]:
    """The tests of ``risk`` (by their card: its risk, or a risk it also answers for) that did not
    run, each with why in a few words."""
    out = []
    for name in sorted(not_run):
        card = metrics.get(name, name)
        if card_risk(card) == risk or risk in card_also(card):
            out.append(f"{name} ({not_run[name]})")
    return out


def _with_not_run(row: dict[str, Any], not_run: list[str]) -> dict[str, Any]:
    """A risk row that names the tests of its risk that did not run (``not_run``, and at the end
    of its summary): a level stands on the tests that ran, never on those."""
    if not not_run:
        return row
    return {**row, "not_run": not_run,
            "summary": f"{row['summary']}; did not run: {', '.join(not_run)}"}


def _family_list(families: list[str]) -> str:
    return ", ".join(FAMILY_NAMES[f] for f in families) if families else "no leak family"


def _settle(m: float, tests: list[dict[str, Any]], results: Mapping[str, MetricResult],
            unassessed: list[str], unknown: list[str], undetected: Mapping[str, float],
            loose: list[str]) -> str:
    """What would settle an inconclusive risk: a test for the unassessed families; for each test
    whose interval reaches ``m``, a control about ``(upper / m)^2`` times its own (intervals shrink
    with the square root of the records); for each family read high only from a limit ``L``
    above ``m``, about ``(L / m)^2`` times the records: a leak of the family reads high once its
    test is significant and the leak its interval allows (upper end over the visible share)
    reaches ``m``, both of which come with more records, at any visible share above 0."""
    parts = []
    n_out = len(set(unknown) | set(unassessed))
    if n_out:
        parts.append(f"tests that see the {n_out} leak famil{'y' if n_out == 1 else 'ies'} not "
                     "assessed (the privacy preset's copy and closeness tests)")
    need, now, by_family = 0, 0, False
    n_control = max((int(t.get("n_non_member") or 0) for t in tests), default=0)
    for lim in undetected.values():
        got = int(math.ceil(n_control * (lim / m) ** 2)) if n_control else 0
        if got > need:
            need, now, by_family = got, n_control, True
    for t in tests:
        up = results[t["metric"]].evidence.upper  # type: ignore[union-attr]
        n_c = int(t.get("n_non_member") or 0)
        if t["metric"] in loose and not _nan(up) and n_c:
            got = int(math.ceil(n_c * (float(up) / m) ** 2))
            if got > need:
                need, now, by_family = got, n_c, False
    if need:
        # a family's limit falls at least with the square root of the records (faster where chance
        # flags no one, as a significant count then needs no more flags): its count is a ceiling
        parts.append(f"{'up to ' if by_family else ''}about {need:,} control and as many training "
                     f"records (now {now:,})")
    return "; ".join(parts) or "more training and control records"


def _headline_limit(limits: Mapping[str, Any], families: Mapping[str, str | None]
                    ) -> dict[str, Any] | None:
    """The run's stated detection limit: the largest over the families that apply (``None`` value
    when one of them is not detected at any size)."""
    if not limits:
        return None
    vals = {t: v.get("value") for t, v in limits.items()}
    missing = [t for t, v in vals.items() if v is None]
    if missing:
        return {"value": None, "metric": None, "by_type": dict(limits),
                "text": ("no detection limit for " + _family_list(missing)
                         + ": the run cannot show such a leak")}
    # a ceiling is the most a family can leak, not a limit the run measured: named apart
    capped = [t for t in limits if limits[t].get("ceiling")]
    measured = [t for t in limits if t not in capped]
    t_max = max(measured or capped, key=lambda t: vals[t])
    lim = limits[t_max]
    text = (f"the smallest leak the run reads high with {round(100 * float(lim['power']))} % "
            f"power is at most {_pct(lim['value'])} of the training records for every leak "
            f"family that applies ({_family_list(measured)})")
    if capped and measured:
        text += (f"; {_family_list(capped)} cannot reach the materiality (at most "
                 f"{_pct(max(vals[t] for t in capped))} of the training records qualify)")
    elif capped:
        text = (f"no leak family that applies ({_family_list(capped)}) can reach the materiality: "
                f"at most {_pct(lim['value'])} of the training records qualify")
    return {"value": lim["value"], "metric": ", ".join(lim.get("tests") or []), "leak": t_max,
            "by_type": dict(limits), "text": text}


def _summary(level: str, drivers: list[dict[str, Any]], limit: Mapping[str, Any] | None,
             tests: list[dict[str, Any]], rule: RiskRule, has_control: bool | None = None,
             risks: list[dict[str, Any]] | None = None) -> str:
    m = _pct(rule.materiality)
    if not tests:
        if has_control:
            return ("inconclusive: no privacy test ran (the privacy metrics were skipped or not "
                    "selected: see the skipped metrics and their reasons)")
        return ("inconclusive: no privacy test could compare training rows with held-out real rows "
                "(give a control table: real rows held out from training, --control)")
    by_level = [r for r in (risks or []) if r["level"] != "not assessed"]
    if level in ("high", "medium"):
        parts = [f"{t['metric']} (training {_pct(t['member'])} vs control {_pct(t['non_member'])}, "
                 f"excess {_pct(t['effect'])}, adjusted p={t['p_adjusted']:.2g})" for t in drivers[:3]]
        unit = drivers[0]["unit"]
        what = (f"exposes its training {unit} significantly more than unseen people, and a leak "
                f"of the materiality ({m}) is not ruled out") if level == "high" else \
            (f"exposes its training {unit} significantly more than unseen people, below the "
             f"materiality of {m}")
        open_risks = [r["title"].lower() for r in by_level if r["level"] == level]
        return f"{level}: the release {what} ({', '.join(open_risks)}): " + "; ".join(parts)
    tail = f"; {limit['text']}" if limit and limit.get("value") is not None else ""
    bounds = [r["bound"] for r in by_level if r.get("bound") is not None]
    if level == "low":
        return (f"low: every assessed risk ({', '.join(r['title'].lower() for r in by_level)}) "
                f"reads low: the run rules out an excess of {_pct(max(bounds))} or more of the "
                f"training records, below the materiality {m}{tail}")
    undecided = [r for r in by_level if r["level"] == "inconclusive"]
    decided = [r for r in by_level if r["level"] == "low"]
    fams = sorted({t for r in undecided for t in r["unresolved"] if t in LEAK_FAMILIES},
                  key=LEAK_FAMILIES.index)
    worst = max((r["bound"] for r in undecided if r.get("bound") is not None), default=None)
    text = ("inconclusive: no test found an excess, but the run "
            + (f"rules out only {_pct(worst)}, not {m}" if worst is not None and worst >= rule.materiality
               else f"cannot rule out {m}")
            + " (" + ", ".join(r["title"].lower() for r in undecided) + ")")
    if fams:
        text += "; not ruled out: " + _family_list(fams)
    if decided:
        text += "; ruled out: " + ", ".join(r["title"].lower() for r in decided)
    return text + tail


def _reference_verdict(results: Mapping[str, MetricResult], rule: RiskRule) -> Verdict:
    """The worst reference level among privacy metrics (SynEval / anonymeter style)."""
    ranks = {"high": 3, "medium": 2, "low": 1}
    best: tuple[int, int, int] | None = None
    driver: tuple[str, MetricResult] | None = None
    counts = {"high": 0, "medium": 0, "low": 0}
    for i, (name, res) in enumerate(results.items()):
        if not _is_privacy(res):
            continue
        lvl = res.risk_level
        if lvl in counts:
            counts[lvl] += 1
        rank = ranks.get(lvl)
        if rank is None:
            continue
        prio = FAMILY_PRIORITY.index(res.family) if res.family in FAMILY_PRIORITY else len(FAMILY_PRIORITY)
        key = (rank, -prio, -i)
        if best is None or key > best:
            best, driver = key, (name, res)
    if driver is None:
        return Verdict("inconclusive", rule, "inconclusive: no privacy metric produced a level",
                       counts=counts)
    name, res = driver
    row = to_jsonable({"metric": name, "family": res.family, "level": res.risk_level,
                       "value": res.value,
                       "baseline": res.baseline.value if res.baseline is not None else None})
    return Verdict(res.risk_level, rule,
                   f"{res.risk_level} (reference cut-offs): driven by {name} = {res.value}",
                   (row,), (), None, (), counts)
