"""The ``--preset privacy`` evaluation of the planted tables on a cluster of worker processes with a
memory cap, against one process: wall, per-worker and driver peak RSS, same verdict and report.

Data: :func:`bench_preset.make_files` (``--plant``: 1 % exact and 1 % one-cell copies planted in
the release; training = release rows, control a quarter). ``--mode cluster`` starts a ``dask
scheduler`` and ``--workers`` ``dask worker --nworkers 1 --nthreads 1 --memory-limit CAP`` processes
(each a nanny and its worker), runs ``python -m synthguard evaluate --scheduler ...`` and samples
every process's RSS with psutil every 0.2 s (``ru_maxrss`` survives fork + exec and so would show a
parent's peak); ``--mode local`` runs the same command in one process. ``--compare A.json B.json``
prints whether two reports have the same verdict (risk levels and bounds) and the same JSON apart
from the seconds and the run's backend lines.

Usage::

    python benchmarks/bench_cluster_preset.py --sizes 100000 --mode local --data-dir /tmp/sgc
    python benchmarks/bench_cluster_preset.py --sizes 100000 --mode cluster --data-dir /tmp/sgc
    python benchmarks/bench_cluster_preset.py --compare /tmp/sgc/local_100000.json /tmp/sgc/cluster_100000.json

Not run by CI.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


class Sampler(threading.Thread):
    """Peak RSS (MiB) of each process of the trees rooted at ``pids``, sampled every ``every`` s."""

    def __init__(self, pids: dict[str, int], every: float = 0.2) -> None:
        super().__init__(daemon=True)
        import psutil

        self.roots = {k: psutil.Process(p) for k, p in pids.items()}
        self.every, self.peak, self.stop = every, {}, threading.Event()
        self.cpu: dict[str, float] = {}  # CPU seconds (user + system) of each process, last seen
        self.series: list[tuple[float, dict[str, float]]] = []  # (time, RSS MiB by process) per sample

    def run(self) -> None:
        import psutil

        while not self.stop.is_set():
            now: dict[str, float] = {}
            for name, root in self.roots.items():
                try:
                    procs = [root, *root.children(recursive=True)]
                except psutil.Error:
                    continue
                for p in procs:
                    try:
                        rss = p.memory_info().rss / 2**20
                        t = p.cpu_times()
                    except psutil.Error:
                        continue
                    key = f"{name}:{p.pid}"
                    self.cpu[key] = t.user + t.system
                    self.peak[key] = max(self.peak.get(key, 0.0), rss)
                    now[key] = round(rss)
            self.series.append((round(time.time(), 1), now))
            time.sleep(self.every)


def start_cluster(workers: int, cap: str, tmp: Path) -> tuple[str, list[subprocess.Popen]]:
    """A ``dask scheduler`` and ``workers`` capped workers; ``(address, processes)``."""
    dask = str(Path(sys.executable).parent / "dask")
    sfile = tmp / "scheduler.json"
    procs = [subprocess.Popen([dask, "scheduler", "--scheduler-file", str(sfile), "--port", "0",
                               "--no-dashboard"], stdout=subprocess.DEVNULL,
                              stderr=open(tmp / "scheduler.log", "w"))]
    while not sfile.exists():
        time.sleep(0.2)
    time.sleep(0.5)
    for i in range(workers):
        procs.append(subprocess.Popen([dask, "worker", "--scheduler-file", str(sfile), "--nworkers", "1",
                                       "--nthreads", "1", "--memory-limit", cap, "--no-dashboard",
                                       "--local-directory", str(tmp / f"w{i}")],
                                      stdout=subprocess.DEVNULL, stderr=open(tmp / f"worker{i}.log", "w")))
    addr = json.loads(sfile.read_text())["address"]
    from distributed import Client

    with Client(addr) as c:
        c.wait_for_workers(workers, timeout=60)
    return addr, procs


def partitioned(files: dict[str, Path], rows: int) -> dict[str, Path]:
    """Each table also as a folder of Parquet files of ``rows`` rows each (written once): one
    partition a file, as a table written in parts would be read."""
    import pandas as pd

    out = {}
    for role, path in files.items():
        folder = path.with_name(f"{path.stem}_parts{rows}")
        if not folder.exists():
            frame = pd.read_parquet(path)
            tmp = folder.with_name(folder.name + ".tmp")
            tmp.mkdir(parents=True, exist_ok=True)
            for j, a in enumerate(range(0, max(len(frame), 1), rows)):
                frame.iloc[a:a + rows].to_parquet(tmp / f"part.{j:04d}.parquet")
            tmp.rename(folder)
        out[role] = folder
    return out


def run(n: int, data_dir: Path, mode: str, extra: str, workers: int, cap: str, tag: str,
        partition_rows: int = 0, driver_profile: bool = False) -> dict:
    from bench_preset import _load, make_files

    files = make_files(n, data_dir, plant=True)
    if partition_rows:
        files = partitioned(files, partition_rows)
    report = data_dir / f"{mode}{tag}_{n}.json"
    profile = report.with_suffix(".profile.jsonl")
    driver = ([sys.executable, os.environ.get("SG_DRIVER_WRAPPER", str(Path(__file__).with_name("_driver_profile.py"))), str(profile)]
              if driver_profile else [sys.executable, "-m", "synthguard"])
    cmd = [*driver, "evaluate", "--preset", "privacy",
           "-o", str(files["original"]), "-s", str(files["synthetic"]), "-c", str(files["control"]),
           "-m", str(data_dir / "metadata.json"), "--json", str(report), "--no-progress", *shlex.split(extra)]
    procs: list[subprocess.Popen] = []
    tmp = Path(tempfile.mkdtemp(prefix="sgcl_", dir=data_dir))
    if mode == "cluster":
        addr, procs = start_cluster(workers, cap, tmp)
        cmd += ["--scheduler", addr]
    load0 = _load()
    t0 = time.perf_counter()
    with open(report.with_suffix(".stderr"), "w") as err:
        child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        sampler = Sampler({"driver": child.pid, **{f"worker{i}": p.pid for i, p in enumerate(procs[1:])},
                           **({"scheduler": procs[0].pid} if procs else {})})
        sampler.start()
        rc = child.wait()
    wall = time.perf_counter() - t0
    sampler.stop.set()
    sampler.join()
    for p in reversed(procs):
        p.terminate()
        p.wait(30)
    peaks = sampler.peak
    with open(report.with_suffix(".rss.jsonl"), "w") as f:  # the RSS over time, for per-test peaks
        for t, now in sampler.series:
            f.write(json.dumps([t, now]) + "\n")
    worker_logs = "".join((tmp / f"worker{i}.log").read_text() for i in range(len(procs) - 1))
    out = {"rows": n, "mode": mode, "extra": extra, "rc": rc, "wall_s": round(wall, 1),
           "driver_peak_mib": round(max(v for k, v in peaks.items() if k.startswith("driver")), 0),
           "worker_peaks_mib": {k: round(v) for k, v in peaks.items() if k.startswith("worker")},
           # CPU seconds of every process (driver, nanny and worker processes, scheduler): the
           # figure to compare when other jobs share the cores
           "cpu_s": {k: round(v, 1) for k, v in sampler.cpu.items()},
           "cpu_total_s": round(sum(sampler.cpu.values()), 1),
           "load_before": load0, "load_after": _load(), "report": str(report), "cmd": " ".join(cmd),
           "worker_restarts": worker_logs.count("Restarting worker"),
           "worker_memory_warnings": worker_logs.count("Memory use is high") + worker_logs.count("exceeded")}
    if rc != 0:
        out["error"] = report.with_suffix(".stderr").read_text()[-1500:]
    return out


def _strip(x):
    """A report without the seconds and the lines that name the run's backend or duration."""
    if isinstance(x, dict):
        return {k: _strip(v) for k, v in x.items()
                if k not in ("seconds", "elapsed_seconds", "started", "finished", "timings", "run_seconds")}
    if isinstance(x, list):
        return [_strip(v) for v in x]
    return x


