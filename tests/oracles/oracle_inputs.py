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


# ------------------------------------------------------------------ edge-case inputs (differential tests)
WORDS = ("alder", "birch", "cedar", "daphne", "elm", "fir")


def edge_frame(n: int, seed: int, *, numeric: int = 1, categorical: int = 1, datetime: int = 0,
               missing: float = 0.0, constant: tuple[object, ...] = ()) -> pd.DataFrame:
    """A small generated table for edge-case comparisons.

    ``numeric`` columns ``x0, x1...`` hold distinct unrounded values (no two rows equally far from a
    third: the nearest neighbours are unique),
    ``categorical`` columns ``c0...`` words of :data:`WORDS`, ``datetime`` columns ``t0...`` instants
    at whole seconds within one day (a span where days since 1970 cannot hold a second exactly);
    column ``k{j}`` repeats ``constant[j]`` in every row (all-equal columns). ``missing``:
    that share of the cells of every non-constant column is set missing, never in row 0.
    """
    rng = np.random.default_rng(seed)
    cols: dict[str, object] = {}
    for j in range(numeric):
        cols[f"x{j}"] = rng.permutation(n) * 1.25 + rng.uniform(0, 1, n)
    for j in range(categorical):
        cols[f"c{j}"] = rng.choice(WORDS, n)
    for j in range(datetime):
        seconds = rng.choice(86_400, n, replace=False)
        cols[f"t{j}"] = pd.Timestamp("2024-06-01") + pd.to_timedelta(seconds, unit="s")
    df = pd.DataFrame(cols, index=pd.RangeIndex(n))
    if missing > 0:
        for c in list(df.columns):
            mask = rng.random(n) < missing
            mask[0] = False
            df[c] = df[c].mask(mask)
    for j, value in enumerate(constant):
        df[f"k{j}"] = [value] * n
    return df


def shared_rows(data_dir: Path, csv: str, n: int, seed: int, columns: list[str] | None = None,
                dedup_on: list[str] | None = None) -> pd.DataFrame:
    """``n`` rows of a table of ``../shared/data`` drawn with ``seed`` (after dropping rows that repeat
    ``dedup_on``), index reset."""
    df = pd.read_csv(Path(data_dir) / csv)
    if columns is not None:
        df = df[columns]
    if dedup_on:
        df = df.drop_duplicates(subset=dedup_on)
    return df.sample(n=min(n, len(df)), random_state=seed).reset_index(drop=True)
