"""Record conformance fixtures from anonymeter 1.1.0 and SDMetrics 0.32 (re-runnable).

    python benchmarks/oracles/record_oracles.py [--data ../shared/data] [--only anonymeter|sdmetrics]

Writes ``tests/oracles/recorded/{anonymeter,sdmetrics}_<case>.json`` for every case of
``tests/oracles/oracle_inputs.py`` (public tables of ../shared/data, seeded splits). The reference
libraries are test-only: they are imported here, never by ``src/synthguard``. The JSON holds the
library versions, the inputs' description and every number the tests compare with
``synthguard.compat`` (tests/oracles/test_oracles.py).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("oracle_inputs", REPO / "tests" / "oracles" / "oracle_inputs.py")
oi = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(oi)

ANON_SEEDS = (0, 1, 2)
N_ATTACKS = 500


def _clean(x):
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if isinstance(x, (np.floating, float)):
        return None if math.isnan(float(x)) else float(x)
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.bool_,)):
        return bool(x)
    return x


def _frame_json(frame: pd.DataFrame) -> dict:
    """A frame as {"columns": [...], "data": [[...], ...]} (column order kept; NaN -> null)."""
    f = frame.astype(object).where(frame.notna(), None)
    return {"columns": [str(c) for c in f.columns], "data": f.to_numpy().tolist()}


def anonymeter_cases(ori, syn, ctl, name):
    """The evaluator calls recorded for one case: (label, kind, kwargs, evaluate kwargs, risk kwargs)."""
    cols = list(ori.columns)
    half = len(cols) // 2
    n_t = min(N_ATTACKS, len(ori), len(ctl))  # anonymeter raises when n_attacks exceeds the targets
    secrets = {"acs12": [("edu", False), ("income", True)], "anes96": [("vote", False), ("age", True)]}[name]
    calls = [("so_univariate", "so", {"n_attacks": N_ATTACKS}, {"mode": "univariate"}, {}),
             ("so_multivariate", "so", {"n_attacks": N_ATTACKS, "n_cols": 3}, {"mode": "multivariate"}, {})]
    for k in (1, 5):
        calls.append((f"linkability_k{k}", "link", {"n_attacks": n_t, "n_neighbors": k,
                                                    "aux_cols": (cols[:half], cols[half:])}, {"n_jobs": 1}, {}))
    for secret, reg in secrets:
        calls.append((f"inference_{secret}", "inf", {"n_attacks": n_t, "secret": secret, "regression": reg,
                                                      "aux_cols": [c for c in cols if c != secret]},
                      {"n_jobs": 1}, {}))
    return calls


def _anon_result(ev):
    res = ev.results(confidence_level=0.95)
    risk = ev.risk(confidence_level=0.95)
    out = {"risk": risk.value, "ci": list(risk.ci),
           "attack_rate": list(res.attack_rate), "baseline_rate": list(res.baseline_rate),
           "control_rate": None if res.control_rate is None else list(res.control_rate),
           "n_success": res.n_success, "n_baseline": res.n_baseline, "n_control": res.n_control}
    return out


def record_anonymeter(data_dir: Path) -> None:
    import anonymeter
    from anonymeter.evaluators import InferenceEvaluator, LinkabilityEvaluator, SinglingOutEvaluator

    version = getattr(anonymeter, "__version__", None)
    if version is None:
        from importlib.metadata import version as _v
        version = _v("anonymeter")
    for name in oi.CASES:
        ori, syn, ctl = oi.make_case(name, data_dir)
        out = {"library": "anonymeter", "version": version, "case": name, "inputs": oi.CASES[name],
               "n_attacks": N_ATTACKS, "seeds": list(ANON_SEEDS), "runs": {}}
        for label, kind, kw, ev_kw, _ in anonymeter_cases(ori, syn, ctl, name):
            runs = []
            for seed in ANON_SEEDS:
                np.random.seed(seed)  # noqa: NPY002 - anonymeter 1.1.0 samples targets from numpy's global state
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if kind == "so":
                        ev = SinglingOutEvaluator(ori, syn, control=ctl, seed=seed, **kw)
                    elif kind == "link":
                        ev = LinkabilityEvaluator(ori, syn, control=ctl, **kw)
                    else:
                        ev = InferenceEvaluator(ori, syn, control=ctl, **kw)
                    ev.evaluate(**ev_kw)
                    r = _anon_result(ev)
                r["seconds"] = round(time.perf_counter() - t0, 3)
                runs.append(r)
                print(f"anonymeter {name} {label} seed={seed}: risk {r['risk']:.4f} {r['ci']} ({r['seconds']} s)",
                      flush=True)
            out["runs"][label] = {"params": _clean({k: v for k, v in kw.items()}), "evaluate": ev_kw, "runs": runs}
        path = oi.ORACLE_DIR / f"anonymeter_{name}.json"
        path.write_text(json.dumps(_clean(out), indent=1, sort_keys=True) + "\n")
        print("wrote", path)


SD_KEYS = {"acs12": (["age", "gender", "race"], ["edu"], ["age"]),
           "anes96": (["age", "educ", "income"], ["vote"], ["age"])}


def record_sdmetrics(data_dir: Path) -> None:
    for name in oi.CASES:
        _record_sdmetrics_case(name, data_dir)


def _record_sdmetrics_case(name: str, data_dir: Path) -> None:
    import sdmetrics
    from sdmetrics.reports.single_table import DiagnosticReport, QualityReport
    from sdmetrics.single_table import (
        CategoricalCAP,
        CategoricalGeneralizedCAP,
        CategoricalZeroCAP,
        DCRBaselineProtection,
        DCROverfittingProtection,
        DisclosureProtection,
        DisclosureProtectionEstimate,
        NewRowSynthesis,
    )

    ori, syn, ctl = oi.make_case(name, data_dir)
    meta = oi.METADATA[name]
    keys, sens, cont = SD_KEYS[name]
    out = {"library": "sdmetrics", "version": sdmetrics.__version__, "case": name, "inputs": oi.CASES[name],
           "key_fields": keys, "sensitive_fields": sens, "continuous": cont, "metrics": {}}
    m = out["metrics"]

    def timed(label, fn):
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v = fn()
        m[label] = {"value": _clean(v), "seconds": round(time.perf_counter() - t0, 3)}
        print(f"sdmetrics {name} {label}: {str(v)[:120]} ({m[label]['seconds']} s)", flush=True)

    # CAP needs discrete keys: the continuous key is binned as DisclosureProtection does
    for cls in (CategoricalCAP, CategoricalZeroCAP, CategoricalGeneralizedCAP):
        keys_cat = [k for k in keys if k not in cont]
        timed(cls.__name__, lambda cls=cls, kc=keys_cat: cls.compute(ori, syn, key_fields=kc,
                                                                     sensitive_fields=sens))
    for method in ("cap", "zero_cap", "generalized_cap"):
        timed(f"DisclosureProtection_{method}", lambda method=method: DisclosureProtection.compute_breakdown(
            ori, syn, known_column_names=keys, sensitive_column_names=sens, computation_method=method,
            continuous_column_names=cont, num_discrete_bins=10))
    timed("DisclosureProtectionEstimate", lambda: DisclosureProtectionEstimate.compute_breakdown(
        ori, syn, known_column_names=keys, sensitive_column_names=sens, continuous_column_names=cont,
        num_rows_subsample=200, num_iterations=5, verbose=False))
    timed("DCRBaselineProtection", lambda: DCRBaselineProtection.compute_breakdown(ori, syn, meta, None))
    timed("DCROverfittingProtection", lambda: DCROverfittingProtection.compute_breakdown(ori, syn, ctl, meta, None))
    timed("NewRowSynthesis", lambda: NewRowSynthesis.compute_breakdown(ori, syn, meta))

    for cls in (QualityReport, DiagnosticReport):
        def report(cls=cls):
            rep = cls()
            rep.generate(ori, syn, meta, verbose=False)
            props = rep.get_properties()
            return {"score": rep.get_score(),
                    "properties": props.to_dict(orient="list"),
                    "details": {p: _frame_json(rep.get_details(p)) for p in props["Property"]}}
        timed(cls.__name__, report)
    path = oi.ORACLE_DIR / f"sdmetrics_{name}.json"
    path.write_text(json.dumps(_clean(out), indent=1, sort_keys=True) + "\n")
    print("wrote", path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data"), help="folder of the public CSVs")
    ap.add_argument("--only", choices=("anonymeter", "sdmetrics"), default=None)
    a = ap.parse_args(argv)
    data = Path(a.data)
    oi.ORACLE_DIR.mkdir(parents=True, exist_ok=True)
    if a.only in (None, "sdmetrics"):
        record_sdmetrics(data)
    if a.only in (None, "anonymeter"):
        record_anonymeter(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
