"""The neighbour engine over partitions: a map over (query partition x reference partition) and a
top-k merge per query.

Each reference partition is encoded and its box tree built ONCE (a task whose result every pair task
of that partition shares); each pair task runs the single-process :func:`~synthguard.neighbors.kneighbors`
on one query partition against one reference partition and shifts the indices by the partition's
offset; a merge task per query partition keeps the ``k`` smallest ``(distance, global reference index)``
pairs. The engine breaks ties by the lower reference index, so the merged result equals the
single-process search bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..encoding import Encoder
from ..neighbors import DistanceMetric, kneighbors
from ..neighbors.engine import reference_index
from ._tables import DistTables

_NO_INDEX = np.iinfo(np.int64).max


def _reference(encoder: Encoder, frame: Any, offset: int, columns: tuple[str, ...], metric: DistanceMetric,
               backend: str, rows: np.ndarray | None) -> tuple[Any, Any]:
    block = encoder.encode(frame, list(columns))
    if rows is not None:
        block = block.take(rows)
    return block, reference_index(block, metric, backend)


def _query(encoder: Encoder, frame: Any, offset: int, columns: tuple[str, ...]) -> Any:
    return encoder.encode(frame, list(columns))


def _pair(query: Any, reference: tuple[Any, Any], positions: Any, metric: DistanceMetric, k: int,
          exclude_self: bool, backend: str) -> tuple[np.ndarray, np.ndarray]:
    # TEMP knn patch: local reference indices -> global (canonical) indices through ``positions``
    block, tree = reference
    nb = kneighbors(query, block, metric, k, exclude_self=exclude_self, backend=backend, index=tree)
    pos = np.asarray(positions, dtype=np.int64)
    return nb.distances, np.where(nb.indices >= 0, pos[np.maximum(nb.indices, 0)], -1)


def merge_topk(k: int, *results: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest of several partial results per query: by distance, then global index."""
    d = np.concatenate([r[0] for r in results], axis=1)
    i = np.concatenate([r[1] for r in results], axis=1)
    key = np.where(i < 0, _NO_INDEX, i)
    order = np.lexsort((key, d), axis=1)[:, :k]
    return np.take_along_axis(d, order, axis=1), np.take_along_axis(i, order, axis=1)


def kneighbors_distributed(dt: DistTables, query: str, reference: str, columns: Sequence[str],
                           metric: DistanceMetric, k: int, *, backend: str = "auto",
                           reference_rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Exact ``k`` nearest ``reference`` rows of every ``query`` row, ``(distances, indices)`` of shape
    ``(n_query, k)`` with global reference indices (positions in ``reference_rows`` when given).

    ``query == reference`` (and no ``reference_rows``) excludes each row itself, as
    ``kneighbors(..., exclude_self=True)`` does.
    """
    from dask import delayed

    cols = tuple(columns)
    ref = dt.get(reference)
    exclude = query == reference and reference_rows is None
    # TEMP knn patch: canonical positions instead of partition offsets
    local_rows: list[np.ndarray | None] = [None] * len(ref.parts)
    maps: list[Any] = ref.position_args()
    if reference_rows is not None:  # sorted canonical positions -> per partition local positions
        rows = np.sort(np.asarray(reference_rows, dtype=np.int64))
        ref_pos = dt.positions_array(reference)
        part = dt.partition_of(reference, rows)
        local_rows, maps = [], []
        for j in range(len(ref.parts)):
            mine = rows[part == j]
            local_rows.append(np.searchsorted(ref_pos[j], mine))
            maps.append(np.searchsorted(rows, mine))
    refs = [delayed(_reference, pure=True)(dt.encoder_future, p, 0, cols, metric, backend, local_rows[j])
            for j, p in enumerate(ref.parts)]
    queries = dt.map(query, _query, cols)
    merged = []
    for i, qb in enumerate(queries):
        pairs = [delayed(_pair, pure=True)(qb, refs[j], maps[j], metric, k,
                                           bool(exclude and i == j), backend)
                 for j in range(len(refs))]
        merged.append(delayed(merge_topk, pure=True)(k, *pairs))
    out = dt.compute(merged)
    n_q = dt.get(query).n_rows
    d = np.zeros((n_q, k))
    idx = np.zeros((n_q, k), dtype=np.int64)
    for o, pos in zip(out, dt.positions_array(query), strict=True):
        d[pos], idx[pos] = o[0], o[1]
    return d, idx
