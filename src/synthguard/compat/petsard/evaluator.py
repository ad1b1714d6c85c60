"""A PETsARD 1.10-compatible ``Evaluator`` facade over synthguard's metrics.

PETsARD 1.10's contract, which this facade follows::

    ev = Evaluator("anonymeter-singlingout", n_attacks=2000)
    ev.create()
    result = ev.eval({"ori": train, "syn": synthetic, "control": holdout})
    result["global"]        # one row, index "result" (anonymeter, sdmetrics)
    result["details"]       # anonymeter: attack_queries / attack_links ...; mlutility: {"ori", "syn"}

The keys of ``result`` are the granularities PETsARD 1.10.1 returns for the method:
anonymeter and ML utility ``global`` + ``details``; the SDMetrics reports ``global`` +
``columnwise`` + ``pairwise`` (``pairwise`` is ``None`` for the diagnostic report); a custom
evaluator its ``AVAILABLE_SCORES_GRANULARITY``. Frames have PETsARD's index, column names and
order, and its rounding (global numbers to 2 decimals). The defaults are PETsARD's: singling out
``n_attacks=2000``, ``n_cols=3``, ``max_attempts=500000``; linkability and inference
``max_n_attacks=True`` (one attack per control row), ``n_neighbors=1``; inference guesses scored
by exact match (anonymeter's ``regression=False``); ML utility per metric with XGBoost.

``Evaluator(..., synthguard_extras=True)`` adds synthguard's columns to ``global`` (the unrounded
value, its confidence interval, sample size, baseline and risk level) and the full synthguard result
as ``details["synthguard"]``. Without them an anonymeter method computes its headline only: its
``Evaluator.result`` carries no verdict evidence over every record (``evidence`` is ``None``).

The legacy (<= 1.0) calls keep working: ``create(data={...})``, ``eval()``, ``get_global()``,
``get_columnwise()``, ``get_pairwise()``, ``get_details()``. Data keys ``ori`` / ``syn`` /
``control``, or ``base`` / ``target`` (read as ``ori`` / ``syn``, as PETsARD 1.10 does).

Custom evaluators: ``Evaluator("custom_method", module_path=..., class_name=...)`` (or the legacy
``custom_method={"filepath": ..., "method": ...}``), or a class passed as ``method``. The class is
built with ``config=`` the full configuration, ``eval_method`` included, as PETsARD does.

Intentional differences (docs/compat.md, section PETsARD): univariate singling out runs (PETsARD
1.10.1 raises ``TypeError``); a numeric classification target works (PETsARD raises
``KeyError``); control rows whose label the training tables never show are dropped with a note
(PETsARD raises); anonymeter ``details`` hold what synthguard records (successful queries and
links), not anonymeter's internal objects.
"""

from __future__ import annotations

import importlib.util
import math
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...core.results import MetricResult
from ...errors import ConfigError, InputError
from ...registry import validate_seed

GRANULARITIES = ("global", "columnwise", "pairwise", "details")
_ROLE = {"ori": "original", "syn": "synthetic", "control": "control"}
_ALIASES = {"base": "ori", "target": "syn"}

#: PETsARD's default method (``Evaluator("default")``).
DEFAULT_EVALUATING_METHOD = "sdmetrics-single_table-qualityreport"

# PETsARD method family -> the granularities its eval() returns
_GRAN = {"anonymeter": ("global", "details"), "sdmetrics": ("global", "columnwise", "pairwise"),
         "mlutility": ("global", "details")}
_ANON = {"singlingout": "singling_out", "linkability": "linkability", "inference": "inference"}
_ANON_KEYS = ("risk", "risk_CI_btm", "risk_CI_top", "attack_rate", "attack_rate_err", "baseline_rate",
              "baseline_rate_err", "control_rate", "control_rate_err")
_ML_PARAMS = {"target", "metrics", "n_clusters", "xgb_params", "random_state", "experiment_design",
              "resampling", "n_jobs", "task_type", "backend", "n_boot"}


