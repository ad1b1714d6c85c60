"""The typing decision (``prepare_tables``: load, type, validate) on every table of ../shared/data
and on the anonymeter-trio files, for one or more source trees side by side.

Each real table is shuffled (seed 0) and split into an original (half the rows), a control (a
quarter) and a release (30 % of it copied from the original, the rest the last quarter), written
as CSV; ``prepare_tables`` reads the three files. Each (tree, table) runs in a fresh process: one
untimed call (imports, caches), then the best of ``--repeat`` timed calls (wall and CPU seconds).

Usage::

    python benchmarks/bench_prepare.py                              # this checkout
    python benchmarks/bench_prepare.py --src /tmp/before/src --src src   # before / after
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("SYNTHGUARD_SHARED_DATA") or REPO.parent / "shared" / "data")

CHILD = """
import json, sys, time
from synthguard.data import prepare_tables
d, repeat = sys.argv[1], int(sys.argv[2])
args = [f"{d}/original.csv", f"{d}/synthetic.csv", f"{d}/control.csv"]
prepare_tables(*args, canonical_columns=True)
best = None
for _ in range(repeat):
    t, c = time.perf_counter(), time.process_time()
    prepare_tables(*args, canonical_columns=True)
    run = (time.perf_counter() - t, time.process_time() - c)
    best = run if best is None or run[1] < best[1] else best
print(json.dumps({"wall": best[0], "cpu": best[1]}))
"""


def split_files(csv: Path, out: Path) -> Path:
    """original / synthetic / control CSVs of one shared table (see the module docstring)."""
    d = out / csv.stem
    if (d / "control.csv").exists():
        return d
    d.mkdir(parents=True, exist_ok=True)
    df = pd.read_csv(csv).sample(frac=1, random_state=0).reset_index(drop=True)
    n = len(df)
    o, c, rest = df.iloc[: n // 2], df.iloc[n // 2: 3 * n // 4], df.iloc[3 * n // 4:]
    k = int(0.3 * len(rest))
    s = pd.concat([o.sample(k, random_state=1), rest.iloc[: len(rest) - k]])
    for name, frame in (("original", o), ("synthetic", s), ("control", c)):
        frame.to_csv(d / f"{name}.csv", index=False)
    return d


def trio_files(out: Path, n: int = 40_000) -> Path:
    """The anonymeter-trio tables of ``bench_anonymeter.py --whole-process``."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_anonymeter import make_data

    d = out / f"trio_{n}"
    if not (d / "control.csv").exists():
        d.mkdir(parents=True, exist_ok=True)
        for name, frame in zip(("original", "synthetic", "control"), make_data(n), strict=True):
            frame.to_csv(d / f"{name}.csv", index=False)
    return d


def time_one(src: str, folder: Path, repeat: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(Path(src).resolve()))
    res = subprocess.run([sys.executable, "-c", CHILD, str(folder), str(repeat)], env=env,
                         capture_output=True, text=True, check=False)
    if res.returncode != 0:
        return {"error": (res.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", action="append", default=None, help="a source tree (repeatable)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--work", default="/tmp/bench_prepare")
    args = ap.parse_args()
    srcs = args.src or [str(REPO / "src")]
    work = Path(args.work)
    folders = [split_files(p, work) for p in sorted(SHARED.glob("*.csv"))] + [trio_files(work)]
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else "?"
    print(f"prepare_tables, best of {args.repeat} by CPU; {sys.executable}; load average {load}")
    head = "".join(f" | {Path(s).parent.name or s} wall s | CPU s" for s in srcs)
    print(f"| table | rows (o/s/c) | cols{head} |" + (" CPU ratio |" if len(srcs) == 2 else ""))
    print("|---|---:|---:|" + "---:|---:|" * len(srcs) + ("---:|" if len(srcs) == 2 else ""))
    for d in folders:
        rows = "/".join(str(sum(1 for _ in open(d / f"{r}.csv", "rb")) - 1)
                        for r in ("original", "synthetic", "control"))
        cols = len(pd.read_csv(d / "original.csv", nrows=1).columns)
        runs = [time_one(s, d, args.repeat) for s in srcs]
        cells = "".join(f" | {r['wall']:.3f} | {r['cpu']:.3f}" if "error" not in r else f" | error | {r['error']}"
                        for r in runs)
        ratio = ""
        if len(runs) == 2 and all("cpu" in r for r in runs):
            ratio = f" {runs[0]['cpu'] / runs[1]['cpu']:.1f}x |"
        print(f"| {d.name} | {rows} | {cols}{cells} |{ratio}", flush=True)


if __name__ == "__main__":
    main()
