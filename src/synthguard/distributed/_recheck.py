"""The checks one process runs again when it prepares changed tables (the coarsen-and-retest's
coarsened tables, :func:`~._tables.with_columns`), asked of the partitions without gathering a
table: the same decisions, warnings and errors as :func:`synthguard.data.tables.prepare_tables`.

* **Labels mixing numbers and strings** (``1`` in one place, ``"1"`` in another): one process
  decides on the first :data:`~synthguard.data.tables.LABEL_SAMPLE` non-missing labels of each
  table *in the order it holds the rows*, and the changed tables it prepares again are in the
  canonical order of the run's tables, not in input order: a label beyond the first 1,000 at
  loading may be among them now. Each partition sends, per column, the canonical positions its
  rows had (the order one process reads them in) of its first non-missing labels and where each
  kind of label first occurs (:func:`first_labels`); the driver keeps each table's first 1,000
  (:func:`kinds_in_order`).
* **The control check** (:func:`synthguard.data.quirks.check_control`): a coarsened column can
  make rows equal that differed, so a control may hold the same rows as the original (an error
  in one process, the re-test's entry then states it). Each partition sends the 8-byte hash of
  each row on :func:`~synthguard.data.quirks.control_columns` (computed beside the canonical
  order's content hashes, on the same dtypes); :func:`check_control_of` runs one process's check
  on them (:func:`~synthguard.data.quirks.check_control_hashes`: order-free).

The other checks of a preparation cannot change anything for a table changed by
:func:`~._tables.with_columns` (see its docstring).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..data.quirks import check_control_hashes
from ..data.tables import label_kind_of_each

__all__ = ["FirstLabels", "first_labels", "kinds_in_order", "check_control_of"]

#: per column: the sorted canonical positions of a partition's first non-missing labels (at most
#: the sample's size), and the smallest position of each kind of label among them
FirstLabels = dict[str, tuple[np.ndarray, dict[str, int]]]


def first_labels(frame: pd.DataFrame, ranks: np.ndarray, columns: Sequence[str], limit: int
                 ) -> FirstLabels:
    """Per column of ``columns``: the positions (``ranks``: each row's position in the order one
    process reads the table, here the canonical order of the run's tables) of the first ``limit``
    non-missing labels of ``frame`` in that order, and the first position of each kind of label
    among them.

    Examples
    --------
    >>> f = pd.DataFrame({"k": [1, "a", None, 2]})
    >>> pos, first = first_labels(f, np.array([7, 3, 0, 5]), ["k"], 2)["k"]
    >>> pos.tolist(), first
    ([3, 5], {'other': 3, 'num': 5})
    """
    ranks = np.asarray(ranks, dtype=np.int64)
    order = np.argsort(ranks, kind="stable")
    out: FirstLabels = {}
    for c in columns:  # loop over columns; at most ``limit`` labels each
        values = frame[c].iloc[order]
        at = np.flatnonzero(values.notna().to_numpy())[:limit]
        pos = ranks[order[at]]
        kinds = label_kind_of_each(values.iloc[at])
        first: dict[str, int] = {}
        for kind in ("other", "num"):
            hit = np.flatnonzero(kinds == kind)
            if hit.size:
                first[kind] = int(pos[hit[0]])
        out[c] = (pos, first)
    return out


def kinds_in_order(parts: Sequence[FirstLabels], columns: Sequence[str], limit: int
                   ) -> dict[str, set[str]]:
    """Per column: the kinds of the first ``limit`` non-missing labels of a table, from its
    partitions' :func:`first_labels` (the table's first labels are among its partitions' first)."""
    out: dict[str, set[str]] = {}
    for c in columns:
        pos = np.sort(np.concatenate([p[c][0] for p in parts])) if parts else np.zeros(0, np.int64)
        cut = pos[limit - 1] if pos.size >= limit else np.iinfo(np.int64).max
        out[c] = {k for p in parts for k, at in p[c][1].items() if at <= cut}
    return out


def check_control_of(hashes: Mapping[str, np.ndarray], labels: Mapping[str, str],
                     strict: bool = True) -> list[str]:
    """:func:`~synthguard.data.quirks.check_control` of partitioned tables from their rows'
    hashes on the control columns (``{role: hashes}``, any order): one process's warnings, or
    its :class:`~synthguard.errors.InputError` (``strict``)."""
    if hashes.get("control") is None:
        return []
    return check_control_hashes(hashes["original"], hashes["control"], hashes.get("synthetic"),
                                labels, strict=strict)
