"""CPU seconds of loading the planted tables on a cluster (``load_tables``: the first partitions,
rows and missing values, whole-column facts, date formats, label kinds, typing, canonical order) in
one process (an in-process cluster of 1 worker, 1 thread: every task's CPU is this process's), from
the folders of Parquet files :mod:`bench_cluster_preset` writes (``--partition-rows``):
``PYTHONPATH=src python benchmarks/bench_load_tables.py DATA_DIR ROWS PART_ROWS`` (PYTHONPATH
picks the code). Prints the CPU and wall seconds and the tasks run per task prefix. Not run by CI."""
import json
import sys
import time
from pathlib import Path

from distributed import Client  # noqa: E402

import synthguard
from synthguard.distributed._tables import load_tables

data, n, part = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
client = Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None,
                memory_limit="8GB")
from collections import Counter  # noqa: E402

from dask.utils import key_split  # noqa: E402
from distributed.diagnostics.plugin import SchedulerPlugin  # noqa: E402


class Done(SchedulerPlugin):
    """Tasks run per task prefix (each transition to memory)."""

    def __init__(self) -> None:
        self.counts: Counter = Counter()

    def transition(self, key, start, finish, *args, **kwargs) -> None:
        if finish == "memory" and start == "processing":
            self.counts[key_split(key)] += 1


done = Done()
client.cluster.scheduler.add_plugin(done)
files = [data / f"{stem}_{n}_parts{part}" for stem in ("original", "synthetic_planted", "control")]
t0, w0 = time.process_time(), time.perf_counter()
dt = load_tables(*(str(f) for f in files), str(data / "metadata.json"), client=client)
cpu, wall = time.process_time() - t0, time.perf_counter() - w0
counts = done.counts
print(json.dumps({"src": synthguard.__file__, "rows": n, "cpu_s": round(cpu, 2), "wall_s": round(wall, 2),
                  "tasks": {k: v for k, v in sorted(counts.items()) if v}}))
client.close()
