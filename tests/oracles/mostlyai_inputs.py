"""Inputs of the mostlyai-qa accuracy fixtures (shared by benchmarks/oracles/record_mostlyai_qa.py
and tests/oracles/test_mostlyai_accuracy_conformance.py).

Every table of ``../shared/data`` is shuffled with a seed and split into training (40 %), holdout
(30 %) and a "fresh" release (the last 30 %: real rows never trained on, a perfect generator). A
second release, "independent", is a simple generator's output: every column of the training table
resampled independently (marginals kept, dependencies lost), as many rows as the holdout.

Columns synthguard does not bin are dropped before both tools see the tables: free text (mostlyai-qa
would replace it by a random token of its GPT-2 tokenizer) and the columns synthguard infers as row
ids (``fine_foods`` ``product``, ``hhs_breaches`` ``Number``, ``nhefs`` ``seqn``; mostlyai-qa would
bin them like any other column). The test asserts synthguard bins exactly the remaining columns. Datetime columns are parsed, as a mostlyai-qa user passes typed
frames; synthguard infers the same columns as datetime (asserted by the test).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

ORACLE_DIR = Path(__file__).parent / "recorded"

TABLES = {
    # name: (csv, seed, columns dropped (text / id), datetime columns)
    "acs12": ("acs12.csv", 0, [], []),
    "anes96": ("anes96.csv", 1, [], []),
    "diabetes_raw": ("diabetes_raw.csv", 2, [], []),
    "fine_foods_reviews_test": ("fine_foods_reviews_test.csv", 3, ["review", "product"], []),
    "fine_foods_reviews_train": ("fine_foods_reviews_train.csv", 4, ["review", "product"], []),
    "hhs_breaches": ("hhs_breaches.csv", 5, ["Summary", "Number"],
                     ["Date_Posted_or_Updated", "breach_start", "breach_end"]),
    "nhefs": ("nhefs.csv", 6, ["id", "seqn"], []),
}
RELEASES = ("fresh", "independent")


def load_table(name: str, data_dir: Path) -> pd.DataFrame:
    """The table as both tools see it (text and id columns dropped, datetimes parsed)."""
    csv, _, drop, dates = TABLES[name]
    df = pd.read_csv(Path(data_dir) / csv).drop(columns=drop)
    for c in dates:
        df[c] = pd.to_datetime(df[c], errors="coerce")
    return df


def make_split(name: str, data_dir: Path) -> dict[str, pd.DataFrame]:
    """``{"training", "holdout", "fresh", "independent"}`` frames of table ``name`` (seeded)."""
    _, seed, _, _ = TABLES[name]
    df = load_table(name, data_dir)
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(df))
    n_trn, n_hol = int(0.4 * len(df)), int(0.3 * len(df))
    trn = df.iloc[idx[:n_trn]].reset_index(drop=True)
    hol = df.iloc[idx[n_trn:n_trn + n_hol]].reset_index(drop=True)
    fresh = df.iloc[idx[n_trn + n_hol:]].reset_index(drop=True)
    rows = rng.integers(0, n_trn, size=(n_hol, trn.shape[1]))
    indep = pd.DataFrame({c: trn[c].iloc[rows[:, j]].to_numpy() for j, c in enumerate(trn.columns)})
    indep = indep.astype(trn.dtypes.to_dict())
    return {"training": trn, "holdout": hol, "fresh": fresh, "independent": indep}
