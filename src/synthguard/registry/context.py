"""What a metric function receives besides its parameters (:class:`Context`), and the run's one memo
(:class:`Memo`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..errors import MetricError
from .params import validate_seed

if TYPE_CHECKING:  # pragma: no cover - imported lazily at run time (cold start)
    import numpy as np

    from ..core.results import MetricResult
    from ..data.encoding import EncodedView
    from ..data.tables import Tables
    from ..engine.backend import Backend
    from .spec import MetricSpec

__all__ = ["Context", "Memo"]


@dataclass(frozen=True)
class Context:
    """What a metric function receives besides its parameters.

    Attributes
    ----------
    tables : Tables
        Validated inputs.
    encoded : EncodedView
        The shared encoded view (neighbour engine input).
    seed : int
        The run's seed; use :meth:`rng` for randomness.
    thresholds : mapping
        Risk thresholds for this metric (defaults overlaid with the user's).
    metric : str
        The metric's name (seeds the random stream, so metrics do not share one).
    backend : str
        Neighbour-engine backend.
    generator : object, optional
        A generator (``fit``/``generate``) for metrics that need one.
    release_type : str
        ``"synthetic"`` (default) or ``"anonymised"`` (each release row is a real person).
    materiality : float
        The run's materiality (the verdict's rule): tests size what they count by it (a tail test's
        tail must be able to hold a material leak).
    entities : EntityRun, optional
        Entity-level inputs (:mod:`synthguard.data.entities`) when an entity key was given; ``tables`` is
        then the entity table for privacy metrics and the event table for the others.
    run_metrics : tuple of str
        The names of the metrics of the current run (empty for a direct call); see
        :meth:`for_run`.
    data_backend : Backend, optional
        Where counts, neighbours and row samples are computed (:attr:`data`); ``None`` = one process
        on ``tables`` / ``encoded``; a distributed run passes its Dask backend.
    executor : callable, optional
        How a composite metric runs its parts (:meth:`submetric`): set by
        :func:`synthguard.run.executor.execute`, the one caller of metric functions.
    evidence : bool
        Whether the tests state the verdict's evidence (:class:`~synthguard.core.results.Evidence`,
        per-record flags over every training and control record) beside their headline. ``True``
        in every run and direct call; the drop-in facades, which return a reference's headline and
        no verdict, set ``False`` so that nobody pays for evidence nobody reads (the headline
        numbers do not depend on it). Set it when the context is built: contexts derived with
        ``replace`` share one memo.
    release_queries : int
        A sampled run's ``max_records`` (``0``: not sampled). With more release rows than this, the
        tests whose *queries* are release rows (a share of release rows: ``dcr``, ``nndr``,
        ``dcr_overfitting_protection``, ``dcr_baseline_protection``, ``new_row_synthesis``) ask of
        a seeded content sample of that many release rows (:meth:`release_query_rows`); the
        release stays whole as the reference of every test whose queries are real records.
    """

    tables: Tables
    encoded: EncodedView
    seed: int = 0
    thresholds: Mapping[str, float] = field(default_factory=dict)
    metric: str = ""
    backend: str = "auto"
    generator: Any = None
    release_type: str = "synthetic"
    materiality: float = 0.01
    entities: Any = None
    data_backend: Backend | None = None
    executor: Callable[..., MetricResult] | None = None
    evidence: bool = True
    release_queries: int = 0
    # the run's one memo, shared by the contexts ``replace`` derives from this one; only through
    # :meth:`memo` (not the on-disk result cache of ``evaluate(cache=...)``)
    _memo: Memo = field(default_factory=lambda: Memo(), repr=False, compare=False)

    def __post_init__(self) -> None:
        # every path builds a context (evaluate, the facades, a direct call): the seed is checked
        # here once for all of them, and None means 0 as everywhere
        seed = validate_seed(self.seed, "seed")
        object.__setattr__(self, "seed", 0 if seed is None else seed)

    @property
    def run_metrics(self) -> tuple[str, ...]:
        """The names of the metrics of the current run (set by :meth:`for_run`; empty when a metric
        is called directly), so a metric can pick the form of a shared intermediate result that
        the others will reuse."""
        return self._memo.run_metrics

    def for_run(self, names: Sequence[str]) -> Context:
        """This context with a fresh memo for a run of the metrics ``names`` (the runner)."""
        return replace(self, _memo=Memo(names))

    def release_memos(self, pending: set[str]) -> None:
        """Drop memoised entries whose declared users (``memo(..., users=...)``) are no longer
        ``pending`` in this run (called by the runner as metrics finish)."""
        self._memo.release(pending)

    def forget_memos(self) -> None:
        """Drop every memoised entry of this run (its metrics are done: what they shared is not
        read again, and a re-test runs with a memo of its own)."""
        self._memo.clear()

    @property
    def data(self) -> Backend:
        """The :class:`~synthguard.engine.backend.Backend` metrics count and search through: the
        given ``data_backend``, else one process on this context's tables and encoded view."""
        if self.data_backend is not None:
            return self.data_backend
        from ..engine.backend import LocalBackend

        return LocalBackend(self.tables, self.encoded, self.backend, self.memo)

    def release_query_rows(self) -> np.ndarray | None:
        """Sorted canonical positions of the release rows the tests with release rows as queries
        ask of (``None``: every row): in a sampled run (:attr:`release_queries`) with more release
        rows than that, that many rows chosen by a hash of their content seeded by the run's seed
        alone (:meth:`~synthguard.engine.backend.Backend.balanced_rows` on every tabular column), so
        every such test asks of the same rows, whatever the input row order; a re-test without
        some release rows asks of the same rule over the rows it keeps.

        Examples
        --------
        >>> import pandas as pd
        >>> ctx = Context.from_frames(pd.DataFrame({"a": range(10)}), pd.DataFrame({"a": range(10)}))
        >>> ctx.release_query_rows() is None
        True
        >>> replace(ctx, release_queries=4).release_query_rows().tolist()  # doctest: +SKIP
        [0, 3, 5, 8]
        """
        n = int(self.release_queries)
        if n <= 0 or self.data.n_rows("synthetic") <= n:
            return None

        def draw() -> np.ndarray:
            import numpy as np

            from ..stats import make_rng

            seed = int(make_rng(self.seed, "max_records", "release").integers(0, 2**62))
            cols = list(self.tables.schema.tabular_columns())
            return np.asarray(self.data.balanced_rows("synthetic", cols, n, seed), dtype=np.int64)

        return self.memo(("release.query_rows", n), draw)

    def rng(self, *labels: int | str) -> np.random.Generator:
        """A generator seeded by the run's seed, this metric's name and ``labels``: the metric's
        own random stream, the same however the metric is called (``evaluate``, a named run, a
        facade, or the registered function called directly)."""
        from ..stats import make_rng

        return make_rng(self.seed, self.metric, *labels)

    def stream_seed(self, *labels: int | str) -> int:
        """An integer drawn from this metric's stream (:meth:`rng` with ``labels``), for code that
        takes a seed rather than a generator (a seeded content hash choosing rows, say).

        Examples
        --------
        >>> import pandas as pd
        >>> ctx = Context.from_frames(pd.DataFrame({"a": [1, 2]}), pd.DataFrame({"a": [2, 3]}))
        >>> a = replace(ctx, metric="dcr").stream_seed("rows")
        >>> a == replace(ctx, metric="dcr").stream_seed("rows"), a == replace(ctx, metric="nndr").stream_seed("rows")
        (True, False)
        """
        return int(self.rng(*labels).integers(0, 2**62))

    def memo(self, key: Any, compute: Callable[[], Any], users: Sequence[str] = ()) -> Any:
        """The run's memoised entry ``key``, computing it once with ``compute()`` if absent.

        Metrics running in threads (``jobs > 1``) that need the same intermediate result (a neighbour
        search, row ids) wait for one computation instead of repeating it: a lock per key.
        ``users``: the metrics that read this entry; once every one of them in the run has finished,
        the runner drops it (:meth:`release_memos`) so large intermediates do not live to the end.

        Examples
        --------
        >>> import pandas as pd
        >>> ctx = Context.from_frames(pd.DataFrame({"a": [1, 2]}), pd.DataFrame({"a": [2, 3]}))
        >>> ctx.memo("answer", lambda: 42), ctx.memo("answer", lambda: 0)
        (42, 42)
        """
        return self._memo.get(key, compute, users)

    def submetric(self, spec: MetricSpec, params: Mapping[str, Any],
                  thresholds: Mapping[str, float] | None = None) -> MetricResult:
        """Run the metric ``spec`` as a part of this one (a composite metric, e.g. ``anonymeter``)
        through the executor; raises :class:`MetricError` when it is skipped, its exception when it
        fails. ``thresholds`` override the part's defaults."""
        if self.executor is None:
            raise MetricError(f"{self.metric or 'this metric'} runs other metrics: run it through "
                              "synthguard.evaluate or synthguard.run.executor.run_metric")
        return self.executor(spec, self, params, thresholds)

    def for_metric(self, spec: MetricSpec, thresholds: Mapping[str, float] | None = None) -> Context:
        th = dict(spec.thresholds)
        th.update(thresholds or {})
        return replace(self, metric=spec.name, thresholds=th)

    @classmethod
    def from_frames(cls, original: Any, synthetic: Any, control: Any = None, metadata: Any = None, *,
                    seed: int = 0, backend: str = "auto", strict_control: bool = True,
                    canonical: bool = True) -> Context:
        """Build a context straight from frames or paths (for calling metric functions directly).

        The tables are the ones a run gives its metrics: validated, columns and rows in their
        canonical order (:meth:`~synthguard.data.tables.Tables.in_canonical_order`), so a metric
        called on this context draws the numbers :func:`synthguard.evaluate` draws; the record row
        numbers of a direct call and of :func:`synthguard.run.executor.run_metric` point at the
        input rows, as a run's do. ``canonical=False`` keeps the input order of rows and columns
        (for per-record arrays read by input position; the numbers may then differ from a run's
        in the last digits, and random draws over rows differ)."""
        from ..data.encoding import EncodedView
        from ..data.tables import prepare_tables

        tables = prepare_tables(original, synthetic, control, metadata, strict_control=strict_control,
                                canonical_columns=canonical)
        if canonical:
            tables = tables.in_canonical_order()
        return cls(tables=tables, encoded=EncodedView(tables), seed=seed, backend=backend)


