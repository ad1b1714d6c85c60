"""ML utility (PETsARD 1.6 semantics, leakage fixed): train the same models on the original and on the
synthetic table, test both on the control table (real rows held out from training).

* ``ml_utility_classification``: logistic regression, SVC, random forest, gradient boosting; F1
  (micro-averaged by default, as PETsARD: equals accuracy for single-label problems).
* ``ml_utility_regression``: linear regression, random forest, gradient boosting; R2 floored at 0.
* ``ml_utility_cluster``: k-means for each k in ``n_clusters``; silhouette of the control rows under
  the predicted labels, floored at -1 (-1 also when only one cluster is predicted).

Value = ``diff = syn_mean - ori_mean`` (0 = as useful as the original; negative = utility lost).

Differences from PETsARD 1.6, on purpose: every preprocessing step (median imputation with
missing-value indicators, scaling, one-hot encoding with a "missing" category) is fitted on the
training table only, never on control (PETsARD fitted it on ori+syn+control); missing values are
handled explicitly (PETsARD's NaN-dropping was a no-op); the target is validated with a clear
error; rows with a missing target are dropped and counted; training tables above ``max_rows`` are
subsampled with the run's seed so that a million rows finishes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ...core.results import Baseline, MetricResult
from ...data.schema import numeric_view
from ...errors import ConfigError, InputError, MetricError
from ...registry import Context, Interval, Param, register
from ...stats import bootstrap_ci

MISSING = "__missing__"
CLASSIFIERS = ("logistic_regression", "svc", "random_forest", "gradient_boosting")
REGRESSORS = ("linear_regression", "random_forest", "gradient_boosting")
#: PETsARD drops a categorical feature whose cardinality is at least this share of the rows.
MAX_CARDINALITY_SHARE = 0.10


# ---------------------------------------------------------------------------------------- features
def make_preprocessor(num_columns: Sequence[str], cat_columns: Sequence[str]) -> Any:
    """The feature pipeline, fitted on a training table only.

    Numeric columns: median imputation plus a missing-value indicator, then standard scaling.
    Categorical columns (strings, missing already mapped to ``"__missing__"``): one-hot encoding,
    categories unseen in training ignored. Tests may replace this factory with a spy.
    """
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    parts = []
    if num_columns:
        parts.append(("num", make_pipeline(SimpleImputer(strategy="median", add_indicator=True,
                                                         keep_empty_features=True),
                                           StandardScaler()), list(num_columns)))
    if cat_columns:
        parts.append(("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False),
                      list(cat_columns)))
    return ColumnTransformer(parts, remainder="drop", sparse_threshold=0.0)


def _feature_frame(frame: pd.DataFrame, num_columns: Sequence[str], cat_columns: Sequence[str]) -> pd.DataFrame:
    """Row-wise (stateless) typing: numbers as float (datetimes in days), categories as strings."""
    out = {c: numeric_view(frame[c]) for c in num_columns}
    for c in cat_columns:
        s = frame[c]
        out[c] = s.astype(object).where(s.notna(), MISSING).astype(str).to_numpy()
    return pd.DataFrame(out, index=frame.index)


def _features(ctx: Context, exclude: Sequence[str], train_frames: Sequence[pd.DataFrame]
              ) -> tuple[list[str], list[str], list[str]]:
    """Numeric and categorical feature columns, and the high-cardinality columns dropped."""
    schema = ctx.tables.schema
    num, cat, dropped = [], [], []
    for c, spec in schema.columns.items():
        if c in exclude or spec.sdtype in ("text", "id"):
            continue
        if spec.sdtype in ("numerical", "datetime"):
            num.append(c)
            continue
        if any(f[c].nunique(dropna=True) >= MAX_CARDINALITY_SHARE * len(f) for f in train_frames):
            dropped.append(c)
        else:
            cat.append(c)
    return num, cat, dropped


def _cap(frame: pd.DataFrame, max_rows: int | None, rng: np.random.Generator) -> pd.DataFrame:
    if max_rows is None or len(frame) <= max_rows:
        return frame
    rows = np.sort(rng.choice(len(frame), size=max_rows, replace=False))
    return frame.iloc[rows]


# -------------------------------------------------------------------------------------- models
def _classifier(name: str, seed: int, n_estimators: int) -> Any:
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import SVC

    return {"logistic_regression": lambda: LogisticRegression(max_iter=1000, random_state=seed),
            "svc": lambda: SVC(random_state=seed),
            "random_forest": lambda: RandomForestClassifier(n_estimators=n_estimators, random_state=seed),
            "gradient_boosting": lambda: GradientBoostingClassifier(n_estimators=n_estimators,
                                                                    random_state=seed)}[name]()


def _regressor(name: str, seed: int, n_estimators: int) -> Any:
    from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor
    from sklearn.linear_model import LinearRegression

    return {"linear_regression": LinearRegression,
            "random_forest": lambda: RandomForestRegressor(n_estimators=n_estimators, random_state=seed),
            "gradient_boosting": lambda: GradientBoostingRegressor(n_estimators=n_estimators,
                                                                   random_state=seed)}[name]()


def _check_models(allowed: tuple[str, ...]) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        bad = [m for m in value if m not in allowed]
        if bad or not value:
            return f"unknown or empty model list {list(value)}; choose from {list(allowed)}"
        return None
    return check


# ------------------------------------------------------------------------------------- driver
def _target(ctx: Context, metric: str, target: str | None, task: str) -> str:
    schema = ctx.tables.schema
    target = target if target is not None else schema.target
    if target is None:
        raise ConfigError(f"metric {metric!r}: parameter 'target' is not set and the metadata names no "
                          "'target': pass target=<column to predict> or add \"target\" to the metadata")
    if target not in schema.columns:
        raise ConfigError(f"metric {metric!r}: parameter 'target' {target!r} is not a column of the data; "
                          f"columns are: {', '.join(schema.columns)}")
    sd = schema.sdtype(target)
    if task == "classification":
        if sd in ("text", "id", "datetime"):
            raise ConfigError(f"metric {metric!r}: target {target!r} has sdtype {sd!r}, which cannot be a "
                              "class label: pick a categorical or boolean column")
        if sd == "numerical" and ctx.tables.original[target].nunique() > 50:
            raise ConfigError(f"metric {metric!r}: target {target!r} is numerical with "
                              f"{ctx.tables.original[target].nunique()} distinct values: use "
                              "ml_utility_regression, or pick a categorical target")
    elif sd != "numerical":
        raise ConfigError(f"metric {metric!r}: target {target!r} has sdtype {sd!r}; regression needs a "
                          "numerical target: use ml_utility_classification or pick a numerical column")
    return target


def _labels(frame: pd.DataFrame, target: str, task: str) -> np.ndarray:
    s = frame[target]
    if task == "regression":
        return s.to_numpy(dtype="float64")
    return s.astype(object).astype(str).to_numpy()


def _supervised(ctx: Context, metric: str, task: str, target: str | None, models: Sequence[str],
                n_estimators: int, max_rows: int | None, f1_average: str = "micro") -> MetricResult:
    from sklearn.dummy import DummyClassifier, DummyRegressor
    from sklearn.metrics import f1_score, r2_score

    t = ctx.tables
    target = _target(ctx, metric, target, task)
    frames = {"original": t.original, "synthetic": t.synthetic, "control": t.get("control")}
    missing_target = {r: int(f[target].isna().sum()) for r, f in frames.items()}
    frames = {r: f[f[target].notna()] for r, f in frames.items()}
    for role, f in frames.items():
        if len(f) < 10:
            raise MetricError(f"the {role} table has {len(f)} rows with a value in target {target!r}; "
                              "need at least 10")
    sizes_before = {r: len(f) for r, f in frames.items()}
    frames = {r: _cap(f, max_rows, ctx.rng("cap", r)) for r, f in frames.items()}
    num, cat, dropped = _features(ctx, [target], [frames["original"], frames["synthetic"]])
    if not num and not cat:
        raise MetricError(f"no usable feature besides target {target!r}: add numerical or "
                          "low-cardinality categorical columns")
    test = frames["control"]
    y_test = _labels(test, target, task)
    scores: dict[str, dict[str, float]] = {m: {} for m in models}
    preds: dict[str, list[np.ndarray]] = {"original": [], "synthetic": []}
    notes: list[str] = []
    for role in ("original", "synthetic"):
        train = frames[role]
        y_train = _labels(train, target, task)
        prep = make_preprocessor(num, cat)
        x_train = prep.fit_transform(_feature_frame(train, num, cat))
        x_test = prep.transform(_feature_frame(test, num, cat))
        degenerate = len(np.unique(y_train)) < 2
        if degenerate:
            notes.append(f"the {role} table has a single target value: its models predict a constant")
        for m in models:
            seed = int(ctx.rng("model", m).integers(2**31 - 1))
            if degenerate:
                model = DummyClassifier() if task == "classification" else DummyRegressor()
            elif task == "classification":
                model = _classifier(m, seed, n_estimators)
            else:
                model = _regressor(m, seed, n_estimators)
            model.fit(x_train, y_train)
            pred = model.predict(x_test)
            preds[role].append(pred)
            if task == "classification":
                s = float(f1_score(y_test, pred, average=f1_average))
            else:
                s = max(float(r2_score(y_test, pred)), 0.0)
            scores[m][role] = s
    score_name = f"f1_{f1_average}" if task == "classification" else "r2_floored_at_0"
    details = _summary(scores, score_name)
    if task == "classification":
        classes, y_codes = np.unique(y_test, return_inverse=True)
        index = pd.Index(classes)
        codes = {r: np.column_stack([index.get_indexer(np.asarray(p, dtype=object)) for p in preds[r]])
                 for r in preds}
        stat = _f1_diff_statistic(len(classes), f1_average)
        ci = bootstrap_ci(stat, [y_codes, codes["original"], codes["synthetic"]],
                          seed=ctx.rng("bootstrap"), n_boot=N_BOOT)
    else:
        ci = bootstrap_ci(_r2_diff, [y_test, np.column_stack(preds["original"]),
                                     np.column_stack(preds["synthetic"])],
                          seed=ctx.rng("bootstrap"), n_boot=N_BOOT)
    details["diff_ci"] = ci
    details.update(target=target, task=task, numeric_features=num, categorical_features=cat,
                   dropped_high_cardinality=dropped, rows_missing_target=missing_target,
                   n_train_original=len(frames["original"]), n_train_synthetic=len(frames["synthetic"]),
                   n_test=len(test), max_rows=max_rows,
                   subsampled=[r for r in frames if len(frames[r]) < sizes_before[r]],
                   params={"target": target, "models": list(models), "n_estimators": n_estimators,
                           "max_rows": max_rows})
    return _result(metric, details, notes, len(test))


#: Bootstrap resamples of the control rows for the confidence interval of ``diff``.
N_BOOT = 500


def _f1_scores(y: np.ndarray, pred: np.ndarray, n_classes: int, average: str) -> np.ndarray:
    """F1 of every column of ``pred`` (class codes; -1 = a class absent from ``y``)."""
    out = np.empty(pred.shape[1])
    for j in range(pred.shape[1]):
        p = pred[:, j]
        if average == "micro":
            out[j] = float(np.mean(p == y))
            continue
        hit = p == y
        tp = np.bincount(y[hit], minlength=n_classes).astype(float)
        support = np.bincount(y, minlength=n_classes).astype(float)
        predicted = np.bincount(p[p >= 0], minlength=n_classes)[:n_classes].astype(float)
        den = support + predicted
        f1 = np.divide(2 * tp, den, out=np.zeros(n_classes), where=den > 0)
        present = support > 0
        if average == "macro":
            out[j] = float(f1[present | (predicted > 0)].mean())
        else:
            out[j] = float((f1 * support).sum() / support.sum())
    return out


def _f1_diff_statistic(n_classes: int, average: str) -> Callable[..., float]:
    def stat(y: np.ndarray, ori: np.ndarray, syn: np.ndarray) -> float:
        return float(_f1_scores(y, syn, n_classes, average).mean()
                     - _f1_scores(y, ori, n_classes, average).mean())
    return stat


def _r2_floored(y: np.ndarray, pred: np.ndarray) -> np.ndarray:
    sst = float(((y - y.mean()) ** 2).sum())
    if sst == 0:
        return np.zeros(pred.shape[1])
    sse = ((pred - y[:, None]) ** 2).sum(axis=0)
    return np.maximum(1.0 - sse / sst, 0.0)


def _r2_diff(y: np.ndarray, ori: np.ndarray, syn: np.ndarray) -> float:
    return float(_r2_floored(y, syn).mean() - _r2_floored(y, ori).mean())


def _silhouette_diff(ori: np.ndarray, syn: np.ndarray) -> float:
    """Mean over k of the floored mean silhouette (NaN columns = a single cluster = -1)."""
    def score(s: np.ndarray) -> float:
        means = s.mean(axis=0)
        return float(np.maximum(np.where(np.isnan(means), -1.0, means), -1.0).mean())
    return score(syn) - score(ori)


def _summary(scores: dict[str, dict[str, float]], score_name: str) -> dict[str, Any]:
    ori = np.array([v["original"] for v in scores.values()], dtype="float64")
    syn = np.array([v["synthetic"] for v in scores.values()], dtype="float64")
    return {"ori_mean": float(ori.mean()), "ori_std": float(ori.std()),
            "syn_mean": float(syn.mean()), "syn_std": float(syn.std()),
            "diff": float(syn.mean() - ori.mean()), "score_name": score_name,
            "models": [{"model": m, "ori": v["original"], "syn": v["synthetic"],
                        "diff": v["synthetic"] - v["original"]} for m, v in scores.items()]}


def _result(metric: str, details: dict[str, Any], notes: list[str], n_test: int) -> MetricResult:
    warn = list(notes)
    if details.get("subsampled"):
        warn.append(f"tables {', '.join(details['subsampled'])} were subsampled to max_rows="
                    f"{details['max_rows']} rows (seeded)")
    if details["diff"] < -0.1:
        warn.append(f"models trained on the synthetic data score {-details['diff']:.3f} lower than "
                    "models trained on the original")
    return MetricResult(metric, "utility", details["diff"], "higher is better",
                        baseline=Baseline(details["ori_mean"], "the same models trained on the original "
                                          "table, tested on control (diff = syn_mean - ori_mean)"),
                        ci=details.get("diff_ci"), n=n_test, warning="; ".join(warn) or None,
                        details=details)


_COMMON = [
    Param("target", None, "column to predict (default: the metadata's 'target')", kind=str),
    Param("n_estimators", 100, "trees in the random forest and gradient boosting models", kind="positive int"),
    Param("max_rows", 10000, "cap on rows of each table (original, synthetic, control), sampled with the "
          "run's seed; null = no cap", kind=int, interval=Interval(10), nullable=True),
]


@register("ml_utility_classification", family="utility", direction="higher is better",
          needs=("original", "synthetic", "control"),
          params=[*_COMMON,
                  Param("models", CLASSIFIERS, "classifiers to average", kind=tuple,
                        check=_check_models(CLASSIFIERS)),
                  Param("f1_average", "micro", "F1 averaging (PETsARD 1.6: micro)", kind=str,
                        choices=("micro", "macro", "weighted"))],
          description="F1 on control of models trained on synthetic minus trained on original "
                      "(0 = same utility, negative = utility lost)",
          aliases=("mlutility_classification",))
def ml_utility_classification(ctx: Context, *, target: str | None = None, n_estimators: int = 100,
                              max_rows: int | None = 10000, models: Sequence[str] = CLASSIFIERS,
                              f1_average: str = "micro") -> MetricResult:
    """Classification utility: train on original and on synthetic, F1 on control (see module doc)."""
    return _supervised(ctx, "ml_utility_classification", "classification", target, tuple(models),
                       n_estimators, max_rows, f1_average)


@register("ml_utility_regression", family="utility", direction="higher is better",
          needs=("original", "synthetic", "control"),
          params=[*_COMMON,
                  Param("models", REGRESSORS, "regressors to average", kind=tuple,
                        check=_check_models(REGRESSORS))],
          description="R2 (floored at 0) on control of models trained on synthetic minus trained on "
                      "original (0 = same utility, negative = utility lost)",
          aliases=("mlutility_regression",))
def ml_utility_regression(ctx: Context, *, target: str | None = None, n_estimators: int = 100,
                          max_rows: int | None = 10000, models: Sequence[str] = REGRESSORS) -> MetricResult:
    """Regression utility: train on original and on synthetic, R2 on control (see module doc)."""
    return _supervised(ctx, "ml_utility_regression", "regression", target, tuple(models),
                       n_estimators, max_rows)


def _check_clusters(value: Any) -> str | None:
    if not value or any(not isinstance(k, (int, np.integer)) or k < 2 for k in value):
        return f"must be a non-empty list of integers >= 2, got {list(value)}"
    return None


@register("ml_utility_cluster", family="utility", direction="higher is better",
          needs=("original", "synthetic", "control"),
          params=[Param("n_clusters", (4, 5, 6), "k values of k-means", kind=tuple, check=_check_clusters),
                  Param("max_rows", 10000, "cap on rows of each table (seeded sample); null = no cap",
                        kind=int, interval=Interval(10), nullable=True),
                  Param("silhouette_rows", 5000, "control rows (seeded sample) the silhouette is "
                        "computed on (it is quadratic)", kind=int, interval=Interval(10), nullable=True)],
          description="silhouette on control of k-means fitted on synthetic minus fitted on original "
                      "(0 = same structure)",
          aliases=("mlutility_cluster",))
def ml_utility_cluster(ctx: Context, *, n_clusters: Sequence[int] = (4, 5, 6), max_rows: int | None = 10000,
                       silhouette_rows: int | None = 5000) -> MetricResult:
    """Clustering utility: k-means on original and on synthetic, silhouette on control."""
    from sklearn.cluster import KMeans
    from sklearn.metrics import silhouette_samples
    from threadpoolctl import threadpool_limits

    t = ctx.tables
    frames = {"original": t.original, "synthetic": t.synthetic, "control": t.get("control")}
    sizes_before = {r: len(f) for r, f in frames.items()}
    frames = {r: _cap(f, max_rows, ctx.rng("cap", r)) for r, f in frames.items()}
    num, cat, dropped = _features(ctx, [], [frames["original"], frames["synthetic"]])
    if not num and not cat:
        raise MetricError("no usable feature: add numerical or low-cardinality categorical columns")
    test = frames["control"]
    if silhouette_rows is not None and len(test) > silhouette_rows:
        test = _cap(test, silhouette_rows, ctx.rng("silhouette"))
    scores: dict[str, dict[str, float]] = {f"kmeans_k{k}": {} for k in n_clusters}
    per_row: dict[str, list[np.ndarray]] = {"original": [], "synthetic": []}
    for role in ("original", "synthetic"):
        prep = make_preprocessor(num, cat)
        x_train = prep.fit_transform(_feature_frame(frames[role], num, cat))
        x_test = prep.transform(_feature_frame(test, num, cat))
        for k in n_clusters:
            name = f"kmeans_k{k}"
            if len(x_train) <= k:
                raise MetricError(f"the {role} table has {len(x_train)} rows, too few for k={k}")
            seed = int(ctx.rng("model", name).integers(2**31 - 1))
            # one OpenMP thread: k-means' thread pool collapses on a loaded machine (100x slower)
            with threadpool_limits(limits=1, user_api="openmp"):
                km = KMeans(n_clusters=int(k), n_init=10, random_state=seed).fit(x_train)
                labels = km.predict(x_test)
            if len(np.unique(labels)) < 2:
                s = -1.0
                per_row[role].append(np.full(len(labels), np.nan))
            else:
                values = silhouette_samples(x_test, labels)
                s = max(float(values.mean()), -1.0)
                per_row[role].append(values)
            scores[name][role] = s
    details = _summary(scores, "silhouette_floored_at_-1")
    details["diff_ci"] = bootstrap_ci(_silhouette_diff, [np.column_stack(per_row["original"]),
                                                         np.column_stack(per_row["synthetic"])],
                                      seed=ctx.rng("bootstrap"), n_boot=N_BOOT)
    details.update(task="cluster", numeric_features=num, categorical_features=cat,
                   dropped_high_cardinality=dropped, n_train_original=len(frames["original"]),
                   n_train_synthetic=len(frames["synthetic"]), n_test=len(test), max_rows=max_rows,
                   subsampled=[r for r in frames if len(frames[r]) < sizes_before[r]],
                   params={"n_clusters": [int(k) for k in n_clusters], "max_rows": max_rows,
                           "silhouette_rows": silhouette_rows})
    return _result("ml_utility_cluster", details, [], len(test))


# ======================================================================= PETsARD 1.10 ML utility
# One gradient-boosted model per training table, one row per metric (``metric, ori, syn, diff``).
# Behaviour (from PETsARD 1.10.1's documentation and observed outputs, see docs/compat.md):
# rows with any missing value are dropped from every table; a feature column is categorical when
# it is non-numeric in any table; one-hot encoding (unknown categories ignored) and standard
# scaling are fitted on ori + syn only; a categorical target is label-encoded on ori + syn, a
# regression target standardised on ori + syn; clustering is k-means (``n_init="auto"``) scored by
# the silhouette of the test rows (-1 when it cannot be computed).

#: The metrics PETsARD 1.10 computes by default, per task.
PETSARD_DEFAULT_METRICS: dict[str, tuple[str, ...]] = {
    "classification": ("f1_score", "roc_auc", "accuracy", "precision", "recall", "specificity", "mcc",
                       "pr_auc", "tp", "tn", "fp", "fn"),
    "regression": ("r2_score", "rmse"),
    "clustering": ("silhouette_score",),
}
_CONFUSION = ("tp", "tn", "fp", "fn", "tpr", "tnr", "ppv", "npv", "fpr", "fnr", "fdr", "for",
              "specificity", "sensitivity", "informedness", "markedness", "prevalence", "dor")
#: Every metric name accepted, per task.
PETSARD_METRICS: dict[str, tuple[str, ...]] = {
    "classification": ("accuracy", "f1_score", "f2_score", "f0.5_score", "precision", "recall", "mcc",
                       "roc_auc", "pr_auc", *_CONFUSION),
    "regression": ("r2_score", "mse", "mae", "rmse", "mape"),
    "clustering": ("silhouette_score",),
}
_TASKS = {"classification": "classification", "class": "classification", "regression": "regression",
          "reg": "regression", "cluster": "clustering", "clustering": "clustering"}
EXPERIMENT_DESIGNS = ("dual_model_control", "domain_transfer")
RESAMPLING = ("smote-enn", "smote-tomek")


def gradient_boosting_backend() -> str:
    """``"xgboost"`` when the ``xgboost`` package is importable, else ``"sklearn-gradient-boosting"``."""
    import importlib.util

    return "xgboost" if importlib.util.find_spec("xgboost") is not None else "sklearn-gradient-boosting"


@dataclass(frozen=True)
class MLUtilityResult:
    """PETsARD 1.10-style ML utility: per-metric scores of the model trained on each table.

    Attributes
    ----------
    task : str
        ``classification``, ``regression`` or ``clustering``.
    experiment_design : str
        ``dual_model_control`` (ori -> control vs syn -> control) or ``domain_transfer``
        (syn -> ori).
    metrics : tuple of str
        Metric names, in output order.
    scores : mapping
        ``{"ori": {metric: value}, "syn": {...}}`` (dual model) or ``{"syn_to_ori": {...}}``.
    model : str
        The learner: ``xgboost``, ``sklearn-gradient-boosting`` or ``kmeans``.
    n : mapping
        Rows used per table after dropping rows with missing values.
    status : str
        ``success``, or why every score is NaN (``empty_after_dropna``, ``constant_target``).
    notes : tuple of str
        Anything the reader must know (rows dropped, parameters a fallback learner ignores).
    """

    task: str
    experiment_design: str
    metrics: tuple[str, ...]
    scores: Mapping[str, Mapping[str, float]]
    model: str
    n: Mapping[str, int]
    status: str = "success"
    notes: tuple[str, ...] = ()
    #: bootstrap interval (over the test rows) of each metric's ``diff`` (dual model) or value
    #: (domain transfer); only when asked for (``ci=True``)
    ci: Mapping[str, tuple[float, float]] = field(default_factory=dict)

    def rows(self, digits: int | None = 2) -> list[dict[str, Any]]:
        """One dict per metric: ``metric, ori, syn, diff`` (or ``metric, syn_to_ori``), rounded."""
        def rnd(v: Any) -> Any:
            if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
                return int(v)
            v = float(v)
            return v if digits is None or not math.isfinite(v) else round(v, digits)

        out = []
        for m in self.metrics:
            if self.experiment_design == "domain_transfer":
                out.append({"metric": m, "syn_to_ori": rnd(self.scores["syn_to_ori"].get(m, np.nan))})
            else:
                o, s = self.scores["ori"].get(m, np.nan), self.scores["syn"].get(m, np.nan)
                out.append({"metric": m, "ori": rnd(o), "syn": rnd(s), "diff": rnd(s - o)})
        return out

    def to_dict(self) -> dict[str, Any]:
        from ...core.results import to_jsonable

        return to_jsonable({"task": self.task, "experiment_design": self.experiment_design,
                            "metrics": list(self.metrics), "scores": self.scores, "model": self.model,
                            "n": self.n, "status": self.status, "notes": list(self.notes),
                            "ci": {k: list(v) for k, v in self.ci.items()},
                            "rows": self.rows(None)})


def _is_categorical(frames: Sequence[pd.DataFrame], col: str) -> bool:
    for f in frames:
        s = f[col]
        if s.dtype == object or isinstance(s.dtype, pd.CategoricalDtype) or pd.api.types.is_string_dtype(s):
            return True
        try:
            pd.to_numeric(s, errors="raise")
        except (ValueError, TypeError):
            return True
    return False


def _design_matrices(frames: Mapping[str, pd.DataFrame], features: Sequence[str]) -> dict[str, np.ndarray]:
    """One-hot + scaling fitted on ori + syn; transform every table (PETsARD 1.10 semantics)."""
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    keys = list(frames)
    fit_on = [frames["ori"], frames["syn"]]
    cat = [c for c in features if _is_categorical(list(frames.values()), c)]
    num = [c for c in features if c not in cat]
    parts: dict[str, list[np.ndarray]] = {k: [] for k in keys}
    for k in keys:
        if num:
            parts[k].append(frames[k][num].apply(pd.to_numeric).to_numpy(dtype="float64"))
    if cat:
        enc = OneHotEncoder(sparse_output=False, handle_unknown="ignore")
        train = pd.concat([f[cat] for f in fit_on])
        as_str = False
        try:
            enc.fit(train)
        except TypeError:  # mixed value types in a column: compare them as text
            as_str = True
            enc.fit(train.astype(str))
        for k in keys:
            part = frames[k][cat]
            parts[k].append(enc.transform(part.astype(str) if as_str else part))
    mats = {k: np.hstack(v) if v else np.empty((len(frames[k]), 0)) for k, v in parts.items()}
    scaler = StandardScaler().fit(np.vstack([mats["ori"], mats["syn"]]))
    return {k: scaler.transform(m) for k, m in mats.items()}


def _learner(task: str, backend: str, random_state: int, xgb_params: Mapping[str, Any],
             n_jobs: int | None) -> Any:
    if backend == "xgboost":
        import xgboost

        params = dict(xgb_params)
        # one thread unless asked: the same trees (XGBoost's hist method does not depend on the
        # thread count) and no oversubscription on a shared machine (10x faster under load)
        params.setdefault("n_jobs", 1 if n_jobs is None else n_jobs)
        cls = xgboost.XGBClassifier if task == "classification" else xgboost.XGBRegressor
        return cls(random_state=random_state, **params)
    from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor

    known = {k: v for k, v in xgb_params.items()
             if k in ("n_estimators", "max_depth", "learning_rate", "subsample")}
    cls = GradientBoostingClassifier if task == "classification" else GradientBoostingRegressor
    return cls(random_state=random_state, **known)


def _confusion(y: np.ndarray, pred: np.ndarray) -> dict[str, float]:
    from sklearn.metrics import confusion_matrix

    cm = confusion_matrix(y, pred)
    if cm.shape == (2, 2):
        tn, fp, fn, tp = (int(v) for v in cm.ravel())
    else:  # multi-class: micro sums
        tp = int(np.trace(cm))
        fp = int((cm.sum(axis=0) - np.diag(cm)).sum())
        fn = int((cm.sum(axis=1) - np.diag(cm)).sum())
        tn = int(cm.sum()) - tp - fp - fn

    def ratio(a: float, b: float) -> float:
        return a / b if b > 0 else 0.0

    m: dict[str, float] = {"tp": tp, "tn": tn, "fp": fp, "fn": fn, "tpr": ratio(tp, tp + fn),
                           "tnr": ratio(tn, tn + fp), "ppv": ratio(tp, tp + fp), "npv": ratio(tn, tn + fn),
                           "fpr": ratio(fp, fp + tn), "fnr": ratio(fn, fn + tp), "fdr": ratio(fp, fp + tp),
                           "for": ratio(fn, fn + tn), "prevalence": ratio(tp + fn, tp + tn + fp + fn),
                           "dor": (tp * tn) / (fp * fn) if fp * fn > 0 else math.inf}
    m.update(sensitivity=m["tpr"], specificity=m["tnr"], informedness=m["tpr"] + m["tnr"] - 1,
             markedness=m["ppv"] + m["npv"] - 1)
    return m


def _classification_scores(y: np.ndarray, pred: np.ndarray, proba: np.ndarray | None,
                           metrics: Sequence[str]) -> dict[str, float]:
    from sklearn.metrics import (
        accuracy_score,
        auc,
        f1_score,
        fbeta_score,
        matthews_corrcoef,
        precision_recall_curve,
        precision_score,
        recall_score,
        roc_auc_score,
    )

    average = "weighted" if len(np.unique(y)) > 2 else "binary"
    cm = _confusion(y, pred)
    out: dict[str, float] = {}
    for m in metrics:
        if m in cm:
            out[m] = cm[m]
        elif m == "accuracy":
            out[m] = float(accuracy_score(y, pred))
        elif m == "f1_score":
            out[m] = float(f1_score(y, pred, average=average))
        elif m in ("f2_score", "f0.5_score"):
            out[m] = float(fbeta_score(y, pred, beta=2.0 if m == "f2_score" else 0.5, average=average))
        elif m == "precision":
            out[m] = float(precision_score(y, pred, average=average, zero_division=0))
        elif m == "recall":
            out[m] = float(recall_score(y, pred, average=average, zero_division=0))
        elif m == "mcc":
            out[m] = float(matthews_corrcoef(y, pred))
        elif proba is None:
            out[m] = math.nan
        elif m == "roc_auc":
            try:
                out[m] = float(roc_auc_score(y, proba[:, 1]) if len(np.unique(y)) == 2 else
                               roc_auc_score(y, proba, multi_class="ovr", average="weighted"))
            except ValueError:
                out[m] = math.nan
        elif m == "pr_auc":
            if len(np.unique(y)) == 2:
                p, r, _ = precision_recall_curve(y, proba[:, 1])
                out[m] = float(auc(r, p))
            else:
                vals = []
                for i in range(proba.shape[1]):
                    p, r, _ = precision_recall_curve((y == i).astype(int), proba[:, i])
                    vals.append(auc(r, p))
                out[m] = float(np.mean(vals))
    return out


def _regression_scores(y: np.ndarray, pred: np.ndarray, metrics: Sequence[str]) -> dict[str, float]:
    from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score

    out: dict[str, float] = {}
    for m in metrics:
        if m == "r2_score":
            out[m] = float(r2_score(y, pred))
        elif m == "mse":
            out[m] = float(mean_squared_error(y, pred))
        elif m == "rmse":
            out[m] = float(np.sqrt(mean_squared_error(y, pred)))
        elif m == "mae":
            out[m] = float(mean_absolute_error(y, pred))
        elif m == "mape":
            out[m] = float(np.mean(np.abs((y - pred) / y)) * 100) if np.all(y != 0) else math.inf
    return out


def petsard_ml_utility(ori: pd.DataFrame, syn: pd.DataFrame, control: pd.DataFrame | None = None, *,
                       task: str, target: str | None = None, metrics: Sequence[str] | None = None,
                       n_clusters: int = 3, xgb_params: Mapping[str, Any] | None = None,
                       random_state: int = 42, experiment_design: str = "dual_model_control",
                       resampling: str | None = None, n_jobs: int | None = None,
                       backend: str | None = None, ci: bool = False, n_boot: int = 200,
                       seed: int = 0) -> MLUtilityResult:
    """ML utility as PETsARD 1.10 computes it: one gradient-boosted model (XGBoost when installed,
    else scikit-learn's gradient boosting) or k-means per training table, scored per metric.

    Parameters
    ----------
    ori, syn, control : DataFrame
        Training rows, synthetic release, real rows held out (``control`` is not needed with
        ``experiment_design="domain_transfer"``, which tests on ``ori``).
    task : str
        ``classification`` / ``regression`` / ``clustering`` (aliases ``class``, ``reg``,
        ``cluster``).
    target : str, optional
        Column to predict (required for classification and regression, ignored for clustering).
    metrics : list of str, optional
        Metric names (see :data:`PETSARD_METRICS`); default :data:`PETSARD_DEFAULT_METRICS`.
    n_clusters : int
        k of k-means (clustering).
    xgb_params : mapping, optional
        Passed to ``XGBClassifier`` / ``XGBRegressor``; the scikit-learn fallback takes
        ``n_estimators``, ``max_depth``, ``learning_rate`` and ``subsample`` from it.
    random_state : int
        Seed of the learner, the resampler and k-means.
    experiment_design : str
        ``dual_model_control`` (default) or ``domain_transfer``.
    resampling : str, optional
        ``smote-enn`` or ``smote-tomek`` (classification; needs ``imbalanced-learn``) applied to
        the training tables.
    n_jobs : int, optional
        Threads of the XGBoost learner (default 1: the same numbers as more threads).
    backend : str, optional
        Force ``xgboost`` or ``sklearn-gradient-boosting`` (default: XGBoost when installed).
    ci : bool
        Also compute a percentile bootstrap interval of each metric's ``diff`` (``syn - ori``,
        resampling the test rows jointly for both models; the models are not refitted), or of
        the value under ``domain_transfer``. The silhouette's interval resamples the per-row
        silhouette values.
    n_boot, seed : int
        Bootstrap resamples and their seed.

    Returns
    -------
    MLUtilityResult

    Raises
    ------
    ConfigError
        Unknown task, metric, design or resampling; missing target; a forced backend that is
        not installed.
    """
    task_name = _TASKS.get(str(task).lower())
    if task_name is None:
        raise ConfigError(f"ML utility: unknown task {task!r}; use classification, regression or "
                          "clustering")
    if experiment_design not in EXPERIMENT_DESIGNS:
        raise ConfigError(f"ML utility: experiment_design must be one of {list(EXPERIMENT_DESIGNS)}, "
                          f"got {experiment_design!r}")
    if resampling in ("None", ""):
        resampling = None
    if resampling is not None:
        if resampling not in RESAMPLING:
            raise ConfigError(f"ML utility: resampling must be one of {list(RESAMPLING)} or None, got "
                              f"{resampling!r}")
        if task_name != "classification":
            raise ConfigError(f"ML utility: resampling {resampling!r} applies to classification only")
    if task_name == "clustering":
        target = None
    elif not target:
        raise ConfigError(f"ML utility ({task_name}) needs target=<column to predict>")
    if isinstance(n_clusters, bool) or not isinstance(n_clusters, (int, np.integer)) or n_clusters < 2:
        raise ConfigError(f"ML utility: n_clusters must be an integer >= 2, got {n_clusters!r}")
    chosen = tuple(metrics) if metrics is not None else PETSARD_DEFAULT_METRICS[task_name]
    bad = [m for m in chosen if m not in PETSARD_METRICS[task_name]]
    if bad or not chosen:
        raise ConfigError(f"ML utility: metric(s) {bad or chosen} not available for {task_name}; "
                          f"choose from {list(PETSARD_METRICS[task_name])}")
    learner = "kmeans" if task_name == "clustering" else (backend or gradient_boosting_backend())
    if learner not in ("kmeans", "xgboost", "sklearn-gradient-boosting"):
        raise ConfigError(f"ML utility: backend must be 'xgboost' or 'sklearn-gradient-boosting', got "
                          f"{backend!r}")
    if learner == "xgboost" and gradient_boosting_backend() != "xgboost":
        raise ConfigError("ML utility: backend='xgboost' but xgboost is not installed: "
                          "pip install 'synthguard[xgboost]'")
    notes: list[str] = []
    if learner == "sklearn-gradient-boosting":
        notes.append("xgboost is not installed: scikit-learn's gradient boosting was used instead "
                     "(pip install 'synthguard[xgboost]' for PETsARD's learner)")
        ignored = sorted(set(xgb_params or {}) - {"n_estimators", "max_depth", "learning_rate",
                                                  "subsample"})
        if ignored:
            notes.append(f"xgb_params {ignored} have no scikit-learn equivalent and were ignored")

    transfer = experiment_design == "domain_transfer"
    frames: dict[str, pd.DataFrame] = {"ori": ori, "syn": syn}
    if transfer:
        frames["control"] = ori
    else:
        if control is None:
            raise InputError("ML utility (dual_model_control) needs a control table: real rows held "
                             "out from training (or use experiment_design='domain_transfer')")
        frames["control"] = control
    for k, f in frames.items():
        if target is not None and target not in f.columns:
            raise InputError(f"ML utility: target {target!r} is not a column of the {k} table")
    cols = [c for c in ori.columns]
    frames = {k: f[cols].dropna() for k, f in frames.items()}
    n = {k: len(f) for k, f in frames.items()}
    dropped = {k: len(src) - n[k] for k, src in (("ori", ori), ("syn", syn), ("control", frames["control"]))}
    if any(dropped[k] for k in ("ori", "syn")) or (not transfer and len(control) - n["control"]):
        notes.append("rows with a missing value were dropped (PETsARD's rule): " + ", ".join(
            f"{k} {len(src) - n[k]}" for k, src in (("ori", ori), ("syn", syn)) +
            ((("control", control),) if not transfer and control is not None else ())))
    keys = ("syn_to_ori",) if transfer else ("ori", "syn")

    def all_nan(status: str) -> MLUtilityResult:
        scores = {k: dict.fromkeys(chosen, math.nan) for k in keys}
        return MLUtilityResult(task_name, experiment_design, chosen, scores, learner, n, status,
                               tuple(notes))

    if any(v == 0 for v in n.values()):
        notes.append("a table is empty after dropping rows with missing values: every score is NaN")
        return all_nan("empty_after_dropna")
    if target is not None and any(f[target].nunique() == 1 for f in frames.values()):
        notes.append(f"target {target!r} is constant in a table: every score is NaN")
        return all_nan("constant_target")

    features = [c for c in cols if c != target]
    X = _design_matrices(frames, features)
    y: dict[str, np.ndarray] = {}
    if task_name == "classification":
        labels = pd.Index(pd.unique(pd.concat([frames["ori"][target], frames["syn"][target]])))
        labels = labels.sort_values()
        for k, f in frames.items():
            y[k] = labels.get_indexer(f[target])
        unseen = int((y["control"] < 0).sum())
        if unseen:
            keep = y["control"] >= 0
            X["control"], y["control"] = X["control"][keep], y["control"][keep]
            notes.append(f"{unseen} control row(s) carry a label absent from ori and syn and were "
                         "dropped (PETsARD 1.10.1 raises on them)")
            n["control"] = int(keep.sum())
    elif task_name == "regression":
        vals = {k: pd.to_numeric(f[target]).to_numpy(dtype="float64") for k, f in frames.items()}
        both = np.concatenate([vals["ori"], vals["syn"]])
        mu, sd = both.mean(), both.std()
        sd = sd if sd > 0 else 1.0
        y = {k: (v - mu) / sd for k, v in vals.items()}

    def fit_score(train: str, test: str) -> dict[str, float]:
        if task_name == "clustering":
            from sklearn.cluster import KMeans
            from sklearn.metrics import silhouette_score
            from threadpoolctl import threadpool_limits

            with threadpool_limits(limits=1, user_api="openmp"):
                km = KMeans(n_clusters=int(n_clusters), random_state=random_state, n_init="auto")
                km.fit(X[train])
                labels_ = km.predict(X[test])
                try:
                    s = float(silhouette_score(X[test], labels_))
                except ValueError:
                    s = -1.0
                if ci:
                    from sklearn.metrics import silhouette_samples

                    kept[train] = (silhouette_samples(X[test], labels_) if len(np.unique(labels_)) > 1
                                   else np.full(len(labels_), -1.0))
            return {"silhouette_score": s}
        x_tr, y_tr = X[train], y[train]
        if resampling is not None:
            x_tr, y_tr = _resample(x_tr, y_tr, resampling, random_state, notes, train)
        model = _learner(task_name, learner, random_state, xgb_params or {}, n_jobs)
        if task_name == "classification" and learner == "xgboost":
            # XGBoost wants labels 0..k-1 present in training: map the training labels densely
            present = np.unique(y_tr)
            model.fit(x_tr, np.searchsorted(present, y_tr))
            pred = present[model.predict(X[test]).astype(int)]
            proba_part = model.predict_proba(X[test])
            proba = np.zeros((len(pred), len(labels)))
            proba[:, present] = proba_part
        else:
            model.fit(x_tr, y_tr)
            pred = model.predict(X[test])
            proba = None
            if task_name == "classification":
                proba = np.zeros((len(pred), len(labels)))
                proba[:, model.classes_.astype(int)] = model.predict_proba(X[test])
        if ci:
            kept[train] = (pred, proba)
        if task_name == "classification":
            return _classification_scores(y[test], pred, proba, chosen)
        return _regression_scores(y[test], pred, chosen)

    kept: dict[str, Any] = {}
    if transfer:
        scores = {"syn_to_ori": fit_score("syn", "ori")}
    else:
        scores = {"ori": fit_score("ori", "control"), "syn": fit_score("syn", "control")}
    intervals: dict[str, tuple[float, float]] = {}
    if ci:
        intervals = _ml_intervals(task_name, chosen, kept, y.get("ori" if transfer else "control"),
                                  transfer, n_boot, seed)
    return MLUtilityResult(task_name, experiment_design, chosen, scores, learner, n, "success",
                           tuple(notes), intervals)


def _ml_intervals(task: str, metrics: Sequence[str], kept: Mapping[str, Any], y_test: np.ndarray | None,
                  transfer: bool, n_boot: int, seed: int) -> dict[str, tuple[float, float]]:
    """Bootstrap intervals of each metric's diff (or value), resampling the test rows."""
    from ...stats import bootstrap_ci

    roles = ("syn",) if transfer else ("ori", "syn")
    out: dict[str, tuple[float, float]] = {}
    if task == "clustering":
        vals = [np.asarray(kept[r], dtype=float) for r in roles]
        stat = (lambda s: float(np.mean(s))) if transfer else (lambda o, s: float(np.mean(s) - np.mean(o)))
        out["silhouette_score"] = bootstrap_ci(stat, vals, n_boot=n_boot, seed=seed)
        return out
    assert y_test is not None
    idx = np.arange(len(y_test))
    memo: dict[bytes, dict[str, dict[str, float]]] = {}

    def all_scores(rows: np.ndarray) -> dict[str, dict[str, float]]:
        """Every metric of every role on one resample, computed once (each metric's interval call
        draws the same resamples: same seed)."""
        key = rows.tobytes()
        if key not in memo:
            import warnings

            res = {}
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                for role in roles:
                    pred, proba = kept[role]
                    if task == "classification":
                        res[role] = _classification_scores(y_test[rows], pred[rows],
                                                           None if proba is None else proba[rows], metrics)
                    else:
                        res[role] = _regression_scores(y_test[rows], pred[rows], metrics)
            memo[key] = res  # n_boot small dicts: every metric's call reuses them
        return memo[key]

    for m in metrics:
        if transfer:
            out[m] = bootstrap_ci(lambda r, m=m: float(all_scores(r)["syn"][m]), [idx], n_boot=n_boot,
                                  seed=seed)
        else:
            out[m] = bootstrap_ci(lambda r, m=m: float(all_scores(r)["syn"][m] - all_scores(r)["ori"][m]),
                                  [idx], n_boot=n_boot, seed=seed)
    return out


def _resample(x: np.ndarray, y: np.ndarray, method: str, random_state: int, notes: list[str],
              role: str) -> tuple[np.ndarray, np.ndarray]:
    try:
        from imblearn.combine import SMOTEENN, SMOTETomek
    except ImportError:
        raise ConfigError(f"ML utility: resampling={method!r} needs imbalanced-learn: "
                          "pip install imbalanced-learn") from None
    cls = SMOTEENN if method == "smote-enn" else SMOTETomek
    try:
        xr, yr = cls(random_state=random_state).fit_resample(x, y)
    except Exception as exc:  # noqa: BLE001 - PETsARD keeps the data when resampling fails; say so
        notes.append(f"{method} failed on {role} ({exc}): trained on the data as given")
        return x, y
    notes.append(f"{method}: {role} resampled from {len(y)} to {len(yr)} rows")
    return xr, yr
