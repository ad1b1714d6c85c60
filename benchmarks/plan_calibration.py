"""Calibrate the plan's estimate (synthguard.run.plan): whole-process runs fit its constants.

Runs, each one fresh ``python -m synthguard evaluate`` process (wall time and its peak RSS by
``os.wait4``):

- ``--sizes``: the default and ``privacy`` presets on ``bench_preset.make_files``' tables (15
  census-like columns; original n, synthetic n, control n/4, quasi-identifiers and a sensitive
  column declared);
- ``--large``: the ``privacy`` preset alone on those tables, ``ROWS`` or ``ROWS:MAX_RECORDS`` (a
  sampled run: the training and control records the tests ask about shrink, the release does
  not; this separates the query cells from the release cells);
- ``--wide``: the default preset on nhefs (real person-level survey rows, ``SYNTHGUARD_SHARED_DATA``)
  widened to ``COLUMNS`` columns by repeating its columns under new names, ``ROWS`` training and
  ``ROWS`` release rows, no control, no metadata (issue #33's shape: ``inference`` runs once per
  column), ``ROWS:COLUMNS``;
- ``--check``: both presets, not fitted.

Each run is costed as the plan costs it (:func:`synthguard.run.plan.make_plan` on the report's
sizes, tests, parameters and roles), and the model of :func:`synthguard.run.plan.estimate` is
fitted: time ``FIXED + T x (METRIC + PER_QUERY x query Mcells ** p + PER_RELEASE x release
Mcells ** q)`` with ``T = tests + per-column tests x ((columns / 15) ** g - 1)``: for each ``(p, q,
g)`` of a grid, non-negative least squares of the ratios of the four linear constants' fit to the
measured times; the grid point with the smallest worst ratio of measured to fitted. Memory:
``FIXED_MB + MB_PER_QUERY x query Mcells ** e + MB_PER_RELEASE x release Mcells`` alike. Prints
each run beside the refit and the plan's current estimate, and the worst ratio (the plan's
``SPREAD`` keeps a margin above it for load). ``--measured`` adds runs measured before on
``make_files``' tables (docs/scaling.md: session 29's quiet 1M runs); ``--save`` and ``--load``
keep runs between calls, so that a fit can take each run at its lowest load.

Usage::

    python benchmarks/plan_calibration.py --sizes 2000,10000 --large 200000,1000000:200000 \
        --wide 700:15,700:100,700:401 --check 5000 --save runs.json
    python benchmarks/plan_calibration.py --sizes "" --check "" --load runs.json   # refit only

Not run by CI. The load (``/proc/loadavg``) is printed before each run and saved with it: on a
shared machine the times scale with it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from scipy.optimize import nnls

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def one_run(files: dict, preset: str | None, out: Path, max_records: int = 0) -> dict:
    """One evaluate process (``files``: original, synthetic, optional control and metadata;
    ``max_records``: ``--max-records``): wall s, CPU s (user + system), peak RSS MB, the load
    before, each test's seconds (the report's) and what the plan counts of it (:func:`cost_inputs`)."""
    cmd = [sys.executable, "-m", "synthguard", "evaluate", "-o", str(files["original"]),
           "-s", str(files["synthetic"]), "--quiet", "--json", str(out)]
    cmd += ["-c", str(files["control"])] if files.get("control") else []
    cmd += ["-m", str(files["metadata"])] if files.get("metadata") else []
    cmd += ["--preset", preset] if preset else []
    cmd += ["--max-records", str(max_records)] if max_records else []
    load = _load()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"run failed ({status}): {' '.join(cmd)}")
    report = json.loads(out.read_text())
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "mb": usage.ru_maxrss / 1024, "load": load,
            "metric_seconds": {k: v.get("seconds") for k, v in report["metrics"].items()}, **cost_inputs(report)}


def cost_inputs(report: dict) -> dict:
    """What the plan's estimate reads of a run, from its report: the tests, those run once per
    column, the columns they run over, the query and release million cells (a sampled table
    counts its sample's rows, as the plan does)."""
    from synthguard.registry import get_metric
    from synthguard.run import plan

    sample = report.get("sample") or {}
    sizes = {role: ((sample[role]["rows"] if isinstance(sample.get(role), dict) else v["rows"]), v["columns"])
             for role, v in report["inputs"].items()}
    names = list(report["metrics"])
    schema = report["schema"]
    p = plan.make_plan(sizes, names, {n: get_metric(n) for n in names},
                       {n: report["metrics"][n].get("params") or {} for n in names},
                       quasi_identifiers=schema.get("quasi_identifiers") or (),
                       sensitive=schema.get("sensitive") or ())
    query, release = plan.query_release_cells(sizes)
    return {"tests": len(names), "per_column": len(p.per_column),
            "columns": plan.tried_columns(sizes, schema.get("quasi_identifiers") or ()),
            "query_mcells": query / 1e6, "release_mcells": release / 1e6,
            "plan_seconds": p.seconds, "plan_mb": p.memory_mb}


def measured_run(preset: str | None, n: int, max_records: int, wall: float, mb: float) -> dict:
    """A run of ``preset`` on ``make_files(n)``'s tables measured before (its wall seconds and peak
    MB), costed as :func:`cost_inputs` costs it: the preset's tests, none per column (the metadata
    declares a sensitive column), 11 columns that are not quasi-identifiers."""
    from bench_preset import META
    from synthguard.registry import default_metrics
    from synthguard.run import plan
    from synthguard.run.config import PRESETS

    tests = len(PRESETS[preset]) if preset else len(default_metrics())
    real = [min(n, max_records or n), min(max(n // 4, 1), max_records or n)]
    query, release = plan.query_release_cells({"original": (real[0], 15), "control": (real[1], 15),
                                               "synthetic": (n, 15)})
    name = f"{preset or 'default'} n={n:,}" + (f" --max-records {max_records:,}" if max_records else "")
    return {"name": name, "fitted": True, "when": "before", "wall": wall, "cpu": float("nan"), "mb": mb,
            "load": float("nan"), "tests": tests, "per_column": 0,
            "columns": 15 - len(META["quasi_identifiers"]), "query_mcells": query / 1e6,
            "release_mcells": release / 1e6}


def wide_files(rows: int, columns: int, data_dir: Path) -> dict:
    """nhefs's first ``rows`` rows (training) and the next ``rows`` (release), widened to
    ``columns`` columns by repeating its columns under new names, as CSV; no control, no metadata."""
    import pandas as pd

    shared = Path(os.environ.get("SYNTHGUARD_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
    out = {role: data_dir / f"wide_{rows}_{columns}_{role}.csv" for role in ("original", "synthetic")}
    if not all(p.exists() for p in out.values()):
        df = pd.read_csv(shared / "nhefs.csv").iloc[:2 * rows]
        copies = -(-columns // df.shape[1])
        wide = pd.concat([df.add_suffix(f"_{i}") for i in range(copies)], axis=1).iloc[:, :columns].fillna(0)
        data_dir.mkdir(parents=True, exist_ok=True)
        wide.iloc[:rows].to_csv(out["original"], index=False)
        wide.iloc[rows:].to_csv(out["synthetic"], index=False)
    return out


#: the exponents tried: the time's query and release cells and the memory's query cells (the
#: memory's release power is 1: the release is held whole; a free power fits the runs of
#: docs/scaling.md a little better and says 3.5 GB for the 10M sampled run that peaked at 11 GB);
#: the columns of a per-column test (the cells' grid stops at 1.5: docs/scaling.md says why)
CELL_GRID = np.round(np.arange(0.0, 1.501, 0.05), 2)
MB_QUERY_GRID = np.round(np.arange(0.0, 1.001, 0.05), 2)
COLUMN_GRID = np.round(np.arange(1.0, 2.501, 0.05), 2)
TIME_CONSTANTS = ("FIXED_SECONDS", "METRIC_SECONDS", "SECONDS_PER_QUERY_MCELL", "SECONDS_PER_RELEASE_MCELL")
MB_CONSTANTS = ("FIXED_MB", "MB_PER_QUERY_MCELL", "MB_PER_RELEASE_MCELL")


def _cells(runs: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    return (np.array([r["query_mcells"] for r in runs]), np.array([r["release_mcells"] for r in runs]))


def time_model(runs: list[dict], p: float, q: float, g: float) -> np.ndarray:
    """The columns :data:`TIME_CONSTANTS` multiply: 1, the tests (a per-column test counting
    ``(columns / 15) ** g``), the tests x query ** p, the tests x release ** q."""
    from synthguard.run.plan import CALIBRATION_COLUMNS

    t = np.array([r["tests"] for r in runs], float)
    pc = np.array([r["per_column"] for r in runs], float)
    w = np.maximum(1.0, np.array([r["columns"] for r in runs], float) / CALIBRATION_COLUMNS) ** g
    tests = t + pc * (w - 1.0)
    query, release = _cells(runs)
    return np.column_stack([np.ones_like(t), tests, tests * query ** p, tests * release ** q])


def memory_model(runs: list[dict], e: float, f: float) -> np.ndarray:
    """The columns :data:`MB_CONSTANTS` multiply: 1, query ** e, release ** f."""
    query, release = _cells(runs)
    return np.column_stack([np.ones_like(query), query ** e, release ** f])


def fit(runs: list[dict], key: str, model, grids) -> tuple[tuple, np.ndarray, np.ndarray]:
    """For each exponent tuple of ``grids``, non-negative least squares of the ratios of fitted to
    measured ``key`` (so that a 4 s run weighs as much as a 150 s one); the tuple with the smallest
    worst ratio: ``(exponents, linear constants, fitted)``."""
    y = np.array([r[key] for r in runs])
    best = None
    for exps in itertools.product(*grids):
        a = model(runs, *exps)
        coef, _ = nnls(a / y[:, None], np.ones_like(y))
        fitted = a @ coef
        if (fitted <= 0).any():
            continue
        worst = float(np.abs(np.log(y / fitted)).max())
        if best is None or worst < best[0]:
            best = (worst, exps, coef, fitted)
    assert best is not None
    return best[1], best[2], best[3]


def main() -> None:
    from bench_preset import make_files
    from synthguard.run import plan

    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="2000,10000", help="fitted, both presets")
    ap.add_argument("--large", default="", help="fitted, the privacy preset only (e.g. 200000; "
                    "ROWS:MAX_RECORDS for a sampled run, e.g. 1000000:200000)")
    ap.add_argument("--wide", default="", help="fitted, the default preset on nhefs widened: "
                    "ROWS:COLUMNS[,...] (e.g. 700:401: 700 training and 700 release rows)")
    ap.add_argument("--check", default="5000", help="not fitted, both presets")
    ap.add_argument("--load", type=Path, action="append", default=[],
                    help="runs saved before (--save), added to these; a later run of the same name replaces one")
    ap.add_argument("--measured", default="", help="runs measured before on make_files' tables, fitted (a "
                    "run of the same name measured here replaces one): PRESET:ROWS:MAX_RECORDS:SECONDS:PEAK_MB"
                    "[,...] (MAX_RECORDS 0: not sampled), e.g. privacy:1000000:0:158.0:4406")
    ap.add_argument("--save", type=Path, help="write every run (measured and loaded) to this JSON file")
    ap.add_argument("--fit-on", choices=("wall", "cpu"), default="wall",
                    help="the time fitted: wall seconds (a quiet machine), or the process's CPU "
                         "seconds (user + system) as a stand-in for a quiet machine's wall time when "
                         "others share it (a run is one thread but for short spells)")
    ap.add_argument("--data-dir", type=Path, default=Path("/tmp/synthguard-plan-calibration"))
    args = ap.parse_args()
    runs: dict[str, dict] = {}
    for path in args.load:
        runs.update({r["name"]: {"cpu": float("nan"), **r} for r in json.loads(path.read_text())})
    for item in filter(None, args.measured.split(",")):
        preset, n, m, wall, mb = item.split(":")
        r = measured_run(None if preset == "default" else preset, int(n), int(m), float(wall), float(mb))
        runs[r["name"]] = r
    todo = [(f"{p or 'default'} n={n:,}", n, p, 0, True, None) for n in map(int, filter(None, args.sizes.split(",")))
            for p in (None, "privacy")]
    for item in filter(None, args.large.split(",")):
        n, m = (int(v) for v in (item.split(":") + ["0"])[:2])
        todo.append((f"privacy n={n:,}" + (f" --max-records {m:,}" if m else ""), n, "privacy", m, True, None))
    for item in filter(None, args.wide.split(",")):
        n, c = (int(v) for v in item.split(":"))
        todo.append((f"default nhefs {n:,}+{n:,} x {c}", n, None, 0, True, c))
    todo += [(f"{p or 'default'} n={n:,}", n, p, 0, False, None) for n in map(int, filter(None, args.check.split(",")))
             for p in (None, "privacy")]
    for name, n, preset, m, fitted, columns in todo:
        if columns:
            files = wide_files(n, columns, args.data_dir)
        else:
            files = dict(make_files(n, args.data_dir), metadata=args.data_dir / "metadata.json")
        r = one_run(files, preset, args.data_dir / "report.json", m)
        runs[name] = {"name": name, "fitted": fitted, "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                      **r}
        print(f"{name:>42}: {r['tests']} tests ({r['per_column']} per column over {r['columns']}), "
              f"{r['query_mcells']:.3f} + {r['release_mcells']:.3f} Mcells: {r['wall']:7.1f} s, "
              f"{r['cpu']:7.1f} CPU s, {r['mb']:6.0f} MB (load {r['load']:.2f})", flush=True)
    if args.save:
        args.save.write_text(json.dumps(list(runs.values()), indent=1))
    fitted = [r for r in runs.values() if r["fitted"]]
    key = args.fit_on
    wide = any(r["per_column"] and r["columns"] > plan.CALIBRATION_COLUMNS for r in fitted)
    (p, q, g), tc, _ = fit(fitted, key, time_model, (CELL_GRID, CELL_GRID, COLUMN_GRID if wide else [1.0]))
    (e, f), mc, _ = fit(fitted, "mb", memory_model, (MB_QUERY_GRID, [1.0]))
    constants = {**dict(zip(TIME_CONSTANTS, tc, strict=True)), "QUERY_EXPONENT": p, "RELEASE_EXPONENT": q,
                 "COLUMN_EXPONENT": g, **dict(zip(MB_CONSTANTS, mc, strict=True)),
                 "MB_QUERY_EXPONENT": e, "MB_RELEASE_EXPONENT": f}
    print("fit (" + key + "): " + " ".join(f"{k}={v:.4g}" for k, v in constants.items()))
    every = list(runs.values())
    seconds = time_model(every, p, q, g) @ tc
    mb = memory_model(every, e, f) @ mc
    print(f"| run | tests | query + release Mcells | load | wall | CPU | refit | {key} / refit | plan now | "
          f"{key} / plan now | peak RSS | refit | ratio |")
    for r, s, m in zip(every, seconds, mb, strict=True):
        now = plan.estimate(r["query_mcells"] * 1e6, r["release_mcells"] * 1e6, r["columns"], r["tests"],
                            r["per_column"])[0] or float("nan")
        print(f"| {r['name']}{'' if r['fitted'] else ' (check)'} | {r['tests']} | {r['query_mcells']:.3f} + "
              f"{r['release_mcells']:.3f} | {r['load']:.2f} | {r['wall']:.1f} s | {r['cpu']:.1f} s | {s:.1f} s "
              f"| {r[key] / s:.2f} | {now:.1f} s | {r[key] / now:.2f} | {r['mb']:,.0f} MB | {m:,.0f} MB "
              f"| {r['mb'] / m:.2f} |")
    ratios = np.array([r[key] for r in every]) / seconds
    mratios = np.array([r["mb"] for r in every]) / mb
    print(f"time / refit {ratios.min():.2f} .. {ratios.max():.2f} (x/÷ {np.exp(np.abs(np.log(ratios)).max()):.2f}); "
          f"memory / refit {mratios.min():.2f} .. {mratios.max():.2f}")
    print(f"load now: {_load():.2f}")


if __name__ == "__main__":
    main()
