"""Calibration of the risk levels on real data: false alarms on the nulls, power on every leak type.

Every public person-level table in ``../shared/data`` is split with a seed into original (training),
control and fresh (see :mod:`synthguard.calibration`). Release kinds (``kind[@size]``):

- ``fresh``: the fresh part itself, a perfect generator (the null: every alarm is a false alarm);
- ``mode_seeking``: fresh rows resampled towards common quasi-identifier combinations (a null too);
- ``exact@s``: ``s`` of the training records copied into fresh;
- ``near@s`` / ``near2@s``: near-copies (1 / 2 cells changed) as ``s`` of the *release*'s rows;
- ``rare@s``: copies of ``s`` of the training records, chosen among those unique on the
  quasi-identifiers;
- ``smote``: a SMOTE-like release (interpolation between training neighbours); ``smote@s``: ``s``
  of the training records leaked that way into fresh;
- ``mixture`` / ``mixture20``: an overfit Gaussian mixture with n/5 (n/20) components;
- ``kde@h``: training rows with Gaussian noise of ``h`` x the column sd;
- ``marginals`` / ``copula``: the built-in generators fitted on the original;
- ``person@s``: whole persons of a panel built from the table (2-4 rows each) copied;
- ``text@s``: fine-food reviews (the test file) with ``s`` of the training reviews near-verbatim
  (one word changed); ``text`` alone is its null. Text and person kinds run on their own data
  (once per seed, whatever ``--datasets``).

For each (table, kind) it prints runs, high, medium, inconclusive, low, the median share of
training records leaked (ground truth) and the median stated detection limit of the kind's leak
type; then the per-risk levels. Run::

    python benchmarks/calibration.py                 # the full table (5 tables x 6 seeds)
    python benchmarks/calibration.py --quick         # 2 seeds, the main kinds (~10 min on 2 cores)
    python benchmarks/calibration.py --seeds 15 --datasets acs12 --split equal --kinds fresh exact@0.05
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

DATA = Path(os.environ.get("SYNTHGUARD_SHARED_DATA")
            or Path(__file__).resolve().parents[2] / "shared" / "data")
DROP = {"hhs_breaches": ["Summary", "Number", "Name_of_Covered_Entity"]}
from synthguard.calibration import PUBLIC_TABLE_METADATA as META  # noqa: E402

SPLITS = {"standard": (0.4, 0.3, 0.3), "equal": (0.4, 0.4, 0.2)}
FULL_KINDS = ("fresh", "mode_seeking", "exact@0.005", "exact@0.01", "exact@0.02", "exact@0.05",
              "exact@0.1", "exact@0.3", "near@0.05", "near@0.1", "near@0.3", "near2@0.05",
              "rare@0.01", "rare@0.05", "smote", "smote@0.05", "mixture", "mixture20", "kde@0.5",
              "kde@1", "marginals", "copula", "person", "person@0.05", "text", "text@0.05")
QUICK_KINDS = ("fresh", "mode_seeking", "exact@0.01", "exact@0.05", "near@0.05", "rare@0.05",
               "smote", "mixture", "person", "person@0.05", "text", "text@0.05")
LEAK_TYPE = {"exact": "exact", "near": "near", "near2": "near", "rare": "rare",
             "smote": "neighbourhood", "mixture": "neighbourhood", "mixture20": "neighbourhood",
             "kde": "neighbourhood", "person": "person", "text": "text"}
PANEL_FROM = "anes96"
TEXT_SIZES = (800, 800, 400)


def load(name: str) -> pd.DataFrame:
    return pd.read_csv(DATA / f"{name}.csv").drop(columns=DROP.get(name, []))


def _no_leak(release: pd.DataFrame, n: int):
    from synthguard.calibration import LeakedRelease

    return LeakedRelease(release, np.zeros(n, bool), None, "null")


def tabular(dataset: str, kind: str, seed: int, split: str) -> tuple[dict, object, dict]:
    """(parts, LeakedRelease, evaluate keywords) of a tabular kind."""
    from synthguard.calibration import build_release, calibration_split, smote_release

    parts = calibration_split(load(dataset), seed, SPLITS[split])
    name, _, size = kind.partition("@")
    share = float(size) if size else None
    qi = META[dataset]["quasi_identifiers"]
    if name in ("exact", "rare"):
        leak = build_release(name, parts, seed, share=share, quasi_identifiers=qi)
    elif name in ("near", "near2"):
        leak = build_release("near", parts, seed, share=share, of="release",
                             n_cells=1 if name == "near" else 2)
    elif name == "smote" and share is not None:
        leak = smote_release(parts["original"], seed=seed, base=parts["fresh"], share=share)
    elif name == "mixture20":
        leak = build_release("mixture", parts, seed, per_component=20)
    elif name == "kde":
        leak = build_release("kde", parts, seed, bandwidth=share)
    else:
        leak = build_release(name, parts, seed, quasi_identifiers=qi)
    return parts, leak, {"metadata": META[dataset]}


def person(kind: str, seed: int, split: str) -> tuple[dict, object, dict]:
    from synthguard.calibration import person_copies, person_panel
    from synthguard.data.entities.calibration import entity_calibration_split

    panel = person_panel(load(PANEL_FROM), seed=0)
    p = entity_calibration_split(panel, "person_id", seed=seed, fractions=SPLITS[split])
    parts = {k: v.events for k, v in p.items()}
    _, _, size = kind.partition("@")
    n_persons = parts["original"]["person_id"].nunique()
    leak = (person_copies(parts["fresh"], parts["original"], float(size), seed) if size
            else _no_leak(parts["fresh"], n_persons))
    return parts, leak, {"metadata": {"quasi_identifiers": META[PANEL_FROM]["quasi_identifiers"]},
                         "entity_key": "person_id", "sequence_key": "visit"}


def text(kind: str, seed: int) -> tuple[dict, object, dict]:
    from synthguard.calibration import calibration_split, text_near_copies

    train = pd.read_csv(DATA / "fine_foods_reviews_train.csv")[["review"]]
    test = pd.read_csv(DATA / "fine_foods_reviews_test.csv")[["review"]]
    a, b, c = TEXT_SIZES
    p = calibration_split(train, seed, (a, b, len(train) - a - b))
    parts = {"original": p["original"], "control": p["control"],
             "fresh": test.sample(c, random_state=seed).reset_index(drop=True)}
    _, _, size = kind.partition("@")
    leak = (text_near_copies(parts["fresh"], parts["original"], float(size), seed, column="review")
            if size else _no_leak(parts["fresh"], len(parts["original"])))
    return parts, leak, {"metadata": {"text_columns": ["review"]}}


def one_run(args: tuple) -> dict:
    import synthguard

    dataset, seed, kind, split, metrics = args
    base = kind.partition("@")[0]
    if base == "person":
        parts, leak, kw = person(kind, seed, split)
    elif base == "text":
        parts, leak, kw = text(kind, seed)
    else:
        parts, leak, kw = tabular(dataset, kind, seed, split)
    t0 = time.perf_counter()
    rep = synthguard.evaluate(parts["original"], leak.release, control=parts["control"],
                              metrics=metrics, seed=seed, retest_columns=0, **kw)
    v = rep.verdict.to_dict()
    leak_type = LEAK_TYPE.get(base)
    limits = v.get("detection_limits") or {}
    stated = (limits.get(leak_type) or {}).get("value") if leak_type else None
    if stated is None and not limits and v.get("detection_limit"):
        stated = v["detection_limit"].get("value")  # the verdict before per-type limits
    risks = {r["risk"]: r["level"] for r in v.get("risks", [])}
    return {"dataset": dataset, "seed": seed, "kind": kind, "split": split, "verdict": v["level"],
            "risks": risks, "leak_share": leak.share, "leak_type": leak_type, "limit": stated,
            "limits": {t: d.get("value") for t, d in limits.items()},
            "levels": {m: rep.result(m).risk_level for m in rep.metrics if rep.result(m) is not None},
            "n_original": len(parts["original"]), "seconds": time.perf_counter() - t0}


def tasks(datasets: list[str], seeds: int, kinds: list[str], split: str, metrics) -> list[tuple]:
    out = []
    for k in kinds:
        base = k.partition("@")[0]
        if base == "person":
            out += [(f"{PANEL_FROM}-panel", s, k, split, metrics) for s in range(seeds)]
        elif base == "text":
            out += [("fine_foods_reviews", s, k, split, metrics) for s in range(seeds)]
        else:
            out += [(d, s, k, split, metrics) for d in datasets for s in range(seeds)]
    return out


def _pct(values: list) -> str:
    v = [x for x in values if x is not None and np.isfinite(x)]
    return f"{100 * statistics.median(v):.2g} %" if v else "-"


def table(rows: list[dict]) -> str:
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        groups[(r["dataset"], r["kind"])].append(r)
    by_kind: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_kind[r["kind"]].append(r)
    out = ["| table | release | runs | high | medium | inconclusive | low | leaked (median) | "
           "median stated limit |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]

    def line(name: str, kind: str, rs: list[dict]) -> str:
        c = defaultdict(int)
        for r in rs:
            c[r["verdict"]] += 1
        return (f"| {name} | {kind} | {len(rs)} | {c['high']} | {c['medium']} | "
                f"{c['inconclusive']} | {c['low']} | {_pct([r['leak_share'] for r in rs])} | "
                f"{_pct([r['limit'] for r in rs])} |")

    for (name, kind), rs in groups.items():
        out.append(line(name, kind, rs))
    out += ["", "All tables together:", "", out[0], out[1]]
    out += [line("all", kind, rs) for kind, rs in by_kind.items()]
    risks = sorted({k for r in rows for k in r["risks"]})
    if risks:
        out += ["", "Per risk (high / medium / inconclusive / low):", "",
                "| release | " + " | ".join(risks) + " |", "| --- |" + " --- |" * len(risks)]
        for kind, rs in by_kind.items():
            cells = []
            for risk in risks:
                lv = [r["risks"].get(risk) for r in rs]
                cells.append(" / ".join(str(lv.count(x)) for x in
                                        ("high", "medium", "inconclusive", "low")))
            out.append(f"| {kind} | " + " | ".join(cells) + " |")
    else:
        out += ["", "(the verdict states no per-risk levels yet)"]
    metrics = sorted({m for r in rows for m in r["levels"]})
    out += ["", "Alarms (high or medium) per metric:", "",
            "| metric | " + " | ".join(by_kind) + " |", "| --- |" + " --- |" * len(by_kind)]
    for m in metrics:
        cells = []
        for rs in by_kind.values():
            n = sum(1 for r in rs if m in r["levels"])
            a = sum(1 for r in rs if r["levels"].get(m) in ("high", "medium"))
            cells.append(f"{a}/{n}" if n else "-")
        out.append(f"| {m} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", nargs="+", default=list(META))
    ap.add_argument("--seeds", type=int, default=None, help="default 6 (2 with --quick)")
    ap.add_argument("--kinds", nargs="+", default=None, help="default: every kind (see above)")
    ap.add_argument("--split", choices=list(SPLITS), default="standard",
                    help="standard 0.4/0.3/0.3, equal 0.4/0.4/0.2")
    ap.add_argument("--quick", action="store_true", help="2 seeds and the main kinds")
    ap.add_argument("--metrics", nargs="+", default=None,
                    help="default: the privacy preset without distinguishability (inform only)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", type=Path, default=None, help="also write every run here")
    a = ap.parse_args(argv)
    from synthguard.run.config import PRESETS

    metrics = a.metrics or [m for m in PRESETS["privacy"] if m != "distinguishability"]
    seeds = a.seeds or (2 if a.quick else 6)
    kinds = a.kinds or list(QUICK_KINDS if a.quick else FULL_KINDS)
    todo = tasks(a.datasets, seeds, kinds, a.split, metrics)
    t0 = time.perf_counter()
    if a.jobs == 1:
        rows = [one_run(t) for t in todo]
    else:
        with ProcessPoolExecutor(a.jobs) as pool:
            rows = list(pool.map(one_run, todo))
    print(table(rows))
    print(f"\n{len(rows)} runs in {time.perf_counter() - t0:.0f} s wall ({a.split} split)")
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
