"""The decision block: one line per risk (presence, singling out, linkability, inference).

The verdict states its risks in ``Verdict.to_dict()["risks"]`` (see ``docs/user-guide.md``). For a
report without that key, :func:`risks_of` builds the same shape from the verdict's tests, grouped by
the risk their metric's card names; it is a fallback only, used when ``"risks"`` is absent. The plain sentences are written from the numbers, never from metric names alone.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

RISK_ORDER = ("presence", "singling_out", "linkability", "inference")
TITLES = {"presence": "Presence of training records", "singling_out": "Singling out",
          "linkability": "Linkability", "inference": "Attribute inference"}
CRITERIA = {
    "presence": "Can one tell that a person's record was in the training data (membership)?",
    "singling_out": "WP216 criterion 1: can one person's record be isolated in the release?",
    "linkability": "WP216 criterion 2: can two records about the same person be linked?",
    "inference": "WP216 criterion 3: can a person's hidden attribute be deduced from the release?",
}
LEVEL_RANK = {"high": 4, "medium": 3, "inconclusive": 2, "low": 1, "not assessed": 0}
#: Reference cut-offs named when there is no control (SynEval's copy rate; anonymeter's risks).
REFERENCE_CUTOFFS = "SynEval: more than 5 % of release rows copied is high; anonymeter: a risk " \
                    "above 0.3 is medium, above 0.5 high"


def risk_of(metric: str) -> str | None:
    """The risk a metric speaks to, from its card (``None`` when no card names one of the four)."""
    from ..registry import info_of

    info = info_of(metric)
    risk = info.risk if info is not None else None
    return risk if risk in RISK_ORDER else None


def card_of(metric: str | None) -> Any:
    """The metric's card (:class:`~synthguard.registry.MetricSpec`), ``None`` when none declares it."""
    from ..registry import card_of as _card

    return _card(metric)


def knowledge_of(metric: str) -> str:
    """What the metric's attacker knows and does, from its card."""
    from ..registry import info_of

    info = info_of(metric)
    return str((info.card.get("knowledge") if info is not None else "") or
               "the release and a target record")


def pct(x: Any, digits: int = 1) -> str:
    """``0.4015`` -> ``"40.1 %"``; small shares keep two significant digits (``"0.34 %"``)."""
    if x is None:
        return "n/a"
    try:
        v = 100.0 * float(x)
    except (TypeError, ValueError):
        return "n/a"
    if math.isnan(v):
        return "n/a"
    if v == 0:
        return "0 %"
    if abs(v) < 1:
        return f"{v:.2g} %"
    return f"{v:.{digits}f} %"


def interval(ci: Any) -> str:
    if not isinstance(ci, Sequence) or len(ci) != 2 or ci[0] is None or ci[1] is None:
        return "no interval"
    return f"{pct(ci[0])} to {pct(ci[1])}"


def headline_limit(r: Mapping[str, Any]) -> dict[str, Any] | None:
    """A risk's stated detection limit, defined as the verdict's (``Verdict.detection_limit``):
    the largest over the leak types the risk answers for; ``value`` is ``None`` ("not measured")
    when one of them has no limit. ``None`` when the risk states no limit at all.

    Examples
    --------
    >>> headline_limit({"detection_limits": {"exact": {"value": 0.004}, "near": {"value": 0.02}}})
    {'value': 0.02, 'leak': 'near', 'text': '2.0 %'}
    >>> headline_limit({"detection_limits": {"exact": {"value": 0.004}, "rare": {"value": None}}})
    {'value': None, 'leak': 'rare', 'text': 'not measured'}
    """
    lims = {t: x for t, x in (r.get("detection_limits") or {}).items() if isinstance(x, Mapping)}
    if not lims:
        return None
    missing = [t for t, x in lims.items() if x.get("value") is None or _nan(x.get("value"))]
    if missing:
        return {"value": None, "leak": missing[0], "text": "not measured"}
    t_max = max(lims, key=lambda t: float(lims[t]["value"]))
    v = float(lims[t_max]["value"])
    return {"value": v, "leak": t_max, "text": pct(v)}


def _nan(x: Any) -> bool:
    try:
        return math.isnan(float(x))
    except (TypeError, ValueError):
        return True


