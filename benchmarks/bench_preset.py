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

sys.path.insert(0, str(Path(__file__).resolve().parent))

META = {"quasi_identifiers": ["age", "sex", "region", "education"], "sensitive": ["employment"]}


def _load() -> str:
    try:
        return Path("/proc/loadavg").read_text().split(" ", 3)[:3].__str__()
    except OSError:  # pragma: no cover - not Linux
        return "?"


def make_files(n: int, data_dir: Path) -> dict[str, Path]:
    """Write (once) original / synthetic / control Parquet files of ``n`` rows."""
    from _gen import make_table

    out = {role: data_dir / f"{role}_{n}.parquet" for role in ("original", "synthetic", "control")}
    if all(p.exists() for p in out.values()):
        return out
    data_dir.mkdir(parents=True, exist_ok=True)
    make_table(n, 0).to_parquet(out["original"])
    make_table(n, 1).to_parquet(out["synthetic"])
    make_table(max(n // 4, 1), 2).to_parquet(out["control"])
    meta = data_dir / "metadata.json"
    meta.write_text(json.dumps(META))
    return out


def run(n: int, data_dir: Path, extra: str, keep: Path | None,
        preset: str | None = "privacy", env: dict[str, str] | None = None) -> dict:
    """One fresh ``python -m synthguard evaluate`` process on the ``n``-row files (``preset``: None
    for the default metrics; ``env``: the child's environment, default this one's); wall, the
    child's CPU seconds and peak RSS, per-metric seconds."""
    files = make_files(n, data_dir)
    report = (keep or data_dir) / f"report_{preset or 'default'}_{n}.json"
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
    return {"rows": n, "report": str(report), "wall_s": wall, "cpu_s": usage[0], "peak_mib": usage[1] / 1024,
            "load_before": load0, "load_after": _load(), "metrics": per, "cmd": " ".join(cmd)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000,1000000", help="comma-separated row counts")
    ap.add_argument("--data-dir", type=Path, default=Path("/tmp/synthguard_bench_preset"))
    ap.add_argument("--extra", default="", help="extra 'synthguard evaluate' options")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args(argv)
    results = []
    for n in (int(s) for s in args.sizes.split(",")):
        r = run(n, args.data_dir, args.extra, None)
        results.append(r)
        print(f"\n== privacy preset, {n:,} rows (control {max(n // 4, 1):,}) ==")
        print(f"wall {r['wall_s']:.1f} s   CPU {r['cpu_s']:.1f} s   peak RSS {r['peak_mib']:.0f} MiB   "
              f"load {r['load_before']} -> {r['load_after']}")
        for name, (sec, status) in sorted(r["metrics"].items(), key=lambda kv: -(kv[1][0] or 0)):
            print(f"  {name:32s} {sec if sec is not None else float('nan'):8.2f} s  {status}")
        sys.stdout.flush()
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
