"""``python benchmarks/_driver_prefixes.py LOG evaluate ... --scheduler ADDRESS``:
:mod:`_driver_stages` (each stage's and test's wall and CPU seconds in ``LOG``), and when the
driver exits the scheduler's task counts and task seconds per task prefix (``LOG.prefixes.json``:
``[prefix, tasks, compute s, transfer s]``, largest first; wall seconds of the tasks on the
workers). For :mod:`bench_cluster_preset` (``SG_DRIVER_WRAPPER=benchmarks/_driver_prefixes.py ...
--driver-profile``). Not run by CI."""

from __future__ import annotations

import atexit
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _driver_stages  # noqa: E402


def task_prefixes(dask_scheduler: Any) -> list[tuple[str, int, float, float]]:
    """Per task prefix of the scheduler: tasks, compute and transfer seconds (``run_on_scheduler``)."""
    out = []
    for name, tp in dask_scheduler.task_prefixes.items():
        d = dict(tp.all_durations)
        out.append((name, sum(tp.state_counts.values()), round(d.get("compute", 0), 1),
                    round(d.get("transfer", 0), 1)))
    return sorted(out, key=lambda r: -r[2])


def _dump(log: str, address: str) -> None:
    from distributed import Client

    with Client(address, timeout=30) as c, open(log + ".prefixes.json", "w") as f:
        json.dump(c.run_on_scheduler(task_prefixes), f, indent=0)


if __name__ == "__main__":
    atexit.register(_dump, sys.argv[1], sys.argv[sys.argv.index("--scheduler") + 1])
    _driver_stages.main()
