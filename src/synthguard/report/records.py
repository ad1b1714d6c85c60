"""What to do: the release rows to drop and the columns to coarsen, in one schema.

Metrics list the records behind their numbers under different field names (``original_row``,
``synthetic_row``, ``row``, ``nearest_training_row``...). :func:`normalise_records` maps them all to
one schema, :data:`COLUMNS`; :func:`exact_copies` lists *every* release row that is a verbatim
training row (metrics list only their top rows), from the data, with the same exact-row identity as
the ``exact_matches`` metric.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .risks import LEVEL_RANK, risk_of

#: The one schema of ``Report.records()`` and ``--records-out``.
COLUMNS = ("metric", "risk", "action", "release_row", "training_row", "reason")

_RELEASE_KEYS = ("synthetic_row",)
_TRAINING_KEYS = ("original_row", "nearest_original_row", "nearest_training_row", "training_row")
_RELEASE_ROW_METRICS = {"text_style_outliers"}  # whose plain "row" is a release row


def _reason(metric: str, rec: Mapping[str, Any]) -> str:
    """One plain phrase per record, from the fields the metric gave."""
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
    if "dcr_training" in rec:
        return (f"closer to a training row ({_num(rec['dcr_training'])}) than to any held-out row "
                f"({_num(rec.get('dcr_holdout'))})")
    if "dcr" in rec:
        return f"distance {_num(rec['dcr'])} to the closest training row"
    if "class_size" in rec:
        return f"unique in the release on the quasi-identifiers (class size {rec['class_size']})"
    if "distinct_sensitive_values" in rec:
        return f"{rec['distinct_sensitive_values']} distinct sensitive value(s) in its class"
    if metric == "linkability":
        return f"linked to its release row at distance {_num(rec.get('distance'))}"
    if "distance" in rec:
        return f"distance {_num(rec['distance'])}"
    if metric == "new_row_synthesis":
        return "release row matching a training row (numeric values within the tolerance)"
    if metric == "replicated_uniques":
        return "unique training row replicated in the release"
    rest = {k: v for k, v in rec.items() if k not in _RELEASE_KEYS + _TRAINING_KEYS + ("row",)}
    return ", ".join(f"{k}={v}" for k, v in rest.items())


def _num(x: Any) -> str:
    from .console import fmt_number

    return fmt_number(x)


def _row(x: Any) -> int | None:
    if isinstance(x, bool) or x is None:
        return None
    try:
        return int(x)
    except (TypeError, ValueError):
        return None


def normalise_records(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every metric's records in the one schema :data:`COLUMNS`, from a report's JSON dict.

    ``action`` is ``"drop"`` for a release row that is a verbatim training row (behind a test that
    alarms), else ``"review"`` (near matches, rows unique in the release, training rows exposed).

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
        risk = risk_of(entry.get("metric") or name) or "other"
        alarm = LEVEL_RANK.get(str(res.get("risk_level")), 0) >= LEVEL_RANK["medium"]
        for rec in recs:
            if not isinstance(rec, Mapping):
                continue
            release = next((_row(rec[k]) for k in _RELEASE_KEYS if k in rec), None)
            training = next((_row(rec[k]) for k in _TRAINING_KEYS if k in rec), None)
            if "row" in rec:
                if name in _RELEASE_ROW_METRICS:
                    release = release if release is not None else _row(rec["row"])
                elif training is None:
                    training = _row(rec["row"])
            verbatim = name in ("exact_matches", "ims") or (
                name == "dcr_baseline_protection" and rec.get("dcr") == 0)
            action = "drop" if release is not None and verbatim and alarm else "review"
            out.append({"metric": name, "risk": risk, "action": action, "release_row": release,
                        "training_row": training, "reason": _reason(name, rec)})
    return out


def exact_copies(original: Any, synthetic: Any, metadata: Any = None) -> list[dict[str, Any]]:
    """Every release row equal to some training row (all columns but ``id`` columns, missing equal
    to missing), with the first training row it copies; input row numbers, from 0.

    Parameters
    ----------
    original, synthetic : DataFrame or path
        The training rows and the release, as given to :func:`synthguard.evaluate`.
    metadata : mapping or path, optional
        As given to :func:`synthguard.evaluate` (id columns are left out of the comparison).

    Returns
    -------
    list of dict
        One record per copied release row, in the schema :data:`COLUMNS`.

    Examples
    --------
    >>> import pandas as pd
    >>> o = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": ["x", "y", "z"]})
    >>> s = pd.DataFrame({"a": [2.0, 9.0], "b": ["y", "q"]})
    >>> [(r["release_row"], r["training_row"]) for r in exact_copies(o, s)]
    [(0, 1)]
    """
    import numpy as np
    import pandas as pd

    from ..data.encoding import EncodedView
    from ..data.tables import prepare_tables

    tables = prepare_tables(original, synthetic, None, metadata, strict_control=False)
    cols = [c for c, s in tables.schema.columns.items() if s.sdtype != "id"]
    if not cols:
        return []
    ids = EncodedView(tables).row_ids(cols, roles=("original", "synthetic"))
    orig, syn = ids["original"], ids["synthetic"]
    first = pd.Series(np.arange(orig.size)).groupby(orig).min()
    hit = np.flatnonzero(np.isin(syn, orig))
    train = first.reindex(syn[hit]).to_numpy()
    return [{"metric": "exact_matches", "risk": "presence", "action": "drop",
             "release_row": int(r), "training_row": int(t),
             "reason": f"verbatim copy of training row {int(t)}"}
            for r, t in zip(hit.tolist(), train.tolist(), strict=True)]


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
    for name in ("singling_out_univariate", "singling_out_multivariate"):
        res = ((report.get("metrics") or {}).get(name) or {}).get("result") or {}
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