class EvaluatorBase:
    """Base class of a custom evaluator (PETsARD's plug-in contract; subclassing is optional).

    Subclasses set ``REQUIRED_INPUT_KEYS`` (e.g. ``["ori", "syn"]``) and
    ``AVAILABLE_SCORES_GRANULARITY`` (a subset of global/columnwise/pairwise/details) and implement
    :meth:`eval`, returning a dict with those keys (DataFrames, or ``None``).

    Parameters
    ----------
    config : mapping, optional
        The configuration given to :class:`Evaluator`, ``eval_method`` included (also available as
        ``self.config``).
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
    if keys is None or not set(keys) <= set(_ROLE) | set(_ALIASES):
        raise ConfigError(f"custom evaluator {cls.__name__}: REQUIRED_INPUT_KEYS must be a subset of "
                          f"{list(_ROLE) + list(_ALIASES)}, got {keys!r}")


def _num(x: Any) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def _round(x: Any, digits: int = 2) -> Any:
    """PETsARD's rounding: floats to ``digits`` decimals, integers and missing values unchanged."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return x
    if isinstance(x, (bool, np.bool_)):
        return x
    if isinstance(x, (int, np.integer)):
        return int(x)
    return round(float(x), digits)


def petsard_metadata(frame: pd.DataFrame) -> dict[str, Any]:
    """The SDMetrics metadata PETsARD 1.10.1 builds from a frame's pandas dtypes.

    Numeric columns are ``numerical``, or ``boolean`` when they hold only 0/1; datetime64 columns
    are ``datetime``; bool columns ``boolean``; anything else ``categorical`` (a column of date
    strings stays categorical: PETsARD does not parse it).
    """
    cols: dict[str, dict[str, str]] = {}
    for c in frame.columns:
        s = frame[c]
        if pd.api.types.is_bool_dtype(s.dtype):
            sd = "boolean"
        elif pd.api.types.is_numeric_dtype(s.dtype):
            sd = "boolean" if s.dropna().isin([0, 1]).all() and s.nunique() <= 2 else "numerical"
        elif pd.api.types.is_datetime64_any_dtype(s.dtype):
            sd = "datetime"
        else:
            sd = "categorical"
        cols[str(c)] = {"sdtype": sd}
    return {"columns": cols}


