"""What runs concurrently, and the one lock that keeps it safe.

* Metrics can run in a thread pool (``jobs`` threads; default 1, ``0`` = one per core). Their
  results do not depend on the order they finish in: every random stream is seeded by the metric's
  name, and results shared between metrics (neighbour searches, row ids) are computed once under a
  per-key lock (:meth:`synthguard.registry.Context.memo`).
* The numba kernels are parallel themselves (``prange`` over query rows, using every core), so only one
  of them runs at a time: :data:`PARALLEL_KERNELS` is held around each launch. This also makes
  concurrent launches safe with numba's ``workqueue`` threading layer, which is not thread-safe.
  What overlaps is everything else: NumPy, pandas, scikit-learn (which release the GIL) and the
  ``nogil`` single-threaded kernels.
"""

from __future__ import annotations

import os
import threading

PARALLEL_KERNELS = threading.RLock()


def default_jobs() -> int:
    """Cores this process may run on (``os.sched_getaffinity`` where available)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


DEFAULT_JOBS = 1  # measured: see docs/performance.md ("Parallel where it is free")


def resolve_jobs(jobs: int | None) -> int:
    """``None`` -> :data:`DEFAULT_JOBS` (1: one metric at a time, each kernel on every core);
    0 or a negative number -> :func:`default_jobs` (one thread per core); otherwise ``jobs``."""
    from ..errors import ConfigError

    if jobs is None:
        return DEFAULT_JOBS
    if isinstance(jobs, bool) or not isinstance(jobs, int):
        raise ConfigError(f"jobs must be an integer (number of metrics run at once), got {jobs!r}")
    return default_jobs() if jobs <= 0 else jobs
