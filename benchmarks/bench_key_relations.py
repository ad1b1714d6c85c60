"""CPU seconds of a Dask backend's key counts and key relations in one process (an in-process
cluster of 1 worker, 1 thread: every task's CPU is this process's), on the planted tables' generator:
``PYTHONPATH=src python benchmarks/bench_key_relations.py ROWS`` (PYTHONPATH picks the code). Not run by CI.
``tasks_*``: the tasks a step ran on the cluster (the scheduler's tasks that entered ``processing``;
the sum of a prefix's ``state_counts`` counts every state a task entered, about 4 a task)."""
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np  # noqa: E402
from distributed import Client  # noqa: E402

import synthguard  # noqa: E402
from _gen import make_table  # noqa: E402
from bench_preset import META  # noqa: E402
from synthguard.distributed import cluster_backend  # noqa: E402
from synthguard.distributed._tables import load_tables  # noqa: E402

n = int(sys.argv[1])
orig, syn, ctl = make_table(n, 0), make_table(n, 1), make_table(max(n // 4, 1), 2)
client = Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None,
                memory_limit="8GB")
dt = load_tables(orig, syn, ctl, META, client=client, npartitions=4)
b = cluster_backend(dt)
cols = list(dt.schema.tabular_columns())
out = {"src": synthguard.__file__, "rows": n, "columns": len(cols)}


def _ran(dask_scheduler):
    return sum(tp.state_counts.get("processing", 0) for tp in dask_scheduler.task_prefixes.values())


def timed(name, fn):
    ran = client.run_on_scheduler(_ran)
    t0, w0 = time.process_time(), time.perf_counter()
    fn()
    out[name] = [round(time.process_time() - t0, 2), round(time.perf_counter() - w0, 2)]
    out["tasks_" + name] = client.run_on_scheduler(_ran) - ran


rel = b.take("synthetic", np.arange(0, n, 2), cols)  # half the release as queries
one = [[c for c in cols if c != x] for x in cols]
timed("key_counts_first", lambda: b.key_counts([rel], one, ("original", "control")))
two = [[c for c in cols if c not in (x, y)] for i, x in enumerate(cols) for y in cols[i + 1:i + 3]]
timed("key_counts_again", lambda: b.key_counts([rel], two, ("original", "control")))
qi = list(META["quasi_identifiers"])
roles = ("original", "synthetic", "control")


def relations():
    g = b.key_groups(qi, roles)
    g.sums(lambda f: f["n_synthetic"] * (f["n_original"] > 0))
    r = b.key_rows("synthetic", {"same": (qi, ("original",)), "spread": (qi[:2], ("original",), cols[:2])})
    r.flags(same=lambda f: f["same"] > 1)
    d = b.key_distinct("original", qi, cols[:1])
    d.flags(alone=lambda f: f["size"] == 1)
    b.row_ids(cols)
    b.key_ids(qi, ("original", "control"))


timed("relations_first", relations)
b._row_ids.clear()
b.__dict__.get("_key_ids", {}).clear()
timed("relations_again", relations)
print(json.dumps(out))
client.close()
