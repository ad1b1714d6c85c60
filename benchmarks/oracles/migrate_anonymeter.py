"""The anonymeter notebook flow on acs12, run with anonymeter 1.1.0 or with synthguard.compat.anonymeter.

    /usr/bin/time -f "%e s wall, %U s user, %M KB" python benchmarks/oracles/migrate_anonymeter.py --lib anonymeter
    /usr/bin/time -f "%e s wall, %U s user, %M KB" python benchmarks/oracles/migrate_anonymeter.py --lib synthguard

The code below the import is the same for both (that is the point of the migration guide,
docs/migrate-anonymeter.md). Prints one JSON line per evaluation.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[2]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", choices=("anonymeter", "synthguard"), required=True)
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "acs12.csv"))
    ap.add_argument("--scale", type=int, default=1,
                    help="replicate the table this many times (income jittered by +-1 %% so rows stay distinct)")
    a = ap.parse_args()
    if a.lib == "anonymeter":
        from anonymeter.evaluators import (
            InferenceEvaluator,
            LinkabilityEvaluator,
            SinglingOutEvaluator,
        )
    else:
        from synthguard.compat.anonymeter import (
            InferenceEvaluator,
            LinkabilityEvaluator,
            SinglingOutEvaluator,
        )
    warnings.simplefilter("ignore")

    df = pd.read_csv(a.data)
    if a.scale > 1:
        import numpy as np

        rng = np.random.default_rng(0)
        parts = [df] + [df.assign(income=df["income"] * rng.uniform(0.99, 1.01, len(df))) for _ in range(a.scale - 1)]
        df = pd.concat(parts, ignore_index=True)
    ori = df.sample(frac=0.5, random_state=0)
    control = df.drop(ori.index)
    # a leaky "synthetic" release: half independent column shuffles, half copies of original rows
    shuffled = pd.DataFrame({c: ori[c].sample(frac=1.0, random_state=i).to_numpy()  # each column on its own
                             for i, c in enumerate(ori.columns)})
    half = len(ori) // 2
    syn = pd.concat([shuffled.iloc[:half], ori.iloc[:half]], ignore_index=True)

    def show(name, ev):
        res = ev.results()
        print(json.dumps({"lib": a.lib, "evaluation": name, "risk": round(ev.risk().value, 4),
                          "ci": [round(x, 4) for x in ev.risk().ci],
                          "attack_rate": round(res.attack_rate.value, 4),
                          "baseline_rate": round(res.baseline_rate.value, 4),
                          "control_rate": round(res.control_rate.value, 4),
                          "n_attacks": res.n_attacks_ori, "n_success": res.n_success},
                         default=lambda o: o.item()), flush=True)

    show("singling_out_univariate",
         SinglingOutEvaluator(ori=ori, syn=syn, control=control, n_attacks=500).evaluate(mode="univariate"))
    show("singling_out_multivariate",
         SinglingOutEvaluator(ori=ori, syn=syn, control=control, n_attacks=500, n_cols=4).evaluate(mode="multivariate"))
    aux_cols = (["age", "gender", "race", "edu", "married"], ["income", "employment", "hrs_work", "citizen"])
    show("linkability_k5", LinkabilityEvaluator(ori=ori, syn=syn, control=control, aux_cols=aux_cols,
                                                n_attacks=500, n_neighbors=5).evaluate(n_jobs=-2))
    for secret in ("edu", "married", "employment"):
        aux = [c for c in df.columns if c != secret]
        show(f"inference_{secret}", InferenceEvaluator(ori=ori, syn=syn, control=control, aux_cols=aux,
                                                       secret=secret, n_attacks=500).evaluate(n_jobs=-2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