class Memo:
    """The storage of a run's one memo (:meth:`Context.memo`): intermediate results shared by the
    metrics of one run, computed once under a lock per key and dropped once their declared users
    have finished. Not a result cache (that is :mod:`synthguard.engine.cache`)."""

    __slots__ = ("_entries", "_guard", "_locks", "_users", "run_metrics")

    def __init__(self, run_metrics: Sequence[str] = ()) -> None:
        self._entries: dict[Any, Any] = {}
        self._locks: dict[Any, threading.Lock] = {}
        self._users: dict[Any, frozenset[str]] = {}
        self._guard = threading.Lock()
        self.run_metrics: tuple[str, ...] = tuple(run_metrics)

    def get(self, key: Any, compute: Callable[[], Any], users: Sequence[str] = ()) -> Any:
        """``key``'s entry, computed once with ``compute()`` (see :meth:`Context.memo`)."""
        entries = self._entries
        if users:
            with self._guard:
                self._users[key] = frozenset(users)
        if key in entries:
            return entries[key]
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if key not in entries:
                entries[key] = compute()
        return entries[key]

    def clear(self) -> None:
        """Drop every entry (a computation under way keeps its own result for its callers)."""
        with self._guard:
            self._entries.clear()
            self._users.clear()
            self._locks.clear()

    def release(self, pending: set[str]) -> None:
        """Drop the entries none of whose declared users is ``pending``."""
        with self._guard:
            for key, who in list(self._users.items()):
                if not who & pending:
                    self._entries.pop(key, None)
                    del self._users[key]
