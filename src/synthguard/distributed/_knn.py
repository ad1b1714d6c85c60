"""The neighbour engine over partitions: reference partitions grouped into trees, searched in waves.

The reference partitions are grouped into consecutive runs of about :data:`TREE_BYTES` of encoded
rows; each group is encoded and its box tree built once (one task). The query partitions are encoded
once and kept on the cluster. The search then runs in waves, one per reference group: every query
partition's current k best ``(distance, weighted sum, global id)`` goes through
:func:`~synthguard.engine.neighbors.engine.kneighbors_step` against the group's tree, which starts from the
bound of the neighbours found in the groups before, so each step prunes everything farther than the
current k-th neighbour. Only one group's tree is alive at a time (workers hold one tree, their query
blocks and the running k-best lists), and the result is bit for bit the single-process search:
the kernel breaks ties by the lower global id, whatever the order of the rows inside a group.

Global ids are the rows' canonical positions (:meth:`DistTables.positions_array`: every partition is
sorted locally into canonical order), or, with ``reference_rows``, the row's rank among those
positions. The NumPy backend builds no tree: its groups are single partitions (whose
ids increase), searched by brute force and merged.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..data.encoding import Block, Encoder
from ..engine.neighbors import DistanceMetric
from ..engine.neighbors.engine import _resolve, kneighbors_step, reference_index
from ._tables import DistTables

_LOG = logging.getLogger(__name__)

#: encoded bytes of reference rows per tree (8 bytes per row and column; the tree holds them once
#: more, reordered, while it is built): about 2M rows of 15 columns
TREE_BYTES = 256 * 2**20
#: rows of a caller's query block per task (``kneighbors_distributed(query_block=...)``)
QUERY_ROWS = 8192



def _encode(encoder: Encoder, frame: Any, columns: tuple[str, ...], exact_datetimes: bool = False) -> Block:
    return encoder.encode(frame, list(columns), exact_datetimes=exact_datetimes)


def _group(blocks: list[Block], rows: list[np.ndarray | None], ids: np.ndarray, metric: DistanceMetric,
           backend: str) -> tuple[Block | None, Any, np.ndarray]:
    """One reference group: its rows (``rows[j]`` of ``blocks[j]``, or all), their ids, and its tree.
    With a tree the block is dropped (the tree holds the rows)."""
    taken = [b if r is None else b.take(r) for b, r in zip(blocks, rows, strict=True)]
    block = Block.stack(taken)  # a fresh copy: the tree may consume it
    del taken
    tree = reference_index(block, metric, backend, consume=True)
    return (None if tree is not None else block), tree, ids


def _step(query: Block, query_ids: np.ndarray | None, group: tuple[Block | None, Any, np.ndarray],
          state: tuple[np.ndarray, ...] | None, metric: DistanceMetric, k: int,
          exclude_self: bool, backend: str, ties: bool = False) -> tuple[np.ndarray, ...]:
    block, tree, ids = group
    if query_ids is None:  # no self to exclude: any ids
        query_ids = np.zeros(query.n_rows, dtype=np.int64)
    if ids.size == 0:
        if state is not None:
            return state
        empty = (np.full((query.n_rows, k), np.inf), np.full((query.n_rows, k), np.inf),
                 np.full((query.n_rows, k), -1, dtype=np.int64))
        return (*empty, np.zeros(query.n_rows, dtype=np.int64)) if ties else empty
    return kneighbors_step(query, block, metric, k, query_ids=query_ids, reference_ids=ids,
                           exclude_self=exclude_self, start=state, index=tree, backend=backend, ties=ties)


def _groups(lengths: Sequence[int], max_rows: int) -> list[list[int]]:
    """Consecutive runs of partitions of at most ``max_rows`` rows (at least one partition each)."""
    groups: list[list[int]] = []
    size = 0
    for j, n in enumerate(lengths):
        if groups and size + int(n) <= max_rows:
            groups[-1].append(j)
            size += int(n)
        else:
            groups.append([j])
            size = int(n)
    return groups


def _no_columns(n_query: int, n_reference: int, metric: DistanceMetric, k: int, exclude_self: bool
                ) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest of ``n_reference`` rows to each of ``n_query`` rows over no column, as
    :func:`~synthguard.engine.neighbors.engine.kneighbors` finds them in one process: every distance
    is the distance of two empty rows, ties go to the lower index (row ``i`` itself skipped with
    ``exclude_self``), missing slots hold ``inf`` and ``-1``. Computed on the driver: nothing to read
    from the partitions.
    """
    from ..engine.neighbors.engine import kneighbors

    empty = Block(np.zeros((1, 0)), np.zeros((1, 0), dtype=np.int64), (), ())
    dist = float(kneighbors(empty, empty, metric, 1).distances[0, 0])  # the same metric's finish
    d = np.full((n_query, k), np.inf)
    idx = np.full((n_query, k), -1, dtype=np.int64)
    kk = min(k, n_reference - (1 if exclude_self else 0))
    if kk > 0 and n_query:
        j = np.arange(kk, dtype=np.int64)
        d[:, :kk] = dist
        if exclude_self:  # row i of the query is row i of the reference
            idx[:, :kk] = j[None, :] + (j[None, :] >= np.arange(n_query, dtype=np.int64)[:, None])
        else:
            idx[:, :kk] = j
    return d, idx


