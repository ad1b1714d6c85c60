"""A default evaluation (no preset) of 2,000 rows x 15 columns, whole process (issue #31).

Data as in ``bench_preset.py`` (``_gen.py``): original = ``make_table(n, 0)``, synthetic =
``make_table(n, 1)``, control = ``make_table(n // 4, 2)``, written once to Parquet with the metadata
JSON (quasi-identifiers age, sex, region, education; sensitive employment). The timed part is one
fresh ``python -m synthguard evaluate`` process with the default metrics (imports, loading,
validation, encoding, every metric, the verdict, the JSON report): what a user waits for.

Printed per run: wall, CPU (user + system of the child, all threads), peak RSS, the load average
before and after (``/proc/loadavg``), and the slowest metrics' own seconds. ``--repeat`` runs the
process several times (the first run also warms the OS file cache and numba's kernel cache).
Byte-code: with ``PYTHONDONTWRITEBYTECODE`` set (as on the project's development machine) every
process compiles synthguard's ~100 modules from source (~0.6-0.8 s). By default the child runs as an
installed package does, its byte-code cached under ``DATA_DIR/pycache`` (``PYTHONPYCACHEPREFIX``;
nothing is written beside the sources); ``--no-pycache`` keeps this environment as it is.
``--normalised`` writes the last report with its wall-clock fields normalised as
``json_identity.py`` does, so two revisions' reports can be compared byte for byte (``cmp``).

Usage::

    python benchmarks/bench_default.py                          # 2,000 rows, 3 runs
    python benchmarks/bench_default.py --rows 2000 --repeat 5 --normalised /tmp/a.json
    python benchmarks/bench_default.py --extra "--jobs 1"       # any evaluate option

Figures (issue #31 asks for under 5 s wall on a quiet 2-core machine): see ``README.md``,
"bench_default.py". Not run by CI.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_preset import run  # noqa: E402  (the one whole-process runner)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--top", type=int, default=12, help="how many metrics to list")
    ap.add_argument("--data-dir", type=Path, default=Path("/tmp/synthguard_bench_default"))
    ap.add_argument("--extra", default="", help="extra 'synthguard evaluate' options")
    ap.add_argument("--normalised", type=Path, help="write the last report here, normalised")
    ap.add_argument("--no-pycache", dest="pycache", action="store_false",
                    help="keep this environment's byte-code setting (default: cache it, as installed)")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args(argv)
    env = None
    if args.pycache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str((args.data_dir / "pycache").resolve())
    results = []
    print(f"byte-code cached: {'yes, ' + env['PYTHONPYCACHEPREFIX'] if env else 'as this environment'}")
    print(f"== default metrics, {args.rows:,} rows (control {max(args.rows // 4, 1):,}) ==")
    for i in range(args.repeat):
        r = run(args.rows, args.data_dir, args.extra, None, preset=None, env=env)
        results.append(r)
        print(f"run {i + 1}: wall {r['wall_s']:.2f} s   CPU {r['cpu_s']:.2f} s   "
              f"peak RSS {r['peak_mib']:.0f} MiB   load {r['load_before']} -> {r['load_after']}",
              flush=True)
    walls = [r["wall_s"] for r in results]
    cpus = [r["cpu_s"] for r in results]
    print(f"wall min {min(walls):.2f} / median {statistics.median(walls):.2f} s;   "
          f"CPU min {min(cpus):.2f} / median {statistics.median(cpus):.2f} s")
    last = results[-1]
    print(f"slowest metrics (last run, {len(last['metrics'])} metrics):")
    ranked = sorted(last["metrics"].items(), key=lambda kv: -(kv[1][0] or 0))
    for name, (sec, status) in ranked[: args.top]:
        print(f"  {name:36s} {sec if sec is not None else float('nan'):7.2f} s  {status}")
    total = sum(sec or 0 for sec, _ in last["metrics"].values())
    print(f"  {'(sum of all metrics)':36s} {total:7.2f} s")
    if args.normalised:
        from json_identity import dump

        args.normalised.write_text(dump(json.loads(Path(last["report"]).read_text())))
        print(f"normalised report: {args.normalised}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
