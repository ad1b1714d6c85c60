"""Calibrate the plan's estimate (synthguard.run.plan): whole-process runs of the default and the
``privacy`` presets at two sizes give the constants (least squares), a third size checks them.

Data: ``bench_preset.make_files`` (15 census-like columns; original n, synthetic n, control n/4).
Each run is one fresh ``python -m synthguard evaluate`` process; wall time and its peak RSS
(``os.wait4``) are recorded. Prints each run, the fitted constants (time: ``metrics x (METRIC +
PER_MCELL x million cells ** CELL_EXPONENT)``; memory: ``FIXED_MB + MB_PER_MCELL x million cells
** MB_EXPONENT``; non-negative least squares for each exponent of a grid, the exponent with the
smallest worst ratio of measured to fitted), each run beside the refit and the plan's current
estimate. The worst ratio is the plan's ``SPREAD``.

Usage::

    python benchmarks/plan_calibration.py --sizes 2000,10000 --large 200000 --check 5000 \
        --measured privacy:1000000:28:1502:4079   # a 1M run measured by bench_preset.py

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


def one_run(files: dict, preset: str | None, out: Path, max_records: int = 0
            ) -> tuple[float, float, int, float]:
    """(wall s, peak RSS MB, metrics run, million cells) of one evaluate process (``max_records``:
    ``--max-records``; the cells are then the sample's, as the plan counts them)."""
    cmd = [sys.executable, "-m", "synthguard", "evaluate", "-o", str(files["original"]),
           "-s", str(files["synthetic"]), "-c", str(files["control"]),
           "-m", str(Path(files["original"]).parent / "metadata.json"), "--quiet", "--json", str(out)]
    if preset:
        cmd += ["--preset", preset]
    if max_records:
        cmd += ["--max-records", str(max_records)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"run failed ({status}): {' '.join(cmd)}")
    report = json.loads(out.read_text())
    cells = sum(v["rows"] * v["columns"] for v in report["inputs"].values()) / 1e6
    sample = report.get("sample") or {}
    for role, v in report["inputs"].items():  # a sampled table counts its sample's rows
        if isinstance(sample.get(role), dict):
            cells -= (v["rows"] - sample[role]["rows"]) * v["columns"] / 1e6
    return wall, usage.ru_maxrss / 1024, len(report["metrics"]), cells


def fit_power(x: np.ndarray, y: np.ndarray, weight: np.ndarray, fixed: bool
               ) -> tuple[float, float, float]:
    """``y ~ weight * (a + b * x ** e)`` (``fixed``: ``y ~ a + b * x ** e``), a and b non-negative
    (NNLS) for each exponent ``e`` on a grid, the exponent whose worst ratio of measured to fitted
    is closest to 1 (the plan states a range of x/÷ its SPREAD): ``(a, b, e)``."""
    best = None
    for e in np.round(np.arange(0.30, 1.001, 0.01), 2):
        w = np.ones_like(weight) if fixed else weight
        a = np.column_stack([w, w * x ** e])
        coef, _ = nnls(a, y)
        fitted = a @ coef
        if (fitted <= 0).any():
            continue
        worst = float(np.abs(np.log(y / fitted)).max())
        if best is None or worst < best[0]:
            best = (worst, float(coef[0]), float(coef[1]), float(e))
    assert best is not None
    return best[1], best[2], best[3]


def main() -> None:
    from bench_preset import make_files
    from synthguard.run import plan

    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="2000,10000", help="fitted, both presets")
    ap.add_argument("--large", default="", help="fitted, the privacy preset only (e.g. 200000; "
                    "ROWS:MAX_RECORDS for a sampled run, e.g. 1000000:200000)")
    ap.add_argument("--check", default="5000", help="not fitted, both presets")
    ap.add_argument("--measured", default="", help="runs measured before, fitted, as "
                    "PRESET:ROWS:TESTS:SECONDS:PEAK_MB[,...] (e.g. privacy:1000000:28:1502:4079) on "
                    "bench_preset.py's tables (control ROWS/4, 15 columns: the cells are counted so)")
    ap.add_argument("--data-dir", type=Path, default=Path("/tmp/synthguard-plan-calibration"))
    args = ap.parse_args()
    fit_sizes = [int(s) for s in args.sizes.split(",") if s]
    large = [tuple(int(v) for v in (s.split(":") + ["0"])[:2]) for s in args.large.split(",") if s]
    check_sizes = [int(s) for s in args.check.split(",") if s]
    print(f"load before: {open('/proc/loadavg').read().split()[:3]}")
    rows = []
    runs = [(n, p, True, 0) for n in fit_sizes for p in (None, "privacy")]
    runs += [(n, "privacy", True, m) for n, m in large]
    runs += [(n, p, False, 0) for n in check_sizes for p in (None, "privacy")]
    for n, preset, fitted, max_records in runs:
        files = make_files(n, args.data_dir)
        wall, mb, metrics, mcells = one_run(files, preset, args.data_dir / f"r_{preset}_{n}.json",
                                            max_records)
        rows.append((n, preset or "default", metrics, mcells, wall, mb, fitted))
        print(f"n={n:>9,} {preset or 'default':>8}{f' (max-records {max_records:,})' if max_records else ''}: "
              f"{metrics} metrics, {mcells:.3f} Mcells: "
              f"{wall:7.1f} s, {mb:6.0f} MB", flush=True)
    for item in (x for x in args.measured.split(",") if x):
        preset, n, metrics, wall, mb = item.split(":")
        mcells = (2 * int(n) + max(int(n) // 4, 1)) * 15 / 1e6
        rows.append((int(n), preset, int(metrics), mcells, float(wall), float(mb), True))
    fit = [r for r in rows if r[-1]]
    x = np.array([r[3] for r in fit])
    a, b, e = fit_power(x, np.array([r[4] for r in fit]), np.array([float(r[2]) for r in fit]), False)
    ma, mb_, me = fit_power(x, np.array([r[5] for r in fit]), np.ones(len(fit)), True)
    print(f"fit: METRIC_SECONDS={a:.3f} METRIC_SECONDS_PER_MCELL={b:.3f} CELL_EXPONENT={e:.2f} "
          f"FIXED_MB={ma:.0f} MB_PER_MCELL={mb_:.1f} MB_EXPONENT={me:.2f}")
    for r in rows:
        t = r[2] * (a + b * r[3] ** e)
        m = ma + mb_ * r[3] ** me
        now, now_mb = plan.estimate(r[3] * 1e6, 15, r[2])
        print(f"  n={r[0]:>9,} {r[1]:>8}: measured {r[4]:7.1f} s {r[5]:6.0f} MB; refit {t:7.1f} s "
              f"(x{r[4] / t:.2f}) {m:6.0f} MB (x{r[5] / m:.2f}); plan now {now:7.1f} s (x{r[4] / now:.2f}) "
              f"{now_mb:6.0f} MB{'' if r[-1] else '  <- not in the fit'}")
    print(f"load after: {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    main()
