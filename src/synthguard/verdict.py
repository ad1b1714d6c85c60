"""One verdict from many privacy tests: calibrated risk levels against real people the generator never saw.

Every privacy metric that can states its :class:`~synthguard.results.Evidence`: the statistic on
training rows (members), the same statistic on control rows (non-members) or a null value, the
excess (effect) with its interval, and a one-sided p-value. This module alone turns evidence into
levels and a verdict; metrics and report writers never decide them.

The calibrated rule (default, ``risk_rule="calibrated"``)
    1. The p-values of every test that drives the verdict are adjusted together (weighted Holm),
       so that a release exposing nobody (a fresh real sample) raises any alarm at most ``alpha``
       of the time. The weights are fixed per metric before any data is seen: the direct tests
       of copied records get a larger share of the false-alarm budget (``exact_matches`` 3,
       ``closest_distance_mia`` 2, every other test 1), because copies are the failure every
       generator can have.
    2. Each test gets a level from its adjusted p-value and the *materiality* ``m`` (the share of
       training records exposed beyond chance that matters, default 1 %):

       - ``high``: significant, and a leak of ``m`` or more is not ruled out (the interval's upper
         bound reaches ``m``);
       - ``medium``: significant, but shown to be below ``m`` (upper bound below ``m``);
       - ``low``: not significant, and the upper bound is below ``m`` (evidence of safety);
       - ``inconclusive``: not significant, and ``m`` not ruled out (too little data to tell).

       Two questions, each answered by the test: is there an excess at all, and is a material
       one ruled out? A significant excess counts as material until the data rule that out
       (precautionary: a significant 0.9 % excess measured on 1,000 rows, with an interval up
       to 2 %, reads ``high``, not ``medium``).
    3. The verdict is the highest level among the tests; without any alarm it is ``low`` when at
       least one test ruled a material leak out, else ``inconclusive``.
    4. The detection limit is the smallest excess the best-powered test would have detected with
       80 % power at the first Holm step (alpha times the test's share of the weights).

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

from .errors import ConfigError
from .results import Evidence, MetricResult, to_jsonable
from .stats import detection_limit, holm_adjust

__all__ = ["RiskRule", "Verdict", "assess", "level_of", "RULES", "RELEASE_TYPES", "LEVEL_ORDER",
           "NON_PRIVACY_FAMILIES", "fails"]

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


@dataclass(frozen=True)
class Verdict:
    """The one answer of a report: level, what drives it, and what the run could not have seen."""

    level: str
    rule: RiskRule
    summary: str
    drivers: tuple[Mapping[str, Any], ...] = ()
    tests: tuple[Mapping[str, Any], ...] = ()
    detection_limit: Mapping[str, Any] | None = None
    not_assessed: tuple[str, ...] = ()
    counts: Mapping[str, int] = field(default_factory=dict)

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
        out.update({"correction": "holm" if self.rule.rule == "calibrated" else None,
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


def assess(results: Mapping[str, MetricResult], rule: RiskRule | None = None, *,
           has_control: bool | None = None) -> tuple[dict[str, MetricResult], Verdict]:
    """Set every privacy metric's risk level under ``rule`` and decide the verdict.

    Parameters
    ----------
    results : mapping
        Metric name -> result, as the metrics returned them (levels from their reference cut-offs).
    rule : RiskRule, optional
        Default: calibrated, materiality 1 %, alpha 5 %, synthetic release.
    has_control : bool, optional
        Whether a control table was given (only words the summary when no test could run).

    Returns
    -------
    (dict, Verdict)
        The results with ``risk_level`` (and ``reference_level``, adjusted evidence) filled in,
        and the verdict.
    """
    rule = rule or RiskRule()
    out: dict[str, MetricResult] = {}
    for name, res in results.items():  # keep the reference level beside whatever the rule decides
        out[name] = res if res.reference_level is not None else replace(res, reference_level=res.risk_level)
    if rule.rule == "reference":
        return out, _reference_verdict(out, rule)

    driving = [n for n, r in out.items() if _is_privacy(r) and r.evidence is not None
               and r.evidence.drives_verdict and not _nan(r.evidence.p_value)]
    weights = [out[n].evidence.weight for n in driving]  # type: ignore[union-attr]
    adjusted = holm_adjust([out[n].evidence.p_value for n in driving],  # type: ignore[union-attr]
                           weights)
    share = {n: w / sum(weights) for n, w in zip(driving, weights, strict=True)}
    tests: list[dict[str, Any]] = []
    not_assessed: list[str] = []
    for name, res in out.items():
        if not _is_privacy(res):
            continue
        ev = res.evidence
        if ev is None:
            not_assessed.append(name)
            out[name] = replace(res, risk_level="not assessed")
            continue
        if name in driving:
            ev = replace(ev, p_adjusted=adjusted[driving.index(name)])
        ev = replace(ev, level=level_of(ev, rule.materiality, rule.alpha))
        if not ev.drives_verdict or name not in driving:
            out[name] = replace(res, evidence=ev, risk_level=ev.level if ev.drives_verdict
                                else "not assessed")
            if not ev.drives_verdict:
                not_assessed.append(name)
            continue
        out[name] = replace(res, evidence=ev, risk_level=ev.level)
        tests.append(_test_row(name, res, ev))

    counts = {lvl: sum(1 for t in tests if t["level"] == lvl) for lvl in LEVEL_ORDER}
    if not tests:
        level = "inconclusive"
    elif counts["high"] or counts["medium"]:
        level = "high" if counts["high"] else "medium"
    elif counts["low"]:
        level = "low"
    else:
        level = "inconclusive"
    drivers = sorted((t for t in tests if t["level"] == level),
                     key=lambda t: (-(t["effect"] or 0.0), t["p_adjusted"] or 1.0, t["metric"]))
    limit = _detection_limit(out, driving, rule, share)
    return out, Verdict(level, rule, _summary(level, drivers, limit, tests, rule, has_control),
                        tuple(drivers),
                        tuple(tests), limit, tuple(not_assessed), counts)


def _detection_limit(results: Mapping[str, MetricResult], driving: list[str], rule: RiskRule,
                     share: Mapping[str, float]) -> dict[str, Any] | None:
    """The smallest excess the best-powered test detects with ``rule.power`` at the first step of
    the weighted Holm procedure (alpha times the test's share of the weights)."""
    best: tuple[float, str, Evidence, float] | None = None
    for name in driving:
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
             tests: list[dict[str, Any]], rule: RiskRule, has_control: bool | None = None) -> str:
    m = _pct(rule.materiality)
    if not tests:
        if has_control:
            return ("inconclusive: no privacy test ran (the privacy metrics were skipped or not "
                    "selected: see the skipped metrics and their reasons)")
        return ("inconclusive: no privacy test could compare training rows with held-out real rows "
                "(give a control table: real rows held out from training, --control)")
    if level in ("high", "medium"):
        parts = [f"{t['metric']} (training {_pct(t['member'])} vs control {_pct(t['non_member'])}, "
                 f"excess {_pct(t['effect'])}, adjusted p={t['p_adjusted']:.2g})" for t in drivers[:3]]
        what = ("exposes at least the materiality of " + m) if level == "high" else \
            ("exposes training records significantly more than unseen people, below the materiality "
             "of " + m)
        return f"{level}: the release {what} of its training {drivers[0]['unit']}: " + "; ".join(parts)
    tail = f"; {limit['text']}" if limit else ""
    if level == "low":
        n_low = sum(1 for t in tests if t["level"] == "low")
        return (f"low: no test found training records exposed more than unseen people; {n_low} of "
                f"{len(tests)} tests rule out an excess of {m} or more{tail}")
    return (f"inconclusive: no test found an excess, but none could rule out one of {m} (too few "
            f"rows){tail}")


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
