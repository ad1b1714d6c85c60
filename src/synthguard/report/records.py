"""The records behind the findings in one schema, and the facts the report's sentences count
from them (copies, rows to drop, rows for review).

The run lists every release row behind a high or medium finding itself, from the tests' own
joins (:mod:`synthguard.run.drops`): each with its training row, the test and the risk, why, the
leak family its cells show, ranked so that the first rows remove most of the excess, in input
row numbers (the report's ``records``); the training records a test flags without naming the
release rows behind them follow (:func:`~synthguard.run.drops.flagged_records`).
:func:`report_records` returns them, followed by the records a test of the release as a whole
lists itself (marked so) and those of the tests that did not alarm; the records of a metric that
decides no level (informative only) are not rows to act on and stay on its card.

Metrics also list the records behind their numbers under different field names (``original_row``,
``synthetic_row``, ``row``, ``nearest_training_row``...); each metric's card says what its records
mean (:class:`~synthguard.registry.RecordsCard`: the table a plain ``row`` points into, whether a
listed release row is a verbatim copy, its reason, and a function listing *every* such row where the
metric lists only its top rows). :func:`normalise_records` maps them all to one schema,
:data:`COLUMNS`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from ..core.format import fmt_number
from ..core.results import to_jsonable
from ..run.drops import EXPORT_COLUMNS
from ..run.wording import Facts
from .risks import (
    LEVEL_RANK,
    card_of,
    control_size_needed,
    copy_metric,
    risk_of,
    verbatim_release_rows,
)

#: The one schema of ``Report.records()`` and ``--records-out``: ``metric, risk, action,
#: release_row, training_row, reason``, then (the run's own rows; empty for the others) ``rank,
#: family, tests, round``.
COLUMNS = EXPORT_COLUMNS

_RELEASE_KEYS = ("synthetic_row",)
_TRAINING_KEYS = ("original_row", "nearest_original_row", "nearest_training_row", "training_row")


def reason_of(rec: Mapping[str, Any]) -> str:
    """One plain phrase per record, from the fields the metric gave (a metric's card may write its
    own, :attr:`~synthguard.registry.RecordsCard.reason`).

    Examples
    --------
    >>> reason_of({"original_row": 3, "synthetic_copies": 2})
    'copied 2 time(s) into the release'
    """
    if "query" in rec:
        return f"singled out by the condition {rec['query']}"
    if "secret_column" in rec:
        return (f"its {rec['secret_column']!r} guessed from the closest release row "
                f"(distance {_num(rec.get('distance'))})")
    if "synthetic_copies" in rec:
        return f"copied {rec['synthetic_copies']} time(s) into the release"
    if "synthetic_rows_at_zero_distance" in rec:
        return f"{rec['synthetic_rows_at_zero_distance']} release row(s) at distance 0"
    if "probability" in rec:
        return (f"sensitive value guessed with probability {_num(rec['probability'])} from "
                f"{rec.get('synthetic_rows_pooled', '?')} release row(s) with its key")
    if "class_size" in rec:
        return f"unique in the release on the quasi-identifiers (class size {rec['class_size']})"
    if "distinct_sensitive_values" in rec:
        return f"{rec['distinct_sensitive_values']} distinct sensitive value(s) in its class"
    if "distance" in rec:
        return f"distance {_num(rec['distance'])}"
    rest = {k: v for k, v in rec.items() if k not in _RELEASE_KEYS + _TRAINING_KEYS + ("row",)}
    return ", ".join(f"{k}={v}" for k, v in rest.items())


def _num(x: Any) -> str:
    return fmt_number(x)


def _row(x: Any) -> int | None:
    if isinstance(x, bool) or x is None:
        return None
    try:
        return int(x)
    except (TypeError, ValueError):
        return None


def _verbatim(card: Any, rec: Mapping[str, Any]) -> bool:
    flag = getattr(card, "verbatim", False)
    if isinstance(flag, str):
        return rec.get(flag) == 0
    return bool(flag)


def _entries(report: Any) -> Any:
    """The metric entries of a report, its typed model or the model itself."""
    return getattr(report, "model", report).metrics


def normalise_records(report: Any) -> list[dict[str, Any]]:
    """Every metric's records in the one schema :data:`COLUMNS`, from a report's typed model
    (:class:`~synthguard.core.report_model.ReportModel`, or the :class:`Report` holding it).

    ``action`` is ``"drop"`` for a release row that is a verbatim training row (its card says so,
    behind a test that alarms), else ``"review"`` (near matches, rows unique in the release,
    training rows exposed).

    Examples
    --------
    >>> from synthguard.core.report_model import MetricEntry, ReportModel
    >>> from synthguard.core.results import MetricResult
    >>> res = MetricResult("new_row_synthesis", "disclosure", 0.1, "higher is safer",
    ...                    risk_level="high", records=[{"synthetic_row": 3}])
    >>> rows = normalise_records(ReportModel({}, None, (MetricEntry("new_row_synthesis", "ok",
    ...                                                              result=res),)))
    >>> rows[0]["release_row"], rows[0]["action"]
    (3, 'review')
    """
    out = []
    for e in _entries(report):
        res = e.result
        if res is None:
            continue
        metric = e.metric or e.name
        risk = risk_of(metric) or "other"
        card = getattr(card_of(metric), "records", None)
        alarm = LEVEL_RANK.get(str(res.risk_level), 0) >= LEVEL_RANK["medium"]
        plain_row_is_release = getattr(card, "row", "original") == "synthetic"
        write = getattr(card, "reason", None) or reason_of
        for rec in res.records or ():
            if not isinstance(rec, Mapping):
                continue
            rec = to_jsonable(rec)
            release = next((_row(rec[k]) for k in _RELEASE_KEYS if k in rec), None)
            training = next((_row(rec[k]) for k in _TRAINING_KEYS if k in rec), None)
            if "row" in rec:
                if plain_row_is_release:
                    release = release if release is not None else _row(rec["row"])
                elif training is None:
                    training = _row(rec["row"])
            action = "drop" if release is not None and _verbatim(card, rec) and alarm else "review"
            out.append({"metric": e.name, "risk": risk, "action": action, "release_row": release,
                        "training_row": training, "reason": write(rec)})
    return out


def report_records(report: Any, original: Any = None, synthetic: Any = None,
                   metadata: Any = None) -> list[dict[str, Any]]:
    """The records export of a report (its typed model, or the :class:`Report` holding it): the
    run's own rows (every release row behind a high or medium finding, ranked;
    :mod:`synthguard.run.drops`), then the listed records of every metric whose rows the run did
    not list. A report without the run's rows (no control, or a report of an older version) gives
    every metric's records, completed from the inputs when they are given
    (:func:`complete_records`).

    Examples
    --------
    >>> from synthguard.core.report_model import MetricEntry, ReportModel
    >>> from synthguard.core.results import MetricResult
    >>> own = [{"metric": "exact_matches", "risk": "presence", "action": "drop",
    ...         "release_row": 4, "training_row": 1, "reason": "verbatim copy", "rank": 1,
    ...         "family": "exact", "tests": "exact_matches", "round": 1}]
    >>> res = MetricResult("dcr", "privacy", 0.1, "higher is safer", risk_level="low",
    ...                    records=[{"original_row": 7}])
    >>> model = ReportModel({"records": own}, None, (MetricEntry("dcr", "ok", result=res),))
    >>> [(r["metric"], r["action"], r["release_row"]) for r in report_records(model)]
    [('exact_matches', 'drop', 4), ('dcr', 'review', None)]
    """
    model = getattr(report, "model", report)
    own = [dict(r) for r in (model.header.get("records") or ())]
    if not own:
        if original is not None and synthetic is not None:
            return _findings_only(model, complete_records(model, original, synthetic, metadata))
        return _findings_only(model, normalise_records(model))
    listed = {t.strip() for r in own for t in str(r.get("tests") or r["metric"]).split(",")}
    return own + _findings_only(model, [r for r in normalise_records(model)
                                        if r["metric"] not in listed])


def _findings_only(model: Any, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The metrics' own records a report with a verdict exports beside the run's rows: those of
    its tests that read high or medium and name or flag no rows themselves (a test of the release
    as a whole), each marked so (:func:`synthguard.run.wording.unlisted_reason`); then, apart, the
    records of a test that reads low, inconclusive or not meaningful, action ``"context"`` (it
    found nothing beyond chance: not findings, never counted as leaked rows or rows to review;
    :func:`synthguard.run.wording.context_reason`). Left out: an informative metric's records (it
    decides no level: they stay on its card) and those of a test counted as another's twin
    (``same_as``, ``contained_in``: its host's rows stand for it). A report without a verdict's
    tests (no control) keeps every metric's records."""
    from ..run.drops import ALARM, CONTEXT
    from ..run.wording import context_reason, unlisted_reason

    tests = {str(t.get("metric")): t for t in getattr(model, "tests", ()) or ()}
    if not tests:
        return rows
    shown = Counter(str(r["metric"]) for r in rows)  # each metric's records, counted once
    kept, context = [], []
    for r in rows:
        t = tests.get(str(r["metric"]))
        if t is None or t.get("same_as") or t.get("contained_in"):
            continue
        if t.get("level") in ALARM:
            kept.append(dict(r, reason=unlisted_reason(str(r["reason"]), shown[str(r["metric"])])))
        else:  # not a finding: after every finding's rows, never counted as leaked rows
            context.append(dict(r, action=CONTEXT, reason=context_reason(
                str(r["reason"]), str(t["metric"]), str(t.get("level")))))
    return kept + context


