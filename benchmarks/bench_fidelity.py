"""Benchmark: quality_report, diagnostic_report, ml_utility_*, anonymisation_score at 40k and 1M rows,
with SDMetrics' QualityReport / DiagnosticReport side by side at 40k (below its 50k subsampling limit).

Run: ``/work/venv/bin/python benchmarks/bench_fidelity.py [--sizes 40000 1000000] [--no-sdmetrics]``.
Prints wall seconds, process CPU seconds and peak traced memory (tracemalloc) per call; timings are for one run on whatever
machine runs it. ML utility uses the default ``max_rows=10000`` cap (seeded subsample of each table).
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
import warnings

import numpy as np
import pandas as pd

from synthguard.metrics.distortion.anonymisation_score import anonymisation_score
from synthguard.metrics.fidelity.diagnostic import diagnostic_report
from synthguard.metrics.fidelity.quality import quality_report
from synthguard.metrics.utility.ml import (
    ml_utility_classification,
    ml_utility_cluster,
    ml_utility_regression,
)
from synthguard.registry import Context

META = {"columns": {"age": {"sdtype": "numerical"}, "income": {"sdtype": "numerical"},
                    "score": {"sdtype": "numerical"}, "hours": {"sdtype": "numerical"},
                    "debt": {"sdtype": "numerical"}, "joined": {"sdtype": "datetime"},
                    "region": {"sdtype": "categorical"}, "education": {"sdtype": "categorical"},
                    "job": {"sdtype": "categorical"}, "member": {"sdtype": "boolean"},
                    "churn": {"sdtype": "categorical"}},
        "target": "churn"}


def make_table(n: int, seed: int, noise: float = 0.0) -> pd.DataFrame:
    """A mixed table with correlated numerics, categoricals, a boolean, a datetime and a target."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    age = np.clip(40 + 12 * z + rng.normal(0, 5 + noise * 5, n), 18, 90).round()
    edu = np.clip((z + rng.normal(0, 1, n)) * 1.2 + 2, 0, 4).round().astype(int)
    income = np.exp(10 + 0.2 * edu + 0.3 * z + rng.normal(0, 0.4 + noise, n)).round(-1)
    score = 600 + 50 * z + rng.normal(0, 30, n)
    hours = np.clip(rng.normal(38, 8, n), 0, 80).round()
    debt = rng.exponential(5000, n) * (1 + noise)
    joined = pd.to_datetime("2015-01-01") + pd.to_timedelta(rng.integers(0, 3000, n), unit="D")
    region = rng.choice(["north", "south", "east", "west", "centre"], n, p=[.3, .25, .2, .15, .1])
    job = rng.choice([f"job{i}" for i in range(12)], n)
    member = rng.random(n) < 0.4 + 0.1 * (z > 0)
    logit = -1 + 0.8 * z - 0.5 * member + 0.3 * (region == "south")
    churn = np.where(logit + rng.logistic(size=n) > 0, "yes", "no")
    df = pd.DataFrame({"age": age, "income": income, "score": score, "hours": hours, "debt": debt,
                       "joined": joined, "region": region,
                       "education": np.array(["none", "school", "college", "bachelor", "master"])[edu],
                       "job": job, "member": member, "churn": churn})
    df.loc[rng.random(n) < 0.02, "income"] = np.nan
    df.loc[rng.random(n) < 0.02, "region"] = None
    return df


CPU: dict[str, float] = {}


def timed(label: str, func, *args, **kwargs):
    tracemalloc.start()
    t0, c0 = time.perf_counter(), time.process_time()
    out = func(*args, **kwargs)
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    CPU[label] = cpu
    return label, secs, peak, out


def sdmetrics_reports(ctx: Context):
    from sdmetrics.reports import DiagnosticReport, QualityReport

    meta = {"tables": {"t": {"columns": {c: {"sdtype": s.sdtype}
                                         for c, s in ctx.tables.schema.columns.items()}}}}
    out = {}
    for name, cls in (("QualityReport", QualityReport), ("DiagnosticReport", DiagnosticReport)):
        rep = cls()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, secs, peak, _ = timed(name, rep.generate, {"t": ctx.tables.original},
                                     {"t": ctx.tables.synthetic}, meta, verbose=False)
        out[name] = (secs, peak, rep.get_score())
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[40_000, 1_000_000])
    ap.add_argument("--no-sdmetrics", action="store_true")
    ap.add_argument("--metrics", nargs="+", default=None, help="run only these of ours")
    args = ap.parse_args()
    for n in args.sizes:
        t0 = time.perf_counter()
        ctx = Context.from_frames(make_table(n, 0), make_table(n, 1, noise=0.3), make_table(n, 2), META)
        print(f"\n== {n:,} rows per table (data prepared in {time.perf_counter() - t0:.1f} s) ==")
        print(f"{'metric':<28}{'seconds':>9}{'cpu s':>9}{'peak MiB':>10}  value")
        runs = [("quality_report", quality_report, {}),
                ("diagnostic_report", diagnostic_report, {}),
                ("ml_utility_classification", ml_utility_classification, {}),
                ("ml_utility_regression", ml_utility_regression, {"target": "income"}),
                ("ml_utility_cluster", ml_utility_cluster, {}),
                ("anonymisation_score", anonymisation_score, {})]
        ours = {}
        runs = [r for r in runs if args.metrics is None or r[0] in args.metrics
                or r[0] in ("quality_report", "diagnostic_report")]
        for label, func, kw in runs:
            _, secs, peak, res = timed(label, func, ctx, **kw)
            ours[label] = secs
            print(f"{label:<28}{secs:>9.2f}{CPU[label]:>9.2f}{peak:>10.0f}  {res.value:.6f}", flush=True)
        if not args.no_sdmetrics and n < 50_000:
            for name, (secs, peak, score) in sdmetrics_reports(ctx).items():
                mine = "quality_report" if name == "QualityReport" else "diagnostic_report"
                print(f"sdmetrics {name:<18}{secs:>9.2f}{CPU[name]:>9.2f}{peak:>10.0f}  {score:.6f}   "
                      f"(ratio wall {secs / ours[mine]:.1f}x, cpu {CPU[name] / CPU[mine]:.1f}x)",
                      flush=True)


if __name__ == "__main__":
    main()
