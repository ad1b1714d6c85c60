"""The driver's garbage collected and its free pages handed back between a cluster run's tests
only once its resident memory has grown (``distributed._memory.release_freed``)."""

from __future__ import annotations

import numpy as np
import pytest

import synthguard.distributed._memory as memory


@pytest.fixture
def counted(monkeypatch):
    """The releases' collections counted, the resident bytes read from a list the test sets."""
    collections: list[int] = []
    resident = [1000 * 2**20]

    def collect() -> int:  # a release hands 10 MiB back
        collections.append(1)
        resident[0] -= 10 * 2**20
        return 0

    monkeypatch.setattr(memory.gc, "collect", collect)
    monkeypatch.setattr(memory, "resident_bytes", lambda: resident[0])
    monkeypatch.setattr(memory, "_released_at", [None])
    return collections, resident


def test_a_release_waits_for_the_resident_memory_to_grow_by_its_step(counted):
    collections, resident = counted
    assert memory.release_freed()  # the first time: nothing to compare with
    resident[0] += memory.RELEASE_GROWTH_BYTES - 1
    assert not memory.release_freed()  # grown less than the step: nothing scanned
    assert len(collections) == 1
    resident[0] += 1  # the growth since the last release, not since the last call
    assert memory.release_freed()
    assert len(collections) == 2
    assert memory.release_freed(growth=0)  # asked whatever the growth
    assert len(collections) == 3


def test_the_growth_is_counted_from_the_memory_after_the_release_and_from_any_lower_reading(counted):
    collections, resident = counted
    assert memory.release_freed()  # 1,000 MiB read, 990 MiB after
    resident[0] += memory.RELEASE_GROWTH_BYTES + 5 * 2**20  # the step above 990, not above 1,000
    assert memory.release_freed()
    assert len(collections) == 2
    resident[0] -= 300 * 2**20  # pages given straight back to the system since
    assert not memory.release_freed()
    resident[0] += memory.RELEASE_GROWTH_BYTES - 1  # below the step from the lowest reading
    assert not memory.release_freed()
    resident[0] += 1
    assert memory.release_freed()
    resident[0] -= 300 * 2**20
    assert memory.release_freed(growth=0)  # asked, even below the last reading
    assert len(collections) == 4


def test_a_release_where_the_resident_memory_cannot_be_read_always_collects(counted, monkeypatch):
    collections, _ = counted
    monkeypatch.setattr(memory, "resident_bytes", lambda: None)
    assert memory.release_freed() and memory.release_freed()
    assert len(collections) == 2


def test_the_resident_memory_read_grows_with_pages_touched():
    before = memory.resident_bytes()
    if before is None:
        pytest.skip("this system tells no resident memory")
    held = np.ones(2 * memory.RELEASE_GROWTH_BYTES // 8)  # touched: resident
    assert memory.resident_bytes() - before >= memory.RELEASE_GROWTH_BYTES
    del held
