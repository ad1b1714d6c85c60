"""SDMetrics 0.32 vs synthguard on the disclosure metrics: seconds, peak memory, ratio.

Each call runs in its own subprocess (fresh interpreter, imports and data generation excluded from
the timing; peak RSS of that process reported, imports included) with a wall-clock timeout
(default 600 s, reported as ``>600``). synthguard is timed through ``synthguard.evaluate`` (input
validation and encoding included) after a warm-up on a tiny table (numba compilation excluded).

Usage::

    python benchmarks/bench_disclosure.py                      # 3k and 10k rows, side by side
    python benchmarks/bench_disclosure.py --sizes 3000 --metrics cap new_row_synthesis
    python benchmarks/bench_disclosure.py --sizes 1000000 --only synthguard   # 1M rows x 15 columns
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

KEYS = ["sex", "region", "education"]
SENSITIVE = ["diagnosis"]
META = {
    "columns": {"age": {"sdtype": "numerical"}, "income": {"sdtype": "numerical"},
                "bmi": {"sdtype": "numerical"}, "height": {"sdtype": "numerical"},
                "weight": {"sdtype": "numerical"}, "visits": {"sdtype": "numerical"},
                "score": {"sdtype": "numerical"}, "admitted": {"sdtype": "datetime"},
                "sex": {"sdtype": "categorical"}, "region": {"sdtype": "categorical"},
                "education": {"sdtype": "categorical"}, "occupation": {"sdtype": "categorical"},
                "smoker": {"sdtype": "categorical"}, "zip": {"sdtype": "categorical"},
                "diagnosis": {"sdtype": "categorical"}},
}
SG_META = {**META, "quasi_identifiers": KEYS, "sensitive": SENSITIVE}

# metric -> (synthguard name, synthguard params, sdmetrics call description)
METRICS = {
    "cap": ("cap", {}, "CategoricalCAP"),
    "zero_cap": ("zero_cap", {}, "CategoricalZeroCAP"),
    "generalized_cap": ("generalized_cap", {}, "CategoricalGeneralizedCAP"),
    "disclosure_protection": ("disclosure_protection", {"continuous_column_names": ["age"],
                                                        "known_column_names": KEYS + ["age"]},
                              "DisclosureProtection[cap, age binned]"),
    "disclosure_protection_estimate": ("disclosure_protection_estimate", {},
                                       "DisclosureProtectionEstimate[1000 x 10]"),
    "dcr_baseline_protection": ("dcr_baseline_protection", {}, "DCRBaselineProtection"),
    "dcr_overfitting_protection": ("dcr_overfitting_protection", {}, "DCROverfittingProtection"),
    "new_row_synthesis": ("new_row_synthesis", {"sdmetrics_compat": True}, "NewRowSynthesis"),
    "k_anonymity": ("k_anonymity", {}, None),
    "l_diversity": ("l_diversity", {}, None),
}


def make_people(n: int, seed: int) -> pd.DataFrame:
    """A made-up person-level table, 15 columns (7 numeric, 1 datetime, 7 categorical), a few NaN."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 3))
    age = np.clip(18 + 60 / (1 + np.exp(-z[:, 0])), 18, 95).round()
    sex = np.where(rng.random(n) < 0.5, "F", "M")
    region = np.array([f"r{i}" for i in range(12)])[rng.integers(0, 12, n)]
    edu_i = np.clip((z[:, 1] * 1.5 + 3).round(), 0, 6).astype(int)
    education = np.array(["none", "primary", "secondary", "vocational", "bachelor", "master", "phd"])[edu_i]
    income = np.exp(9.5 + 0.15 * edu_i + 0.2 * z[:, 0] + rng.normal(0, 0.3, n)).round(-1)
    height = (170 + 9 * rng.normal(size=n)).round()
    bmi = np.clip(26 + 4 * z[:, 2], 15, 55).round(1)
    weight = (bmi * (height / 100) ** 2).round(1)
    visits = rng.poisson(np.exp(0.5 + 0.3 * z[:, 2])).astype(float)
    score = (rng.beta(2, 5, n) * 100).round(2)
    admitted = np.datetime64("2015-01-01") + rng.integers(0, 3000, n).astype("timedelta64[D]")
    occupation = np.array([f"occ{i}" for i in range(40)])[(rng.integers(0, 40, n) + edu_i * 3) % 40]
    smoker = np.where(rng.random(n) < 0.2 + 0.1 * (sex == "M"), "yes", "no")
    zip_ = np.array([f"{i:05d}" for i in range(500)])[rng.zipf(1.3, n) % 500]
    dx = np.array(["none", "diabetes", "asthma", "hypertension", "copd", "cancer"])
    diagnosis = np.where(rng.random(n) < 0.5, dx[(edu_i + (sex == "M")) % 6], dx[rng.integers(0, 6, n)])
    df = pd.DataFrame({"age": age, "income": income, "bmi": bmi, "height": height, "weight": weight,
                       "visits": visits, "score": score, "admitted": pd.to_datetime(admitted),
                       "sex": sex, "region": region, "education": education, "occupation": occupation,
                       "smoker": smoker, "zip": zip_, "diagnosis": diagnosis})
    df["bmi"] = df["bmi"].mask(rng.random(n) < 0.03)
    df["income"] = df["income"].mask(rng.random(n) < 0.02)
    df["occupation"] = df["occupation"].mask(rng.random(n) < 0.02)
    return df


