"""The driver's memory between the tests of a cluster run: what the tests freed handed back.

A run on a cluster gathers per-record arrays and frames on the driver test after test (flags,
distances, fetched rows); once a test's result is built most of them are garbage, but the C heap
(glibc's ``malloc`` arenas) and Arrow's memory pool keep the freed pages, so the driver's resident
memory grows with the tests run, not with what it holds. :func:`release_freed` collects the garbage
and returns the free pages of both to the system; it changes no object.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import sys
from functools import cache

__all__ = ["release_freed"]


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


def release_freed() -> None:
    """Collect the garbage and give the free pages of the C heap (``malloc_trim``, glibc) and of
    Arrow's default memory pool back to the system. Nothing else changes: a no-op where neither
    exists.

    Examples
    --------
    >>> release_freed()
    """
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
