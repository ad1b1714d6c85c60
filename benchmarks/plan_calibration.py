"""Calibrate the plan's estimate (synthguard.run.plan): whole-process runs of the default and the
``privacy`` presets at two sizes give the constants (least squares), a third size checks them.

Data: ``bench_preset.make_files`` (15 census-like columns; original n, synthetic n, control n/4).
Each run is one fresh ``python -m synthguard evaluate`` process; wall time and its peak RSS
(``os.wait4``) are recorded. Prints each run beside the plan's estimate, then the fitted constants
(time, non-negative least squares: ``FIXED + metrics x (METRIC + PER_MCELL x million cells)``;
memory, least squares: ``FIXED_MB + MB_PER_MCELL x million cells``) and the worst ratio of measured to estimated (the plan's ``SPREAD``).

Usage::

    python benchmarks/plan_calibration.py --sizes 2000,10000 --check 5000

Not run by CI. The load (``/proc/loadavg``) is printed: on a shared machine the times scale with it.
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
from scipy.optimize import nnls

sys.path.insert(0, str(Path(__file__).resolve().parent))


def one_run(files: dict, preset: str | None, out: Path) -> tuple[float, float, int, float]:
    """(wall s, peak RSS MB, metrics run, million cells) of one evaluate process."""
    cmd = [sys.executable, "-m", "synthguard", "evaluate", "-o", str(files["original"]),
           "-s", str(files["synthetic"]), "-c", str(files["control"]),
           "-m", str(Path(files["original"]).parent / "metadata.json"), "--quiet", "--json", str(out)]
    if preset:
        cmd += ["--preset", preset]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"run failed ({status}): {' '.join(cmd)}")
    report = json.loads(out.read_text())
    cells = sum(v["rows"] * v["columns"] for v in report["inputs"].values()) / 1e6
    return wall, usage.ru_maxrss / 1024, len(report["metrics"]), cells


def main() -> None:
    from bench_preset import make_files
    from synthguard.run import plan

    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="2000,10000")
    ap.add_argument("--check", default="5000")
    ap.add_argument("--data-dir", type=Path, default=Path("/tmp/synthguard-plan-calibration"))
    args = ap.parse_args()
    fit_sizes = [int(s) for s in args.sizes.split(",") if s]
    check_sizes = [int(s) for s in args.check.split(",") if s]
    print(f"load before: {open('/proc/loadavg').read().split()[:3]}")
    rows = []
    for n in fit_sizes + check_sizes:
        files = make_files(n, args.data_dir)
        for preset in (None, "privacy"):
            wall, mb, metrics, mcells = one_run(files, preset, args.data_dir / f"r_{preset}_{n}.json")
            est, est_mb = plan.estimate(mcells * 1e6, 15, metrics)
            rows.append((n, preset or "default", metrics, mcells, wall, mb, est, est_mb, n in fit_sizes))
            print(f"n={n:>7,} {preset or 'default':>8}: {metrics} metrics, {mcells:.3f} Mcells: "
                  f"{wall:6.1f} s (plan {est:6.1f} s, x{wall / est:.2f}), {mb:6.0f} MB "
                  f"(plan {est_mb:.0f} MB, x{mb / est_mb:.2f})", flush=True)
    fit = [r for r in rows if r[-1]]
    a = np.array([[1.0, r[2], r[2] * r[3]] for r in fit])
    coef, _ = nnls(a, np.array([r[4] for r in fit]))  # no negative cost
    m = np.array([[1.0, r[3]] for r in fit])
    mcoef, *_ = np.linalg.lstsq(m, np.array([r[5] for r in fit]), rcond=None)
    print(f"fit: FIXED_SECONDS={coef[0]:.2f} METRIC_SECONDS={coef[1]:.3f} "
          f"METRIC_SECONDS_PER_MCELL={coef[2]:.2f} FIXED_MB={mcoef[0]:.0f} MB_PER_MCELL={mcoef[1]:.0f}")
    for r in rows:
        t = coef[0] + r[2] * (coef[1] + coef[2] * r[3])
        print(f"  refit n={r[0]:,} {r[1]}: measured {r[4]:.1f} s, refit {t:.1f} s (x{r[4] / t:.2f})"
              f"{'' if r[-1] else '  <- not in the fit'}")
    print(f"load after: {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    main()
