"""synthguard's SynEval-style PrivacyEvaluator on a public dataset, timed (for docs/migrate-syneval.md).

    PYTHONPATH=src python benchmarks/oracles/syneval_run.py

SynEval itself is not on PyPI and downloads Flair/spaCy models at run time, so it cannot run here;
the guide lists what SynEval's code would report differently.
"""

import json
import sys
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "oracles"))

from petsard_cases import load_case  # noqa: E402

from synthguard import PrivacyEvaluator  # noqa: E402  (SynEval: from evaluation.privacy import ...)

warnings.simplefilter("ignore")
DATA = next(p for p in (REPO.parent / "shared" / "data", REPO.parents[1] / "shared" / "data") if p.exists())
d = load_case("acs12", DATA)
metadata = {"columns": {c: {"sdtype": "numerical" if d["ori"][c].dtype.kind in "if" else "categorical"}
                        for c in d["ori"].columns}}
for _warm in (True, False):  # the first call imports and compiles; time the second
    t0 = time.perf_counter()
    evaluator = PrivacyEvaluator(synthetic_data=d["syn"], original_data=d["ori"], metadata=metadata,
                                 selected_metrics=["exact_matches", "membership_inference",
                                                   "tabular_privacy", "anonymeter"],
                                 control_data=d["control"])
    res = evaluator.evaluate()
    secs = time.perf_counter() - t0
spm, an = res["structured_privacy_metrics"], res["anonymeter"]
print(json.dumps({
    "seconds": round(secs, 2),
    "exact_match_percentage": res["exact_matches"]["exact_match_percentage"],
    "exact_match_ci": res["exact_matches"].get("ci_percentage"),
    "distinguishability_auc": res["membership_inference"]["distinguishability_auc"],
    "IMS": {k: spm["IMS"].get(k) for k in ("ims_syn_train", "train_test_ims", "passed")},
    "DCR": {k: spm["DCR"].get(k) for k in ("syn_train_5pct", "train_train_5pct", "passed")},
    "NNDR": {k: spm["NNDR"].get(k) for k in ("syn_train_5pct", "train_train_5pct", "passed")},
    "overall_risk": an["overall_risk"],
    "anonymeter": {k: {"risk": v.get("risk"), "ci": v.get("ci")} for k, v in an.items()
                   if isinstance(v, dict) and "risk" in v},
}, indent=1, default=str))
