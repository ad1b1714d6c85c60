"""Shared fixtures: the demo data, generated mixed tables, and the shared reference data folder."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthguard.demo import DEMO_METADATA, make_demo

REPO = Path(__file__).resolve().parents[1]
# ../shared/data beside the repository; SYNTHGUARD_SHARED_DATA overrides it (e.g. from a worktree)
SHARED_DATA = Path(os.environ.get("SYNTHGUARD_SHARED_DATA") or REPO.parent / "shared" / "data")

# Test-only reference libraries whose pins keep them out of the newest-versions venv (.venv-test);
# scripts/test.sh runs their tests in .venv-oldest. Tests using one carry @pytest.mark.oracle(name)
# (or, for a whole module that imports it, pytest.importorskip with the same reason).
ORACLE_PINS = {"anonymeter": "anonymeter 1.1.0 pins numpy<1.27",
               "sdmetrics": "sdmetrics 0.32 pins pandas<3"}


def oracle_skip_reason(lib: str) -> str:
    return (f"oracle {lib} not installed ({ORACLE_PINS.get(lib, 'not installable here')}, so it cannot "
            "sit next to the newest numpy/pandas); this test runs in .venv-oldest, see scripts/test.sh")


def _importable(lib: str) -> bool:
    # probe a submodule: tests/unit/metrics/anonymeter/ is a namespace package named like the library
    probe = {"anonymeter": "anonymeter.evaluators", "sdmetrics": "sdmetrics.single_table"}.get(lib, lib)
    try:
        return importlib.util.find_spec(probe) is not None
    except ModuleNotFoundError:
        return False


def pytest_collection_modifyitems(config, items):
    """Skip, with the reason, every test marked ``oracle(lib)`` whose reference library is absent."""
    for item in items:
        for mark in item.iter_markers("oracle"):
            lib = mark.args[0]
            if not _importable(lib):
                item.add_marker(pytest.mark.skip(reason=oracle_skip_reason(lib)))


@pytest.fixture(scope="session", autouse=True)
def _private_text_cache(tmp_path_factory):
    """The text metrics' disk cache in a folder of this test session, not ~/.cache/synthguard: two
    runs side by side (scripts/test.sh's two venvs) never share or overwrite each other's entries."""
    old = os.environ.get("SYNTHGUARD_CACHE_DIR")
    os.environ["SYNTHGUARD_CACHE_DIR"] = str(tmp_path_factory.mktemp("synthguard-cache"))
    yield
    if old is None:
        os.environ.pop("SYNTHGUARD_CACHE_DIR", None)
    else:
        os.environ["SYNTHGUARD_CACHE_DIR"] = old


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