def complete_records(report: Any, original: Any, synthetic: Any,
                     metadata: Any = None) -> list[dict[str, Any]]:
    """The report's records with, for every metric whose card lists *every* such row
    (:attr:`~synthguard.registry.RecordsCard.complete`), that complete list in place of its top
    rows, first.

    Parameters
    ----------
    report : Report or ReportModel
        The evaluation.
    original, synthetic, metadata : DataFrame or path
        The evaluation's inputs, as given to :func:`synthguard.evaluate`.
    """
    from ..registry import metric_infos

    rows = normalise_records(report)
    listers: dict[str, Any] = {}  # run name -> the card listing every such row
    for e in _entries(report):
        card = getattr(card_of(e.metric or e.name), "records", None)
        if card is not None and card.complete is not None:
            listers[e.name] = card
    if not listers:  # the copies are listed whether or not their metric ran
        for info in metric_infos():
            if (info.card.get("records") or {}).get("complete"):
                listers[info.name] = card_of(info.name).records
    full = [dict(r, metric=name) for name, card in listers.items()
            for r in card.complete(original, synthetic, metadata)]
    return full + [r for r in rows if r["metric"] not in listers]


def listed_counts(actions: Any) -> tuple[int, int, int]:
    """``(records behind findings, of them to drop, context records)`` of a records export, from
    its ``action`` column (the dossier, the console's ``--records-out`` line and the HTML caption
    count them here).

    Examples
    --------
    >>> listed_counts(["drop", "review", "context", "drop"])
    (3, 2, 1)
    """
    import numpy as np

    from ..run.drops import CONTEXT

    a = np.asarray(actions, dtype=object)
    context = int((a == CONTEXT).sum())
    return (int(a.size) - context, int((a == "drop").sum()), context)


