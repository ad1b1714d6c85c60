"""Cost and precision of the drop-and-retest (issue #30 points 1-2), on the shared tables.

For each table: a release built as in ``tests/unit/run/test_drop_retest.py`` (a fresh sample with
5 % of the training records copied verbatim and 10 % copied with one cell changed), evaluated with
the default metric set, with the drop-and-retest (default) and without it (``retest_rows=0``),
alternately, ``--repeat`` times each. Prints the drop list's recall and precision and the median
times side by side with their ratio; state the load (``uptime``) with the numbers.

    SYNTHGUARD_SHARED_DATA=../shared/data PYTHONPATH=src:. python benchmarks/bench_drop_retest.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np
from tests.unit.run.test_drop_retest import TABLES, _leaky_release

import synthguard

#: the benchmark's tables: the tests' three plus acs12 (its release rows often sit within a cell of
#: one real record by chance: the drop list's precision there is the number to watch)
BENCH_TABLES = {**TABLES, "acs12": (1000, 13)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--tables", default=",".join(BENCH_TABLES))
    args = ap.parse_args()
    shared = Path(os.environ.get("SYNTHGUARD_SHARED_DATA", "../shared/data"))
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    print("table         drop  exact  ident.recall  precision  with_s  without_s  ratio  rounds")
    for table in args.tables.split(","):
        TABLES[table] = BENCH_TABLES[table]
        data = _leaky_release(table, shared)
        times: dict[int | None, list[float]] = {None: [], 0: []}
        rep = None
        for _ in range(args.repeat):
            for rows in (0, None):
                t0 = time.perf_counter()
                out = synthguard.evaluate(data["original"], data["release"],
                                          control=data["control"], seed=0, retest_rows=rows,
                                          progress=False)
                times[rows].append(time.perf_counter() - t0)
                if rows is None:
                    rep = out
        assert rep is not None
        recs = rep.records()
        drop = np.zeros(len(data["kind"]), dtype=bool)
        drop[recs.loc[recs["action"] == "drop", "release_row"].astype(int).to_numpy()] = True
        kind, ident = data["kind"], data["identifying"]
        with_s, without_s = statistics.median(times[None]), statistics.median(times[0])
        rounds = len(((rep.to_dict().get("actions") or {}).get("drop_retest") or {})
                     .get("rounds") or ())
        print(f"{table:12s} {int(drop.sum()):5d} {drop[kind == 'exact'].mean():6.2f} "
              f"{drop[ident].mean():13.2f} {(kind[drop] != 'fresh').mean():10.3f} "
              f"{with_s:7.2f} {without_s:10.2f} {with_s / without_s:6.2f} {rounds:7d}")


if __name__ == "__main__":
    main()
