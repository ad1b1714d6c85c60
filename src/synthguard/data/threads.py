"""Independent steps of the loading, one per table, side by side in threads.

The loading hashes and reorders each of the three tables on its own (the control check's row
hashes, the canonical order's gather of the rows); pandas, pyarrow and NumPy release the
interpreter lock in those loops, so a thread per table runs them on the cores the process may use
instead of one after another. Each step reads and writes only its own table: the results are the
same as in a loop, in the items' order.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import TypeVar

__all__ = ["cores", "map_threads"]

T = TypeVar("T")
R = TypeVar("R")


def cores() -> int:
    """Cores this process may run on (``os.sched_getaffinity`` where available).

    Examples
    --------
    >>> cores() >= 1
    True
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def map_threads(fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """``[fn(x) for x in items]``, with up to one thread per core when there are several items and
    cores; an exception of ``fn`` is raised as the loop would raise it (the first item's first).

    Examples
    --------
    >>> map_threads(lambda x: x * x, [1, 2, 3])
    [1, 4, 9]
    """
    items = list(items)
    workers = min(len(items), cores())
    if workers < 2:
        return [fn(x) for x in items]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="synthguard-load") as pool:
        return list(pool.map(fn, items))
