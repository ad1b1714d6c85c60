"""The PETsARD oracle cases: public tables from ``../shared/data`` split and "synthesised" by a fixed,
seeded recipe that needs only numpy and pandas, so that the recording script (run with PETsARD's own
venv) and the tests (run with synthguard's) rebuild exactly the same frames.

Recipe, per dataset: a seeded permutation puts 70 % of the rows in ``ori`` and 30 % in ``control``;
``syn`` has as many rows as ``ori``: its first half are copies of ``ori`` rows (a deliberate leak, so
that the attacks have something to find), its second half draws every column independently from
``ori`` (marginals kept, links broken). ``max_rows`` caps the table before the split.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

#: name -> (csv file, max rows, settings of the evaluators recorded on it)
CASES: dict[str, dict] = {
    "acs12": {"file": "acs12.csv", "max_rows": 2000, "target": "gender", "regression": "income",
              "secret": "income",
              "aux_cols": [["age", "gender", "race", "edu"], ["married", "citizen", "lang", "hrs_work"]]},
    "anes96": {"file": "anes96.csv", "max_rows": None, "target": "vote", "regression": "age",
               "secret": "vote",
               "aux_cols": [["age", "educ", "income"], ["PID", "selfLR", "TVnews"]]},
    "diabetes_raw": {"file": "diabetes_raw.csv", "max_rows": None, "target": "sex", "regression": "target",
                     "secret": "target", "aux_cols": [["age", "sex", "bmi"], ["bp", "s1", "s2"]]},
    "nhefs": {"file": "nhefs.csv", "max_rows": None,
              "columns": ["qsmk", "death", "sbp", "dbp", "sex", "age", "race", "income", "marital",
                          "school", "education", "ht", "wt71", "wt82", "smokeintensity", "smokeyrs",
                          "asthma", "diabetes", "exercise", "active"],
              "target": "death", "regression": "wt82", "secret": "income",
              "aux_cols": [["sex", "age", "race"], ["marital", "school", "ht"]]},
    "hhs_breaches": {"file": "hhs_breaches.csv", "max_rows": None,
                     "columns": ["State", "Business_Associate_Involved", "Individuals_Affected",
                                 "Date_of_Breach", "Type_of_Breach", "Location_of_Breached_Information",
                                 "Date_Posted_or_Updated", "breach_start", "year"],
                     "target": "Location_of_Breached_Information", "regression": "Individuals_Affected",
                     "secret": "Type_of_Breach",
                     "aux_cols": [["State", "year"], ["Date_of_Breach", "Type_of_Breach"]]},
}
SEED = 2024


def read_csv_exact(path: str | Path) -> pd.DataFrame:
    """``pd.read_csv`` with correctly rounded floats on every pandas version: pandas 2's default
    decimal parser can be 1 ulp off (pandas 3's and synthguard's loader are exact), and ties between
    such values move KS statistics and nearest neighbours."""
    kw = {"float_precision": "round_trip"} if int(pd.__version__.split(".", 1)[0]) < 3 else {}
    return pd.read_csv(path, **kw)


def load_case(name: str, data_dir: str | Path) -> dict[str, pd.DataFrame]:
    """``{"ori", "syn", "control"}`` of case ``name`` (fresh frames on every call)."""
    spec = CASES[name]
    df = read_csv_exact(Path(data_dir) / spec["file"])
    if spec.get("columns"):
        df = df[spec["columns"]]
    if spec.get("max_rows") and len(df) > spec["max_rows"]:
        df = df.iloc[: spec["max_rows"]]
    df = df.reset_index(drop=True)
    rng = np.random.default_rng(SEED)
    order = rng.permutation(len(df))
    n_ori = int(round(0.7 * len(df)))
    ori = df.iloc[np.sort(order[:n_ori])].reset_index(drop=True)
    control = df.iloc[np.sort(order[n_ori:])].reset_index(drop=True)
    n_copy = len(ori) // 2
    copies = ori.iloc[rng.choice(len(ori), n_copy, replace=False)].reset_index(drop=True)
    n_free = len(ori) - n_copy
    free = pd.DataFrame({c: ori[c].to_numpy()[rng.integers(0, len(ori), n_free)] for c in ori.columns})
    syn = pd.concat([copies, free], ignore_index=True)
    syn = syn.astype(ori.dtypes.to_dict())
    return {"ori": ori, "syn": syn, "control": control}


def classification_data(data: dict[str, pd.DataFrame], target: str) -> dict[str, pd.DataFrame]:
    """The frames a PETsARD 1.10.1 classification run can take: a numeric target cast to strings
    (PETsARD 1.10.1 raises ``KeyError: 'ori'`` on a numeric classification target) and the control
    rows whose label ``ori``/``syn`` never show dropped (its label encoder raises on them)."""
    out = {k: v.copy() for k, v in data.items()}
    for v in out.values():
        if pd.api.types.is_numeric_dtype(v[target]):
            v[target] = v[target].map(lambda x: None if pd.isna(x) else str(x)).astype(object)
    seen = set(out["ori"][target].dropna()) | set(out["syn"][target].dropna())
    ctl = out["control"]
    out["control"] = ctl[ctl[target].isna() | ctl[target].isin(seen)].reset_index(drop=True)
    return out
