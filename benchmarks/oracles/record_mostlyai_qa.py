"""Record mostlyai-qa 1.10's accuracy on every table of ../shared/data (re-runnable).

    /work/venvs/mostlyai-qa/bin/python benchmarks/oracles/record_mostlyai_qa.py [--data ../shared/data]

Writes ``tests/oracles/recorded/mostlyai_qa_accuracy.json``, read by
``tests/oracles/test_mostlyai_accuracy_conformance.py``. mostlyai-qa is a throwaway, recording-only
dependency (its own venv: it pins torch and transformers, which its accuracy code never uses); it is
never imported by ``src/synthguard`` or by a test.

What runs is the accuracy part of ``mostlyai.qa.report`` for a flat table, step by step with
mostlyai-qa's own functions: ``prepare_data_for_accuracy`` (sampling nothing, dtypes harmonised),
``bin_data(ori, bins=10)`` then ``bin_data(syn, bins=ori_bins)``, ``calculate_univariates``,
``calculate_bivariates``, ``calculate_trivariates`` (its random triple sample, NumPy's global seed
fixed) and the means of ``reporting._calculate_metrics``. Two deviations, both stated in the JSON:

* ``ori`` is the training table alone. ``report()`` pools training and holdout into ``ori`` when a
  holdout is given; synthguard compares the release with the original and keeps the holdout (its
  control) for the ceiling, so the numbers compared are those of ``report(syn, trn)``.
* the text-token sampler is switched off (it needs the GPT-2 tokenizer from ``transformers``): the
  columns its heuristic (> 5 % of rows with a unique value) calls text are binned as categories,
  as synthguard does; they are listed under ``text_heuristic_columns``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("mostlyai_inputs", REPO / "tests" / "oracles" / "mostlyai_inputs.py")
mi = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mi)


def _f(x):
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def run_accuracy(trn: pd.DataFrame, syn: pd.DataFrame, seed: int) -> dict:
    from mostlyai.qa import _accuracy as acc
    from mostlyai.qa import _sampling as smp
    from mostlyai.qa._common import NXT_COLUMN, TGT_COLUMN_PREFIX

    smp.sample_text_tokens = lambda df: df  # see the module docstring
    np.random.seed(seed)  # noqa: NPY002  (mostlyai-qa samples its triples from the global generator)
    ori = smp.prepare_data_for_accuracy(df_tgt=trn, setup="1:1")
    syn_p = smp.prepare_data_for_accuracy(df_tgt=syn, setup="1:1", ori_dtypes=ori.dtypes.to_dict())
    ori_bin, bins = acc.bin_data(df=ori, bins=10)
    syn_bin, _ = acc.bin_data(df=syn_p, bins=bins)
    uni = acc.calculate_univariates(ori_bin, syn_bin)
    biv = acc.calculate_bivariates(ori_bin, syn_bin)
    triv = acc.calculate_trivariates(ori_bin, syn_bin)
    biv = biv.loc[biv.type != NXT_COLUMN]
    levels = {"univariate": uni, "bivariate": biv, "trivariate": triv}
    out = {k: _f(v.accuracy.mean()) if len(v) else None for k, v in levels.items()}
    out.update({f"{k}_max": _f(v.accuracy_max.mean()) if len(v) else None for k, v in levels.items()})
    out["overall"] = float(np.mean([out[k] for k in levels if out[k] is not None]))
    out["overall_max"] = float(np.mean([out[f"{k}_max"] for k in levels if out[k] is not None]))
    out["counts"] = {"univariate": len(uni), "bivariate": len(biv) // 2, "trivariate": len(triv)}
    prefix = len(TGT_COLUMN_PREFIX)
    out["columns"] = {
        r.column[prefix:]: {"accuracy": float(r.accuracy), "accuracy_max": float(r.accuracy_max),
                            "bins": int(ori_bin[r.column].nunique())}
        for r in uni.itertuples()}
    out["kinds"] = {c[prefix:]: ("datetime" if pd.api.types.is_datetime64_any_dtype(ori[c]) else
                                 "numeric" if pd.api.types.is_numeric_dtype(ori[c]) else "categorical")
                    for c in ori.columns}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--out", type=Path, default=mi.ORACLE_DIR / "mostlyai_qa_accuracy.json")
    args = ap.parse_args()
    from importlib.metadata import version

    from mostlyai.qa._sampling import is_text_heuristic

    result = {"library": "mostlyai-qa", "version": version("mostlyai-qa"),
              "pandas": pd.__version__, "numpy": np.__version__,
              "recorded_with": "python benchmarks/oracles/record_mostlyai_qa.py --data ../shared/data",
              "deviations": ["ori = training table only (report(syn, trn) without a holdout)",
                             "text-token sampler off; heuristic text columns binned as categories"],
              "tables": {}}
    for name in mi.TABLES:
        split = mi.make_split(name, args.data)
        entry = {"rows": {k: len(v) for k, v in split.items()},
                 "text_heuristic_columns": [c for c in split["training"].columns
                                            if is_text_heuristic(split["training"][c])]}
        for k, release in enumerate(mi.RELEASES):
            t0 = time.perf_counter()
            entry[release] = run_accuracy(split["training"], split[release], seed=k)
            entry[release]["seconds"] = round(time.perf_counter() - t0, 2)
            print(f"{name:26s} {release:12s} overall {entry[release]['overall']:.4f} "
                  f"({entry[release]['seconds']} s)", flush=True)
        result["tables"][name] = entry
    args.out.write_text(json.dumps(result, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
