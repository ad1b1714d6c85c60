"""SDMetrics 0.32's ``QualityReport`` and ``DiagnosticReport`` over synthguard's fidelity metrics.

``generate(real_data, synthetic_data, metadata, verbose=True)``, then ``get_score()``,
``get_properties()`` (columns ``Property``, ``Score``) and ``get_details(property_name)`` (the
frames SDMetrics builds: ``Column``, ``Metric``, ``Score`` for Column Shapes and Data Validity;
``Column 1``, ``Column 2``, ``Metric``, ``Score``, ``Real Correlation``, ``Synthetic Correlation``,
``Real Association``, ``Meets Threshold?`` for Column Pair Trends; ``Metric``, ``Score`` for Data
Structure). The numbers come from :mod:`synthguard.metrics.fidelity`.
"""

from __future__ import annotations

import sys
from copy import deepcopy
from typing import Any

import numpy as np
import pandas as pd

from .._bridge import run, table_metadata

__all__ = ["DiagnosticReport", "QualityReport"]


class _Report:
    _METRIC = ""
    _PROPERTIES: dict[str, str] = {}

    def __init__(self) -> None:
        self.is_generated = False
        self._overall_score: float | None = None
        self._details: dict[str, pd.DataFrame] = {}
        self._scores: dict[str, float] = {}
        self.report_info: dict[str, Any] = {}
        self.result = None

    def generate(self, real_data: pd.DataFrame, synthetic_data: pd.DataFrame, metadata: Any,
                 verbose: bool = True) -> None:
        """Compute the report (``metadata``: SDV single-table metadata, ``{"columns": {...}}``)."""
        import time

        t0 = time.perf_counter()
        res = run(self._METRIC, real_data, synthetic_data, metadata=table_metadata(metadata))
        self.result = res
        d = res.details
        self._overall_score = float(res.value)
        self._scores = {prop: float(d.get(key, np.nan)) for prop, key in self._PROPERTIES.items()}
        meta = table_metadata(metadata)
        order = list(meta["columns"]) if meta else []
        order += [c for c in real_data.columns if c not in order]
        self._details = {k: _in_order(v, order) for k, v in self._frames(d).items()}
        self.report_info = {"report_type": type(self).__name__, "num_rows_real_data": len(real_data),
                            "num_rows_synthetic_data": len(synthetic_data),
                            "generation_time": time.perf_counter() - t0}
        self.is_generated = True
        if verbose:
            print(f"Overall Score (Average): {self._overall_score:.2%}\n", file=sys.stdout)
            print("Properties:", file=sys.stdout)
            for prop, score in self._scores.items():
                print(f"- {prop}: {score:.2%}", file=sys.stdout)

    def _frames(self, d: dict[str, Any]) -> dict[str, pd.DataFrame]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _check(self) -> None:
        if not self.is_generated:
            raise ValueError("The report has not been generated. Please call `generate` first.")

    def get_score(self) -> float:
        """The overall score (mean of the property scores)."""
        self._check()
        return float(self._overall_score)

    def get_properties(self) -> pd.DataFrame:
        """One row per property: ``Property``, ``Score``."""
        self._check()
        return pd.DataFrame({"Property": list(self._scores), "Score": list(self._scores.values())})

    def get_details(self, property_name: str) -> pd.DataFrame:
        """The per-column (or per-pair) scores of one property, as SDMetrics lays them out."""
        if property_name not in self._PROPERTIES:
            raise ValueError(f"Invalid property name '{property_name}'. Valid property names are "
                             f"'{', '.join(self._PROPERTIES)}'.")
        self._check()
        return self._details[property_name].copy()

    def get_info(self) -> dict[str, Any]:
        """Information about the generated report."""
        return deepcopy(self.report_info)

    def get_visualization(self, property_name: str) -> Any:
        """Not provided: the facade draws no plotly figures (``NotImplementedError`` naming the data)."""
        raise NotImplementedError(f"get_visualization is not provided by synthguard.compat.sdmetrics: plot "
                                  f"get_details({property_name!r}) yourself, or use synthguard's HTML report")

    def save(self, filepath: str) -> None:
        """Save the generated report to ``filepath`` (pickle, like SDMetrics)."""
        import pickle

        from ....core.io import open_output

        with open_output(filepath, "filepath", binary=True) as fh:
            pickle.dump(self, fh)

    @classmethod
    def load(cls, filepath: str) -> _Report:
        """Load a report saved with :meth:`save` (only load files you trust: it is a pickle)."""
        import pickle

        with open(filepath, "rb") as fh:
            rep = pickle.load(fh)  # noqa: S301 - the user's own saved report, as in SDMetrics
        if not isinstance(rep, cls):
            raise ValueError(f"{filepath!r} does not hold a {cls.__name__}")
        return rep