class Evaluator:
    """PETsARD-style evaluator: ``Evaluator(method, **config)``, ``create()``, ``eval(data)``.

    Parameters
    ----------
    method : str or class
        ``anonymeter-singlingout`` / ``-linkability`` / ``-inference``,
        ``sdmetrics-qualityreport`` / ``sdmetrics-diagnosticreport`` (with or without
        ``single_table-``), ``mlutility-classification`` / ``-regression`` / ``-cluster``,
        ``default`` (= the quality report), ``custom_method``, a custom evaluator class, or any
        synthguard metric name. Case-insensitive.
    synthguard_extras : bool
        Add synthguard's columns (``value``, ``ci_low``, ``ci_high``, ``n``, ``baseline``,
        ``risk_level``) to ``global`` and its full result as ``details["synthguard"]``.
    **config
        PETsARD's parameters of the method (``n_attacks``, ``n_cols``, ``max_attempts``, ``mode``,
        ``max_n_attacks``, ``n_neighbors``, ``aux_cols``, ``secret``, ``n_jobs``; ML utility
        ``target``, ``metrics``, ``n_clusters``, ``xgb_params``, ``random_state``,
        ``experiment_design``, ``resampling``, ``n_jobs``), synthguard parameters of the metric,
        ``seed``, ``metadata``, and for ``custom_method`` ``module_path`` + ``class_name``.

    Raises
    ------
    ConfigError
        Unknown method, unknown parameter, or a custom class that breaks the contract.
    """

    def __init__(self, method: Any = "default", *, synthguard_extras: bool = False, **config: Any) -> None:
        kwargs = dict(config)
        self.extras = bool(synthguard_extras)
        self.seed = validate_seed(kwargs.pop("seed", 0), "seed") or 0  # as every path checks it
        self.metadata = kwargs.pop("metadata", None)
        self._custom_cls: type | None = None
        self._custom: Any = None
        self._data: dict[str, pd.DataFrame] | None = None
        self._scores: dict[str, Any] | None = None
        self._created = False
        self.result: MetricResult | None = None
        self.ml_result: Any = None
        self.metric: str | None = None
        self.family: str = "synthguard"
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
                    kwargs["module_path"], kwargs["class_name"] = str(path), str(name)
                    cls = _load_custom(path, str(name))
                self._custom_cls = cls
                self.method = "custom_method"
        self.eval_method = DEFAULT_EVALUATING_METHOD if self.method == "default" else self.method
        self.config: dict[str, Any] = {"method": self.method, "eval_method": self.eval_method, **kwargs}
        if self._custom_cls is not None:
            _check_custom_class(self._custom_cls)
            self.family = "custom_method"
            self.required_keys = tuple(_ALIASES.get(k, k) for k in self._custom_cls.REQUIRED_INPUT_KEYS)
            self.params: dict[str, Any] = dict(kwargs)
            self._granularities = tuple(self._custom_cls.AVAILABLE_SCORES_GRANULARITY)
            return
        self._configure(kwargs)

    # ------------------------------------------------------------------------------ configuration
    def _configure(self, kwargs: dict[str, Any]) -> None:
        from ...registry import canonical_name, get_metric

        key = self.eval_method.replace("_", "-") if self.eval_method.startswith(
            ("anonymeter", "mlutility")) else self.eval_method
        lib = key.split("-", 1)[0]
        if lib == "anonymeter":
            self.family = "anonymeter"
            self._configure_anonymeter(key, kwargs)
        elif lib == "sdmetrics":
            self.family = "sdmetrics"
            report = key.replace("sdmetrics-single-table-", "").replace(
                "sdmetrics-single_table-", "").replace("sdmetrics-", "")
            names = {"qualityreport": "quality_report", "diagnosticreport": "diagnostic_report"}
            if report not in names:
                raise ConfigError(f"unknown evaluation method {self.method!r}: SDMetrics methods are "
                                  "sdmetrics-qualityreport and sdmetrics-diagnosticreport")
            self.metric = names[report]
            self.required_keys = ("ori", "syn")
            self.params = get_metric(self.metric).resolve_params(kwargs)
        elif lib == "mlutility":
            self.family = "mlutility"
            self._configure_ml(key, kwargs)
        elif lib == "mpuccs":
            raise ConfigError("evaluation method 'mpuccs' (PETsARD's experimental singling-out search) "
                              "is not provided by synthguard: use 'anonymeter-singlingout'")
        else:
            try:
                metric = canonical_name(self.method)
            except ConfigError as exc:
                raise ConfigError(f"unknown evaluation method {self.method!r}: use anonymeter-*, "
                                  "sdmetrics-*, mlutility-*, default, 'custom_method', or a synthguard "
                                  f"metric name ({exc})") from None
            self.metric = metric
            spec = get_metric(metric)
            self.required_keys = tuple(k for k, role in _ROLE.items() if role in spec.needs)
            self.params = spec.resolve_params(kwargs)
        self._granularities = _GRAN.get(self.family, GRANULARITIES)

    def _configure_anonymeter(self, key: str, kwargs: dict[str, Any]) -> None:
        from ...registry import get_metric

        attack = key.replace("anonymeter-", "")
        if attack not in _ANON:
            raise ConfigError(f"unknown evaluation method {self.method!r}: anonymeter methods are "
                              "anonymeter-singlingout, anonymeter-linkability, anonymeter-inference")
        p = dict(kwargs)
        p.pop("n_jobs", None)  # PETsARD passes it to anonymeter; synthguard's kernels need no pool
        if attack == "singlingout":
            mode = str(p.pop("mode", "multivariate")).lower()
            if mode not in ("univariate", "multivariate"):
                raise ConfigError(f"anonymeter-singlingout: mode must be 'univariate' or "
                                  f"'multivariate', got {mode!r}")
            metric = f"singling_out_{mode}"
            p.setdefault("n_attacks", 2000)
            if p["n_attacks"] is None:
                p["n_attacks"] = 2000
            p.setdefault("max_attempts", 500_000)
            if mode == "univariate":
                p.pop("n_cols", None)
            else:
                p.setdefault("n_cols", 3)
            p.setdefault("max_n_attacks", False)
        else:
            metric = _ANON[attack]
            p.setdefault("max_n_attacks", True)
            if p.get("n_attacks") is None:
                p.pop("n_attacks", None)
                if not p["max_n_attacks"]:
                    raise ConfigError(f"{self.method}: when max_n_attacks is False, n_attacks must be "
                                      "a positive integer")
            if attack == "linkability":
                p.setdefault("n_neighbors", 1)
                aux = p.get("aux_cols")  # None: synthguard's default split (PETsARD raises)
                if aux is not None and (len(aux) != 2 or not all(isinstance(a, (list, tuple)) for a in aux)
                        or set(aux[0]) & set(aux[1])):
                    raise ConfigError("anonymeter-linkability: aux_cols must be two lists of column "
                                      "names with no column in both")
                if aux is not None:
                    p["aux_cols"] = [list(aux[0]), list(aux[1])]
            else:  # no secret: every column in turn, the worst reported (PETsARD raises)
                if p.get("aux_cols") is not None and p["secret"] in p["aux_cols"]:
                    raise ConfigError("anonymeter-inference: the secret must not be one of aux_cols")
                p.setdefault("regression", False)  # PETsARD leaves anonymeter's default: exact match
        if self.extras:
            p.setdefault("n_records", 20)
        else:
            p.setdefault("n_records", 2000)  # details: every successful query / link, up to 2000
        self.metric = metric
        self.required_keys = ("ori", "syn", "control")
        try:
            self.params = get_metric(metric).resolve_params(p)
        except ConfigError as exc:
            raise ConfigError(f"{self.method}: {exc}") from None

    def _configure_ml(self, key: str, kwargs: dict[str, Any]) -> None:
        from .utility import EXPERIMENT_DESIGNS

        task = key.replace("mlutility-", "")
        if task not in ("classification", "regression", "cluster", "clustering"):
            raise ConfigError(f"unknown evaluation method {self.method!r}: ML utility methods are "
                              "mlutility-classification, mlutility-regression, mlutility-cluster")
        unknown = sorted(set(kwargs) - _ML_PARAMS)
        if unknown:
            raise ConfigError(f"{self.method} has no parameter {unknown[0]!r}; its parameters are "
                              f"{sorted(_ML_PARAMS)}")
        p = dict(kwargs)
        task = str(p.pop("task_type", None) or task)
        design = p.get("experiment_design", "dual_model_control")
        if design not in EXPERIMENT_DESIGNS:
            raise ConfigError(f"{self.method}: experiment_design must be one of "
                              f"{list(EXPERIMENT_DESIGNS)}, got {design!r}")
        if task != "cluster" and task != "clustering" and not p.get("target"):
            raise ConfigError(f"{self.method} needs target=<the column to predict>")
        self.metric = None
        self.params = {"task": task, **p}
        self.required_keys = ("ori", "syn") if design == "domain_transfer" else ("ori", "syn", "control")

    # ----------------------------------------------------------------------------------- running
    def create(self, data: Mapping[str, pd.DataFrame] | None = None) -> None:
        """Build the evaluator (PETsARD 1.10: no argument). ``data`` is the legacy (<= 1.0) way of
        attaching ``{"ori", "syn", "control"}``; with 1.10, pass the data to :meth:`eval`."""
        if self._custom_cls is not None and self._custom is None:
            self._custom = self._custom_cls(config=dict(self.config))
        self._created = True
        if data is not None:
            self._data = self._check_data(data, "create")
            self._scores = None

    def _check_data(self, data: Mapping[str, pd.DataFrame], where: str) -> dict[str, pd.DataFrame]:
        if not isinstance(data, Mapping):
            raise InputError(f"Evaluator.{where}: data must be a dict like {{'ori': df, 'syn': df, "
                             "'control': df}")
        unknown = [k for k in data if k not in _ROLE and k not in _ALIASES]
        if unknown:
            raise InputError(f"Evaluator.{where}: unknown data key(s) {unknown}; use 'ori', 'syn' and "
                             "'control' (or 'base' and 'target')")
        out: dict[str, pd.DataFrame] = {}
        for k, v in data.items():
            if v is None:
                continue
            if not isinstance(v, pd.DataFrame):
                raise InputError(f"Evaluator.{where}: data[{k!r}] must be a pandas DataFrame, got "
                                 f"{type(v).__name__}")
            role = _ALIASES.get(k, k)
            if role in out and k in _ALIASES:
                continue  # PETsARD: base/target only fill in a missing ori/syn
            out[role] = v
        missing = [k for k in self.required_keys if k not in out]
        if missing:
            what = {"ori": "the original (training) rows", "syn": "the synthetic release",
                    "control": "real rows held out from training"}
            raise InputError(f"evaluation method {self.method!r} needs data key(s) "
                             f"{', '.join(repr(k) for k in missing)} ("
                             + "; ".join(f"{k}: {what[k]}" for k in missing)
                             + "): pass them to eval({...}) or create(data={...})")
        return out

    def eval(self, data: Mapping[str, pd.DataFrame] | None = None) -> dict[str, Any]:
        """Run the evaluation on ``data`` (PETsARD 1.10) or on the data given to ``create``.

        Returns
        -------
        dict
            ``{granularity: DataFrame or None}`` with the granularities PETsARD returns for the
            method (see the module docstring).
        """
        if data is not None:
            self._data = self._check_data(data, "eval")
        if self._data is None:
            raise InputError("Evaluator.eval: no data: call eval({'ori': ..., 'syn': ..., "
                             "'control': ...})")
        if self._custom_cls is not None:
            if self._custom is None:
                self.create()
            view = {k: v.copy() for k, v in self._data.items()}
            for key in self._custom_cls.REQUIRED_INPUT_KEYS:  # a class asking for base/target gets them
                if key in _ALIASES and _ALIASES[key] in view:
                    view[key] = view[_ALIASES[key]]
            out = self._custom.eval(data=view)
            if not isinstance(out, Mapping):
                raise ConfigError(f"custom evaluator {self._custom_cls.__name__}.eval must return a dict "
                                  "keyed by granularity")
            self._scores = {g: out.get(g) for g in self._granularities}
            return dict(self._scores)
        if self.family == "mlutility":
            self._scores = self._eval_ml()
        else:
            self._scores = self._eval_metric()
        return dict(self._scores)

    def _eval_metric(self) -> dict[str, Any]:
        from ...data.encoding import EncodedView
        from ...data.tables import prepare_tables
        from ...registry import Context, get_metric, missing_inputs
        from ...run.executor import execute, missing_reason

        d = self._data
        assert d is not None
        metadata = self.metadata
        if metadata is None and self.family == "sdmetrics":
            metadata = petsard_metadata(d["ori"])  # what PETsARD hands SDMetrics
        # PETsARD keeps "X " and "X" apart: no whitespace normalisation, so the numbers match it
        tables = prepare_tables(d["ori"], d["syn"], d.get("control"), metadata,
                                strip_whitespace_values=False)
        spec = get_metric(self.metric)
        # PETsARD's anonymeter frames hold the headline only (the extras add the whole result)
        evidence = self.family != "anonymeter" or bool(self.extras)
        ctx = Context(tables=tables, encoded=EncodedView(tables), seed=self.seed,
                      evidence=evidence).for_metric(spec)
        missing = missing_inputs(spec, ctx)
        if missing:
            raise InputError(f"evaluation method {self.method!r} {missing_reason(missing)}: add "
                             "them to eval({...})")
        self.result = execute(spec, ctx, self.params).result_or_raise()
        if self.family == "anonymeter":
            out = _anonymeter_frames(self.result, self.extras)
        elif self.family == "sdmetrics":
            out = _sdmetrics_frames(self.result, self.extras)
        else:
            out = _generic_frames(self.result)
        return {g: out.get(g) for g in self._granularities}

    def _eval_ml(self) -> dict[str, Any]:
        from .utility import petsard_ml_utility

        d = self._data
        assert d is not None
        p = dict(self.params)
        if self.extras:
            p.setdefault("ci", True)
            p.setdefault("seed", self.seed)
        res = petsard_ml_utility(d["ori"], d["syn"], d.get("control"), **p)
        self.ml_result = res
        for note in res.notes:
            if note.startswith("xgboost is not installed"):
                warnings.warn(note, UserWarning, stacklevel=3)
        glob = pd.DataFrame(res.rows())
        if res.model == "sklearn-gradient-boosting" or self.extras:
            glob["model"] = res.model
        glob = _object_strings(glob)
        if self.extras:
            glob["n_train"] = res.n["syn" if res.experiment_design == "domain_transfer" else "ori"]
            glob["n_test"] = res.n["ori" if res.experiment_design == "domain_transfer" else "control"]
            glob["ci_low"] = [res.ci.get(m, (math.nan, math.nan))[0] for m in res.metrics]
            glob["ci_high"] = [res.ci.get(m, (math.nan, math.nan))[1] for m in res.metrics]
        if res.experiment_design == "domain_transfer":
            details: dict[str, Any] = {"syn_to_ori": dict(res.scores["syn_to_ori"]),
                                       "ori": dict.fromkeys(res.metrics, math.nan),
                                       "syn": dict(res.scores["syn_to_ori"])}
        else:
            details = {"ori": dict(res.scores["ori"]), "syn": dict(res.scores["syn"])}
        if self.extras:
            details["synthguard"] = res.to_dict()
        return {"global": glob, "details": details}

    # ------------------------------------------------------------------------------ legacy getters
    def _get(self, gran: str) -> Any:
        if self._scores is None:
            raise InputError(f"get_{gran}: call eval() first")
        return self._scores.get(gran)

    def get_global(self) -> pd.DataFrame | None:
        """Legacy getter: the ``global`` frame."""
        return self._get("global")

    def get_columnwise(self) -> pd.DataFrame | None:
        """Legacy getter: one row per column (``None`` when the method has none)."""
        return self._get("columnwise")

    def get_pairwise(self) -> pd.DataFrame | None:
        """Legacy getter: one row per column pair (``None`` when the method has none)."""
        return self._get("pairwise")

    def get_details(self) -> Any:
        """Legacy getter: the ``details`` entry."""
        return self._get("details")


