"""The leak rows of a run, built once and shared by every test that measures its leak responses.

A run's detection limits are measured in the data: leak rows of every family
(:mod:`synthguard.data.leaks`) are built from a seeded sample of the run's own training records (the
*candidates*), and each monotone test computes what those rows would do to its per-record scores if
they were in the release (:class:`~synthguard.core.results.LeakResponse`), with the same code path as
its own computation. The verdict then injects any subset of them and re-tests. Every test sees the
same leak rows (memoised in the run), so an injected leak means the same rows for all of them.

Leak rows are encoded with a *copy* of the run's encoder (:func:`leak_block`), so values that exist in
no input table (noise, interpolations) get codes of their own without changing any code the tests of
the real tables use.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..core.results import LeakResponse
from ..data.encoding import Block
from ..data.leaks import FAMILIES, LeakSpec, build_leak_rows, family_candidates
from ..registry import Context

__all__ = ["LeakSet", "family_eligible", "family_status", "leak_block", "leak_sets", "max_candidates",
           "real_result", "response", "reuse_view", "row_families"]

#: Fewest candidates per family (all training records when there are fewer).
MIN_CANDIDATES = 1000
#: The candidates cover at least this many times the materiality's share of the training records,
#: so a leak of up to that size can be injected.
COVER = 5.0


@dataclass(frozen=True)
class LeakSet:
    """The leak rows of one family: ``rows`` (one per candidate, the training table's columns),
    ``sources`` (their training records, positions in the canonical order), ``partners`` (for
    interpolations: the other training record of each row); or, when the family does not apply,
    ``reason`` and no rows. ``eligible``: how many training records the family applies to (the
    candidates are a seeded sample of them): the largest leak of this family the tables can hold."""

    family: str
    sources: np.ndarray
    rows: pd.DataFrame | None
    reason: str | None = None
    partners: np.ndarray | None = None
    eligible: int = 0

    @property
    def available(self) -> bool:
        return self.rows is not None and self.sources.size > 0


def max_candidates(n_training: int, materiality: float = 0.01) -> int:
    """How many training records get a leak row per family: every one up to
    :data:`MIN_CANDIDATES`, else enough to inject :data:`COVER` times the materiality.

    Examples
    --------
    >>> max_candidates(800), max_candidates(100_000), max_candidates(1_000_000)
    (800, 5000, 50000)
    >>> max_candidates(100_000, materiality=0.05)
    25000
    """
    return int(min(n_training, max(MIN_CANDIDATES, math.ceil(COVER * materiality * n_training))))


def _spec(ctx: Context) -> LeakSpec:
    return LeakSpec.from_schema(ctx.tables.schema)


def _pool(ctx: Context) -> Any:
    if ctx.data_backend is not None:
        return RealRows(ctx.data_backend, ("original", "control"), list(ctx.tables.schema.columns))
    return pd.concat([ctx.tables.original, ctx.tables.control], ignore_index=True)


def _original(ctx: Context) -> Any:
    if ctx.data_backend is not None:
        return RealRows(ctx.data_backend, ("original",), list(ctx.tables.schema.columns))
    return ctx.tables.original


class RealRows:
    """The real records of ``roles`` (concatenated in that order) as the leak-row builders read
    them, fetched through a :class:`~synthguard.engine.backend.Backend` when they are asked for:
    ``len``, ``shape``, ``columns``, a whole column (``rows[c]``: one column of the records on the
    driver at a time) or a few (``rows[[a, b]]``), rows by position (``rows.iloc[positions]``, one
    role). What a run on a cluster builds its leak rows from (the tables stay distributed); the
    values are those of the pandas tables of one process, so the leak rows are the same.

    Examples
    --------
    >>> from synthguard.engine.backend import LocalBackend
    >>> o, c = pd.DataFrame({"a": [1, 2]}), pd.DataFrame({"a": [3]})
    >>> ctx = Context.from_frames(o, pd.DataFrame({"a": [9]}), c, canonical=False)
    >>> rows = RealRows(LocalBackend(ctx.tables, ctx.encoded), ("original", "control"), ["a"])
    >>> len(rows), rows["a"].tolist()
    (3, [1.0, 2.0, 3.0])
    >>> RealRows(rows.data, ("original",), ["a"]).iloc[[1, 0]]["a"].tolist()
    [2.0, 1.0]
    """

    #: Bytes of fetched columns kept for the builders that read a column again (the oldest dropped
    #: first): the near and noise families read the same columns.
    CACHE_BYTES = 256 * 2**20

    def __init__(self, data: Any, roles: tuple[str, ...], columns: list[str]) -> None:
        self.data, self.roles = data, roles
        self.columns = pd.Index(columns)
        self._sizes = [int(data.n_rows(r)) for r in roles]
        self._cache: dict[str, pd.Series] = {}
        self._bytes: dict[str, int] = {}  # each cached column's size, strings included

    def __len__(self) -> int:
        return sum(self._sizes)

    @property
    def shape(self) -> tuple[int, int]:
        return len(self), len(self.columns)

    def _frame(self, columns: list[str]) -> pd.DataFrame:
        parts = [self.data.take(r, np.arange(n, dtype=np.int64), columns)
                 for r, n in zip(self.roles, self._sizes, strict=True)]
        return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]

    def _fetch(self, columns: list[str]) -> None:
        """Fetch ``columns`` at once (one task per partition), into the cache; the oldest columns
        are dropped beyond :attr:`CACHE_BYTES`. The first fetch takes every column when the whole
        table fits (8 bytes per cell, an estimate: the cache then holds the measured sizes, strings
        included), so small tables travel once."""
        if not self._cache and len(self) * len(self.columns) * 8 <= self.CACHE_BYTES:
            columns = list(self.columns)
        got = self._frame(columns)
        for c in columns:
            self._cache[c] = got[c]
            self._bytes[c] = int(got[c].memory_usage(deep=True))  # measured once, on entry
        while sum(self._bytes[c] for c in self._cache) > self.CACHE_BYTES and len(self._cache) > 1:
            self._cache.pop(next(iter(self._cache)))  # the oldest first

    def _column(self, column: str) -> pd.Series:
        if column not in self._cache:
            self._fetch([column])
        return self._cache[column]

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return self._column(key)
        key = list(key)
        missing = [c for c in key if c not in self._cache]
        if missing:
            self._fetch(missing)
        return pd.concat([self._column(c) for c in key], axis=1)

    @property
    def iloc(self) -> _Positions:
        if len(self.roles) != 1:
            raise NotImplementedError("rows by position are read from one role")  # a bug
        return _Positions(self)


class _Positions:
    def __init__(self, rows: RealRows) -> None:
        self.rows = rows

    def __getitem__(self, positions: Any) -> pd.DataFrame:
        """The rows at ``positions``: from the fetched columns when every column is there (a small
        table travels once, at its first read, instead of once per family's builder), else asked
        of the backend."""
        view = self.rows
        cols = list(view.columns)
        pos = np.asarray(positions, dtype=np.int64)
        if not view._cache and len(view) * len(cols) * 8 <= view.CACHE_BYTES:
            view._fetch(cols)
        if all(c in view._cache for c in cols):
            return pd.concat([view._cache[c].take(pos).reset_index(drop=True) for c in cols], axis=1)
        return view.data.take(view.roles[0], pos, cols)


def _nearest_training(ctx: Context, sources: np.ndarray) -> np.ndarray:
    """The nearest other training record of each source (Gower on every tabular column, ranges of
    the real records; ties by the lower index)."""
    from ..engine.neighbors import gower, kneighbors

    cols = ctx.tables.schema.tabular_columns()
    metric = gower(ctx.data.ranges(cols, ("original", "control")), clip=True, normalise=True)
    sources = np.asarray(sources, dtype=np.int64)
    if ctx.data_backend is not None:
        # the sources only (a few thousand rows fetched encoded) searched over the partitions, as
        # below: not every training record against the training table
        data = ctx.data_backend
        _, idx = data.kneighbors_block(data.encoded_rows("original", cols, sources), "original", cols,
                                       metric, 2)
    else:
        train = ctx.encoded.block("original", cols)
        idx = kneighbors(train.take(sources), train, metric, 2, backend=ctx.backend).indices
    first, second = idx[:, 0], idx[:, 1]
    return np.where(first == sources, second, first)


def leak_sets(ctx: Context) -> dict[str, LeakSet]:
    """Every tabular family's leak rows for this run (memoised: every test sees the same rows).

    The candidates of a family are a seeded uniform sample (the run's seed) of the training records
    the family applies to, at most :func:`max_candidates` (at the run's materiality, so that a leak
    :data:`COVER` times it can be injected); their leak rows come from
    :func:`synthguard.data.leaks.build_leak_rows`.
    """
    return ctx.memo("leak-sets", lambda: real_result(ctx, ("leak-sets", ctx.seed, ctx.materiality),
                                                lambda: _build(ctx), ctx.tables.schema.tabular_columns()))


def reuse_view(ctx: Context) -> Any:
    """What a drop-and-retest's reuse is keyed by (:mod:`synthguard.engine.reuse`): on
    record-level tables the context's encoded view in one process, its backend's ``reuse_key``
    on a cluster; ``None`` for entities (nothing is kept or read there)."""
    if ctx.entities is not None:
        return None
    return ctx.encoded if ctx.data_backend is None else ctx.data_backend.reuse_key


def real_result(ctx: Context, key: Any, compute: Any, columns: list[str]) -> Any:
    """``compute()``, a result of the training and control rows alone: a drop-and-retest reads
    the run's (:func:`synthguard.engine.reuse.real_memo`)."""
    view = reuse_view(ctx)
    if view is None:
        return compute()
    from ..engine.reuse import real_memo

    return real_memo(view, key, compute, columns)


def _build(ctx: Context) -> dict[str, LeakSet]:
    from ..stats import make_rng

    original = _original(ctx)
    n = len(original)
    spec = _spec(ctx)
    pool = _pool(ctx)
    cap = max_candidates(n, ctx.materiality)
    out: dict[str, LeakSet] = {}
    entity_run = ctx.entities is not None  # the tables are one row per person
    for family in FAMILIES:
        if family == "person" and entity_run and out.get("exact") is not None:
            # a whole person copied is their entity record copied: the exact family at this level
            ex = out["exact"]
            out[family] = LeakSet(family, ex.sources, ex.rows, ex.reason, ex.partners, ex.eligible)
            continue
        mask, reason = family_candidates(family, original, pool, spec)
        if mask is None:
            out[family] = LeakSet(family, np.zeros(0, np.int64), None, reason)
            continue
        eligible = np.flatnonzero(mask)
        if eligible.size == 0:
            out[family] = LeakSet(family, eligible, None, "no training record qualifies")
            continue
        rng = make_rng(ctx.seed, "leak-rows", family)
        src = np.sort(rng.choice(eligible, min(cap, eligible.size), replace=False))
        nb = _nearest_training(ctx, src) if family == "interpolation" else None
        rows = build_leak_rows(family, original, src, pool=pool, spec=spec, rng=rng, neighbours=nb)
        out[family] = LeakSet(family, src, rows, partners=nb, eligible=int(eligible.size))
    return out


def _leak_encoder(ctx: Context, columns: list[str], categorical_only: bool) -> Any:
    """A copy of the run's encoder that codes leak rows as the real tables' rows are coded
    (:func:`~synthguard.engine.backend.extending_encoder`): a leak row's value that is a real value
    gets the real code, a new value a code of its own, and the real tables' codes never change
    (whichever test asks first)."""
    from ..engine.backend import extending_encoder

    return extending_encoder(ctx.encoded.encoder, ctx.tables, columns, categorical_only)


def leak_block(ctx: Context, family: str, columns: list[str], *, categorical_only: bool = False
               ) -> Block | None:
    """The leak rows of ``family`` encoded like the run's tables (``None`` when the family does not
    apply to this run)."""
    ls = leak_sets(ctx).get(family)
    if ls is None or not ls.available:
        return None
    key = ("leak-block", family, tuple(columns), categorical_only)
    return ctx.memo(key, lambda: _leak_encoder(ctx, columns, categorical_only).encode(
        ls.rows, columns, categorical_only=categorical_only))


def response(ctx: Context, family: str, pairs: tuple[np.ndarray, np.ndarray, np.ndarray]
             ) -> LeakResponse | None:
    """A :class:`LeakResponse` from ``(leak row, pooled target, score)`` triples of ``family``."""
    ls = leak_sets(ctx).get(family)
    if ls is None or not ls.available:
        return None
    rows, target, score = (np.asarray(a) for a in pairs)
    return LeakResponse(ls.sources, ls.sources[rows.astype(np.int64)], target, score, ls.partners)


def row_families(ctx: Context) -> tuple[str, ...]:
    """The families whose leak rows are rows of the tables (every available family but ``text``,
    whose leak is in a document): what the tabular tests measure their responses to."""
    return tuple(f for f, ls in leak_sets(ctx).items() if ls.available and f != "text")


def family_status(ctx: Context) -> dict[str, str | None]:
    """Every leak family of this run: ``None`` when it applies (its rows are built), else why not."""
    return {f: (None if ls.available else ls.reason) for f, ls in leak_sets(ctx).items()}


def family_eligible(ctx: Context) -> dict[str, int]:
    """Every applicable leak family of this run -> how many training records it applies to (all of
    them but for the families of a kind of record: ``rare``, ``linkage``)."""
    return {f: ls.eligible for f, ls in leak_sets(ctx).items() if ls.available}
