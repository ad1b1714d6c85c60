"""Realistic (census-like, correlated, skewed) 15-column mixed tables for the engine benchmarks.

Rows come from a latent-profile model, as in real person-level data: a hidden profile (e.g. "retired",
"student", "professional") drives age, employment, income, hours and education, which in turn drive
the rest. 8 numeric columns (one a datetime) and 7 categorical ones of cardinality 2..40; a few
per cent missing. Nothing here is real data.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

N_PROFILES = 12


def make_table(n: int, seed: int = 0) -> pd.DataFrame:
    """``n`` made-up people: 8 numeric (incl. a datetime), 7 categorical, some missing values."""
    prof_rng = np.random.default_rng(12345)  # the population model is fixed; only the sample varies
    age_mu = prof_rng.uniform(20, 75, N_PROFILES)
    inc_mu = prof_rng.uniform(8.5, 11.5, N_PROFILES)
    emp_p = prof_rng.dirichlet(np.full(3, 0.5), N_PROFILES)
    edu_mu = prof_rng.uniform(0, 4, N_PROFILES)
    occ_pref = prof_rng.dirichlet(np.full(40, 0.15), N_PROFILES)
    region_pref = prof_rng.dirichlet(np.full(9, 1.0), N_PROFILES)
    weights = prof_rng.dirichlet(np.full(N_PROFILES, 2.0))

    rng = np.random.default_rng(seed)
    prof = rng.choice(N_PROFILES, n, p=weights)
    sex = (rng.random(n) < 0.5).astype(int)
    age = np.clip(rng.normal(age_mu[prof], 6), 18, 95).round()
    u = rng.random(n)
    emp = (u[:, None] > emp_p[prof].cumsum(axis=1)).sum(axis=1)  # 0 employed, 1 unemployed, 2 not in force
    edu = np.clip(rng.normal(edu_mu[prof], 0.8), 0, 4).round().astype(int)
    occ_u = rng.random(n)
    occ = (occ_u[:, None] > occ_pref[prof].cumsum(axis=1)).sum(axis=1).clip(0, 39)
    region = (rng.random(n)[:, None] > region_pref[prof].cumsum(axis=1)).sum(axis=1).clip(0, 8)
    race = rng.choice(5, n, p=[0.7, 0.12, 0.1, 0.05, 0.03])
    married = (rng.random(n) < 1 / (1 + np.exp(-(age - 35) / 8))).astype(int)
    income = np.where(emp == 0, np.exp(rng.normal(inc_mu[prof] + 0.15 * edu, 0.4)), 0.0).round(-3)
    hours = np.where(emp == 0, np.clip(rng.normal(40, 6, n), 5, 80).round(), np.nan)
    height = (163 + 13 * sex + rng.normal(0, 7, n)).round()
    bmi = np.clip(rng.normal(25 + 0.05 * (age - 40), 4, n), 15, 50).round(1)
    weight = (bmi * (height / 100) ** 2).round()
    visits = rng.poisson(np.exp(0.2 + 0.02 * (age - 40)).clip(0.2, 8)).astype(float)
    smoker = np.where(rng.random(n) < 0.2 + 0.1 * (edu < 2), 1, 0)
    when = np.datetime64("2021-01-01") + rng.integers(0, 730, n).astype("timedelta64[D]")

    df = pd.DataFrame({
        "age": age, "income": income, "hours": hours, "height": height, "weight": weight, "bmi": bmi,
        "visits": visits, "admitted": pd.to_datetime(when),
        "sex": np.array(["female", "male"])[sex],
        "race": np.array(["white", "black", "asian", "other", "mixed"])[race],
        "employment": np.array(["employed", "unemployed", "not in labor force"])[emp],
        "education": np.array(["none", "hs", "some college", "college", "grad"])[edu],
        "occupation": np.array([f"occ{i:02d}" for i in range(40)], dtype=object)[occ],
        "region": np.array([f"region{i}" for i in range(9)])[region],
        "smoker": np.array(["no", "yes"])[smoker],
    })
    df["bmi"] = df["bmi"].mask(rng.random(n) < 0.03)
    df["income"] = df["income"].mask(rng.random(n) < 0.02)
    df["occupation"] = df["occupation"].mask(rng.random(n) < 0.02)
    df["married"] = np.array(["no", "yes"])[married]
    return df.drop(columns="married")  # 15 columns


def make_leaky(original: pd.DataFrame, seed: int = 1, copy_share: float = 0.3,
               near_share: float = 0.2) -> pd.DataFrame:
    """A release holding exact copies (30 %) and near-copies (20 %) of ``original`` plus fresh rows."""
    n = len(original)
    rng = np.random.default_rng(seed)
    n_copy, n_near = int(copy_share * n), int(near_share * n)
    copies = original.iloc[rng.choice(n, n_copy, replace=False)]
    near = original.iloc[rng.choice(n, n_near, replace=False)].copy()
    near["age"] = np.clip(near["age"] + rng.integers(-1, 2, n_near), 18, 95)
    near["income"] = (near["income"] * (1 + rng.uniform(-0.02, 0.02, n_near))).round(-3)
    fresh = make_table(n - n_copy - n_near, seed + 1000)
    out = pd.concat([copies, near, fresh], ignore_index=True)
    return out.iloc[rng.permutation(n)].reset_index(drop=True)
