"""CPU seconds of a sampled run's loading stages in one process: ``prepare_tables`` (read, type,
check), ``Tables.in_canonical_order`` (row hashes, sort, reorder) and ``run.sample.sample_tables``
(the sample and the two full-table copy joins), on the planted files of ``bench_preset.py
--plant`` (``original``, ``synthetic_planted``, ``control`` and ``metadata.json`` in one folder,
any prefix after the role name), ``--max-records`` 200,000 by default. Prints each stage's process
CPU seconds and the peak resident size after it, and saves the joins' copies, the row numbers
and the canonical frames' row hashes to ``--out`` (``.npz``) so that two source trees can be
compared (``--compare A B``: exit 1 on any difference).

Usage::

    PYTHONPATH=src python benchmarks/bench_sample_stages.py DIR --out new.npz
    PYTHONPATH=/path/to/main/src python benchmarks/bench_sample_stages.py DIR --out base.npz
    python benchmarks/bench_sample_stages.py --compare base.npz new.npz

PYTHONPATH picks the code. Not run by CI.
"""

from __future__ import annotations

import argparse
import gc
import resource
import sys
from pathlib import Path

import numpy as np


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _file(folder: Path, role: str) -> Path:
    return next(p for p in sorted(folder.glob(f"{role}*.parquet")))


def stages(folder: Path, out: Path, max_records: int) -> dict[str, float]:
    """Each stage's CPU seconds (and the outputs saved to ``out``)."""
    import pandas as pd

    from synthguard.data.tables import prepare_tables
    from synthguard.run.sample import sample_tables

    seconds: dict[str, float] = {}

    def tick(name: str, t0: float) -> float:
        t = _cpu()
        seconds[name] = round(t - t0, 2)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        print(f"{name:20s} {t - t0:7.2f} CPU s  peak {peak} MiB", flush=True)
        return t

    t = _cpu()
    tables = prepare_tables(_file(folder, "original"), _file(folder, "synthetic_planted"),
                            _file(folder, "control"), folder / "metadata.json", canonical_columns=True)
    t = tick("prepare_tables", t)
    tables = tables.in_canonical_order()
    gc.collect()
    t = tick("in_canonical_order", t)
    hashes = {r: pd.util.hash_pandas_object(tables.get(r), index=False).to_numpy() for r in tables.roles}
    t = _cpu()
    _sampled, _info, copies = sample_tables(tables, max_records, 0, near=True)
    tick("sample_tables", t)
    np.savez(out, **{f"{k}_{j}": v for k, c in (copies or {}).items() for j, v in c.items()},
             **{f"rows_{r}": np.asarray(v) for r, v in tables.row_numbers.items()},
             **{f"hash_{r}": v for r, v in hashes.items()})
    return seconds


def compare(a: Path, b: Path) -> bool:
    """Whether two saved outputs hold the same arrays (names, dtypes, values)."""
    x, y = np.load(a), np.load(b)
    same = sorted(x.files) == sorted(y.files) and all(
        x[k].dtype == y[k].dtype and np.array_equal(x[k], y[k]) for k in x.files)
    print("identical" if same else "DIFFERENT", {k: x[k].shape for k in x.files if "release" in k})
    return same


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path, nargs="?")
    ap.add_argument("--out", type=Path, default=Path("stages.npz"))
    ap.add_argument("--max-records", type=int, default=200_000)
    ap.add_argument("--compare", type=Path, nargs=2)
    args = ap.parse_args(argv)
    if args.compare:
        sys.exit(0 if compare(*args.compare) else 1)
    print(stages(args.folder, args.out, args.max_records), "load",
          Path("/proc/loadavg").read_text().split()[:3])


if __name__ == "__main__":
    main()
