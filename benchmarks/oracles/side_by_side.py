"""PETsARD 1.10.1 and synthguard side by side on one public dataset: the same notebook code, only the
import line differs. Run once per implementation, each with its own Python, then merge::

    /work/venvs/petsard/bin/python benchmarks/oracles/side_by_side.py --impl petsard -o /tmp/p.json
    PYTHONPATH=src .venv/bin/python benchmarks/oracles/side_by_side.py --impl synthguard -o /tmp/s.json
    python benchmarks/oracles/side_by_side.py --merge /tmp/p.json /tmp/s.json

Each evaluator is timed from ``Evaluator(...)`` to the returned dict (wall clock, one run, after a
warm-up call of the same evaluator that imports libraries and compiles numba kernels).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "oracles"))

FLOW = {  # name: (method, params) -- the PETsARD 1.10 quickstart evaluators
    "quality": ("default", {}),
    "diagnostic": ("sdmetrics-diagnosticreport", {}),
    "singling out": ("anonymeter-singlingout", {"n_attacks": 500}),
    "linkability": ("anonymeter-linkability", {"aux_cols": [["age", "gender", "race", "edu"],
                                                            ["married", "citizen", "lang", "hrs_work"]]}),
    "inference": ("anonymeter-inference", {"secret": "income"}),
    "ML utility (classification)": ("mlutility-classification",
                                    {"target": "gender", "experiment_design": "dual_model_control"}),
    "ML utility (cluster, k=4)": ("mlutility-cluster", {"n_clusters": 4}),
}


def run(impl: str, data_dir: Path) -> dict:
    if impl == "petsard":
        from petsard.evaluator import Evaluator
    else:
        from synthguard.compat.petsard.evaluator import Evaluator
    from petsard_cases import load_case

    d = load_case("acs12", data_dir)
    out = {}
    for name, (method, params) in FLOW.items():
        for warm in (True, False):
            data = {k: v.copy() for k, v in d.items()}
            t0 = time.perf_counter()
            ev = Evaluator(method, **params)
            ev.create()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = ev.eval(data)
            secs = time.perf_counter() - t0
            if warm:
                continue  # the first call imports libraries / compiles numba kernels: time the second
            break
        g = res["global"]
        out[name] = {"seconds": round(secs, 3), "columns": [str(c) for c in g.columns],
                     "rows": json.loads(g.to_json(orient="records"))}
    return out


def merge(p: dict, s: dict) -> str:
    lines = ["| evaluator | number | PETsARD 1.10.1 | synthguard | PETsARD s | synthguard s |",
             "|---|---|---|---|---|---|"]
    for name in FLOW:
        a, b = p[name], s[name]
        if "metric" in a["columns"]:
            for ra, rb in zip(a["rows"], b["rows"], strict=False):
                lines.append(f"| {name} | {ra['metric']} (ori / syn) | {ra['ori']} / {ra['syn']} | "
                             f"{rb['ori']} / {rb['syn']} | | |")
            lines[-len(a["rows"])] += ""
        else:
            keys = ["Score"] if "Score" in a["columns"] else ["risk", "attack_rate", "control_rate"]
            for k in keys:
                lines.append(f"| {name} | {k} | {a['rows'][0][k]} | {b['rows'][0][k]} | | |")
        lines.append(f"| {name} | **time** | | | {a['seconds']:.2f} | {b['seconds']:.2f} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--impl", choices=["petsard", "synthguard"])
    ap.add_argument("-o", "--out")
    ap.add_argument("--merge", nargs=2)
    ap.add_argument("--data", default=None)
    a = ap.parse_args()
    if a.merge:
        print(merge(json.loads(Path(a.merge[0]).read_text()), json.loads(Path(a.merge[1]).read_text())))
        return
    data = Path(a.data) if a.data else next(p for p in (REPO.parent / "shared" / "data",
                                                         REPO.parents[1] / "shared" / "data") if p.exists())
    res = run(a.impl, data)
    text = json.dumps(res, indent=1)
    if a.out:
        Path(a.out).write_text(text)
    else:
        print(text)


if __name__ == "__main__":
    main()