# ---------------------------------------------------------------------------------------- frames
def _extras(res: MetricResult) -> dict[str, Any]:
    lo, hi = (res.ci if res.ci is not None else (math.nan, math.nan))
    return {"value": _num(res.value), "ci_low": _num(lo), "ci_high": _num(hi), "n": res.n,
            "baseline": res.baseline.value if res.baseline is not None else math.nan,
            "risk_level": res.risk_level}


def _object_strings(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with its text columns and index labels as ``object`` dtype, as PETsARD 1.10.1's
    frames have them on pandas 2. pandas 3 infers its ``str`` dtype for text built from Python
    strings; without this, the same frame would have another dtype (and ``layout``) per pandas
    version. Values are unchanged."""
    out = frame.copy()
    text = [c for c in out.columns if isinstance(out[c].dtype, pd.StringDtype)]
    if text:
        out = out.astype(dict.fromkeys(text, object))
    idx = out.index
    if isinstance(idx, pd.MultiIndex):
        if any(isinstance(lv.dtype, pd.StringDtype) for lv in idx.levels):
            out.index = pd.MultiIndex.from_arrays(
                [pd.Index(idx.get_level_values(i), dtype=object) for i in range(idx.nlevels)],
                names=idx.names)
    elif isinstance(idx.dtype, pd.StringDtype):
        out.index = pd.Index(idx, dtype=object, name=idx.name)
    return out


def _result_frame(row: Mapping[str, Any]) -> pd.DataFrame:
    """One row indexed ``result`` (unnamed index), as PETsARD builds its global frames."""
    return _object_strings(pd.DataFrame([dict(row)], index=pd.Index(["result"], dtype=object)))


def _anonymeter_frames(res: MetricResult, extras: bool) -> dict[str, Any]:
    det = dict(res.details) if isinstance(res.details, Mapping) else {}
    lo, hi = res.ci if res.ci is not None else (math.nan, math.nan)
    vals = {"risk": res.value, "risk_CI_btm": lo, "risk_CI_top": hi}
    for key in ("attack_rate", "baseline_rate", "control_rate"):
        vals[key], vals[f"{key}_err"] = det.get(key), det.get(f"{key}_err")
    row: dict[str, Any] = {k: _round(_num(vals[k])) for k in _ANON_KEYS}
    if extras:
        row.update(_extras(res))
    glob = _result_frame(row)
    recs = list(res.records or [])
    if res.name.startswith("singling_out"):
        details: Any = {"attack_queries": [r["query"] for r in recs if "query" in r],
                        "baseline_queries": None}
    elif res.name == "linkability":
        links: dict[int, set[int]] = {}
        for r in recs:
            links.setdefault(int(r["row"]), set()).add(int(r["synthetic_row"]))
        details = {"attack_links": links, "baseline_links": None, "control_links": None}
    else:
        details = None  # PETsARD stores no inference details
    if extras:
        details = dict(details or {})
        details["synthguard"] = res.to_dict()
    return {"global": glob, "details": details}


def _sdmetrics_frames(res: MetricResult, extras: bool) -> dict[str, Any]:
    det = dict(res.details) if isinstance(res.details, Mapping) else {}
    quality = res.name == "quality_report"
    if quality:
        row = {"Score": _round(_num(res.value)), "Column Shapes": _round(_num(det.get("column_shapes"))),
               "Column Pair Trends": _round(_num(det.get("column_pair_trends")))}
        prop, table_key = "Column Shapes", "column_shapes_table"
    else:
        row = {"Score": _round(_num(res.value)), "Data Validity": _round(_num(det.get("data_validity"))),
               "Data Structure": _round(_num(det.get("data_structure")))}
        prop, table_key = "Data Validity", "data_validity_table"
    if extras:
        row.update(_extras(res))
    glob = _result_frame(row)
    rows = [r for r in det.get(table_key) or [] if isinstance(r, Mapping) and "column" in r]
    columnwise = pd.DataFrame({"Property": [prop] * len(rows),
                               "Metric": [r.get("metric") for r in rows],
                               "Score": [_num(r.get("score")) for r in rows]},
                              index=pd.Index([str(r["column"]) for r in rows]))
    pairwise = None
    if quality:
        pairs = [r for r in det.get("column_pair_trends_table") or []
                 if isinstance(r, Mapping) and "column_1" in r and "column_2" in r]
        score = [_num(r.get("score")) for r in pairs]
        pairwise = pd.DataFrame(
            {"Property": ["Column Pair Trends"] * len(pairs),
             "Metric": [r.get("metric") for r in pairs],
             "Score": score,
             "Real Correlation": [_num(r.get("real_correlation")) for r in pairs],
             # SDMetrics leaves the synthetic correlation out of a pair it does not score
             "Synthetic Correlation": [_num(r.get("synthetic_correlation")) if not math.isnan(s)
                                       else math.nan for r, s in zip(pairs, score, strict=True)],
             "Real Association": [_num(r.get("real_association")) for r in pairs],
             "Meets Threshold?": pd.array([bool(r.get("meets_threshold", False)) for r in pairs],
                                          dtype="boolean")},
            index=pd.MultiIndex.from_tuples([(str(r["column_1"]), str(r["column_2"])) for r in pairs],
                                            names=[None, None]))
    return {"global": glob, "columnwise": _object_strings(columnwise),
            "pairwise": None if pairwise is None else _object_strings(pairwise),
            "details": res.to_dict() if extras else None}


def _generic_frames(res: MetricResult) -> dict[str, Any]:
    """A synthguard metric with no PETsARD counterpart: its value and synthguard's columns."""
    row: dict[str, Any] = {"metric": res.name}
    row.update(_extras(res))
    det = dict(res.details) if isinstance(res.details, Mapping) else {}
    for k, v in det.items():
        if isinstance(v, (int, float)) and not isinstance(v, bool) and k not in row:
            row[k] = v
    return {"global": _result_frame(row), "columnwise": None, "pairwise": None,
            "details": res.to_dict()}
