"""False alarms and power of the disclosure family's members-vs-control evidence (issue 12).

Each real table of ../shared/data (acs12, anes96, diabetes_raw, nhefs) is split with a seed into
original (training) / control / fresh = 40 / 30 / 30 % (``synthguard.calibration``). Releases: the
fresh part (the null: a perfect generator), and the fresh part with a share of the training
records copied in (``leaky_release``: exact copies replacing fresh rows).
Every run evaluates the nine disclosure metrics together (Holm across their tests, as inside the
privacy preset) and counts, per metric, the runs reading high or medium.

    python benchmarks/disclosure_evidence.py --seeds 5                 # ~2 min on 2 busy cores
    python benchmarks/disclosure_evidence.py --seeds 15 --shares 0,0.05,0.3 --keys fine

``--keys fine`` gives replicated_uniques and disco more quasi-identifiers (and disco denom_lim=1),
under which copied records stay unique (see docs/disclosure.md).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import pandas as pd

import synthguard

DATA = Path(os.environ.get("SYNTHGUARD_SHARED_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
SPECS = {
    "acs12": dict(cols=None, qi=["age", "gender", "race", "edu", "married"],
                  sens=["employment", "disability"],
                  fine=["age", "gender", "race", "edu", "married", "hrs_work", "birth_qrtr", "citizen", "lang"]),
    "anes96": dict(cols=None, qi=["age", "educ", "income"], sens=["vote", "PID"],
                   fine=["age", "educ", "income", "TVnews", "selfLR", "ClinLR"]),
    "diabetes_raw": dict(cols=None, qi=["age", "sex", "bmi"], sens=["s4"], fine=["age", "sex", "bmi", "bp"]),
    "nhefs": dict(cols=["sex", "age", "race", "education", "marital", "income", "hbp", "diabetes", "sbp",
                        "dbp", "wt71", "smokeintensity"],
                  qi=["sex", "age", "race", "education", "marital"], sens=["hbp", "diabetes"],
                  fine=["sex", "age", "race", "education", "marital", "income", "sbp", "dbp"]),
}
METRICS = ["new_row_synthesis", "cap", "disclosure_protection", "dcr_overfitting_protection",
           "replicated_uniques", "disco", "dcr_baseline_protection", "k_anonymity", "l_diversity"]


def split(name: str, seed: int):
    from synthguard.calibration import calibration_split

    df = pd.read_csv(DATA / f"{name}.csv")
    spec = SPECS[name]
    if spec["cols"]:
        df = df[spec["cols"]]
    parts = calibration_split(df, seed)
    return (parts["original"], parts["control"], parts["fresh"],
            {"quasi_identifiers": spec["qi"], "sensitive": spec["sens"]})


def inject(fresh: pd.DataFrame, original: pd.DataFrame, share: float, seed: int) -> pd.DataFrame:
    from synthguard.calibration import leaky_release

    return leaky_release(fresh, original, share, seed)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--shares", default="0,0.05,0.3", help="shares of exact training copies (0 = null)")
    ap.add_argument("--keys", choices=("metadata", "fine"), default="metadata")
    args = ap.parse_args()
    shares = [float(s) for s in args.shares.split(",")]
    t0 = time.time()
    for share in shares:
        alarms = {m: 0 for m in METRICS}
        raw = {m: 0 for m in METRICS}
        verdict_alarm, runs = 0, 0
        for name, spec in SPECS.items():
            cfg = {"metrics": {m: None for m in METRICS}}
            if args.keys == "fine":
                cfg["metrics"]["replicated_uniques"] = {"quasi_identifiers": spec["fine"]}
                cfg["metrics"]["disco"] = {"quasi_identifiers": spec["fine"], "denom_lim": 1}
            for seed in range(args.seeds):
                original, control, fresh, meta = split(name, seed)
                rel = inject(fresh, original, share, seed) if share else fresh
                rep = synthguard.evaluate(original, rel, control, meta, config=cfg, seed=seed)
                runs += 1
                verdict_alarm += rep.verdict.level in ("high", "medium")
                for m in METRICS:
                    res = rep.result(m)
                    alarms[m] += res.risk_level in ("high", "medium")
                    ev = res.evidence
                    raw[m] += ev is not None and ev.drives_verdict and ev.p_value < 0.05
        what = "fresh release (null)" if share == 0 else f"{100 * share:g} % of training records copied"
        print(f"\n{what}: {runs} runs ({len(SPECS)} tables x {args.seeds} seeds), keys={args.keys}")
        print(f"  {'metric':30s} {'high/medium (Holm)':>20s} {'unadjusted p<0.05':>20s}")
        for m in METRICS:
            print(f"  {m:30s} {alarms[m]:>14d} / {runs:<3d} {raw[m]:>14d} / {runs:<3d}")
        print(f"  {'verdict (these nine only)':30s} {verdict_alarm:>14d} / {runs:<3d}")
    print(f"\n{time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
