"""The ``anonymeter`` family summary: the largest risk of the trio, banded as SynEval does."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...core.results import Baseline, MetricResult
from ...errors import MetricError
from ...registry import LEVEL_FROM_THRESHOLDS, Context, Param, get_metric
from ...registry import register as _register
from ._common import DIRECTION, FAMILY, NOT_MEANINGFUL, THRESHOLDS

PARTS = ("singling_out_univariate", "singling_out_multivariate", "linkability", "inference")


def _run_part(ctx: Context, name: str, params: dict[str, Any]) -> MetricResult:
    """Run one attack of the trio with ``params`` (defaults for the rest); the attacks memoise
    their results in the run's cache, so a run listing them too computes each once."""
    spec = get_metric(name)
    resolved = spec.resolve_params({k: v for k, v in params.items() if k in spec.param_defaults()})
    return ctx.submetric(spec, resolved, thresholds=dict(ctx.thresholds))


@_register("anonymeter", family=FAMILY, direction=DIRECTION,
           params=[Param("n_attacks", 2000, "attacks per attack type", kind="positive int"),
                   Param("confidence_level", 0.95, "confidence level of every rate and risk", kind="probability"),
                   Param("n_cols", 3, "columns per multivariate singling-out query", kind="positive int"),
                   Param("n_neighbors", 1, "neighbours per half in linkability", kind="positive int")],
           thresholds=THRESHOLDS, optional_needs=("control",),
           description="overall GDPR risk (SynEval): the largest of the singling-out (univariate, "
                       "multivariate), linkability and inference risks",
           risk='informative',
           backend='any',
           knowledge="the release and a person's record; runs the three anonymeter attacks (singling out, linkability, inference)",
           explainer=("anonymeter's overall risk, the largest of its three attacks' risks (informative: "
                      'each attack is tested on its own).'))
def anonymeter_summary(ctx: Context, *, n_attacks: int = 2000, confidence_level: float = 0.95,
                       n_cols: int = 3, n_neighbors: int = 1) -> MetricResult:
    """``overall_risk`` = max of the trio's risks, with ``risk_level`` low / medium / high from the
    thresholds (default medium 0.3, high 0.5)."""
    params = {"n_attacks": n_attacks, "confidence_level": confidence_level, "n_cols": n_cols,
              "n_neighbors": n_neighbors}
    parts: dict[str, dict[str, Any]] = {}
    skipped: dict[str, str] = {}
    results: dict[str, MetricResult] = {}
    for name in PARTS:  # loop over the four attacks
        try:
            r = _run_part(ctx, name, params)
        except MetricError as exc:
            skipped[name] = str(exc)
            continue
        results[name] = r
        parts[name] = {"risk": r.value, "risk_ci": list(r.ci) if r.ci else None,
                       "risk_level": r.risk_level, "meaningful": r.risk_level != NOT_MEANINGFUL}
    if not results:
        raise MetricError("none of the trio could run: " + "; ".join(f"{k}: {v}" for k, v in skipped.items()))
    meaningful = {k: r for k, r in results.items() if r.risk_level != NOT_MEANINGFUL}
    pool = meaningful or results
    worst = max(pool, key=lambda k: pool[k].value or 0.0)
    overall = pool[worst].value
    level = LEVEL_FROM_THRESHOLDS if meaningful else NOT_MEANINGFUL  # the worst meaningful risk
    warnings = []
    if not meaningful:
        warnings.append("every attack was no better than its naive baseline: the overall risk is not "
                        "meaningful (this does not mean there is no risk)")
    elif len(meaningful) < len(results):
        warnings.append("attacks no better than their baseline are left out of the maximum: "
                        + ", ".join(k for k in results if k not in meaningful))
    if skipped:
        warnings.append("skipped: " + "; ".join(f"{k} ({v})" for k, v in skipped.items()))
    details = {"overall_risk": overall, "worst_attack": worst, "parts": parts, "skipped": skipped,
               "thresholds": dict(ctx.thresholds)}
    evs = {k: r.evidence for k, r in results.items() if r.evidence is not None}
    evidence = None
    if evs:  # the strongest attack, Bonferroni-adjusted for the attacks tried
        key = min(evs, key=lambda k: (evs[k].p_value, k))
        # the same test as the trio's own metric: informs here, drives the verdict there (one vote)
        evidence = replace(evs[key], p_value=min(1.0, evs[key].p_value * len(evs)),
                           drives_verdict=False,
                           note=f"strongest of the trio's {len(evs)} attacks ({key}); p-value "
                                "Bonferroni-adjusted for them; the verdict counts that attack's own "
                                "test, not this repeat of it")
    return MetricResult(name=ctx.metric or "anonymeter", family=FAMILY, value=overall, direction=DIRECTION,
                        baseline=Baseline(None, f"maximum of the trio's risks; each is "
                                          f"{pool[worst].details.get('relative_to', '')}"),
                        ci=pool[worst].ci, n=pool[worst].n, risk_level=level,
                        warning="; ".join(warnings) or None, details=details, evidence=evidence)
