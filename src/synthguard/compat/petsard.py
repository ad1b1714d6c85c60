"""A PETsARD-compatible ``Evaluator`` facade over synthguard's metrics.

PETsARD's (legacy, <= 1.0) contract::

    ev = Evaluator("anonymeter-singlingout", n_attacks=2000)
    ev.create(data={"ori": train, "syn": synthetic, "control": holdout})
    ev.eval()
    ev.get_global()       # one-row DataFrame
    ev.get_columnwise()   # one row per column (or None)
    ev.get_pairwise()     # MultiIndex (column_1, column_2) (or None)

The newer PETsARD call ``ev.eval({"ori": ..., "syn": ..., "control": ...})`` returning
``{"global", "columnwise", "pairwise", "details"}`` works too. Method strings are case-insensitive;
``default`` is the SDMetrics quality report; any synthguard metric name (``dcr``, ``cap``...) is
accepted as well. Custom evaluators: ``Evaluator("custom_method", module_path=..., class_name=...)``
(or the legacy ``custom_method={"filepath": ..., "method": ...}``), or a subclass of
:class:`EvaluatorBase` passed as ``method``.

Differences from PETsARD (on purpose): every row also carries synthguard's baseline, confidence
interval, sample size and risk level; anonymeter results are reported even when the attack is no
better than its baseline, but then flagged ``risk_level = "not meaningful"``.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import ConfigError, InputError
from ..results import MetricResult

GRANULARITIES = ("global", "columnwise", "pairwise", "details")

# PETsARD method string -> (synthguard metric, required data keys, parameter renames)
_METHODS: dict[str, tuple[str, tuple[str, ...]]] = {
    "anonymeter-singlingout": ("singling_out_multivariate", ("ori", "syn", "control")),
    "anonymeter-linkability": ("linkability", ("ori", "syn", "control")),
    "anonymeter-inference": ("inference", ("ori", "syn", "control")),
    "sdmetrics-diagnosticreport": ("diagnostic_report", ("ori", "syn")),
    "sdmetrics-single_table-diagnosticreport": ("diagnostic_report", ("ori", "syn")),
    "sdmetrics-qualityreport": ("quality_report", ("ori", "syn")),
    "sdmetrics-single_table-qualityreport": ("quality_report", ("ori", "syn")),
    "default": ("quality_report", ("ori", "syn")),
    "mlutility-classification": ("ml_utility_classification", ("ori", "syn", "control")),
    "mlutility-regression": ("ml_utility_regression", ("ori", "syn", "control")),
    "mlutility-cluster": ("ml_utility_cluster", ("ori", "syn", "control")),
}
_ROLE = {"ori": "original", "syn": "synthetic", "control": "control"}


class EvaluatorBase:
    """Base class of a custom evaluator (PETsARD's plug-in contract).

    Subclasses set ``REQUIRED_INPUT_KEYS`` (e.g. ``["ori", "syn"]``) and
    ``AVAILABLE_SCORES_GRANULARITY`` (a subset of global/columnwise/pairwise/details) and implement
    :meth:`eval`, returning a dict with those keys (DataFrames, or ``None``).

    Parameters
    ----------
    config : mapping, optional
        The keyword arguments given to :class:`Evaluator` (also available as ``self.config``).
    """

    REQUIRED_INPUT_KEYS: list[str] = ["ori", "syn"]
    AVAILABLE_SCORES_GRANULARITY: list[str] = ["global"]

    def __init__(self, config: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        self.config = dict(config or {})
        self.config.update(kwargs)

    def eval(self, data: Mapping[str, pd.DataFrame]) -> dict[str, Any]:  # pragma: no cover - abstract
        """Score ``data`` (keys ``REQUIRED_INPUT_KEYS``); return ``{granularity: DataFrame}``."""
        raise NotImplementedError("a custom evaluator must implement eval(data)")


def _load_custom(module_path: str | Path, class_name: str) -> type:
    path = Path(module_path)
    if not path.exists():
        raise ConfigError(f"custom_method: module_path {str(path)!r} does not exist: give the path of "
                          "the .py file that defines your evaluator class")
    spec = importlib.util.spec_from_file_location(f"synthguard_custom_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"custom_method: cannot import {str(path)!r}: it must be a Python file")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cls = getattr(module, class_name, None)
    if cls is None or not isinstance(cls, type):
        raise ConfigError(f"custom_method: {str(path)!r} defines no class {class_name!r}: check "
                          "class_name")
    return cls


def _check_custom_class(cls: type) -> None:
    if not callable(getattr(cls, "eval", None)):
        raise ConfigError(f"custom evaluator {cls.__name__} has no eval(data) method: subclass "
                          "synthguard.EvaluatorBase and implement eval")
    gran = getattr(cls, "AVAILABLE_SCORES_GRANULARITY", None)
    if gran is None or not set(gran) <= set(GRANULARITIES):
        raise ConfigError(f"custom evaluator {cls.__name__}: AVAILABLE_SCORES_GRANULARITY must be a "
                          f"subset of {list(GRANULARITIES)}, got {gran!r}")
    keys = getattr(cls, "REQUIRED_INPUT_KEYS", None)
    if keys is None or not set(keys) <= set(_ROLE):
        raise ConfigError(f"custom evaluator {cls.__name__}: REQUIRED_INPUT_KEYS must be a subset of "
                          f"{list(_ROLE)}, got {keys!r}")


def _num(x: Any) -> float:
    try:
        f = float(x)
    except (TypeError, ValueError):
        return math.nan
    return f


def _rate(details: Mapping[str, Any], key: str) -> tuple[float, float]:
    """``(value, error)`` of an anonymeter-style rate stored as a number, dict or pair."""
    v = details.get(key)
    err = math.nan
    if isinstance(v, Mapping):
        err = _num(v.get("error", v.get("err")))
        v = v.get("value", v.get("rate"))
    elif isinstance(v, (list, tuple)) and len(v) == 2:
        v, err = v
    for suffix in ("_err", "_error"):
        if math.isnan(err) and f"{key}{suffix}" in details:
            err = _num(details[f"{key}{suffix}"])
    return _num(v), _num(err)


class Evaluator:
    """PETsARD-style evaluator: ``Evaluator(method, **kwargs)``.

    Parameters
    ----------
    method : str or EvaluatorBase subclass
        ``anonymeter-singlingout`` / ``-linkability`` / ``-inference``, ``sdmetrics-qualityreport``,
        ``sdmetrics-diagnosticreport``, ``mlutility-classification`` / ``-regression`` /
        ``-cluster``, ``default`` (= quality report), ``custom_method``, or any synthguard metric
        name. Case-insensitive.
    **kwargs
        Parameters of the metric (synthguard's names; PETsARD's ``mode`` picks univariate or
        multivariate singling out), plus ``seed`` and, for ``custom_method``, ``module_path`` and
        ``class_name`` (or ``custom_method={"filepath", "method"}``).

    Raises
    ------
    ConfigError
        Unknown method, unknown parameter, or a custom class that breaks the contract.
    """

    def __init__(self, method: Any = "default", **kwargs: Any) -> None:
        self.config = dict(kwargs)
        self.seed = int(kwargs.pop("seed", 0))
        self.metadata = kwargs.pop("metadata", None)
        self._custom_cls: type | None = None
        self._data: dict[str, pd.DataFrame] | None = None
        self._scores: dict[str, Any] | None = None
        self.result: MetricResult | None = None
        custom = kwargs.pop("custom_method", None)
        if isinstance(method, type):
            self._custom_cls = method
            self.method = "custom_method"
        else:
            self.method = str(method).strip().lower()
            if self.method == "custom_method" or custom is not None:
                if isinstance(custom, type):
                    cls = custom
                else:
                    info = dict(custom or {})
                    path = kwargs.pop("module_path", info.get("filepath", info.get("module_path")))
                    name = kwargs.pop("class_name", info.get("method", info.get("class_name")))
                    if not path or not name:
                        raise ConfigError("custom_method needs module_path (the .py file) and "
                                          "class_name (the evaluator class)")
                    cls = _load_custom(path, str(name))
                self._custom_cls = cls
                self.method = "custom_method"
        if self._custom_cls is not None:
            _check_custom_class(self._custom_cls)
            self.metric = None
            self.required_keys = tuple(self._custom_cls.REQUIRED_INPUT_KEYS)
            self._custom = self._custom_cls(kwargs)
            self.params: dict[str, Any] = dict(kwargs)
            return
        self.metric, self.required_keys = self._resolve(self.method, kwargs)
        from ..registry import get_metric

        spec = get_metric(self.metric)
        self.params = spec.resolve_params(kwargs)

    @staticmethod
    def _resolve(method: str, kwargs: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
        from ..registry import canonical_name, get_metric

        key = method.replace("_", "-") if method.startswith(("anonymeter", "mlutility")) else method
        if key in _METHODS:
            metric, keys = _METHODS[key]
            if key == "anonymeter-singlingout":
                mode = str(kwargs.pop("mode", "multivariate")).lower()
                if mode not in ("univariate", "multivariate"):
                    raise ConfigError(f"anonymeter-singlingout: mode must be 'univariate' or "
                                      f"'multivariate', got {mode!r}")
                metric = f"singling_out_{mode}"
        else:
            try:
                metric = canonical_name(method)
            except ConfigError as exc:
                raise ConfigError(f"unknown evaluation method {method!r}: use one of "
                                  f"{sorted(_METHODS)}, 'custom_method', or a synthguard metric name "
                                  f"({exc})") from None
            needs = get_metric(metric).needs
            keys = tuple(k for k, role in _ROLE.items() if role in needs)
        try:
            get_metric(metric)
        except ConfigError:
            raise ConfigError(f"evaluation method {method!r} needs synthguard metric {metric!r}, "
                              "which is not available in this installation") from None
        return metric, keys

    def create(self, data: Mapping[str, pd.DataFrame] | None = None) -> None:
        """Attach ``data`` = ``{"ori", "syn", "control"}`` (the keys this method requires)."""
        if data is None:
            return
        if not isinstance(data, Mapping):
            raise InputError("Evaluator.create: data must be a dict like {'ori': df, 'syn': df, "
                             "'control': df}")
        unknown = [k for k in data if k not in _ROLE]
        if unknown:
            raise InputError(f"Evaluator.create: unknown data key(s) {unknown}; use 'ori', 'syn' and "
                             "'control'")
        missing = [k for k in self.required_keys if data.get(k) is None]
        if missing:
            what = {"ori": "the original (training) rows", "syn": "the synthetic release",
                    "control": "real rows held out from training"}
            raise InputError(f"evaluation method {self.method!r} needs data key(s) "
                             f"{', '.join(repr(k) for k in missing)} ("
                             + "; ".join(f"{k}: {what[k]}" for k in missing)
                             + "): pass them in create(data={...})")
        for k, v in data.items():
            if v is not None and not isinstance(v, pd.DataFrame):
                raise InputError(f"Evaluator.create: data[{k!r}] must be a pandas DataFrame, got "
                                 f"{type(v).__name__}")
        self._data = {k: v for k, v in data.items() if v is not None}
        self._scores = None

    def eval(self, data: Mapping[str, pd.DataFrame] | None = None) -> dict[str, Any]:
        """Run the evaluation; returns ``{"global", "columnwise", "pairwise", "details"}``."""
        if data is not None:
            self.create(data)
        if self._data is None:
            raise InputError("Evaluator.eval: no data: call create(data={'ori': ..., 'syn': ...}) first")
        if self._custom_cls is not None:
            out = self._custom.eval({k: v.copy() for k, v in self._data.items()})
            if not isinstance(out, Mapping):
                raise ConfigError(f"custom evaluator {self._custom_cls.__name__}.eval must return a dict "
                                  "keyed by granularity")
            gran = list(self._custom_cls.AVAILABLE_SCORES_GRANULARITY)
            self._scores = {g: out.get(g) if g in gran else None for g in GRANULARITIES}
            return dict(self._scores)
        from ..data.tables import prepare_tables
        from ..encoding import EncodedView
        from ..registry import Context, get_metric, missing_inputs

        d = self._data
        tables = prepare_tables(d["ori"], d["syn"], d.get("control"), self.metadata)
        spec = get_metric(self.metric)
        ctx = Context(tables=tables, encoded=EncodedView(tables), seed=self.seed).for_metric(spec)
        missing = missing_inputs(spec, ctx)
        if missing:
            raise InputError(f"evaluation method {self.method!r} needs {missing}: add them to "
                             "create(data={...})")
        self.result = spec.func(ctx, **self.params)
        self._scores = _to_granularities(self.result)
        return dict(self._scores)

    def _get(self, gran: str) -> Any:
        if self._scores is None:
            raise InputError(f"get_{gran}: call eval() first")
        return self._scores.get(gran)

    def get_global(self) -> pd.DataFrame | None:
        """One-row DataFrame of headline scores."""
        return self._get("global")

    def get_columnwise(self) -> pd.DataFrame | None:
        """One row per column (``None`` when the method has no per-column scores)."""
        return self._get("columnwise")

    def get_pairwise(self) -> pd.DataFrame | None:
        """One row per column pair, MultiIndex ``(column_1, column_2)`` (or ``None``)."""
        return self._get("pairwise")

    def get_details(self) -> Any:
        """Free-form details (the synthguard result as a dict for built-in methods)."""
        return self._get("details")


def _common(res: MetricResult) -> dict[str, Any]:
    lo, hi = (res.ci if res.ci is not None else (math.nan, math.nan))
    return {"baseline": res.baseline.value if res.baseline is not None else math.nan,
            "ci_low": lo, "ci_high": hi, "n": res.n, "risk_level": res.risk_level}


def _to_granularities(res: MetricResult) -> dict[str, Any]:
    """PETsARD's DataFrames from a synthguard result (read defensively)."""
    det = dict(res.details) if isinstance(res.details, Mapping) else {}
    columnwise = pairwise = None
    if res.family == "anonymeter" or res.name in ("singling_out_univariate", "singling_out_multivariate",
                                                  "linkability", "inference"):
        lo, hi = res.ci if res.ci is not None else (math.nan, math.nan)
        row: dict[str, Any] = {"risk": _num(res.value), "risk_CI_btm": _num(lo), "risk_CI_top": _num(hi)}
        for key in ("attack_rate", "baseline_rate", "control_rate"):
            v, e = _rate(det, key)
            row[key], row[f"{key}_err"] = v, e
        row.update({"n": res.n, "risk_level": res.risk_level})
        glob = pd.DataFrame([row])
    elif res.name in ("quality_report", "diagnostic_report"):
        if res.name == "quality_report":
            row = {"Score": _num(res.value), "Column Shapes": _num(det.get("column_shapes")),
                   "Column Pair Trends": _num(det.get("column_pair_trends"))}
            table_key = "column_shapes_table"
        else:
            row = {"Score": _num(res.value), "Data Validity": _num(det.get("data_validity")),
                   "Data Structure": _num(det.get("data_structure"))}
            table_key = "data_validity_table"
        row.update(_common(res))
        glob = pd.DataFrame([row])
        rows = [r for r in det.get(table_key) or [] if isinstance(r, Mapping) and "column" in r]
        if rows:
            columnwise = pd.DataFrame({"Property": "Column Shapes" if res.name == "quality_report"
                                       else "Data Validity",
                                       "Metric": [r.get("metric") for r in rows],
                                       "Score": [_num(r.get("score")) for r in rows]},
                                      index=pd.Index([str(r["column"]) for r in rows], name="column"))
        pairs = [r for r in det.get("column_pair_trends_table") or []
                 if isinstance(r, Mapping) and "column_1" in r and "column_2" in r]
        if pairs:
            pairwise = pd.DataFrame(
                {"Property": "Column Pair Trends", "Metric": [r.get("metric") for r in pairs],
                 "Score": [_num(r.get("score")) for r in pairs],
                 "Real Correlation": [_num(r.get("real_correlation")) for r in pairs],
                 "Synthetic Correlation": [_num(r.get("synthetic_correlation")) for r in pairs]},
                index=pd.MultiIndex.from_tuples([(str(r["column_1"]), str(r["column_2"])) for r in pairs],
                                                names=["column_1", "column_2"]))
    elif res.name.startswith("ml_utility"):
        row = {}
        for key in ("ori_mean", "ori_std", "syn_mean", "syn_std", "diff"):
            row[key] = _num(det.get(key))
        if math.isnan(row["diff"]):
            row["diff"] = _num(res.value)  # synthguard's value is syn_mean - ori_mean
        row.update(_common(res))
        glob = pd.DataFrame([row])
    else:
        row = {"value": _num(res.value)}
        row.update(_common(res))
        for k, v in det.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) and k not in row:
                row[k] = v
        glob = pd.DataFrame([row])
    glob.index = pd.Index([res.name], name="metric")
    return {"global": glob, "columnwise": columnwise, "pairwise": pairwise, "details": res.to_dict()}
