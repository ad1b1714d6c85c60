"""The label-free distance and the release neighbours it gives, searched once per run.

Tests that compare training records with control records measure distances on a scale neither side
sets alone: Gower (clip, normalise) on every tabular column, numeric ranges from the original and
the control together. ``close_neighbours`` (each record's nearest release row) and the
real-to-release evidence of ``dcr`` and ``nndr`` (each record's two nearest release rows) ask the
same search; :func:`release_neighbours` answers both from one k=2 search per real role, memoised
for the run (the nearest row is the first column: the engine's search is exact, ties to the lower
row).
"""

from __future__ import annotations

import numpy as np

from ...engine.neighbors import DistanceMetric, gower
from ...registry import Context

__all__ = ["REAL", "labelfree_setup", "release_neighbours"]

#: the real roles, pooled in this order (training records first, then control records)
REAL = ("original", "control")


def labelfree_setup(ctx: Context) -> tuple[list[str], DistanceMetric]:
    """The columns (every tabular column) and the label-free Gower metric, memoised per run.

    Examples
    --------
    >>> import pandas as pd
    >>> o = pd.DataFrame({"x": [0.0, 1.0], "c": ["a", "b"]})
    >>> ctx = Context.from_frames(o, o, o.assign(x=[0.0, 3.0]))
    >>> cols, metric = labelfree_setup(ctx)
    >>> cols
    ['c', 'x']
    """
    def compute() -> tuple[list[str], DistanceMetric]:
        cols = ctx.tables.schema.tabular_columns()
        return cols, gower(ctx.data.ranges(cols, REAL), clip=True, normalise=True)

    return ctx.memo("privacy.labelfree.setup", compute)


def release_neighbours(ctx: Context, role: str) -> tuple[np.ndarray, np.ndarray]:
    """The two nearest release rows of every ``role`` (original or control) row under
    :func:`labelfree_setup`'s metric: ``(distances, release rows)``, each rows x 2, memoised per
    run. The release must hold at least two rows."""
    cols, metric = labelfree_setup(ctx)
    return ctx.memo(f"distance.labelfree.knn2.{role}",
                    lambda: ctx.data.kneighbors(role, "synthetic", cols, metric, 2))
