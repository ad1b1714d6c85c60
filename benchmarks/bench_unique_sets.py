"""The near-copy tests' identifiable shares alone (``DaskBackend.unique_sets`` on the leave-one-out
and leave-two-out column sets of the pooled training and control rows) on a cluster of capped
worker processes: wall, CPU seconds of the workers, per-worker and driver peak RSS, and the counts'
digest (the same digest = the same counts).

Data: the planted tables of :mod:`bench_cluster_preset` (``bench_preset.make_files``), read as
folders of ``--partition-rows``-row Parquet files. Cluster: :func:`bench_cluster_preset.start_cluster`
(a ``dask scheduler`` and ``--workers`` ``dask worker`` processes with ``--memory-limit``), RSS
sampled every 0.2 s (:class:`bench_cluster_preset.Sampler`).

Usage::

    python benchmarks/bench_unique_sets.py --sizes 300000 --data-dir /tmp/sgc --partition-rows 100000

Not run by CI.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def run(n: int, data_dir: Path, workers: int, cap: str, partition_rows: int) -> dict:
    import psutil
    from distributed import Client

    from bench_cluster_preset import Sampler, partitioned, start_cluster
    from bench_preset import make_files
    from synthguard.distributed import cluster_backend
    from synthguard.distributed._tables import load_tables
    from synthguard.metrics.privacy._copies import backend_identifiable_share

    files = partitioned(make_files(n, data_dir, plant=True), partition_rows)
    tmp = Path(tempfile.mkdtemp(prefix="sgus_", dir=data_dir))
    addr, procs = start_cluster(workers, cap, tmp)
    out: dict = {"rows": n, "partition_rows": partition_rows}
    try:
        with Client(addr) as client:
            dt = load_tables(str(files["original"]), str(files["synthetic"]), str(files["control"]),
                             str(data_dir / "metadata.json"), client=client)
            data = cluster_backend(dt, "auto")
            cols = [c for c in dt.schema.columns if dt.schema.columns[c].sdtype != "id"]
            sampler = Sampler({"driver": os.getpid(), **{f"worker{i}": p.pid for i, p in enumerate(procs[1:])}})
            cpu0 = sum(sum(q.cpu_times()[:2]) for p in procs[1:] for q in psutil.Process(p.pid).children(True))
            sampler.start()
            digest = hashlib.sha256()
            for k in (1, 2):
                t0 = time.perf_counter()
                share = backend_identifiable_share(data, cols, k)
                out[f"k{k}_wall_s"] = round(time.perf_counter() - t0, 1)
                digest.update(share.tobytes())
            sampler.stop.set()
            sampler.join()
            cpu1 = sum(sum(q.cpu_times()[:2]) for p in procs[1:] for q in psutil.Process(p.pid).children(True))
            peaks = sampler.peak
            out.update({"columns": len(cols), "digest": digest.hexdigest()[:16],
                        "workers_cpu_s": round(cpu1 - cpu0, 1),
                        "worker_peaks_mib": {k: round(v) for k, v in peaks.items() if k.startswith("worker")},
                        "driver_peak_mib": round(peaks[f"driver:{os.getpid()}"]),
                        "load": os.getloadavg()})
    finally:
        for p in reversed(procs):
            p.terminate()
            p.wait(30)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="300000")
    ap.add_argument("--data-dir", type=Path, default=Path("/tmp/synthguard_bench_cluster"))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-limit", default="4GB")
    ap.add_argument("--partition-rows", type=int, default=100_000)
    args = ap.parse_args(argv)
    for n in (int(s) for s in args.sizes.split(",")):
        print(json.dumps(run(n, args.data_dir, args.workers, args.memory_limit, args.partition_rows)), flush=True)


if __name__ == "__main__":
    main()
