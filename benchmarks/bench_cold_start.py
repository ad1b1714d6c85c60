"""Cold start: wall and CPU seconds of fresh processes that import synthguard or start its CLI.

Each command runs ``--repeat`` times (after one untimed run that warms the OS file cache); the
minimum and median wall seconds and the median CPU seconds (user + system of the child) are
printed, with the load average, since the machine may be shared. ``--importtime`` also prints the
slowest imports of each command (``python -X importtime``).

Usage::

    python benchmarks/bench_cold_start.py                 # 7 runs of each command
    python benchmarks/bench_cold_start.py --repeat 15 --importtime

Targets (issue 15): ``import synthguard``, ``synthguard --help`` and ``synthguard metrics`` each under
0.4 s. Not run by CI.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

PY = sys.executable
COMMANDS = {
    "python (bare interpreter)": [PY, "-c", "pass"],
    "import synthguard": [PY, "-c", "import synthguard"],
    "synthguard --help": [PY, "-m", "synthguard", "--help"],
    "synthguard metrics": [PY, "-m", "synthguard", "metrics"],
    "synthguard metrics --json": [PY, "-m", "synthguard", "metrics", "--json"],
    "import synthguard; synthguard.evaluate (pandas, runner)": [
        PY, "-c", "import synthguard; synthguard.evaluate"],
}


def _run(cmd: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _slowest_imports(cmd: list[str], top: int = 8) -> list[tuple[int, str]]:
    proc = subprocess.run([cmd[0], "-X", "importtime", *cmd[1:]], capture_output=True, text=True)
    rows = []
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            _self, cumulative, name = line.split(":", 1)[1].split("|")
            if cumulative.strip().isdigit():
                rows.append((int(cumulative), name.rstrip()))
    return sorted(rows, reverse=True)[:top]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--importtime", action="store_true", help="also list the slowest imports")
    args = ap.parse_args(argv)
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else "?"
    print(f"python {sys.version.split()[0]}; load average before: {load}")
    print(f"{'command':58s} {'min wall s':>10} {'median wall s':>13} {'median CPU s':>12}")
    for label, cmd in COMMANDS.items():
        _run(cmd)  # warm the file cache
        runs = [_run(cmd) for _ in range(args.repeat)]
        walls = [w for w, _ in runs]
        cpus = [c for _, c in runs]
        print(f"{label:58s} {min(walls):10.3f} {statistics.median(walls):13.3f} "
              f"{statistics.median(cpus):12.3f}", flush=True)
        if args.importtime:
            for us, name in _slowest_imports(cmd):
                print(f"      {us / 1e6:7.3f} s cumulative  {name.strip()}")
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else "?"
    print(f"load average after: {load}")


if __name__ == "__main__":
    main()
