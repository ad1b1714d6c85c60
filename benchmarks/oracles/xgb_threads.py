"""XGBoost thread count in the PETsARD ML utility: the same numbers, the wall time under load.

    PYTHONPATH=src python benchmarks/oracles/xgb_threads.py
"""

import sys
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "oracles"))

from petsard_cases import classification_data, load_case  # noqa: E402

from synthguard.compat.petsard.utility import petsard_ml_utility  # noqa: E402

warnings.simplefilter("ignore")
data = next(p for p in (REPO.parent / "shared" / "data", REPO.parents[1] / "shared" / "data") if p.exists())
d = classification_data(load_case("nhefs", data), "death")
petsard_ml_utility(d["ori"], d["syn"], d["control"], task="classification", target="death")  # warm-up
for n_jobs in (1, -1, 1, -1):
    t = time.perf_counter()
    r = petsard_ml_utility(d["ori"], d["syn"], d["control"], task="classification", target="death",
                           n_jobs=n_jobs)
    print(f"n_jobs={n_jobs:>2}: {time.perf_counter() - t:6.2f} s  {r.rows()[:2]}")
