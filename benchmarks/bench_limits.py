"""Cost of the detection limits by injection (issue #31): one ``exact_matches`` run at scale.

The demo population of ``--rows`` people is split half training, half control; the release is the
first eighth of its Gaussian-copula sample. The run evaluates ``exact_matches`` only, so its time is
the copy join plus the verdict's detection limits (``run/limits.py``: 40 relabellings per leak size).
Prints process CPU and wall seconds and the detection limit; run it once with each tree to compare
(state the load, ``uptime``, with the numbers)::

    PYTHONPATH=src python benchmarks/bench_limits.py --rows 400000
    PYTHONPATH=<other tree>/src python benchmarks/bench_limits.py --rows 400000
"""

from __future__ import annotations

import argparse
import time

import synthguard
from synthguard.demo import make_demo


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=400_000, help="people in the demo population")
    args = ap.parse_args()
    d = make_demo(args.rows, seed=0)
    release = d["safe"].iloc[: args.rows // 8]
    cpu, wall = time.process_time(), time.perf_counter()
    rep = synthguard.evaluate(d["original"], release, d["control"], metrics=["exact_matches"], seed=0)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    ev = rep.result("exact_matches").evidence
    print(f"synthguard {synthguard.__file__}")
    print(f"{len(d['original'])} training, {len(d['control'])} control, {len(release)} release rows: "
          f"{cpu:.1f} s CPU, {wall:.1f} s wall; detection limit {ev.detection_limit!r}")


if __name__ == "__main__":
    main()
