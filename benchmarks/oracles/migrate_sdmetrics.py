"""SDMetrics' documented single-table privacy metrics and reports on acs12, run with SDMetrics 0.32
or with synthguard.compat.sdmetrics.

    /usr/bin/time -f "%e s wall, %U s user, %M KB" python benchmarks/oracles/migrate_sdmetrics.py --lib sdmetrics
    /usr/bin/time -f "%e s wall, %U s user, %M KB" python benchmarks/oracles/migrate_sdmetrics.py --lib synthguard

The code below the imports is the same for both (docs/migrate-sdmetrics.md). Prints one JSON line per metric.
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
    ap.add_argument("--lib", choices=("sdmetrics", "synthguard"), required=True)
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "acs12.csv"))
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    if a.lib == "sdmetrics":
        from sdmetrics.reports.single_table import DiagnosticReport, QualityReport
        from sdmetrics.single_table import (
            CategoricalCAP,
            DCRBaselineProtection,
            DCROverfittingProtection,
            DisclosureProtection,
            NewRowSynthesis,
        )
    else:
        from synthguard.compat.sdmetrics.reports.single_table import DiagnosticReport, QualityReport
        from synthguard.compat.sdmetrics.single_table import (
            CategoricalCAP,
            DCRBaselineProtection,
            DCROverfittingProtection,
            DisclosureProtection,
            NewRowSynthesis,
        )

    df = pd.read_csv(a.data)
    real = df.sample(frac=0.5, random_state=0)
    holdout = df.drop(real.index)
    shuffled = pd.DataFrame({c: real[c].sample(frac=1.0, random_state=i).to_numpy()  # each column on its own
                             for i, c in enumerate(real.columns)})
    synthetic = pd.concat([shuffled.iloc[:700], real.iloc[:300]], ignore_index=True)
    numerical = ("income", "hrs_work", "age", "time_to_work")
    metadata = {"columns": {c: {"sdtype": "numerical" if c in numerical else "categorical"} for c in df.columns}}

    def show(name, value):
        print(json.dumps({"lib": a.lib, "metric": name, "value": value}, default=float), flush=True)

    show("CategoricalCAP", CategoricalCAP.compute(real, synthetic, key_fields=["gender", "race", "married"],
                                                  sensitive_fields=["edu"]))
    show("DisclosureProtection", DisclosureProtection.compute_breakdown(
        real, synthetic, known_column_names=["age", "gender", "race"], sensitive_column_names=["edu"],
        continuous_column_names=["age"]))
    show("DCRBaselineProtection", DCRBaselineProtection.compute_breakdown(real, synthetic, metadata, None))
    show("DCROverfittingProtection", DCROverfittingProtection.compute_breakdown(real, synthetic, holdout, metadata,
                                                                                None))
    show("NewRowSynthesis", NewRowSynthesis.compute_breakdown(real, synthetic, metadata))
    for cls in (QualityReport, DiagnosticReport):
        report = cls()
        report.generate(real, synthetic, metadata, verbose=False)
        show(cls.__name__, {"score": report.get_score(),
                            "properties": dict(zip(*report.get_properties().to_dict(orient="list").values(), strict=True))})
    return 0


if __name__ == "__main__":
    sys.exit(main())
