"""Record PETsARD 1.10.1's evaluator outputs (frame layouts and numbers) as JSON fixtures.

Run with PETsARD's own venv, never synthguard's (PETsARD is a test-only oracle)::

    python3 -m venv /work/venvs/petsard
    /work/venvs/petsard/bin/pip install petsard==1.10.1 anonymeter==1.1.0 sdmetrics==0.32.0 \
        xgboost imbalanced-learn numba plotly torch pyyaml
    /work/venvs/petsard/bin/python benchmarks/oracles/record_petsard.py [--data ../shared/data]

It writes ``tests/oracles/recorded/petsard_<case>.json`` (one per public dataset of
``tests/oracles/petsard_cases.py``) and ``petsard_yaml.json`` (an Executor run of a YAML with a
Splitter, a custom_data Synthesizer, Evaluators and a Reporter: its file names and frames).
Re-running it with the same versions gives the same files (every random step is seeded).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "oracles"))
from petsard_cases import CASES, classification_data, load_case, read_csv_exact  # noqa: E402

OUT = REPO / "tests" / "oracles" / "recorded"


def _cell(v):
    if v is None or v is pd.NA:
        return None
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return None if math.isnan(float(v)) else float(v)
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    return v if isinstance(v, (int, str)) else str(v)


def frame_json(df):
    """A DataFrame as JSON: index (names, values), columns, dtypes and cells."""
    if df is None:
        return None
    if not isinstance(df, pd.DataFrame):
        return {"type": type(df).__name__}
    idx = df.index
    return {"type": "DataFrame",
            "index_names": [n for n in idx.names],
            "index_type": type(idx).__name__,
            "index": [[_cell(x) for x in t] if isinstance(t, tuple) else _cell(t) for t in idx.tolist()],
            "columns": [str(c) for c in df.columns],
            "dtypes": [str(t) for t in df.dtypes],
            "data": [[_cell(v) for v in row] for row in df.itertuples(index=False, name=None)]}


def details_json(det):
    if det is None:
        return None
    if isinstance(det, pd.DataFrame):
        return frame_json(det)
    if isinstance(det, dict):
        out = {}
        for k, v in det.items():
            if isinstance(v, list):
                out[str(k)] = {"type": "list", "len": len(v), "head": [str(x) for x in v[:3]]}
            elif isinstance(v, dict):
                out[str(k)] = {"type": "dict", "len": len(v),
                               "head": {str(a): _cell(b) if not isinstance(b, (set, list, dict)) else
                                        sorted(_cell(x) for x in b) if isinstance(b, (set, list)) else
                                        str(b) for a, b in list(v.items())[:3]}}
            else:
                out[str(k)] = {"type": type(v).__name__, "value": _cell(v)}
        return {"type": "dict", "keys": list(map(str, det)), "items": out}
    return {"type": type(det).__name__}


def run(method, data, **params):
    from petsard.evaluator import Evaluator

    data = {k: v.copy() for k, v in data.items()}  # PETsARD's anonymeter wrapper mutates its inputs
    t0 = time.perf_counter()
    ev = Evaluator(method, **params)
    ev.create()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            res = ev.eval(data)
        except Exception as exc:  # noqa: BLE001 - a PETsARD defect is recorded, not hidden
            return {"method": method, "params": params, "error": f"{type(exc).__name__}: {exc}"}
    secs = time.perf_counter() - t0
    out = {"method": method, "params": params, "seconds": round(secs, 3), "keys": list(res)}
    for g, v in res.items():
        out[g] = details_json(v) if g == "details" else frame_json(v)
    return out


def record_case(name, data_dir):
    spec = CASES[name]
    d = load_case(name, data_dir)
    runs = {}
    runs["quality"] = run("default", {"ori": d["ori"], "syn": d["syn"]})
    runs["diagnostic"] = run("sdmetrics-diagnosticreport", {"ori": d["ori"], "syn": d["syn"]})
    runs["singlingout_uni"] = run("anonymeter-singlingout", d, mode="univariate", n_attacks=400)
    runs["singlingout_multi"] = run("anonymeter-singlingout", d, n_attacks=300, n_cols=3,
                                    max_attempts=100000)
    runs["linkability"] = run("anonymeter-linkability", d, aux_cols=spec["aux_cols"])
    runs["linkability_k5"] = run("anonymeter-linkability", d, aux_cols=spec["aux_cols"], n_neighbors=5)
    runs["inference"] = run("anonymeter-inference", d, secret=spec["secret"])
    dc = classification_data(d, spec["target"])
    runs["ml_classification"] = run("mlutility-classification", dc, target=spec["target"])
    # PETsARD 1.10.1 on the target as given (a numeric class label raises KeyError: 'ori')
    runs["ml_classification_as_given"] = run("mlutility-classification", d, target=spec["target"],
                                             metrics=["accuracy", "f1_score"])
    runs["ml_regression"] = run("mlutility-regression", d, target=spec["regression"])
    runs["ml_cluster"] = run("mlutility-cluster", d)
    runs["ml_cluster_k4"] = run("mlutility-cluster", d, n_clusters=4)
    runs["ml_classification_transfer"] = run("mlutility-classification", dc, target=spec["target"],
                                             experiment_design="domain_transfer",
                                             metrics=["accuracy", "f1_score", "mcc"])
    runs["ml_regression_metrics"] = run("mlutility-regression", d, target=spec["regression"],
                                        metrics=["r2_score", "mse", "mae", "rmse"], random_state=7,
                                        xgb_params={"n_estimators": 50, "max_depth": 3})
    return {"case": name, "petsard": _version(), "shapes": {k: list(v.shape) for k, v in d.items()},
            "dtypes": {k: [str(t) for t in v.dtypes] for k, v in d.items()}, "runs": runs}


def _version():
    from importlib.metadata import version
    return {p: version(p) for p in ("petsard", "anonymeter", "sdmetrics", "xgboost", "scikit-learn",
                                    "pandas", "numpy")}


YAML = """\
Loader:
  data:
    filepath: {ori}
