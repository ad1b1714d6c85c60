"""Shared fixtures: the demo data, generated mixed tables, and the shared reference data folder."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthguard.demo import DEMO_METADATA, make_demo

REPO = Path(__file__).resolve().parents[1]
# ../shared/data beside the repository; SYNTHGUARD_SHARED_DATA overrides it (e.g. from a worktree)
SHARED_DATA = Path(os.environ.get("SYNTHGUARD_SHARED_DATA") or REPO.parent / "shared" / "data")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Folder of the real reference CSVs (``../shared/data``); tests that need it skip without it."""
    if not SHARED_DATA.exists():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA


@pytest.fixture(scope="session")
def demo_data() -> dict[str, pd.DataFrame]:
    return make_demo(2000, seed=0)


@pytest.fixture(scope="session")
def demo_metadata() -> dict:
    return DEMO_METADATA


def mixed_frame(n: int, seed: int = 0, nan_rate: float = 0.0) -> pd.DataFrame:
    """A generated mixed-type table: numeric, integer, categorical, boolean and datetime columns."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "num": rng.normal(50, 10, n).round(2),
        "int": rng.integers(0, 100, n),
        "cat": rng.choice(list("abcde"), n),
        "flag": rng.random(n) < 0.3,
        "when": pd.to_datetime("2020-01-01") + pd.to_timedelta(rng.integers(0, 1000, n), unit="D"),
    })
    if nan_rate > 0:
        df["num"] = df["num"].mask(rng.random(n) < nan_rate)
        df["cat"] = df["cat"].mask(rng.random(n) < nan_rate)
    return df


@pytest.fixture
def make_mixed():
    return mixed_frame