def _listed(export: list[dict[str, Any]]) -> tuple[int, int, int]:
    return listed_counts([r["action"] for r in export])


def query_columns(report: Any, top: int = 5) -> list[tuple[str, int]]:
    """Columns the successful singling-out queries of an alarming test use, most often first:
    ``(column, queries)`` (a column counts once per query that tests it for a value or a bound).
    A fact about the finding, not advice: what coarsening does is measured by the run's re-test.
    """
    counts: dict[str, int] = {}
    for e in _entries(report):
        res = e.result
        if res is None or risk_of(e.metric or e.name) != "singling_out":
            continue
        if LEVEL_RANK.get(str(res.risk_level), 0) < LEVEL_RANK["medium"]:
            continue
        for rec in res.records or ():
            for pred in (rec.get("predicates") or []) if isinstance(rec, Mapping) else []:
                if isinstance(pred, (list, tuple)) and pred:
                    counts[str(pred[0])] = counts.get(str(pred[0]), 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]


def facts(report: Any, how: str = "both") -> Facts:
    """The facts the report's sentences need beside the verdict (:class:`~synthguard.run.wording.
    Facts`): copies, rows to drop, rows for review, and for a run without a control the copy
    metric's reading and the rows a decision needs. With the run's own rows (a run with a
    control), every count is of the one records export, :func:`report_records`: the rows to
    drop are those the in-run drop-and-retest removed, and a row listed to drop is not also
    counted for review."""
    model = getattr(report, "model", report)
    has_control = "control" in model.inputs
    copies = verbatim_release_rows(model)
    reading = None
    if not has_control:
        e = copy_metric(model)
        if e is not None and e.result.headline is not None:
            reading = e.result.headline.reading
    own = model.header.get("records") or ()
    if own:
        export = report_records(model)
        dropped: dict[int, str] = {}
        for r in export:
            if r["action"] == "drop" and r["release_row"] is not None:
                dropped.setdefault(int(r["release_row"]), str(r.get("family") or ""))
        by_family: dict[str, int] = {}
        for family in dropped.values():
            by_family[family] = by_family.get(family, 0) + 1
        review = [r for r in export if r["action"] == "review" and r["risk"] == "presence"
                  and r["release_row"] is not None]
        near = {int(r["release_row"]) for r in review if r.get("family")} - set(dropped)
        whole = {int(r["release_row"]) for r in review if not r.get("family")} - set(dropped) - near
        return Facts(copies=copies, review_presence=len(near), review_listed=len(whole),
                     review_all=sum(r["action"] == "review" for r in export),
                     has_control=has_control, copy_reading=reading, how=how,
                     drops=tuple(by_family.items()),
                     listed=_listed(export))
    counted = {e.name for e in model.metrics
               if getattr(getattr(card_of(e.metric or e.name), "records", None), "count", None)}
    recs = _findings_only(model, normalise_records(model))  # the export's rows, as it lists them
    drops = {r["release_row"] for r in recs if r["action"] == "drop" and r["metric"] not in counted}
    near = {r["release_row"] for r in recs if r["action"] == "review" and r["risk"] == "presence"
            and r["release_row"] is not None} - drops
    listed = {e.name for e in model.metrics  # the export lists these metrics' rows in full, as drops
              if getattr(getattr(card_of(e.metric or e.name), "records", None), "complete", None)}
    review = sum(1 for r in recs if r["action"] == "review" and r["metric"] not in listed)
    tested = bool(getattr(model, "tests", ()))  # a verdict's tests: the export lists findings only
    return Facts(copies=copies, more_drops=len(drops), review_presence=len(near),
                 review_all=review, has_control=has_control, copy_reading=reading,
                 rows_needed=None if has_control else control_size_needed(model), how=how,
                 listed=_listed(recs) if tested else None)