Splitter:
  demo:
    num_samples: 1
    train_split_ratio: 0.7
    random_state: 42
Synthesizer:
  custom:
    method: custom_data
    filepath: {syn}
Evaluator:
  quality:
    method: default
  diag:
    method: sdmetrics-diagnosticreport
  link:
    method: anonymeter-linkability
    aux_cols:
      - [age, educ, income]
      - [PID, selfLR, TVnews]
  mlu:
    method: mlutility-regression
    target: age
Reporter:
  save_global:
    method: save_report
    granularity: global
  save_columnwise:
    method: save_report
    granularity: columnwise
  save_pairwise:
    method: save_report
    granularity: pairwise
  save_details:
    method: save_report
    granularity: details
"""


def record_yaml(data_dir):
    from petsard import Executor

    d = load_case("anes96", data_dir)
    full = read_csv_exact(Path(data_dir) / CASES["anes96"]["file"])
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        full.to_csv(tmp / "ori.csv", index=False)
        d["syn"].to_csv(tmp / "syn.csv", index=False)
        (tmp / "petsard.yaml").write_text(YAML.format(ori=tmp / "ori.csv", syn=tmp / "syn.csv"))
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ex = Executor(config=str(tmp / "petsard.yaml"))
                ex.run()
            # the Splitter's train/validation rows, to check our split semantics
            res = ex.get_result()
            out["result_keys"] = [str(k) for k in res]
            files = sorted(p.name for p in tmp.glob("*.csv") if p.name not in ("ori.csv", "syn.csv"))
            out["files"] = files
            out["reports"] = {f: {"columns": list(pd.read_csv(tmp / f).columns),
                                  "rows": len(pd.read_csv(tmp / f)),
                                  "head": pd.read_csv(tmp / f).head(3).astype(str).values.tolist()}
                              for f in files}
        finally:
            os.chdir(cwd)
    # the split alone, as the Splitter does it
    from petsard.loader.splitter import Splitter
    from petsard.metadater.metadata import Schema  # noqa: F401

    sp = Splitter(num_samples=1, train_split_ratio=0.7, random_state=42)
    idx = sp._bootstrapping(index=list(range(len(full))))
    out["split_train_head"] = idx[1]["train"][:20]
    out["split_validation_head"] = idx[1]["validation"][:20]
    out["split_sizes"] = [len(idx[1]["train"]), len(idx[1]["validation"])]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = next((p for p in (REPO.parent / "shared" / "data", REPO.parents[1] / "shared" / "data")
                    if p.exists()), REPO.parent / "shared" / "data")
    ap.add_argument("--data", default=str(default))
    ap.add_argument("--cases", nargs="*", default=list(CASES))
    ap.add_argument("--no-yaml", action="store_true")
    args = ap.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    for name in args.cases:
        t0 = time.perf_counter()
        rec = record_case(name, args.data)
        (OUT / f"petsard_{name}.json").write_text(json.dumps(rec, indent=1, sort_keys=False) + "\n")
        print(f"{name}: {time.perf_counter() - t0:.1f} s", flush=True)
    if not args.no_yaml:
        rec = record_yaml(args.data)
        (OUT / "petsard_yaml.json").write_text(json.dumps(rec, indent=1) + "\n")
        print("yaml: done", flush=True)


if __name__ == "__main__":
    main()
