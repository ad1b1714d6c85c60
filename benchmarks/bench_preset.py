"""The ``--preset privacy`` evaluation, whole process: wall, CPU, peak RSS and per-metric seconds.

Data (``_gen.py``): original = ``make_table(n, 0)``, synthetic = ``make_table(n, 1)`` (an independent
sample of the same census-like population), control = ``make_table(n // 4, 2)``; 15 mixed columns.
The tables are written once to Parquet under ``--data-dir`` (reused by later runs); the timed part is
one fresh ``python -m synthguard evaluate --preset privacy`` process (imports, loading, validation,
encoding, every metric, the JSON report), so the figures are what a user waits for.

Usage::

    python benchmarks/bench_preset.py --sizes 100000            # ~1 min
    python benchmarks/bench_preset.py --sizes 100000,1000000    # the issue-15 figures
    python benchmarks/bench_preset.py --sizes 1000000 --extra "--jobs 1"   # any evaluate option
    python benchmarks/bench_preset.py --sizes 10000000 --plant --extra "--max-records 200000"

``--plant`` (issue 31's large-run check): the release's first 1 % of rows are replaced by verbatim
copies of distinct training rows and the next 1 % by copies of other training rows with one cell
changed (a seeded column per row, its value taken from another training row where it differs).
The script then prints what the issue asks of the report: the four criteria assessed, presence
high, and how many of the planted exact copies the records export lists.

The machine's load (``/proc/loadavg``) is printed before and after: on a shared machine CPU seconds
are the steadier figure. Not run by CI.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

META = {"quasi_identifiers": ["age", "sex", "region", "education"], "sensitive": ["employment"]}


def _load() -> str:
    try:
        return Path("/proc/loadavg").read_text().split(" ", 3)[:3].__str__()
    except OSError:  # pragma: no cover - not Linux
        return "?"


def planted(original: pd.DataFrame, release: pd.DataFrame, seed: int = 7) -> tuple[pd.DataFrame, np.ndarray]:
    """``release`` with 1 % verbatim and 1 % one-cell copies of distinct ``original`` rows planted
    in its first rows: ``(release, source training row of each exact copy)``."""
    n = len(release)
    m = max(n // 100, 1)
    rng = np.random.default_rng(seed)
    src = rng.choice(len(original), 2 * m, replace=False)
    out = pd.concat([original.iloc[src], release.iloc[2 * m:]], ignore_index=True)
    rows = np.arange(m, 2 * m)  # one cell changed: a seeded column, the value of another training row
    col = rng.integers(0, out.shape[1], m)
    donor = rng.integers(0, len(original), m)
    for j in np.unique(col):  # loop over columns (15), vectorised over the rows
        at = rows[col == j]
        new = original.iloc[donor[col == j], j].to_numpy().copy()
        same = pd.Series(new).eq(out.iloc[at, j].reset_index(drop=True)).fillna(False).to_numpy()
        other = original.iloc[:, j].dropna().unique()
        if same.any() and len(other) > 1:  # the donor held the same value: the next distinct value
            pos = pd.Index(other).get_indexer(new[same])
            new[same] = other[(pos + 1) % len(other)]
        out.iloc[at, j] = new
    return out, src[:m]


def make_files(n: int, data_dir: Path, plant: bool = False) -> dict[str, Path]:
    """Write (once) original / synthetic / control Parquet files of ``n`` rows (``plant``: the
    release with copies planted, :func:`planted`, and the planted rows' sources beside it)."""
    from _gen import make_table

    syn = "synthetic_planted" if plant else "synthetic"
    out = {"original": data_dir / f"original_{n}.parquet", "synthetic": data_dir / f"{syn}_{n}.parquet",
           "control": data_dir / f"control_{n}.parquet"}
    if all(p.exists() for p in out.values()):
        return out
    data_dir.mkdir(parents=True, exist_ok=True)
    if not out["original"].exists():
        make_table(n, 0).to_parquet(out["original"])
    if not out["synthetic"].exists():
        release = make_table(n, 1)
        if plant:
            release, sources = planted(pd.read_parquet(out["original"]), release)
            np.save(data_dir / f"planted_sources_{n}.npy", sources)
        release.to_parquet(out["synthetic"])
    if not out["control"].exists():
        make_table(max(n // 4, 1), 2).to_parquet(out["control"])
    meta = data_dir / "metadata.json"
    meta.write_text(json.dumps(META))
    return out


def run(n: int, data_dir: Path, extra: str, keep: Path | None,
        preset: str | None = "privacy", env: dict[str, str] | None = None, plant: bool = False) -> dict:
    """One fresh ``python -m synthguard evaluate`` process on the ``n``-row files (``preset``: None
    for the default metrics; ``env``: the child's environment, default this one's); wall, the
    child's CPU seconds and peak RSS, per-metric seconds."""
    files = make_files(n, data_dir, plant)
    report = (keep or data_dir) / f"report_{preset or 'default'}{'_planted' if plant else ''}_{n}.json"
    cmd = [sys.executable, "-m", "synthguard", "evaluate",
           *(["--preset", preset] if preset else []),
           "-o", str(files["original"]), "-s", str(files["synthetic"]), "-c", str(files["control"]),
           "-m", str(data_dir / "metadata.json"), "--json", str(report), "--no-progress",
           *shlex.split(extra)]
    load0 = _load()
    t0 = time.perf_counter()
    err_path = report.with_suffix(".stderr")
    with open(err_path, "w") as err_file:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err_file, env=env)
        _pid, status, ru = os.wait4(proc.pid, 0)  # this child's own CPU and peak RSS
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    usage = (ru.ru_utime + ru.ru_stime, ru.ru_maxrss)
    if proc.returncode != 0:
        raise SystemExit(f"evaluate failed ({proc.returncode}):\n{err_path.read_text()[-3000:]}")
    rep = json.loads(report.read_text())
    per = {name: (e.get("seconds"), e.get("status")) for name, e in rep["metrics"].items()}
    out = {"rows": n, "report": str(report), "wall_s": wall, "cpu_s": usage[0], "peak_mib": usage[1] / 1024,
            "load_before": load0, "load_after": _load(), "metrics": per, "cmd": " ".join(cmd)}
    if plant:
        out["planted"] = planted_check(rep, n)
    return out


def planted_check(rep: dict, n: int) -> dict:
    """What the issue asks of a release with planted copies: each criterion's level (none "not
    assessed"), presence's level, and how many planted exact copies the records export lists."""
    m = max(n // 100, 1)
    levels = {r["risk"]: r["level"] for r in rep["verdict"]["risks"]}
    exact = {int(r["release_row"]) for r in rep["records"] if r.get("family") == "exact"}
    return {"levels": levels, "not_assessed": rep["verdict"].get("not_assessed"),
            "exact_planted": m, "exact_listed": len(exact & set(range(m))),
            "one_cell_planted": m, "one_cell_listed": sum(1 for r in rep["records"] if r.get("family") == "near1"
                                                          and m <= int(r["release_row"]) < 2 * m)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000,1000000", help="comma-separated row counts")
    ap.add_argument("--data-dir", type=Path, default=Path("/tmp/synthguard_bench_preset"))
    ap.add_argument("--extra", default="", help="extra 'synthguard evaluate' options")
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--plant", action="store_true", help="plant 1 %% exact and 1 %% one-cell copies")
    args = ap.parse_args(argv)
    results = []
    for n in (int(s) for s in args.sizes.split(",")):
        r = run(n, args.data_dir, args.extra, None, plant=args.plant)
        results.append(r)
        print(f"\n== privacy preset, {n:,} rows (control {max(n // 4, 1):,}) ==")
        print(f"wall {r['wall_s']:.1f} s   CPU {r['cpu_s']:.1f} s   peak RSS {r['peak_mib']:.0f} MiB   "
              f"load {r['load_before']} -> {r['load_after']}")
        if "planted" in r:
            print(f"planted: {r['planted']}")
        for name, (sec, status) in sorted(r["metrics"].items(), key=lambda kv: -(kv[1][0] or 0)):
            print(f"  {name:32s} {sec if sec is not None else float('nan'):8.2f} s  {status}")
        sys.stdout.flush()
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