def compare(a: Path, b: Path) -> dict:
    ra, rb = json.loads(a.read_text()), json.loads(b.read_text())
    verdict = [(r["risk"], r["level"], r.get("bound"), r.get("upper_bound")) for r in ra["verdict"]["risks"]]
    verdict_b = [(r["risk"], r["level"], r.get("bound"), r.get("upper_bound")) for r in rb["verdict"]["risks"]]
    sa, sb = _strip(ra), _strip(rb)
    diff = sorted(k for k in set(sa) | set(sb) if sa.get(k) != sb.get(k))
    metrics = sorted(m for m in set(sa.get("metrics", {})) | set(sb.get("metrics", {}))
                     if sa["metrics"].get(m) != sb["metrics"].get(m))
    return {"verdict_levels_equal": [v[:2] for v in verdict] == [v[:2] for v in verdict_b],
            "verdict_equal": sa["verdict"] == sb["verdict"], "json_equal": sa == sb,
            # the input warnings (a cluster's report lists one process's since session 29)
            "warnings_equal": sa.get("warnings") == sb.get("warnings"),
            "differing_top_keys": diff, "differing_metrics": metrics,
            "levels_a": {v[0]: v[1] for v in verdict}, "levels_b": {v[0]: v[1] for v in verdict_b}}


