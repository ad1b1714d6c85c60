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

PETsARD 1.10's own pipeline (one gradient-boosted model per table, PETsARD's preprocessing), used
only by the PETsARD facade, is :mod:`synthguard.compat.petsard.utility`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...core.format import fmt_number
from ...core.results import Baseline, Headline, MetricResult
from ...data.schema import numeric_view
from ...errors import ConfigError, MetricError
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
    measure = str(details["score_name"]).replace("_", " ")
    reading = (f"models trained on the release score {fmt_number(details['syn_mean'])} ({measure}, "
               f"tested on the control rows) against {fmt_number(details['ori_mean'])} when trained "
               f"on the training rows: a difference of {fmt_number(details['diff'])}")
    return MetricResult(metric, "utility", details["diff"], "higher is better",
                        baseline=Baseline(details["ori_mean"], "the same models trained on the original "
                                          "table, tested on control (diff = syn_mean - ori_mean)"),
                        ci=details.get("diff_ci"), n=n_test, warning="; ".join(warn) or None,
                        details=details,
                        headline=Headline(details["syn_mean"], details["ori_mean"], measure,
                                          "models trained on the real training rows", reading))


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
          aliases=("mlutility_classification",),
          presets=('full',),
          order=330)
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
          aliases=("mlutility_regression",),
          presets=('full',),
          order=340)
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
          aliases=("mlutility_cluster",),
          presets=('full',),
          order=350)
def ml_utility_cluster(ctx: Context, *, n_clusters: Sequence[int] = (4, 5, 6), max_rows: int | None = 10000,
                       silhouette_rows: int | None = 5000) -> MetricResult:
    """Clustering utility: k-means on original and on synthetic, silhouette on control."""
    from concurrent.futures import ThreadPoolExecutor

    from sklearn.cluster import KMeans
    from sklearn.metrics import silhouette_samples
    from threadpoolctl import ThreadpoolController

    from ...engine.parallel import default_jobs

    t = ctx.tables
    threads = ThreadpoolController()  # its scan of the loaded libraries, once (not per fit)
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
    fits = []  # (role, k, seed, training matrix, test matrix), in report order
    x_eval = None  # the control rows in the original's space: every silhouette is measured there
    for role in ("original", "synthetic"):
        prep = make_preprocessor(num, cat)
        x_train = prep.fit_transform(_feature_frame(frames[role], num, cat))
        x_test = prep.transform(_feature_frame(test, num, cat))
        if x_eval is None:
            x_eval = x_test
        for k in n_clusters:
            if len(x_train) <= k:
                raise MetricError(f"the {role} table has {len(x_train)} rows, too few for k={k}")
            fits.append((role, k, int(ctx.rng("model", f"kmeans_k{k}").integers(2**31 - 1)),
                         x_train, x_test))

    def fit_predict(job: tuple[str, int, int, np.ndarray, np.ndarray]) -> np.ndarray:
        _role, k, seed, x_train, x_test = job
        # one OpenMP thread (this thread's own setting): k-means' thread pool collapses on a loaded
        # machine (100x slower), and one thread sums the centres in one order
        with threads.limit(limits=1, user_api="openmp"):
            return KMeans(n_clusters=int(k), n_init=10, random_state=seed).fit(x_train).predict(x_test)

    # the fits side by side, one per core (Lloyd's iterations release the GIL); every fit is
    # seeded and single-threaded, so its labels are those of a serial run. BLAS (one process-wide
    # setting, which scikit-learn lowers to 1 around each Lloyd run and then restores) is held at 1
    # meanwhile, so the fits' restores cannot leave it at another fit's value.
    with threads.limit(limits=1, user_api="blas"), \
            ThreadPoolExecutor(max_workers=min(default_jobs(), len(fits))) as pool:
        predicted = list(pool.map(fit_predict, fits))
    for (role, k, _seed, _x, _x_test), labels in zip(fits, predicted, strict=True):
        if len(np.unique(labels)) < 2:
            s = -1.0
            per_row[role].append(np.full(len(labels), np.nan))
        else:  # in one space for both (each training table's own scaling would make them incomparable)
            values = silhouette_samples(x_eval, labels)
            s = max(float(values.mean()), -1.0)
            per_row[role].append(values)
        scores[f"kmeans_k{k}"][role] = s
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
