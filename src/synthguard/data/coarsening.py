"""Coarsening a column label-free, the same way for every table and every partition: the mapping
(:class:`ColumnCoarsening`: bins of a numeric or datetime column, the top categories of a
categorical one), how it is planned from the pooled real values a :class:`ColumnValues` provider
answers for (:class:`FrameValues` on pandas tables of one process; on a cluster
:class:`synthguard.distributed._coarsen.ClusterValues`), and how much of a column's values are
unique beyond chance. The coarsen-and-retest that uses them is :mod:`synthguard.run.actions`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd

__all__ = ["BINS", "TOP", "REAL_ROLES", "category_text", "pooled_numbers", "text_counts_of", "ColumnCoarsening", "ColumnValues", "FrameValues", "coarsen_column",
           "plan_coarsening", "EXCESS_ROLES", "KeyGroupCounts", "distinct_values", "distinct_values_of",
           "unique_value_excesses"]

def category_text(value: object) -> str:
    """A category's label: its text, 1 and 1.0 one category (as the encoder counts them).

    Examples
    --------
    >>> [category_text(v) for v in (1, 1.0, np.float64(2.0), "1.0", 2.5)]
    ['1', '1', '2', '1.0', '2.5']
    """
    from .encoding import _key

    return str(_key(value))


def pooled_numbers(columns: Sequence[pd.Series]) -> np.ndarray:
    """The non-missing values of ``columns`` pooled, as the encoder reads them
    (:func:`~synthguard.data.schema.numeric_view`: datetimes as days): what bin edges are cut from.

    Examples
    --------
    >>> pooled_numbers([pd.Series([1.0, None]), pd.Series([3.0])]).tolist()
    [1.0, 3.0]
    """
    from .schema import numeric_view

    pooled = np.concatenate([numeric_view(s) for s in columns])
    return pooled[~np.isnan(pooled)]


def text_counts_of(columns: Sequence[pd.Series]) -> pd.Series:
    """:meth:`Backend.text_counts` of the values of ``columns`` pooled (a whole table's, or one
    partition's: the partitions' counts add up, ``pd.concat(...).groupby(level=0).sum()``).

    Examples
    --------
    >>> text_counts_of([pd.Series(["b", 1, None]), pd.Series(["1", "b"], dtype=object)]).to_dict()
    {'1': 2, 'b': 2}
    """
    pooled = pd.concat([s.astype(object) for s in columns], ignore_index=True).dropna()
    counts = pooled.value_counts()  # per distinct value, then by its text (str once per value)
    out = counts.groupby(np.array([category_text(v) for v in counts.index], dtype=object)).sum()
    return out.astype(np.int64)


#: Bins of a numeric or datetime column, and categories kept of a categorical one, by default.
BINS = 10
TOP = 10


def _fmt(x: float) -> str:
    return f"{x:.6g}"


#: The real roles whose rows, pooled, decide a coarsening (label-free).
REAL_ROLES = ("original", "control")


@dataclass(frozen=True, eq=False)
class ColumnCoarsening:
    """How one column is coarsened: the same mapping for every table and every partition.

    ``kind`` is ``"bins"`` (numerical and datetime columns: ``searchsorted(inner, value, "right")``
    picks the label, missing stays missing) or ``"top"`` (categorical columns: a value whose text is
    in ``keep`` keeps its text, the others become ``other``, missing stays missing). ``how`` says
    it in words (the report's ``coarsening``). :meth:`apply` maps a column's values (a whole
    table's or one partition's: the mapping of a row depends on that row alone).
    """

    column: str
    kind: str
    how: str
    inner: np.ndarray | None = None
    labels: tuple[str, ...] = ()
    keep: frozenset[str] = frozenset()
    other: str = "other"

    def apply(self, series: pd.Series) -> pd.Series:
        """``series`` coarsened: object labels, missing values missing, the same index and name
        (:attr:`column`).

        Examples
        --------
        >>> c = ColumnCoarsening("x", "bins", "", np.array([2.0]), ("under 2", "2 and over"))
        >>> c.apply(pd.Series([1.0, None, 3.0])).tolist()
        ['under 2', None, '2 and over']
        """
        from ..data.schema import numeric_view

        if self.kind == "bins":
            assert self.inner is not None
            lab = np.asarray(self.labels, dtype=object)
            x = numeric_view(series)
            idx = np.searchsorted(self.inner, x, side="right")
            vals = lab[np.minimum(idx, lab.size - 1)].astype(object)
            vals[np.isnan(x)] = None
            return pd.Series(vals, index=series.index, name=self.column, dtype=object)
        codes, uniq = pd.factorize(series.astype(object), use_na_sentinel=True)
        # each distinct value's label once: kept as its text, or merged into ``other``
        texts = [category_text(v) for v in uniq]
        lab = np.array([t if t in self.keep else self.other for t in texts] + [np.nan], dtype=object)
        vals = lab[codes]  # code -1 (missing) picks the trailing NaN
        return pd.Series(vals, index=series.index, name=self.column, dtype=object)


@runtime_checkable
class ColumnValues(Protocol):
    """What the coarsen-and-retest asks of a run's tables: the values of the real rows pooled (to
    decide a coarsening label-free), how a column's values single records out, and the tables with
    a column coarsened. :class:`FrameValues` answers on the pandas tables of one process; a cluster
    run answers on its partitions (:class:`synthguard.distributed._coarsen.ClusterValues`), without
    gathering a table: the same answers, so one code path (:func:`coarsen_retest`)."""

    def distinct_numbers(self, column: str, cap: int) -> int:
        """Distinct non-missing values (:func:`~synthguard.data.schema.numeric_view`) of a
        numerical or datetime ``column`` over the real rows pooled, or ``cap`` when there are at
        least ``cap``."""

    def quantiles(self, column: str, q: np.ndarray) -> np.ndarray:
        """``np.quantile`` of those values (missing skipped; empty when none)."""

    def category_counts(self, column: str) -> pd.Series:
        """Real rows pooled per text (``str``) of their non-missing value of ``column``, indexed
        by the text in sorted order."""

    def unique_value_excesses(self, columns: Sequence[str]) -> dict[str, float]:
        """:func:`unique_value_excesses` of ``columns``: the one count, asked of the run's
        backend."""

    def distinct_real(self, columns: Sequence[str]) -> dict[str, int]:
        """Distinct non-missing values of each of ``columns`` over the real rows pooled
        (:func:`distinct_values_of`, asked of the run's backend in one round)."""

    def coarsened(self, coarsening: ColumnCoarsening, schema: Any) -> Any:
        """The tables with ``coarsening`` applied to its column in every table, typed by
        ``schema`` and in canonical order, as a new evaluation of them reads them."""


class FrameValues:
    """:class:`ColumnValues` of pandas frames (``{role: frame}``; one process's tables).

    Parameters
    ----------
    frames : mapping
        ``{role: frame}`` (``None`` for a missing role).
    backend : KeyGroupCounts, optional
        The one-process :class:`~synthguard.engine.backend.Backend` over the same tables
        (:class:`~synthguard.engine.backend.LocalBackend`): what
        :meth:`unique_value_excesses` asks; needed for it when there is a control table.
    labels : mapping, optional
        ``{role: label}`` of the tables (their files) for the messages of :meth:`coarsened`
        (default ``"<role> DataFrame"``).
    """

    def __init__(self, frames: Mapping[str, pd.DataFrame | None],
                 backend: KeyGroupCounts | None = None,
                 labels: Mapping[str, str] | None = None) -> None:
        self.frames = frames
        self.backend = backend
        self.labels = labels

    @classmethod
    def of_tables(cls, tables: Any, backend: KeyGroupCounts | None = None) -> FrameValues:
        """The values of one process's :class:`~synthguard.data.tables.Tables` (``backend``: a
        :class:`~synthguard.engine.backend.LocalBackend` over them), labelled as they are."""
        return cls({r: tables.get(r) for r in tables.roles}, backend, dict(tables.labels or {}))

    def _real(self, column: str) -> list[pd.Series]:
        return [self.frames[r][column] for r in REAL_ROLES if self.frames.get(r) is not None]

    def _numbers(self, column: str) -> np.ndarray:
        return pooled_numbers(self._real(column))

    def distinct_numbers(self, column: str, cap: int) -> int:
        return int(min(np.unique(self._numbers(column)).size, cap))

    def quantiles(self, column: str, q: np.ndarray) -> np.ndarray:
        pooled = self._numbers(column)
        return np.quantile(pooled, q) if pooled.size else np.zeros(0)

    def category_counts(self, column: str) -> pd.Series:
        return text_counts_of(self._real(column))

    def unique_value_excesses(self, columns: Sequence[str]) -> dict[str, float]:
        has_control = self.frames.get("control") is not None
        if has_control and self.backend is None:
            raise TypeError("FrameValues.unique_value_excesses asks a backend: build the values "
                            "with FrameValues.of_tables(tables, LocalBackend(...))")
        return unique_value_excesses(self.backend, columns, has_control=has_control)

    def distinct_real(self, columns: Sequence[str]) -> dict[str, int]:
        if self.backend is None:
            raise TypeError("FrameValues.distinct_real asks a backend: build the values "
                            "with FrameValues.of_tables(tables, LocalBackend(...))")
        return distinct_values_of(self.backend, columns,
                                  [r for r in REAL_ROLES if self.frames.get(r) is not None])

    def coarsened(self, coarsening: ColumnCoarsening, schema: Any) -> Any:
        """The tables prepared again with the column coarsened (:func:`prepare_tables`, in the
        order the frames hold their rows: its checks too; a control holding the original's or
        the release's rows once coarsened is its :class:`~synthguard.errors.InputError`). The
        identifiers are those of ``schema`` (the tables' own, decided on the rows they were typed
        from: a sampled run's on its whole tables), not decided again on these frames; the
        coarsened column is declared, so no identifier check could change it."""
        from ..data.tables import prepare_tables

        col = coarsening.column
        new = {r: f.assign(**{col: coarsening.apply(f[col])}) for r, f in self.frames.items()
               if f is not None}
        return prepare_tables(new["original"], new["synthetic"], new.get("control"), schema,
                              labels=self.labels, canonical_columns=True,
                              detect_identifiers=False).in_canonical_order()


def plan_coarsening(values: ColumnValues, column: str, sdtype: str, *, bins: int = BINS,
                    top: int = TOP) -> ColumnCoarsening | None:
    """How to coarsen ``column`` label-free, from the real rows pooled (``values``).

    Numerical and datetime columns: ``bins`` quantile bins, their edges the quantiles of the
    training and control values pooled; categorical ones: the ``top`` most frequent categories of
    the pooled real rows kept (ties by label), the rest ``"other"``. ``None`` when the coarsening
    would not change the column (fewer values than bins or categories).

    Examples
    --------
    >>> import pandas as pd
    >>> f = {"original": pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0]}),
    ...      "control": pd.DataFrame({"x": [5.0, 6.0, 7.0, 8.0]})}
    >>> plan_coarsening(FrameValues(f), "x", "numerical", bins=2).inner.tolist()
    [4.5]
    """
    if sdtype in ("numerical", "datetime"):
        if values.distinct_numbers(column, bins + 1) <= bins:
            return None
        edges = np.unique(values.quantiles(column, np.linspace(0.0, 1.0, bins + 1)))
        inner = edges[1:-1] + 0.0  # -0.0 an edge as 0.0: one label whoever computed the quantile
        if inner.size == 0:
            return None
        if sdtype == "datetime":
            def text(v: float) -> str:
                return str(pd.Timestamp(v * 86_400e9).date())
        else:
            text = _fmt
        labels = ([f"under {text(inner[0])}"]
                  + [f"{text(a)} to under {text(b)}" for a, b in zip(inner[:-1], inner[1:],
                                                                     strict=True)]
                  + [f"{text(inner[-1])} and over"])
        return ColumnCoarsening(column, "bins", f"{len(labels)} quantile bins (edges from the "
                                "training and control rows pooled)", inner, tuple(labels))
    counts = values.category_counts(column)
    if counts.size <= top:
        return None
    # the most frequent categories first; ties by label, so the choice never depends on row order
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    keep = frozenset(k for k, _ in ranked[:top])
    other = "other"
    while other in counts.index:
        other = f"({other})"
    return ColumnCoarsening(column, "top", f"the {top} most frequent categories of the training "
                            f"and control rows kept, the other {counts.size - top} merged into "
                            f"{other!r}", keep=keep, other=other)


def coarsen_column(frames: Mapping[str, pd.DataFrame], column: str, sdtype: str, *,
                   bins: int = BINS, top: int = TOP) -> tuple[dict[str, pd.Series], str] | None:
    """``column`` of every frame coarsened label-free, and the coarsening in words.

    Bins (``bins`` quantile bins for numerical and datetime columns) and vocabularies (the ``top``
    most frequent categories, the rest ``"other"``) come from the ``original`` and ``control``
    frames pooled (:func:`plan_coarsening`); the same mapping is applied to every frame. Missing
    values stay missing. ``None`` when the coarsening would not change the column (fewer values
    than bins or categories).

    Examples
    --------
    >>> import pandas as pd
    >>> f = {"original": pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0]}),
    ...      "control": pd.DataFrame({"x": [5.0, 6.0, 7.0, 8.0]}),
    ...      "synthetic": pd.DataFrame({"x": [2.5, 9.0]})}
    >>> out, how = coarsen_column(f, "x", "numerical", bins=2)
    >>> list(out["synthetic"])
    ['under 4.5', '4.5 and over']
    >>> how
    '2 quantile bins (edges from the training and control rows pooled)'
    """
    plan = plan_coarsening(FrameValues(frames), column, sdtype, bins=bins, top=top)
    if plan is None:
        return None
    return {r: plan.apply(f[column]) for r, f in frames.items() if f is not None}, plan.how


#: The roles whose key groups the unique-value excess counts: the real rows, then the release.
EXCESS_ROLES = ("original", "control", "synthetic")


class KeyGroupCounts(Protocol):
    """What :func:`unique_value_excesses` asks of a :class:`~synthguard.engine.backend.Backend`
    (one process's or a cluster's; named here, the backend module sits a layer up)."""

    def n_rows(self, role: str) -> int:
        """Rows of ``role``."""

    def key_groups(self, columns: Sequence[str], roles: Sequence[str]) -> Any:
        """Distinct value tuples of ``columns`` over ``roles``: ``n_<role>``, ``first_<role>``."""

    def key_groups_many(self, column_sets: Sequence[Sequence[str]], roles: Sequence[str]) -> Any:
        """:meth:`key_groups` of each of ``column_sets`` stacked, with a column ``set`` (the
        index of the column set): one round for them all."""

    def missing_counts(self, columns: Sequence[str], roles: Sequence[str]) -> dict[str, dict[str, int]]:
        """Missing values of each of ``columns`` per role of ``roles``."""


def _lone_in_release(groups: pd.DataFrame) -> pd.Series:
    """Per key group: one real (training or control) record holds its value, the release holds it."""
    return (groups["n_original"] + groups["n_control"] == 1) & (groups["n_synthetic"] > 0)


def _lone_hits(groups: pd.DataFrame) -> pd.DataFrame:
    """The key groups of one real record that the release holds: their column set and the
    training and control records holding them (the hits, counted per set)."""
    return groups.loc[_lone_in_release(groups).to_numpy(), ["set", "n_original", "n_control"]]


def _set_of(groups: pd.DataFrame) -> pd.Series:
    return groups["set"]


def _per_set(counts: pd.Series, n_sets: int) -> np.ndarray:
    """``(n_sets, k)`` int64 sums from rows per ``(set, v_1, ..., v_k)`` (a relation's
    :meth:`~synthguard.engine.backend.Relation.counts`): per set, each ``v_i`` times its rows."""
    keys = counts.index.to_frame(index=False).to_numpy(dtype=np.int64).reshape(
        len(counts), counts.index.nlevels)
    size = counts.to_numpy(dtype=np.int64)
    out = np.zeros((n_sets, keys.shape[1] - 1), dtype=np.int64)
    np.add.at(out, keys[:, 0], keys[:, 1:] * size[:, None])
    return out


def distinct_values(backend: KeyGroupCounts, column: str, roles: Sequence[str]) -> int:
    """Distinct non-missing values of ``column`` over ``roles`` pooled, asked of the run's backend
    (one process or a cluster: one count): its key groups, the group of missing values (a value
    of its own in the key groups) taken out (:func:`distinct_values_of`, one column).

    Examples
    --------
    >>> import pandas as pd
    >>> from synthguard.registry import Context
    >>> ctx = Context.from_frames(pd.DataFrame({"x": [1, 2, None]}), pd.DataFrame({"x": [1, 9, 9]}),
    ...                           pd.DataFrame({"x": [2, 3, 3]}))
    >>> distinct_values(ctx.data, "x", ["original", "control"])
    3
    """
    return distinct_values_of(backend, [column], roles)[column]


def distinct_values_of(backend: KeyGroupCounts, columns: Sequence[str], roles: Sequence[str]
                       ) -> dict[str, int]:
    """:func:`distinct_values` of each of ``columns`` (each counted once): every column's key
    groups asked in one round (:meth:`~synthguard.engine.backend.Backend.key_groups_many`).

    Examples
    --------
    >>> import pandas as pd
    >>> from synthguard.registry import Context
    >>> ctx = Context.from_frames(pd.DataFrame({"x": [1, 2, None], "y": [5, 5, 5]}),
    ...                           pd.DataFrame({"x": [1, 9, 9], "y": [1, 2, 3]}),
    ...                           pd.DataFrame({"x": [2, 3, 3], "y": [5, 6, 6]}))
    >>> distinct_values_of(ctx.data, ["x", "y"], ["original", "control"])
    {'x': 3, 'y': 2}
    """
    cols, roles = tuple(dict.fromkeys(columns)), list(roles)
    if not cols:
        return {}
    groups = backend.key_groups_many([[c] for c in cols], roles).counts(_set_of)
    n = np.zeros(len(cols), dtype=np.int64)
    n[groups.index.to_numpy(dtype=np.int64)] = groups.to_numpy(dtype=np.int64)
    missing = backend.missing_counts(cols, roles)
    return {c: int(n[j]) - int(sum(missing[c].values()) > 0) for j, c in enumerate(cols)}


def unique_value_excesses(backend: KeyGroupCounts, columns: Sequence[str], *,
                          has_control: bool) -> dict[str, float]:
    """How much more often a training record than a control record holds a value of each of
    ``columns`` that no other real record holds (in the training and control rows pooled) and
    that the release contains: the excess a one-column query ``column == value`` built from the
    release exposes. Ranks the columns to re-test (the re-test itself decides the level).

    One count for one process and a cluster: per column, the backend's key groups of the three
    tables (:meth:`~synthguard.engine.backend.Backend.key_groups_many`: one row per distinct value
    and column with the rows of each role holding it, every column in one round) summed; the group of missing values, which the key groups
    count as one value, is not a value: when it is the one real record's and the release holds a
    missing value, it is taken out (:meth:`~synthguard.engine.backend.Backend.missing_counts`).

    Parameters
    ----------
    backend : KeyGroupCounts
        The run's :class:`~synthguard.engine.backend.Backend` (one process or a Dask cluster).
    columns : sequence of str
        The columns (each counted once).
    has_control : bool
        Whether the run has a control table; without one every excess is ``0.0`` (the backend is
        not asked).

    Returns
    -------
    dict
        ``{column: share of training records hit - share of control records hit}`` (floats;
        NaN when a real table has no row).

    Examples
    --------
    >>> import pandas as pd
    >>> from synthguard.registry import Context
    >>> ctx = Context.from_frames(pd.DataFrame({"x": [1, 2, 3]}), pd.DataFrame({"x": [1, 2, 9]}),
    ...                           pd.DataFrame({"x": [4, 5, 6]}))
    >>> round(unique_value_excesses(ctx.data, ["x"], has_control=True)["x"], 3)
    0.667
    """
    cols = tuple(dict.fromkeys(columns))
    if not has_control or not cols:
        return dict.fromkeys(cols, 0.0)
    missing = backend.missing_counts(cols, EXCESS_ROLES)
    n_train = np.float64(backend.n_rows("original"))
    n_control = np.float64(backend.n_rows("control"))
    # per column, the training and control records holding a value of no other real record that
    # the release holds: the lone groups of every column counted per (column, n_original,
    # n_control), one round
    hits = _per_set(backend.key_groups_many([[c] for c in cols], EXCESS_ROLES).counts(_lone_hits),
                    len(cols))
    out: dict[str, float] = {}
    for j, column in enumerate(cols):  # loop over columns (a few numbers each)
        train, control = int(hits[j, 0]), int(hits[j, 1])
        miss = missing[column]
        if miss["original"] + miss["control"] == 1 and miss["synthetic"] > 0:
            # the lone real record missing its value: its group counted as a hit, not a value
            train -= miss["original"]
            control -= miss["control"]
        with np.errstate(divide="ignore", invalid="ignore"):
            out[column] = float(np.float64(train) / n_train - np.float64(control) / n_control)
    return out
