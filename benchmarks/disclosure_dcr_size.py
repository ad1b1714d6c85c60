"""dcr_overfitting_protection on a fresh sample against a training table 4x its control (issue 12).

    python benchmarks/disclosure_dcr_size.py 1000000 250000    # 269 s on 2 busy cores
    python benchmarks/disclosure_dcr_size.py 100000 25000      # 81 s

Training, control and release are independent samples of the ``_gen.py`` population: the release
exposes nobody. The reference share of synthetic rows closer to training is ~0.8 (a bigger table is
closer by chance); the per-record evidence (records won) must not alarm.
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import synthguard  # noqa: E402
from _gen import make_table  # noqa: E402

n_o, n_c = int(sys.argv[1]), int(sys.argv[2])
o, c, f = make_table(n_o, seed=1), make_table(n_c, seed=2), make_table(n_o, seed=3)
t = time.time()
r = synthguard.evaluate(o, f, c, metrics=["dcr_overfitting_protection"], seed=0)
res = r.result("dcr_overfitting_protection")
ev = res.evidence
print(n_o, n_c, f"{time.time() - t:.0f}s", "level", res.risk_level, "reference", res.reference_level,
      "raw closer share", res.details["synthetic_data_percentages"]["closer_to_training"],
      "won training / control", ev.member, ev.non_member, "CI", ev.effect_ci, "p", ev.p_value, ev.test,
      res.details["evidence_won_records"], flush=True)
