"""Benchmark of ``membership_attacks``: each attack's time on 40k x 15 rows, peak memory on 1M rows.

    PYTHONPATH=src python benchmarks/bench_membership.py            # 40k rows per table
    PYTHONPATH=src python benchmarks/bench_membership.py --rows 1000000
    PYTHONPATH=src python benchmarks/bench_membership.py --calibration --seeds 5

``--calibration``: the ensemble on the calibration suite's releases (five tables of
``../shared/data``, split 0.4 / 0.3 / 0.3): per table and release kind, the runs whose max-T
p-value is below 0.05 (fresh = false alarms; near-copies at 10 % of the release, an n/20 Gaussian
mixture and a KDE of 1 column sd = power).

Each size runs in a fresh process (peak RSS is per process). Tables are the census-like 15-column
mixed tables of ``_gen.py`` (original, a release with 30 % copies and 20 % near-copies, control;
same size each); at
1M rows the metric scores 20k members and 20k non-members (``max_rows``), fits the classifier on
50k release and 50k reference rows (``max_fit_rows``), keeps 100k reference rows
(``max_reference_rows``): the subsamples are stated in the result's ``roles``.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _gen import make_leaky, make_table  # noqa: E402
from synthguard.metrics.membership.ensemble import membership_attacks  # noqa: E402
from synthguard.registry import Context  # noqa: E402


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


CAL_TABLES = ("acs12", "anes96", "diabetes_raw", "hhs_breaches", "nhefs")
CAL_KINDS = {"fresh": (None, {}), "near10": ("near", {"share": 0.1, "of": "release"}),
             "mixture20": ("mixture", {"per_component": 20}), "kde1": ("kde", {"bandwidth": 1.0})}


def calibration(seeds: int) -> None:
    import os

    import pandas as pd

    from synthguard.calibration import build_release, calibration_split

    data = Path(os.environ.get("SYNTHGUARD_SHARED_DATA")
                or Path(__file__).resolve().parents[2] / "shared" / "data")
    drop = {"hhs_breaches": ["Summary", "Number", "Name_of_Covered_Entity"]}
    totals: dict[str, list[int]] = {k: [0, 0] for k in CAL_KINDS}
    for name in CAL_TABLES:
        frame = pd.read_csv(data / f"{name}.csv").drop(columns=drop.get(name, []))
        for kind, (builder, kw) in CAL_KINDS.items():
            ps = []
            for seed in range(seeds):
                parts = calibration_split(frame, seed)
                if builder is None:
                    rel = parts["fresh"]
                else:
                    kw2 = dict(kw)
                    share = kw2.pop("share", None)
                    rel = build_release(builder, parts, seed, share=share, **kw2).release
                ctx = Context.from_frames(parts["original"], rel, parts["control"], seed=seed)
                ps.append(membership_attacks(ctx, n_perm=499).details["ensemble"]["p_value"])
            hits = sum(p < 0.05 for p in ps)
            totals[kind][0] += hits
            totals[kind][1] += len(ps)
            print(f"{name:13s} {kind:10s} {hits}/{len(ps)} significant; p = "
                  + ", ".join(f"{p:.3f}" for p in ps), flush=True)
    for kind, (h, n) in totals.items():
        print(f"all           {kind:10s} {h}/{n}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=40_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--calibration", action="store_true")
    ap.add_argument("--seeds", type=int, default=5)
    args = ap.parse_args()
    if args.calibration:
        calibration(args.seeds)
        return
    n = args.rows
    t0 = time.perf_counter()
    original = make_table(n, seed=1)
    control = make_table(n, seed=2)
    release = make_leaky(original, seed=3)
    ctx = Context.from_frames(original, release, control, seed=args.seed)
    ctx.encoded.block("original")  # encoding is shared with every metric: not charged to it
    t_data = time.perf_counter() - t0
    print(f"{n} rows x {original.shape[1]} columns per table; data + encoding {t_data:.1f} s; "
          f"peak RSS so far {peak_mb():.0f} MB")
    t0 = time.perf_counter()
    res = membership_attacks(ctx)
    wall = time.perf_counter() - t0
    d = res.details
    for name, a in d["attacks"].items():
        sec = a["seconds"]
        print(f"  {name:17s} {sec:7.2f} s   AUC {a['auc']:.3f}  TPR@1%FPR {a['tpr_at_fpr_0.01']:.3f}")
    print(f"  max-T ({d['ensemble']['n_perm']} relabellings) {d['ensemble']['seconds']:.2f} s; "
          f"p = {d['ensemble']['p_value']:.4f}")
    print(f"  epsilon lower bound {d['epsilon']['epsilon_lower']:.2f} ({d['epsilon']['attack']}); "
          f"tail advantage {d['advantage']['value']:.3f} ({d['advantage']['attack']})")
    print(f"  roles: {d['roles']['split']}; classifier: {d['roles']['classifier_fit']}")
    print(f"membership_attacks wall {wall:.1f} s; peak RSS {peak_mb():.0f} MB")


if __name__ == "__main__":
    main()
