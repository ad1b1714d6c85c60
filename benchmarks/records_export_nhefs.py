"""The records export on a leaky nhefs release (issue #30): 30 % verbatim + 30 % one-cell training
copies + 40 % copula rows (``calibration_split`` seed 0, 40/30/30), ``evaluate(preset=...)``
(argument 1, default the default metrics); prints the export's records per metric and action, the
planted copies among the rows to drop and the rows naming ``closest_distance_mia`` and
``dcr_overfitting_protection``.

Usage: ``SYNTHGUARD_SHARED_DATA=../shared/data python benchmarks/records_export_nhefs.py privacy``
"""
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

import synthguard
from synthguard.calibration import build_release, calibration_split

DATA = Path(os.environ.get("SYNTHGUARD_SHARED_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
df = pd.read_csv(DATA / "nhefs.csv")
parts = calibration_split(df, 0, (0.4, 0.3, 0.3))
o, c = parts["original"], parts["control"]
rel = build_release("copula", parts, 0).release.reset_index(drop=True)
rng = np.random.default_rng(0)
n = len(rel)
k = int(0.3 * n)
pick = rng.choice(len(o), 2 * k, replace=False)
exact = o.iloc[pick[:k]].reset_index(drop=True)
near = o.iloc[pick[k:]].reset_index(drop=True).copy()
cats = [col for col in o.columns if o[col].nunique() <= 10]
for i in range(k):  # one cell changed (a small table: a loop is fine in a measurement script)
    col = cats[i % len(cats)]
    vals = [v for v in o[col].dropna().unique() if v != near.at[i, col]]
    near.at[i, col] = vals[i % len(vals)]
rel = pd.concat([exact, near, rel.iloc[2 * k:]], ignore_index=True)
meta = {"quasi_identifiers": ["sex", "age", "race", "education", "marital"], "sensitive": ["hbp", "diabetes"]}
t0, w0 = time.process_time(), time.perf_counter()
rep = synthguard.evaluate(o, rel, control=c, metadata=meta, preset=sys.argv[1] if len(sys.argv) > 1 else None)
cpu, wall = time.process_time() - t0, time.perf_counter() - w0
rec = rep.records(o, rel)
print("rows", len(o), len(c), len(rel), "verdict", rep.verdict.level, f"cpu {cpu:.1f} s wall {wall:.1f} s")
print({t["metric"]: t["level"] for t in rep.verdict.tests})
print("export", len(rec))
print(rec.groupby(["metric", "action"]).size().to_string())
print("drop rows", rec.loc[rec.action == "drop", "release_row"].nunique(),
      "exact planted in drop", len(set(range(k)) & set(rec.loc[rec.action == "drop", "release_row"].dropna().astype(int))), "of", k,
      "near planted in drop", len(set(range(k, 2 * k)) & set(rec.loc[rec.action == "drop", "release_row"].dropna().astype(int))), "of", k)
for m in ("closest_distance_mia", "dcr_overfitting_protection"):
    sub = rec[rec["tests"].fillna("").str.contains(m)]
    print(m, "rows naming it", len(sub), "release rows", sub.release_row.nunique(), dict(sub.action.value_counts()),
          "own-metric rows", int((rec.metric == m).sum()))
    if len(sub):
        print("  e.g.", sub.iloc[0][["action", "release_row", "training_row", "family", "reason"]].to_dict())
print("rss MiB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
