"""synthguard's PETsARD facade against PETsARD 1.10.1 itself (fixtures recorded by
``benchmarks/oracles/record_petsard.py`` on public data, see ``petsard_cases.py``).

* Layouts (granularity keys, index, column names and order, dtypes) are compared exactly.
* Quality and diagnostic reports: the same algorithm, so every number is compared exactly (global
  numbers after PETsARD's 2-decimal rounding, per-column/per-pair numbers to 1e-9: float
  summation order).
* ML utility: the same learner (XGBoost, ``random_state``) on the same preprocessing, so the rounded
  rows are compared exactly when xgboost is installed; with the scikit-learn fallback only the
  layout is compared (another learner gives other numbers, and the output names it).
* Anonymeter attacks are sampled: synthguard's and PETsARD's estimates must agree within their
  confidence intervals (intervals overlap, with 0.01 for PETsARD's rounding).
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthguard.compat.petsard.evaluator import Evaluator
from synthguard.compat.petsard.utility import gradient_boosting_backend

from .petsard_cases import CASES, classification_data, load_case

ORACLES = Path(__file__).parent / "recorded"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def data_dir(shared_data) -> Path:
    """The real tables (tests/conftest.py's ``shared_data``: ``$SYNTHGUARD_SHARED_DATA`` or ../shared/data)."""
    return shared_data


def oracle(case: str) -> dict:
    return json.loads((ORACLES / f"petsard_{case}.json").read_text())


def _cell(v):
    if v is None or v is pd.NA:
        return None
    if isinstance(v, (float, np.floating)):
        return None if math.isnan(float(v)) else float(v)
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, np.integer):
        return int(v)
    return v


def layout(df: pd.DataFrame) -> dict:
    return {"index_names": list(df.index.names), "index_type": type(df.index).__name__,
            "index": [list(t) if isinstance(t, tuple) else _cell(t) for t in df.index.tolist()],
            "columns": [str(c) for c in df.columns], "dtypes": [str(t) for t in df.dtypes]}


def cells(df: pd.DataFrame) -> list[list]:
    return [[_cell(v) for v in row] for row in df.itertuples(index=False, name=None)]


def assert_layout(mine: pd.DataFrame, theirs: dict, where: str) -> None:
    got = layout(mine)
    for key in ("index_names", "index_type", "index", "columns", "dtypes"):
        assert got[key] == theirs[key], f"{where}: {key} {got[key][:8]} != PETsARD {theirs[key][:8]}"


def assert_cells(mine: pd.DataFrame, theirs: dict, where: str, tol: float = 0.0) -> None:
    got = cells(mine)
    assert len(got) == len(theirs["data"]), where
    for i, (a, b) in enumerate(zip(got, theirs["data"], strict=True)):
        for x, y in zip(a, b, strict=True):
            if isinstance(x, float) and isinstance(y, float):
                assert abs(x - y) <= tol, f"{where} row {i}: {a} != PETsARD {b}"
            else:
                assert x == y, f"{where} row {i}: {a} != PETsARD {b}"


def run(method: str, data: dict, **params):
    ev = Evaluator(method, **params)
    ev.create()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ev.eval({k: v.copy() for k, v in data.items()})


@pytest.mark.conformance
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("report", ["quality", "diagnostic"])
def test_reports_exact(case, report, data_dir):
    """Layouts and numbers exactly as PETsARD 1.10.1, on all five datasets (hhs_breaches included:
    its date-string columns are categorical, as PETsARD reads them)."""
    rec = oracle(case)["runs"][report]
    d = load_case(case, data_dir)
    out = run(rec["method"], {"ori": d["ori"], "syn": d["syn"]}, **rec["params"])
    assert list(out) == rec["keys"]
    for g in ("global", "columnwise", "pairwise"):
        if rec[g] is None:
            assert out[g] is None
            continue
        assert_layout(out[g], rec[g], f"{case} {report} {g}")
        assert_cells(out[g], rec[g], f"{case} {report} {g}", tol=0.0 if g == "global" else 1e-9)


