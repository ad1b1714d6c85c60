"""The run's advice, re-tested (the step after the verdict, in one process and on a cluster): the
release rows behind the findings dropped and the verdict's tests run again
(:func:`~synthguard.run.actions.drop_retest`), then the columns driving what still alarms coarsened
and re-tested (:func:`~synthguard.run.actions.coarsen_retest`). The runner of the run (one process
or a cluster) is handed in, so this module imports neither."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from .config import RunConfig
from .executor import RunOutput
from .options import EvaluateOptions

__all__ = ["RETEST_COLUMNS", "advice_budget", "advise"]

#: Columns the advice coarsens and re-tests at most (``retest_columns`` in :func:`synthguard.evaluate`).
RETEST_COLUMNS = 2


def advise(out: RunOutput, tables: Any, run_config: RunConfig, options: EvaluateOptions, *,
           rerun: Callable[[Any, RunConfig, EvaluateOptions], RunOutput],
           without: Any = None, take: Any = None, values: Any = None,
           also: Any = None) -> RunOutput:
    """The run's advice, re-tested: the release rows behind the findings listed (the records
    export), those to drop dropped and every test run again (``retest_rows`` rounds at most), then
    the columns driving what still alarms coarsened and re-tested (``retest_columns`` at most).

    ``rerun(tables, run_config, options, kept=None)`` runs the verdict's tests again (``kept``: on
    the run's tables without some release rows, each kept release row's position in the run's
    release; ``None`` otherwise; one process:
    :func:`~synthguard.run.runner.run_tables`; a cluster: its own runner); ``without`` and ``take`` are handed to
    :func:`~synthguard.run.actions.drop_retest` and ``values`` to
    :func:`~synthguard.run.actions.coarsen_retest` (a cluster run's partitioned tables: rows
    dropped and columns coarsened on the cluster; default: the pandas tables of one process);
    ``also``: a sampled run's full-table copies, handed to
    :func:`~synthguard.run.actions.drop_retest`."""
    from .actions import coarsen_retest, drop_retest
    from .plan import stage

    rounds, columns = advice_budget(options)
    # the re-tests run the verdict's tests again through the run's runner: same seed, backend, risk rule
    # and jobs; no bar, callback, plan, cache or generator, and no re-test of their own
    again = options.replace(progress=False, on_progress=None, on_plan=None, cache=None,
                            generator=None, retest_columns=0, retest_rows=0)
    def rerun_one(new: Any, sub: RunConfig, kept: Any = None) -> RunOutput:
        return rerun(new, sub, again, kept=kept)

    actions: dict[str, Any] = {}
    with stage("re-testing without the rows to drop", options.progress and bool(rounds)):
        verdict, records, cost, after = drop_retest(tables, run_config, out.verdict, out.results,
                                                    rerun=rerun_one, max_rounds=int(rounds),
                                                    without=without, take=take, also=also)
    if records:
        out.header["records"] = records
    if cost is not None:
        actions["drop_retest"] = cost
    if columns:
        # what still alarms once the rows are dropped is what a coarsening must settle
        base_tables, base = after if after is not None else (tables, None)
        with stage("re-testing coarsened columns", options.progress):
            coarse, ccost = coarsen_retest(
                base_tables, run_config, base.verdict if base is not None else verdict,
                base.results if base is not None else out.results, rerun=rerun_one,
                max_columns=int(columns), values=values,
                rows_dropped_first=int(cost.get("rows_dropped", 0)) if cost is not None else 0)
        if ccost is not None:
            actions["coarsen_retest"] = ccost
            found = {r["risk"]: r.get("coarsening") for r in coarse.risks}
            verdict = dataclasses.replace(verdict, risks=tuple(
                r.replace(coarsening=found[r["risk"]]) if found.get(r["risk"]) else r
                for r in verdict.risks))
    if actions:
        out.header["actions"] = actions
    return dataclasses.replace(out, verdict=verdict)


def advice_budget(options: EvaluateOptions) -> tuple[int, int]:
    """``(rounds, columns)``: at most how many drop-and-retest rounds and coarsened columns the
    advice re-tests (each one more run of the verdict's tests)."""
    from .actions import DROP_ROUNDS

    columns = RETEST_COLUMNS if options.retest_columns is None else options.retest_columns
    rounds = DROP_ROUNDS if options.retest_rows is None else options.retest_rows
    return int(rounds), int(columns)


def planned_retests(tables: Any, run_config: RunConfig, options: EvaluateOptions, rule: Any,
                     entities: Any) -> int:
    """At most how many more runs of the verdict's tests the advice can make: none without a
    control table, in an entity or statistics-only run, or under another rule than the calibrated
    one; the drop rounds; the coarsened columns only when a test answers for singling out or
    inference (the risks a coarsening re-tests)."""
    from ..registry import get_metric
    from .actions import COARSEN_RISKS

    if entities is not None or getattr(tables, "original_stats", None) is not None \
            or not tables.has_control or rule.rule != "calibrated":
        return 0
    rounds, columns = advice_budget(options)
    metric_of = getattr(run_config, "metric_of", lambda n: n)
    risks = {getattr(get_metric(metric_of(n)), "risk", None) for n in run_config.metrics}
    return rounds + (columns if risks & set(COARSEN_RISKS) else 0)
