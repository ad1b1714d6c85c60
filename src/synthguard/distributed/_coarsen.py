"""The coarsen-and-retest on a cluster: the values that decide a coarsening asked of the Dask
backend (exact quantiles of the encoded values, counts per category, group counts), and the
coarsened tables built on the cluster (:func:`~._tables.with_columns`), never gathering a table:
the same coarsenings, levels and report entries as one process
(:class:`~synthguard.run.actions.FrameValues`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..run.actions import REAL_ROLES, ColumnCoarsening
from ._backend import DaskBackend
from ._tables import DistTables, with_columns

__all__ = ["ClusterValues", "cluster_values"]


def _missing(frame: pd.DataFrame, positions: Any, columns: tuple[str, ...]) -> np.ndarray:
    """Missing values of each of ``columns`` in one partition."""
    return frame[list(columns)].isna().sum().to_numpy(dtype=np.int64)


class ClusterValues:
    """:class:`~synthguard.run.actions.ColumnValues` of partitioned tables.

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

    def unique_value_excess(self, column: str) -> float:
        """From the value groups of the three tables (:meth:`DaskBackend.key_groups`): a training
        or control record is a hit when no other real record holds its value and the release holds
        it; the group of missing values, which the key groups count as a value, is taken out."""
        if not self.dt.has_control:
            return 0.0
        roles = ("original", "control", "synthetic")
        groups = self.backend.key_groups([column], roles)

        def hits(role: str) -> Any:
            return lambda f: f[f"n_{role}"].where(
                (f["n_original"] + f["n_control"] == 1) & (f["n_synthetic"] > 0), 0)

        ho, hc = (int(v) for v in groups.sums(hits("original"), hits("control")))
        miss = self._missing(column, roles)
        if miss["original"] + miss["control"] == 1 and miss["synthetic"] > 0:
            ho -= miss["original"]
            hc -= miss["control"]
        no, nc = self.dt.get("original").n_rows, self.dt.get("control").n_rows
        return float(np.float64(ho) / np.float64(no) - np.float64(hc) / np.float64(nc))

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
