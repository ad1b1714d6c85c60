"""Benchmark of the neighbour engine and the metrics built on it (exact_matches, ims, dcr, nndr).

Original = synthetic = control size, 15 mixed columns (8 numeric incl. a datetime, 7 categorical, some
missing) from a correlated, census-like generator (``_gen.py``); two releases: ``realistic`` (an
independent sample of the same population) and ``leaky`` (30 % exact copies, 20 % near-copies).
Each (size, case, part) runs in a fresh subprocess, so the peak RSS (``resource.getrusage``
high-water mark) belongs to that run alone. The engine part also runs the NumPy brute force up to
``--brute-max`` rows (the reference implementation), checks the results are identical and prints the
speed ratio.

    python benchmarks/bench_engine.py --sizes 10000,100000      # quick
    python benchmarks/bench_engine.py                           # 10k, 100k, 1M (long)

Not run by CI.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
METRICS = ("exact_matches", "ims", "dcr", "nndr")


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def _data(n: int, case: str):
    sys.path.insert(0, str(HERE))
    from _gen import make_leaky, make_table

    original = make_table(n, 0)
    synthetic = make_leaky(original, 1) if case == "leaky" else make_table(n, 7)
    control = make_table(n, 2)
    return original, synthetic, control


class _Timer:
    def __init__(self, rows: list[dict], item: str) -> None:
        self.rows, self.item = rows, item

    def __enter__(self) -> _Timer:
        self.w, self.c = time.perf_counter(), _cpu()
        return self

    def __exit__(self, *exc: object) -> None:
        self.rows.append({"item": self.item, "wall": time.perf_counter() - self.w, "cpu": _cpu() - self.c,
                          "peak_mib": _peak_mib()})


def worker_engine(n: int, case: str, brute_max: int) -> dict:
    import numpy as np

    from synthguard.data import prepare_tables
    from synthguard.data.encoding import EncodedView
    from synthguard.engine.neighbors import gower, kneighbors

    rows: list[dict] = []
    with _Timer(rows, "data+encode"):
        original, synthetic, control = _data(n, case)
        view = EncodedView(prepare_tables(original, synthetic, control))
        cols = view.schema.tabular_columns()
        o, s = view.block("original", cols), view.block("synthetic", cols)
        metric = gower(view.ranges(cols, ("original",)), clip=True, normalise=True)
        del original, synthetic, control
    with _Timer(rows, "jit warm-up"):
        kneighbors(s.take(np.arange(min(10, n))), o, metric, 1, backend="numba")
    with _Timer(rows, "knn k=1 syn->orig"):
        nb1 = kneighbors(s, o, metric, 1, backend="numba")
    with _Timer(rows, "knn k=2 orig->orig excl_self"):
        kneighbors(o, o, metric, 2, exclude_self=True, backend="numba")
    extra = {"mean_dcr": float(nb1.distances[:, 0].mean()),
             "zero_share": float((nb1.distances[:, 0] == 0).mean())}
    if n <= brute_max:
        with _Timer(rows, "numpy brute force k=1 syn->orig"):
            ref = kneighbors(s, o, metric, 1, backend="numpy")
        extra["identical_to_brute_force"] = bool(
            ref.distances.tobytes() == nb1.distances.tobytes() and np.array_equal(ref.indices, nb1.indices))
    return {"rows": rows, "extra": extra}


def worker_metrics(n: int, case: str, metrics: list[str]) -> dict:
    import synthguard

    rows: list[dict] = []
    with _Timer(rows, "data"):
        original, synthetic, control = _data(n, case)
    with _Timer(rows, "evaluate(total)"):
        report = synthguard.evaluate(original, synthetic, control, metrics=metrics, seed=0)
    extra = {}
    for name in metrics:
        entry = report[name]
        rows.append({"item": f"  {name}", "wall": entry.get("seconds"), "cpu": None, "peak_mib": None})
        extra[name] = entry.get("status")
        if entry.get("status") == "ok":
            extra[f"{name}.value"] = (entry.get("result") or {}).get("value")
    return {"rows": rows, "extra": extra}


def _run(args: argparse.Namespace, n: int, case: str, part: str) -> dict:
    cmd = [sys.executable, __file__, "--worker", part, "--size", str(n), "--case", case,
           "--brute-max", str(args.brute_max), "--metrics", ",".join(args.metrics)]
    env = dict(os.environ)
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        return {"error": (out.stderr or out.stdout).strip().splitlines()[-1:], "rows": []}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _fmt(v: float | None, spec: str) -> str:
    return f"{'-':>9}" if v is None else format(v, spec)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated row counts")
    ap.add_argument("--cases", default="realistic,leaky", help="realistic and/or leaky")
    ap.add_argument("--parts", default="engine,metrics", help="engine and/or metrics")
    ap.add_argument("--metrics", default=",".join(METRICS), help="metrics timed through synthguard.evaluate")
    ap.add_argument("--brute-max", type=int, default=20_000, help="largest size also run with the NumPy brute force")
    ap.add_argument("--json", help="also write all results to this JSON file")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--size", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--case", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.metrics = [m for m in args.metrics.split(",") if m]
    if args.worker == "engine":
        print(json.dumps(worker_engine(args.size, args.case, args.brute_max)))
        return
    if args.worker == "metrics":
        print(json.dumps(worker_metrics(args.size, args.case, args.metrics)))
        return

    print(f"synthguard engine benchmark: {os.cpu_count()} cores, python {sys.version.split()[0]}")
    print(f"{'rows':>9} {'case':<10} {'step':<34} {'wall s':>9} {'cpu s':>9} {'peak MiB':>9}")
    results = []
    for n in (int(x) for x in args.sizes.split(",")):
        for case in args.cases.split(","):
            for part in args.parts.split(","):
                res = _run(args, n, case, part)
                results.append({"rows": n, "case": case, "part": part, **res})
                if "error" in res:
                    print(f"{n:>9} {case:<10} {part} FAILED: {res['error']}")
                for r in res["rows"]:
                    print(f"{n:>9} {case:<10} {r['item']:<34} {_fmt(r['wall'], '9.2f')} "
                          f"{_fmt(r['cpu'], '9.2f')} {_fmt(r['peak_mib'], '9.0f')}", flush=True)
                for key, val in res.get("extra", {}).items():
                    print(f"{'':>9} {'':<10}   {key} = {val}")
                brute = {r["item"]: r["wall"] for r in res["rows"]}
                if "numpy brute force k=1 syn->orig" in brute:
                    ratio = brute["numpy brute force k=1 syn->orig"] / max(brute["knn k=1 syn->orig"], 1e-9)
                    print(f"{'':>9} {'':<10}   numba speed-up over the numpy brute force: {ratio:.1f}x")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