def kneighbors_distributed(dt: DistTables, query: str | Sequence[str | Block], reference: str,
                           columns: Sequence[str], metric: DistanceMetric, k: int, *, backend: str = "auto",
                           reference_rows: np.ndarray | None = None,
                           tree_bytes: int | None = None, encoder: Any = None,
                           exact_datetimes: bool = False, query_block: Block | None = None,
                           ties: bool = False) -> tuple[np.ndarray, ...]:
    """Exact ``k`` nearest ``reference`` rows of every ``query`` row, ``(distances, indices)`` of shape
    ``(n_query, k)`` in the query's global (canonical) order, with global reference indices
    (positions in ``reference_rows`` when given: distinct canonical positions in any order, ties
    by the lower index into that array).

    ``query`` may also be a sequence of sources, each a role (every row, in canonical order) or a
    :class:`Block` of the driver (encoded rows, e.g. a sample of queries: one query block on the
    cluster); their rows are stacked in the order given. ``query == reference`` (a role, and no
    ``reference_rows``) excludes each row itself, as ``kneighbors(..., exclude_self=True)`` does.
    ``encoder`` (a future of an encoder; default the tables' own) and ``exact_datetimes`` encode the
    partitions (datetimes in exact seconds, see :meth:`~synthguard.data.encoding.Encoder.encode`).
    ``query_block``: encoded rows of the caller searched instead of ``query`` (sources of
    :data:`QUERY_ROWS` rows each; no self excluded), their results in their order.
    ``ties``: a third array, per query row the number of reference rows at its nearest distance
    (as :func:`~synthguard.engine.neighbors.nearest_ties` counts them; not when excluding self).
    """
    from dask import delayed
    from distributed import wait

    client = dt.client
    cols = tuple(columns)
    backend = _resolve(backend)
    ref = dt.get(reference)
    if query_block is not None:  # the caller's rows, in chunks: a source each
        n_q = query_block.n_rows
        sources: list[Any] = [query_block.take(np.arange(a, min(a + QUERY_ROWS, n_q), dtype=np.int64))
                              for a in range(0, n_q, QUERY_ROWS)]
    else:
        sources = [query] if isinstance(query, str) else list(query)
    exclude = (isinstance(query, str) and query == reference and reference_rows is None
               and query_block is None)
    ref_pos = dt.positions_array(reference)  # canonical positions of the rows of each sorted partition
    local_rows: list[np.ndarray | None] = [None] * len(ref.parts)
    ids = ref_pos
    if reference_rows is not None:  # global positions -> rows of each partition, ids = index among them
        asked = np.asarray(reference_rows, dtype=np.int64)
        if asked.size > 1 and not (asked[1:] > asked[:-1]).all():  # any order: ids = index in it
            by_pos = np.argsort(asked, kind="stable")
            rows = asked[by_pos]
        else:
            rows = np.unique(asked)
            by_pos = np.arange(rows.size, dtype=np.int64)
        ids, local_rows = [], []
        for pos in ref_pos:
            at = np.searchsorted(rows, pos)
            hit = at < rows.size
            hit[hit] = rows[at[hit]] == pos[hit]
            sel = np.flatnonzero(hit)
            got = by_pos[at[sel]].astype(np.int64)
            inc = np.argsort(got, kind="stable")  # a partition's rows by increasing id
            local_rows.append(sel[inc])
            ids.append(got[inc])
    if not cols:  # no columns: every distance is the same, ties by the lower index (on the driver)
        n_query = (query_block.n_rows if query_block is not None else
                   sum(dt.get(src).n_rows if isinstance(src, str) else src.n_rows for src in sources))
        n_ref = sum(len(i) for i in ids)
        got = _no_columns(n_query, n_ref, metric, k, exclude)
        # every row at the one distance (not with exclude: kneighbors_step refuses that too)
        return (*got, np.full(n_query, 0 if exclude else n_ref, dtype=np.int64)) if ties else got
    n_cols = max(1, len(cols))
    tree_bytes = TREE_BYTES if tree_bytes is None else int(tree_bytes)
    max_rows = max(1, tree_bytes // (8 * n_cols)) if backend == "numba" else 1
    groups = _groups([len(i) for i in ids], max_rows)

    t0 = time.perf_counter()
    encode = delayed(_encode, pure=True)
    enc = dt.encoder_future if encoder is None else encoder
    q_blocks, q_pos, start = [], [], 0  # query blocks on the cluster; global (stacked) row of each row
    for src in sources:
        if isinstance(src, str):
            qt = dt.get(src)
            q_blocks += client.compute([encode(enc, p, cols, exact_datetimes) for p in qt.parts])
            q_pos += [start + p for p in (ref_pos if src == reference else dt.positions_array(src))]
            start += qt.n_rows
        else:
            q_blocks.append(client.scatter(src, hash=False))  # a few rows of the driver, once
            q_pos.append(start + np.arange(src.n_rows, dtype=np.int64))
            start += src.n_rows
    q_ids = client.scatter(q_pos, hash=False) if exclude else [None] * len(q_pos)  # 8 bytes a row, once
    states: list[Any] = [None] * len(q_blocks)
    for members in groups:
        blocks = [encode(enc, ref.parts[j], cols, exact_datetimes) for j in members]
        group_ids = client.scatter(np.concatenate([ids[j] for j in members]), hash=False)
        group = client.compute(delayed(_group, pure=True)(blocks, [local_rows[j] for j in members], group_ids,
                                                          metric, backend))
        states = [client.submit(_step, q_blocks[i], q_ids[i], group, states[i], metric, k, exclude, backend,
                                ties, pure=False) for i in range(len(q_blocks))]
        wait(states)
        del group  # the tree is released once the wave is done
        _LOG.info("%s -> %s: tree %d/%d (%d rows) searched by %d query partitions, %.1f s since start",
                  query, reference, len([g for g in groups if g[0] <= members[0]]), len(groups),
                  sum(len(ids[j]) for j in members), len(q_blocks), time.perf_counter() - t0)
    del q_blocks
    out = client.gather(states) if states else []
    if not out:
        none = (np.zeros((0, k)), np.zeros((0, k), dtype=np.int64))
        return (*none, np.zeros(0, dtype=np.int64)) if ties else none
    where = np.concatenate(q_pos)  # partition rows -> global positions
    d = np.empty((where.size, k))
    idx = np.empty((where.size, k), dtype=np.int64)
    d[where] = np.concatenate([o[0] for o in out], axis=0)
    idx[where] = np.concatenate([o[2] for o in out], axis=0)
    if not ties:
        return d, idx
    counts = np.empty(where.size, dtype=np.int64)
    counts[where] = np.concatenate([o[3] for o in out])
    return d, idx, counts
