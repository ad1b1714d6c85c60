"""The driver's memory between the tests of a cluster run: what the tests freed handed back.

A run on a cluster gathers per-record arrays and frames on the driver test after test (flags,
distances, fetched rows); once a test's result is built most of them are garbage, but the C heap
(glibc's ``malloc`` arenas) and Arrow's memory pool keep the freed pages, so the driver's resident
memory grows with the tests run, not with what it holds. :func:`release_freed` collects the garbage
and returns the free pages of both to the system; it changes no object.

It does so only once the driver's resident memory has grown by :data:`RELEASE_GROWTH_BYTES` above
the lowest it read since it last did: a full collection scans every object of the driver (0.7 s a
test at 300,000 rows, docs/scaling.md), and after a test that gathered little there is little to
hand back. Garbage in reference cycles (futures among it) is then freed when Python collects on its
own, not between two tests.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os
import sys
from functools import cache

__all__ = ["RELEASE_GROWTH_BYTES", "release_freed"]

#: the growth of the driver's resident memory (bytes) since the last release past which
#: :func:`release_freed` collects and trims again
RELEASE_GROWTH_BYTES = 64 * 2**20

_released_at: list[int | None] = [None]  # the lowest resident bytes read since the last release


@cache
def _libc() -> ctypes.CDLL | None:
    """glibc, where ``malloc_trim`` exists (Linux); ``None`` elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim  # noqa: B018 (musl has none)
    except (OSError, AttributeError):
        return None
    return libc


def resident_bytes() -> int | None:
    """This process's resident memory in bytes (``/proc/self/statm``, else psutil), ``None`` where
    neither can tell.

    Examples
    --------
    >>> rss = resident_bytes()
    >>> rss is None or rss > 0
    True
    """
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        pass
    try:
        import psutil  # a dependency of distributed

        return int(psutil.Process().memory_info().rss)
    except Exception:  # noqa: BLE001 (no psutil, or a process it may not read: cannot tell)
        return None


def release_freed(*, growth: int = RELEASE_GROWTH_BYTES) -> bool:
    """Collect the garbage and give the free pages of the C heap (``malloc_trim``, glibc) and of
    Arrow's default memory pool back to the system, once the resident memory has grown by
    ``growth`` bytes above the lowest it read since the last release (always where it cannot be
    read, the first time, and with ``growth`` at most 0). Nothing else changes: a no-op where
    neither heap exists.

    Parameters
    ----------
    growth : int, default RELEASE_GROWTH_BYTES
        The growth below which nothing is done (0 or less: always release).

    Returns
    -------
    bool
        Whether it released.

    Examples
    --------
    >>> release_freed(growth=0)
    True
    """
    before = resident_bytes()
    last = _released_at[0]
    if growth > 0 and before is not None and last is not None:
        if before < last:  # freed straight back to the system since: measured from here
            _released_at[0] = last = before
        if before - last < growth:
            return False
    gc.collect()
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
    pa = sys.modules.get("pyarrow")  # loaded by the run's reads; not imported here
    if pa is not None:
        try:
            pa.default_memory_pool().release_unused()
        except AttributeError:  # an Arrow without it
            pass
    _released_at[0] = resident_bytes()
    return True
