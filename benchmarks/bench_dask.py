"""synthguard on a Dask LocalCluster whose workers hold less memory than the data.

One machine stands in for a cluster: ``--workers`` worker processes (1 thread each), each capped at
``--memory-limit``. The data are partitioned Parquet datasets written to ``--data-dir`` (not the
repository) by ``benchmarks/_gen.py``'s census-like model: ``--rows`` original rows (15 mixed columns)
and as many synthetic rows (30 % exact copies and 20 % near copies of the original, the rest fresh),
generated partition by partition so no process ever holds a whole table.

Reported per metric: wall seconds, peak RSS of every worker process (sampled every 0.2 s), the
driver's peak RSS, and whether the numbers equal a single-process
``synthguard.evaluate`` on the first ``--check-rows`` rows (the same partitions read into pandas).

Usage::

    python benchmarks/bench_dask.py --rows 10000000                      # the 10M x 15 run
    python benchmarks/bench_dask.py --rows 400000 --partition-rows 100000 --dcr-rows 400000
    python benchmarks/bench_dask.py --only-check                          # equality check only
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import sys
import threading
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _gen import make_leaky, make_table  # noqa: E402

META = {
    "columns": {"age": {"sdtype": "numerical"}, "income": {"sdtype": "numerical"},
                "hours": {"sdtype": "numerical"}, "height": {"sdtype": "numerical"},
                "weight": {"sdtype": "numerical"}, "bmi": {"sdtype": "numerical"},
                "visits": {"sdtype": "numerical"}, "admitted": {"sdtype": "datetime"},
                "sex": {"sdtype": "categorical"}, "race": {"sdtype": "categorical"},
                "employment": {"sdtype": "categorical"}, "education": {"sdtype": "categorical"},
                "occupation": {"sdtype": "categorical"}, "region": {"sdtype": "categorical"},
                "smoker": {"sdtype": "categorical"}},
    "quasi_identifiers": ["sex", "race", "region", "education"],
    "sensitive": ["employment"],
}


def generate(data_dir: Path, rows: int, partition_rows: int) -> tuple[Path, Path, float]:
    """Partitioned Parquet original/ and synthetic/ under ``data_dir`` (reused when complete)."""
    orig_dir, syn_dir = data_dir / "original", data_dir / "synthetic"
    n_parts = -(-rows // partition_rows)
    done = data_dir / f"complete-{rows}-{partition_rows}"
    if done.exists():
        return orig_dir, syn_dir, 0.0
    t0 = time.perf_counter()
    for d in (orig_dir, syn_dir):
        d.mkdir(parents=True, exist_ok=True)
        for f in d.glob("*.parquet"):
            f.unlink()
    for i in range(n_parts):  # loop over partitions: memory bounded by one partition
        n = min(partition_rows, rows - i * partition_rows)
        orig = make_table(n, seed=10_000 + i)
        syn = make_leaky(orig, seed=20_000 + i)
        orig.to_parquet(orig_dir / f"part-{i:05d}.parquet", index=False)
        syn.to_parquet(syn_dir / f"part-{i:05d}.parquet", index=False)
    done.write_text("ok")
    return orig_dir, syn_dir, time.perf_counter() - t0


class _PeakWatcher:
    """The largest RSS of each process in ``pids``, sampled every 0.2 s on a thread until ``stop``."""

    def __init__(self, pids: list[int]) -> None:
        import psutil

        self._procs = [psutil.Process(p) for p in pids]
        self.peaks = [0.0] * len(pids)
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._done.is_set():
            for i, p in enumerate(self._procs):
                try:
                    self.peaks[i] = max(self.peaks[i], p.memory_info().rss / 2**20)
                except Exception:  # noqa: BLE001 - a worker that died or restarted
                    pass
            self._done.wait(0.2)

    def stop(self) -> list[float]:
        self._done.set()
        self._thread.join()
        return self.peaks


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _strip(entry: dict) -> str:
    entry = dict(entry)
    entry.pop("seconds", None)
    return json.dumps(entry, sort_keys=True, default=str)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--partition-rows", type=int, default=250_000)
    ap.add_argument("--dcr-rows", type=int, default=1_000_000,
                    help="rows of each table used for dcr (the first partitions; 0 = skip dcr)")
    ap.add_argument("--check-rows", type=int, default=250_000,
                    help="rows (first partitions) on which the single-process result is compared")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-limit", default="1.5GB", help="per worker")
    ap.add_argument("--data-dir", type=Path, default=Path("/tmp/synthguard-dask-bench"))
    ap.add_argument("--metrics", nargs="*", default=["exact_matches", "cap"])
    ap.add_argument("--check-metrics", nargs="*", default=["exact_matches", "cap", "dcr"])
    ap.add_argument("--only-check", action="store_true")
    ap.add_argument("--frame-check", type=int, default=0, metavar="N",
                    help="also compare dcr on the first N rows of partition 0 as pandas frames split into "
                         "4 partitions (4 x 4 partition pairs, so the top-k merge is exercised)")
    ap.add_argument("--check-tree-mb", type=float, default=None,
                    help="encoded reference MB per neighbour tree in the dcr equality run (smaller than the "
                         "default makes the check run several trees in waves, as the large runs do)")
    args = ap.parse_args()
    logging.getLogger("distributed").setLevel(logging.ERROR)
    progress = logging.getLogger("synthguard.distributed")  # progress of the neighbour waves
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    progress.addHandler(handler)
    progress.setLevel(logging.INFO)

    import dask
    from distributed import Client, LocalCluster

    from synthguard import evaluate

    orig_dir, syn_dir, gen_s = generate(args.data_dir, args.rows, args.partition_rows)
    files = sorted(orig_dir.glob("*.parquet"))
    on_disk = sum(f.stat().st_size for f in files) + sum(f.stat().st_size for f in syn_dir.glob("*.parquet"))
    print(f"data: {args.rows:,} + {args.rows:,} rows x 15 columns in {len(files)} + {len(files)} Parquet "
          f"partitions, {on_disk / 1e6:.0f} MB on disk (generated in {gen_s:.0f} s)", flush=True)
    one = pd.read_parquet(files[0])
    per_row = one.memory_usage(deep=True).sum() / len(one)
    print(f"in memory (pandas, deep): {per_row:.0f} B/row -> {2 * per_row * args.rows / 1e9:.2f} GB for both "
          f"tables; workers: {args.workers} x {args.memory_limit}", flush=True)

    dask.config.set({"distributed.worker.memory.target": 0.6, "distributed.worker.memory.spill": 0.7,
                     "distributed.worker.memory.pause": 0.85, "distributed.worker.memory.terminate": 0.98})
    rows_out = []

    def run(name: str, metrics: dict, orig, syn, label: str) -> dict:
        # a fresh cluster per run: each worker's ru_maxrss is then this run's peak
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, memory_limit=args.memory_limit,
                               processes=True, dashboard_address=None, silence_logs=logging.ERROR)
        client = Client(cluster)
        # workers' peak RSS by polling (ru_maxrss would not do: Linux keeps it across the fork + exec
        # that starts a worker, so a worker would report at least the driver's RSS at that moment)
        watch = _PeakWatcher(list(client.run(os.getpid).values()))
        try:
            t0 = time.perf_counter()
            rep = evaluate(orig, syn, None, META, metrics=metrics, seed=0, client=client)
            wall = time.perf_counter() - t0
        finally:
            peaks = watch.stop()
            client.close()
            cluster.close()
        entry = rep[name]
        line = {"metric": name, "data": label, "status": entry["status"], "seconds": round(wall, 1),
                "worker_peak_mb": sorted(round(v) for v in peaks),
                "driver_peak_mb": round(_peak_rss_mb()), "value": entry.get("result", {}).get("value")
                if entry["status"] == "ok" else entry.get("reason")}
        print(json.dumps(line), flush=True)
        rows_out.append(line)
        return entry

    if not args.only_check:  # the large runs first: the driver's peak RSS is then theirs alone
        for name in args.metrics:
            run(name, {name: {}}, str(orig_dir), str(syn_dir), f"{args.rows:,} rows")
        if args.dcr_rows:
            k = max(1, -(-args.dcr_rows // args.partition_rows))
            run("dcr", {"dcr": {"n_boot": 100}}, [str(f) for f in files[:k]],
                [str(f) for f in sorted(syn_dir.glob("*.parquet"))[:k]], f"{k * args.partition_rows:,} rows")

    if args.frame_check:
        o_pd = pd.read_parquet(files[0]).iloc[:args.frame_check]
        s_pd = pd.read_parquet(sorted(syn_dir.glob("*.parquet"))[0]).iloc[:args.frame_check]
        t0 = time.perf_counter()
        single = evaluate(o_pd, s_pd, None, META, metrics={"dcr": {"n_boot": 100}}, seed=0)
        t_single = time.perf_counter() - t0
        dist = run("dcr", {"dcr": {"n_boot": 100}}, o_pd, s_pd, f"{args.frame_check:,} rows, 4 x 4 partitions")
        print(json.dumps({"metric": "dcr", "equal_to_single_process": _strip(dist) == _strip(single["dcr"]),
                          "single_process_seconds": round(t_single, 1)}), flush=True)

    # equality with one process on the first partitions
    k = max(1, -(-args.check_rows // args.partition_rows))
    o_files, s_files = files[:k], sorted(syn_dir.glob("*.parquet"))[:k]
    o_pd = pd.concat([pd.read_parquet(f) for f in o_files], ignore_index=True)
    s_pd = pd.concat([pd.read_parquet(f) for f in s_files], ignore_index=True)
    check_metrics = {m: ({"n_boot": 100} if m == "dcr" else {}) for m in args.check_metrics}
    if not check_metrics:
        return
    t0 = time.perf_counter()
    single = evaluate(o_pd, s_pd, None, META, metrics=check_metrics, seed=0)
    t_single = time.perf_counter() - t0
    if args.check_tree_mb:
        import synthguard.distributed._knn as knn
        knn.TREE_BYTES = int(args.check_tree_mb * 2**20)
    for name in check_metrics:  # noqa: B007
        dist = run(name, {name: check_metrics[name]}, [str(f) for f in o_files], [str(f) for f in s_files],
                   f"{len(o_pd):,} check rows")
        same = _strip(dist) == _strip(single[name])
        print(json.dumps({"metric": name, "equal_to_single_process": same, "single_process_seconds":
                          round(t_single, 1)}), flush=True)


if __name__ == "__main__":
    main()
