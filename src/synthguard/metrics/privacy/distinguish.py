"""``distinguishability`` (alias ``membership_inference``, SynEval's name): can a classifier tell
synthetic rows from original rows?

This is a distinguishability test, NOT a membership-inference attack: it measures how different the
release looks from the training data as a whole. An exact copy of the training data is perfectly
indistinguishable (AUC 0.5) although it leaks everything, so read it beside ``exact_matches``,
``dcr`` and the attacks.

Pipeline: balance the classes (seeded subsample of the larger side, capped at ``max_rows`` in total),
split stratified and seeded, featurise (numeric and datetime columns as numbers with a missing
indicator and the training median filled in; categorical/boolean columns as shared ordinal codes,
missing = -1; text columns as TF-IDF, at most 1000 features per column, fit on the training part),
train a seeded 100-tree random forest, score the held-out part.

Baseline: chance, 0.5. When synthetic and original rows are exchangeable (the null), the forest never
saw the held-out labels, so the held-out AUC is the Mann-Whitney statistic of a random labelling of
fixed scores: its null interval and p-value follow from the scores alone (``stats.auc_null``), with
no refit. ``n_permutations`` > 0 refits the forest on shuffled training labels instead (the
permutation baseline of earlier versions: a coarse estimate of the same null, one forest per refit).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...core.results import Baseline, Chart, MetricResult, Section
from ...errors import MetricError
from ...registry import LEVEL_FROM_THRESHOLDS, Context, Interval, Param, register
from ...stats import auc_ci, auc_null, auc_score, roc_curve, thin_roc
from .matching import row_identities_for

__all__ = ["distinguishability"]


def _ks(v: Any) -> str | None:
    try:
        ok = len(v) > 0 and all(isinstance(k, (int, np.integer)) and k >= 1 for k in v)
    except TypeError:
        ok = False
    return None if ok else "must be a list of positive integers, e.g. [10, 50, 100]"


def _features(ctx: Context, rows: dict[str, np.ndarray], train: np.ndarray, max_text_features: int,
              roles: tuple[str, str] = ("original", "synthetic")):
    """Feature matrix for the stacked rows (``roles[0]`` first, then ``roles[1]``); fitted on ``train``."""
    from scipy import sparse

    schema = ctx.tables.schema
    cols = schema.tabular_columns()
    parts_num, parts_cat, blocks = [], [], []
    for role in roles:  # only the sampled rows, encoded (fetched from the partitions on a cluster)
        b = ctx.data.encoded_rows(role, cols, rows[role]) if cols else None
        if b is not None:
            parts_num.append(b.num)
            parts_cat.append(b.cat)
            blocks.append(b)
    dense: list[np.ndarray] = []
    names: list[str] = []
    if cols:
        num = np.concatenate(parts_num, axis=0)
        for j, c in enumerate(blocks[0].num_columns):
            x = num[:, j].copy()
            miss = np.isnan(x)
            fill = np.nanmedian(x[train]) if (~miss[train]).any() else 0.0
            x[miss] = fill
            dense.append(x)
            names.append(c)
            if miss.any():
                dense.append(miss.astype(float))
                names.append(f"{c} (missing)")
        cat = np.concatenate(parts_cat, axis=0)
        for j, c in enumerate(blocks[0].cat_columns):
            dense.append(cat[:, j].astype(float))
            names.append(c)
    n = sum(r.size for r in rows.values())
    mat = np.column_stack(dense) if dense else np.zeros((n, 0))
    texts = list(dict.fromkeys(schema.of_type("text") + list(schema.text_columns)))
    if not texts:
        if mat.shape[1] == 0:
            raise MetricError("no column to classify on (only id columns); give tabular or text columns")
        return mat, names, []
    from sklearn.feature_extraction.text import TfidfVectorizer

    blocks = [sparse.csr_matrix(mat)]
    used = []
    for c in texts:
        col = pd.concat([ctx.data.take(r, rows[r], [c])[c] for r in roles], ignore_index=True)
        values = col.where(col.notna(), "").astype(str).to_numpy(dtype=object)
        vec = TfidfVectorizer(max_features=max_text_features)
        try:
            vec.fit(values[train])
        except ValueError:  # empty vocabulary: the column holds no words
            continue
        blocks.append(vec.transform(values).tocsr())
        names.extend(f"{c}: {w}" for w in vec.get_feature_names_out())
        used.append(c)
    return sparse.hstack(blocks, format="csr"), names, used


def _group_split(y: np.ndarray, groups: np.ndarray, test_size: float,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Seeded split that keeps identical rows (same group) on the same side, stratified by label.

    Groups are split per majority label, each taking ``test_size`` of its rows, so an exact copy of
    an original row never sits in training while its twin is scored (no copy leakage across the split).
    """
    uniq, inv = np.unique(groups, return_inverse=True)
    inv = inv.ravel()
    size = np.bincount(inv, minlength=uniq.size)
    share1 = np.bincount(inv, weights=y, minlength=uniq.size) / size
    test_group = np.zeros(uniq.size, dtype=bool)
    for label in (0, 1):  # loop over the two classes
        members = np.flatnonzero((share1 > 0.5) == bool(label))
        if members.size == 0:
            continue
        members = members[rng.permutation(members.size)]
        cum = np.cumsum(size[members])
        test_group[members[cum <= test_size * cum[-1] + 0.5]] = True
    is_test = test_group[inv]
    if is_test.all() or not is_test.any() or np.unique(y[is_test]).size < 2 \
            or np.unique(y[~is_test]).size < 2:
        raise MetricError("too few distinct rows to split into training and held-out parts; "
                          "give more rows")
    return np.flatnonzero(~is_test), np.flatnonzero(is_test)


