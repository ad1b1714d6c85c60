"""Inputs of the conformance oracles (shared by benchmarks/oracles/record_oracles.py and the tests).

Every case is built from a public table of ``../shared/data`` with a seed: the original and the
control are a seeded split, and the "synthetic" release mixes rows whose columns are shuffled
independently (marginals kept, no person) with near-copies of original rows (a leak), so every
risk is neither 0 nor 1.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

ORACLE_DIR = Path(__file__).parent / "recorded"

CASES = {
    # name: (csv, n_original, n_control, share of leaked near-copies, seed)
    "acs12": ("acs12.csv", 1000, 1000, 0.3, 0),
    "anes96": ("anes96.csv", 472, 472, 0.3, 1),
}

ANES_META = {"columns": {**{c: {"sdtype": "numerical"} for c in ("popul", "age", "logpopul")},
                         **{c: {"sdtype": "categorical"} for c in ("TVnews", "selfLR", "ClinLR", "DoleLR", "PID",
                                                                    "educ", "income", "vote")}}}
ACS_META = {"columns": {**{c: {"sdtype": "numerical"} for c in ("income", "hrs_work", "age", "time_to_work")},
                        **{c: {"sdtype": "categorical"} for c in ("employment", "race", "gender", "citizen", "lang",
                                                                   "married", "edu", "disability", "birth_qrtr")}}}
METADATA = {"acs12": ACS_META, "anes96": ANES_META}


def make_case(name: str, data_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``(original, synthetic, control)`` of case ``name`` (same seed, same frames)."""
    csv, n_ori, n_ctl, leak, seed = CASES[name]
    df = pd.read_csv(Path(data_dir) / csv)
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(df))
    ori = df.iloc[idx[:n_ori]].reset_index(drop=True)
    ctl = df.iloc[idx[n_ori:n_ori + n_ctl]].reset_index(drop=True)
    n_leak = int(round(leak * n_ori))
    shuffled = pd.DataFrame({c: rng.permutation(ori[c].to_numpy()) for c in ori.columns})
    copies = ori.iloc[rng.choice(n_ori, n_leak, replace=False)].reset_index(drop=True).copy()
    num = [c for c in copies.columns if pd.api.types.is_float_dtype(copies[c]) and copies[c].nunique() > 20]
    if num:  # near-copies: one numeric column nudged by 1 % on half the leaked rows
        c = num[0]
        m = rng.random(n_leak) < 0.5
        copies.loc[m, c] = copies.loc[m, c] * 1.01
    syn = pd.concat([shuffled.iloc[: n_ori - n_leak], copies], ignore_index=True)
    syn = syn.iloc[rng.permutation(len(syn))].reset_index(drop=True)
    return ori, syn, ctl
