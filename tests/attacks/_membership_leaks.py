"""Leaky releases for the membership-attack tests: near-copies, an overfit mixture, a wide KDE."""

from __future__ import annotations

import numpy as np
import pandas as pd

from synthguard.calibration import calibration_split, leaky_release
from synthguard.stats import make_rng

TABLES = ("acs12", "anes96", "diabetes_raw", "hhs_breaches", "nhefs")


def _numeric(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c])]


def _standardised(train: pd.DataFrame, cols: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = train[cols].to_numpy(dtype=float)
    med = np.nanmedian(x, axis=0)
    x = np.where(np.isnan(x), med, x)
    mu, sd = x.mean(axis=0), x.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    return (x - mu) / sd, mu, sd


def mixture_release(train: pd.DataFrame, n: int, seed: int, rows_per_component: int = 20
                    ) -> pd.DataFrame:
    """An overfit Gaussian mixture: ``len(train) / 20`` components (k-means clusters of the
    standardised numeric columns), each sampled from its own mean and diagonal covariance;
    categorical cells drawn from the cluster's own rows, column by column."""
    from sklearn.cluster import KMeans

    rng = make_rng(seed, "mixture")
    cols = _numeric(train)
    z, mu, sd = _standardised(train, cols)
    k = max(2, len(train) // rows_per_component)
    lab = KMeans(k, n_init=1, random_state=seed).fit_predict(z)
    comp = rng.choice(lab, n)  # a component per row, by the clusters' sizes
    out = {}
    for j, c in enumerate(cols):
        means = np.array([z[lab == g, j].mean() for g in range(k)])
        sds = np.array([z[lab == g, j].std() for g in range(k)])
        v = (means[comp] + sds[comp] * rng.standard_normal(n)) * sd[j] + mu[j]
        if pd.api.types.is_integer_dtype(train[c]):
            v = np.round(v)
        out[c] = v
    members = {g: np.flatnonzero(lab == g) for g in range(k)}
    for c in train.columns:
        if c in out:
            continue
        vals = train[c].to_numpy()
        pick = np.array([members[g][rng.integers(members[g].size)] for g in comp])
        out[c] = vals[pick]
    return pd.DataFrame(out)[list(train.columns)].astype(
        {c: train[c].dtype for c in train.columns if c not in cols})


def kde_release(train: pd.DataFrame, n: int, seed: int, width: float = 1.0,
                keep_category: float = 0.5) -> pd.DataFrame:
    """A kernel density release: a random training row plus Gaussian noise of ``width`` times
    Scott's bandwidth on every numeric column; each categorical cell kept with probability
    ``keep_category``, else drawn from the column's marginal (an Aitchison-Aitken kernel)."""
    rng = make_rng(seed, "kde")
    cols = _numeric(train)
    z, mu, sd = _standardised(train, cols)
    d = max(len(cols), 1)
    h = width * len(train) ** (-1.0 / (d + 4))
    src = rng.integers(0, len(train), n)
    out = {}
    for j, c in enumerate(cols):
        v = (z[src, j] + h * rng.standard_normal(n)) * sd[j] + mu[j]
        if pd.api.types.is_integer_dtype(train[c]):
            v = np.round(v)
        out[c] = v
    for c in train.columns:
        if c in out:
            continue
        vals = train[c].to_numpy()
        keep = rng.random(n) < keep_category
        out[c] = np.where(keep, vals[src], vals[rng.integers(0, len(train), n)])
    return pd.DataFrame(out)[list(train.columns)].astype(
        {c: train[c].dtype for c in train.columns if c not in cols})


def release(kind: str, parts: dict[str, pd.DataFrame], seed: int) -> pd.DataFrame:
    """The release of ``kind`` for a calibration split."""
    fresh, train = parts["fresh"], parts["original"]
    if kind == "fresh":
        return fresh
    if kind == "near10":  # near-copies make up 10 % of the release
        return leaky_release(fresh, train, share=0.1 * len(fresh) / len(train), seed=seed,
                             perturb=True)
    if kind == "copies30":
        return leaky_release(fresh, train, share=0.3, seed=seed)
    if kind == "mixture":
        return mixture_release(train, len(fresh), seed)
    if kind == "kde":
        return kde_release(train, len(fresh), seed)
    raise ValueError(kind)


def split(frame: pd.DataFrame, seed: int) -> dict[str, pd.DataFrame]:
    return calibration_split(frame, seed=seed)
