"""The one place a metric function runs, and the one place a run's entries become a report's data.

:func:`execute` is the only caller of a registered metric's function (``spec.func``): the runner
(:func:`synthguard.evaluate`, :func:`synthguard.compare`, the SynEval facade), the anonymeter,
SDMetrics and PETsARD facades, composite metrics (through :meth:`Context.submetric
<synthguard.registry.Context.submetric>`) and the Dask path all go through it, so every metric gets
the same treatment: its own random stream (the context's ``metric``), the missing-inputs check in one
wording, the disk-cache lookup, a status ``ok`` / ``skipped`` / ``error`` with its reason, and the time
it took. ``tests/unit/run/test_executor.py`` fails when any other module calls a metric function.

:func:`build_report` turns the entries of a run into plain data (:class:`RunOutput`: header,
entries, results, verdict): row numbers of records go back to the input rows, and the verdict is
decided once (:func:`synthguard.run.verdict.assess`). :mod:`synthguard.api` wraps it into a
:class:`~synthguard.report.Report`.
"""

from __future__ import annotations

import dataclasses
import time
import traceback
from collections.abc import Mapping
from typing import Any

from ..core.results import MetricResult
from ..errors import ConfigError, MetricError, MetricUnavailable
from ..registry import ORIGINAL_ROWS_NEEDED, Context, MetricSpec, finalise, missing_inputs

#: What a metric lacks, in the one wording every path uses ("needs " + these, joined by "and").
NEEDS_WORDING = {
    "control": "a control table (real rows held out from training: --control)",
    "original": ORIGINAL_ROWS_NEEDED,
    "generator": "a generator (use 'synthguard attack')",
}


def missing_reason(missing: list[str] | tuple[str, ...]) -> str:
    """The skip reason of a metric lacking the inputs ``missing`` (roles or ``"generator"``).

    Examples
    --------
    >>> missing_reason(["control"])
    'needs a control table (real rows held out from training: --control)'
    """
    return "needs " + " and ".join(NEEDS_WORDING.get(m, m) for m in missing)


