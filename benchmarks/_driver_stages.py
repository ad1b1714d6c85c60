"""``python benchmarks/_driver_stages.py LOG evaluate ...``: the ``synthguard`` command of a cluster
run with, after each stage (``load_tables``, ``first_positions``, ``backend_matches``,
``full_table_copies``, ``without_rows``, ``sample_on_cluster``) and each test, one JSON line in
``LOG``: the stage's wall seconds, the seconds since the start, the CPU seconds so far of the
driver and of every process whose command line holds ``SG_CLUSTER_TAG`` (default ``sgcl_``: the
scheduler and workers :mod:`bench_cluster_preset` starts, with their children) and the load
average. ``SG_CPROFILE=1`` also writes ``LOG.prof`` (cProfile of the driver). For
:mod:`bench_cluster_preset` (``SG_DRIVER_WRAPPER=benchmarks/_driver_stages.py ... --driver-profile``).
Not run by CI."""

from __future__ import annotations

import cProfile
import json
import os
import sys
import time
from typing import Any

import psutil

T0 = time.time()
TAG = os.environ.get("SG_CLUSTER_TAG", "sgcl_")


def cluster_cpu() -> float:
    """CPU seconds (user + system) of the cluster's processes and their children."""
    seen: dict[int, float] = {}
    for p in psutil.process_iter(["cmdline"]):
        try:
            if p.pid != os.getpid() and any(TAG in a for a in (p.info["cmdline"] or [])):
                for q in [p, *p.children(recursive=True)]:
                    t = q.cpu_times()
                    seen[q.pid] = t.user + t.system
        except psutil.Error:
            continue
    return round(sum(seen.values()), 1)


def main() -> None:
    log, argv = sys.argv[1], sys.argv[2:]
    from synthguard.cli import program
    from synthguard.distributed import _backend, _tables
    from synthguard.metrics.privacy import _copies
    from synthguard.run import cluster

    def write(rec: dict[str, Any]) -> None:
        rec.update(t=round(time.time() - T0, 1), cluster_cpu=cluster_cpu(),
                   driver_cpu=round(time.process_time(), 1), load=[round(x, 1) for x in os.getloadavg()])
        with open(log, "a") as f:
            f.write(json.dumps(rec) + "\n")

    execute = cluster.execute

    def traced(spec, ctx, params, **kw):  # noqa: ANN001, ANN202
        t0 = time.perf_counter()
        entry = execute(spec, ctx, params, **kw)
        write({"test": kw.get("name"), "wall": round(time.perf_counter() - t0, 1)})
        return entry

    def timed(module: Any, name: str) -> None:
        inner = getattr(module, name)

        def stage(*a: Any, **k: Any) -> Any:
            t0 = time.perf_counter()
            out = inner(*a, **k)
            write({"stage": name, "wall": round(time.perf_counter() - t0, 1)})
            return out

        setattr(module, name, stage)

    cluster.execute = traced
    for module, name in ((cluster, "sample_on_cluster"), (cluster, "full_table_copies"),
                         (_tables, "load_tables"), (_tables, "without_rows"),
                         (_backend, "first_positions"), (_copies, "backend_matches")):
        timed(module, name)
    write({"stage": "start"})
    sys.argv = ["synthguard", *argv]
    prof = cProfile.Profile() if os.environ.get("SG_CPROFILE") else None
    if prof:
        prof.enable()
    try:
        program()
    finally:
        if prof:
            prof.disable()
            prof.dump_stats(log + ".prof")
        write({"stage": "end"})


if __name__ == "__main__":
    main()
