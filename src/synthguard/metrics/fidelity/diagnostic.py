"""``diagnostic_report``: SDMetrics' DiagnosticReport (Data Validity + Data Structure).

Data Validity rows, in column order: KeyUniqueness for a primary/alternate key with sdtype ``id``,
BoundaryAdherence for numerical and datetime columns, CategoryAdherence for categorical and boolean
columns; the property is the mean of the rows. Data Structure is TableStructure, the Jaccard
similarity of the (column, dtype) pairs. Overall = mean of the two properties.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ...core.results import Baseline, MetricResult
from ...registry import Context, Param, register
from ._validity import boundary_adherence, category_adherence, key_uniqueness, table_structure


def compute_diagnostic(real: pd.DataFrame, synthetic: pd.DataFrame, sdtypes: dict[str, str],
                       keys: list[str], *, check_all_keys: bool = False) -> dict[str, Any]:
    """The diagnostic report of ``synthetic`` against ``real``.

    Parameters
    ----------
    real, synthetic : DataFrame
        Typed tables.
    sdtypes : dict
        ``{column: sdtype}`` in table order.
    keys : list of str
        Primary and alternate key columns.
    check_all_keys : bool
        ``False`` (SDMetrics): KeyUniqueness only for keys of sdtype ``id``; ``True``: also for keys
        of any other sdtype (SDMetrics gives a numerical primary key no uniqueness check).

    Returns
    -------
    dict
        ``score``, ``data_validity``, ``data_structure``, ``data_validity_table``.
    """
    rows: list[dict[str, Any]] = []
    for col, sd in sdtypes.items():
        if col in keys and (sd == "id" or check_all_keys):
            rows.append({"column": col, "metric": "KeyUniqueness",
                         "score": key_uniqueness(synthetic[col])})
        if sd in ("numerical", "datetime"):
            rows.append({"column": col, "metric": "BoundaryAdherence",
                         "score": boundary_adherence(real[col], synthetic[col])})
        elif sd in ("categorical", "boolean"):
            rows.append({"column": col, "metric": "CategoryAdherence",
                         "score": category_adherence(real[col], synthetic[col])})
    scores = np.asarray([r["score"] for r in rows], dtype="float64")
    scores = scores[~np.isnan(scores)]
    validity = float(scores.mean()) if len(scores) else float("nan")
    structure = table_structure(real, synthetic)
    props = [v for v in (validity, structure) if not math.isnan(v)]
    return {"score": float(np.mean(props)) if props else float("nan"), "data_validity": validity,
            "data_structure": structure, "data_validity_table": rows}


@register(
    "diagnostic_report", family="fidelity", direction="higher is better",
    params=[Param("check_all_keys", False, "also check uniqueness of primary/alternate keys whose "
                  "sdtype is not 'id' (SDMetrics does not)", kind=bool)],
    description="SDMetrics DiagnosticReport score in [0, 1]: mean of Data Validity and Data Structure "
                "(1 = every synthetic value within the real bounds/categories, keys unique)",
    aliases=("sdmetrics_diagnosticreport", "sdmetrics_single_table_diagnosticreport"),
    presets=('full',),
    order=320
)
def diagnostic_report(ctx: Context, *, check_all_keys: bool = False) -> MetricResult:
    """Diagnostic report of the synthetic table against the original (see module docstring)."""
    t = ctx.tables
    sdtypes = {c: s.sdtype for c, s in t.schema.columns.items()}
    keys = [k for k in [t.schema.primary_key, *list(t.schema.extra.get("alternate_keys") or [])]
            if k in sdtypes]
    res = compute_diagnostic(t.original, t.synthetic, sdtypes, keys, check_all_keys=check_all_keys)
    bad = [r for r in res["data_validity_table"] if r["score"] is not None and r["score"] < 1.0]
    warning = None
    if bad:
        worst = min(bad, key=lambda r: r["score"])
        warning = (f"{len(bad)} column check(s) below 1; worst: {worst['metric']} of "
                   f"{worst['column']!r} = {worst['score']:.4f}")
    details = dict(res, keys=keys, params={"check_all_keys": check_all_keys})
    return MetricResult("diagnostic_report", "fidelity", res["score"], "higher is better",
                        baseline=Baseline(1.0, "a valid release scores 1 (every value within the real "
                                               "bounds and categories, same columns and dtypes)"),
                        n=len(t.synthetic), warning=warning, details=details)
