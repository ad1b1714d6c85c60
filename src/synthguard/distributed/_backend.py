"""The Dask side of :class:`synthguard.engine.backend.Backend`: the same questions, over partitions.

Key groups and key lookups are group-bys and joins on 128-bit row identities
(:func:`synthguard.data.encoding.row_hash128`: two independently seeded 64-bit hashes of the encoded
values; two different value tuples collide with probability about 2**-128; on many column sets at
once, :meth:`DaskBackend.key_counts` and :meth:`DaskBackend.unique_sets`, 128-bit sums of per-cell
hashes, :func:`~._tables.set_hashes`, every cell of a partition hashed once). Up to
:data:`DRIVER_GROUP_ROWS` identities (where the group-bys would give one partition) the key
relations gather the identities in one round and group them on the driver by one sort
(:func:`group_rows`: the same partitions, rows and order as the dask group-bys, held on the
driver); past it they never hold a table on the client: reductions run per partition and are
combined exactly (sums of integers, group sizes summed, the top ``n`` of every partition's top
``n``); per-record flags come back as one byte per record (:func:`~._tables.gather_flags`).
Quantiles: exact order statistics found by a search over the ordered float64 bit patterns, a few counting passes over the partitions, nothing gathered
(:meth:`DaskBackend.quantiles`). Neighbours: the partitioned engine
(:func:`~._knn.kneighbors_distributed`, bit for bit the one-process search). Rows by position are
fetched from the partitions that hold them. Positions are canonical positions, as in one process.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..data.encoding import Block, Encoder
from ..engine.backend import (
    Bins,
    FrameFn,
    Lookups,
    Queries,
    balanced_keys,
    draw_in_content_order,
    frame_sum,
    group_sizes,
    held_rows,
    match_rows,
    matrix_values,
    median_of_order_stats,
    merge_value_summaries,
    only_matches,
    picked_values,
    quantile_ranks,
    quantiles_of_ranks,
    query_counts_of,
    query_matrix,
    raw_numeric,
    subset_bits,
    subset_counts_of,
    text_counts_of,
    top_rows,
    value_summary,
)
from ._knn import kneighbors_distributed
from ._tables import DistTables, cell_matrix, gather_flags, identity_hashes, set_hashes

__all__ = ["DaskBackend", "DaskRelation"]

_KEYS = ["h1", "h2"]


def _hash_frame(encoder: Encoder, frame: pd.DataFrame, positions: np.ndarray,
                groups: dict[str, tuple[str, ...]], bins: dict[str, np.ndarray]) -> pd.DataFrame:
    """One partition as ``{name}1, {name}2`` identity columns per group of columns (binned columns
    cut first: bin numbers compared by value, missing kept missing), plus ``pos``."""
    if bins:
        frame = frame.copy()
        for c, inner in bins.items():
            if c in frame:
                vals = raw_numeric(frame[c])
                codes = np.searchsorted(inner, vals, side="left").astype(np.float64)
                codes[np.isnan(vals)] = np.nan
                frame[c] = codes
    out = {}
    for name, cols in groups.items():
        h = identity_hashes(encoder, frame, cols)
        out[name + "1"], out[name + "2"] = h[:, 0], h[:, 1]
    out["pos"] = np.asarray(positions, dtype=np.int64)
    return pd.DataFrame(out)


def _hash_held(held: tuple[np.ndarray, np.ndarray], columns: tuple[str, ...],
               groups: dict[str, tuple[str, ...]]) -> pd.DataFrame:
    """:func:`_hash_frame` from a partition's held cell hashes on ``columns`` (:func:`_cell_part`):
    each group's identities the sums of its cells (:func:`~synthguard.data.hashing.set_sums`,
    the keys of :func:`~._tables.set_hashes`: other words than :func:`~._tables.identity_hashes`,
    the same rows equal), no cell encoded or hashed again."""
    from ..data.hashing import iter_set_sums

    cells, pos = held
    at = {c: j for j, c in enumerate(columns)}
    out = {}
    for name, h in zip(groups, iter_set_sums(cells, [[at[c] for c in cols] for cols in groups.values()]),
                       strict=True):
        out[name + "1"], out[name + "2"] = h[:, 0], h[:, 1]
    out["pos"] = np.asarray(pos, dtype=np.int64)
    return pd.DataFrame(out)


#: Per role, a partition's held cell hashes and the columns they cover
#: (:meth:`DaskBackend.relation_cells`), or ``None``: hash the typed partitions.
HeldCells = dict[str, tuple[tuple[str, ...], list[Any]]] | None


def _hash_parts(dt: DistTables, role: str, groups: dict[str, tuple[str, ...]], bins: Bins | None,
                held: HeldCells = None) -> list[Any]:
    """One Delayed per partition of ``role`` (input order) of its :func:`_hash_frame` identities,
    summed from the held cells (:func:`_hash_held`) when ``held`` is given."""
    if held is not None:  # summed from the held cells: no partition encoded or hashed again
        from dask import delayed

        cols, futures = held[role]
        f = delayed(_hash_held, pure=True)
        return [f(c, cols, groups) for c in futures]
    used = {c: np.asarray(e) for c, e in (bins or {}).items()
            if any(c in cols for cols in groups.values())}
    return dt.map(role, _hash_frame, groups, used, ordered=False)


def _frames(dt: DistTables, role: str, groups: dict[str, tuple[str, ...]], bins: Bins | None,
            held: HeldCells = None) -> Any:
    import dask.dataframe as dd

    meta = pd.DataFrame({**{f"{g}{i}": pd.Series([], dtype="uint64") for g in groups for i in (1, 2)},
                         "pos": pd.Series([], dtype="int64")})
    return dd.from_delayed(_hash_parts(dt, role, groups, bins, held), meta=meta, verify_meta=False)


#: Keys (rows x column sets, 28 bytes each) one batch of :meth:`DaskBackend.unique_sets` or one
#: pass of :meth:`DaskBackend.key_counts_rows`' bucket join holds at most over all the partitions
#: together (672 MB of keys on the cluster, whatever its rows: a batch takes fewer sets as the
#: tables grow, at least one). A budget per partition let a batch grow with the partitions: at 1M
#: rows (five 250,000-row partitions, 20M keys a batch in a dask group-by) the workers peaked at
#: 1.9 GB in ``near_copies``. 24M (16M until session 35): one set of a sampled 10M-row run's
#: full-table one-cell join (10M release and 12.5M real rows: 22.5M keys) in one pass, not two,
#: every partition read once a set (docs/scaling.md, session 35: that sampling stage 1,435 ->
#: 670 s on 2 workers of 4 GB, the workers' peaks 1,856 / 1,631 -> 1,716 / 1,626 MiB).
SET_BATCH_KEYS = 24_000_000
#: Keys one bucket of a :meth:`DaskBackend.unique_sets` batch groups at most (one task sorts them:
#: about 80 bytes a key at its peak): a batch's keys are split by hash into
#: ``ceil(batch keys / SET_BUCKET_KEYS)`` buckets.
SET_BUCKET_KEYS = 2_000_000
#: Rows of a partition one step of a task searches at once (:func:`_within_part`): its arrays grow
#: with the rows times the pairs a row has, not with the partition
BLOCK_ROWS = 65_536

#: share of the workers' memory (their limits summed, less what they hold) a singling-out search's
#: held query tables may take (:meth:`DaskBackend._query_tables`, 16 bytes a cell counted): twice
#: the typed tables' :data:`~._tables.PERSIST_SHARE`, since a search without them reads, encodes and
#: indexes every release partition once a batch (a hundred batches at 10M release rows, whose
#: tables, 2.4 GB, did not fit a quarter of two 4 GB workers)
QUERY_TABLE_SHARE = 0.5
#: Column sets one task of :meth:`DaskBackend.key_groups_many` hashes at most: a task's long table is
#: ``rows x sets x 32`` bytes (1M rows x 8 sets: 256 MB), however many sets are asked.
SETS_PER_TASK = 8
#: Query keys (rows asked x column sets) one batch of :meth:`DaskBackend.key_counts_rows` asks at
#: most: the driver holds a batch's answers (28 bytes a key found, 16 a row and set once yielded)
HELD_QUERY_KEYS = 4_000_000
#: Pooled keys (pooled rows x column sets) one batch of :meth:`DaskBackend.key_counts_rows` sends
#: to every partition of the asked rows at most, when one set's pooled keys fit it (a sampled
#: run's 400,000 real records): the pooled side grouped once (its distinct keys, counts and lowest
#: positions: about 32 bytes a key on each worker) and each asked partition looks its rows up in
#: it, so the asked table is read once a batch of sets, not once a set (at 10M asked rows whose
#: cells do not fit the workers: once per ``near_copies_2`` set before, 121 reads). ``0``: always
#: the bucket join.
POOLED_BROADCAST_KEYS = 4_000_000
#: Answers (asked rows x column sets, 4 bytes each: the index of the pooled key a row holds) one
#: broadcast batch of :meth:`DaskBackend.key_counts_rows` holds on the workers at most, until the
#: driver has read them a few sets at a time (:data:`SET_READ_BYTES`; 400 MB over the cluster);
#: beside them each partition
#: keeps its asked rows' positions once a batch (8 bytes a row, whatever the number of sets)
BROADCAST_ANSWERS = 100_000_000
#: Bytes of those answers (4 bytes an asked row and set) the driver reads in one round trip at
#: most, or one set's answers when those are more: the sets of a broadcast batch are read as many
#: at a time as fit (up to 167 sets a trip at 100,000 asked rows, 16 at 1M, one at 10M; never more
#: than the batch's), each set's answers yielded in turn as before
SET_READ_BYTES = 64 * 2**20
#: Query rows :meth:`DaskBackend.rows_matched` and :meth:`DaskBackend.nearest_reached` ask of one
#: reference partition in one task at most (encoded, 8 bytes a cell: 60 MB at 15 columns, twice
#: while a group is stacked): the query partitions' kept rows are stacked into groups of up to this
#: many, so a reference partition's join and sorts (or tree) are done once a group, not once a query
#: partition (a sampled 10M run's 200,000 real records in 40 partitions of 5,000 rows were matched
#: against each of the 40 release partitions in 1,600 tasks, each sorting its 250,000 release rows
#: again: 874 s for ``new_row_synthesis`` on 2 workers).
MATCH_QUERY_ROWS = 500_000
#: Bytes of whole query-matrix rows :meth:`DaskBackend.query_values` hands out (a long singling-out
#: search's whole release) that the driver keeps to count :meth:`DaskBackend.query_counts` of the
#: same rows itself (the caller's array, not copied): at 1M release rows of 15 columns 120 MB, a
#: hundred batches not sent to every partition. Its column index comes beside it, about 2.5 times
#: the rows' bytes at 15 columns (measured: 60 MB for 24 MB of rows; codes of every column in each
#: column's order), so up to about 900 MB of the driver at this bound, held until another table is
#: asked (in the singling-out metric, its next count: of the training rows). The singling-out
#: search asks for whole rows only within its own bound of the same size (``RELEASE_MATRIX_BYTES``).
DRIVER_QUERY_BYTES = 256 * 2**20


def _stack_sets(wide: pd.DataFrame, n_sets: int, first: int) -> pd.DataFrame:
    """The wide identities of ``n_sets`` column sets (``s{j}_1``, ``s{j}_2``, ``pos``) stacked:
    ``set`` (counted from ``first``), ``h1``, ``h2`` and ``pos``, one row per row and set."""
    n = len(wide)
    return pd.DataFrame({
        "set": np.repeat(np.arange(first, first + n_sets, dtype=np.int64), n),
        "h1": np.concatenate([wide[f"s{j}_1"].to_numpy(np.uint64) for j in range(n_sets)]),
        "h2": np.concatenate([wide[f"s{j}_2"].to_numpy(np.uint64) for j in range(n_sets)]),
        "pos": np.tile(wide["pos"].to_numpy(np.int64), n_sets)})


def _hash_sets_long(encoder: Encoder, frame: pd.DataFrame, positions: np.ndarray,
                    sets: tuple[tuple[str, ...], ...], bins: dict[str, np.ndarray], first: int = 0
                    ) -> pd.DataFrame:
    """One partition's identities on each of ``sets`` stacked (:meth:`DaskBackend.key_groups_many`):
    ``set`` (the index of the column set, counted from ``first``), ``h1``, ``h2`` and ``pos``, one
    row per row and set."""
    wide = _hash_frame(encoder, frame, positions, {f"s{j}_": cols for j, cols in enumerate(sets)}, bins)
    return _stack_sets(wide, len(sets), first)


def _hash_sets_long_held(held: tuple[np.ndarray, np.ndarray], columns: tuple[str, ...],
                         sets: tuple[tuple[str, ...], ...], first: int = 0) -> pd.DataFrame:
    """:func:`_hash_sets_long` from a partition's held cell hashes (:func:`_hash_held`)."""
    wide = _hash_held(held, columns, {f"s{j}_": cols for j, cols in enumerate(sets)})
    return _stack_sets(wide, len(sets), first)


def _named(f: pd.DataFrame, names: dict[str, str]) -> pd.DataFrame:
    return f.rename(columns=names)


def _fill_groups(f: pd.DataFrame, roles: tuple[str, ...], keys: tuple[str, ...] = ()) -> pd.DataFrame:
    out = {k: f[k].to_numpy(np.int64) for k in keys}
    out.update({"h1": f["h1"].to_numpy(np.uint64), "h2": f["h2"].to_numpy(np.uint64)})
    for r in roles:
        out[f"n_{r}"] = f[f"n_{r}"].fillna(0).to_numpy(np.int64)
        out[f"first_{r}"] = f[f"first_{r}"].fillna(-1).to_numpy(np.int64)
    return pd.DataFrame(out)


def _fill_rows(f: pd.DataFrame, names: tuple[str, ...]) -> pd.DataFrame:
    out = {"pos": f["pos"].to_numpy(np.int64)}
    for n in names:
        out[n] = f[n].fillna(0).to_numpy(np.int64)
    return pd.DataFrame(out)


def _apply_sum(f: pd.DataFrame, fn: FrameFn) -> Any:
    return frame_sum(fn(f))


def _apply_sizes(f: pd.DataFrame, fn: FrameFn) -> pd.Series:
    return group_sizes(fn(f))


def _flag_frame(f: pd.DataFrame, fns: dict[str, FrameFn]) -> pd.DataFrame:
    out = {"pos": f["pos"].to_numpy(np.int64)}
    for name, fn in fns.items():
        out[name] = np.asarray(fn(f), dtype=bool)
    return pd.DataFrame(out)


class DaskRelation:
    """A :class:`~synthguard.engine.backend.Relation` held as a dask DataFrame (never on the client),
    or, when its group-bys ran on the driver (:data:`DRIVER_GROUP_ROWS`), as the same partitions
    in pandas on the driver (``parts``): every reduction then runs there, partition by partition
    as on the cluster, so its answers are the same bit for bit."""

    def __init__(self, dt: DistTables, frame: Any, role: str | None = None, *,
                 parts: list[pd.DataFrame] | None = None) -> None:
        self.dt, self._graph, self.role = dt, frame, role
        self._held: Any = None
        self._local = parts

    @property
    def frame(self) -> Any:
        """The relation, computed once on the cluster at its first use and held there while this
        object lives (a metric asks several reductions of one relation: the group-bys and joins
        behind it run once, not once per reduction)."""
        if self._held is None:
            if self._local is not None and self._graph is None:  # its driver partitions, sent
                import dask.dataframe as dd
                from dask import delayed

                self._graph = dd.from_delayed([delayed(p, pure=True) for p in self._local],
                                              meta=self._local[0].iloc[:0], verify_meta=False)
            self._held = self.dt.client.persist(self._graph)
        return self._held

    def _parts(self) -> list[Any]:
        return list(self.frame.to_delayed())

    def _meta(self) -> pd.DataFrame:
        return self._local[0].iloc[:0] if self._local is not None else self._graph._meta

    def sums(self, *fns: FrameFn) -> list[Any]:
        from dask import delayed

        if self._local is not None:
            got = [sum([_apply_sum(p, fn) for p in self._local], 0) for fn in fns]
        else:
            parts = self._parts()
            got = self.dt.compute([delayed(sum)([delayed(_apply_sum, pure=True)(p, fn) for p in parts], 0)
                                   for fn in fns])
        return [v if isinstance(v, float) else int(v) for v in got]

    def counts(self, fn: FrameFn) -> pd.Series:
        from dask import delayed

        if self._local is not None:
            got = [_apply_sizes(p, fn) for p in self._local]
        else:
            got = self.dt.compute([delayed(_apply_sizes, pure=True)(p, fn) for p in self._parts()])
        got = [g for g in got if len(g)]
        if not got:
            return group_sizes(fn(self._meta()))
        total = pd.concat(got)
        return total.groupby(level=list(range(total.index.nlevels)), sort=True).sum()

    def top(self, n: int, by: Sequence[str], ascending: Sequence[bool],
            where: FrameFn | None = None, derive: FrameFn | None = None) -> pd.DataFrame:
        from dask import delayed

        if n <= 0:
            meta = self._meta()
            return (derive(meta) if derive is not None else meta).iloc[:0]
        if self._local is not None:
            parts = [top_rows(p, n, tuple(by), tuple(ascending), where, derive) for p in self._local]
        else:
            parts = self.dt.compute([delayed(top_rows, pure=True)(p, n, tuple(by), tuple(ascending), where,
                                                                  derive) for p in self._parts()])
        return top_rows(pd.concat(parts, ignore_index=True), n, by, ascending).reset_index(drop=True)

    def flags(self, **fns: FrameFn) -> dict[str, np.ndarray]:
        if self.role is None:
            raise ValueError("flags are per row of a key lookup (key_rows), not of key groups")
        if self._local is not None:
            return _place_flags(self._local, self.dt.get(self.role).n_rows, self.role, fns)
        meta = pd.DataFrame({"pos": pd.Series([], dtype="int64"),
                             **{n: pd.Series([], dtype=bool) for n in fns}})
        rows = self.frame.map_partitions(_flag_frame, dict(fns), meta=meta)
        out: dict[str, np.ndarray] = {}
        names = list(fns)
        for j in range(0, len(names), 7):  # gather_flags packs up to 7 flags per byte
            out.update(gather_flags(self.dt, self.role, rows, tuple(names[j:j + 7])))
        return out


def _place_flags(parts: Sequence[pd.DataFrame], n: int, role: str, fns: Mapping[str, FrameFn]
                 ) -> dict[str, np.ndarray]:
    """:meth:`DaskRelation.flags` of partitions held on the driver: each flag at its row's
    position (every row exactly once, as :func:`~._tables.gather_flags` checks)."""
    from ..errors import MetricError

    out = {name: np.zeros(n, dtype=bool) for name in fns}
    seen = np.zeros(n, dtype=bool)
    delivered = 0
    for p in parts:
        pos = p["pos"].to_numpy(np.int64)
        seen[pos] = True
        delivered += pos.size
        for name, fn in fns.items():
            out[name][pos] = np.asarray(fn(p), dtype=bool)
    if delivered != n or not seen.all():
        raise MetricError(f"internal error: per-record flags of {delivered} rows came back for the {n} "
                          f"rows of the {role} table")
    return out


class RunTables:
    """The tables of one run on a cluster, as :mod:`synthguard.engine.reuse` keys what a
    drop-and-retest reads of its run (``tables``: their roles and sizes): a key of its own, so
    that keeping the run's results for its re-tests keeps none of its backend's cluster state."""

    __slots__ = ("tables", "__weakref__")

    def __init__(self, tables: DistTables) -> None:
        self.tables = tables


