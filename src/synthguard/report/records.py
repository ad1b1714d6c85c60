"""What to do: the release rows to drop and the columns to coarsen, in one schema.

Metrics list the records behind their numbers under different field names (``original_row``,
``synthetic_row``, ``row``, ``nearest_training_row``...); each metric's card says what its records
mean (:class:`~synthguard.registry.RecordsCard`: the table a plain ``row`` points into, whether a
listed release row is a verbatim copy, its reason, and a function listing *every* such row where the
metric lists only its top rows). :func:`normalise_records` maps them all to one schema,
:data:`COLUMNS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.format import fmt_number
from .risks import LEVEL_RANK, card_of, risk_of

#: The one schema of ``Report.records()`` and ``--records-out``.
COLUMNS = ("metric", "risk", "action", "release_row", "training_row", "reason")

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


def normalise_records(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every metric's records in the one schema :data:`COLUMNS`, from a report's JSON dict.

    ``action`` is ``"drop"`` for a release row that is a verbatim training row (its card says so,
    behind a test that alarms), else ``"review"`` (near matches, rows unique in the release,
    training rows exposed).

    Examples
    --------
    >>> rep = {"metrics": {"new_row_synthesis": {"status": "ok", "result": {"risk_level": "high",
    ...        "records": [{"synthetic_row": 3}]}}}}
    >>> normalise_records(rep)[0]["release_row"], normalise_records(rep)[0]["action"]
    (3, 'review')
    """
    out = []
    for name, entry in (report.get("metrics") or {}).items():
        res = (entry or {}).get("result") or {}
        recs = res.get("records") or []
        metric = entry.get("metric") or name
        risk = risk_of(metric) or "other"
        card = getattr(card_of(metric), "records", None)
        alarm = LEVEL_RANK.get(str(res.get("risk_level")), 0) >= LEVEL_RANK["medium"]
        plain_row_is_release = getattr(card, "row", "original") == "synthetic"
        write = getattr(card, "reason", None) or reason_of
        for rec in recs:
            if not isinstance(rec, Mapping):
                continue
            release = next((_row(rec[k]) for k in _RELEASE_KEYS if k in rec), None)
            training = next((_row(rec[k]) for k in _TRAINING_KEYS if k in rec), None)
            if "row" in rec:
                if plain_row_is_release:
                    release = release if release is not None else _row(rec["row"])
                elif training is None:
                    training = _row(rec["row"])
            action = "drop" if release is not None and _verbatim(card, rec) and alarm else "review"
            out.append({"metric": name, "risk": risk, "action": action, "release_row": release,
                        "training_row": training, "reason": write(rec)})
    return out


def complete_records(report: Mapping[str, Any], original: Any, synthetic: Any,
                     metadata: Any = None) -> list[dict[str, Any]]:
    """The report's records with, for every metric whose card lists *every* such row
    (:attr:`~synthguard.registry.RecordsCard.complete`), that complete list in place of its top
    rows, first.

    Parameters
    ----------
    report : mapping
        A report's JSON dict.
    original, synthetic, metadata : DataFrame or path
        The evaluation's inputs, as given to :func:`synthguard.evaluate`.
    """
    from ..registry import metric_infos

    rows = normalise_records(report)
    listers: dict[str, Any] = {}  # run name -> the card listing every such row
    for name, entry in (report.get("metrics") or {}).items():
        card = getattr(card_of((entry or {}).get("metric") or name), "records", None)
        if card is not None and card.complete is not None:
            listers[name] = card
    if not listers:  # the copies are listed whether or not their metric ran
        for info in metric_infos():
            if (info.card.get("records") or {}).get("complete"):
                listers[info.name] = card_of(info.name).records
    full = [dict(r, metric=name) for name, card in listers.items()
            for r in card.complete(original, synthetic, metadata)]
    return full + [r for r in rows if r["metric"] not in listers]


def coarsening(report: Mapping[str, Any], top: int = 5) -> list[dict[str, Any]]:
    """Columns whose exact values single people out, most often first, with a suggested coarsening.

    Read from the singling-out attacks' successful queries (their ``records``): a column counts
    once per query that tests it for an exact value or a bound.

    Returns
    -------
    list of dict
        ``{"column", "queries", "sdtype", "suggestion"}``.
    """
    counts: dict[str, int] = {}
    for name, entry in (report.get("metrics") or {}).items():
        if risk_of((entry or {}).get("metric") or name) != "singling_out":
            continue
        res = (entry or {}).get("result") or {}
        if LEVEL_RANK.get(str(res.get("risk_level")), 0) < LEVEL_RANK["medium"]:
            continue
        for rec in res.get("records") or []:
            for pred in (rec.get("predicates") or []) if isinstance(rec, Mapping) else []:
                if isinstance(pred, (list, tuple)) and pred:
                    counts[str(pred[0])] = counts.get(str(pred[0]), 0) + 1
    cols = ((report.get("schema") or {}).get("columns") or {})
    out = []
    for col, k in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]:
        sd = str((cols.get(col) or {}).get("sdtype", "unknown"))
        tip = {"numerical": "release it in ranges (e.g. 10 equal-count bins, or rounded to 2 "
                            "significant digits)",
               "datetime": "keep the month or the year only",
               "categorical": "merge categories held by fewer than 10 people into 'other'",
               "boolean": "leave as is or drop"}.get(sd, "generalise or drop it")
        out.append({"column": col, "queries": k, "sdtype": sd, "suggestion": tip})
    return out