def _fit_score(x_train, y_train, x_test, seed: int, n_trees: int, n_jobs: int | None) -> np.ndarray:
    from sklearn.ensemble import RandomForestClassifier

    clf = RandomForestClassifier(n_estimators=n_trees, random_state=seed, n_jobs=n_jobs)
    clf.fit(x_train, y_train)  # parallel fitting is deterministic: each tree's seed is fixed
    # parallel prediction is not: threads add their trees' probabilities in completion order, so
    # the last bits of the sum vary from run to run. Predict serially: bit-identical results.
    clf.set_params(n_jobs=1)
    return clf.predict_proba(x_test)[:, list(clf.classes_).index(1)]


def _reference_auc(ctx: Context, *, max_rows: int, test_size: float, n_estimators: int,
                   max_text_features: int, n_boot: int, confidence_level: float, n_jobs: int | None,
                   forest_seed: int) -> dict[str, Any] | None:
    """Held-out AUC of the same pipeline telling control (1) from original (0) rows, equal sizes."""
    n_o, n_c = len(ctx.tables.original), len(ctx.tables.control)
    per_class = min(n_o, n_c, max_rows // 2)
    if per_class < 10:
        return None
    rng = ctx.rng("reference rows")
    rows = {"original": np.sort(rng.permutation(n_o)[:per_class]),
            "control": np.sort(rng.permutation(n_c)[:per_class])}
    y = np.r_[np.zeros(per_class, dtype=int), np.ones(per_class, dtype=int)]
    ids = row_identities_for(ctx)
    groups = np.r_[ids["original"][rows["original"]], ids["control"][rows["control"]]]
    try:
        train, test = _group_split(y, groups, test_size, ctx.rng("reference split"))
    except MetricError:
        return None
    x, _, _ = _features(ctx, rows, train, max_text_features, roles=("original", "control"))
    scores = _fit_score(x[train], y[train], x[test], forest_seed, n_estimators, n_jobs)
    y_test = y[test]
    auc = auc_score(y_test, scores)
    ci = auc_ci(y_test, scores, n_boot=n_boot, confidence_level=confidence_level,
                seed=ctx.rng("reference auc"))
    return {"value": auc, "ci": ci, "n_test": int(test.size),
            "rows_used": {"original": per_class, "control": per_class},
            "description": "same classifier trained to tell control (real holdout) rows from original "
                           "rows at equal sizes: the AUC a release of fresh real data would get"}


def _precision_at(labels: np.ndarray, scores: np.ndarray, ks: list[int]) -> dict[str, float]:
    order = np.lexsort((np.arange(scores.size), -scores))
    out = {}
    for k in ks:
        if k <= scores.size:
            out[str(int(k))] = float(labels[order[:k]].mean())
    return out


@register(
    "distinguishability", family="privacy", direction="lower is safer",
    aliases=("membership_inference",),
    params=[
        Param("max_rows", 6000, "rows used in total (half original, half synthetic), for speed", int,
              interval=Interval(20)),
        Param("test_size", 0.3, "held-out share of the balanced rows", float, interval=Interval(0.05, 0.8)),
        Param("n_estimators", 100, "trees in the random forest", "positive int"),
        Param("n_permutations", 0, "label-shuffled refits for a permutation baseline (0 = none: the "
              "baseline is chance with the held-out AUC's exact null interval, no refit)", int,
              interval=Interval(0, 100)),
        Param("precision_k", [10, 50, 100], "k values of precision_at_k", (list, tuple), check=_ks),
        Param("max_text_features", 1000, "TF-IDF vocabulary size per text column", "positive int"),
        Param("n_boot", 500, "bootstrap resamples of the AUC interval", "positive int"),
        Param("confidence_level", 0.95, "level of the AUC interval", "probability"),
        Param("n_jobs", -1, "parallel jobs of the forest's fitting (-1 = all cores; prediction is serial, "
              "so results are bit-identical whatever it is)", "int"),
        Param("reference", True, "with a control table, also train the same pipeline to tell control "
              "from original rows (reference_auc: what fresh real data scores)", bool),
    ],
    optional_needs=("control",),
    thresholds={"medium": 0.6, "high": 0.7},
    description="AUC of a random forest telling synthetic from original rows (0.5 = indistinguishable); "
                "a distinguishability test, not a membership-inference attack",
    risk='presence',
    knowledge=('the release and real records; trains a classifier to tell release rows from real '
               'ones'),
    presets=('privacy', 'full'),
    order=80,
    backend='any',
    explainer=('How well a classifier tells release rows from real rows (AUC); a fidelity-type '
               'signal of privacy, informative unless tested against the control.')
)
def distinguishability(ctx: Context, *, max_rows: int = 6000, test_size: float = 0.3,
                       n_estimators: int = 100, n_permutations: int = 0,
                       precision_k: list[int] | tuple[int, ...] = (10, 50, 100),
                       max_text_features: int = 1000, n_boot: int = 500,
                       confidence_level: float = 0.95, n_jobs: int | None = -1,
                       reference: bool = True) -> MetricResult:
    """Classifier AUC separating synthetic (label 1) from original (label 0) rows.

    Parameters
    ----------
    ctx : Context
        The evaluation context.
    max_rows : int
        Total rows used (the classes are balanced: at most ``max_rows // 2`` each).
    test_size : float
        Held-out share (stratified, seeded split).
    n_estimators : int
        Trees of the random forest (seeded).
    n_permutations : int
        Refits on shuffled training labels. 0 (default): no refit; the baseline is chance (0.5)
        with the held-out AUC's null interval at ``confidence_level`` (Mann-Whitney, tie-corrected
        variance) and the AUC is distinguishable when it lies above that interval (one-sided
        ``p_value`` < (1 - ``confidence_level``) / 2). Above 0: the permutation baseline (mean of
        the refits' held-out AUCs, ``ci`` = their min..max) and the rule of earlier versions (the
        AUC's interval above the largest permuted AUC and 0.5).
    precision_k : list of int
        ``precision_at_k``: share of synthetic rows among the k held-out rows scored most synthetic.
    max_text_features : int
        TF-IDF features per text column.
    n_boot : int
        Stratified bootstrap resamples of the AUC interval.
    confidence_level : float
        Level of the AUC interval and of the null interval.
    n_jobs : int, optional
        Parallel jobs of the forest (results do not depend on it).
    reference : bool
        With a control table, run the same pipeline (same sizes cap, split share, forest and seeds)
        on control (label 1) vs original rows: ``reference_auc``, the AUC a release of fresh real
        rows would get. The headline and its baseline are unchanged.

    Returns
    -------
    MetricResult
        ``value`` = held-out AUC with a stratified bootstrap CI; ``baseline`` = 0.5 with the null
        interval (with refits: the mean permutation AUC, ``ci`` = min..max of the permuted AUCs);
        details ``null`` (``stats.auc_null``: ``mean``, ``sd``, ``ci``, ``p_value``, ``p_below``,
        ...), ``distinguishable``, ``below_baseline``, ``permutation`` (``None`` without refits),
        ``precision_at_k``, ``roc_curve``, ``mean_confidence_synthetic``,
        ``mean_confidence_original``, ``n_train``, ``n_test``, ``rows_used``, ``text_columns_used``,
        ``exact_copy_share``, ``reference_auc`` (``{value, ci, n_test, rows_used, description}`` or
        ``None``).
    """
    n_o, n_s = len(ctx.tables.original), len(ctx.tables.synthetic)
    per_class = min(n_o, n_s, max_rows // 2)
    if per_class < 10:
        raise MetricError(f"needs at least 10 original and 10 synthetic rows, got {n_o} and {n_s}")
    rng = ctx.rng("rows")
    rows = {"original": np.sort(rng.permutation(n_o)[:per_class]),
            "synthetic": np.sort(rng.permutation(n_s)[:per_class])}
    y = np.r_[np.zeros(per_class, dtype=int), np.ones(per_class, dtype=int)]
    ids = row_identities_for(ctx)
    groups = np.r_[ids["original"][rows["original"]], ids["synthetic"][rows["synthetic"]]]
    train, test = _group_split(y, groups, test_size, ctx.rng("split"))
    x, _, text_used = _features(ctx, rows, train, max_text_features)
    forest_seed = int(ctx.rng("forest").integers(2**31 - 1))
    x_train, x_test, y_train, y_test = x[train], x[test], y[train], y[test]
    scores = _fit_score(x_train, y_train, x_test, forest_seed, n_estimators, n_jobs)
    auc = auc_score(y_test, scores)
    ci = auc_ci(y_test, scores, n_boot=n_boot, confidence_level=confidence_level, seed=ctx.rng("auc"))
    null = auc_null(y_test, scores, confidence_level=confidence_level)
    perm_rng = ctx.rng("permutation")
    perm_aucs = [auc_score(y_test, _fit_score(x_train, perm_rng.permutation(y_train), x_test,
                                              forest_seed, n_estimators, n_jobs))
                 for _ in range(n_permutations)]  # loop over refits, not rows
    if perm_aucs:
        pa = np.asarray(perm_aucs)
        baseline = Baseline(float(pa.mean()), f"permutation baseline: mean held-out AUC of the same "
                            f"pipeline trained on shuffled labels ({pa.size} refits; ci = min..max)",
                            (float(pa.min()), float(pa.max())))
        perm = {"mean": float(pa.mean()), "std": float(pa.std(ddof=1)) if pa.size > 1 else 0.0,
                "min": float(pa.min()), "max": float(pa.max()), "values": pa}
        distinguishable = bool(ci[0] > max(float(pa.max()), 0.5))
        below = bool(ci[1] < float(pa.min()))
    else:
        baseline = Baseline(0.5, f"chance: the held-out AUC when synthetic and original rows are "
                            f"exchangeable (ci = its {100 * confidence_level:g} % null interval: "
                            f"Mann-Whitney, tie-corrected, no refit); one-sided p = "
                            f"{null['p_value']:.3g}", null["ci"])
        perm = None
        distinguishable = bool(auc > null["ci"][1])  # one-sided p < (1 - confidence_level) / 2
        below = bool(auc < null["ci"][0])
    fpr, tpr, _ = roc_curve(y_test, scores)
    level = LEVEL_FROM_THRESHOLDS if distinguishable else "low"  # the AUC counts only when significant
    copies = float(np.isin(ids["synthetic"], ids["original"]).mean())
    notes = []
    if copies >= 0.01:
        notes.append(f"{100 * copies:.1f} % of synthetic rows are exact copies of original rows; a "
                     "distinguishability AUC cannot see copies (they look real): see exact_matches and dcr")
    if below:
        notes.append(f"the AUC lies significantly below the {'permutation' if perm else 'chance'} "
                     "baseline: synthetic training rows resemble specific held-out original rows "
                     "(near-copies); see dcr and nndr")
    warning = "; ".join(notes) or None
    ref = None
    if reference and ctx.tables.control is not None:
        ref = _reference_auc(ctx, max_rows=max_rows, test_size=test_size, n_estimators=n_estimators,
                             max_text_features=max_text_features, n_boot=n_boot,
                             confidence_level=confidence_level, n_jobs=n_jobs, forest_seed=forest_seed)
    details = {
        "reference_auc": ref,
        "distinguishable": distinguishable,
        "below_baseline": below,
        "null": null,
        "permutation": perm,
        "precision_at_k": _precision_at(y_test, scores, [int(k) for k in precision_k]),
        "roc_curve": thin_roc(fpr, tpr),
        "mean_confidence_synthetic": float(scores[y_test == 1].mean()),
        "mean_confidence_original": float(scores[y_test == 0].mean()),
        "confidence_meaning": "mean predicted probability of being synthetic, per held-out set",
        "n_train": int(train.size), "n_test": int(test.size),
        "rows_used": {"original": per_class, "synthetic": per_class,
                      "capped": bool(per_class < max(n_o, n_s)), "max_rows": max_rows},
        "text_columns_used": text_used,
        "exact_copy_share": copies,
        "classifier": f"RandomForestClassifier(n_estimators={n_estimators}), seeded",
        "method": "distinguishability test (synthetic = 1, original = 0), not a membership-inference "
                  "attack",
    }
    sections = (Section("the AUC fresh real data gets", ("release", "AUC", "interval", "rows tested"),
                        [("this release (synthetic vs original)", auc, list(ci), int(test.size)),
                         ("real held-out rows (control vs original)", ref["value"],
                          list(ref["ci"]), ref["n_test"])],
                        note=ref["description"]),) if ref is not None else ()
    return MetricResult("distinguishability", "privacy", auc, "lower is safer", baseline, ci,
                        int(test.size), level, warning, details,
                        charts=(Chart.roc(details["roc_curve"], auc),), sections=sections)
