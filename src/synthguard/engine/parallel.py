"""What runs concurrently, and the one lock that keeps it safe.

* Metrics can run in a thread pool (``jobs`` threads; default :data:`DEFAULT_JOBS` where the
  threading layer is thread-safe, else 1; ``0`` = one per core). Their
  results do not depend on the order they finish in: every random stream is seeded by the metric's
  name, and results shared between metrics (neighbour searches, row ids) are computed once under a
  per-key lock (:meth:`synthguard.registry.Context.memo`).
* The numba kernels are parallel themselves (``prange`` over query rows, using every core), so only one
  of them runs at a time: :data:`PARALLEL_KERNELS` is entered around each launch. This also makes
  concurrent launches safe with numba's ``workqueue`` threading layer, which is not thread-safe.
  What overlaps is everything else: NumPy, pandas, scikit-learn (which release the GIL) and the
  ``nogil`` single-threaded kernels.
* In a run of several metrics at once, with a thread-safe threading layer (``omp``, ``tbb``), each
  metric thread runs its kernels on its share of the cores instead (:func:`share_cores`), beside
  the other metrics' kernels: every core stays busy while one metric does serial work. Every
  parallel kernel writes each query's (or row's) own output, so the numbers do not depend on the
  number of threads. The share is that of the metrics running at the time of each launch
  (:func:`sharing`, :func:`fit_threads`): a metric left running alone at the end of a run (or of
  a re-test) runs its kernels on every core again.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

_ONE_AT_A_TIME = threading.RLock()
_LOCAL = threading.local()  # per thread: ``share`` (kernels on a share of the cores), ``jobs`` and held locks
_RUNNING = [0]  # metric threads inside :func:`sharing` now
_RUNNING_LOCK = threading.Lock()


class _KernelGate:
    """The context every parallel kernel launch runs in (:data:`PARALLEL_KERNELS`).

    In a thread that runs its kernels on every core (the default), it holds one process-wide
    lock, so only one such kernel runs at a time. In a metric thread of a concurrent run whose
    kernels were given a share of the cores (:func:`share_cores`), nothing is held: two metrics'
    kernels run side by side, each on its own threads (numba's thread count is per thread), which
    only a thread-safe threading layer (``omp``, ``tbb``) allows."""

    def __enter__(self) -> _KernelGate:
        held = getattr(_LOCAL, "held", None)
        if held is None:
            held = _LOCAL.held = []
        alone = getattr(_LOCAL, "share", False)
        if not alone:
            _ONE_AT_A_TIME.acquire()
        else:
            fit_threads()
        held.append(not alone)
        return self

    def __exit__(self, *exc: object) -> None:
        if _LOCAL.held.pop():
            _ONE_AT_A_TIME.release()


PARALLEL_KERNELS = _KernelGate()


def _thread_safe_layer() -> bool:
    """Whether numba's threading layer lets kernels be launched from several threads at once
    (``omp`` and ``tbb`` do; ``workqueue`` does not). Starts the layer when it is not started."""
    try:
        import numba
        from numba.np.ufunc import parallel

        parallel._launch_threads()
        return numba.threading_layer() in ("omp", "tbb")
    except Exception:  # noqa: BLE001 - no numba, or a layer that cannot start: one kernel at a time
        return False


def share_cores(n_jobs: int) -> bool:
    """In the calling thread (a metric thread of a run of ``n_jobs`` metrics at once), run the
    compiled kernels on ``cores // n_jobs`` threads (at least one) without waiting for the other
    metrics' kernels. Only with a thread-safe threading layer; returns whether it was done (else
    the kernels keep every core, one at a time). Results do not change: every parallel kernel
    writes each query's own output, whatever the number of threads."""
    if n_jobs < 2 or not _thread_safe_layer():
        return False
    import numba

    numba.set_num_threads(max(1, numba.config.NUMBA_NUM_THREADS // n_jobs))
    _LOCAL.share = True
    _LOCAL.jobs = n_jobs
    return True


@contextlib.contextmanager
def sharing(n_jobs: int) -> Iterator[bool]:
    """Run the body (one metric of a run of ``n_jobs`` metrics at once) with its kernels on a
    share of the cores (:func:`share_cores`), counted among the metrics running: each kernel
    launch takes ``cores // running`` threads (:func:`fit_threads`), so the last metric still
    running uses every core. Yields whether the cores are shared. The numbers do not change
    (each query's output is its own, whatever the number of threads).

    Examples
    --------
    >>> with sharing(1) as shared:  # one metric at a time: nothing shared
    ...     shared
    False
    """
    shared = share_cores(n_jobs)
    if shared:
        with _RUNNING_LOCK:
            _RUNNING[0] += 1
    try:
        yield shared
    finally:
        if shared:
            with _RUNNING_LOCK:
                _RUNNING[0] -= 1


def fit_threads() -> int:
    """In a thread sharing the cores (:func:`share_cores`), set numba's thread count for the
    next kernel launch to the cores divided by the metrics running now (:func:`sharing`; the
    ``n_jobs`` of :func:`share_cores` when none is counted), at least one; returns it (0 in a
    thread that does not share the cores, whose kernels keep every core). Called at every launch
    through :data:`PARALLEL_KERNELS` and between the chunks of a long search.

    Examples
    --------
    >>> fit_threads()  # the main thread does not share the cores
    0
    """
    if not getattr(_LOCAL, "share", False):
        return 0
    import numba

    running = min(_RUNNING[0], int(getattr(_LOCAL, "jobs", 1))) or int(getattr(_LOCAL, "jobs", 1))
    n = max(1, numba.config.NUMBA_NUM_THREADS // max(1, running))
    if numba.get_num_threads() != n:
        numba.set_num_threads(n)
    return n


def default_jobs() -> int:
    """Cores this process may run on (``os.sched_getaffinity`` where available)."""
    from ..data.threads import cores

    return cores()


#: metrics run at once by default, where the threading layer lets their kernels share the cores
#: (at most one per core; measured: see docs/performance.md, "Parallel where it is free")
DEFAULT_JOBS = 2
#: above this many rows in the largest table the default is one metric at a time: two at once hold
#: two metrics' working sets (measured at 10M release rows, `--max-records 200000`, session 30: the
#: first run's tests at two at once stay under the loading's peak, about 10.5 of 11.4 GB)
DEFAULT_JOBS_ROWS = 10_000_000
#: above this many rows the advice's re-tests run one metric at a time by default: a re-test also
#: holds what the run kept for it (searches, blocks), and two at once peaked at 13.5 GB at 10M
#: against 11.4 GB one at a time (session 30)
RETEST_JOBS_ROWS = 2_000_000


def retest_jobs(jobs: int | None, rows: int) -> int | None:
    """The ``jobs`` of the advice's re-tests: the run's, but one metric at a time by default above
    :data:`RETEST_JOBS_ROWS` ``rows`` (the largest table's).

    Examples
    --------
    >>> retest_jobs(None, 10_000_000), retest_jobs(None, 1_000_000), retest_jobs(2, 10_000_000)
    (1, None, 2)
    """
    return 1 if jobs is None and rows > RETEST_JOBS_ROWS else jobs


def resolve_jobs(jobs: int | None, rows: int | None = None) -> int:
    """``None`` -> :data:`DEFAULT_JOBS` metrics at once (at most one per core) with a thread-safe
    threading layer, whose kernels then share the cores (:func:`share_cores`), and tables of at
    most :data:`DEFAULT_JOBS_ROWS` ``rows``, else 1 (one metric at a time, each kernel on every
    core); 0 or a negative number -> :func:`default_jobs` (one thread per core); otherwise
    ``jobs``.

    Examples
    --------
    >>> resolve_jobs(3), resolve_jobs(None, rows=20_000_000)
    (3, 1)
    """
    from ..errors import ConfigError

    if jobs is None:
        if rows is not None and rows > DEFAULT_JOBS_ROWS:
            return 1
        return min(DEFAULT_JOBS, default_jobs()) if _thread_safe_layer() else 1
    if isinstance(jobs, bool) or not isinstance(jobs, int):
        raise ConfigError(f"jobs must be an integer (number of metrics run at once), got {jobs!r}")
    return default_jobs() if jobs <= 0 else jobs