def _in_order(frame: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    """Rows in the metadata's column order (SDMetrics walks the metadata), pairs as (first, second)."""
    pos = {c: i for i, c in enumerate(order)}
    if "Column" in frame:
        key = frame["Column"].map(lambda c: pos.get(c, len(pos)))
        return frame.iloc[np.argsort(key.to_numpy(), kind="stable")].reset_index(drop=True)
    if "Column 1" in frame and len(frame):
        f = frame.copy()
        a = f["Column 1"].map(lambda c: pos.get(c, len(pos))).to_numpy()
        b = f["Column 2"].map(lambda c: pos.get(c, len(pos))).to_numpy()
        swap = a > b
        f.loc[swap, ["Column 1", "Column 2"]] = f.loc[swap, ["Column 2", "Column 1"]].to_numpy()
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        return f.iloc[np.lexsort((hi, lo))].reset_index(drop=True)
    return frame


def _table(rows: list[dict[str, Any]], mapping: dict[str, str]) -> pd.DataFrame:
    frame = pd.DataFrame([{new: r.get(old) for old, new in mapping.items()} for r in rows],
                         columns=list(mapping.values()))
    if "Error" in frame and frame["Error"].isna().all():
        frame = frame.drop(columns="Error")
    return frame


class QualityReport(_Report):
    """SDMetrics' single-table QualityReport: Column Shapes and Column Pair Trends."""

    _METRIC = "quality_report"
    _PROPERTIES = {"Column Shapes": "column_shapes", "Column Pair Trends": "column_pair_trends"}

    def _frames(self, d: dict[str, Any]) -> dict[str, pd.DataFrame]:
        shapes = _table(d.get("column_shapes_table", []),
                        {"column": "Column", "metric": "Metric", "score": "Score", "error": "Error"})
        pairs = _table(d.get("column_pair_trends_table", []),
                       {"column_1": "Column 1", "column_2": "Column 2", "metric": "Metric", "score": "Score",
                        "real_correlation": "Real Correlation", "synthetic_correlation": "Synthetic Correlation",
                        "real_association": "Real Association", "meets_threshold": "Meets Threshold?",
                        "error": "Error"})
        if "Meets Threshold?" in pairs:
            pairs["Meets Threshold?"] = pairs["Meets Threshold?"].astype("boolean")
            # SDMetrics computes the synthetic trend only for pairs whose real trend meets the threshold
            if "Synthetic Correlation" in pairs:
                pairs["Synthetic Correlation"] = pairs["Synthetic Correlation"].where(
                    pairs["Meets Threshold?"].fillna(False).astype(bool), np.nan)
        return {"Column Shapes": shapes, "Column Pair Trends": pairs}


class DiagnosticReport(_Report):
    """SDMetrics' single-table DiagnosticReport: Data Validity and Data Structure."""

    _METRIC = "diagnostic_report"
    _PROPERTIES = {"Data Validity": "data_validity", "Data Structure": "data_structure"}

    def _frames(self, d: dict[str, Any]) -> dict[str, pd.DataFrame]:
        validity = _table(d.get("data_validity_table", []),
                          {"column": "Column", "metric": "Metric", "score": "Score", "error": "Error"})
        structure = pd.DataFrame({"Metric": ["TableStructure"], "Score": [float(d.get("data_structure", np.nan))]})
        return {"Data Validity": validity, "Data Structure": structure}
