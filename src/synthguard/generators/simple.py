"""``Raw`` (releases training rows: the worst case) and ``IndependentMarginals`` (columns sampled
independently: no row survives, the safe end of the scale)."""

from __future__ import annotations

import pandas as pd

from ..errors import MetricError
from ..stats import make_rng


class Raw:
    """Returns rows of the training data (without replacement while it can): a copy of the data."""

    def __init__(self, seed: int | None = 0) -> None:
        self.seed = seed
        self._data: pd.DataFrame | None = None
        self._calls = 0

    def with_seed(self, seed: int | None) -> Raw:
        """An unfitted copy with another seed (used by threat models for each shadow dataset)."""
        return Raw(seed=seed)

    def fit(self, data: pd.DataFrame) -> Raw:
        self._data = data.reset_index(drop=True).copy()
        return self

    def generate(self, n: int) -> pd.DataFrame:
        if self._data is None:
            raise MetricError("Raw: call fit() before generate()")
        rng = make_rng(self.seed, "raw", self._calls)
        self._calls += 1
        m = len(self._data)
        if n <= m:
            idx = rng.permutation(m)[:n]
        else:
            idx = rng.integers(0, m, size=n)
            idx[:m] = rng.permutation(m)
        return self._data.iloc[idx].reset_index(drop=True)


class IndependentMarginals:
    """Samples every column independently from its empirical distribution (missing values included)."""

    def __init__(self, seed: int | None = 0) -> None:
        self.seed = seed
        self._data: pd.DataFrame | None = None
        self._calls = 0

    def with_seed(self, seed: int | None) -> IndependentMarginals:
        """An unfitted copy with another seed."""
        return IndependentMarginals(seed=seed)

    def fit(self, data: pd.DataFrame) -> IndependentMarginals:
        self._data = data.reset_index(drop=True).copy()
        return self

    def generate(self, n: int) -> pd.DataFrame:
        if self._data is None:
            raise MetricError("IndependentMarginals: call fit() before generate()")
        rng = make_rng(self.seed, "marginals", self._calls)
        self._calls += 1
        m = len(self._data)
        out = {c: self._data[c].to_numpy()[rng.integers(0, m, size=n)] for c in self._data.columns}
        return pd.DataFrame(out).astype(self._data.dtypes.to_dict())
