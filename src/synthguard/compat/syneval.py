"""A SynEval-compatible ``PrivacyEvaluator`` facade over synthguard's metrics.

SynEval's contract::

    ev = PrivacyEvaluator(synthetic_data, original_data, metadata,
                          selected_metrics=["exact_matches", "membership_inference",
                                            "tabular_privacy", "text_privacy", "anonymeter"],
                          device="auto")
    results = ev.evaluate()
    results["exact_matches"]["exact_match_percentage"]
    results["membership_inference"]["distinguishability_auc"]
    results["structured_privacy_metrics"]["DCR"]["syn_train_5pct"]   # from tabular_privacy
    results["anonymeter"]["overall_risk"]["risk_score"]

Every SynEval key is kept, and each block gains synthguard's extras: ``ci`` (confidence interval),
``baseline`` (value and what it is), ``n``, ``risk_level`` and the full synthguard result under
``"synthguard"``. Differences from SynEval, on purpose:

* ``control_data`` (real rows held out from training) is an optional extra argument. SynEval
  builds its anonymeter "control" by sampling the *original* rows (the training rows themselves),
  which biases every residual risk; synthguard never does that: with ``control_data`` the risks
  are anonymeter's residual risks, without it they are measured against the naive baseline and
  say so (``baseline`` / ``warning``). A metric that strictly needs a control is listed under
  ``skipped_metrics`` with the reason.
* When an attack is no better than its baseline SynEval reports ``risk = 0.0``; synthguard keeps
  the measured risk and flags it ``synthguard_risk_level = "not meaningful"`` with a warning.
* IMS's baseline is train-vs-control when a control is given; without one there is no baseline
  (SynEval compares train with a shuffled copy of itself, so IMS always "passes").
* Text privacy uses offline spaCy models (no Flair download); ``device`` is accepted for
  compatibility and everything runs on the CPU.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ..core.results import MetricResult, to_jsonable
from ..errors import ConfigError
from ..run.options import EvaluateOptions

AVAILABLE = ("exact_matches", "membership_inference", "tabular_privacy", "text_privacy", "anonymeter")
# SynEval metric -> synthguard metrics it runs
_PLAN: dict[str, tuple[str, ...]] = {
    "exact_matches": ("exact_matches",),
    "membership_inference": ("distinguishability",),
    "tabular_privacy": ("ims", "dcr", "nndr"),
    "text_privacy": ("text_entities", "text_nominals", "text_style_outliers"),
    "anonymeter": ("singling_out_univariate", "singling_out_multivariate", "linkability", "inference"),
}
_ANON_KEYS = ("singling_out_univariate", "singling_out_multivariate", "linkability", "inference")


def _num(x: Any) -> float | None:
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _extras(res: MetricResult) -> dict[str, Any]:
    return {"ci": to_jsonable(res.ci),
            "baseline": res.baseline.to_dict() if res.baseline is not None else None,
            "n": to_jsonable(res.n), "synthguard_risk_level": res.risk_level,
            "warning": res.warning, "synthguard": res.to_dict()}


def _scale(ci: Any, factor: float) -> Any:
    if isinstance(ci, (list, tuple)) and len(ci) == 2:
        return [None if _num(c) is None else _num(c) * factor for c in ci]
    return None


class PrivacyEvaluator:
    """SynEval-style privacy evaluation (see the module docstring).

    Parameters
    ----------
    synthetic_data, original_data : DataFrame
        The release and the rows it was trained on.
    metadata : mapping
        SynEval metadata (``columns`` with ``sdtype``, optional ``pii``; ``text_columns``...).
    selected_metrics : list of str, optional
        Among ``exact_matches``, ``membership_inference``, ``tabular_privacy``, ``text_privacy``,
        ``anonymeter``; default all.
    device : {"auto", "cpu", "cuda"}
        Accepted for compatibility; synthguard runs on the CPU (``self.device`` says so).
    control_data : DataFrame, optional
        synthguard extension: real rows held out from training (baselines, anonymeter).
    seed : int
        synthguard extension: seed of every random choice.
    thresholds : mapping, optional
        synthguard extension: ``{metric: {"medium": x, "high": y}}``.
    """

    def __init__(self, synthetic_data: pd.DataFrame, original_data: pd.DataFrame,
                 metadata: Mapping[str, Any] | None = None, selected_metrics: Sequence[str] | None = None,
                 device: str = "auto", *, control_data: pd.DataFrame | None = None, seed: int = 0,
                 thresholds: Mapping[str, Mapping[str, float]] | None = None) -> None:
        if device not in ("auto", "cpu", "cuda"):
            raise ConfigError(f"device must be 'auto', 'cpu' or 'cuda', got {device!r}")
        self.synthetic_data = synthetic_data
        self.original_data = original_data
        self.control_data = control_data
        self.metadata = dict(metadata or {})
        self.device = "cpu"
        self.requested_device = device
        # the run's options, validated here once (the seed as every path checks it)
        self._options = EvaluateOptions(seed=seed)
        self.seed = self._options.seed
        self.thresholds = dict(thresholds or {})
        chosen = list(selected_metrics) if selected_metrics else list(AVAILABLE)
        bad = [m for m in chosen if m not in AVAILABLE]
        if bad:
            raise ConfigError(f"unknown SynEval privacy metric(s) {bad}: use some of {list(AVAILABLE)}")
        self.selected_metrics = chosen
        self.unavailable_metrics: dict[str, str] = {}
        self.report = None

    def _run(self) -> Any:
        from ..api import report_of
        from ..data.tables import prepare_tables
        from ..registry import get_metric
        from ..run.config import RunConfig, is_registered
        from ..run.runner import run_tables

        wanted: dict[str, dict[str, Any]] = {}
        unavailable: dict[str, str] = {}
        for m in self.selected_metrics:
            for name in _PLAN[m]:
                if is_registered(name):
                    wanted[get_metric(name).name] = get_metric(name).resolve_params({})
                else:
                    unavailable[name] = "not available in this installation"
        th = {}
        for k, v in self.thresholds.items():
            th[get_metric(k).name] = {kk: float(vv) for kk, vv in v.items()}
        cfg = RunConfig(metrics=wanted, thresholds=th, preset=None, unavailable=unavailable)
        tables = prepare_tables(self.original_data, self.synthetic_data, self.control_data,
                                self.metadata or None)
        return report_of(run_tables(tables, cfg, self._options))

    def evaluate(self) -> dict[str, Any]:
        """Run the selected metrics; SynEval's JSON keys plus synthguard's CIs and baselines."""
        report = self._run()
        self.report = report
        out: dict[str, Any] = {}
        skipped: dict[str, str] = {}

        def res(name: str) -> MetricResult | None:
            if name not in report:
                return None
            r = report.result(name)
            if r is None:
                entry = report[name]
                skipped[name] = entry.get("reason") or entry.get("status")
            return r

        if "exact_matches" in self.selected_metrics:
            r = res("exact_matches")
            if r is not None:
                frac = _num(r.value)  # None (not 0 %) when the metric gave no finite rate
                pct = None if frac is None else frac * 100
                out["exact_matches"] = {"exact_match_percentage": pct,
                                        "risk_level": (None if pct is None
                                                       else "high" if pct > 5 else "low"),
                                        "ci_percentage": _scale(r.ci, 100.0), **_extras(r)}
        if "membership_inference" in self.selected_metrics:
            r = res("distinguishability")
            if r is not None:
                det = r.details if isinstance(r.details, Mapping) else {}
                auc = _num(det.get("auc", r.value))
                out["membership_inference"] = {
                    "distinguishability_auc": auc,
                    "synthetic_confidence": _num(det.get("synthetic_confidence")),
                    "original_confidence": _num(det.get("original_confidence")),
                    "fidelity_score": None if auc is None else max(0.0, 1.0 - auc),
                    "interpretation": ("Values near 1.0 indicate synthetic data is easily separable "
                                       "from the original distribution (poor fidelity). Values near "
                                       "0.5 indicate high similarity."),
                    **_extras(r)}
        if "tabular_privacy" in self.selected_metrics:
            spm: dict[str, Any] = {}
            r = res("ims")
            if r is not None:
                base = r.baseline.value if r.baseline is not None else None
                passed = bool(base is not None and _num(r.value) is not None and r.value <= base)
                spm["IMS"] = {"ims_syn_train": _num(r.value), "train_test_ims": _num(base),
                              "passed": passed if base is not None else None,
                              "method": "Identical Match Share (IMS)",
                              "desc": (f"Synthetic-Train IMS: {_fmt(r.value)}, Train-Test IMS: "
                                       f"{_fmt(base)}, Passed: "
                                       + ("Yes" if passed else "No" if base is not None else
                                          "n/a (no control table: no baseline)")),
                              **_extras(r)}
            for key, name, label in (("DCR", "dcr", "Distance to Closest Records (DCR)"),
                                     ("NNDR", "nndr", "Nearest Neighbor Distance Ratio (NNDR)")):
                r = res(name)
                if r is None:
                    continue
                base = r.baseline.value if r.baseline is not None else None
                passed = bool(base is not None and _num(r.value) is not None and r.value >= base)
                spm[key] = {"syn_train_5pct": _num(r.value), "train_train_5pct": _num(base),
                            "passed": passed if base is not None else None, "method": label,
                            "desc": (f"Synthetic-Train 5%: {_fmt(r.value)}, baseline 5%: {_fmt(base)}, "
                                     "Passed: " + ("Yes" if passed else "No" if base is not None else
                                                   "n/a (no baseline)")),
                            **_extras(r)}
            if spm:
                out["structured_privacy_metrics"] = spm
        if "text_privacy" in self.selected_metrics:
            for key, name in (("named_entities", "text_entities"), ("nominal_mentions", "text_nominals"),
                              ("stylistic_outliers", "text_style_outliers")):
                r = res(name)
                if r is None:
                    continue
                full = r.to_dict()
                det = {k: v for k, v in full.items()
                       if k in ("synthetic", "original", "overlap", "comparison")}
                if "overlap" not in det and "overlap_percentage" in full:
                    det["overlap"] = {"overlap_percentage": full["overlap_percentage"],
                                      "risk_level": full.get("overlap_risk_level", r.risk_level)}
                if "comparison" not in det and "outlier_ratio" in full:
                    det["comparison"] = {"outlier_ratio": full["outlier_ratio"],
                                         "risk_level": r.risk_level}
                out[key] = {**to_jsonable(det), "value": _num(r.value), "risk_level": r.risk_level,
                            **_extras(r)}
        if "anonymeter" in self.selected_metrics:
            anon: dict[str, Any] = {}
            risks: list[tuple[float, str]] = []
            for name in _ANON_KEYS:
                r = res(name)
                if r is None:
                    continue
                block = _anon_block(r)
                anon[name] = block
                if name == "inference":
                    per = r.details.get("per_secret") if isinstance(r.details, Mapping) else None
                    if isinstance(per, (list, tuple)) and per:
                        anon[name] = [_per_secret(p) for p in per if isinstance(p, Mapping)]
                    else:
                        anon[name] = [dict(block, secret_column=(r.details or {}).get("secret_column"))]
                if _num(r.value) is not None:
                    risks.append((float(r.value), name))
            if anon:
                score, driver = max(risks) if risks else (None, None)
                level = ("unknown" if score is None else "high" if score > 0.5 else
                         "medium" if score >= 0.3 else "low")
                anon["overall_risk"] = {
                    "risk_score": score, "risk_level": level, "driven_by": driver,
                    "explanation": "Overall risk is determined by the highest risk score among all "
                                   "attacks."}
                out["anonymeter"] = anon
        for name, reason in dict(report.header.get("config", {}).get("unavailable") or {}).items():
            skipped[name] = reason
        skipped.update(self.unavailable_metrics)
        if skipped:
            out["skipped_metrics"] = skipped
        return out


def _fmt(x: Any) -> str:
    f = _num(x)
    return "n/a" if f is None else f"{f:.4f}"


def _per_secret(p: Mapping[str, Any]) -> dict[str, Any]:
    """One inference secret in SynEval's shape (plus synthguard's interval and level)."""
    ci = p.get("risk_ci")
    err = None
    if isinstance(ci, (list, tuple)) and len(ci) == 2 and _num(ci[0]) is not None and _num(ci[1]) is not None:
        err = (float(ci[1]) - float(ci[0])) / 2
    out = {"secret_column": p.get("secret_column"), "attack_rate": _num(p.get("attack_rate")),
           "baseline_rate": _num(p.get("baseline_rate")), "control_rate": _num(p.get("control_rate")),
           "risk": _num(p.get("risk")), "error": err, "ci": to_jsonable(ci),
           "meaningful": p.get("meaningful")}
    if p.get("meaningful") is False:
        out["warning"] = "Attack is not better than baseline model"
    return out


def _anon_block(r: MetricResult) -> dict[str, Any]:
    det = r.details if isinstance(r.details, Mapping) else {}

    def rate(key: str) -> float | None:
        v = det.get(key)
        if isinstance(v, Mapping):
            v = v.get("value")
        elif isinstance(v, (list, tuple)) and len(v) == 2:
            v = v[0]
        return _num(v)

    err = None
    if r.ci is not None and _num(r.ci[0]) is not None and _num(r.ci[1]) is not None:
        err = (float(r.ci[1]) - float(r.ci[0])) / 2
    block = {"attack_rate": rate("attack_rate"), "baseline_rate": rate("baseline_rate"),
             "control_rate": rate("control_rate"), "risk": _num(r.value), "error": err,
             "risk_level": r.risk_level, **_extras(r)}
    if r.risk_level == "not meaningful":
        block["warning"] = r.warning or "Attack is not better than baseline model"
    return block