def risks_of(report: Any) -> list[dict[str, Any]]:
    """The decision block's risks of ``report`` (a :class:`Report` or its JSON dict).

    Returns the verdict's own ``"risks"`` when present, else the same shape built from its tests.
    Every risk carries ``risk, title, criterion, level, effect, effect_ci, metric,
    detection_limits, tests, summary, settle``; the fallback adds ``member``, ``non_member``.

    Examples
    --------
    >>> risks_of({"verdict": {"tests": [], "level": "inconclusive"}, "metrics": {}})[0]["risk"]
    'presence'
    """
    d = report if isinstance(report, Mapping) else report.to_dict()
    v = d.get("verdict") or {}
    if isinstance(v.get("risks"), list) and v["risks"]:
        materiality = float(v.get("materiality") or 0.01)
        has_control = "control" in (d.get("inputs") or {})
        out = []
        for r in v["risks"]:
            row = dict(r)
            if row.get("level") in ("high", "medium"):  # the action, in plain words
                row["summary"], _ = _sentence(row, d, materiality, has_control)
            out.append(row)
        return out
    return fallback_risks(d)


def fallback_risks(d: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Today's verdict (tests without a risk) grouped into the four risks by metric name."""
    v = d.get("verdict") or {}
    metrics = d.get("metrics") or {}
    materiality = float(v.get("materiality") or 0.01)
    has_control = "control" in (d.get("inputs") or {})
    out = []
    for risk in RISK_ORDER:
        tests = [t for t in v.get("tests") or [] if risk_of(str(t.get("metric"))) == risk]
        ran = [n for n, m in metrics.items() if risk_of(n) == risk and m.get("status") == "ok"]
        row: dict[str, Any] = {"risk": risk, "title": TITLES[risk], "criterion": CRITERIA[risk],
                               "level": "not assessed", "effect": None, "effect_ci": None,
                               "metric": None, "member": None, "non_member": None,
                               "detection_limits": {}, "tests": [t["metric"] for t in tests],
                               "informative": [n for n in ran if n not in {t["metric"] for t in tests}],
                               "summary": "", "settle": None}
        if tests:
            levels = {str(t.get("level")) for t in tests}
            # today's verdict rule, per risk: any alarm decides; else one test ruling out suffices
            level = ("high" if "high" in levels else "medium" if "medium" in levels
                     else "low" if "low" in levels else "inconclusive")
            at = [t for t in tests if t.get("level") == level]
            # the driver: the largest excess at that level (ties: the smaller adjusted p)
            drv = sorted(at, key=lambda t: (-(t.get("effect") or 0.0), t.get("p_adjusted") or 1.0,
                                            str(t["metric"])))[0]
            lim = [t for t in tests if not _nan(t.get("detection_limit"))]
            best = min(lim, key=lambda t: float(t["detection_limit"])) if lim else None
            row.update(level=level, effect=drv.get("effect"), effect_ci=drv.get("effect_ci"),
                       metric=drv["metric"], member=drv.get("member"),
                       non_member=drv.get("non_member"))
            if best is not None:
                row["detection_limits"] = {"any": {
                    "value": best["detection_limit"],
                    "text": f"a leak of {pct(best['detection_limit'])} of the training records "
                            f"would have been seen with 80 % power by {best['metric']}"}}
        row["summary"], row["settle"] = _sentence(row, d, materiality, has_control)
        out.append(row)
    return out


def verbatim_release_rows(d: Mapping[str, Any]) -> tuple[int, int] | None:
    """(release rows that are verbatim training rows, release rows), from the first metric of the
    report whose card counts them (:attr:`~synthguard.registry.RecordsCard.count`)."""
    for name, entry in (d.get("metrics") or {}).items():
        card = getattr(card_of((entry or {}).get("metric") or name), "records", None)
        res = (entry or {}).get("result")
        if card is not None and card.count is not None and res:
            got = card.count(res)
            if got is not None:
                return got
    return None


def _copy_result(d: Mapping[str, Any]) -> Mapping[str, Any]:
    """The JSON result of the metric whose card counts verbatim release rows (empty if none ran)."""
    for name, entry in (d.get("metrics") or {}).items():
        card = getattr(card_of((entry or {}).get("metric") or name), "records", None)
        if card is not None and card.count is not None and (entry or {}).get("result"):
            return entry["result"]
    return {}


def _sentence(r: Mapping[str, Any], d: Mapping[str, Any], materiality: float,
              has_control: bool) -> tuple[str, str | None]:
    """The risk's plain sentence and, when undecided, what would settle it."""
    level, risk = r["level"], r["risk"]
    if level == "not assessed":
        if r.get("informative"):
            return (f"No test of this risk compared training records with held-out people; "
                    f"{', '.join(r['informative'])} ran for information only.",
                    None if has_control else "hold out real rows as a control (--control)")
        return ("Not assessed: no test of this risk ran in this configuration.",
                "add its tests (e.g. the 'privacy' preset)")
    what = {"presence": "of the training records can be recognised in the release",
            "singling_out": "of the training records can be singled out",
            "linkability": "of the training records can be linked",
            "inference": "of the training records have a hidden attribute guessed"}[risk]
    nums = (f"{pct(r.get('member'))} {what}, against {pct(r.get('non_member'))} of held-out "
            f"people: {pct(r.get('effect'))} exposed beyond chance ({interval(r.get('effect_ci'))}, "
            f"{r.get('metric')})")
    copies = verbatim_release_rows(d)
    if level in ("high", "medium"):
        act = "do not publish as is" if level == "high" else "fix before publishing"
        extra = ""
        if risk == "presence" and copies and copies[0]:
            extra = (f"; {copies[0]} of the {copies[1]} release rows ({pct(copies[0] / copies[1])}) "
                     "are verbatim training rows: drop them (--records-out lists every one)")
        elif risk == "singling_out":
            extra = "; coarsen the columns named under 'What to do'"
        return f"{nums}: {act}{extra}.", None
    if level == "low":
        return (f"{nums}; a leak of {pct(materiality)} or more is ruled out: no action needed.",
                None)
    return (f"{nums}; a leak of {pct(materiality)} cannot be ruled out with this many rows.",
            "more training and control rows (the detection limit must fall below the materiality)")


def control_size_needed(d: Mapping[str, Any], target: float = 0.01,
                        alpha_share: float = 0.1) -> int | None:
    """Training and control rows (each) for a detection limit of ``target`` (1 %) at 80 % power,
    against the training data's own duplication rate: bisection on n with
    :func:`synthguard.stats.detection_limit`. The test gets ``alpha_share`` of the run's alpha
    (its share of the false-alarm budget when about ten tests are adjusted together).

    Examples
    --------
    >>> 1000 < control_size_needed({"verdict": {"alpha": 0.05}}) < 5000
    True
    """
    from ..stats import detection_limit

    v = d.get("verdict") or {}
    alpha = float(v.get("alpha") or 0.05) * alpha_share
    res = _copy_result(d)
    dup = res.get("original_duplication_rate")
    p0 = float(dup.get("value") or 0.0) if isinstance(dup, Mapping) else 0.0

    def limit(n: int) -> float:
        x = detection_limit(n, n, p0, alpha=alpha, power=0.8)
        return float("inf") if math.isnan(x) else x

    lo, hi = 10, 10
    while limit(hi) > target:
        lo, hi = hi, hi * 2
        if hi > 10_000_000:
            return None
    while hi - lo > max(1, lo // 100):  # 1 % precision is enough to plan a hold-out
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if limit(mid) <= target else (mid, hi)
    return int(hi)


def no_control_reading(d: Mapping[str, Any]) -> str | None:
    """What a run without a control can still say (copies vs the training data's own duplication,
    against the reference cut-offs), or ``None`` when a control was given."""
    if "control" in (d.get("inputs") or {}):
        return None
    res = _copy_result(d)
    rate, dup = res.get("synthetic_match_rate"), res.get("original_duplication_rate")
    parts = []
    if isinstance(rate, Mapping) and rate.get("n"):
        parts.append(f"{rate.get('k')} of the {rate.get('n')} release rows "
                     f"({pct(rate.get('value'))}) are verbatim training rows")
        if isinstance(dup, Mapping):
            parts.append(f"while {pct(dup.get('value'))} of the training rows repeat another "
                         "training row (what a generator reproducing the data's own duplicates "
                         "would show)")
    text = (", ".join(parts) + ". ") if parts else ""
    return (text + f"Reference cut-offs ({REFERENCE_CUTOFFS}) read these numbers without a "
            "baseline; no decision on a 1 % leak is possible without real rows held out "
            "from training.")
