"""A Gaussian copula generator: empirical marginals joined by a normal correlation structure.

Numeric columns are mapped to normal scores by their mid-ranks; categorical columns by the
interval of their category in the cumulative frequency table (a uniform draw inside it).
Samples are drawn from the fitted multivariate normal and mapped back through interpolated
empirical quantiles (numeric, rounded when the column holds integers) or the category intervals.
Missing values are re-inserted independently at each column's observed rate.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as st

from ..errors import MetricError
from ..stats import make_rng


class GaussianCopula:
    """Gaussian copula over empirical marginals (no rows are copied, correlations are kept)."""

    def __init__(self, seed: int | None = 0) -> None:
        self.seed = seed
        self._fitted = False
        self._calls = 0

    def with_seed(self, seed: int | None) -> GaussianCopula:
        """An unfitted copy with another seed (used by threat models for each shadow dataset)."""
        return GaussianCopula(seed=seed)

    def fit(self, data: pd.DataFrame) -> GaussianCopula:
        data = data.reset_index(drop=True)
        rng = make_rng(self.seed, "copula-fit")
        self._columns = list(data.columns)
        self._dtypes = data.dtypes.to_dict()
        self._info = {}
        n = len(data)
        z = np.zeros((n, len(self._columns)))
        for j, c in enumerate(self._columns):
            s = data[c]
            na = s.isna().to_numpy()
            kind = "datetime" if pd.api.types.is_datetime64_any_dtype(s.dtype) else (
                "numeric" if pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype)
                else "categorical")
            info = {"kind": kind, "nan_rate": float(na.mean())}
            if kind in ("numeric", "datetime"):
                v = (s.astype("datetime64[ns]").astype("int64").to_numpy().astype(float) if kind == "datetime"
                     else s.to_numpy(dtype=float, na_value=np.nan))
                obs = v[~na]
                info["sorted"] = np.sort(obs)
                info["integer"] = kind == "numeric" and bool(np.all(np.mod(obs, 1) == 0))
                u = np.full(n, 0.5)
                if obs.size:
                    u[~na] = st.rankdata(obs) / (obs.size + 1)
                z[:, j] = st.norm.ppf(u)
            else:
                vals = s.astype(object).where(~na, None)
                counts = vals[~na].value_counts(sort=False)
                # a total order (count desc, then label) that no pandas version can shuffle
                order = sorted(range(len(counts)), key=lambda i: (-int(counts.iloc[i]), str(counts.index[i])))
                counts = counts.iloc[order]
                cats = list(counts.index)
                p = counts.to_numpy(dtype=float) / max(counts.sum(), 1)
                upper = np.cumsum(p)
                lower = upper - p
                info.update(cats=cats, lower=lower, upper=upper)
                pos = pd.Index(cats).get_indexer(vals[~na])
                u = np.full(n, 0.5)
                if pos.size:
                    u[~na] = lower[pos] + rng.random(pos.size) * p[pos]
                z[:, j] = st.norm.ppf(np.clip(u, 1e-9, 1 - 1e-9))
            self._info[c] = info
        corr = np.corrcoef(z, rowvar=False) if len(self._columns) > 1 else np.ones((1, 1))
        corr = np.nan_to_num(np.atleast_2d(corr), nan=0.0)
        np.fill_diagonal(corr, 1.0)
        w, v = np.linalg.eigh(corr)
        self._corr = (v * np.clip(w, 1e-9, None)) @ v.T
        # Cholesky factor: unique for a positive-definite matrix, so samples do not depend on the
        # eigenvector signs a given LAPACK build returns (multivariate_normal(method="eigh") does)
        self._chol = np.linalg.cholesky(self._corr + 1e-12 * np.eye(len(self._columns)))
        self._fitted = True
        return self

    def generate(self, n: int) -> pd.DataFrame:
        if not self._fitted:
            raise MetricError("GaussianCopula: call fit() before generate()")
        rng = make_rng(self.seed, "copula", self._calls)
        self._calls += 1
        z = rng.standard_normal((n, len(self._columns))) @ self._chol.T
        u = st.norm.cdf(z)
        out = {}
        for j, c in enumerate(self._columns):
            info = self._info[c]
            if info["kind"] in ("numeric", "datetime"):
                srt = info["sorted"]
                if srt.size == 0:
                    col = np.full(n, np.nan)
                else:
                    col = np.interp(u[:, j] * (srt.size - 1), np.arange(srt.size), srt)
                    if info["integer"]:
                        col = np.round(col)
                if info["kind"] == "datetime":
                    col = pd.to_datetime(np.round(col).astype("int64"), unit="ns")
            else:
                pos = np.searchsorted(info["upper"], u[:, j], side="right")
                pos = np.clip(pos, 0, len(info["cats"]) - 1)
                col = np.asarray(info["cats"], dtype=object)[pos]
            col = pd.Series(col)
            if info["nan_rate"] > 0:
                col = col.mask(rng.random(n) < info["nan_rate"])
            out[c] = col
        frame = pd.DataFrame(out)
        for c, dt in self._dtypes.items():
            if pd.api.types.is_integer_dtype(dt) and not frame[c].isna().any():
                frame[c] = frame[c].astype(dt)
            elif pd.api.types.is_bool_dtype(dt) and not frame[c].isna().any():
                frame[c] = frame[c].astype(bool)
            elif isinstance(dt, pd.CategoricalDtype):
                frame[c] = frame[c].astype(dt)  # keeps ordered categories and their order
        return frame
