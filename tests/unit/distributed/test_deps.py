"""The optional Dask extra: a run on a cluster without Dask names what to install, before any work."""

from __future__ import annotations

import pandas as pd
import pytest

from synthguard import evaluate
from synthguard.errors import ConfigError


def _frame(n: int, seed: int) -> pd.DataFrame:
    return pd.DataFrame({"a": [float(seed * 100 + i) for i in range(n)], "b": ["x", "y"] * (n // 2)})


def test_missing_dask_names_the_extra(monkeypatch):
    from synthguard.distributed import _deps

    monkeypatch.setattr(_deps, "find_spec", lambda name: None)
    with pytest.raises(ConfigError, match=r"synthguard\[dask\]"):
        evaluate(_frame(10, 0), _frame(10, 1), client=object())