@pytest.mark.conformance
@pytest.mark.parametrize("case", list(CASES))
def test_ml_utility(case, data_dir):
    runs = oracle(case)["runs"]
    d = load_case(case, data_dir)
    xgb = gradient_boosting_backend() == "xgboost"
    checked = 0
    for name, rec in runs.items():
        if not name.startswith("ml_"):
            continue
        task = rec["method"].split("-", 1)[1]
        data = classification_data(d, rec["params"]["target"]) if task == "classification" else d
        out = run(rec["method"], data, **rec["params"])
        if "error" in rec:  # a PETsARD 1.10.1 defect (see docs/compat.md): synthguard runs
            g = out["global"].set_index("metric")
            cols = [c for c in ("ori", "syn", "syn_to_ori") if c in g.columns]
            assert g.loc[["accuracy", "f1_score"], cols].notna().all().all()
            continue
        assert list(out) == rec["keys"]
        assert sorted(out["details"]) == sorted(rec["details"]["keys"])
        if xgb:
            assert_layout(out["global"], rec["global"], f"{case} {name}")
            assert_cells(out["global"], rec["global"], f"{case} {name}", tol=0.011)
        else:
            assert list(out["global"].columns[:-1]) == rec["global"]["columns"]
            assert (out["global"]["model"] == "sklearn-gradient-boosting").all()
        checked += 1
    assert checked >= 4


def _overlap(mine: float, mine_lo: float, mine_hi: float, theirs: float, t_lo: float, t_hi: float) -> bool:
    slack = 0.011  # PETsARD rounds to 2 decimals
    return not (mine_hi + slack < t_lo or t_hi + slack < mine_lo)


@pytest.mark.conformance
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("name", ["linkability", "linkability_k5", "inference", "singlingout_multi"])
def test_anonymeter_within_ci(case, name, data_dir):
    runs = oracle(case)["runs"]
    d = load_case(case, data_dir)
    if True:
        rec = runs[name]
        out = run(rec["method"], d, **rec["params"])
        assert list(out) == rec["keys"]
        assert_layout(out["global"], rec["global"], f"{case} {name}")
        if rec["details"] is None:
            assert out["details"] is None
        else:
            assert list(out["details"]) == rec["details"]["keys"]
        mine = out["global"].iloc[0]
        theirs = dict(zip(rec["global"]["columns"], rec["global"]["data"][0], strict=True))
        if name == "singlingout_multi":
            # the control rate (hence the risk) differs on purpose: anonymeter 1.1.0's control-size
            # correction under-estimates it (docs/compat.md A1, docs/compat-petsard.md); the attack
            # and the naive baseline are the same attacks and must agree
            rates = ["attack_rate", "baseline_rate"]
            assert mine["control_rate"] >= theirs["control_rate"] - theirs["control_rate_err"] - 0.011
        else:
            rates = ["attack_rate", "control_rate"]
            if name != "inference":  # anonymeter 1.1.0's inference baseline is broken (docs/compat.md)
                rates.append("baseline_rate")
        for r in rates:
            v, e = mine[r], mine[f"{r}_err"]
            tv, te = theirs[r], theirs[f"{r}_err"]
            assert _overlap(v, v - e, v + e, tv, tv - te, tv + te), f"{case} {name} {r}: {v}±{e} vs PETsARD {tv}±{te}"
        if name != "singlingout_multi":
            assert _overlap(mine["risk"], mine["risk_CI_btm"], mine["risk_CI_top"], theirs["risk"],
                            theirs["risk_CI_btm"], theirs["risk_CI_top"]), f"{case} {name} risk"


@pytest.mark.conformance
def test_petsard_defects_do_not_carry_over(data_dir):
    """PETsARD 1.10.1 raises on univariate singling out and on a numeric classification target;
    through synthguard both run."""
    runs = oracle("diabetes_raw")["runs"]
    assert runs["singlingout_uni"]["error"].startswith("TypeError")
    assert runs["ml_classification_as_given"]["error"].startswith("KeyError")
    d = load_case("diabetes_raw", data_dir)
    out = run("anonymeter-singlingout", d, mode="univariate", n_attacks=200)
    assert list(out["global"].columns) == runs["singlingout_multi"]["global"]["columns"]
    out = run("mlutility-classification", d, target="sex", metrics=["accuracy", "f1_score"])
    g = out["global"]
    assert list(g["metric"]) == ["accuracy", "f1_score"] and g[["ori", "syn"]].notna().all().all()
