"""Calibration of the risk levels on real data: false alarms on fresh samples, power on leaks.

Every public person-level table in ``../shared/data`` is split with a seed into original (training),
control and fresh (see :mod:`synthguard.calibration`). Releases:

- ``fresh``: the fresh part itself, a perfect generator (the null: every alarm is a false alarm);
- ``copies@s``: the fresh part with ``s`` of the training records copied in (exact copies);
- ``perturbed@s``: the same with one cell of every copy changed;
- ``marginals`` / ``copula``: the built-in generators fitted on the original.

The script prints, per release kind, how often the verdict and each privacy metric read high or
medium, and the verdict's detection limit. Run::

    python benchmarks/calibration.py                       # full table (5 datasets x 6 seeds)
    python benchmarks/calibration.py --seeds 3 --datasets nhefs acs12 --kinds fresh copies@0.05
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
# tabular person-level tables; free-text and record-number columns are dropped (text has its own suite)
DATASETS = {
    "acs12": {"drop": []},
    "anes96": {"drop": []},
    "diabetes_raw": {"drop": []},
    "nhefs": {"drop": []},
    "hhs_breaches": {"drop": ["Summary", "Number", "Name_of_Covered_Entity"]},
}
SHARES = (0.005, 0.01, 0.02, 0.05, 0.1, 0.3)
DEFAULT_KINDS = ("fresh",) + tuple(f"copies@{s:g}" for s in SHARES) + ("perturbed@0.05", "marginals",
                                                                         "copula")


def load(name: str) -> pd.DataFrame:
    df = pd.read_csv(DATA / f"{name}.csv")
    return df.drop(columns=DATASETS[name]["drop"])


def release(kind: str, parts: dict[str, pd.DataFrame], seed: int) -> pd.DataFrame:
    """``fresh``, ``marginals``, ``copula``, or ``[<base>+]copies@s`` / ``[<base>+]perturbed@s``
    (base ``fresh`` by default; a generated base has as many rows as the original)."""
    from synthguard.calibration import generated_release, leaky_release

    base_name, _, leak = kind.rpartition("+") if "+" in kind else ("fresh", "", kind)
    if "@" not in leak:
        base_name, leak = leak, ""
    if base_name == "fresh":
        base = parts["fresh"]
    elif base_name in ("marginals", "copula"):
        n = len(parts["fresh"]) if len(parts["fresh"]) else len(parts["original"])
        base = generated_release(parts["original"], n, base_name, seed)
    else:
        raise SystemExit(f"unknown release kind {kind!r}")
    if not leak:
        return base
    what, share = leak.split("@")
    return leaky_release(base, parts["original"], float(share), seed, perturb=(what == "perturbed"))


def one_run(args: tuple) -> dict:
    import synthguard
    from synthguard.calibration import calibration_split

    dataset, seed, kind, preset, metrics, fractions = args
    parts = calibration_split(load(dataset), seed, fractions)
    rel = release(kind, parts, seed)
    t0 = time.perf_counter()
    rep = synthguard.evaluate(parts["original"], rel, control=parts["control"], preset=preset,
                              metrics=metrics, seed=seed)
    v = rep.verdict
    levels = {m: rep.result(m).risk_level for m in rep.metrics if rep.result(m) is not None}
    limit = v.detection_limit["value"] if v.detection_limit else None
    return {"dataset": dataset, "seed": seed, "kind": kind, "verdict": v.level, "levels": levels,
            "drivers": [d["metric"] for d in v.drivers], "detection_limit": limit,
            "n_original": len(parts["original"]), "seconds": time.perf_counter() - t0}


def run(datasets: list[str], seeds: int, kinds: list[str], preset: str | None,
        metrics: list[str] | None, jobs: int, fractions: tuple[float, ...] = (0.4, 0.3, 0.3)
        ) -> list[dict]:
    tasks = [(d, s, k, preset, metrics, fractions) for d in datasets for s in range(seeds)
             for k in kinds]
    if jobs == 1:
        return [one_run(t) for t in tasks]
    with ProcessPoolExecutor(jobs) as pool:
        return list(pool.map(one_run, tasks))


def table(rows: list[dict]) -> str:
    by_kind: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_kind[r["kind"]].append(r)
    metrics = sorted({m for r in rows for m in r["levels"]})
    out = ["| release | runs | verdict high | verdict medium | verdict low | inconclusive | "
           "median detection limit |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for kind, rs in by_kind.items():
        c = defaultdict(int)
        for r in rs:
            c[r["verdict"]] += 1
        lim = sorted(r["detection_limit"] for r in rs if r["detection_limit"] is not None)
        med = f"{100 * lim[len(lim) // 2]:.2g} %" if lim else "-"
        out.append(f"| {kind} | {len(rs)} | {c['high']} | {c['medium']} | {c['low']} | "
                   f"{c['inconclusive']} | {med} |")
    out += ["", "Alarms (high or medium) per metric:", "",
            "| metric | " + " | ".join(by_kind) + " |", "| --- |" + " --- |" * len(by_kind)]
    for m in metrics:
        cells = []
        for rs in by_kind.values():
            n = sum(1 for r in rs if m in r["levels"])
            a = sum(1 for r in rs if r["levels"].get(m) in ("high", "medium"))
            cells.append(f"{a}/{n}" if n else "-")
        out.append(f"| {m} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS))
    ap.add_argument("--seeds", type=int, default=6)
    ap.add_argument("--kinds", nargs="+", default=list(DEFAULT_KINDS))
    ap.add_argument("--preset", default="privacy")
    ap.add_argument("--metrics", nargs="+", default=None, help="instead of --preset")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--fractions", nargs=3, type=float, default=(0.4, 0.3, 0.3),
                    help="original / control / fresh shares of each table")
    ap.add_argument("--json", type=Path, default=None, help="also write every run here")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows = run(a.datasets, a.seeds, a.kinds, None if a.metrics else a.preset, a.metrics, a.jobs,
               tuple(a.fractions))
    print(table(rows))
    print(f"\n{len(rows)} runs in {time.perf_counter() - t0:.0f} s wall")
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
