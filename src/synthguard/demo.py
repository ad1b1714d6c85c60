"""Demo data: a seeded, made-up person-level population, an original/control split, and two
releases: a *leaky* one (copies and near-copies of training rows) and a *safe* one (a Gaussian
copula sample). Nothing here is real data; the package ships no third-party data."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .generators import GaussianCopula
from .stats import make_rng

EDUCATION = ["none", "primary", "secondary", "vocational", "bachelor", "master", "doctorate"]
OCCUPATIONS = ["nurse", "teacher", "driver", "engineer", "clerk", "farmer", "chef", "lawyer",
               "cleaner", "retired", "student", "unemployed"]
DIAGNOSES = ["none", "diabetes", "asthma", "hypertension", "depression", "copd", "cancer", "arthritis"]

DEMO_METADATA = {
    "columns": {
        "age": {"sdtype": "numerical"}, "sex": {"sdtype": "categorical"},
        "zip": {"sdtype": "categorical"}, "education": {"sdtype": "categorical"},
        "occupation": {"sdtype": "categorical"}, "income": {"sdtype": "numerical"},
        "bmi": {"sdtype": "numerical"}, "diagnosis": {"sdtype": "categorical", "pii": False},
        "admission_date": {"sdtype": "datetime"},
    },
    "quasi_identifiers": ["age", "sex", "zip", "education"],
    "sensitive": ["diagnosis"],
    "target": "diagnosis",
}


def make_population(n: int = 4000, seed: int = 0) -> pd.DataFrame:
    """A realistic-looking, entirely made-up population of ``n`` people."""
    rng = make_rng(seed, "demo-population")
    age = np.clip(rng.gamma(6.0, 7.5, n) + 16, 18, 95).round().astype(int)
    sex = rng.choice(["F", "M"], n, p=[0.52, 0.48])
    zips = np.array([f"{z:05d}" for z in rng.choice(np.arange(10000, 99999), 60, replace=False)])
    zip_p = rng.dirichlet(np.full(60, 0.8))
    zip_ = zips[rng.choice(60, n, p=zip_p)]
    edu_idx = np.clip(rng.normal(3 - (age > 70) * 1.0, 1.4, n).round(), 0, 6).astype(int)
    education = np.array(EDUCATION)[edu_idx]
    occ = rng.choice(OCCUPATIONS[:-3], n)
    occ = np.where(age >= 67, "retired", occ)
    occ = np.where(age <= 24, np.where(rng.random(n) < 0.6, "student", occ), occ)
    occ = np.where((rng.random(n) < 0.06) & (age < 67), "unemployed", occ)
    income = np.exp(9.6 + 0.18 * edu_idx + 0.012 * np.minimum(age, 60) + rng.normal(0, 0.45, n))
    income = np.where(occ == "student", income * 0.3, income)
    income = np.where(occ == "unemployed", income * 0.2, income).round(-1)
    bmi = np.clip(rng.normal(26 + 0.03 * (age - 40), 4.5, n), 15, 55).round(1)
    risk = np.column_stack([np.full(n, 3.0), 0.02 * age + 0.1 * (bmi - 25), np.full(n, 0.4),
                            0.04 * age, np.full(n, 0.5) + 0.3 * (occ == "unemployed"),
                            0.03 * np.maximum(age - 50, 0), 0.02 * np.maximum(age - 40, 0),
                            0.03 * np.maximum(age - 45, 0)])
    p = risk / risk.sum(axis=1, keepdims=True)
    diagnosis = np.array(DIAGNOSES)[(p.cumsum(axis=1) > rng.random(n)[:, None]).argmax(axis=1)]
    start = np.datetime64("2019-01-01")
    admission = start + rng.integers(0, 5 * 365, n).astype("timedelta64[D]")
    bmi = np.where(rng.random(n) < 0.03, np.nan, bmi)  # a few missing measurements
    return pd.DataFrame({"age": age, "sex": sex, "zip": zip_, "education": education, "occupation": occ,
                         "income": income, "bmi": bmi, "diagnosis": diagnosis,
                         "admission_date": pd.to_datetime(admission).astype("datetime64[ns]")})


def make_demo(n: int = 4000, seed: int = 0) -> dict[str, pd.DataFrame]:
    """``{"original", "control", "leaky", "safe"}``: split half/half, and two releases.

    The leaky release holds 40 % exact copies of original rows, 30 % near-copies (age +-1,
    income +-2 %) and 30 % copula samples; the safe release is a Gaussian copula sample.
    """
    pop = make_population(n, seed)
    rng = make_rng(seed, "demo-split")
    perm = rng.permutation(n)
    original = pop.iloc[perm[: n // 2]].reset_index(drop=True)
    control = pop.iloc[perm[n // 2:]].reset_index(drop=True)
    m = len(original)
    safe = GaussianCopula(seed=seed).fit(original).generate(m)
    n_copy, n_near = int(0.4 * m), int(0.3 * m)
    copies = original.sample(n_copy, random_state=int(rng.integers(2**31)))
    near = original.sample(n_near, random_state=int(rng.integers(2**31))).copy()
    near["age"] = np.clip(near["age"] + rng.integers(-1, 2, n_near), 18, 95)
    near["income"] = (near["income"] * (1 + rng.uniform(-0.02, 0.02, n_near))).round(-1)
    rest = safe.sample(m - n_copy - n_near, random_state=int(rng.integers(2**31)))
    leaky = pd.concat([copies, near, rest], ignore_index=True)
    leaky = leaky.sample(frac=1.0, random_state=int(rng.integers(2**31))).reset_index(drop=True)
    return {"original": original, "control": control, "leaky": leaky, "safe": safe}