@dataclasses.dataclass(frozen=True)
class Entry:
    """One metric of a run: what ran, how it ended and its result.

    ``name`` is the run's name (a named run may run one registered ``metric`` several times);
    ``status`` is ``"ok"``, ``"skipped"`` (missing inputs, or a :class:`MetricError` /
    :class:`ConfigError` of the metric: ``reason`` says why) or ``"error"`` (any other exception:
    ``reason`` and ``traceback``); ``result`` is ``None`` unless ``ok``. ``error`` keeps the
    exception (not serialised) so that facades can raise it as the metric did.
    """

    name: str
    metric: str
    params: Mapping[str, Any]
    status: str = "ok"
    reason: str | None = None
    seconds: float = 0.0
    result: MetricResult | None = None
    cached: bool = False
    unit: str | None = None
    traceback: str | None = None
    error: BaseException | None = dataclasses.field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The report entry (``Report`` reads ``status``, ``reason``, ``params``, ``seconds`` and,
        when set, ``metric``, ``unit``, ``cached``)."""
        out: dict[str, Any] = {"params": self.params, "status": self.status, "reason": self.reason}
        if self.metric != self.name:
            out["metric"] = self.metric
        if self.unit is not None:
            out["unit"] = self.unit
        if self.cached:
            out["cached"] = True
        if self.traceback is not None:
            out["traceback"] = self.traceback
        out["seconds"] = self.seconds
        return out

    def result_or_raise(self) -> MetricResult:
        """The result; a skipped metric raises :class:`MetricError` (its reason) or the
        :class:`ConfigError` it raised, a failed one raises its exception."""
        if self.result is not None:
            return self.result
        if self.error is not None:
            raise self.error
        raise MetricError(self.reason or f"metric {self.name!r} did not run")


def execute(spec: MetricSpec, ctx: Context, params: Mapping[str, Any], *, name: str | None = None,
            thresholds: Mapping[str, float] | None = None, cache: Any = None,
            unit: str | None = None) -> Entry:
    """Run one metric and return its :class:`Entry` (never raises for the metric's own failures).

    Parameters
    ----------
    spec : MetricSpec
        The registered metric (:func:`synthguard.registry.get_metric`).
    ctx : Context
        The run's context. Unless it is already this metric's (``ctx.metric == spec.name``, as
        :meth:`Context.for_metric` makes it), it becomes so here: the metric's own random stream and
        thresholds (the defaults overlaid with ``thresholds``).
    params : mapping
        Validated parameters (:meth:`MetricSpec.resolve_params`).
    name : str, optional
        The run's name of the metric (a named run); the result carries it. Default ``spec.name``.
    thresholds : mapping, optional
        Risk thresholds overriding the metric's defaults.
    cache : DiskCache, optional
        Results are read from and written to it (not for metrics that need a generator).
    unit : str, optional
        ``"entity"``: the context holds one row per entity; the evidence is marked so.

    Returns
    -------
    Entry
        Status ``ok`` with the result, ``skipped`` with the reason, or ``error`` with the
        exception's text and traceback; ``seconds`` it took.

    Examples
    --------
    >>> import pandas as pd
    >>> from synthguard.registry import Context, get_metric
    >>> o = pd.DataFrame({"a": range(40), "b": ["x", "y"] * 20})
    >>> spec = get_metric("exact_matches")
    >>> e = execute(spec, Context.from_frames(o, o.head(10)), spec.resolve_params({}))
    >>> e.status, e.result.value
    ('ok', 1.0)
    >>> execute(get_metric("near_copies"), Context.from_frames(o, o), {}).reason
    'needs a control table (real rows held out from training: --control)'
    """
    name = name or spec.name
    t0 = time.perf_counter()
    params = dict(params)
    missing = missing_inputs(spec, ctx)
    if missing:
        return Entry(name, spec.name, params, "skipped", missing_reason(missing),
                     _since(t0), unit=unit)
    mctx = ctx if ctx.metric == spec.name and thresholds is None else ctx.for_metric(spec, thresholds)
    if mctx.executor is None:  # a composite metric runs its parts through here too
        mctx = dataclasses.replace(mctx, executor=_submetric)
    key = None
    if cache is not None and "generator" not in spec.needs and ctx.generator is None:
        key = cache.key(mctx.tables, spec.name, params, mctx.seed, mctx.thresholds, spec.func)
        hit = cache.get(key)
        if hit is not None:
            res = _finish(spec, mctx, hit, unit)
            res = res if spec.name == name else dataclasses.replace(res, name=name)
            return Entry(name, spec.name, params, result=res, cached=True, unit=unit,
                         seconds=_since(t0))
    try:
        res = spec.func(mctx, **params)
        if not isinstance(res, MetricResult):
            raise TypeError(f"metric {name!r} returned {type(res).__name__}, not MetricResult")
        if key is not None:  # as the metric returned it: what the registration adds is applied anew
            cache.put(key, res)
        res = _finish(spec, mctx, res, unit)
        if spec.name != name:  # a named run: the result carries its run name
            res = dataclasses.replace(res, name=name)
    except (MetricError, ConfigError) as exc:
        return Entry(name, spec.name, params, "skipped", str(exc), _since(t0), unit=unit, error=exc)
    except Exception as exc:  # noqa: BLE001 - one failing metric must not sink the report
        return Entry(name, spec.name, params, "error", f"{type(exc).__name__}: {exc}", _since(t0),
                     unit=unit, traceback=traceback.format_exc(limit=8), error=exc)
    return Entry(name, spec.name, params, result=res, unit=unit, seconds=_since(t0))


def _finish(spec: MetricSpec, ctx: Context, res: MetricResult, unit: str | None) -> MetricResult:
    """The result as the run reports it: :func:`~synthguard.registry.finalise` (the level from the
    declared thresholds, the declared weight) and, on one row per entity, the evidence's unit."""
    res = finalise(spec, ctx, res)
    if unit == "entity" and res.evidence is not None and res.evidence.unit != "entities":
        # the metric ran on one row per entity
        res = dataclasses.replace(res, evidence=dataclasses.replace(res.evidence, unit="entities"))
    return res


def run_metric(spec: MetricSpec, ctx: Context, params: Mapping[str, Any]) -> MetricResult:
    """Run one metric the way a library call does (the facades): its result, with record row
    numbers of the input rows; raises :class:`MetricError` when inputs are missing and whatever the
    metric raised when it failed.

    Examples
    --------
    >>> import pandas as pd
    >>> from synthguard.registry import Context, get_metric
    >>> o = pd.DataFrame({"a": range(40), "b": ["x", "y"] * 20})
    >>> run_metric(get_metric("exact_matches"), Context.from_frames(o, o.head(10)), {}).value
    1.0
    """
    res = execute(spec, ctx, params).result_or_raise()
    if res.records:
        from ..data.tables import input_row_records

        # row numbers from the tables' canonical content order back to the input rows
        res = dataclasses.replace(res, records=input_row_records(res.records, ctx.tables,
                                                                 _plain_row(spec.name)))
    return res


def _submetric(spec: MetricSpec, ctx: Context, params: Mapping[str, Any],
               thresholds: Mapping[str, float] | None) -> MetricResult:
    """A part of a composite metric (:meth:`Context.submetric`): its result, or the exception."""
    return execute(spec, ctx, params, thresholds=thresholds).result_or_raise()


@dataclasses.dataclass(frozen=True)
class RunOutput:
    """A run as plain data: ``header``, ``entries`` (name -> report entry), ``results`` (name ->
    :class:`MetricResult` of the metrics that ran, risk levels set) and the ``verdict``.
    :func:`synthguard.api.report_of` makes the :class:`~synthguard.report.Report` of it."""

    header: dict[str, Any]
    entries: dict[str, dict[str, Any]]
    results: dict[str, MetricResult]
    verdict: Any


def build_report(header: Mapping[str, Any], entries: Mapping[str, Entry], rule: Any = None, *,
                 tables: Any = None, has_control: bool | None = None, seed: int | None = 0,
                 metrics: Mapping[str, str] | None = None,
                 unavailable: Mapping[str, str] | None = None, levels_only: bool = False) -> RunOutput:
    """The report data of a run's entries, with the verdict.

    Parameters
    ----------
    header : mapping
        The report's header (version, seed, inputs, schema, config...).
    entries : mapping name -> Entry
        In the report's order.
    rule : RiskRule, optional
        How levels and the verdict are decided (default :class:`~synthguard.run.verdict.RiskRule`).
    tables : Tables or DistTables, optional
        The run's tables: record row numbers go from their canonical order back to the input rows.
    has_control, seed, metrics, levels_only
        As in :func:`synthguard.run.verdict.assess` (``metrics``: run name -> registered metric;
        ``levels_only``: a re-test's verdict, detection limits measured only where they decide a
        level).
    unavailable : mapping, optional
        Metrics of the configuration that could not be offered here, with the reason: listed as
        skipped.

    Returns
    -------
    RunOutput
    """
    from .verdict import assess

    results: dict[str, MetricResult] = {}
    out_entries: dict[str, dict[str, Any]] = {}
    for name, entry in entries.items():
        out_entries[name] = entry.to_dict()
        res = entry.result
        if res is not None:
            if res.records and tables is not None:
                from ..data.tables import input_row_records

                # row numbers in records: from the tables' canonical order back to the input rows
                res = dataclasses.replace(res, records=input_row_records(res.records, tables,
                                                                           _plain_row(entry.metric)))
            results[name] = res
    for name, reason in dict(unavailable or {}).items():
        out_entries.setdefault(name, {"params": {}, "status": "skipped", "reason": reason,
                                      "seconds": 0.0})
    # tests the run could not run (a failure, or unavailable here whatever the data), not those the
    # data leave nothing to test with (no text column, no control): named under their risks
    not_run = {name: _not_run_reason(e) for name, e in entries.items()
               if e.status == "error" or isinstance(e.error, MetricUnavailable)}
    if rule is not None and rule.release_type == "anonymised":
        # an anonymised release's own tests (their cards' ``anonymised_only``: each release row a
        # real person): skipped, they are named under their risks, not left for the metric table
        from ..registry import info_of

        not_run.update({name: _not_run_reason(e) for name, e in entries.items()
                        if e.status == "skipped" and (info := info_of(e.metric)) is not None
                        and info.card.get("anonymised_only")})
    results, verdict = assess(results, rule, has_control=has_control, seed=seed, metrics=metrics,
                              not_run=not_run, levels_only=levels_only)
    return RunOutput(dict(header), out_entries, results, verdict)


def _not_run_reason(entry: Entry) -> str:
    """Why a test did not run, in a few words: ``failed: <error>`` (at most 80 characters), or
    the first clause of why it is unavailable here."""
    reason = str(entry.reason or entry.status)
    if entry.status == "error":
        return "failed: " + (reason if len(reason) <= 80 else reason[:79] + "\u2026")
    return reason.split(":", 1)[0].strip()


def _since(t0: float) -> float:
    return round(time.perf_counter() - t0, 4)


def _plain_row(metric: str) -> str:
    """The table a metric's records' plain ``row`` points into (its card; ``original`` by default)."""
    from ..registry import card_of

    card = getattr(card_of(metric), "records", None)
    return card.row if card is not None else "original"
