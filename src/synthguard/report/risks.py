"""The decision block's data: the verdict's risk rows as the renderers read them, and the facts the
report counts beside the verdict (copies, rows for review, the control size a decision needs).

The levels and their summaries are the verdict's (:mod:`synthguard.run.verdict`); the sentences
around them are :mod:`synthguard.run.wording`'s. Nothing here decides a level or writes a sentence.
A report whose verdict states no risks (the reference rule) shows each risk as not assessed.
"""

from __future__ import annotations

import math
from typing import Any

from ..core.format import pct
from ..core.report_model import RiskRow
from ..run.wording import NOT_ASSESSED, interval

__all__ = ["LEVEL_RANK", "RISK_ORDER", "card_of", "control_size_needed", "copy_metric",
           "evidence_levels", "interval", "knowledge_of", "pct", "risk_of", "risk_rows",
           "verbatim_release_rows"]

RISK_ORDER = ("presence", "singling_out", "linkability", "inference")
LEVEL_RANK = {"high": 4, "medium": 3, "inconclusive": 2, "low": 1, "not assessed": 0}


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


def _model(report: Any) -> Any:
    return getattr(report, "model", report)


def evidence_levels(report: Any) -> list[float]:
    """The confidence levels of the verdict's tests' evidence (the level of each one-sided bound
    of the intervals the renderers print beside them), in the tests' order."""
    model = _model(report)
    results = {e.name: e.result for e in model.metrics if e.result is not None}
    out = []
    for t in getattr(model, "tests", ()) or ():
        res = results.get(t.metric)
        if res is not None and res.evidence is not None:
            out.append(float(res.evidence.confidence_level))
    return out


def risk_rows(report: Any) -> list[RiskRow]:
    """The verdict's four risk rows (presence, singling out, linkability, inference); a verdict
    that states none gives each risk as not assessed.

    Examples
    --------
    >>> from synthguard.core.report_model import ReportModel
    >>> from synthguard.run.verdict import RiskRule, Verdict
    >>> m = ReportModel({}, Verdict("high", RiskRule(rule="reference"), "s"), ())
    >>> [r.level for r in risk_rows(m)]
    ['not assessed', 'not assessed', 'not assessed', 'not assessed']
    """
    from ..run.verdict import RISK_TITLES

    rows = list(_model(report).risks)
    if rows:
        return rows
    return [RiskRow(risk=r, title=RISK_TITLES[r][0], criterion=RISK_TITLES[r][1], tests=(),
                    detection_limits={}, effect=None, effect_ci=None, metric=None, settle=None,
                    member=None, non_member=None, unresolved=(), level="not assessed",
                    summary=NOT_ASSESSED) for r in RISK_ORDER]


def _nan(x: Any) -> bool:
    try:
        return math.isnan(float(x))
    except (TypeError, ValueError):
        return True


def copy_metric(report: Any) -> Any:
    """The first metric entry whose card counts the release rows that are verbatim training rows
    (:attr:`~synthguard.registry.RecordsCard.count`), ``None`` when none ran."""
    for e in _model(report).metrics:
        card = getattr(card_of(e.metric or e.name), "records", None)
        if card is not None and card.count is not None and e.result is not None:
            return e
    return None


def verbatim_release_rows(report: Any) -> tuple[int, int] | None:
    """(release rows that are verbatim training rows, release rows), as the copy metric's card
    counts them."""
    e = copy_metric(report)
    if e is None:
        return None
    return card_of(e.metric or e.name).records.count(e.result.to_dict())


def control_size_needed(report: Any, target: float = 0.01, alpha: float | None = None,
                        alpha_share: float = 0.1) -> int | None:
    """Training and control rows (each) for a detection limit of ``target`` (1 %) at 80 % power,
    against the training data's own duplication rate (the copy metric's headline reference):
    bisection on n with :func:`synthguard.stats.detection_limit`. The test gets ``alpha_share`` of
    the run's alpha (its share of the false-alarm budget when about ten tests are adjusted
    together).

    Examples
    --------
    >>> from synthguard.core.report_model import ReportModel
    >>> from synthguard.run.verdict import RiskRule, Verdict
    >>> 1000 < control_size_needed(ReportModel({}, Verdict("low", RiskRule(), "s"), ())) < 5000
    True
    """
    from ..stats import detection_limit

    model = _model(report)
    a = float(alpha if alpha is not None else getattr(model.verdict.rule, "alpha", 0.05))
    a *= alpha_share
    e = copy_metric(model)
    head = e.result.headline if e is not None else None
    p0 = float(head.ceiling) if head is not None and head.ceiling is not None else 0.0

    def limit(n: int) -> float:
        x = detection_limit(n, n, p0, alpha=a, power=0.8)
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