def make_tables(n: int) -> dict[str, pd.DataFrame]:
    """original, synthetic (20 % copies, 20 % near-copies, 60 % fresh rows), holdout."""
    original = make_people(n, 1)
    rng = np.random.default_rng(7)
    copies = original.iloc[rng.choice(n, n // 5, replace=False)]
    near = original.iloc[rng.choice(n, n // 5, replace=False)].copy()
    near["age"] = np.clip(near["age"] + rng.integers(-1, 2, len(near)), 18, 95)
    near["income"] = (near["income"] * (1 + rng.uniform(-0.02, 0.02, len(near)))).round(-1)
    fresh = make_people(n - len(copies) - len(near), 2)
    synthetic = pd.concat([copies, near, fresh], ignore_index=True)
    return {"original": original, "synthetic": synthetic, "holdout": make_people(n, 3)}


# ------------------------------------------------------------------ child side
def _sdmetrics_call(metric: str, t: dict[str, pd.DataFrame]) -> dict:
    import warnings

    warnings.simplefilter("ignore")
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

    o, s, h = t["original"], t["synthetic"], t["holdout"]
    cap_kw = dict(key_fields=KEYS, sensitive_fields=SENSITIVE)
    np.random.seed(0)  # noqa: NPY002  (SDMetrics draws from the global RNG)
    DCRBaselineProtection._seed = 0
    calls = {
        "cap": lambda: {"score": CategoricalCAP.compute(o, s, **cap_kw)},
        "zero_cap": lambda: {"score": CategoricalZeroCAP.compute(o, s, **cap_kw)},
        "generalized_cap": lambda: {"score": CategoricalGeneralizedCAP.compute(o, s, **cap_kw)},
        "disclosure_protection": lambda: DisclosureProtection.compute_breakdown(
            o, s, known_column_names=KEYS + ["age"], sensitive_column_names=SENSITIVE,
            continuous_column_names=["age"]),
        "disclosure_protection_estimate": lambda: DisclosureProtectionEstimate.compute_breakdown(
            o, s, known_column_names=KEYS, sensitive_column_names=SENSITIVE, verbose=False),
        "dcr_baseline_protection": lambda: DCRBaselineProtection.compute_breakdown(o, s, META, None),
        "dcr_overfitting_protection": lambda: DCROverfittingProtection.compute_breakdown(o, s, h, META, None),
        "new_row_synthesis": lambda: NewRowSynthesis.compute_breakdown(o, s, META),
    }
    start = time.perf_counter()
    out = calls[metric]()
    return {"seconds": time.perf_counter() - start, "score": float(out["score"])}


def _synthguard_call(metric: str, t: dict[str, pd.DataFrame], params: dict) -> dict:
    from synthguard import evaluate

    name, base_params, _ = METRICS[metric]
    p = {**base_params, **params}
    tiny = make_tables(200)
    evaluate(tiny["original"], tiny["synthetic"], tiny["holdout"], SG_META, metrics={name: p})  # warm-up
    start = time.perf_counter()
    rep = evaluate(t["original"], t["synthetic"], t["holdout"], SG_META, metrics={name: p})
    seconds = time.perf_counter() - start
    entry = rep[name]
    if entry["status"] != "ok":
        raise RuntimeError(f"{name}: {entry['status']}: {entry.get('reason')}")
    return {"seconds": seconds, "score": entry["result"]["value"]}


def child(args: argparse.Namespace) -> None:
    import resource

    t = make_tables(args.n)
    if args.tool == "sdmetrics":
        out = _sdmetrics_call(args.metric, t)
    else:
        out = _synthguard_call(args.metric, t, json.loads(args.params))
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("RESULT " + json.dumps(out), flush=True)


# ------------------------------------------------------------------ parent side
def run_child(tool: str, metric: str, n: int, timeout: float, params: dict | None = None) -> dict:
    cmd = [sys.executable, __file__, "--child", "--tool", tool, "--metric", metric, "--n", str(n),
           "--params", json.dumps(params or {})]
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"seconds": None, "timeout": timeout, "wall": time.perf_counter() - start}
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return {"error": (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]}


def _fmt(res: dict) -> str:
    if res.get("seconds") is None:
        return f">{res['timeout']:.0f}" if "timeout" in res else "error"
    return f"{res['seconds']:.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--tool", default="synthguard")
    ap.add_argument("--metric", default="cap")
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--params", default="{}")
    ap.add_argument("--sizes", type=int, nargs="+", default=[3000, 10000])
    ap.add_argument("--metrics", nargs="+", default=list(METRICS))
    ap.add_argument("--only", choices=["both", "synthguard", "sdmetrics"], default="both")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--sg-params", default="{}", help="JSON params added to every synthguard metric")
    ap.add_argument("--out", type=Path, default=None, help="append JSON lines here")
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    print(f"{'rows':>8} {'metric':<32} {'sdmetrics s':>12} {'synthguard s':>13} {'ratio':>9} "
          f"{'sdm MiB':>8} {'sg MiB':>8} {'sdm score':>10} {'sg score':>10}", flush=True)
    for n in args.sizes:
        for metric in args.metrics:
            sdm_name = METRICS[metric][2]
            sdm = {}
            if args.only in ("both", "sdmetrics") and sdm_name is not None:
                sdm = run_child("sdmetrics", metric, n, args.timeout)
            sg = {}
            if args.only in ("both", "synthguard"):
                sg = run_child("synthguard", metric, n, args.timeout * 6, json.loads(args.sg_params))
            ratio = ""
            if sg.get("seconds"):
                if sdm.get("seconds"):
                    ratio = f"{sdm['seconds'] / sg['seconds']:.0f}x"
                elif "timeout" in sdm:
                    ratio = f">{sdm['timeout'] / sg['seconds']:.0f}x"

            def num(d: dict, k: str) -> str:
                v = d.get(k)
                return f"{v:.6f}" if isinstance(v, float) else ("-" if v is None else str(v))

            print(f"{n:>8} {metric:<32} {_fmt(sdm) if sdm else '-':>12} {_fmt(sg) if sg else '-':>13} "
                  f"{ratio:>9} {num(sdm, 'peak_rss_mib')[:8]:>8} {num(sg, 'peak_rss_mib')[:8]:>8} "
                  f"{num(sdm, 'score'):>10} {num(sg, 'score'):>10}", flush=True)
            if args.out:
                with args.out.open("a") as fh:
                    fh.write(json.dumps({"n": n, "metric": metric, "sdmetrics": sdm, "synthguard": sg}) + "\n")


if __name__ == "__main__":
    main()
