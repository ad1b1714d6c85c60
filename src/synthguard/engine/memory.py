"""Handing memory that is already free back to the operating system (no effect on any result).

Two allocators keep freed memory for reuse instead of returning it, which at 1 M rows adds
hundreds of MB to the peak of a run (``docs/performance.md``, "Memory"):

* pyarrow's memory pool (pandas' ``str`` columns live in Arrow buffers): the buffers freed when the
  loaded tables are reordered stay in the pool, which NumPy never draws from;
* glibc ``malloc``: arrays below its (dynamic, up to 32 MB) mmap threshold, e.g. one float64
  column of a million rows, come from the heap, and their pages stay mapped after ``free``.

:func:`release_free_memory` asks both to return what they hold unused. The runner calls it once the
tables are ready and after each metric. It frees nothing that is in use, so it cannot change a number.

:func:`small_pages` keeps NumPy's arrays on ordinary pages during a run: NumPy asks Linux for
2 MB "huge" pages for every array of 4 MB or more (``madvise``), and each first touch of one then
faults in and zeroes 2 MB at once. A run allocates tens of GB of short-lived arrays, and on a
1 M-row ``--preset privacy`` run the kernel's page zeroing took 22 of 147 CPU s with huge pages,
13 of 138 without them (``docs/performance.md``, "the kernel's page zeroing"). The setting is
NumPy's, for the whole process: two runs in threads of one process may end with it restored
while the other still runs (only that run's time changes).
"""

from __future__ import annotations

import contextlib
import ctypes
import sys
from collections.abc import Callable, Iterator

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


def _hugepage_switch() -> Callable[[bool], bool] | None:
    """NumPy's switch for asking huge pages of its large arrays (private in NumPy 1.24 and 2.x:
    ``_set_madvise_hugepage``, returns the previous setting); ``None`` where it is missing."""
    import numpy as np

    core = getattr(np, "_core", None) or getattr(np, "core", None)
    return getattr(getattr(core, "multiarray", None), "_set_madvise_hugepage", None)


@contextlib.contextmanager
def small_pages() -> Iterator[None]:
    """Run the body with NumPy's new arrays on ordinary pages (no ``madvise`` for huge pages),
    restoring the previous setting after (see the module docstring). Only the time changes.

    Examples
    --------
    >>> import numpy as np
    >>> with small_pages():
    ...     float(np.zeros(1 << 20).sum())
    0.0
    """
    switch = _hugepage_switch()
    if switch is None:
        yield
        return
    before = bool(switch(False))
    try:
        yield
    finally:
        switch(before)
