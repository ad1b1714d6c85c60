"""The coarsen-and-retest on a cluster: the values that decide a coarsening asked of the Dask
backend (exact quantiles of the encoded values, counts per category, key groups; the
unique-value excess is :func:`~synthguard.data.coarsening.unique_value_excesses` asked of the Dask
backend, as one process asks its own), and the coarsened tables built on the cluster
(:func:`~._tables.with_columns`), never gathering a table: the same coarsenings, levels and
report entries as one process (:class:`~synthguard.data.coarsening.FrameValues`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..data.coarsening import (
    REAL_ROLES,
    ColumnCoarsening,
    distinct_values_of,
    unique_value_excesses,
)
from ._backend import DaskBackend
from ._tables import DistTables, with_columns

__all__ = ["ClusterValues", "cluster_values"]


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

    def distinct_numbers(self, column: str, cap: int) -> int:
        return self.backend.distinct_numbers([column], self.real, cap)[column]

    def quantiles(self, column: str, q: np.ndarray) -> np.ndarray:
        return self.backend.encoded_quantiles([column], self.real, q)[column]

    def category_counts(self, column: str) -> pd.Series:
        return self.backend.text_counts(column, self.real)

    def unique_value_excesses(self, columns: Sequence[str]) -> dict[str, float]:
        return unique_value_excesses(self.backend, columns, has_control=self.dt.has_control)

    def distinct_real(self, columns: Sequence[str]) -> dict[str, int]:
        return distinct_values_of(self.backend, columns, self.real)

    def coarsened(self, coarsening: ColumnCoarsening, schema: Any) -> DistTables:
        return with_columns(self.dt, {coarsening.column: coarsening.apply}, schema)


def cluster_values(dt: DistTables) -> ClusterValues:
    """The :class:`ClusterValues` of ``dt`` (the ``values`` factory a cluster run hands to
    :func:`~synthguard.run.actions.coarsen_retest`)."""
    return ClusterValues(dt)