def per_test_peaks(report: Path) -> list[dict]:
    """Per test of a ``--driver-profile`` run (``REPORT.profile.jsonl``: each test's start and end),
    the peak RSS (MiB) of the driver and of each worker process sampled while it ran
    (``REPORT.rss.jsonl``), largest worker peak first."""
    tests = [json.loads(line) for line in report.with_suffix(".profile.jsonl").read_text().splitlines()]
    series = [json.loads(line) for line in report.with_suffix(".rss.jsonl").read_text().splitlines()]
    out = []
    for t in tests:
        peak: dict[str, float] = {}
        for when, now in series:
            if t["t0"] - 0.3 <= when <= t["t1"] + 0.3:
                for k, v in now.items():
                    peak[k] = max(peak.get(k, 0), v)
        workers = {k: v for k, v in peak.items() if k.startswith("worker")}
        out.append({"test": t["test"], "seconds": t["seconds"],
                    "driver_mib": max((v for k, v in peak.items() if k.startswith("driver")), default=0),
                    "worker_max_mib": max(workers.values(), default=0), "workers_mib": workers})
    return sorted(out, key=lambda r: -r["worker_max_mib"])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000")
    ap.add_argument("--data-dir", type=Path, default=Path("/tmp/synthguard_bench_cluster"))
    ap.add_argument("--mode", choices=("local", "cluster"), default="cluster")
    ap.add_argument("--extra", default="", help="extra 'synthguard evaluate' options")
    ap.add_argument("--tag", default="", help="appended to the report's name")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-limit", default="4GB")
    ap.add_argument("--partition-rows", type=int, default=0,
                    help="read each table as a folder of Parquet files of this many rows (0: one file)")
    ap.add_argument("--driver-profile", action="store_true",
                    help="trace the driver's memory per test (tracemalloc; REPORT.profile.jsonl); "
                         "the environment's SG_DRIVER_WRAPPER names another wrapper script")
    ap.add_argument("--json", type=Path, help="append the results here (one JSON object a line)")
    ap.add_argument("--compare", nargs=2, type=Path)
    ap.add_argument("--seconds", type=Path, metavar="REPORT",
                    help="print each test's seconds in a report (the first round, then the re-tests')")
    ap.add_argument("--peaks", type=Path, metavar="REPORT",
                    help="print the per-test driver and worker peaks of a --driver-profile run")
    args = ap.parse_args(argv)
    if args.seconds:
        report = json.loads(args.seconds.read_text())
        for name, entry in report.get("metrics", {}).items():
            print(f"{name:32s} {entry.get('seconds')}")
        return
    if args.peaks:
        for r in per_test_peaks(args.peaks):
            print(json.dumps(r))
        return
    if args.compare:
        print(json.dumps(compare(*args.compare), indent=1))
        return
    for n in (int(s) for s in args.sizes.split(",")):
        r = run(n, args.data_dir, args.mode, args.extra, args.workers, args.memory_limit, args.tag,
                args.partition_rows, args.driver_profile)
        print(json.dumps(r, indent=1), flush=True)
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
