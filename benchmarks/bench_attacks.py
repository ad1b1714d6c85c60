"""Benchmarks of synthguard.attacks (not run by CI).

1. Groundhog shadow modelling: 200 shadow datasets + 200 test datasets of 1,000 rows (Raw and
   IndependentMarginals generators), one target; generation, training and testing timed apart.
2. ``closest_distance_mia`` (fixed files) on 100,000 original + 100,000 control rows against a
   100,000-row Gaussian-copula release.

TAPAS (the reference) is not on PyPI and cannot be installed here (no network besides package
registries), so no side-by-side run is possible; the spec's own TAPAS timings are quoted in
``benchmarks/README_attacks.md`` for scale.

Run: ``/work/venv/bin/python benchmarks/bench_attacks.py [--quick]``
"""

from __future__ import annotations

import argparse
import resource
import time

from synthguard.attacks import (
    AuxiliaryDataKnowledge,
    BlackBoxKnowledge,
    GroundhogAttack,
    TargetedMIA,
)
from synthguard.demo import DEMO_METADATA, make_population
from synthguard.generators import GaussianCopula, IndependentMarginals, Raw
from synthguard.metrics.privacy.closest_distance_mia import closest_distance_mia
from synthguard.registry import Context


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_groundhog(n_shadow: int, n_rows: int) -> None:
    pop = make_population(max(6 * n_rows, 4000), seed=0)
    for gen in (Raw(), IndependentMarginals()):
        tm = TargetedMIA(AuxiliaryDataKnowledge(pop, num_training_records=n_rows, seed=0),
                         BlackBoxKnowledge(gen, n_rows), "auto:1", metadata=DEMO_METADATA, seed=0)
        view = tm.view(0)
        t0 = time.perf_counter()
        view.generate_training_samples(n_shadow)
        view.generate_test_samples(n_shadow)
        t_gen = time.perf_counter() - t0
        t0 = time.perf_counter()
        att = GroundhogAttack().train(view, num_samples=n_shadow)
        t_train = time.perf_counter() - t0
        t0 = time.perf_counter()
        summary = view.test(att, num_samples=n_shadow)
        t_test = time.perf_counter() - t0
        m = summary.metrics(n_boot=200)
        print(f"groundhog {type(gen).__name__:22s} {n_shadow} shadow + {n_shadow} test datasets x "
              f"{n_rows} rows: generate {t_gen:6.2f} s, train {t_train:6.2f} s, test {t_test:6.2f} s "
              f"(attack total {t_train + t_test:6.2f} s); AUC {m['auc']:.3f} "
              f"CI [{m['auc_ci'][0]:.3f}, {m['auc_ci'][1]:.3f}]; peak RSS {peak_mb():.0f} MB")


def bench_cd_mia(n: int) -> None:
    pop = make_population(2 * n, seed=1)
    original, control = pop.iloc[:n].reset_index(drop=True), pop.iloc[n:].reset_index(drop=True)
    t0 = time.perf_counter()
    synthetic = GaussianCopula(seed=0).fit(original).generate(n)
    t_gen = time.perf_counter() - t0
    ctx = Context.from_frames(original, synthetic, control, DEMO_METADATA, seed=0)
    ctx = ctx.for_metric(closest_distance_mia.spec)
    closest_distance_mia(ctx, max_rows=1000, n_boot=20)  # warm-up (numba compile)
    t0 = time.perf_counter()
    res = closest_distance_mia(ctx, max_rows=None)
    t = time.perf_counter() - t0
    print(f"closest_distance_mia {n} original + {n} control vs {n} synthetic rows: {t:6.2f} s "
          f"(copula generation {t_gen:.1f} s); AUC {res.value:.4f} CI [{res.ci[0]:.4f}, {res.ci[1]:.4f}]"
          f"; peak RSS {peak_mb():.0f} MB")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    a = ap.parse_args()
    if a.quick:
        bench_groundhog(20, 200)
        bench_cd_mia(5_000)
    else:
        bench_groundhog(200, 1_000)
        bench_cd_mia(100_000)
