"""The calibration suite's set-up: the shared tables for every test, and the consistency test last."""

from __future__ import annotations

import pytest

from . import _suite as S

#: runs after every other calibration test, so that it sees every report they produced
LAST = "test_every_report_of_the_calibration_suite_states_its_bounds"


def pytest_collection_modifyitems(config, items):
    last = [i for i in items if i.name == LAST]
    items[:] = [i for i in items if i.name != LAST] + last


@pytest.fixture(scope="session", autouse=True)
def _shared(shared_data):
    S.SHARED = shared_data
