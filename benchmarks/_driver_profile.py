"""``python benchmarks/_driver_profile.py LOG evaluate ...``: the ``synthguard`` command with, after
each test of a cluster run, the driver's RSS, its traced peak during the test and the 12 source
lines holding the most traced memory (``tracemalloc``, one frame), appended to ``LOG`` as JSON lines.
For :mod:`bench_cluster_preset` (``--driver-profile``). Not run by CI."""

from __future__ import annotations

import json
import sys
import time
import tracemalloc


def main() -> None:
    log, argv = sys.argv[1], sys.argv[2:]
    import psutil

    from synthguard.cli import program
    from synthguard.run import cluster

    proc = psutil.Process()
    tracemalloc.start(1)
    execute = cluster.execute

    def traced(spec, ctx, params, **kw):  # noqa: ANN001, ANN202
        tracemalloc.reset_peak()
        t0 = time.perf_counter()
        entry = execute(spec, ctx, params, **kw)
        cur, peak = tracemalloc.get_traced_memory()
        top = tracemalloc.take_snapshot().statistics("lineno")[:12]
        with open(log, "a") as f:
            f.write(json.dumps({"test": kw.get("name"), "status": entry.status, "t0": round(time.time() - (
                                time.perf_counter() - t0), 1), "t1": round(time.time(), 1),
                                "seconds": round(time.perf_counter() - t0, 1),
                                "rss_mib": round(proc.memory_info().rss / 2**20),
                                "traced_mib": round(cur / 2**20), "traced_peak_mib": round(peak / 2**20),
                                "top": [[str(s.traceback[0]), round(s.size / 2**20, 1)] for s in top]})
                    + "\n")
        return entry

    cluster.execute = traced
    sys.argv = ["synthguard", *argv]
    program()


if __name__ == "__main__":
    main()
