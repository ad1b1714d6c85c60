"""The coarsen-and-retest on a cluster: the values that decide a coarsening asked of the Dask
backend (exact quantiles of the encoded values, counts per category, group counts), and the
coarsened tables built on the cluster (:func:`~._tables.with_columns`), never gathering a table:
the same coarsenings, levels and report entries as one process
(:class:`~synthguard.data.coarsening.FrameValues`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..data.coarsening import REAL_ROLES, ColumnCoarsening
from ..data.encoding import Encoder
from ._backend import DaskBackend
from ._tables import DistTables, set_hashes, with_columns

__all__ = ["ClusterValues", "cluster_values"]


def _missing(frame: pd.DataFrame, positions: Any, columns: tuple[str, ...]) -> np.ndarray:
    """Missing values of each of ``columns`` in one partition."""
    return frame[list(columns)].isna().sum().to_numpy(dtype=np.int64)


def _value_keys(encoder: Encoder, frame: pd.DataFrame, positions: Any, sets: tuple[tuple[str, ...], ...],
                role: str) -> pd.DataFrame:
    """One partition's key of every row on each one-column set (``s``: the set, ``h1, h2``) and
    which role the row is of (one indicator column per role)."""
    keys = set_hashes(encoder, frame, sets)
    h = np.concatenate(keys, axis=0) if keys else np.zeros((0, 2), dtype=np.uint64)
    n = len(frame)
    out = {"s": np.repeat(np.arange(len(sets), dtype=np.int32), n), "h1": h[:, 0], "h2": h[:, 1]}
    for r in ("original", "control", "synthetic"):
        out[r] = np.full(h.shape[0], int(r == role), dtype=np.int64)
    return pd.DataFrame(out)


def _hits(groups: pd.DataFrame, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per column (set ``s`` of ``k``), the training and control records of one output partition of
    the group-by whose value no other real record holds and the release holds."""
    o = groups["original"].to_numpy(np.int64)
    c = groups["control"].to_numpy(np.int64)
    hit = (o + c == 1) & (groups["synthetic"].to_numpy(np.int64) > 0)
    s = groups["s"].to_numpy(np.int64)[hit]
    return (np.bincount(s, weights=o[hit], minlength=k).astype(np.int64),
            np.bincount(s, weights=c[hit], minlength=k).astype(np.int64))


class ClusterValues:
    """:class:`~synthguard.data.coarsening.ColumnValues` of partitioned tables.

    Parameters
    ----------
    dt : DistTables
        The run's tables (or the release without the rows the drop-and-retest dropped).
    """

    def __init__(self, dt: DistTables) -> None:
        self.dt = dt
        self.backend = DaskBackend(dt)
        self.real = tuple(r for r in REAL_ROLES if r in dt.tables)
        self._missed: dict[str, dict[str, int]] | None = None

    def distinct_numbers(self, column: str, cap: int) -> int:
        return self.backend.distinct_numbers([column], self.real, cap)[column]

    def quantiles(self, column: str, q: np.ndarray) -> np.ndarray:
        return self.backend.encoded_quantiles([column], self.real, q)[column]

    def category_counts(self, column: str) -> pd.Series:
        return self.backend.text_counts(column, self.real)

    def _missing(self, column: str, roles: tuple[str, ...]) -> dict[str, int]:
        """Missing values of ``column`` per role (every column's counted in one pass, once)."""
        if self._missed is None:
            cols = tuple(self.dt.schema.names)
            tasks = {r: self.dt.map(r, _missing, cols, with_encoder=False, ordered=False)
                     for r in self.dt.roles}
            got = iter(self.dt.compute([t for r in self.dt.roles for t in tasks[r]]))
            self._missed = {}
            for r in self.dt.roles:
                total = np.sum([next(got) for _ in tasks[r]], axis=0, dtype=np.int64)
                self._missed[r] = dict(zip(cols, total.tolist(), strict=True))
        return {r: self._missed[r][column] for r in roles}

    def unique_value_excesses(self, columns: Sequence[str]) -> dict[str, float]:
        """Every column's at once, from one group-by of the three tables' values (a key per row
        and column, :func:`~._tables.set_hashes`, and the rows of each role holding it): a training
        or control record is a hit when no other real record holds its value and the release holds
        it; the group of missing values, which the keys count as a value, is taken out."""
        cols = tuple(dict.fromkeys(columns))
        if not self.dt.has_control or not cols:
            return dict.fromkeys(cols, 0.0)
        import dask.dataframe as dd
        from dask import delayed

        roles = ("original", "control", "synthetic")
        sets = tuple((c,) for c in cols)
        (shared,) = self.dt.client.scatter([sets], broadcast=True, hash=False)  # once, not per task
        meta = pd.DataFrame({"s": pd.Series([], dtype="int32"), "h1": pd.Series([], dtype="uint64"),
                             "h2": pd.Series([], dtype="uint64"),
                             **{r: pd.Series([], dtype="int64") for r in roles}})
        keys = dd.concat([dd.from_delayed(self.dt.map(r, _value_keys, shared, r, ordered=False),
                                          meta=meta, verify_meta=False) for r in roles])
        split = max(self.dt.split_out(r) for r in roles)
        groups = keys.groupby(["s", "h1", "h2"])[list(roles)].sum(split_out=split)
        got = self.dt.compute([delayed(_hits, pure=True)(p, len(cols))
                               for p in groups.reset_index().to_delayed()])
        ho, hc = (np.sum([g[j] for g in got], axis=0, dtype=np.int64) for j in (0, 1))
        no, nc = self.dt.get("original").n_rows, self.dt.get("control").n_rows
        out = {}
        for j, c in enumerate(cols):  # loop over columns
            miss = self._missing(c, roles)
            o, k = int(ho[j]), int(hc[j])
            if miss["original"] + miss["control"] == 1 and miss["synthetic"] > 0:
                o -= miss["original"]
                k -= miss["control"]
            out[c] = float(np.float64(o) / np.float64(no) - np.float64(k) / np.float64(nc))
        return out

    def distinct_real(self, column: str) -> int:
        groups = self.backend.key_groups([column], self.real)
        (n,) = groups.sums(lambda f: pd.Series(np.ones(len(f), dtype=np.int64)))
        miss = self._missing(column, self.real)
        return int(n) - int(sum(miss.values()) > 0)

    def coarsened(self, coarsening: ColumnCoarsening, schema: Any) -> DistTables:
        return with_columns(self.dt, {coarsening.column: coarsening.apply}, schema)


def cluster_values(dt: DistTables) -> ClusterValues:
    """The :class:`ClusterValues` of ``dt`` (the ``values`` factory a cluster run hands to
    :func:`~synthguard.run.actions.coarsen_retest`)."""
    return ClusterValues(dt)
