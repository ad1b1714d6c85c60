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
       data is seen (``exact_matches`` 3, membership attacks 2, others 1).
    2. **Level of a test** from its adjusted p-value and the *materiality* ``m`` (the share of
       training records exposed beyond chance that matters, default 1 %): ``high`` significant
       and a leak of ``m`` not ruled out; ``medium`` significant but ruled out below ``m``;
       ``low`` not significant and ruled out; ``inconclusive`` neither.
    3. **A level per risk** (each metric's card names its risk): presence of training records, singling out,
       linkability, attribute inference. A risk is high (medium) when one of its tests is; it is
       ``low`` only when its tests *jointly* rule out the materiality: for presence, every leak type
       it answers for (always exact copies, near-copies and copies of rare records; also any type
       a test of the run says it sees in full: memorised neighbourhoods, whole persons, text) must
       be ruled out by a test that sees that type, its interval's upper bound below ``m`` times the
       share of training records such a leak would move (its *visibility*). A test whose effect is
       capped (a pooled-tail share) can raise an alarm but never supports ``low``. For the other
       risks every test must rule ``m`` out. Otherwise the risk is ``inconclusive``, with what is
       unresolved and what would settle it.
    4. **The verdict** is the highest level among the assessed risks; ``low`` only when every
       assessed risk is low.
    5. **Detection limits** are measured per leak type by injection: ``k`` training records leak
       (their flags set wherever a test says such a leak would set them), on top of a null
       relabelling of the observed flags, and the joint test is re-run at its first Holm step;
       bisection on ``k`` gives the smallest leak read ``high`` with 80 % power. The headline limit
       is the largest over the types the run answers for.

    Privacy metrics without evidence keep their number and their reference level (in
    ``reference_level``) and read ``not assessed``: they inform, they do not drive the verdict.

The reference rule (``risk_rule="reference"``)
    Levels from the metrics' fixed cut-offs (SynEval's 5 % copies, anonymeter's 0.3/0.5, ...);
    the verdict is the worst of them. Kept for parity with those tools, not recommended.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..core.report_model import HeadlineLimit, LeakLimit, RiskRow, TestRow
from ..core.results import LEAK_TYPES, RISKS, Evidence, MetricResult, RecordFlags, to_jsonable
from ..errors import ConfigError
from ..stats import detection_limit, holm_adjust, make_rng

__all__ = ["RiskRule", "Verdict", "assess", "level_of", "RULES", "RELEASE_TYPES", "LEVEL_ORDER",
           "NON_PRIVACY_FAMILIES", "fails", "card_risk", "RISK_TITLES"]

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


def level_of(ev: Evidence, materiality: float, alpha: float) -> str:
    """Calibrated level of one test (uses the adjusted p-value when the verdict has set it)."""
    p = ev.p_adjusted if ev.p_adjusted is not None else ev.p_value
    if p is None or ev.effect is None or _nan(p) or _nan(ev.effect):
        return "inconclusive"
    hi = ev.effect_ci[1] if ev.effect_ci else float("nan")
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
#: leak types the presence risk always answers for: "low" needs each ruled out
PRESENCE_TYPES = ("exact", "near", "rare")
LEAK_NAMES = {"exact": "exact copies", "near": "near-copies", "rare": "copies of rare records",
              "neighbourhood": "memorised neighbourhoods", "person": "whole persons",
              "text": "(near-)verbatim documents"}


def assess(results: Mapping[str, MetricResult], rule: RiskRule | None = None, *,
           has_control: bool | None = None, seed: int | None = 0,
           metrics: Mapping[str, str] | None = None, n_perm: int = 1000
           ) -> tuple[dict[str, MetricResult], Verdict]:
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
                flags = RecordFlags(flags.member, flags.non_member,
                                    {**flags.responds, "person": flags.responds["exact"]},
                                    flags.candidates)
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
        tests.append(dict(_test_row(name, res, ev), risk=risk_names[name],
                          same_as=joint.same_as.get(name)))

    limits = _injection_limits(out, joint, rule, seed, risk_names)
    risks = [_risk_row(r, [t for t in tests if t["risk"] == r], out, rule, limits,
                       [t["metric"] for t in tests], risk_names) for r in RISKS]
    assessed = [r for r in risks if r["level"] != "not assessed"]
    counts = {lvl: sum(1 for t in tests if t["level"] == lvl) for lvl in LEVEL_ORDER}
    if not assessed:
        level = "inconclusive"
    else:
        level = max((r["level"] for r in assessed), key=lambda lv: LEVEL_ORDER[lv])
    drivers = sorted((t for t in tests if t["level"] == level and level in ("high", "medium")),
                     key=lambda t: (-(t["effect"] or 0.0), t["p_adjusted"] or 1.0, t["metric"]))
    if level in ("low", "inconclusive"):
        drivers = []
    limit = _headline_limit(limits) or _detection_limit(out, driving, rule, joint.share)
    summary = _summary(level, drivers, limit, tests, rule, has_control, risks)
    return out, Verdict(level, rule, summary, tuple(TestRow.from_dict(t) for t in drivers),
                        tuple(TestRow.from_dict(t) for t in tests),
                        HeadlineLimit.from_dict(limit) if limit is not None else None,
                        tuple(not_assessed), counts, tuple(RiskRow.from_dict(r) for r in risks),
                        {t: LeakLimit.from_dict(v) for t, v in limits.items()})


def _contained_tests(results: Mapping[str, MetricResult], driving: list[str],
                     metrics: Mapping[str, str]) -> dict[str, str]:
    """Driving tests contained in another driving test of the run (the card's ``contained_in``: a
    test whose attack another metric runs and tests jointly): name -> the container's name. They
    vote once, through the container (``same_as``)."""
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
            # the same test: the same flags, and the same records a leak would flag
            sig = np.packbits(np.r_[f.member, f.non_member]).tobytes() + repr(sorted(
                (t, np.packbits(r).tobytes()) for t, r in f.responds.items())).encode()
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
    for b in blocks:
        b["level"] = rule.alpha * sum(b["weights"]) / total  # its first Holm step
    return _Joint(adjusted, share, same_as, blocks, total)


def _ruled_out(ev: Evidence, materiality: float, leak: str | None = None) -> bool:
    """Whether the test's interval rules a material leak out (for ``leak``: scaled by how many
    training records such a leak would move)."""
    hi = ev.effect_ci[1] if ev.effect_ci else float("nan")
    if _nan(hi):
        return False
    vis = 1.0
    if leak is not None:
        vis = float((ev.visibility or {}).get(leak, 1.0))
    return hi < materiality * vis


def _claimed_types(tests: list[str], results: Mapping[str, MetricResult]) -> list[str]:
    seen = {t for n in tests for t in (results[n].evidence.sees or ())}  # type: ignore[union-attr]
    return [t for t in LEAK_TYPES if t in PRESENCE_TYPES or t in seen]


def _risk_row(risk: str, tests: list[dict[str, Any]], results: Mapping[str, MetricResult],
              rule: RiskRule, limits: Mapping[str, Any], all_tests: list[str],
              risk_names: Mapping[str, str] | None = None) -> dict[str, Any]:
    """One risk's level: an alarm of any of its tests, else low only when the run's tests jointly
    rule out the materiality for every leak type the risk answers for (exact copies, near-copies,
    copies of rare records, and whatever its own tests say they see), else inconclusive."""
    title, criterion = RISK_TITLES[risk]
    risk_names = risk_names or {}
    row: dict[str, Any] = {"risk": risk, "title": title, "criterion": criterion,
                           "tests": [t["metric"] for t in tests], "detection_limits": {},
                           "effect": None, "effect_ci": None, "metric": None, "settle": None,
                           "member": None, "non_member": None, "unresolved": []}
    if not tests:
        row.update(level="not assessed",
                   summary="not assessed: no test of this risk ran with a control")
        return to_jsonable(row)
    m = rule.materiality
    names = [t["metric"] for t in tests]
    alarms = [t for t in tests if t["level"] in ("high", "medium")]
    row["detection_limits"] = {t: limits[t] for t in _claimed_types(names, results) if t in limits}
    if alarms:
        level = "high" if any(t["level"] == "high" for t in alarms) else "medium"
        top = max((t for t in alarms if t["level"] == level),
                  key=lambda t: (t["effect"] or 0.0, -(t["p_adjusted"] or 1.0)))
        row.update(level=level, metric=top["metric"], effect=top["effect"],
                   effect_ci=top["effect_ci"], member=top["member"], non_member=top["non_member"])
        row["summary"] = (f"{top['metric']} exposes {_pct(top['member'])} of the "
                          f"training {top['unit']} against {_pct(top['non_member'])} of the control, "
                          f"an excess of {_pct(top['effect'])} (interval {_pct(top['effect_ci'][0])} "
                          f"to {_pct(top['effect_ci'][1])}), adjusted p={top['p_adjusted']:.2g}")
        return to_jsonable(row)
    unresolved: list[str] = []
    for t in _claimed_types(names, results):
        # any test of the run that sees this leak type in full may rule it out: a copy that the
        # presence tests rule out is ruled out for linkage and inference through it as well
        seers = [n for n in all_tests if t in (results[n].evidence.sees or ())]  # type: ignore[union-attr]
        if not any(_ruled_out(results[n].evidence, m, t) for n in seers):  # type: ignore[arg-type]
            unresolved.append(t)
    worst = max(tests, key=lambda t: ((t["effect_ci"] or [0, 0])[1] or 0.0))
    row.update(metric=worst["metric"], effect=worst["effect"], effect_ci=worst["effect_ci"],
               member=worst["member"], non_member=worst["non_member"], unresolved=unresolved)
    if not unresolved:
        row["level"] = "low"
        what = ", ".join(LEAK_NAMES[t] for t in _claimed_types(names, results))
        row["summary"] = (f"No test finds training {tests[0]['unit']} exposed more "
                          f"than unseen people, and together they rule out an excess of "
                          f"{_pct(m)} or more ({what})")
        return to_jsonable(row)
    row["level"] = "inconclusive"
    parts = []
    for t in unresolved:
        lim = limits.get(t) or {}
        seers = [n for n in all_tests if t in (results[n].evidence.sees or ())]  # type: ignore[union-attr]
        why = (f"detectable from {_pct(lim.get('value'))}" if lim.get("value") is not None
               else ("no test of this run can rule it out" if not seers
                     else "not detectable at this size"))
        parts.append(f"{LEAK_NAMES[t]} ({why})")
    if risk == "presence":
        row["summary"] = (f"No excess found, but a leak of {_pct(m)} of the "
                          f"training {tests[0]['unit']} is not ruled out for: " + "; ".join(parts))
    else:  # the leak types are the presence risk's: say it once there, point to it here
        row["summary"] = (f"No excess found by {', '.join(names)}; not ruled out: "
                          + ", ".join(LEAK_NAMES[t] for t in unresolved)
                          + " (see presence of training records)")
    no_seer = [t for t in unresolved if not any(
        t in (results[n].evidence.sees or ()) for n in all_tests)]  # type: ignore[union-attr]
    if risk != "presence" and "presence" in set(risk_names.values()):
        row["settle"] = "as for presence of training records"
        return to_jsonable(row)
    row["settle"] = ("; ".join(
        ([f"run a test that sees {', '.join(LEAK_NAMES[t] for t in no_seer)} (the privacy preset's "
          "near_copies and exact_matches)"] if no_seer else [])
        + (["a larger control (more real rows held out from training) and more training rows"]
           if len(no_seer) < len(unresolved) else [])))
    return to_jsonable(row)


def _injection_limits(results: Mapping[str, MetricResult], joint: _Joint, rule: RiskRule,
                      seed: int | None, risk_names: Mapping[str, str]) -> dict[str, Any]:
    """Detection limit per leak type, measured by injecting that leak into the joint test's
    record flags (see :func:`synthguard.stats.maxt.injection_limit`)."""
    from ..stats import difference_ci
    from ..stats.maxt import injection_limit

    blocks = [b for b in joint.blocks if any(risk_names.get(n) == "presence" for n in b["names"])]
    if not blocks:
        return {}
    b = max(blocks, key=lambda x: x["key"][1])  # the block over the most records
    names = b["names"]
    evs = [results[n].evidence for n in names]
    member = [e.flags.member for e in evs]  # type: ignore[union-attr]
    non_member = [e.flags.non_member for e in evs]  # type: ignore[union-attr]
    crit = b["joint"].critical(b["level"])
    m = rule.materiality

    def ruled_out(j: int, k1: int, n1: int, k2: int, n2: int) -> bool:
        return float(difference_ci(k1, n1, k2, n2)["ci"][1]) < m

    presence = [n for n in results if risk_names.get(n) == "presence"]
    claimed = _claimed_types(presence, results)
    out: dict[str, Any] = {}
    n1 = int(member[0].size)
    unit = evs[0].unit  # type: ignore[union-attr]
    for t in claimed:
        responds = [e.flags.responds.get(t) for e in evs]  # type: ignore[union-attr]
        cands = [e.flags.candidates[t] for e in evs if t in e.flags.candidates]  # type: ignore[union-attr]
        pool = np.flatnonzero(np.logical_or.reduce(cands)) if cands else None
        seeing = [n for n, r in zip(names, responds, strict=True) if r is not None and r.any()]
        if not seeing:
            out[t] = {"value": None, "k": None, "tests": [], "power": rule.power,
                      "text": f"{LEAK_NAMES[t]}: no test of this run responds to this leak"}
            continue
        lim = injection_limit(member, non_member, responds, b["weights"], crit, candidates=pool,
                              power=rule.power, reps=40, seed=make_rng(seed, "verdict-inject", t),
                              ruled_out=ruled_out)
        if lim["k"] is None:
            out[t] = {"value": None, "k": None, "tests": seeing, "power": rule.power,
                      "text": (f"{LEAK_NAMES[t]}: not detected with {round(100 * rule.power)} % "
                               f"power even if every candidate training record leaked")}
            continue
        out[t] = {"value": lim["share"], "k": lim["k"], "tests": seeing, "power": rule.power,
                  "candidates": int(pool.size) if pool is not None else n1,
                  "text": (f"{LEAK_NAMES[t]}: a leak of {lim['k']} of the {n1} training {unit} "
                           f"({_pct(lim['share'])}) reads high with {round(100 * rule.power)} % "
                           f"power (measured by injecting it, {lim['reps']} repetitions)")}
    return to_jsonable(out)


def _headline_limit(limits: Mapping[str, Any]) -> dict[str, Any] | None:
    """The run's stated detection limit: the largest over the leak types it answers for."""
    if not limits:
        return None
    vals = {t: v.get("value") for t, v in limits.items()}
    if any(v is None for v in vals.values()):
        missing = [t for t, v in vals.items() if v is None]
        return {"value": None, "metric": None, "by_type": dict(limits),
                "text": ("no detection limit for " + ", ".join(LEAK_NAMES[t] for t in missing)
                         + ": the run cannot show such a leak at its materiality")}
    t_max = max(vals, key=lambda t: vals[t])
    lim = limits[t_max]
    return {"value": lim["value"], "metric": ", ".join(lim.get("tests") or []), "leak": t_max,
            "by_type": dict(limits),
            "text": (f"a leak exposing at least {_pct(lim['value'])} of the training records, of any "
                     f"type tested ({', '.join(LEAK_NAMES[t] for t in limits)}), would have been "
                     f"detected with {round(100 * float(lim['power']))} % power; smaller leaks "
                     f"could go unseen")}


def _detection_limit(results: Mapping[str, MetricResult], driving: list[str], rule: RiskRule,
                     share: Mapping[str, float]) -> dict[str, Any] | None:
    """The smallest excess the best-powered test detects with ``rule.power`` at the first step of
    the weighted Holm procedure (alpha times the test's share of the weights)."""
    best: tuple[float, str, Evidence, float] | None = None
    for name in driving:
        if name not in share:
            continue
        ev = results[name].evidence
        if ev is None or ev.n_member <= 0:
            continue
        p0 = ev.non_member if ev.non_member is not None and not _nan(ev.non_member) else 0.0
        a = rule.alpha * share[name]
        d = detection_limit(ev.n_member, ev.n_non_member, float(p0), alpha=a, power=rule.power)
        if not _nan(d) and (best is None or d < best[0]):
            best = (d, name, ev, a)
    if best is None:
        return None
    d, name, ev, a = best
    return {"value": d, "metric": name, "power": rule.power, "alpha": a, "unit": ev.unit,
            "text": (f"a leak exposing at least {_pct(d)} of the training {ev.unit} beyond chance "
                     f"(e.g. that share copied into the release) would have been detected with "
                     f"{round(100 * rule.power)} % power by {name}; smaller leaks could go unseen")}


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
        what = ("exposes at least the materiality of " + m) if level == "high" else \
            ("exposes training records significantly more than unseen people, below the materiality "
             "of " + m)
        open_risks = [r["title"].lower() for r in by_level if r["level"] == level]
        return (f"{level}: the release {what} of its training {drivers[0]['unit']} "
                f"({', '.join(open_risks)}): " + "; ".join(parts))
    tail = f"; {limit['text']}" if limit else ""
    if level == "low":
        return (f"low: every assessed risk ({', '.join(r['title'].lower() for r in by_level)}) "
                f"rules out an excess of {m} or more of the training records{tail}")
    undecided = [r for r in by_level if r["level"] == "inconclusive"]
    decided = [r for r in by_level if r["level"] == "low"]
    types = sorted({t for r in undecided for t in r["unresolved"]}, key=LEAK_TYPES.index)
    text = ("inconclusive: no test found an excess, but a leak of " + m + " of the training "
            "records is not ruled out for " + ", ".join(LEAK_NAMES[t] for t in types)
            + " (" + ", ".join(r["title"].lower() for r in undecided) + ")")
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
