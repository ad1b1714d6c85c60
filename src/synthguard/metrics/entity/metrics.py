"""Entity-level metrics (sequential and parent/child data): copies of whole histories and of
subsequences (privacy), and sequence / multi-table fidelity.

They run when the evaluation has an entity key (``evaluate(..., entity_key=...)``,
``--entity-key``); without one they are skipped with that reason. Every n is a number of entities
(or of events / gaps for the pooled fidelity scores, named as such). See ``docs/entity-level.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...core.results import Baseline, Evidence, MetricResult, RecordFlags
from ...data.entities.build import EntityRun
from ...errors import MetricError
from ...registry import Context, Interval, Param, register
from . import fidelity as F
from .copies import member_evidence, simple_level, subsequence_copies_of, whole_sequence_copies

NEEDS_ENTITY = ("needs an entity key: give --entity-key (or entity_key=... / 'entity_key' in the metadata, "
                "or multi-table metadata) so rows are grouped into people")


def _run(ctx: Context) -> EntityRun:
    if ctx.entities is None:
        raise MetricError(NEEDS_ENTITY)
    return ctx.entities


def _copies_result(name: str, run: EntityRun, hits: dict[str, dict[str, np.ndarray]], what: str,
                   confidence_level: float, params: dict[str, Any]) -> MetricResult:
    o = hits["original"]
    k_m, n_m = int(o["copied"].sum()), int(o["eligible"].sum())
    syn_ents = run.ordered["synthetic"].entities
    details: dict[str, Any] = {"unit": "entity", "params": params}
    evidence = None
    if "control" in hits:
        c = hits["control"]
        ev = member_evidence(k_m, n_m, int(c["copied"].sum()), int(c["eligible"].sum()), confidence_level)
        details.update(ev)
        baseline = Baseline(ev["non_member_rate"]["value"], f"control entities whose {what} appears in the "
                            "synthetic data (non-members: real people the generator never saw)",
                            tuple(ev["non_member_rate"]["ci"]))
        level = simple_level(ev)
        # per entity over every training and every control entity (ineligible ones are not
        # flagged); a whole-person copy of an eligible training entity would be flagged
        flags = RecordFlags(o["copied"] & o["eligible"], c["copied"] & c["eligible"],
                            {"person": o["eligible"]})
        evidence = Evidence.from_flags(
            f"share of entities whose {what} appears in some synthetic entity", flags,
            sees=("person",), risk="presence",
            baseline="control entities against the same release",
            confidence_level=confidence_level, unit="entities")
        warning = None
        if level == "high":
            warning = (f"{k_m} of {n_m} training entities ({100 * k_m / max(n_m, 1):.1f} %) have their {what} "
                       f"in the release, against {ev['non_member']['k']} of {ev['non_member']['n']} control "
                       f"entities (one-sided Fisher p = {ev['p_value']:.2g})")
        rate = ev["member_rate"]
    else:
        from ...stats import proportion

        rate = proportion(k_m, n_m, confidence_level)
        details.update({"member": {"k": k_m, "n": n_m}, "non_member": None, "member_rate": rate,
                        "p_value": None})
        baseline = Baseline(None, "no baseline: give a control set of held-out entities (--control) to tell "
                                  "copies from chance agreement")
        level = "unknown"
        warning = None
    copied_syn = int(np.isin(hits["synthetic"].get("ids", np.zeros(0)),
                             hits["original"].get("ids", np.zeros(0))[o["copied"]]).sum()) \
        if "ids" in hits["synthetic"] else None
    details["n_entities"] = {r: int(len(run.ordered[r].entities)) for r in hits}
    details["n_eligible"] = {r: int(h["eligible"].sum()) for r, h in hits.items()}
    if copied_syn is not None:
        details["synthetic_entities_copying_a_member"] = {"k": copied_syn, "n": int(len(syn_ents))}
    return MetricResult(name, "privacy", rate["value"], "lower is safer", baseline, tuple(rate["ci"]), n_m,
                        level, warning, details, evidence=evidence)


_CONF = Param("confidence_level", 0.95, "level of the Wilson and Newcombe intervals", "probability")


@register(
    "entity_copies", family="privacy", direction="lower is safer", optional_needs=("control",), default=False,
    params=[Param("round_digits", None, "round numeric values and time gaps to this many significant digits "
                  "before comparing (near copies); null = exact", int, interval=Interval(1, 15)),
            Param("min_events", 2, "only entities with at least this many events count (a one-event history "
                  "is one row: exact_matches and dcr on the entity table cover it)", "positive int"),
            Param("time", "absolute", "'absolute': the sequences' times must agree too; 'relative': only the "
                  "gaps between events (catches copies shifted in time)", str, choices=("absolute", "relative")),
            _CONF],
    description="share of training entities whose whole event sequence (same events, same order, same gaps) "
                "is the sequence of some synthetic entity, against the same share for control entities",
    risk='presence',
    knowledge=("a person's whole history (every row of the person); looks for all of it in the "
               'release'),
    sees=('person',),
    order=400,
    entity_only=True,
    explainer=('Whole persons (all their rows) copied into the release, training persons against '
               'held-out persons.')
)
def entity_copies(ctx: Context, *, round_digits: int | None = None, min_events: int = 2,
                  time: str = "absolute", confidence_level: float = 0.95) -> MetricResult:
    """Whole-sequence copies, members vs non-members (see :mod:`synthguard.metrics.entity.copies`)."""
    run = _run(ctx)
    hits = whole_sequence_copies(run, round_digits=round_digits, min_events=min_events, time=time)
    return _copies_result("entity_copies", run, hits, "whole sequence", confidence_level,
                          {"round_digits": round_digits, "min_events": min_events, "time": time})


@register(
    "subsequence_copies", family="privacy", direction="lower is safer", optional_needs=("control",),
    default=False,
    params=[Param("length", 3, "window length L: copies of L consecutive events count", "positive int"),
            Param("anchor", "any", "'any' window of the entity, or only its first L events ('prefix')", str,
                  choices=("any", "prefix")),
            Param("round_digits", None, "round numeric values and time gaps to this many significant digits "
                  "(near copies); null = exact", int, interval=Interval(1, 15)),
            Param("time", "relative", "'relative': windows compared by events and gaps; 'absolute': the "
                  "window's start time must agree too", str, choices=("absolute", "relative")),
            _CONF],
    description="share of training entities with L consecutive events (events and gaps) found as consecutive "
                "events of some synthetic entity, against the same share for control entities",
    risk='presence',
    knowledge="a person's history; looks for long runs of its events in the release",
    order=410,
    sees=('person',),
    entity_only=True,
    explainer="Long runs of a person's events copied into the release."
)
def subsequence_copies(ctx: Context, *, length: int = 3, anchor: str = "any", round_digits: int | None = None,
                       time: str = "relative", confidence_level: float = 0.95) -> MetricResult:
    """Subsequence (window) copies, members vs non-members."""
    run = _run(ctx)
    hits = subsequence_copies_of(run, length=length, anchor=anchor, round_digits=round_digits, time=time)
    what = f"first {length} events" if anchor == "prefix" else f"{length} consecutive events"
    return _copies_result("subsequence_copies", run, hits, what, confidence_level,
                          {"length": length, "anchor": anchor, "round_digits": round_digits, "time": time})


def _fidelity(name: str, ctx: Context, score: Callable[[EntityRun, str], dict[str, Any]], what: str,
              n_key: str = "entities") -> MetricResult:
    run = _run(ctx)
    res = score(run, "synthetic")
    if res["score"] != res["score"]:
        raise MetricError(res.get("reason") or f"{name} is undefined on these inputs ({what})")
    details: dict[str, Any] = {"unit": "entity", "synthetic": res}
    if "control" in run.ordered:
        base = score(run, "control")
        details["control"] = base
        baseline = Baseline(base["score"], "control vs original: what real held-out entities score (the "
                                           "ceiling a perfect generator reaches at this size)")
    else:
        baseline = Baseline(None, "no baseline: give a control set of held-out entities to see the ceiling")
    n = int(len(run.ordered["synthetic"].entities))
    return MetricResult(name, "fidelity", res["score"], "higher is better", baseline, None, n, "unknown",
                        None, details)


@register("sequence_length", family="fidelity", direction="higher is better", optional_needs=("control",),
          default=False, description="KSComplement of the sequence-length distributions (events per entity)",
                         order=420,
                         entity_only=True)
def sequence_length(ctx: Context) -> MetricResult:
    """Sequence-length distribution, synthetic vs original (control vs original as ceiling)."""
    return _fidelity("sequence_length", ctx, F.length_score, "lengths")


@register("inter_event_time", family="fidelity", direction="higher is better", optional_needs=("control",),
          default=False, description="KSComplement of the times between consecutive events of an entity",
                         order=430,
                         entity_only=True)
def inter_event_time(ctx: Context) -> MetricResult:
    """Inter-event time distribution (needs a sequence key)."""
    run = _run(ctx)
    if run.data.spec.sequence_key is None:
        raise MetricError("needs a sequence key (a time or order column): give --sequence-key")
    return _fidelity("inter_event_time", ctx, F.gap_score, "gaps")


@register("category_shares", family="fidelity", direction="higher is better", optional_needs=("control",),
          default=False, description="within-entity coherence: KSComplement of each person's share of events "
                                     "in each category, mean over categories and columns",
                         order=440,
                         entity_only=True)
def category_shares(ctx: Context) -> MetricResult:
    """Within-entity category shares."""
    if not F.categorical_event_columns(_run(ctx)):
        raise MetricError("no categorical event column")
    return _fidelity("category_shares", ctx, F.share_score, "shares")


@register("transitions", family="fidelity", direction="higher is better", optional_needs=("control",),
          default=False, description="1 - TVD of the (event, next event) pair distribution within entities",
                         order=450,
                         entity_only=True)
def transitions(ctx: Context) -> MetricResult:
    """Transitions between consecutive events."""
    if not F.categorical_event_columns(_run(ctx)):
        raise MetricError("no categorical event column")
    return _fidelity("transitions", ctx, F.transition_score, "transitions")


@register("context_sequence_dependence", family="fidelity", direction="higher is better",
          optional_needs=("control",), default=False,
          description="pair trends between context columns and sequence summaries (length, span, means, "
                      "first events) on the entity table",
          order=460,
          entity_only=True)
def context_sequence_dependence(ctx: Context) -> MetricResult:
    """Context-to-sequence dependence."""
    if _run(ctx).context is None:
        raise MetricError("needs a context table (--original-context ...) or context_columns")
    return _fidelity("context_sequence_dependence", ctx, F.context_dependence_score, "pairs")


@register("cardinality_shape", family="fidelity", direction="higher is better", optional_needs=("control",),
          default=False, description="SDMetrics CardinalityShapeSimilarity: KSComplement of children per parent",
                         order=470,
                         entity_only=True)
def cardinality_shape(ctx: Context) -> MetricResult:
    """Cardinality shape of the parent/child relation."""
    if _run(ctx).context is None:
        raise MetricError("needs a parent (context) table")
    return _fidelity("cardinality_shape", ctx, F.cardinality_score, "cardinality")


@register("intertable_trends", family="fidelity", direction="higher is better", optional_needs=("control",),
          default=False,
          params=[Param("real_correlation_threshold", 0.5, "SDMetrics' threshold on the real |r|", float,
                        interval=Interval(0, 1, closed="left")),
                  Param("real_association_threshold", 0.3, "SDMetrics' threshold on the real Cramer's V",
                        float, interval=Interval(0, 1, closed="left"))],
          description="SDMetrics Intertable Trends: Column Pair Trends between parent and child columns",
          order=480,
          entity_only=True)
def intertable_trends(ctx: Context, *, real_correlation_threshold: float = 0.5,
                      real_association_threshold: float = 0.3) -> MetricResult:
    """Parent/child column pair trends on the denormalised table."""
    if _run(ctx).context is None:
        raise MetricError("needs a parent (context) table")

    def score(run: EntityRun, role: str) -> dict[str, Any]:
        return F.intertable_score(run, role, real_correlation_threshold=real_correlation_threshold,
                                  real_association_threshold=real_association_threshold)

    return _fidelity("intertable_trends", ctx, score, "no parent/child pair passes the real-trend thresholds")


@register("multi_table_quality", family="fidelity", direction="higher is better", optional_needs=("control",),
          default=False, aliases=("sdmetrics_multi_table_qualityreport",),
          params=[Param("real_correlation_threshold", 0.5, "SDMetrics' threshold on the real |r|", float,
                        interval=Interval(0, 1, closed="left")),
                  Param("real_association_threshold", 0.3, "SDMetrics' threshold on the real Cramer's V",
                        float, interval=Interval(0, 1, closed="left"))],
          description="SDMetrics multi-table QualityReport: mean of Column Shapes, Column Pair Trends (pooled "
                      "over the parent and child tables), Cardinality and Intertable Trends",
          order=490,
          entity_only=True)
def multi_table_quality(ctx: Context, *, real_correlation_threshold: float = 0.5,
                        real_association_threshold: float = 0.3) -> MetricResult:
    """The multi-table quality report of the parent (context) and child (event) tables."""
    _run(ctx)

    def score(run: EntityRun, role: str) -> dict[str, Any]:
        return F.multi_table_quality_score(run, role, real_correlation_threshold=real_correlation_threshold,
                                           real_association_threshold=real_association_threshold)

    return _fidelity("multi_table_quality", ctx, score, "no column to compare")
