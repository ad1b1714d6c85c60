"""Handing memory that is already free back to the operating system (no effect on any result).

Two allocators keep freed memory for reuse instead of returning it, which at 1 M rows adds
hundreds of MB to the peak of a run (``docs/performance.md``, "Memory"):

* pyarrow's memory pool (pandas' ``str`` columns live in Arrow buffers): the buffers freed when the
  loaded tables are reordered stay in the pool, which NumPy never draws from;
* glibc ``malloc``: arrays below its (dynamic, up to 32 MB) mmap threshold, e.g. one float64
  column of a million rows, come from the heap, and their pages stay mapped after ``free``.

:func:`release_free_memory` asks both to return what they hold unused. The runner calls it once the
tables are ready and after each metric. It frees nothing that is in use, so it cannot change a number.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable

_TRIM: list[Callable[[int], int] | None] = []


def _malloc_trim() -> Callable[[int], int] | None:
    if not _TRIM:
        fn = None
        if sys.platform.startswith("linux"):
            try:
                fn = ctypes.CDLL("libc.so.6").malloc_trim  # glibc only (not musl)
                fn.argtypes = [ctypes.c_size_t]
                fn.restype = ctypes.c_int
            except (OSError, AttributeError):
                fn = None
        _TRIM.append(fn)
    return _TRIM[0]


def release_free_memory() -> None:
    """Return free memory held by pyarrow's pool (if pyarrow is loaded) and glibc ``malloc``
    (``malloc_trim(0)``, Linux) to the operating system. A no-op where neither applies."""
    pa = sys.modules.get("pyarrow")
    if pa is not None:
        try:
            pa.default_memory_pool().release_unused()
        except (AttributeError, NotImplementedError):  # pragma: no cover - old pyarrow
            pass
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
