"""Fixtures of the integration tests: the test-only metric ``_test_noop`` that the bad-input and
output tests run (a cheap metric, so each test checks the input handling, not a metric)."""

from __future__ import annotations

import pytest

from synthguard.registry import register, unregister

from .test_bad_input import _noop


@pytest.fixture(autouse=True, scope="package")
def _noop_metric():
    """``_test_noop``, registered while the integration tests run and removed afterwards:
    registered at import, it joined the registry of every later test module (tests/contract runs
    every registered metric)."""
    register("_test_noop", family="test", direction="lower is safer", default=False,
             description="test-only metric: the number of synthetic rows")(_noop)
    yield
    unregister("_test_noop")