class DaskBackend:
    """The :class:`~synthguard.engine.backend.Backend` of a distributed run over ``dt``.

    Parameters
    ----------
    dt : DistTables
        The partitioned tables (:func:`~._tables.load_tables`).
    neighbour_backend : str
        The neighbour engine's backend on the workers.
    """

    def __init__(self, dt: DistTables, neighbour_backend: str = "auto") -> None:
        self.dt, self.neighbour_backend = dt, neighbour_backend
        #: what a drop-and-retest's reuse is keyed by (:class:`RunTables`): not this backend,
        #: whose held partitions and query tables go once its run is over
        self.reuse_key = RunTables(dt)
        self._row_ids: dict[tuple[str, ...], dict[str, np.ndarray]] = {}
        # whole searches in seconds, kept for the run: a subsampled DCR test asks the same search
        # once per iteration and keeps other rows of it (each a few numbers per query row)
        self._searched: dict[tuple[Any, ...], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def n_rows(self, role: str) -> int:
        return self.dt.get(role).n_rows

    def _split(self, roles: Sequence[str]) -> int:
        return max(self.dt.split_out(r) for r in roles)

    def _on_driver(self, roles: Sequence[str], identities: int) -> bool:
        """Whether a key relation over ``roles`` gathering ``identities`` row identities (rows
        times column groups) groups them on the driver: up to :data:`DRIVER_GROUP_ROWS`, and only
        where its dask group-bys would give one partition (no role past
        :data:`~._tables.SHUFFLE_ROWS`), so the relation's partitions are the same either way."""
        return identities <= DRIVER_GROUP_ROWS and all(self.dt.split_out(r) == 1 for r in roles)

    def _gather(self, asks: Mapping[str, dict[str, tuple[str, ...]]], bins: Bins | None,
                held: HeldCells) -> dict[str, list[pd.DataFrame]]:
        """Per role of ``asks``, its partitions' identities on the asked column groups
        (:func:`_hash_parts`: ``{name}1, {name}2`` per group and ``pos``, input order), every role's
        partitions in one round (one task a partition, 16 bytes a row and group and 8 a row travel)."""
        tasks, owner = [], []
        for role, groups in asks.items():
            parts = _hash_parts(self.dt, role, groups, bins, held)
            tasks += parts
            owner += [role] * len(parts)
        out: dict[str, list[pd.DataFrame]] = {r: [] for r in asks}
        for role, got in zip(owner, self.dt.compute(tasks), strict=True):
            out[role].append(got)
        return out

    def key_groups(self, columns: Sequence[str], roles: Sequence[str], *,
                   bins: Bins | None = None) -> DaskRelation:
        roles = tuple(roles)
        split = self._split(roles)
        held = self.relation_cells(roles, columns, bins)
        if self._on_driver(roles, sum(self.n_rows(r) for r in set(roles))):
            got = self._gather({r: {"h": tuple(columns)} for r in roles}, bins, held)
            merged = None
            for role in roles:  # as the dask path: each role's groups, the roles merged (pandas)
                g = _groups_frame(_KEYS, _words(got[role], "h"), _positions(got[role]), role)
                merged = g if merged is None else merged.merge(g, on=_KEYS, how="outer")
            return DaskRelation(self.dt, None, parts=[_fill_groups(merged, roles)])
        merged = None
        for role in roles:
            rows = _frames(self.dt, role, {"h": tuple(columns)}, bins, held)
            g = rows.groupby(_KEYS).pos.agg(["min", "count"], split_out=split).reset_index()
            # (renames after a split_out group-by trip dask-expr: renamed inside the partitions)
            g = g.map_partitions(_named, {"min": f"first_{role}", "count": f"n_{role}"})
            merged = g if merged is None else merged.merge(g, on=_KEYS, how="outer")
        meta = pd.DataFrame({"h1": pd.Series([], dtype="uint64"), "h2": pd.Series([], dtype="uint64"),
                             **{f"{p}_{r}": pd.Series([], dtype="int64") for r in roles
                                for p in ("n", "first")}})
        return DaskRelation(self.dt, merged.map_partitions(_fill_groups, roles, meta=meta))

    def key_groups_many(self, column_sets: Sequence[Sequence[str]], roles: Sequence[str], *,
                        bins: Bins | None = None) -> DaskRelation:
        """:meth:`key_groups` of every column set in one graph: each partition hashes the sets
        ``SETS_PER_TASK`` at a time (rows stacked per set, :func:`_hash_sets_long`: a task's memory
        does not grow with the number of sets), one group-by on ``(set, h1, h2)`` per role, the
        roles merged on the same keys; its reductions are one round on the cluster, whatever the
        number of sets. Up to :data:`DRIVER_GROUP_ROWS` identities (rows times sets) the
        identities are gathered in one round and grouped on the driver instead (the same groups in
        the same order, :func:`_stacked_ranks`)."""
        import dask.dataframe as dd

        roles, sets = tuple(roles), tuple(tuple(c) for c in column_sets)
        keys = ["set", *_KEYS]
        meta = pd.DataFrame({"set": pd.Series([], dtype="int64"), "h1": pd.Series([], dtype="uint64"),
                             "h2": pd.Series([], dtype="uint64"),
                             **{f"{p}_{r}": pd.Series([], dtype="int64") for r in roles
                                for p in ("n", "first")}})
        if not sets or not roles:
            return DaskRelation(self.dt, dd.from_pandas(meta, npartitions=1))
        used = {c: np.asarray(e) for c, e in (bins or {}).items() if any(c in cols for cols in sets)}
        long_meta = pd.DataFrame({"set": pd.Series([], dtype="int64"), "h1": pd.Series([], dtype="uint64"),
                                  "h2": pd.Series([], dtype="uint64"), "pos": pd.Series([], dtype="int64")})
        split = self._split(roles)
        held = self.relation_cells(roles, [c for cols in sets for c in cols], bins)
        if self._on_driver(roles, len(sets) * sum(self.n_rows(r) for r in set(roles))):
            got = self._gather({r: {f"s{j}_": cols for j, cols in enumerate(sets)} for r in roles},
                               bins, held)
            merged = None
            for role in roles:  # rows stacked per set, as _stack_sets, then grouped on (set, h1, h2)
                words = [_words(got[role], f"s{j}_") for j in range(len(sets))]
                n = words[0][0].size
                stacked = [np.repeat(np.arange(len(sets), dtype=np.int64), n),
                           np.concatenate([w[0] for w in words]), np.concatenate([w[1] for w in words])]
                del words
                rank = _stacked_ranks([len(p) for p in got[role]], len(sets))
                g = _groups_frame(keys, stacked, np.tile(_positions(got[role]), len(sets)), role, rank)
                merged = g if merged is None else merged.merge(g, on=keys, how="outer")
            return DaskRelation(self.dt, None, parts=[_fill_groups(merged, roles, ("set",))])
        merged = None
        for role in roles:
            if held is None:
                pieces = [self.dt.map(role, _hash_sets_long, sets[a:a + SETS_PER_TASK], used, a, ordered=False)
                          for a in range(0, len(sets), SETS_PER_TASK)]
            else:  # summed from the held cells
                from dask import delayed

                long_held = delayed(_hash_sets_long_held, pure=True)
                cols, futures = held[role]
                pieces = [[long_held(c, cols, sets[a:a + SETS_PER_TASK], a) for c in futures]
                          for a in range(0, len(sets), SETS_PER_TASK)]
            rows = dd.concat([dd.from_delayed(p, meta=long_meta, verify_meta=False) for p in pieces])
            g = rows.groupby(keys).pos.agg(["min", "count"], split_out=split).reset_index()
            g = g.map_partitions(_named, {"min": f"first_{role}", "count": f"n_{role}"})
            merged = g if merged is None else merged.merge(g, on=keys, how="outer")
        return DaskRelation(self.dt, merged.map_partitions(_fill_groups, roles, ("set",), meta=meta))

    def key_rows(self, role: str, lookups: Lookups, *, bins: Bins | None = None) -> DaskRelation:
        groups = {f"g{j}_": tuple(spec[0]) for j, spec in enumerate(lookups.values())}
        every = [c for spec in lookups.values() for c in (*spec[0], *(spec[2] if len(spec) > 2 else ()))]
        every_role = tuple(dict.fromkeys([role, *(r for spec in lookups.values() for r in spec[1])]))
        held = self.relation_cells(every_role, every, bins)
        asks: dict[str, dict[str, tuple[str, ...]]] = {role: dict(groups)}
        for j, (_, in_roles, *distinct) in enumerate(lookups.values()):
            for r in in_roles:
                asks.setdefault(r, {})[f"g{j}_"] = groups[f"g{j}_"]
                if distinct:
                    asks[r][f"v{j}_"] = tuple(distinct[0])
        if self._on_driver(every_role, sum(self.n_rows(r) * len(a) for r, a in asks.items())):
            got = self._gather(asks, bins, held)
            counts = {}
            for j, (name, (_, in_roles, *distinct)) in enumerate(lookups.items()):
                pool = [np.concatenate(w) for w in zip(*(_words(got[r], f"g{j}_") for r in in_roles),
                                                       strict=True)]
                values = ([np.concatenate(w) for w in zip(*(_words(got[r], f"v{j}_") for r in in_roles),
                                                          strict=True)] if distinct else None)
                counts[name] = lookup_counts(pool, _words(got[role], f"g{j}_"), values)
            return DaskRelation(self.dt, None, role, parts=_split_rows(got[role], counts))
        rows = _frames(self.dt, role, groups, bins, held)
        for j, (name, (_, in_roles, *distinct)) in enumerate(lookups.items()):
            g = f"g{j}_"
            keys = [g + "1", g + "2"]
            hashed = {g: groups[g], "v": tuple(distinct[0])} if distinct else {g: groups[g]}
            cols = keys + (["v1", "v2"] if distinct else []) + ["pos"]
            pool = [_frames(self.dt, r, hashed, bins, held)[cols] for r in in_roles]
            if len(pool) > 1:
                import dask.dataframe as dd

                pooled = dd.concat(pool)
            else:
                pooled = pool[0]
            split = self._split(in_roles)
            if distinct:  # one row per distinct (group, value) pair, then pairs per group
                pooled = pooled.groupby([*keys, "v1", "v2"]).pos.count(split_out=split).reset_index()
            cnt = pooled.groupby(keys).pos.count(split_out=split).reset_index()
            cnt = cnt.map_partitions(_named, {"pos": name})
            rows = rows.merge(cnt, on=keys, how="left")
        names = tuple(lookups)
        meta = pd.DataFrame({"pos": pd.Series([], dtype="int64"),
                             **{n: pd.Series([], dtype="int64") for n in names}})
        return DaskRelation(self.dt, rows.map_partitions(_fill_rows, names, meta=meta), role)

    def key_distinct(self, role: str, columns: Sequence[str], values: Sequence[str], *,
                     bins: Bins | None = None) -> DaskRelation:
        split = self._split((role,))
        held = self.relation_cells((role,), [*columns, *values], bins)
        if self._on_driver((role,), 2 * self.n_rows(role)):
            got = self._gather({role: {"k": tuple(columns), "v": tuple(values)}}, bins, held)[role]
            keys = _words(got, "k")
            counts = {"size": lookup_counts(keys), "distinct": lookup_counts(keys, values=_words(got, "v"))}
            return DaskRelation(self.dt, None, role, parts=_split_rows(got, counts))
        rows = _frames(self.dt, role, {"k": tuple(columns), "v": tuple(values)}, bins, held)
        keys = ["k1", "k2"]
        size = rows.groupby(keys).pos.count(split_out=split).reset_index()
        size = size.map_partitions(_named, {"pos": "size"})
        # the distinct (key, value) pairs, then pairs per key
        pairs = rows.groupby([*keys, "v1", "v2"]).pos.count(split_out=split).reset_index()
        distinct = pairs.groupby(keys).pos.count(split_out=split).reset_index()
        distinct = distinct.map_partitions(_named, {"pos": "distinct"})
        out = rows[[*keys, "pos"]].merge(size, on=keys, how="left").merge(distinct, on=keys, how="left")
        names = ("size", "distinct")
        meta = pd.DataFrame({"pos": pd.Series([], dtype="int64"),
                             **{n: pd.Series([], dtype="int64") for n in names}})
        return DaskRelation(self.dt, out.map_partitions(_fill_rows, names, meta=meta), role)

    def row_ids(self, columns: Sequence[str]) -> dict[str, np.ndarray]:
        """:func:`first_positions` over every role; a drop-and-retest derives them from its run's
        (:func:`synthguard.engine.reuse.first_positions_memo`: no pass over the partitions)."""
        from ..engine.reuse import first_positions_memo

        cols = tuple(columns)
        if cols not in self._row_ids:
            roles = tuple(self.dt.roles)
            self._row_ids[cols] = first_positions_memo(
                self.reuse_key, ("row ids", cols),
                lambda: first_positions(self.dt, cols, roles, held=self.relation_cells(roles, cols)), cols)
        return self._row_ids[cols]

    def ranges(self, columns: Sequence[str], roles: Sequence[str] = ("original",)) -> np.ndarray:
        return self.dt.ranges(columns, tuple(roles))

    def bounds(self, columns: Sequence[str], roles: Sequence[str] = ("original",)
               ) -> dict[str, tuple[float, float]]:
        cols = tuple(columns)
        if not cols:
            return {}
        parts = self.dt.compute([t for r in roles for t in self.dt.map(
            r, _raw_bounds, cols, with_encoder=False, ordered=False)])
        out = {}
        for j, c in enumerate(cols):
            out[c] = (min((p[j][0] for p in parts), default=np.inf),
                      max((p[j][1] for p in parts), default=-np.inf))
        return out

    def quantiles(self, columns: Sequence[str], roles: Sequence[str], q: np.ndarray
                  ) -> dict[str, np.ndarray]:
        """Exact quantiles from exact order statistics (:func:`quantiles_of_ranks`): a counting pass
        (values per column), then a search for the values at the ranks NumPy interpolates: each
        rank's candidate interval of ordered float64 bit patterns (:func:`_ordered_keys`) is cut at
        up to :data:`_PIVOTS` pivots, every partition counts its values at or below each pivot
        (one pass for every column and rank), and the interval shrinks to the pivots around the
        rank; 64-bit patterns take at most 7 passes. Only counts travel."""
        return self._quantile_search(tuple(columns), tuple(roles), q, encoded=False)

    def _quantile_search(self, cols: tuple[str, ...], roles: tuple[str, ...], q: np.ndarray, *,
                         encoded: bool) -> dict[str, np.ndarray]:
        """:meth:`quantiles` (raw values) or :meth:`encoded_quantiles` (``encoded``): each
        column's key range and count, then the order statistics at the ranks NumPy's interpolation
        reads (:meth:`_order_stats`)."""
        q = np.asarray(q, dtype=np.float64)
        tasks = [t for r in roles for t in (
            self.dt.map(r, _kept_key_range, cols, None, ordered=False) if encoded
            else self.dt.map(r, _key_range, cols, with_encoder=False, ordered=False))]
        parts = self.dt.compute(tasks)
        out: dict[str, np.ndarray] = {}
        todo: dict[str, tuple[int, int, int]] = {}
        for j, c in enumerate(cols):
            n = sum(p[j][0] for p in parts)
            if n == 0:
                out[c] = np.zeros(0)
            else:
                todo[c] = (n, min(p[j][1] for p in parts if p[j][0]), max(p[j][2] for p in parts if p[j][0]))
        if not todo:
            return out
        ranks = {c: np.unique(np.concatenate(quantile_ranks(n, q)[:2])) for c, (n, _, _) in todo.items()}
        asked = {c: (r, todo[c][1], todo[c][2]) for c, r in ranks.items()}
        found = (self._order_stats(roles, asked, count=_kept_count_at_or_below, args=(None,)) if encoded
                 else self._order_stats(roles, asked))
        for c, (n, _, _) in todo.items():
            out[c] = quantiles_of_ranks(n, q, lambda rk, c=c: found[c][np.searchsorted(ranks[c], rk)])
        return out

    def _order_stats(self, roles: tuple[str, ...], asked: dict[str, tuple[np.ndarray, int, int]], *,
                     count: Any = None, args: tuple[Any, ...] = ()) -> dict[str, np.ndarray]:
        """Per column, the values at 0-based ``ranks`` of its sorted values over ``roles``:
        ``asked[column] = (ranks, lowest key, highest key)`` (:func:`_ordered_keys`). ``count``:
        the partitions' count at or below the pivots (default :func:`_count_at_or_below` of the
        raw values; given, ``count(encoder, frame, positions, pivots, *args)``)."""
        lo = {c: np.full(r.size, k_lo, dtype=np.int64) for c, (r, k_lo, _) in asked.items()}
        hi = {c: np.full(r.size, k_hi, dtype=np.int64) for c, (r, _, k_hi) in asked.items()}
        while any((lo[c] < hi[c]).any() for c in asked):  # at most 7 passes (64 bits, 10 a pass)
            pivots = {c: _pivots(lo[c], hi[c]) for c in asked}
            flat = {c: np.concatenate(p) if p else np.zeros(0, np.int64) for c, p in pivots.items()}
            (shared,) = self.dt.client.scatter([flat], broadcast=True, hash=False)
            got = self.dt.compute([t for r in roles for t in (
                self.dt.map(r, _count_at_or_below, shared, with_encoder=False, ordered=False) if count is None
                else self.dt.map(r, count, shared, *args, ordered=False))])
            for c, (rank, _, _) in asked.items():
                total = np.sum([g[c] for g in got], axis=0, dtype=np.int64)
                start = 0
                for i, p in enumerate(pivots[c]):  # loop over ranks (a handful per column)
                    cnt = total[start:start + p.size]
                    start += p.size
                    below = cnt <= rank[i]  # the value at rank i lies above these pivots
                    if below.any():
                        lo[c][i] = p[below].max() + 1
                    if (~below).any():
                        hi[c][i] = p[~below].min()
        return {c: _from_keys(lo[c]) for c in asked}

    def encoded_quantiles(self, columns: Sequence[str], roles: Sequence[str], q: np.ndarray
                          ) -> dict[str, np.ndarray]:
        """The search of :meth:`quantiles` over the encoded values (the partitions encoded by the
        run's encoder, :func:`_kept_key_range` and :func:`_kept_count_at_or_below` of every row):
        exact order statistics, NumPy's interpolation, only counts travel."""
        return self._quantile_search(tuple(columns), tuple(roles), q, encoded=True)

    def distinct_numbers(self, columns: Sequence[str], roles: Sequence[str], cap: int
                         ) -> dict[str, int]:
        """Every partition sends its ``cap`` smallest distinct encoded values of each column
        (:func:`_smallest_distinct`): their union holds at least ``cap`` distinct values exactly
        when the table does, and all of them when it holds fewer."""
        cols = tuple(columns)
        got = self.dt.compute([t for r in roles for t in self.dt.map(
            r, _smallest_distinct, cols, int(cap), ordered=False)])
        return {c: int(min(np.unique(np.concatenate([g[j] for g in got] or [np.zeros(0, np.int64)])).size,
                           cap)) for j, c in enumerate(cols)}

    def text_counts(self, column: str, roles: Sequence[str]) -> pd.Series:
        """Every partition's :func:`~synthguard.data.coarsening.text_counts_of`, summed per text
        (one count per distinct text travels, no row)."""
        got = self.dt.compute([t for r in roles for t in self.dt.map(
            r, _text_counts, column, with_encoder=False, ordered=False)])
        if not got:
            return pd.Series([], dtype=np.int64)
        pooled = pd.concat(got)
        if not len(pooled):
            return pooled.astype(np.int64)
        return pooled.groupby(level=0).sum().astype(np.int64)

    def missing_counts(self, columns: Sequence[str], roles: Sequence[str]) -> dict[str, dict[str, int]]:
        """Every partition's missing values per column (:func:`_missing_part`), summed per role
        (one pass over the partitions of every role; a few numbers travel)."""
        cols, roles = tuple(columns), tuple(roles)
        tasks = {r: self.dt.map(r, _missing_part, cols, with_encoder=False, ordered=False) for r in roles}
        got = iter(self.dt.compute([t for r in roles for t in tasks[r]]))
        per_role = {r: np.sum([next(got) for _ in tasks[r]], axis=0, dtype=np.int64).reshape(-1)
                    if tasks[r] else np.zeros(len(cols), dtype=np.int64) for r in roles}
        return {c: {r: int(per_role[r][j]) for r in roles} for j, c in enumerate(cols)}

    def kneighbors(self, query: str, reference: str, columns: Sequence[str], metric: Any, k: int, *,
                   reference_rows: np.ndarray | None = None,
                   query_rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The partitioned search (:func:`~._knn.kneighbors_distributed`); a drop-and-retest
        answers what it can from its run's searches (:func:`synthguard.engine.reuse.search`,
        keyed by :attr:`reuse_key`), as one process's does."""
        from ..engine.reuse import search

        if query_rows is not None and query == reference and reference_rows is None:
            raise ValueError("query_rows: only for a query role other than the reference")  # a bug
        cols = list(columns)

        def run(q_rows: np.ndarray | None, r_rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
            return self._kneighbors(query, reference, cols, metric, k, r_rows, q_rows)

        return search(self.reuse_key, "days", query, reference, cols, metric, k, run,
                      query_rows=query_rows, reference_rows=reference_rows)

    def _kneighbors(self, query: str, reference: str, columns: Sequence[str], metric: Any, k: int,
                    reference_rows: np.ndarray | None, query_rows: np.ndarray | None
                    ) -> tuple[np.ndarray, np.ndarray]:
        if query_rows is not None and 0 < len(query_rows) and 2 * len(query_rows) < self.n_rows(query):
            # a sample of the query rows (closest_distance_mia's classes): only those rows are
            # fetched, encoded as the partitions are, and searched (the same numbers, less work)
            block = self.encoded_rows(query, columns, np.asarray(query_rows, dtype=np.int64))
            return kneighbors_distributed(self.dt, query, reference, columns, metric, k,
                                          backend=self.neighbour_backend, reference_rows=reference_rows,
                                          query_block=block)
        d, idx = kneighbors_distributed(self.dt, query, reference, columns, metric, k,
                                        backend=self.neighbour_backend, reference_rows=reference_rows)
        if query_rows is None:
            return d, idx
        rows = np.asarray(query_rows, dtype=np.int64)  # every row searched, the asked ones kept
        return d[rows], idx[rows]

    def within(self, role: str, columns: Sequence[str], metric: Any, frames: Sequence[pd.DataFrame],
               radius: np.ndarray) -> list[tuple[np.ndarray, ...]]:
        from ..engine.backend import split_pairs, stack_blocks

        cols = tuple(columns)
        blocks = [self.dt.encoder.encode(f, list(cols)) for f in frames]
        ref = self.dt.client.scatter(stack_blocks(blocks), broadcast=True, hash=False)  # small, once
        rad = self.dt.client.scatter(np.asarray(radius, dtype=float), broadcast=True, hash=False)
        got = self.dt.compute(self.dt.map(role, _within_part, cols, ref, rad, metric,
                                          self.neighbour_backend, ordered=False))
        q, r, d = (np.concatenate([g[i] for g in got]) for i in range(3))
        order = np.lexsort((r, d, q))  # each position's pairs by distance, then row, as in one process
        return split_pairs((q[order], r[order], d[order]), [b.n_rows for b in blocks])

    def balanced_rows(self, role: str, columns: Sequence[str], n: int, seed: int) -> np.ndarray:
        dt = self.dt
        if n >= dt.get(role).n_rows:
            return np.arange(dt.get(role).n_rows)
        parts = dt.compute(dt.map(role, _balanced_part, tuple(columns), n, seed, role, with_encoder=False,
                                  ordered=False))
        keys = np.concatenate([p[0] for p in parts])
        pos = np.concatenate([p[1] for p in parts])
        return np.sort(pos[np.lexsort((pos, keys))[:n]])

    def key_ids(self, columns: Sequence[str], roles: Sequence[str], *,
                bins: Bins | None = None) -> dict[str, np.ndarray]:
        """Per role of ``roles``: ids of the value tuples of ``columns`` cut at ``bins`` (equal
        tuples, equal ids: the first pooled position of the tuple over ``roles``), grouping the
        rows as :meth:`LocalBackend.key_ids <synthguard.engine.backend.LocalBackend.key_ids>`
        does (the values differ). One number per row comes to the driver: for a metric naming
        the release rows behind its key counts."""
        key = (tuple(columns), tuple(roles), tuple(sorted(
            (str(c), np.asarray(e, dtype=float).tobytes()) for c, e in (bins or {}).items())))
        got = self.__dict__.setdefault("_key_ids", {})
        if key not in got:
            got[key] = first_positions(self.dt, columns, roles, bins,
                                       held=self.relation_cells(roles, columns, bins))
        return got[key]

    def encoded_rows(self, role: str, columns: Sequence[str], rows: np.ndarray) -> Block:
        return self.dt.encoder.encode(fetch_rows(self.dt, role, rows, columns), list(columns))

    def take(self, role: str, rows: np.ndarray, columns: Sequence[str]) -> pd.DataFrame:
        return fetch_rows(self.dt, role, rows, columns)

    def key_matches(self, frames: Sequence[pd.DataFrame], columns: Sequence[str], roles: Sequence[str]
                    ) -> list[tuple[np.ndarray, np.ndarray]]:
        return [only_matches(*got) for got in self.key_counts(frames, [columns], roles)[0]]

    def _frame_cells(self, frame: pd.DataFrame, columns: tuple[str, ...]
                     ) -> tuple[tuple[str, ...], np.ndarray]:
        """:func:`~._tables.cell_matrix` of a frame of the driver on at least ``columns`` (the
        columns it was hashed on, and its cells), kept while the frame lives: the near-copy tests
        ask of the same release rows batch after batch of column sets, so each cell is encoded and
        hashed once, not once a batch."""
        import weakref

        held = self.__dict__.setdefault("_frame_cells_memo", {})
        got = held.get(id(frame))
        if got is not None and got[0]() is frame and set(columns) <= set(got[1]):
            return got[1], got[2]
        cells = cell_matrix(self.dt.encoder, frame, columns)
        key = id(frame)
        ref = weakref.ref(frame, lambda _r, k=key: held.pop(k, None))  # dropped with the frame
        held[key] = (ref, columns, cells)
        return columns, cells

    def held_cells(self, role: str, columns: tuple[str, ...]
                   ) -> tuple[tuple[str, ...], list[Any]] | None:
        """One future per partition of ``role`` (input order) holding its rows' cell hashes on
        at least ``columns`` and their canonical positions (:func:`_cell_part`), with the columns
        held: computed once and held on the cluster for the run (16 bytes a cell), so that every
        later ``key_counts`` call on those columns sums sets of held cells (no partition encoded
        or hashed again); ``None`` when they do not fit :data:`~._tables.PERSIST_SHARE` of the
        workers' memory less what they hold (then each call hashes the partitions as it goes).
        One column tuple held per role: one that does not cover ``columns`` is replaced."""
        from ._tables import PERSIST_SHARE, _memory_budget

        held = self.__dict__.setdefault("_held_cells", {})
        got = held.get(role)
        if got is not None and set(columns) <= set(got[0]):
            return got if got[1] is not None else None
        held.pop(role, None)  # released before the new ones are sized
        need = 16.0 * self.dt.get(role).n_rows * len(columns)
        fits = need <= _memory_budget(self.dt.client, PERSIST_SHARE)
        # unhashed keys (pure=False): two runs' held cells never share a key
        held[role] = (columns, list(self.dt.client.persist(self.dt.map(
            role, _cell_part, columns, pure=False, ordered=False))) if fits else None)
        return held[role] if fits else None

    def relation_cells(self, roles: Sequence[str], columns: Sequence[str], bins: Bins | None = None
                       ) -> HeldCells:
        """The held cell hashes (:meth:`held_cells`) of every role of ``roles`` covering
        ``columns``, for the key relations' identities (:meth:`key_groups`, :meth:`key_rows`,
        :meth:`key_distinct`, :meth:`key_groups_many`, :meth:`row_ids`): each relation then sums its
        groups' cells (:func:`_hash_held`) instead of encoding and hashing its columns of every
        partition again. A role's cells are held on the table's tabular columns and any asked
        (one hashing of every cell for the run, shared with :meth:`key_counts`). ``None`` (every
        role hashes its partitions, so the roles' identities stay comparable) when a column is cut
        at ``bins`` (the cells hold the values, not the bins) or a role's cells do not fit.

        Examples
        --------
        >>> import pandas as pd
        >>> from distributed import Client
        >>> from synthguard.distributed import cluster_backend
        >>> from synthguard.distributed._tables import load_tables
        >>> client = Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None)
        >>> df = pd.DataFrame({"a": [1, 2, 2, 3], "b": ["x", "y", "y", "x"]})
        >>> backend = cluster_backend(load_tables(df, df, None, None, client=client, npartitions=2))
        >>> sorted(backend.relation_cells(["original", "synthetic"], ["a"]))
        ['original', 'synthetic']
        >>> backend.relation_cells(["original"], ["a"], bins={"a": [1.5]}) is None
        True
        >>> client.close()
        """
        wanted = list(dict.fromkeys(columns))
        if any(c in wanted for c in (bins or {})):
            return None
        held = self.__dict__.get("_held_cells", {})
        tabular = self.dt.encoder.schema.tabular_columns()
        out = {}
        for role in dict.fromkeys(roles):
            now = held.get(role)
            cover = now[0] if now is not None and set(wanted) <= set(now[0]) else tuple(dict.fromkeys(
                [*(now[0] if now is not None else ()), *tabular, *wanted]))
            got = self.held_cells(role, cover)
            if got is None:
                return None
            out[role] = got
        return out

    def key_counts(self, frames: Sequence[pd.DataFrame], column_sets: Sequence[Sequence[str]],
                   roles: Sequence[str]) -> list[list[tuple[np.ndarray, np.ndarray]]]:
        from ..data.hashing import set_sums

        sets = [tuple(c) for c in column_sets]
        named = tuple(sorted({c for cols in sets for c in cols}))  # every column of the sets

        def sums(got: tuple[tuple[str, ...], np.ndarray]) -> list[np.ndarray]:
            at = {c: j for j, c in enumerate(got[0])}
            return set_sums(got[1], [[at[c] for c in cols] for cols in sets])

        by_frame = [sums(self._frame_cells(f, named)) for f in frames]
        sizes = [len(f) for f in frames]
        keys, rows_key = [], []
        for s in range(len(sets)):  # per set: the frames' distinct keys (sorted) and each row's key
            every = np.concatenate([h[s] for h in by_frame]) if frames else np.zeros((0, 2), np.uint64)
            uniq, inv = _distinct_pairs(every)
            keys.append(uniq)
            rows_key.append(inv)
        del by_frame  # the rows' keys: their distinct keys and each row's index kept
        # the column sets and the frames' keys travel to every worker once, as one object (not in
        # every task: thousands of leave-two-out sets would be walked and sent per partition);
        # each partition returns, per set and key it holds, how many rows hold it and the lowest
        # position
        (shared,) = self.dt.client.scatter([(tuple(sets), tuple(keys))], broadcast=True, hash=False)
        count = [np.zeros(k.size, dtype=np.int64) for k in keys]
        first = [np.full(k.size, -1, dtype=np.int64) for k in keys]
        tasks, starts, start = [], [], 0
        for role in roles:  # every partition of every role in one computation
            held = self.held_cells(role, named)
            if held is None:
                parts = self.dt.map(role, _key_hits, shared, ordered=False)
            else:
                from dask import delayed

                hits = delayed(_key_hits_held, pure=False)
                parts = [hits(c, held[0], shared) for c in held[1]]
            tasks += parts
            starts += [start] * len(parts)
            start += self.dt.get(role).n_rows
        for part, start in zip(self.dt.compute(tasks), starts, strict=True):
            for s, (k, n, low) in enumerate(part):
                pos = low + start
                count[s][k] += n
                first[s][k] = np.where(first[s][k] < 0, pos, np.minimum(first[s][k], pos))
        bounds = np.cumsum([0, *sizes])
        return [[(count[s][inv[a:b]], first[s][inv[a:b]]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
                for s, inv in enumerate(rows_key)]

    def key_counts_rows(self, role: str, rows: np.ndarray | None, column_sets: Sequence[Sequence[str]],
                        roles: Sequence[str]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """:meth:`key_counts` of the rows of ``role`` at canonical positions ``rows`` (in that
        order; ``None``: every row in canonical order) against the pooled rows of ``roles``,
        without the asked rows' keys on the driver: per column set (in order), per asked row, how
        many pooled rows have its values on the set and the lowest pooled position (``-1``: none).

        Joined on the workers by hash buckets, as :meth:`unique_sets` groups: the sets a batch at a
        time, a batch holding at most :data:`SET_BATCH_KEYS` keys over the asked and pooled roles'
        partitions and at most :data:`HELD_QUERY_KEYS` asked keys; each partition sums its rows'
        keys on the batch's sets from its held cells (:meth:`held_cells`, else hashes its rows)
        and splits them by hash into buckets of about :data:`SET_BUCKET_KEYS` keys
        (:func:`_keys_in_buckets`); one task per bucket sorts its asked and pooled keys together
        and returns, for the asked keys some pooled row holds, ``(set, asked position, count,
        lowest pooled position)`` (:func:`_join_bucket`: about 80 bytes a key of the bucket at its
        peak). Every partition's pieces of a batch are held until its buckets are joined, so when
        one set's keys alone exceed the budget (at 20M asked and 25M pooled rows, 45M keys: 1.26 GB
        held) the set is joined in passes, each over one slice of the buckets (the keys' first words
        modulo the buckets of every pass): every partition hashes its rows once a pass and keeps
        only that slice's keys, so a pass holds at most :data:`SET_BATCH_KEYS` keys whatever the
        rows (each partition's work then repeated once a pass). The driver receives only the asked
        keys found and yields one set's dense answers at a time. The same numbers as
        :meth:`key_counts` of the taken rows (the same keys, counted exactly), in any batches,
        passes and buckets.

        Parameters
        ----------
        role : str
            The role whose rows are asked (e.g. ``"synthetic"``).
        rows : numpy.ndarray or None
            Canonical positions of the asked rows, in the order of the answers; ``None``: all.
        column_sets : sequence of sequence of str
            The column sets (an empty set matches every pooled row).
        roles : sequence of str
            The pooled roles, positions over them concatenated in order.

        Yields
        ------
        tuple of numpy.ndarray
            Per column set, ``(counts, firsts)`` (int64, one per asked row).

        Examples
        --------
        >>> import pandas as pd
        >>> from distributed import Client
        >>> from synthguard.distributed import cluster_backend
        >>> from synthguard.distributed._tables import load_tables
        >>> client = Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None)
        >>> real = pd.DataFrame({"a": [1, 2, 2, 3], "b": ["x", "y", "y", "x"]})
        >>> rel = pd.DataFrame({"a": [2, 9, 1], "b": ["y", "x", "z"]})
        >>> backend = cluster_backend(load_tables(real, rel, None, None, client=client, npartitions=2))
        >>> sets = [["a", "b"], ["a"]]
        >>> got = list(backend.key_counts_rows("synthetic", None, sets, ["original"]))
        >>> sorted(got[0][0].tolist()), sorted(got[1][0].tolist())  # (2, y) twice; a = 2 twice, 1 once
        ([0, 0, 2], [0, 1, 2])
        >>> taken = backend.take("synthetic", np.arange(3), ["a", "b"])  # the same as asking them
        >>> all((c == w[0][0]).all() and (f == w[0][1]).all()
        ...     for (c, f), w in zip(got, backend.key_counts([taken], sets, ["original"])))
        True
        >>> client.close()
        """
        from dask import delayed

        every = tuple(tuple(c) for c in column_sets)
        named = tuple(sorted({c for cols in every for c in cols}))
        n_role = self.n_rows(role)
        pick = None if rows is None else np.asarray(rows, dtype=np.int64)
        m = n_role if pick is None else pick.size
        n_real = sum(self.n_rows(r) for r in roles)
        if not every:
            return
        if m == 0 or n_real == 0:  # nothing asked, or nothing to find
            for _ in every:
                yield np.zeros(m, dtype=np.int64), np.full(m, -1, dtype=np.int64)
            return
        keep = None
        if pick is not None:  # the asked rows of each partition, as one mask sent once
            mask = np.zeros(n_role, dtype=bool)
            mask[pick] = True
            (keep,) = self.dt.client.scatter([mask], broadcast=True, hash=False)
        asked = int(n_role if pick is None else np.count_nonzero(mask))
        per_set = asked + n_real  # keys of one set over the asked and pooled rows
        step = max(1, min(SET_BATCH_KEYS // per_set, HELD_QUERY_KEYS // asked))
        # one set's keys past the batch budget: the set in passes, each over one slice of the keys'
        # first words (every partition hashes its rows again and keeps that slice's keys), within
        # it (the driver's answers of one set are one set's, however many passes)
        passes = max(1, -(-per_set // SET_BATCH_KEYS))

        def keys(r: str, sets: Any, start: int, buckets: int, sel: Any, part: tuple[int, int]) -> list[Any]:
            return self._set_pieces(r, sets, start, sel, named, buckets, part)

        def join(sets: Any, buckets: int, part: tuple[int, int]) -> list[np.ndarray]:
            """One pass of a batch: ``(set, asked position, count, lowest pooled position)`` of
            the asked keys found in its slice of the keys."""
            query = keys(role, sets, 0, buckets, keep, part)
            real, start = [], 0
            for r in roles:
                real += keys(r, sets, start, buckets, None, part)
                start += self.n_rows(r)
            tasks = [delayed(_join_bucket, pure=True)([q[j] for q in query], [p[j] for p in real])
                     for j in range(buckets)]
            got = self.dt.compute(tasks)
            return [np.concatenate([g[i] for g in got]) for i in range(4)]

        if n_real <= POOLED_BROADCAST_KEYS:  # the pooled keys of a set fit every worker
            yield from self._broadcast_counts(role, keep, pick, n_role, asked, every, named, roles)
            return
        for b in range(0, len(every), step):
            sets = every[b:b + step]
            buckets = max(1, -(-per_set * len(sets) // (passes * SET_BUCKET_KEYS)))
            (shared,) = self.dt.client.scatter([sets], broadcast=True, hash=False)  # once, not per task
            got = [join(shared, buckets, (p, passes)) for p in range(passes)]
            s, q, c, f = (np.concatenate([g[i] for g in got]) for i in range(4))
            del got
            order = np.argsort(s, kind="stable")
            bounds = np.searchsorted(s[order], np.arange(len(sets) + 1))
            for j in range(len(sets)):  # one set's dense answers at a time
                at = order[bounds[j]:bounds[j + 1]]
                count = np.zeros(n_role, dtype=np.int64)
                first = np.full(n_role, -1, dtype=np.int64)
                count[q[at]], first[q[at]] = c[at], f[at]
                yield (count, first) if pick is None else (count[pick], first[pick])

    def _broadcast_counts(self, role: str, keep: Any, pick: np.ndarray | None, n_role: int, asked: int,
                          every: tuple[tuple[str, ...], ...], named: tuple[str, ...],
                          roles: Sequence[str]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """:meth:`key_counts_rows` when one set's pooled keys fit :data:`POOLED_BROADCAST_KEYS`:
        the sets a batch at a time (at most that many pooled keys and :data:`BROADCAST_ANSWERS`
        answers); the pooled rows' keys on the batch's sets grouped in one task
        (:func:`_pooled_groups`: per set, its distinct keys sorted, how many pooled rows hold each
        and their lowest position), which every partition of the asked rows reads (each worker
        receives it once) to look its rows' keys up (:func:`_pooled_hits_frame`, or from the held
        cells :func:`_pooled_hits_held`): per set, the index of the pooled key each asked row holds
        (``-1``: none), held on the workers; the driver reads as many sets' indices a round trip as
        :data:`SET_READ_BYTES` allows and yields each set's dense answers in turn. The same numbers
        as the bucket join (the same keys, counted exactly)."""
        from dask import delayed

        n_real = sum(self.n_rows(r) for r in roles)
        step = max(1, min(POOLED_BROADCAST_KEYS // max(n_real, 1), BROADCAST_ANSWERS // max(asked, 1)))
        held = self.held_cells(role, named)
        client = self.dt.client
        places = None  # the asked rows' canonical positions, partition by partition (the same every batch)
        for b in range(0, len(every), step):
            sets = every[b:b + step]
            (shared,) = client.scatter([sets], broadcast=True, hash=False)  # once, not per task
            pooled, start = [], 0
            for r in roles:  # every pooled partition's keys on the batch's sets, in one piece
                pooled += self._set_pieces(r, shared, start, None, named)
                start += self.n_rows(r)
            groups = client.persist(delayed(_pooled_groups, pure=True)(
                [delayed(_first, pure=True)(p) for p in pooled], len(sets)))
            if held is None:
                parts = self.dt.map(role, _pooled_hits_frame, shared, keep, groups, ordered=False)
            else:
                look = delayed(_pooled_hits_held, pure=False)
                parts = [look(c, held[0], shared, keep, groups) for c in held[1]]
            parts = client.persist(parts)  # per partition: (positions, (sets, rows) int32 indices)
            if places is None:
                places = np.concatenate(self.dt.compute([delayed(_first, pure=True)(p) for p in parts]))
            tallies = self.dt.compute([delayed(_tallies, pure=True)(groups, j) for j in range(len(sets))])
            per_read = max(1, SET_READ_BYTES // (4 * max(asked, 1)))
            for j0 in range(0, len(sets), per_read):  # a few sets' indices a round trip
                j1 = min(j0 + per_read, len(sets))
                block = np.concatenate(self.dt.compute(
                    [delayed(_set_rows, pure=True)(p, j0, j1) for p in parts]), axis=1)
                for j in range(j0, j1):  # one set's dense answers at a time
                    count_of, low_of = tallies[j]
                    idx = block[j - j0]
                    hit = idx >= 0
                    count = np.zeros(n_role, dtype=np.int64)
                    first = np.full(n_role, -1, dtype=np.int64)
                    count[places[hit]], first[places[hit]] = count_of[idx[hit]], low_of[idx[hit]]
                    yield (count, first) if pick is None else (count[pick], first[pick])
                del block
            del parts, groups

    def _set_pieces(self, role: str, sets: Any, start: int, keep: Any, named: tuple[str, ...],
                    buckets: int = 1, part: tuple[int, int] = (0, 1)) -> list[Any]:
        """Per partition of ``role`` (only the rows ``keep`` marks, when given), its rows' keys on
        ``sets`` split into ``buckets`` (:func:`_keys_in_buckets`, of its slice ``part``),
        positions plus ``start``: from the held cells on ``named`` when held, else the partitions
        hashed as they go."""
        from dask import delayed

        held = self.held_cells(role, named)
        if held is None:
            return self.dt.map(role, _set_buckets_frame, sets, start, buckets, keep, part, ordered=False)
        f = delayed(_set_buckets_held, pure=False)
        return [f(c, held[0], sets, start, buckets, keep, part) for c in held[1]]

    def unique_sets(self, column_sets: Sequence[Sequence[str]], roles: Sequence[str]) -> np.ndarray:
        """Per pooled row of ``roles``, on how many of ``column_sets`` no other pooled row holds its
        values (:meth:`LocalBackend.unique_sets <synthguard.engine.backend.LocalBackend.unique_sets>`).

        The sets a batch at a time, a batch holding at most :data:`SET_BATCH_KEYS` keys (rows x
        sets) over every partition: each partition hashes its rows on the batch's sets and splits
        the keys by hash into buckets (:func:`_set_key_buckets`); each bucket's keys from every
        partition are sorted in one task, which returns the pooled positions of the keys held by
        one row (:func:`_alone_in_bucket`); the driver counts them per row. A row's count is a sum
        over sets, so over batches and buckets: the same counts whatever the batches. The memory of
        a batch on the cluster does not grow with the rows: when one set's keys exceed the budget,
        the set is counted in passes over slices of its buckets (as :meth:`key_counts_rows`), each
        partition hashing its rows once a pass; the driver holds one array of counts and a pass's
        positions."""
        from dask import delayed

        every = tuple(tuple(c) for c in column_sets)
        n = sum(self.dt.get(r).n_rows for r in roles)
        count = np.zeros(n, dtype=np.int64)
        if n == 0 or not every:
            return count
        step = max(1, SET_BATCH_KEYS // n)
        passes = max(1, -(-n // SET_BATCH_KEYS))  # one set's keys past the budget: in passes
        for b in range(0, len(every), step):
            sets = every[b:b + step]
            buckets = max(1, -(-n * len(sets) // (passes * SET_BUCKET_KEYS)))
            (shared,) = self.dt.client.scatter([sets], broadcast=True, hash=False)  # once, not per task
            for p in range(passes):
                parts, start = [], 0
                for role in roles:  # every partition's keys on the batch's sets, split into buckets
                    parts += self.dt.map(role, _set_key_buckets, shared, start, buckets, (p, passes),
                                         ordered=False)
                    start += self.dt.get(role).n_rows
                tasks = [delayed(_alone_in_bucket, pure=True)([q[j] for q in parts]) for j in range(buckets)]
                for alone in self.dt.compute(tasks):
                    count += np.bincount(alone, minlength=n)
        return count

    def cells_equal(self, frame: pd.DataFrame, positions: np.ndarray, columns: Sequence[str],
                    roles: Sequence[str]) -> np.ndarray:
        cols = list(columns)
        pos = np.asarray(positions, dtype=np.int64)
        parts, where, start = [], [], 0
        for role in roles:
            n = self.dt.get(role).n_rows
            sel = np.flatnonzero((pos >= start) & (pos < start + n))
            if sel.size:
                parts.append(fetch_rows(self.dt, role, pos[sel] - start, cols))
                where.append(sel)
            start += n
        out = np.zeros((pos.size, len(cols)), dtype=bool)
        if not parts:
            return out
        order = np.concatenate(where)
        real = pd.concat(parts, ignore_index=True)
        asked = frame[cols].iloc[order].reset_index(drop=True)
        one = [(c,) for c in cols]  # each cell by its identity
        for j, (a, b) in enumerate(zip(set_hashes(self.dt.encoder, asked, one),
                                       set_hashes(self.dt.encoder, real, one), strict=True)):
            out[order, j] = (a == b).all(axis=1)
        return out

    # --- distances in exact seconds (the DCR metrics' units) --------------------------------------
    def _seconds_encoder(self) -> Any:
        """A future of the tables' encoder with the datetime origins one process uses for exact
        seconds (:meth:`EncodedView._set_origins <synthguard.data.encoding.EncodedView._set_origins>`:
        per datetime column, the earliest whole second over every table), computed once."""
        got = self.__dict__.get("_seconds")
        if got is None:
            import copy

            cols = tuple(c for c, s in self.dt.schema.columns.items() if s.sdtype == "datetime")
            lows = self.dt.compute([t for r in self.dt.roles for t in self.dt.map(
                r, _second_lows, cols, with_encoder=False, ordered=False)]) if cols else []
            enc = copy.copy(self.dt.encoder)
            enc.datetime_origins = {c: min((p[c] for p in lows if c in p), default=0) for c in cols}
            self.__dict__["_seconds_here"] = enc  # the driver's copy (it encodes driver tables)
            got = self.__dict__["_seconds"] = self.dt.client.scatter(enc, broadcast=True, hash=False)
        return got

    def ranges_seconds(self, columns: Sequence[str], roles: Sequence[str] = ("original",)) -> np.ndarray:
        from ..data.encoding import ranges_from_bounds

        enc = self._seconds_encoder()
        bounds = self.dt.compute([t for r in roles for t in self.dt.map(
            r, _seconds_bounds, enc, tuple(columns), with_encoder=False, ordered=False)])
        lo = np.minimum.reduce([b[0] for b in bounds])
        hi = np.maximum.reduce([b[1] for b in bounds])
        return ranges_from_bounds(lo, hi)

    def nearest_other(self, roles: Sequence[str], columns: Sequence[str], metric: Any) -> np.ndarray:
        """The smallest over the roles of each role's search against each (its rows themselves
        excluded): the partitioned search keeps one role per side."""
        out = []
        for role in roles:  # loop over the roles (two), vectorised over rows
            best = np.full(self.n_rows(role), np.inf)
            for ref in roles:
                if self.n_rows(ref) - (1 if ref == role else 0) > 0:
                    best = np.minimum(best, self.kneighbors(role, ref, columns, metric, 1)[0][:, 0])
            out.append(best)
        return np.concatenate(out) if out else np.zeros(0)

    def kneighbors_seconds(self, query: str, reference: str, columns: Sequence[str], metric: Any, k: int, *,
                           query_rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        d, idx, _ = self._seconds_search(query, reference, columns, metric, k)
        if query_rows is None:
            return d, idx
        rows = np.asarray(query_rows, dtype=np.int64)  # every row searched, the asked ones kept
        return d[rows], idx[rows]

    def _seconds_search(self, query: str, reference: str, columns: Sequence[str], metric: Any, k: int
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The search of :meth:`kneighbors_seconds` over every query row, with per row the number
        of reference rows at its nearest distance (counted by the search itself, for
        :meth:`nearest_reached`), kept for the run."""
        if query == reference:
            raise ValueError("kneighbors_seconds: two different roles")  # a bug
        from ..engine.reuse import search

        key = _search_key(query, reference, columns, metric, k)
        found = self._searched.get(key) if key is not None else None
        if found is None:
            def run(_q_rows: None, _r_rows: None) -> tuple[np.ndarray, np.ndarray]:
                d, idx, n = kneighbors_distributed(self.dt, query, reference, columns, metric, k,
                                                   backend=self.neighbour_backend,
                                                   encoder=self._seconds_encoder(),
                                                   exact_datetimes=True, ties=True)
                return d, np.column_stack([idx, n])  # the tie counts beside the neighbours

            # a drop-and-retest reads the kept release rows' answers from the run's (the tie
            # counts are not renumbered: with the release as reference it searches again), at
            # the run's datetime origins
            d, packed = search(self.reuse_key, self._seconds_kind(), query, reference, list(columns),
                               metric, k, run, exact_datetimes=True, renumber=False)
            found = (d, np.ascontiguousarray(packed[:, :k]), packed[:, k])
            if key is not None:
                self._searched[key] = found
        return found

    def _seconds_kind(self) -> str:
        """The searches in seconds by their datetime origins (:meth:`_seconds_encoder`: over
        every table, the release's rows included): a re-test whose origins moved searches again."""
        self._seconds_encoder()
        origins = self.__dict__["_seconds_here"].datetime_origins
        return "seconds " + repr(sorted((str(c), int(v)) for c, v in origins.items()))

    def nearest_reached(self, query: str, references: Sequence[str], columns: Sequence[str], metric: Any, *,
                        query_rows: np.ndarray | None = None) -> tuple[list[np.ndarray], np.ndarray]:
        """The smallest distance of every query row over the pooled roles and how many rows are at
        it (one exact search per role, which counts them; the minimum). A row alone at it is the
        query row's only nearest row. Only the query rows with more than one (tied, or copies of
        one row) go on: only they are kept (each release partition encoded, then its tied rows
        taken), stacked on the cluster into groups (:meth:`_stacked_groups`), and searched within
        that distance of every reference partition's rows
        (:func:`~synthguard.engine.backend.pairs_within`; :meth:`_against_partitions`: with one
        group, one task a partition); each task returns the reached positions and, per query row, the
        distinct 128-bit hashes of the encoded bits of the rows it reaches (a few numbers per
        query row)."""
        from dask import delayed

        cols = tuple(columns)
        enc = self._seconds_encoder()
        n_q = self.n_rows(query)
        rows = np.arange(n_q) if query_rows is None else np.asarray(query_rows, dtype=np.int64)
        best = np.full(n_q, np.inf)
        at_best = np.zeros(n_q, dtype=np.int64)
        searches = [self._seconds_search(query, role, cols, metric, 1) for role in references]
        for d, _, n in searches:  # the pooled nearest distance (the smallest over the roles), its rows
            d = d[:, 0]
            at_best = np.where(d < best, n, at_best + np.where(d == best, n, 0))
            best = np.minimum(best, d)
        alone = np.zeros(n_q, dtype=bool)
        alone[rows] = at_best[rows] == 1
        reached = []
        for role, (d, idx, n) in zip(references, searches, strict=True):
            hit = np.zeros(self.n_rows(role), dtype=bool)
            hit[idx[alone & (d[:, 0] == best) & (n == 1), 0]] = True  # the role holding the one row
            reached.append(hit)
        radius = np.full(n_q, -1.0)  # rows not asked, or alone at their distance, take no part
        radius[rows] = np.where(at_best[rows] > 1, best[rows], -1.0)
        many = np.zeros(n_q, dtype=bool)
        if not (radius >= 0).any():
            return reached, many[rows]
        client = self.dt.client
        shared = client.scatter(radius, broadcast=True, hash=False)
        within = radius >= 0
        (keep,) = client.scatter([within], broadcast=True, hash=False)
        encode = delayed(_encode_kept, pure=True)
        q_groups = self._stacked_groups(query, self._kept_counts(query, np.flatnonzero(within)),
                                        lambda part, pos: encode(enc, part, pos, cols, keep, True))
        found = []
        for role, hit in zip(references, reached, strict=True):
            for got_pos, got_keys in self._against_partitions(
                    role, q_groups, lambda part, pos: encode(enc, part, pos, cols, None, True),
                    _reached_part, shared, metric, self.neighbour_backend):
                hit[got_pos] = True
                found.append(got_keys)
        del q_groups
        keys = np.concatenate(found) if found else np.zeros(0, dtype=[("q", np.int64), ("h1", np.uint64),
                                                                     ("h2", np.uint64)])
        keys = np.unique(keys)  # distinct (query row, row bits) pairs over every partition
        many = np.bincount(keys["q"], minlength=n_q) > 1
        return reached, many[rows]

    # --- the membership attacks: seeded draws, searches and near copies of rows on hand -----------
    def content_draw(self, roles: Sequence[str], columns: Sequence[str], n: int, rng: np.random.Generator, *,
                     among: np.ndarray | None = None) -> np.ndarray:
        """One pass gathers the 64-bit content hash of every row of ``roles`` on ``columns`` (8
        bytes a row, as :meth:`DistTables.row_numbers` holds; on the dtypes of the whole pooled
        table: a column whose dtype differs between partitions or roles is hashed as objects,
        as ``pd.concat`` of the whole tables holds it), then the driver draws as one process."""
        roles, cols = tuple(roles), tuple(columns)
        sizes = [self.n_rows(r) for r in roles]
        rows = np.arange(sum(sizes)) if among is None else np.asarray(among, dtype=np.int64)
        if n >= rows.size:
            return rows
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)

        def scan(as_object: tuple[str, ...]) -> list[Any]:
            tasks, offs = [], []
            for role, start in zip(roles, starts, strict=True):
                parts = self.dt.map(role, _content_part, cols, as_object, with_encoder=False, ordered=False)
                tasks += parts
                offs += [int(start)] * len(parts)
            return [(h, pos + off, d) for (h, pos, d), off in zip(self.dt.compute(tasks), offs, strict=True)]

        got = scan(())
        dtypes = [d for h, _, d in got if len(h)]  # an empty partition's dtypes say nothing
        if dtypes and any(d != dtypes[0] for d in dtypes):
            got = scan(tuple(c for j, (c, _) in enumerate(dtypes[0]) if len({d[j] for d in dtypes}) > 1))
        hashes = np.zeros(int(sum(sizes)), dtype=np.uint64)
        for h, pos, _ in got:
            hashes[pos] = h
        return draw_in_content_order(hashes[rows], rows, n, rng)

    def kneighbors_block(self, query: Block, reference: str, columns: Sequence[str], metric: Any, k: int
                         ) -> tuple[np.ndarray, np.ndarray]:
        """The partitioned search (:func:`~._knn.kneighbors_distributed`) with the caller's rows,
        scattered in chunks, as the query partitions (a drop-and-retest reads its run's answers,
        :func:`synthguard.engine.reuse.search`)."""
        from ..engine.reuse import block_name, search

        def run(q_rows: np.ndarray | None, _r_rows: None) -> tuple[np.ndarray, np.ndarray]:
            return self._kneighbors_block(_taken(query, q_rows), reference, columns, metric, k)

        return search(self.reuse_key, "days", block_name(query), reference, list(columns), metric, k, run)

    def _kneighbors_block(self, query: Block, reference: str, columns: Sequence[str], metric: Any, k: int
                          ) -> tuple[np.ndarray, np.ndarray]:
        return kneighbors_distributed(self.dt, reference, reference, columns, metric, k,
                                      backend=self.neighbour_backend, query_block=query)

    def kneighbors_block_pooled(self, query: Block, references: Sequence[str], columns: Sequence[str],
                                metric: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Each role's partitioned search (:meth:`kneighbors_block`), its positions offset into
        the pool, merged: the pool's ``k`` nearest, ties by the lower pooled position."""
        from ..engine.neighbors.engine import merge_neighbours
        from ..engine.reuse import block_name, search

        cols, roles = list(columns), list(references)

        def run(q_rows: np.ndarray | None, _r_rows: None) -> tuple[np.ndarray, np.ndarray]:
            q = _taken(query, q_rows)
            parts, start = [], 0
            for role in roles:  # loop over the roles (a few), vectorised over rows
                n = self.n_rows(role)
                if n:
                    d, idx = self._kneighbors_block(q, role, cols, metric, int(min(k, n)))
                    parts.append((d, np.where(idx >= 0, idx + start, -1)))
                start += n
            return merge_neighbours(k, *parts)

        # the roles pooled name the reference: a drop-and-retest of unchanged roles reads the run's
        return search(self.reuse_key, "days", block_name(query), "+".join(roles), cols, metric, k, run)

    def kneighbors_held(self, query: Block, reference: Block, metric: Any, k: int
                        ) -> tuple[np.ndarray, np.ndarray]:
        """Both blocks are the caller's: searched on the driver (a re-test holding the same rows
        reads its run's answer, :func:`synthguard.engine.reuse.search`)."""
        from ..engine.neighbors import kneighbors
        from ..engine.reuse import block_name, search

        def run(q_rows: np.ndarray | None, _r_rows: None) -> tuple[np.ndarray, np.ndarray]:
            nb = kneighbors(_taken(query, q_rows), reference, metric, k, backend=self.neighbour_backend)
            return nb.distances, nb.indices

        cols = (*reference.num_columns, *reference.cat_columns)
        return search(self.reuse_key, "held", block_name(query), block_name(reference), cols, metric, k, run)

    def kneighbors_rows_held(self, role: str, columns: Sequence[str], rows: np.ndarray, reference: Block,
                             metric: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The rows searched where they lie: the reference travels to every worker once, each
        partition encodes and searches the asked rows it holds (:data:`BLOCK_ROWS` at a time),
        and only their ``k`` distances and ids travel back (a row's neighbours depend on that row
        alone: the answers of a search of the fetched rows on the driver). The rows were fetched
        to the driver before; the 10M run's workers and driver passed their memory in the test
        that asks this (membership_attacks, docs/scaling.md). A drop-and-retest asking release
        rows reads those it shares with its run's (:func:`synthguard.engine.reuse.search`)."""
        from ..engine.reuse import block_name, search

        def run(q_rows: np.ndarray | None, _r_rows: None) -> tuple[np.ndarray, np.ndarray]:
            at = np.arange(self.n_rows(role)) if q_rows is None else q_rows
            return self._kneighbors_rows_held(role, columns, at, reference, metric, k)

        return search(self.reuse_key, "held", role, block_name(reference), list(columns), metric, k, run,
                      query_rows=np.asarray(rows, dtype=np.int64))

    def _kneighbors_rows_held(self, role: str, columns: Sequence[str], rows: np.ndarray, reference: Block,
                              metric: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
        from dask import delayed

        rows = np.asarray(rows, dtype=np.int64)
        k = int(k)
        if rows.size == 0 or reference.n_rows < k:  # nothing asked, or the search's own answer (an error)
            if not rows.size:
                return np.zeros((0, k)), np.zeros((0, k), dtype=np.int64)
            from ..engine.neighbors import kneighbors

            nb = kneighbors(self.encoded_rows(role, columns, rows), reference, metric, k,
                            backend=self.neighbour_backend)
            return nb.distances, nb.indices
        uniq, back = np.unique(rows, return_inverse=True)
        (shared,) = self.dt.client.scatter([reference], broadcast=True, hash=False)
        f = delayed(_knn_rows_part, pure=True)
        tasks, order = [], []
        for frame, local, sel in _rows_by_partition(self.dt, role, uniq):
            tasks.append(f(self.dt.encoder_future, frame, local, tuple(columns), shared, metric, k,
                           self.neighbour_backend))
            order.append(sel)
        dist = np.empty((uniq.size, k))
        idx = np.empty((uniq.size, k), dtype=np.int64)
        for sel, (d, i) in zip(order, self.dt.compute(tasks), strict=True):
            dist[sel], idx[sel] = d, i
        return dist[back], idx[back]

    def near_counts(self, role: str, columns: Sequence[str], query: Block) -> tuple[np.ndarray, np.ndarray]:
        """The query rows travel to every partition once; each partition returns its counts for
        the query rows it holds a near copy of (sums over rows: they add up)."""
        (shared,) = self.dt.client.scatter([query], broadcast=True, hash=False)
        got = self.dt.compute(self.dt.map(role, _near_part, tuple(columns), shared, ordered=False))
        exact = np.zeros(query.n_rows, dtype=np.int64)
        within = np.zeros(query.n_rows, dtype=np.int64)
        for at, e, w in got:
            np.add.at(exact, at, e)
            np.add.at(within, at, w)
        return exact, within

    def most_equal_cells(self, role: str, columns: Sequence[str], query: Block, idx: np.ndarray
                         ) -> np.ndarray:
        """The pairs compared where their rows lie: the query rows travel to every worker once,
        each partition encodes the named rows it holds and counts the cells each of its pairs
        shares (:func:`_equal_cells_part`), and only those counts travel back (the rows were
        fetched to the driver before: at 10M rows, millions of release rows took each worker
        past its memory limit in the membership attacks, docs/scaling.md)."""
        from dask import delayed

        from ..engine.cells import best_of_pairs

        idx = np.asarray(idx, dtype=np.int64).reshape(query.n_rows, -1)
        valid = idx >= 0
        named = idx[valid]  # the pairs in row-major order
        if named.size == 0:
            return np.zeros(query.n_rows, dtype=np.int64)
        qi = np.broadcast_to(np.arange(query.n_rows, dtype=np.int64)[:, None], idx.shape)[valid]
        uniq, back = np.unique(named, return_inverse=True)
        parts = _rows_by_partition(self.dt, role, uniq)
        part_of = np.empty(uniq.size, dtype=np.int64)  # each named row's partition, and place there
        place = np.empty(uniq.size, dtype=np.int64)
        for j, (_frame, _local, sel) in enumerate(parts):  # loop over the partitions
            part_of[sel] = j
            place[sel] = np.arange(sel.size)
        by_part = np.argsort(part_of[back], kind="stable")
        bounds = np.searchsorted(part_of[back][by_part], np.arange(len(parts) + 1))
        (shared,) = self.dt.client.scatter([query], broadcast=True, hash=False)
        f = delayed(_equal_cells_part, pure=True)
        tasks = []
        for j, (frame, local, _sel) in enumerate(parts):
            pairs = by_part[bounds[j]:bounds[j + 1]]
            tasks.append(f(self.dt.encoder_future, frame, local, tuple(columns), shared, qi[pairs],
                           place[back[pairs]]))
        counts = np.empty(named.size, dtype=np.int64)
        for j, got in enumerate(self.dt.compute(tasks)):
            counts[by_part[bounds[j]:bounds[j + 1]]] = got
        return best_of_pairs(idx.shape, valid, counts)

    # --- tolerance matches (new_row_synthesis) ---------------------------------------------------
    def _kept_counts(self, role: str, rows: np.ndarray | None) -> np.ndarray:
        """How many of the canonical positions ``rows`` (``None``: every row) each partition of
        ``role`` holds (input order; a position given twice counted twice: an upper bound of the
        rows a partition keeps)."""
        lengths = np.asarray(self.dt.get(role).lengths, dtype=np.int64)
        if rows is None:
            return lengths
        return np.bincount(self.dt.partition_of(role, np.asarray(rows, dtype=np.int64)), minlength=lengths.size)

    def _stacked_groups(self, role: str, kept: np.ndarray, encoded: Callable[[Any, Any], Any]) -> list[Any]:
        """The kept rows of ``role``'s partitions (``kept``: how many each keeps; ``encoded(part,
        pos)``: a Delayed of a partition's kept rows, ``(Block, positions)``) stacked on the cluster
        into groups of at most :data:`MATCH_QUERY_ROWS` rows (:func:`_row_groups`): one future a
        group, held until let go."""
        from dask import delayed

        table = self.dt.get(role)
        parts = list(zip(table.part_args(False), table.position_args(False), strict=True))
        stack = delayed(_stacked_kept, pure=True)
        return self.dt.client.compute([stack([encoded(*parts[j]) for j in g])
                                       for g in _row_groups(kept, MATCH_QUERY_ROWS)])

    def _against_partitions(self, role: str, groups: list[Any], encoded: Callable[[Any, Any], Any],
                            task: Callable[..., Any], *args: Any) -> Iterator[Any]:
        """``task(group, partition, *args)`` for every query group (:meth:`_stacked_groups`) and
        every partition of ``role`` (``encoded(part, pos)``: a Delayed of it encoded), results as
        they come. One group: one task a partition, all submitted at once (each reads and encodes
        its partition: every partition read once, its join or tree built once). More groups: one
        partition at a time (a wave each: encoded once, held while every group is matched)."""
        from dask import delayed
        from distributed import as_completed, wait

        client = self.dt.client
        table = self.dt.get(role)
        parts = list(zip(table.part_args(False), table.position_args(False), strict=True))
        if len(groups) == 1:
            f = delayed(task, pure=False)  # fresh keys: a call repeated just after does not reuse them
            for done in as_completed(client.compute([f(groups[0], encoded(part, pos), *args) for part, pos in parts])):
                yield done.result()
                done.release()
            return
        for part, pos in parts:  # a wave each
            ref = client.compute(encoded(part, pos))
            tasks = [client.submit(task, g, ref, *args, pure=False) for g in groups]
            wait(tasks)
            yield from client.gather(tasks)
            del ref, tasks

    def rows_matched(self, query: str, reference: str, columns: Sequence[str], tol: np.ndarray, *,
                     relative: bool = False, query_rows: np.ndarray | None = None,
                     reference_rows: np.ndarray | None = None) -> np.ndarray:
        """:func:`~synthguard.engine.backend.match_rows` of the query rows against every reference
        partition, the matched query positions OR-ed on the driver (a query row's answer depends
        on the set of reference rows alone, so the pairs give the one-process answer).

        The query partitions' kept rows are encoded and stacked on the cluster into groups of at
        most :data:`MATCH_QUERY_ROWS` rows (held there), so each reference partition is joined and
        sorted once a group, not once a query partition. One group (a sampled run's records, or a
        table below that size): one task per reference partition, which reads and encodes it and
        matches the group, all at once. More groups: one reference partition at a time (a wave
        each: it is encoded once, held while every group is matched against it)."""
        from dask import delayed

        cols = tuple(columns)
        client = self.dt.client
        n_q = self.n_rows(query)
        tol = np.asarray(tol, dtype=float)

        def keep(role: str, rows: np.ndarray | None) -> Any:
            if rows is None:
                return None
            mask = np.zeros(self.n_rows(role), dtype=bool)
            mask[np.asarray(rows, dtype=np.int64)] = True
            return client.scatter(mask, broadcast=True, hash=False)

        kept = self._kept_counts(query, query_rows)
        hit = np.zeros(n_q, dtype=bool)
        if not kept.any():  # no query row
            return hit if query_rows is None else hit[np.asarray(query_rows, dtype=np.int64)]
        q_keep, r_keep = keep(query, query_rows), keep(reference, reference_rows)
        encode = delayed(_encode_kept, pure=True)
        enc = self.dt.encoder_future
        q_groups = self._stacked_groups(query, kept, lambda part, pos: encode(enc, part, pos, cols, q_keep))
        for got in self._against_partitions(reference, q_groups, lambda part, pos: encode(enc, part, pos, cols, r_keep),
                                            _matched_part, tol, relative):
            hit[got] = True
        del q_groups
        return hit if query_rows is None else hit[np.asarray(query_rows, dtype=np.int64)]

    # --- the anonymeter trio: canonical rows in content-hash order, neighbours among them --------
    def distinct_order(self, role: str, columns: Sequence[str]) -> np.ndarray:
        """Each partition's distinct ``(content hash, lowest position)`` pairs (16 bytes per
        distinct row travel), then per hash the lowest position, in hash order."""
        parts = self.dt.compute(self.dt.map(role, _hash_firsts, tuple(columns), with_encoder=False,
                                            ordered=False))
        h = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.uint64)
        pos = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.int64)
        order = np.lexsort((pos, h))
        h, pos = h[order], pos[order]
        keep = np.r_[True, h[1:] != h[:-1]] if h.size else np.zeros(0, dtype=bool)
        return pos[keep].astype(np.int64)

    def distinct_index(self, role: str, columns: Sequence[str]) -> np.ndarray:
        """Per row of ``role`` (canonical positions), the index of its distinct row on ``columns``
        in the order of :meth:`distinct_order` (content-hash order): each partition's content
        hashes with their positions come to the driver (16 bytes per row, a per-record array),
        ranked there as one process ranks ``row_hashes`` of the whole table. For a metric naming
        every release row with the content of a distinct row (an attack's rows to review)."""
        parts = self.dt.compute(self.dt.map(role, _row_hash_at, tuple(columns), with_encoder=False,
                                            ordered=False))
        h = np.zeros(self.n_rows(role), dtype=np.uint64)
        for pos, got in parts:
            h[pos] = got
        return np.unique(h, return_inverse=True)[1].ravel().astype(np.int64)

    def value_bounds(self, columns: Sequence[str], roles: Sequence[str], *,
                     rows: Mapping[str, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Whole roles by a min/max reduction over their partitions; rows asked by position are
        fetched (encoded)."""
        from ..data.encoding import value_bounds
        from ._tables import _bounds

        rows = rows or {}
        whole = [r for r in roles if r not in rows]
        bounds = self.dt.compute([t for r in whole for t in self.dt.map(r, _bounds, tuple(columns),
                                                                          ordered=False)])
        bounds += [value_bounds(self.encoded_rows(r, columns, rows[r])) for r in roles if r in rows]
        return np.minimum.reduce([b[0] for b in bounds]), np.maximum.reduce([b[1] for b in bounds])

    def kneighbors_among(self, queries: Sequence[tuple[str, np.ndarray | None]], reference: str,
                         reference_rows: np.ndarray, columns: Sequence[str], metric: Any,
                         k: int) -> tuple[np.ndarray, np.ndarray]:
        """One partitioned search (:func:`~._knn.kneighbors_distributed`) over the reference rows
        asked, ranked by their index in ``reference_rows``; every row of a role is searched in its
        partitions, rows asked by position are fetched (encoded) and searched as one block. Every
        row of the roles asked: a drop-and-retest renumbers its run's answers
        (:func:`synthguard.engine.reuse.search`), as one process's does."""
        from ..engine.reuse import search

        cols = list(columns)

        def run(q_rows: np.ndarray | None, r_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            if q_rows is None:
                sources: list[Any] = [role if rows is None else self.encoded_rows(role, cols, rows)
                                      for role, rows in queries]
            else:  # some of the pooled rows of the roles (a re-test's queries that lost a neighbour)
                order = np.argsort(np.asarray(q_rows, dtype=np.int64), kind="stable")
                pooled = np.asarray(q_rows, dtype=np.int64)[order]  # ascending: role after role
                ends = np.cumsum([self.n_rows(role) for role, _ in queries])
                at = np.searchsorted(ends, pooled, side="right")
                starts = ends - [self.n_rows(role) for role, _ in queries]
                sources = [Block.stack([self.encoded_rows(role, cols, pooled[at == j] - starts[j])
                                        for j, (role, _) in enumerate(queries) if (at == j).any()])]
                d, i = kneighbors_distributed(self.dt, sources, reference, cols, metric, k,
                                              backend=self.neighbour_backend, reference_rows=r_rows)
                back = np.empty_like(order)
                back[order] = np.arange(order.size)
                return d[back], i[back]  # in the order asked
            return kneighbors_distributed(self.dt, sources, reference, cols, metric, k,
                                          backend=self.neighbour_backend, reference_rows=r_rows)

        if any(rows is not None for _, rows in queries):  # some rows (the attacks'): not kept
            return run(None, reference_rows)
        return search(self.reuse_key, "among", "+".join(r for r, _ in queries), reference, cols, metric, k,
                      run, reference_rows=np.asarray(reference_rows, dtype=np.int64))


    def value_summaries(self, role: str, columns: Sequence[str]) -> dict[str, dict[str, Any]]:
        """One summary per partition (:func:`~synthguard.engine.backend.value_summary`: counts,
        bounds, flags and the distinct values of non-numeric columns), combined on the driver."""
        cols = tuple(columns)
        sdtypes = {c: self.dt.schema.columns[c].sdtype for c in cols}
        parts = self.dt.compute(self.dt.map(role, _summary_part, cols, sdtypes, with_encoder=False,
                                            ordered=False))
        return merge_value_summaries(parts)

    def kneighbors_frame_seconds(self, frame: pd.DataFrame, reference: str, columns: Sequence[str],
                                 metric: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The driver's rows, encoded by the seconds encoder (the origins of one process), are the
        queries of the partitioned waves (:func:`~._knn.kneighbors_distributed` with
        ``query_block``): bit for bit the one-process search."""
        from ..engine.reuse import block_name, search

        fut = self._seconds_encoder()
        block = self.__dict__["_seconds_here"].encode(frame, list(columns), exact_datetimes=True)

        def run(q_rows: np.ndarray | None, _r_rows: None) -> tuple[np.ndarray, np.ndarray]:
            return kneighbors_distributed(self.dt, reference, reference, columns, metric, k,
                                          backend=self.neighbour_backend, encoder=fut, exact_datetimes=True,
                                          query_block=_taken(block, q_rows))  # the role names the reference

        # the rows by their bytes, at the run's datetime origins: a re-test asking the same rows
        # of an unchanged table reads its run's answer
        return search(self.reuse_key, self._seconds_kind(), block_name(block), reference, list(columns),
                      metric, k, run, exact_datetimes=True)


    # --- singling out: conjunctive queries counted over chosen rows -------------------------------
    def encode_frame(self, frame: pd.DataFrame, columns: Sequence[str]) -> Block:
        return self.dt.encoder.encode(frame, list(columns))

    def _mask(self, role: str, rows: np.ndarray | None) -> Any:
        """A bool per canonical position of ``role`` (``rows`` set), scattered once; ``None`` = all."""
        if rows is None:
            return None
        mask = np.zeros(self.n_rows(role), dtype=bool)
        mask[np.asarray(rows, dtype=np.int64)] = True
        return self.dt.client.scatter(mask, broadcast=True, hash=False)

    def query_counts(self, role: str, columns: Sequence[str], queries: Queries, *, cap: int | None = None,
                     rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The queries travel to every partition once; each counts its rows (in canonical order,
        :func:`~synthguard.engine.backend.query_counts_of`); the counts are summed (then capped)
        and the lowest position kept: where the total is below ``cap`` every partition's count
        is, so each partition's first match is its lowest. Rows this backend handed out whole
        (:meth:`query_values` with ``cols=None``, every row asked, at most
        :data:`DRIVER_QUERY_BYTES`) are counted on the driver for ``cap`` at most 2
        (:meth:`_driver_counts`): the same rows, so the same counts."""
        m = queries[0].shape[0]
        held = self._query_tables(role, columns, rows)
        whole = self.__dict__.get("_query_whole")
        if held is not None and whole is not None and whole[0] is held and cap is not None and cap <= 2:
            return self._driver_counts(queries, cap)
        (shared,) = self.dt.client.scatter([tuple(np.asarray(a) for a in queries)], broadcast=True, hash=False)
        if held is None:  # not held: each partition encodes and indexes its rows for this call
            got = self.dt.compute(self.dt.map(role, _query_part, tuple(columns), shared, self._mask(role, rows), cap))
        else:
            from dask import delayed

            ask = delayed(_query_held_part, pure=False)
            got = self.dt.compute_where_held([ask(table, shared, cap) for table in held], held)
        counts = np.zeros(m, dtype=np.int64)
        first = np.full(m, -1, dtype=np.int64)
        for c, f in got:
            counts += c
            first = np.where(first < 0, f, np.where(f < 0, first, np.minimum(first, f)))
        return (counts if cap is None else np.minimum(counts, cap)), first

    def query_values(self, role: str, columns: Sequence[str], positions: np.ndarray, cols: np.ndarray | None, *,
                     rows: np.ndarray | None = None) -> np.ndarray:
        """From the held query tables of ``rows`` (:meth:`_query_tables`, made here when they
        fit): the distinct positions travel to every worker once, each held partition returns the
        matrix rows it holds of them (:func:`_values_held_part`); no partition is read or encoded
        again (a singling-out search asks once a batch, a hundred batches at 10M release rows).
        Not held: the rows taken (:func:`~synthguard.engine.backend.matrix_values`). Whole rows
        (``cols=None``) of every asked row, at most :data:`DRIVER_QUERY_BYTES`, are returned
        read-only and kept for :meth:`query_counts` of those rows (:meth:`_driver_counts`)."""
        from dask import delayed

        held = self._query_tables(role, columns, rows)
        if held is None:
            return matrix_values(self, role, columns, positions, cols)
        positions = np.asarray(positions, dtype=np.int64)
        uniq, inv = np.unique(positions, return_inverse=True)
        X = np.empty((uniq.size, len(columns)))
        if uniq.size:
            (shared,) = self.dt.client.scatter([uniq], broadcast=True, hash=False)
            ask = delayed(_values_held_part, pure=False)
            found = 0
            for at, vals in self.dt.compute_where_held([ask(table, shared) for table in held], held):
                X[at] = vals
                found += at.size
            if found != uniq.size:  # a position outside the held rows: a bug, reported as an error
                raise RuntimeError(f"{uniq.size - found} asked {role} rows are not among the held query rows")
        out = picked_values(X, inv.reshape(positions.shape), cols)
        n_held = self.n_rows(role) if rows is None else np.asarray(rows).size
        if cols is None and positions.ndim == 1 and uniq.size == n_held and out.nbytes <= DRIVER_QUERY_BYTES:
            out.flags.writeable = False  # shared with the caller: kept for query_counts of these rows
            self.__dict__["_query_whole"] = (held, positions.copy(), out, [])
        return out

    def _driver_counts(self, queries: Queries, cap: int) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`query_counts` over the whole rows :meth:`query_values` handed out of the held
        query tables (kept with their positions, a column index of them built at the first
        call): the counts of the same rows. The rows are in the caller's order, not the canonical
        one, so a first match is the lowest position only when it is the one match: hence ``cap``
        at most 2, where a count below ``cap`` names its one row (and a count at ``cap`` names any,
        as the backend's contract allows)."""
        from ..engine import queries as Q

        _, positions, X, index = self.__dict__["_query_whole"]
        if not index:
            index.append(Q.ColumnIndex(X))
        return query_counts_of(X, positions, queries, cap, index=index[0])

    def _query_tables(self, role: str, columns: Sequence[str], rows: np.ndarray | None) -> list[Any] | None:
        """One future per partition of ``role`` holding the query matrix of its rows among
        ``rows`` (canonical positions; ``None``: every row) on ``columns``, in canonical order,
        with their positions and column index (:func:`_query_table_part`): built at the first
        :meth:`query_counts` asking of those rows and held while the next ones ask of the same
        rows (one entry, as one process keeps one query table), so a singling-out search's
        batches (a hundred calls at 1M release rows) encode and index each partition once instead
        of once a call. About 13 bytes a cell (the matrix, the orders, the codes; 16 counted);
        ``None`` when that does not fit :data:`QUERY_TABLE_SHARE` of the workers' memory less what
        they hold (each call then encodes and indexes as it goes, and :meth:`query_values` takes
        the rows)."""
        from ._tables import _memory_budget

        cols = tuple(columns)
        asked = None if rows is None else np.asarray(rows, dtype=np.int64)
        kept = self.__dict__.get("_query_held")
        if kept is not None and kept[0] == role and kept[1] == cols and (
                kept[2] is None if asked is None else kept[2] is not None and np.array_equal(kept[2], asked)):
            return kept[3]
        self.__dict__.pop("_query_held", None)  # the one held is let go before the next is sized
        self.__dict__.pop("_query_whole", None)  # with the driver's copy of its whole rows
        need = 16.0 * (self.n_rows(role) if asked is None else asked.size) * len(cols)
        if need > _memory_budget(self.dt.client, QUERY_TABLE_SHARE):
            return None
        # unhashed keys (pure=False): two runs' held tables never share a key
        parts = list(self.dt.client.persist(self.dt.map(role, _query_table_part, cols, self._mask(role, asked),
                                                        pure=False)))
        self.__dict__["_query_held"] = (role, cols, None if asked is None else asked.copy(), parts)
        return parts

    def query_subset_counts(self, role: str, columns: Sequence[str], queries: Queries,
                            subsets: Sequence[np.ndarray], *, cap: int = 2) -> np.ndarray:
        """Each partition counts every subset at once (:func:`~synthguard.engine.backend.subset_counts_of`
        over its rows in some subset, one bit per subset and row: 8 bytes per row travel for 64
        subsets); the counts are summed and capped."""
        m = queries[0].shape[0]
        (shared,) = self.dt.client.scatter([tuple(np.asarray(a) for a in queries)], broadcast=True, hash=False)
        out = []
        for i, bits in enumerate(subset_bits(self.n_rows(role), subsets)):  # chunks of 64 subsets
            n_sub = min(64, len(subsets) - 64 * i)
            member = self.dt.client.scatter(bits, broadcast=True, hash=False)
            got = self.dt.compute(self.dt.map(role, _subset_part, tuple(columns), shared, member, n_sub, cap,
                                              ordered=False))
            out.append(np.minimum(np.sum(got, axis=0, dtype=np.int64), cap) if got
                       else np.zeros((n_sub, m), dtype=np.int64))
        return np.concatenate(out) if out else np.zeros((0, m), dtype=np.int64)

    def value_flags(self, role: str, columns: Sequence[str], rows: np.ndarray) -> dict[str, np.ndarray]:
        """Each partition lists its non-missing cells of the asked rows as ``(column, value, row)``
        (``-0.0`` made ``0.0``) and its missing ones; a group-by over ``(column, value)`` gives
        each value's rows (how many, the first), whose flags come back per value (a few numbers a
        distinct value); the smallest and largest value of each column from every output
        partition's."""
        import dask.dataframe as dd
        from dask import delayed

        cols = tuple(columns)
        rows = np.asarray(rows, dtype=np.int64)
        n, p = rows.size, len(cols)
        if np.unique(rows).size != n:  # a row asked twice would misplace every flat cell index
            raise ValueError("value_flags: the rows asked must be distinct")  # a bug, not bad input
        index = np.full(self.n_rows(role), -1, dtype=np.int64)
        index[rows] = np.arange(n, dtype=np.int64)
        shared = self.dt.client.scatter(index, broadcast=True, hash=False)
        parts = self.dt.map(role, _flag_cells, cols, shared, n, ordered=False)
        meta = pd.DataFrame({"j": pd.Series([], dtype="int64"), "v": pd.Series([], dtype="float64"),
                             "i": pd.Series([], dtype="int64")})
        cells = dd.from_delayed([part[0] for part in parts], meta=meta, verify_meta=False)
        groups = cells.groupby(["j", "v"]).i.agg(["min", "count"], split_out=self._split((role,)))
        per_value = [delayed(_flag_groups, pure=True)(g, n) for g in groups.reset_index().to_delayed()]
        got = self.dt.compute([part[1] for part in parts] + per_value)
        # flags as (p, n) arrays, set through their flat cell index j * n + i
        out = {k: np.zeros((p, n), dtype=bool) for k in ("missing", "first", "once")}
        for cell in got[:len(parts)]:
            out["missing"].reshape(-1)[cell] = True
        ends: dict[str, list[np.ndarray]] = {"low": [], "high": []}
        for first, once, low, high in got[len(parts):]:
            out["first"].reshape(-1)[first] = True
            out["once"].reshape(-1)[once] = True
            ends["low"].append(low)
            ends["high"].append(high)
        for name, sign in (("low", 1.0), ("high", -1.0)):  # (j, value, count, row) of each part's ends
            out[name] = np.full(p, -1, dtype=np.int64)
            e = np.concatenate(ends[name]) if ends[name] else np.zeros((0, 4))
            for j in range(p):  # loop over columns
                at = e[e[:, 0] == j]
                if at.size:
                    best = at[np.argmin(sign * at[:, 1])]
                    out[name][j] = int(best[3]) if best[2] == 1 else -1
        return out

    def medians(self, role: str, columns: Sequence[str], rows: np.ndarray) -> np.ndarray:
        """Exact order statistics of each column's values among the rows (the search of
        :meth:`quantiles` over the encoded values of the rows asked), then NumPy's median of the
        middle one or two (:func:`~synthguard.engine.backend.median_of_order_stats`)."""
        cols = tuple(columns)
        keep = self._mask(role, rows)
        parts = self.dt.compute(self.dt.map(role, _kept_key_range, cols, keep, ordered=False))
        out = np.full(len(cols), np.nan)
        asked: dict[str, tuple[np.ndarray, int, int]] = {}
        sizes = {}
        for j, c in enumerate(cols):
            n = sum(part[j][0] for part in parts)
            if n:
                sizes[c] = n
                asked[c] = (np.unique(np.array([(n - 1) // 2, n // 2], dtype=np.int64)),
                            min(part[j][1] for part in parts if part[j][0]),
                            max(part[j][2] for part in parts if part[j][0]))
        if not asked:
            return out
        found = self._order_stats((role,), asked, count=_kept_count_at_or_below, args=(keep,))
        for j, c in enumerate(cols):
            if c in asked:
                ranks = asked[c][0]
                out[j] = median_of_order_stats(sizes[c], lambda r, c=c, ranks=ranks: found[c][np.searchsorted(ranks, r)])
        return out


def _query_part(encoder: Encoder, frame: pd.DataFrame, positions: Any, columns: tuple[str, ...], queries: Queries,
                keep: np.ndarray | None, cap: int | None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~synthguard.engine.backend.query_counts_of` over one partition's rows (canonical
    order) that ``keep`` holds (``None``: all)."""
    pos = np.asarray(positions, dtype=np.int64)
    at = np.arange(pos.size) if keep is None else np.flatnonzero(keep[pos])
    return query_counts_of(query_matrix(encoder.encode(frame.iloc[at], list(columns))), pos[at], queries, cap)


def _query_table_part(encoder: Encoder, frame: pd.DataFrame, positions: Any, columns: tuple[str, ...],
                      keep: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, Any]:
    """One partition's rows (canonical order) that ``keep`` holds (``None``: all) as their
    :func:`~synthguard.engine.backend.query_matrix` on ``columns``, their canonical positions and
    the matrix's column index (``None`` for no rows), held for :func:`_query_held_part`."""
    from ..engine.queries import ColumnIndex

    pos = np.asarray(positions, dtype=np.int64)
    at = np.arange(pos.size) if keep is None else np.flatnonzero(keep[pos])
    X = query_matrix(encoder.encode(frame.iloc[at], list(columns)))
    return X, pos[at], (ColumnIndex(X) if X.shape[0] else None)


def _query_held_part(table: tuple[np.ndarray, np.ndarray, Any], queries: Queries, cap: int | None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~synthguard.engine.backend.query_counts_of` over a held partition's rows
    (:func:`_query_table_part`): the same counts and positions as :func:`_query_part`."""
    X, pos, index = table
    return query_counts_of(X, pos, queries, cap, index=index)


def _values_held_part(table: tuple[np.ndarray, np.ndarray, Any], asked: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """The rows of a held partition's query matrix (:func:`_query_table_part`, positions
    ascending) at the canonical positions ``asked`` (distinct, ascending) it holds: their places
    in ``asked`` and their matrix rows."""
    X, pos, _ = table
    return held_rows(X, pos, asked)


def _subset_part(encoder: Encoder, frame: pd.DataFrame, positions: Any, columns: tuple[str, ...], queries: Queries,
                 bits: np.ndarray, n_subsets: int, cap: int) -> np.ndarray:
    """:func:`~synthguard.engine.backend.subset_counts_of` over one partition's rows in a subset."""
    member = bits[np.asarray(positions, dtype=np.int64)]
    at = np.flatnonzero(member)
    X = query_matrix(encoder.encode(frame.iloc[at], list(columns)))
    return subset_counts_of(X, member[at], queries, n_subsets, cap)


def _flat_cells(j: np.ndarray, i: np.ndarray, n: int) -> np.ndarray:
    """Flat cell indices ``j * n + i`` of a ``(columns, n)`` array (uint32 when they fit: 4 bytes
    a cell travel)."""
    flat = np.asarray(j, dtype=np.int64) * int(n) + np.asarray(i, dtype=np.int64)
    return flat.astype(np.uint32) if flat.size and int(flat.max()) < 2**32 else flat


def _flag_cells(encoder: Encoder, frame: pd.DataFrame, positions: Any, columns: tuple[str, ...],
                index: np.ndarray, n: int) -> tuple[pd.DataFrame, np.ndarray]:
    """One partition's cells of the rows asked (``index``: each canonical position's row number
    among them, ``-1``: not asked): the non-missing ones as ``(j, v, i)`` (``v + 0.0``: ``-0.0``
    is ``0.0``) and the missing ones' flat cell indices (:func:`_flat_cells`; ``n``: the rows
    asked)."""
    idx = index[np.asarray(positions, dtype=np.int64)]
    at = np.flatnonzero(idx >= 0)
    X = query_matrix(encoder.encode(frame.iloc[at], list(columns))) + 0.0
    nan = np.isnan(X)
    r, j = np.nonzero(~nan)
    cells = pd.DataFrame({"j": j.astype(np.int64), "v": X[r, j], "i": idx[at][r]})
    rm, jm = np.nonzero(nan)
    return cells, _flat_cells(jm, idx[at][rm], n)


def _flag_groups(groups: pd.DataFrame, n: int) -> tuple[np.ndarray, ...]:
    """One output partition of the ``(column, value)`` group-by over ``n`` rows: the flat cells
    (:func:`_flat_cells`) of each value's first row and of the values one row holds, and per
    column its smallest and largest value as ``(j, value, rows, first row)``."""
    j = groups["j"].to_numpy(np.int64)
    v = groups["v"].to_numpy(np.float64)
    first = groups["min"].to_numpy(np.int64)
    count = groups["count"].to_numpy(np.int64)
    order = np.lexsort((v, j))
    js = j[order]
    start = np.r_[True, js[1:] != js[:-1]] if js.size else np.zeros(0, dtype=bool)
    stop = np.r_[js[1:] != js[:-1], True] if js.size else np.zeros(0, dtype=bool)

    def ends(sel: np.ndarray) -> np.ndarray:
        o = order[sel]
        return np.stack([j[o], v[o], count[o], first[o]], axis=1).astype(np.float64)

    once = count == 1
    return _flat_cells(j, first, n), _flat_cells(j[once], first[once], n), ends(start), ends(stop)


def _kept_keys(encoder: Encoder, frame: pd.DataFrame, positions: Any, column: str, keep: np.ndarray | None
               ) -> np.ndarray:
    """Sorted :func:`_ordered_keys` of one column's values (its query-matrix values) of the rows
    ``keep`` holds, missing skipped."""
    pos = np.asarray(positions, dtype=np.int64)
    at = np.arange(pos.size) if keep is None else np.flatnonzero(keep[pos])
    v = query_matrix(encoder.encode(frame.iloc[at], [column]))[:, 0]
    return np.sort(_ordered_keys(v[~np.isnan(v)]))


def _kept_key_range(encoder: Encoder, frame: pd.DataFrame, positions: Any, columns: tuple[str, ...],
                    keep: np.ndarray | None) -> list[tuple[int, int, int]]:
    """:func:`_key_range` of the kept rows' query-matrix values."""
    out = []
    for c in columns:  # loop over columns
        k = _kept_keys(encoder, frame, positions, c, keep)
        out.append((int(k.size), int(k[0]), int(k[-1])) if k.size else (0, 0, 0))
    return out


def _kept_count_at_or_below(encoder: Encoder, frame: pd.DataFrame, positions: Any, pivots: dict[str, np.ndarray],
                            keep: np.ndarray | None) -> dict[str, np.ndarray]:
    """:func:`_count_at_or_below` of the kept rows' query-matrix values."""
    return {c: np.searchsorted(_kept_keys(encoder, frame, positions, c, keep), p, side="right").astype(np.int64)
            for c, p in pivots.items()}


def _smallest_distinct(encoder: Encoder, frame: pd.DataFrame, positions: Any, columns: tuple[str, ...],
                       cap: int) -> list[np.ndarray]:
    """Per column, the ``cap`` smallest distinct :func:`_ordered_keys` of this partition's encoded
    values (missing skipped; ``-0.0`` is ``0.0``)."""
    return [np.unique(_kept_keys(encoder, frame, positions, c, None))[:cap] for c in columns]


def _text_counts(frame: pd.DataFrame, positions: Any, column: str) -> pd.Series:
    """:func:`~synthguard.data.coarsening.text_counts_of` of one partition's ``column``."""
    return text_counts_of([frame[column]])


def _missing_part(frame: pd.DataFrame, positions: Any, columns: tuple[str, ...]) -> np.ndarray:
    """Missing values of each of ``columns`` in one partition."""
    return frame[list(columns)].isna().sum().to_numpy(dtype=np.int64)


def _summary_part(frame: pd.DataFrame, positions: Any, columns: tuple[str, ...], sdtypes: dict[str, str]
                  ) -> dict[str, dict[str, Any]]:
    return value_summary(frame, list(columns), sdtypes)


def _content_part(frame: pd.DataFrame, positions: Any, columns: tuple[str, ...], as_object: tuple[str, ...]
                  ) -> tuple[np.ndarray, np.ndarray, tuple[tuple[str, str], ...]]:
    """One partition's content hashes on ``columns`` (:func:`~synthguard.data.hashing.row_hashes`),
    its rows' canonical positions and the dtypes hashed."""
    from ..data.hashing import row_hashes

    f = frame[list(columns)]
    if as_object:
        f = f.astype({c: object for c in as_object})
    return row_hashes(f), np.asarray(positions, dtype=np.int64), tuple((str(c), str(t)) for c, t in f.dtypes.items())


def _near_part(encoder: Encoder, frame: pd.DataFrame, positions: Any, columns: tuple[str, ...], query: Block
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`~synthguard.engine.cells.near_counts` of ``query`` against one partition: the query
    rows with a count, and their counts."""
    from ..engine.cells import near_counts

    exact, within = near_counts(query, encoder.encode(frame, list(columns)))
    at = np.flatnonzero((exact != 0) | (within != 0))
    return at, exact[at], within[at]


def _second_lows(frame: pd.DataFrame, positions: Any, columns: tuple[str, ...]) -> dict[str, int]:
    """Per datetime column of one partition with a value, its earliest whole second since 1970."""
    from ..data.encoding import _epoch_ns

    out = {}
    for c in columns:  # loop over columns
        if c in frame.columns and pd.api.types.is_datetime64_any_dtype(frame[c].dtype):
            ns, missing = _epoch_ns(frame[c])
            if not missing.all():
                out[c] = int(ns[~missing].min()) // 1_000_000_000
    return out


def _seconds_bounds(frame: pd.DataFrame, positions: Any, encoder: Encoder, columns: tuple[str, ...]):
    from ..data.encoding import value_bounds

    return value_bounds(encoder.encode(frame, list(columns), exact_datetimes=True))


def _bits_hash(block: Block) -> np.ndarray:
    """``(n, 2)`` uint64: a 128-bit hash of each row's encoded bits, rows told apart exactly as
    :func:`~synthguard.engine.neighbors.distinct.distinct_rows` tells them apart (no folding)."""
    from ..data.encoding import row_hash128

    bits = np.concatenate([np.ascontiguousarray(block.num).view(np.int64), block.cat.astype(np.int64)], axis=1)
    return row_hash128(Block(np.zeros((block.n_rows, 0)), bits, (), tuple(map(str, range(bits.shape[1])))))


def _reached_part(query: tuple[Block, np.ndarray], reference: tuple[Block, np.ndarray], radius: np.ndarray,
                  metric: Any, backend: str) -> tuple[np.ndarray, np.ndarray]:
    """Query rows (a group, :meth:`DaskBackend._stacked_groups`) against one reference partition:
    the reference positions within a query row's radius, and the distinct ``(query position, h1,
    h2)`` of the rows reached."""
    from ..engine.backend import pairs_within

    (qb, q_pos), (rb, r_pos) = query, reference
    q, r, _ = pairs_within(qb, rb, metric, radius[q_pos], backend)
    h = _bits_hash(rb.take(r))
    keys = np.empty(q.size, dtype=[("q", np.int64), ("h1", np.uint64), ("h2", np.uint64)])
    keys["q"], keys["h1"], keys["h2"] = q_pos[q], h[:, 0], h[:, 1]
    return np.unique(r_pos[r]), np.unique(keys)


def _encode_kept(encoder: Encoder, frame: pd.DataFrame, positions: Any, columns: tuple[str, ...],
                 keep: np.ndarray | None, exact_datetimes: bool = False) -> tuple[Block, np.ndarray]:
    """One partition encoded as the run encodes it (``exact_datetimes``: in exact seconds), only
    the rows ``keep`` (a bool per canonical position; None: all), with their canonical positions."""
    pos = np.asarray(positions, dtype=np.int64)
    block = encoder.encode(frame, list(columns), exact_datetimes=exact_datetimes)
    if keep is None:
        return block, pos
    at = np.flatnonzero(keep[pos])
    return block.take(at), pos[at]


def _row_groups(rows: np.ndarray, most: int) -> list[list[int]]:
    """Consecutive partitions (indices) grouped so that a group's ``rows`` sum to at most ``most``
    (a partition larger than that alone); partitions without rows left out.

    Examples
    --------
    >>> _row_groups(np.array([3, 0, 4, 2, 9, 1]), 6)
    [[0], [2, 3], [4], [5]]
    """
    groups: list[list[int]] = []
    size = 0
    for j in np.flatnonzero(np.asarray(rows) > 0).tolist():  # loop over partitions
        n = int(rows[j])
        if groups and size + n <= most:
            groups[-1].append(j)
            size += n
        else:
            groups.append([j])
            size = n
    return groups


def _stacked_kept(blocks: list[tuple[Block, np.ndarray]]) -> tuple[Block, np.ndarray]:
    """Several partitions' kept rows (:func:`_encode_kept`) as one block with their positions."""
    return Block.stack([b for b, _ in blocks]), np.concatenate([p for _, p in blocks])


def _matched_part(query: tuple[Block, np.ndarray], reference: tuple[Block, np.ndarray], tol: np.ndarray,
                  relative: bool) -> np.ndarray:
    """Query rows against one reference partition: the canonical positions of the query rows that
    some reference row matches (:func:`~synthguard.engine.backend.match_rows`)."""
    (qb, q_pos), (rb, _) = query, reference
    if qb.n_rows == 0 or rb.n_rows == 0:
        return np.zeros(0, dtype=np.int64)
    return q_pos[match_rows(rb.num, rb.cat, qb.num, qb.cat, tol, relative_to_synthetic=relative)]


def _row_hash_at(frame: pd.DataFrame, positions: Any, columns: tuple[str, ...]
                 ) -> tuple[np.ndarray, np.ndarray]:
    """A partition's rows' canonical positions and content hashes
    (:func:`~synthguard.data.hashing.row_hashes`) on ``columns``."""
    from ..data.hashing import row_hashes

    return np.asarray(positions, dtype=np.int64), row_hashes(frame[list(columns)])


def _hash_firsts(frame: pd.DataFrame, positions: Any, columns: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """A partition's distinct content hashes (:func:`~synthguard.data.hashing.row_hashes`) with the
    lowest position of each."""
    from ..data.hashing import row_hashes

    h = row_hashes(frame[list(columns)])
    pos = np.asarray(positions, dtype=np.int64)
    order = np.lexsort((pos, h))
    h, pos = h[order], pos[order]
    keep = np.r_[True, h[1:] != h[:-1]] if h.size else np.zeros(0, dtype=bool)
    return h[keep], pos[keep]


def _raw_bounds(frame: pd.DataFrame, positions: Any, columns: tuple[str, ...]) -> list[tuple[float, float]]:
    out = []
    for c in columns:
        v = raw_numeric(frame[c])
        v = v[~np.isnan(v)]
        out.append((float(v.min()), float(v.max())) if v.size else (np.inf, -np.inf))
    return out


def _taken(block: Block, rows: np.ndarray | None) -> Block:
    """``block`` at ``rows`` (``None``: every row): the rows a re-test searches again."""
    return block if rows is None else block.take(np.asarray(rows, dtype=np.int64))


def _search_key(query: str, reference: str, columns: Sequence[str], metric: Any, k: int
                ) -> tuple[Any, ...] | None:
    """What decides a whole neighbour search's result (``None``: a metric without the fields of a
    :class:`~synthguard.engine.neighbors.metric.DistanceMetric`, not kept)."""
    try:
        fields = (np.asarray(metric.scale, dtype=float).tobytes(), float(metric.p), bool(metric.clip),
                  bool(metric.normalise), str(metric.nan_rule),
                  *(None if w is None else np.asarray(w, dtype=float).tobytes()
                    for w in (metric.num_weights, metric.cat_weights)))
    except AttributeError:
        return None
    return (query, reference, tuple(columns), int(k), fields)


#: pivots per unresolved rank and pass of :meth:`DaskBackend.quantiles`
_PIVOTS = 1024
_LOW63 = np.int64(0x7FFFFFFFFFFFFFFF)


def _ordered_keys(values: np.ndarray) -> np.ndarray:
    """int64 keys ordered as the float64 ``values`` (no NaN): the bit pattern, its 63 low bits
    flipped for negative values; ``-0.0`` counts as ``0.0``.

    Examples
    --------
    >>> v = np.array([-2.5, -0.0, 0.0, 1e-300, 3.0])
    >>> k = _ordered_keys(v)
    >>> bool((np.diff(k) >= 0).all()), _from_keys(k).tolist()
    (True, [-2.5, 0.0, 0.0, 1e-300, 3.0])
    """
    b = (np.asarray(values, dtype=np.float64) + 0.0).view(np.int64)
    return np.where(b < 0, b ^ _LOW63, b)


def _from_keys(keys: np.ndarray) -> np.ndarray:
    """The float64 values of :func:`_ordered_keys` ``keys``."""
    k = np.asarray(keys, dtype=np.int64)
    return np.where(k < 0, k ^ _LOW63, k).view(np.float64)


def _pivots(lo: np.ndarray, hi: np.ndarray) -> list[np.ndarray]:
    """Per interval ``[lo, hi]`` of int64 keys: up to :data:`_PIVOTS` distinct keys in
    ``[lo, hi - 1]`` evenly spread, ``lo + floor(d * i / m)`` for ``d = hi - lo`` (all of them when
    ``d <= _PIVOTS``; none when ``lo == hi``), in uint64 arithmetic (``d`` may exceed 2**63)."""
    out = []
    for a, b in zip(lo.tolist(), hi.tolist(), strict=True):  # loop over ranks (a handful)
        d = b - a  # Python ints: no overflow
        m = min(d, _PIVOTS)
        i = np.arange(m, dtype=np.uint64)
        step, rest = divmod(d, m) if m else (0, 0)
        off = np.uint64(step) * i + (np.uint64(rest) * i) // np.uint64(max(m, 1))
        out.append((np.uint64(a % 2**64) + off).view(np.int64))
    return out


def _finite_keys(frame: pd.DataFrame, column: str) -> np.ndarray:
    v = raw_numeric(frame[column])
    return np.sort(_ordered_keys(v[~np.isnan(v)]))


def _key_range(frame: pd.DataFrame, positions: Any, columns: tuple[str, ...]) -> list[tuple[int, int, int]]:
    """Per column: values (missing skipped), lowest and highest :func:`_ordered_keys`."""
    out = []
    for c in columns:
        k = _finite_keys(frame, c)
        out.append((int(k.size), int(k[0]), int(k[-1])) if k.size else (0, 0, 0))
    return out


def _count_at_or_below(frame: pd.DataFrame, positions: Any, pivots: dict[str, np.ndarray]
                       ) -> dict[str, np.ndarray]:
    """Per column, how many of this partition's values have a key at or below each pivot."""
    return {c: np.searchsorted(_finite_keys(frame, c), p, side="right").astype(np.int64)
            for c, p in pivots.items()}


def _balanced_part(frame: pd.DataFrame, positions: np.ndarray, columns: tuple[str, ...], n: int, seed: int,
                   label: str) -> tuple[np.ndarray, np.ndarray]:
    keys = balanced_keys(frame[list(columns)], seed, label)
    pos = np.asarray(positions, dtype=np.int64)
    order = np.lexsort((pos, keys))[:n]
    return keys[order], pos[order]


def _rows_at(frame: pd.DataFrame, local: np.ndarray, columns: list[str] | None) -> pd.DataFrame:
    return frame.iloc[local] if columns is None else frame[columns].iloc[local]


def _knn_rows_part(encoder: Encoder, frame: pd.DataFrame, local: np.ndarray, columns: tuple[str, ...],
                   reference: Block, metric: Any, k: int, backend: str) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest ``reference`` rows of one partition's rows at ``local`` (input order),
    encoded and searched :data:`BLOCK_ROWS` at a time: ``(distances, ids)`` in ``local``'s order."""
    from ..engine.neighbors import kneighbors

    dist = np.empty((local.size, k))
    idx = np.empty((local.size, k), dtype=np.int64)
    for a, block in _encoded_blocks(encoder, frame, local, columns):
        nb = kneighbors(block, reference, metric, k, backend=backend)
        dist[a:a + block.n_rows], idx[a:a + block.n_rows] = nb.distances, nb.indices
    return dist, idx


def _encoded_blocks(encoder: Encoder, frame: pd.DataFrame, local: np.ndarray, columns: tuple[str, ...]
                    ) -> Iterator[tuple[int, Block]]:
    """One partition's rows at ``local`` (input order) encoded on ``columns``, :data:`BLOCK_ROWS`
    at a time: ``(the first one's place in local, the block)``."""
    sub = frame[list(columns)]
    for a in range(0, local.size, BLOCK_ROWS):
        yield a, encoder.encode(sub.iloc[local[a:a + BLOCK_ROWS]], list(columns))


def _equal_cells_part(encoder: Encoder, frame: pd.DataFrame, local: np.ndarray, columns: tuple[str, ...],
                      query: Block, qi: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The cells each pair ``(query row qi[p], the partition's row local[at[p]])`` shares
    (:func:`~synthguard.engine.cells.equal_cells`), the partition's rows encoded
    :data:`BLOCK_ROWS` at a time."""
    from ..engine.cells import equal_cells

    out = np.empty(qi.size, dtype=np.int64)
    order = np.argsort(at, kind="stable")  # the pairs by the row they name, a block of rows at a time
    bounds = np.searchsorted(at[order], np.arange(0, local.size + BLOCK_ROWS, BLOCK_ROWS))
    for n, (a, rows) in enumerate(_encoded_blocks(encoder, frame, local, columns)):
        pairs = order[bounds[n]:bounds[n + 1]]  # every row of local is named by a pair
        out[pairs] = equal_cells(query, rows, qi[pairs], at[pairs] - a)
    return out


def _within_part(encoder: Encoder, frame: pd.DataFrame, positions: np.ndarray, columns: tuple[str, ...],
                 reference: Block, radius: np.ndarray, metric: Any, backend: str
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`~synthguard.engine.backend.pairs_within` for one partition's rows (canonical
    positions), :data:`BLOCK_ROWS` rows at a time (a row's pairs depend on that row alone: the
    search's arrays, ``rows x k`` widened while rows have k pairs, stay within a block's rows)."""
    from ..engine.backend import pairs_within

    pos = np.asarray(positions, dtype=np.int64)
    got = []
    for a in range(0, len(frame), BLOCK_ROWS):
        b = min(a + BLOCK_ROWS, len(frame))
        rad = radius[pos[a:b]]
        if not (rad >= 0).any():  # no row of the block takes part
            continue
        q, r, d = pairs_within(encoder.encode(frame.iloc[a:b], list(columns)), reference, metric, rad, backend)
        got.append((pos[a:b][q], r, d))
    if not got:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    return tuple(np.concatenate([g[i] for g in got]) for i in range(3))  # type: ignore[return-value]


def _pairs(h: np.ndarray) -> np.ndarray:
    """``(n, 2)`` uint64 identities as one structured value per row (sorted, searched and made
    unique as pairs)."""
    return np.ascontiguousarray(h, dtype=np.uint64).view([("h1", np.uint64), ("h2", np.uint64)]).ravel()


def _distinct_pairs(h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``(n, 2)`` uint64 keys of ``h`` sorted by their first word, then their second
    (``(m, 2)``), and the index of each row's key among them (a sort of two word columns, not of
    structured values: many times faster). The rows are sorted by their first word alone (about 4x
    faster than the two-word ``lexsort`` at 1M rows), which orders the keys by both words unless
    two distinct keys share a first word (about ``m**2 / 2**64``): then by both words.

    Examples
    --------
    >>> h = np.array([[3, 1], [1, 9], [3, 1], [3, 0]], dtype=np.uint64)  # 3 shared by two keys
    >>> keys, inv = _distinct_pairs(h)
    >>> keys.tolist(), inv.tolist()
    ([[1, 9], [3, 0], [3, 1]], [2, 0, 2, 1])
    """
    h = np.asarray(h, dtype=np.uint64).reshape(-1, 2)
    order = np.argsort(h[:, 0])
    s = h[order]
    if ((s[1:, 0] == s[:-1, 0]) & (s[1:, 1] != s[:-1, 1])).any():  # a first word of two keys
        order = np.lexsort((h[:, 1], h[:, 0]))
        s = h[order]
    new = np.ones(len(s), dtype=bool)
    new[1:] = (s[1:] != s[:-1]).any(axis=1)
    inv = np.empty(len(s), dtype=np.int64)
    inv[order] = np.cumsum(new) - 1
    return s[new], inv


def _find_pairs(want: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The index of each row's key (``rows``, ``(n, 2)`` uint64) among the sorted distinct keys
    ``want`` (:func:`_distinct_pairs`), ``-1`` when absent: one search of the first words, the
    rows' first words searched in ascending order (each search starts where the last ended: a walk
    through ``want`` rather than a random probe per row, about 3x fewer CPU seconds on 250,000 rows
    against 200,000 keys); where several keys share a first word (about ``m**2 / 2**64``), a
    search of the pairs for the rows on it.

    Examples
    --------
    >>> import numpy as np
    >>> want = np.array([[1, 5], [3, 1], [3, 2], [9, 0]], dtype=np.uint64)
    >>> rows = np.array([[3, 2], [9, 0], [3, 7], [4, 0], [1, 5]], dtype=np.uint64)
    >>> _find_pairs(want, rows).tolist()
    [2, 3, -1, -1, 0]
    """
    n, m = len(rows), len(want)
    if m == 0 or n == 0:
        return np.full(n, -1, dtype=np.int64)
    rows = np.asarray(rows, dtype=np.uint64)
    first = np.ascontiguousarray(want[:, 0])
    word = np.ascontiguousarray(rows[:, 0])
    order = np.argsort(word)
    at = np.empty(n, dtype=np.int64)
    at[order] = np.searchsorted(first, word[order], side="left")
    np.minimum(at, m - 1, out=at)
    shared = first[1:] == first[:-1]
    if shared.any():  # a row on a first word several keys share: its pair searched
        several = np.zeros(m, dtype=bool)
        several[:-1] = shared
        rerun = np.flatnonzero(several[at] & (first[at] == word))
        if rerun.size:
            at[rerun] = np.minimum(np.searchsorted(_pairs(want), _pairs(rows[rerun])), m - 1)
    return np.where((want[at] == rows).all(axis=1), at, -1).astype(np.int64)


def _key_hits(encoder: Encoder, frame: pd.DataFrame, positions: np.ndarray,
              asked: tuple[tuple[tuple[str, ...], ...], tuple[np.ndarray, ...]]
              ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per column set of ``asked = (sets, keys)`` and per key of its ``keys`` (sorted distinct
    pairs, :func:`_distinct_pairs`) that rows of this partition hold: ``(key index, how many
    rows, the lowest canonical position)``."""
    sets, keys = asked
    return _hits(set_hashes(encoder, frame, sets), keys, np.asarray(positions, dtype=np.int64))


def _cell_part(encoder: Encoder, frame: pd.DataFrame, positions: np.ndarray, columns: tuple[str, ...]
               ) -> tuple[np.ndarray, np.ndarray]:
    """One partition's cell hashes on ``columns`` (:func:`~._tables.cell_matrix`) and its rows'
    canonical positions: what :meth:`DaskBackend.held_cells` holds."""
    return cell_matrix(encoder, frame, columns), np.asarray(positions, dtype=np.int64)


def _key_hits_held(held: tuple[np.ndarray, np.ndarray], columns: tuple[str, ...],
                   asked: tuple[tuple[tuple[str, ...], ...], tuple[np.ndarray, ...]]
                   ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """:func:`_key_hits` from a partition's held cell hashes on ``columns``
    (:func:`_cell_part`): each set's keys summed from them, one set at a time (the same keys)."""
    from ..data.hashing import iter_set_sums

    cells, pos = held
    sets, keys = asked
    at = {c: j for j, c in enumerate(columns)}
    return _hits(iter_set_sums(cells, [[at[c] for c in cols] for cols in sets]), keys, pos)


def _hits(hashes: Any, keys: Sequence[np.ndarray], pos: np.ndarray
          ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per column set (its rows' keys in ``hashes``, its asked keys in ``keys``): ``(key index,
    how many rows, the lowest canonical position)`` of the asked keys the rows hold."""
    out = []
    for h, want in zip(hashes, keys, strict=True):  # per column set
        at = _find_pairs(want, h)
        hit = np.flatnonzero(at >= 0)
        k, p = at[hit], pos[hit]
        order = np.lexsort((p, k))  # by key, then position: the first of each key is its lowest
        k, p = k[order], p[order]
        start = np.flatnonzero(np.r_[True, k[1:] != k[:-1]]) if k.size else np.zeros(0, np.int64)
        out.append((k[start], np.diff(np.r_[start, k.size]).astype(np.int64), p[start]))
    return out


def _set_key_buckets(encoder: Encoder, frame: pd.DataFrame, positions: np.ndarray,
                     sets: tuple[tuple[str, ...], ...], start: int, buckets: int,
                     part: tuple[int, int] = (0, 1)) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]:
    """One partition's keys on every column set of ``sets`` (:func:`~._tables.set_hashes`: each
    cell hashed once), split into ``buckets`` by the first word of the key: per bucket, ``(set
    index (int32), keys ((m, 2) uint64), pooled positions (int64))`` (:func:`_keys_in_buckets`,
    of its slice ``part`` of the buckets). Equal keys of one set fall in the same bucket in every
    partition."""
    pos = np.asarray(positions, dtype=np.int64) + start
    return _keys_in_buckets(set_hashes(encoder, frame, sets), len(sets), pos, buckets, part)


def _alone_in_bucket(pieces: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> np.ndarray:
    """The pooled positions of the rows alone on their key in one bucket of every partition's keys
    (:func:`_set_key_buckets`): the keys grouped by ``(set, key)`` (:func:`_key_groups`), a group of
    one row kept."""
    s = np.concatenate([p[0] for p in pieces])
    h = np.concatenate([p[1] for p in pieces])
    g = np.concatenate([p[2] for p in pieces])
    if not s.size:
        return np.zeros(0, dtype=np.int64)
    order, new, _ = _key_groups(s, h)  # a group starts where the set or the key changes
    starts = np.flatnonzero(np.r_[new, True])
    one = np.diff(starts) == 1
    return g[order[starts[:-1][one]]]


def _keys_in_buckets(hashes: Any, n_sets: int, pos: np.ndarray, buckets: int,
                     part: tuple[int, int] = (0, 1)
                     ) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]:
    """Rows' keys on ``n_sets`` column sets (``hashes``: one ``(n, 2)`` uint64 array per set, in
    order) split into ``buckets`` by the first word of the key: per bucket, ``(set index (int32),
    keys ((m, 2) uint64), positions (int64))``, each bucket's keys by set. Equal keys of one set fall
    in the same bucket in every partition. Split one set at a time (each set's rows reordered
    within that set's keys: cache-sized gathers, not one over every set's).

    ``part = (p, passes)``: the buckets ``p * buckets .. (p + 1) * buckets - 1`` of ``passes *
    buckets`` (a pass of :meth:`DaskBackend.key_counts_rows` over one slice of the keys' words),
    the other keys dropped: over the passes, every key in the bucket it would fall in split once
    into ``passes * buckets``.

    Examples
    --------
    >>> h = [np.array([[4, 1], [5, 1]], dtype=np.uint64), np.array([[6, 2], [4, 1]], dtype=np.uint64)]
    >>> [(s.tolist(), k[:, 0].tolist(), p.tolist()) for s, k, p in _keys_in_buckets(h, 2, np.array([7, 9]), 2)]
    [([0, 1, 1], [4, 6, 4], [7, 7, 9]), ([0], [5], [9])]
    >>> [(s.tolist(), k[:, 0].tolist()) for s, k, _ in _keys_in_buckets(h, 2, np.array([7, 9]), 1, (1, 2))]
    [([0], [5])]
    """
    pos = np.asarray(pos, dtype=np.int64)
    n = pos.size
    first, total = part[0] * buckets, part[1] * buckets
    if total == 1:
        h = np.empty((n * n_sets, 2), dtype=np.uint64)
        for j, k in enumerate(hashes):  # loop over sets, vectorised over rows
            h[j * n:(j + 1) * n] = k
        return ((np.repeat(np.arange(n_sets, dtype=np.int32), n), h, np.tile(pos, n_sets)),)
    small = np.int16 if total < 2 ** 15 else np.int64
    pieces: list[list[tuple[int, np.ndarray, np.ndarray]]] = [[] for _ in range(buckets)]
    for j, k in enumerate(hashes):  # loop over sets, vectorised over rows
        which = (k[:, 0] % np.uint64(total)).astype(small)
        pj = pos
        if total != buckets:  # one pass's slice of the buckets: the other keys dropped
            inside = np.flatnonzero((which >= first) & (which < first + buckets))
            which, k, pj = which[inside] - small(first), k[inside], pos[inside]
        order = np.argsort(which, kind="stable")  # a radix sort of small numbers
        bounds = np.searchsorted(which[order], np.arange(buckets + 1))
        kj, pj = k[order], pj[order]
        for b in range(buckets):  # loop over buckets: slices
            pieces[b].append((j, kj[bounds[b]:bounds[b + 1]], pj[bounds[b]:bounds[b + 1]]))
    return tuple((np.repeat(np.array([x[0] for x in per], dtype=np.int32), [x[2].size for x in per]),
                  np.concatenate([x[1] for x in per]).reshape(-1, 2),
                  np.concatenate([x[2] for x in per])) for per in pieces)


def _set_buckets_held(held: tuple[np.ndarray, np.ndarray], columns: tuple[str, ...],
                      sets: tuple[tuple[str, ...], ...], start: int, buckets: int, keep: np.ndarray | None,
                      part: tuple[int, int] = (0, 1)
                      ) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]:
    """:func:`_keys_in_buckets` of a partition's rows from its held cell hashes on ``columns``
    (:func:`_cell_part`; the keys of :func:`~._tables.set_hashes`), positions plus ``start``; only
    the rows whose position ``keep`` marks when given (the asked rows of a role); of the keys,
    the slice ``part`` (a pass, :func:`_keys_in_buckets`)."""
    from ..data.hashing import iter_set_sums

    cells, pos = held
    if keep is not None:
        sel = keep[pos]
        cells, pos = cells[sel], pos[sel]
    at = {c: j for j, c in enumerate(columns)}
    hashes = iter_set_sums(cells, [[at[c] for c in cols] for cols in sets])
    return _keys_in_buckets(hashes, len(sets), pos + start, buckets, part)


def _set_buckets_frame(encoder: Encoder, frame: pd.DataFrame, positions: np.ndarray,
                       sets: tuple[tuple[str, ...], ...], start: int, buckets: int, keep: np.ndarray | None,
                       part: tuple[int, int] = (0, 1)
                       ) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]:
    """:func:`_set_buckets_held` of a partition whose cells are not held: its rows hashed
    (:func:`~._tables.set_hashes`, the same keys)."""
    pos = np.asarray(positions, dtype=np.int64)
    if keep is not None:
        sel = keep[pos]
        frame, pos = frame.iloc[np.flatnonzero(sel)], pos[sel]
    return _keys_in_buckets(set_hashes(encoder, frame, sets), len(sets), pos + start, buckets, part)


def _key_groups(s: np.ndarray, h: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An order of the entries ``(set s[i], key h[i])`` (``(n, 2)`` uint64 keys) that puts equal
    ``(set, key)`` side by side, whether each entry of that order starts a group, and the sets in
    that order. One sort of words (not an argsort): each key's first word with its low bits
    replaced by the entry's number; where entries with the same high bits hold different
    ``(set, key)`` (about ``n**2 / 2**(65 - log2 n)`` of them), those runs' entries are sorted
    by ``(key, set)`` in place: groups exactly by ``(set, key)``.

    Examples
    --------
    >>> h = np.array([[8, 1], [9, 1], [8, 2], [8, 1]], dtype=np.uint64)  # 8 and 9 share high bits
    >>> order, new, sets = _key_groups(np.array([0, 0, 0, 1], dtype=np.int32), h)
    >>> [h[order[new], 0].tolist(), np.diff(np.r_[np.flatnonzero(new), 4]).tolist()]
    [[8, 8, 8, 9], [1, 1, 1, 1]]
    >>> _, new, _ = _key_groups(np.zeros(4, dtype=np.int32), h)
    >>> int(new.sum())  # (0, [8, 1]) twice
    3
    """
    n = s.size
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, bool), s[:0]
    bits = np.uint64(max(n - 1, 1).bit_length())
    low = (np.uint64(1) << bits) - np.uint64(1)
    packed = (h[:, 0] & ~low) | np.arange(n, dtype=np.uint64)
    packed.sort()
    order = (packed & low).astype(np.int64)
    top = packed >> bits
    del packed
    w0, w1, ws = h[order, 0], h[order, 1], s[order]
    same_top = top[1:] == top[:-1]
    same = same_top & (w0[1:] == w0[:-1]) & (w1[1:] == w1[:-1]) & (ws[1:] == ws[:-1])
    mixed = same_top & ~same
    if mixed.any():  # runs of one high part holding several (set, key): sorted by them in place
        run = np.cumsum(np.r_[True, ~same_top]) - 1
        bad = np.zeros(run[-1] + 1, dtype=bool)
        bad[run[1:][mixed]] = True
        at = np.flatnonzero(bad[run])  # those runs' slots (in run order)
        sub = at[np.lexsort((ws[at], w1[at], w0[at], run[at]))]
        order[at], w0[at], w1[at], ws[at] = order[sub], w0[sub], w1[sub], ws[sub]
        same = (w0[1:] == w0[:-1]) & (w1[1:] == w1[:-1]) & (ws[1:] == ws[:-1])
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.logical_not(same, out=new[1:])
    return order, new, ws


def _first(pieces: Sequence[Any]) -> Any:
    """``pieces[0]``: a task's first output (its one bucket, its positions)."""
    return pieces[0]


def _pooled_groups(pieces: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]], n_sets: int
                   ) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]:
    """The pooled rows' keys of every partition (``(set index, keys, pooled positions)`` pieces,
    :func:`_keys_in_buckets` with one bucket) grouped per column set: its distinct keys sorted as
    :func:`_distinct_pairs` sorts them (``(m, 2)`` uint64), how many pooled rows hold each and
    their lowest pooled position.

    Examples
    --------
    >>> k = lambda *w: np.array([[x, 1] for x in w], dtype=np.uint64)
    >>> piece = (np.array([0, 0, 0, 1], np.int32), k(5, 7, 5, 5), np.array([4, 2, 1, 3]))
    >>> [(g[0][:, 0].tolist(), g[1].tolist(), g[2].tolist()) for g in _pooled_groups([piece], 2)]
    [([5, 7], [2, 1], [1, 2]), ([5], [1], [3])]
    """
    s = np.concatenate([p[0] for p in pieces])
    h = np.concatenate([p[1] for p in pieces]).reshape(-1, 2)
    g = np.concatenate([p[2] for p in pieces]).astype(np.int64)
    order = np.argsort(s, kind="stable")
    bounds = np.searchsorted(s[order], np.arange(n_sets + 1))
    out = []
    for j in range(n_sets):  # loop over sets, vectorised over rows
        at = order[bounds[j]:bounds[j + 1]]
        keys, inv = _distinct_pairs(h[at])
        by = np.argsort(inv, kind="stable")
        starts = np.searchsorted(inv[by], np.arange(len(keys)))
        count = np.diff(np.r_[starts, inv.size]).astype(np.int64)
        low = np.minimum.reduceat(g[at][by], starts) if len(keys) else np.zeros(0, np.int64)
        out.append((keys, count, low.astype(np.int64)))
    return tuple(out)


def _pooled_hits(hashes: Any, pos: np.ndarray,
                 groups: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Per column set (its rows' keys in ``hashes``), the index of each row's key among the
    set's pooled keys (:func:`_pooled_groups`; ``-1``: no pooled row holds it): ``(pos, (sets,
    rows) int32)``."""
    idx = np.full((len(groups), pos.size), -1, dtype=np.int32)
    for j, h in enumerate(hashes):  # loop over sets, vectorised over rows
        idx[j] = _find_pairs(groups[j][0], h)
    return pos, idx


def _pooled_hits_frame(encoder: Encoder, frame: pd.DataFrame, positions: np.ndarray,
                       sets: tuple[tuple[str, ...], ...], keep: np.ndarray | None,
                       groups: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]]
                       ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_pooled_hits` of a partition's rows (only those ``keep`` marks, when given), hashed:
    every cell once (:func:`~._tables.cell_matrix`), then one set's keys at a time as from held
    cells (:func:`_pooled_hits_held`; the keys of :func:`~._tables.set_hashes`), not every set's
    of the batch at once."""
    pos = np.asarray(positions, dtype=np.int64)
    if keep is not None:
        sel = keep[pos]
        frame, pos = frame.iloc[np.flatnonzero(sel)], pos[sel]
    every = tuple(dict.fromkeys(c for cols in sets for c in cols))
    return _pooled_hits_held((cell_matrix(encoder, frame, every), pos), every, sets, None, groups)


def _pooled_hits_held(held: tuple[np.ndarray, np.ndarray], columns: tuple[str, ...],
                      sets: tuple[tuple[str, ...], ...], keep: np.ndarray | None,
                      groups: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]]
                      ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_pooled_hits_frame` from a partition's held cell hashes on ``columns`` (the same
    keys)."""
    from ..data.hashing import iter_set_sums

    cells, pos = held
    if keep is not None:
        sel = keep[pos]
        cells, pos = cells[sel], pos[sel]
    at = {c: j for j, c in enumerate(columns)}
    return _pooled_hits(iter_set_sums(cells, [[at[c] for c in cols] for cols in sets]), pos, groups)


def _tallies(groups: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]], j: int
             ) -> tuple[np.ndarray, np.ndarray]:
    """Set ``j``'s pooled counts and lowest positions (:func:`_pooled_groups`), without its keys."""
    return groups[j][1], groups[j][2]


def _set_rows(part: tuple[np.ndarray, np.ndarray], j0: int, j1: int) -> np.ndarray:
    """Sets ``j0`` to ``j1 - 1``'s pooled key indices of one partition's asked rows
    (:func:`_pooled_hits`): a ``(j1 - j0, rows)`` array."""
    return part[1][j0:j1]


def _join_bucket(query: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
                 real: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]]
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One bucket of :meth:`DaskBackend.key_counts_rows`: the asked rows' keys (``query``) and the
    pooled rows' keys (``real``) of every partition (:func:`_keys_in_buckets` pieces), sorted
    together; per ``(set, key)``, how many pooled rows hold it and their lowest position. Returns,
    for the asked keys some pooled row holds, ``(set index, asked position, count, lowest pooled
    position)``. One sort by the keys' first word; by ``(set, key)`` only when two different
    ``(set, key)`` share a first word (about ``m**2 / 2**64``): the same groups.

    Examples
    --------
    >>> k = lambda *w: np.array([[x, 1] for x in w], dtype=np.uint64)
    >>> i = lambda *v: np.array(v, dtype=np.int64)
    >>> real = [(np.zeros(3, np.int32), k(5, 7, 5), i(4, 2, 1))]
    >>> query = [(np.zeros(3, np.int32), k(5, 6, 7), i(0, 1, 2))]
    >>> [a.tolist() for a in _join_bucket(query, real)]
    [[0, 0], [0, 2], [2, 1], [1, 2]]
    """
    qs, qh, qg = (np.concatenate([p[i] for p in query]) for i in range(3))
    rs, rh, rg = (np.concatenate([p[i] for p in real]) for i in range(3))
    nr = rs.size
    if qs.size == 0 or nr == 0:
        z = np.zeros(0, dtype=np.int64)
        return qs[:0], z, z, z
    s = np.concatenate([rs, qs])
    h = np.concatenate([rh, qh])
    g = np.concatenate([rg, qg])
    del rs, rh, rg, qs, qh, qg
    order, new, ws = _key_groups(s, h)
    del h, s
    starts = np.flatnonzero(new)
    group = np.cumsum(new) - 1
    is_real = order < nr
    gs = g[order]
    count = np.add.reduceat(is_real.astype(np.int64), starts)
    low = np.minimum.reduceat(np.where(is_real, gs, np.iinfo(np.int64).max), starts)
    asked = np.flatnonzero(~is_real)
    grp = group[asked]
    hit = count[grp] > 0
    asked, grp = asked[hit], grp[hit]
    return ws[asked], gs[asked], count[grp], low[grp]


def _rows_by_partition(dt: DistTables, role: str, uniq: np.ndarray) -> list[tuple[Any, np.ndarray, np.ndarray]]:
    """Where the canonical positions ``uniq`` (distinct, ascending) of ``role`` lie: per partition
    holding some, ``(its frame argument, the rows' places in it (input order), their indices in
    uniq)`` (the canonical position's input row, from :meth:`DistTables.rows_in_parts`, says
    where)."""
    table = dt.get(role)
    if uniq.size and (uniq[0] < 0 or uniq[-1] >= table.n_rows):
        raise RuntimeError(f"row {int(uniq[-1] if uniq[-1] >= table.n_rows else uniq[0])} is outside the "
                           f"{role} table ({table.n_rows} rows)")  # a bug, not a metric that cannot run
    nums = dt.rows_in_parts(role)
    inputs = uniq if nums is None else np.asarray(nums)[uniq]  # partition row of each canonical row
    by_input = np.argsort(inputs, kind="stable")
    bounds = np.searchsorted(inputs[by_input], np.concatenate([table.offsets, [table.n_rows]]))
    out = []
    for j, frame in enumerate(table.part_args(ordered=False)):
        sel = by_input[bounds[j]:bounds[j + 1]]
        if sel.size:
            out.append((frame, inputs[sel] - table.offsets[j], sel))
    return out


def fetch_rows(dt: DistTables, role: str, rows: np.ndarray, columns: Sequence[str] | None = None
               ) -> pd.DataFrame:
    """The typed rows of ``role`` at canonical positions ``rows`` (in that order), fetched from the
    partitions that hold them (in input order: the canonical position's input row, from
    :meth:`DistTables.rows_in_parts`, says where); only those rows (and of them only ``columns``,
    default all) travel to the caller."""
    from dask import delayed

    rows = np.asarray(rows, dtype=np.int64)
    uniq = np.unique(rows)
    tasks, order = [], []
    for frame, local, sel in _rows_by_partition(dt, role, uniq):
        tasks.append(delayed(_rows_at, pure=True)(frame, local, None if columns is None else list(columns)))
        order.append(sel)
    if not tasks:
        raise RuntimeError(f"no rows requested from the {role} table")  # a bug: reported as an error
    got = pd.concat(dt.compute(tasks), ignore_index=True)
    at = np.empty(len(uniq), dtype=np.int64)  # row of ``got`` holding each of ``uniq``
    at[np.concatenate(order)] = np.arange(len(uniq), dtype=np.int64)
    return got.iloc[at[np.searchsorted(uniq, rows)]].reset_index(drop=True)


#: Pooled rows up to which :func:`first_positions` groups the rows' identities on the driver (16
#: bytes a row travel, one sort: about 50 bytes a row at its peak, 200 MB at 4M rows) instead of a
#: dask group-by and join (past 1M rows a hash shuffle of the keys and a shuffled join, many small
#: tasks each a round through the scheduler). Also the identities (rows times column groups) up to
#: which the key relations (:meth:`DaskBackend.key_groups`, ``key_groups_many``, ``key_rows``,
#: ``key_distinct``) are grouped on the driver (:func:`group_rows`; 24 bytes an identity travel,
#: about 100 at the peak with the grouping's state: 400 MB at 4M) where their dask group-bys would
#: give one partition; the relation's partitions are then held on the driver.
DRIVER_GROUP_ROWS = 4_000_000


def _identities(encoder: Encoder, frame: pd.DataFrame, positions: np.ndarray,
                columns: tuple[str, ...], bins: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """One partition's row identities on ``columns`` (``(rows, 2)`` uint64) and positions."""
    got = _hash_frame(encoder, frame, positions, {"h": columns}, bins)
    return (np.column_stack([got["h1"].to_numpy(np.uint64), got["h2"].to_numpy(np.uint64)]),
            got["pos"].to_numpy(np.int64))


def first_of_identities(h: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Per row (identity ``h[i]``, a ``(rows, 2)`` array, pooled position ``g[i]``, the positions
    0 .. rows - 1 in any order), the lowest pooled position of a row with the same identity,
    in pooled position order: what :func:`first_positions`' group-by (minimum) and join give.

    Examples
    --------
    >>> import numpy as np
    >>> h = np.array([[5, 1], [7, 0], [5, 1], [7, 0], [2, 2]], dtype=np.uint64)
    >>> first_of_identities(h, np.array([4, 0, 1, 3, 2])).tolist()
    [0, 1, 2, 0, 1]
    """
    g = np.asarray(g, dtype=np.int64)
    order = np.lexsort((g, h[:, 1], h[:, 0]))  # by identity, then position
    hs, gs = h[order], g[order]
    new = np.ones(gs.size, dtype=bool)  # a group starts where the identity changes
    new[1:] = (hs[1:, 0] != hs[:-1, 0]) | (hs[1:, 1] != hs[:-1, 1])
    first = gs[new][np.cumsum(new) - 1]  # each sorted row's group's lowest position
    out = np.empty(gs.size, dtype=np.int64)
    out[gs] = first
    return out


def _identities_held(held: tuple[np.ndarray, np.ndarray], columns: tuple[str, ...],
                     asked: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_identities` from a partition's held cell hashes (:func:`_hash_held`)."""
    got = _hash_held(held, columns, {"h": asked})
    return (np.column_stack([got["h1"].to_numpy(np.uint64), got["h2"].to_numpy(np.uint64)]),
            got["pos"].to_numpy(np.int64))


def _first_positions_gathered(dt: DistTables, columns: Sequence[str], roles: tuple[str, ...],
                              bins: Bins | None, held: HeldCells = None) -> dict[str, np.ndarray]:
    """:func:`first_positions` with the identities gathered (one round of one task a partition)
    and grouped on the driver by :func:`first_of_identities`."""
    used = {c: np.asarray(e) for c, e in (bins or {}).items() if c in columns}
    tasks, offsets, start = [], [], 0
    for role in roles:
        if held is None:
            parts = dt.map(role, _identities, tuple(columns), used, ordered=False)
        else:  # summed from the held cells
            from dask import delayed

            ident = delayed(_identities_held, pure=True)
            parts = [ident(c, held[role][0], tuple(columns)) for c in held[role][1]]
        tasks += parts
        offsets += [start] * len(parts)
        start += dt.get(role).n_rows
    got = dt.compute(tasks)
    h = np.concatenate([p[0] for p in got]) if got else np.zeros((0, 2), dtype=np.uint64)
    g = np.concatenate([p[1] + o for p, o in zip(got, offsets, strict=True)]) if got else np.zeros(0, np.int64)
    del got
    ids = first_of_identities(h, g)
    out, start = {}, 0
    for role in roles:
        n = dt.get(role).n_rows
        out[role] = ids[start:start + n]
        start += n
    return out


def _first_of(frame: pd.DataFrame, role_offset: int) -> pd.DataFrame:
    return pd.DataFrame({"h1": frame["h1"], "h2": frame["h2"], "g": frame["pos"] + role_offset})


def first_positions(dt: DistTables, columns: Sequence[str], roles: Sequence[str] | None = None,
                    bins: Bins | None = None, held: HeldCells = None) -> dict[str, np.ndarray]:
    """Per role and row, the first position (over ``roles``, default original, synthetic,
    control, concatenated) of a row with the same content on ``columns`` (cut at ``bins``): ids in
    the same order as the single process's dense exact-row ids
    (:func:`synthguard.data.encoding.row_identities`), so group-wise splits come out the same.
    ``held``: every role's held cell hashes (:meth:`DaskBackend.relation_cells`), the identities
    summed from them instead of hashed from the partitions (the same ids)."""
    import dask.dataframe as dd

    roles = tuple(dt.roles if roles is None else roles)
    if sum(dt.get(r).n_rows for r in roles) <= DRIVER_GROUP_ROWS:
        return _first_positions_gathered(dt, columns, roles, bins, held)
    start, frames = 0, {}
    for role in roles:
        hashed = _frames(dt, role, {"h": tuple(columns)}, bins, held)
        frames[role] = hashed.map_partitions(_first_of, start)
        start += dt.get(role).n_rows
    everything = dd.concat(list(frames.values())) if len(frames) > 1 else frames[roles[0]]
    n_all = start
    split = 1 if n_all < 1_000_000 else max(1, sum(len(dt.get(r).parts) for r in roles))
    first = everything.groupby(_KEYS).g.min(split_out=split).reset_index()
    first = first.map_partitions(_named, {"g": "first"})
    tasks = [frames[r].merge(first, on=_KEYS, how="left")[["g", "first"]] for r in roles]
    out, start = {}, 0
    for role, got in zip(roles, dt.compute(tasks), strict=True):
        ids = np.empty(dt.get(role).n_rows, dtype=np.int64)
        ids[got["g"].to_numpy() - start] = got["first"].to_numpy()
        out[role] = ids
        start += dt.get(role).n_rows
    return out


def dask_backend(dt: DistTables, neighbour_backend: str = "auto") -> DaskBackend:
    """The backend a distributed run hands its metric contexts (``Context(data_backend=...)``)."""
    return DaskBackend(dt, neighbour_backend)



def group_rows(keys: Sequence[np.ndarray], pos: np.ndarray | None = None,
               appearance: np.ndarray | bool = False
               ) -> tuple[list[np.ndarray], np.ndarray | None, np.ndarray, np.ndarray]:
    """Rows grouped on equal key words by one sort, as a group-by on the driver: ``keys`` are
    equal-length arrays (the first the most significant), ``pos`` an optional position per row.
    Returns the distinct keys (one array per key word), each group's lowest position (``None``
    without ``pos``), its rows, and each row's group (an index into the distinct keys). The
    groups come in ascending key order, or with ``appearance`` in the order a dask group-by
    gives them (pandas' ``sort=False``: first appearance, ``True`` in row order, an array the
    rows' ranks of appearance). What the key relations compute below :data:`DRIVER_GROUP_ROWS`
    instead of a dask group-by; at its peak about 40 bytes a row beyond its inputs (two words and
    positions; 55 with three words and ranks: tracemalloc, 1M rows).

    Examples
    --------
    >>> import numpy as np
    >>> h1 = np.array([7, 5, 7, 5, 2], dtype=np.uint64)
    >>> h2 = np.array([0, 1, 0, 1, 2], dtype=np.uint64)
    >>> keys, first, count, group = group_rows([h1, h2], np.array([4, 0, 1, 3, 2]))
    >>> [k.tolist() for k in keys], first.tolist(), count.tolist(), group.tolist()
    ([[2, 5, 7], [2, 1, 0]], [2, 0, 1], [1, 2, 2], [2, 1, 2, 1, 0])
    >>> keys, first, count, group = group_rows([h1, h2], np.array([4, 0, 1, 3, 2]), appearance=True)
    >>> [k.tolist() for k in keys], first.tolist(), group.tolist()
    ([[7, 5, 2], [0, 1, 2]], [1, 0, 2], [0, 1, 0, 1, 2])
    """
    keys = [np.asarray(k) for k in keys]
    n = keys[0].size
    rank = appearance if isinstance(appearance, np.ndarray) else None
    # stable: within a group, rows in row order (or by rank)
    order = np.lexsort(tuple(reversed(keys)) if rank is None else (rank, *reversed(keys)))
    new = np.zeros(n, dtype=bool)
    new[:1] = True  # a group starts at the first row and where a word changes
    for k in keys:
        ks = k[order]
        new[1:] |= ks[1:] != ks[:-1]
        del ks
    starts = np.flatnonzero(new)
    first = None
    if pos is not None:
        first = (np.minimum.reduceat(np.asarray(pos, dtype=np.int64)[order], starts) if n
                 else np.zeros(0, dtype=np.int64))
    count = np.diff(np.append(starts, n)).astype(np.int64)
    group = np.empty(n, dtype=np.int64)
    group[order] = np.cumsum(new) - 1
    at = order[starts]  # each group's first row (in row order, or of lowest rank)
    if appearance is not False:
        by = np.argsort(at if rank is None else rank[at], kind="stable")
        at, count = at[by], count[by]
        first = None if first is None else first[by]
        back = np.empty(by.size, dtype=np.int64)
        back[by] = np.arange(by.size, dtype=np.int64)
        group = back[group]
    return [k[at] for k in keys], first, count, group


def lookup_counts(pool: Sequence[np.ndarray], rows: Sequence[np.ndarray] | None = None,
                  values: Sequence[np.ndarray] | None = None) -> np.ndarray:
    """Per row of ``rows`` (key words, as ``pool``'s; default the pool's rows themselves), how
    many rows of ``pool`` hold its key, or with ``values`` (words per pooled row) how many
    distinct values they hold (0 where none): the counts of :meth:`DaskBackend.key_rows` and
    :meth:`DaskBackend.key_distinct` (a group-by of the pool, then a left join) by
    :func:`group_rows` on the driver: at its peak about 50 bytes beyond the inputs per pooled and
    asked row (the two concatenated and sorted once; tracemalloc, 1M + 1M rows of two words).

    Examples
    --------
    >>> import numpy as np
    >>> pool = [np.array([1, 1, 2, 1], dtype=np.uint64)]
    >>> lookup_counts(pool, [np.array([2, 3, 1], dtype=np.uint64)]).tolist()
    [1, 0, 3]
    >>> lookup_counts(pool, values=[np.array([9, 9, 9, 8], dtype=np.uint64)]).tolist()
    [2, 2, 1, 2]
    """
    n_pool = pool[0].size
    keys = list(pool) if rows is None else [np.concatenate([p, r]) for p, r in zip(pool, rows, strict=True)]
    _, _, count, group = group_rows(keys)
    if values is None:
        per = np.bincount(group[:n_pool], minlength=count.size)
    else:  # the distinct (key, value) pairs, then pairs per key
        _, _, pairs, pair = group_rows([*(k[:n_pool] for k in keys), *values])
        key_of_pair = np.zeros(pairs.size, dtype=np.int64)
        key_of_pair[pair] = group[:n_pool]
        per = np.bincount(key_of_pair, minlength=count.size)
    return per.astype(np.int64)[group if rows is None else group[n_pool:]]


def _words(parts: Sequence[pd.DataFrame], name: str) -> list[np.ndarray]:
    """The two identity words of group ``name`` over gathered partitions, concatenated."""
    return [np.concatenate([p[name + w].to_numpy(np.uint64) for p in parts]) if parts
            else np.zeros(0, dtype=np.uint64) for w in ("1", "2")]


def _positions(parts: Sequence[pd.DataFrame]) -> np.ndarray:
    return (np.concatenate([p["pos"].to_numpy(np.int64) for p in parts]) if parts
            else np.zeros(0, dtype=np.int64))


def _groups_frame(keys: Sequence[str], words: Sequence[np.ndarray], pos: np.ndarray, role: str,
                  appearance: np.ndarray | bool = True) -> pd.DataFrame:
    """One role's groups on ``keys`` (lowest position and rows), as the dask group-by's output
    (groups in order of first appearance over the partitions in order, ``appearance``)."""
    uniq, first, count, _ = group_rows(words, pos, appearance)
    return pd.DataFrame({**dict(zip(keys, uniq, strict=True)), f"first_{role}": first, f"n_{role}": count})


def _stacked_ranks(sizes: Sequence[int], n_sets: int) -> np.ndarray:
    """Where each row of each set (stacked set by set, the partitions in order within a set)
    comes in the rows :meth:`DaskBackend.key_groups_many`'s dask group-by reads: its sets in
    tasks of ``SETS_PER_TASK``, a task's partitions in order, a partition's rows set by set.

    Examples
    --------
    >>> _stacked_ranks([2, 1], 2).tolist()  # set 0: rows 0, 1 | 4; set 1: rows 2, 3 | 5
    [0, 1, 4, 2, 3, 5]
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    n = int(sizes.sum())
    before = np.repeat(np.cumsum(sizes) - sizes, sizes)  # rows of the partitions before a row's
    size = np.repeat(sizes, sizes)  # rows of a row's partition
    within = np.arange(n, dtype=np.int64) - before
    out = []
    for j in range(n_sets):
        a = j - j % SETS_PER_TASK
        width = min(SETS_PER_TASK, n_sets - a)
        out.append(a * n + width * before + (j - a) * size + within)
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def _split_rows(parts: Sequence[pd.DataFrame], columns: Mapping[str, np.ndarray]) -> list[pd.DataFrame]:
    """Per gathered partition (in order), its ``pos`` and its rows' slices of ``columns`` (one
    empty partition where none was gathered, so the relation keeps its columns)."""
    out, start = [], 0
    if not parts:
        parts = [pd.DataFrame({"pos": np.zeros(0, dtype=np.int64)})]
    for p in parts:
        stop = start + len(p)
        out.append(pd.DataFrame({"pos": p["pos"].to_numpy(np.int64),
                                 **{n: v[start:stop] for n, v in columns.items()}}))
        start = stop
    return out
