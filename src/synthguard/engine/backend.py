"""The backend a metric counts and searches through: one process or a cluster, the same metric code.

A metric never reads rows to count them itself: it asks its context's backend (``ctx.data``) for

- **key groups** (:meth:`Backend.key_groups`): one row per distinct value tuple of some columns
  (row identities; continuous columns may be cut into bins first), with how many rows of each
  role carry it (``n_<role>``) and its lowest canonical position in each role (``first_<role>``,
  ``-1`` when none): copy counts, class sizes, distinct counts;
- **key lookups** (:meth:`Backend.key_rows`): one row per row of a role (``pos`` = its canonical
  position) with, per lookup, how many rows of some roles share its values on some columns (the
  join of a row with its group), or how many distinct values of other columns those rows carry
  (single-valued cells, across roles): per-record flags, CAP pools, DiSCO; and per row of a role,
  how many distinct value tuples of other columns the rows of that role sharing its key hold
  (:meth:`Backend.key_distinct`): l-diversity;
- **reductions** of those lazy tables (:class:`Relation`): sums, value counts, the top ``n`` rows
  and per-record flags, each written as a function of a pandas frame that the backend applies to
  the whole table (one process) or to every partition (Dask) and combines exactly (integer counts,
  sums of integers, ``(value, count)`` tables);
- **neighbours** (:meth:`Backend.kneighbors`, the exact chunked engine of
  :mod:`synthguard.engine.neighbors`; rows of the driver as queries:
  :meth:`Backend.kneighbors_frame_seconds`), **ranges** and **bounds**, **rows by position**
  (encoded or typed), **quantiles** (:meth:`Backend.quantiles`), **value summaries** per column
  (:meth:`Backend.value_summaries`: bounds, whole-number and whole-day flags, distinct values),
  **missing values** per column and role (:meth:`Backend.missing_counts`), the
  **seeded content sample** (:meth:`Backend.balanced_rows`) and **seeded draw**
  (:meth:`Backend.content_draw`);
- for rows the caller holds (encoded): **neighbours** in a whole table
  (:meth:`Backend.kneighbors_block`) and **near-copy counts** (:meth:`Backend.near_counts`: rows
  equal on every cell, or on every cell but one);
- **tolerance matches** (:meth:`Backend.rows_matched`): per row of a role, whether a row of another
  role has its categorical values and its numeric values within a tolerance (new_row_synthesis);
- for the anonymeter trio: **distinct rows in content-hash order** (:meth:`Backend.distinct_order`),
  **encoded value bounds** (:meth:`Backend.value_bounds`) and **neighbours among chosen rows**
  (:meth:`Backend.kneighbors_among`: query rows of several roles against reference rows in any
  order);
- for singling out: **query counts** (:meth:`Backend.query_counts`: how many of the rows asked
  match each conjunctive query, and the lowest match; :meth:`Backend.query_subset_counts`: the
  same in many subsets of rows at once), **value flags** (:meth:`Backend.value_flags`: per row and
  column, missing, first holder and only holder of its value) and **medians** of chosen rows
  (:meth:`Backend.medians`), with rows of the driver encoded as the run encodes
  (:meth:`Backend.encode_frame`).

:class:`LocalBackend` answers on the context's tables and encoded view (dense exact-row ids, NumPy
counts, the neighbour engine); the Dask backend (:mod:`synthguard.distributed._backend`) answers on
partitioned tables with group-bys, joins and the partitioned neighbour search, with the same
numbers. Row positions are canonical positions in both (see ``docs/scaling.md``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd

from ..data.coarsening import pooled_numbers, text_counts_of
from ..errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from ..data.encoding import Block
    from .neighbors import DistanceMetric

__all__ = ["Backend", "Relation", "LocalBackend", "LocalRelation", "Lookups", "Bins", "draw_in_content_order",
           "extending_encoder", "key_counts_of", "match_counts", "match_rows", "merge_rank", "merge_value_summaries",
           "only_matches", "pairs_within", "quantile_ranks", "quantiles_of_ranks", "raw_numeric", "split_pairs",
           "stack_blocks", "unique_matches", "value_summary", "Queries", "query_matrix", "query_counts_of",
           "subset_counts_of", "subset_bits", "value_flags_of", "median_of_order_stats", "text_counts_of",
           "held_rows", "matrix_values", "picked_values"]

#: ``{name: (columns, roles)}``: per row, the rows of ``roles`` sharing its values on ``columns``;
#: ``{name: (columns, roles, distinct)}``: per row, the distinct value tuples of the columns
#: ``distinct`` those rows carry (0 when no row shares its values)
Lookups = Mapping[str, tuple[Sequence[str], ...]]
#: ``{column: inner bin edges}``: columns cut into bins (``searchsorted(edges, x, "left")``) before
#: they are compared; missing stays missing
Bins = Mapping[str, np.ndarray]
#: a function of a pandas frame (the whole table, or one partition) returning a column
FrameFn = Callable[[pd.DataFrame], Any]


@runtime_checkable
class Relation(Protocol):
    """A lazy table of a backend (key groups or key lookups); every method runs it."""

    def sums(self, *fns: FrameFn) -> list[Any]:
        """``[fn(table).sum() for fn in fns]`` (ints for integer or boolean columns)."""

    def counts(self, fn: FrameFn) -> pd.Series:
        """Rows per distinct value of ``fn(table)`` (a Series or a frame of key columns), sorted by
        the value(s)."""

    def top(self, n: int, by: Sequence[str], ascending: Sequence[bool],
            where: FrameFn | None = None, derive: FrameFn | None = None) -> pd.DataFrame:
        """The first ``n`` rows (those where ``where`` holds) sorted by ``by`` (stable; ``by`` must
        end with a column that tells rows apart, e.g. a position); ``derive`` first turns the
        table into another frame (derived columns), row by row."""

    def flags(self, **fns: FrameFn) -> dict[str, np.ndarray]:
        """Per row of a key lookup, in canonical order: ``{name: bool array}`` from ``fn(table)``."""


@runtime_checkable
class Backend(Protocol):
    """What a metric may ask about the tables of its run (see the module docstring)."""

    def n_rows(self, role: str) -> int:
        """Rows of ``role``."""

    def key_groups(self, columns: Sequence[str], roles: Sequence[str], *,
                   bins: Bins | None = None) -> Relation:
        """Distinct value tuples of ``columns`` over ``roles``: ``n_<role>``, ``first_<role>``."""

    def key_groups_many(self, column_sets: Sequence[Sequence[str]], roles: Sequence[str], *,
                        bins: Bins | None = None) -> Relation:
        """:meth:`key_groups` of each of ``column_sets`` over ``roles``, stacked in one relation
        with a column ``set`` (the index of the column set in ``column_sets``) before
        ``n_<role>`` and ``first_<role>``: many key sets asked in one round (on a cluster, one
        graph instead of one per set)."""

    def key_rows(self, role: str, lookups: Lookups, *, bins: Bins | None = None) -> Relation:
        """Rows of ``role``: ``pos`` and one count column per lookup (:data:`Lookups`)."""

    def key_distinct(self, role: str, columns: Sequence[str], values: Sequence[str], *,
                     bins: Bins | None = None) -> Relation:
        """Rows of ``role``: ``pos``, ``size`` (rows of ``role`` sharing its values on ``columns``)
        and ``distinct`` (how many distinct value tuples of ``values`` those rows hold; missing is
        a value of its own): distinct l-diversity per row."""

    def row_ids(self, columns: Sequence[str]) -> dict[str, np.ndarray]:
        """Per role, int64 exact-row ids on ``columns`` in canonical order: equal rows, equal ids,
        ordered as the single process's dense ids (first appearance over the roles in order)."""

    def ranges(self, columns: Sequence[str], roles: Sequence[str] = ("original",)) -> np.ndarray:
        """``max - min`` of each numeric column over ``roles`` (the neighbour engine's scale)."""

    def bounds(self, columns: Sequence[str], roles: Sequence[str] = ("original",)
               ) -> dict[str, tuple[float, float]]:
        """``(min, max)`` of the raw numeric values (:func:`raw_numeric`) of each column over
        ``roles``, missing skipped (``(inf, -inf)`` when a column has no value): bin edges."""

    def quantiles(self, columns: Sequence[str], roles: Sequence[str], q: np.ndarray
                  ) -> dict[str, np.ndarray]:
        """``np.quantile(values, q)`` (linear interpolation) of the raw numeric values
        (:func:`raw_numeric`) of each column over ``roles`` pooled, missing skipped; an empty array
        when a column has no value: quantile bin edges."""

    def encoded_quantiles(self, columns: Sequence[str], roles: Sequence[str], q: np.ndarray
                          ) -> dict[str, np.ndarray]:
        """``np.quantile(values, q)`` (linear interpolation) of the encoded values
        (:func:`~synthguard.data.schema.numeric_view`: datetimes as days) of each numerical or
        datetime column over ``roles`` pooled, missing skipped; an empty array when a column has
        no value: the coarsen-and-retest's bin edges."""

    def distinct_numbers(self, columns: Sequence[str], roles: Sequence[str], cap: int
                         ) -> dict[str, int]:
        """Distinct non-missing encoded values (as :meth:`encoded_quantiles` reads them; ``-0.0``
        is ``0.0``) of each column over ``roles`` pooled, or ``cap`` when there are at least
        ``cap``."""

    def text_counts(self, column: str, roles: Sequence[str]) -> pd.Series:
        """Rows of ``roles`` pooled per text (``str``) of their non-missing value of ``column``
        (each distinct value counted, then the counts of values of the same text summed), indexed
        by the text in sorted order: the coarsen-and-retest's most frequent categories."""

    def missing_counts(self, columns: Sequence[str], roles: Sequence[str]) -> dict[str, dict[str, int]]:
        """Missing values of each of ``columns`` in each role of ``roles``:
        ``{column: {role: count}}`` (the rows of the one key group of missing values that
        :meth:`key_groups` forms on that column)."""

    def kneighbors(self, query: str, reference: str, columns: Sequence[str], metric: DistanceMetric,
                   k: int, *, reference_rows: np.ndarray | None = None,
                   query_rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The exact ``k`` nearest ``reference`` rows of every ``query`` row (each row itself
        excluded when ``query == reference`` and no ``reference_rows``), ties by the lower index:
        ``(distances, indices)``; with ``reference_rows`` (sorted canonical positions), indices
        into them; with ``query_rows`` (canonical positions; ``query != reference``), only those
        query rows, in that order."""

    def nearest_other(self, roles: Sequence[str], columns: Sequence[str], metric: DistanceMetric
                      ) -> np.ndarray:
        """Per pooled row (``roles`` concatenated in order), the distance to its nearest other
        pooled row (``inf`` when there is none): the smallest over the roles of
        :meth:`kneighbors`' nearest distance, each row itself excluded, bit for bit (a pair's
        distance does not depend on the search that computes it)."""

    def within(self, role: str, columns: Sequence[str], metric: DistanceMetric,
               frames: Sequence[pd.DataFrame], radius: np.ndarray) -> list[tuple[np.ndarray, ...]]:
        """For each of ``frames`` (small tables of the driver, e.g. leak rows): every ``(position,
        frame row, distance)`` of a row of ``role`` and a frame row at distance ``<= radius[position]``
        (rows with a negative radius take no part), sorted by position, then distance, then frame
        row (:func:`pairs_within` against a neighbour index of the frames' rows)."""

    def balanced_rows(self, role: str, columns: Sequence[str], n: int, seed: int) -> np.ndarray:
        """Sorted canonical positions of ``n`` rows of ``role`` chosen by a seeded hash of the row
        content on ``columns`` (all rows when ``n`` reaches the table's size)."""

    def encoded_rows(self, role: str, columns: Sequence[str], rows: np.ndarray) -> Block:
        """The rows of ``role`` at canonical positions ``rows`` encoded on ``columns``."""

    def take(self, role: str, rows: np.ndarray, columns: Sequence[str]) -> pd.DataFrame:
        """The typed rows of ``role`` at canonical positions ``rows`` (in that order), index 0..n-1."""

    def key_matches(self, frames: Sequence[pd.DataFrame], columns: Sequence[str], roles: Sequence[str]
                    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """For each of ``frames`` (small tables of the driver with the run's columns, e.g. leak
        rows): every ``(row of the frame, pooled position)`` pair where the pooled row (positions
        over ``roles`` concatenated in order) has the frame row's values on ``columns`` and is the
        *only* pooled row with them (a broadcast join of the frames' keys against the pooled
        keys); sorted by frame row. Values compare as :meth:`row_ids` compares them."""

    def key_counts(self, frames: Sequence[pd.DataFrame], column_sets: Sequence[Sequence[str]],
                   roles: Sequence[str]) -> list[list[tuple[np.ndarray, np.ndarray]]]:
        """For each column set of ``column_sets`` and each of ``frames`` (small tables of the
        driver, e.g. release or leak rows): per frame row, how many pooled rows (positions over
        ``roles`` concatenated in order) have its values on the set's columns, and the lowest such
        pooled position (``-1`` when none): ``out[set][frame] = (counts, firsts)``. A broadcast
        join of the frames' keys against the pooled keys, every set in one pass over the pooled
        rows; an empty set matches every pooled row. Values compare as :meth:`row_ids` compares
        them."""

    def key_counts_rows(self, role: str, rows: np.ndarray | None, column_sets: Sequence[Sequence[str]],
                        roles: Sequence[str]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """:meth:`key_counts` of the rows of ``role`` at canonical positions ``rows`` (in that
        order; ``None``: all), one column set's ``(counts, firsts)`` yielded at a time: the same
        numbers as :meth:`key_counts` of those rows taken (:meth:`take`), without the rows on the
        driver where the backend holds them (a cluster joins them on the workers)."""

    def unique_sets(self, column_sets: Sequence[Sequence[str]], roles: Sequence[str]) -> np.ndarray:
        """Per pooled row (positions over ``roles`` concatenated in order), on how many of
        ``column_sets`` it is the *only* pooled row with its values (int64): one group-by of every
        set's keys. Values compare as :meth:`row_ids` compares them."""

    def cells_equal(self, frame: pd.DataFrame, positions: np.ndarray, columns: Sequence[str],
                    roles: Sequence[str]) -> np.ndarray:
        """``(len(frame), len(columns))`` booleans: whether row ``i`` of ``frame`` (a small table of
        the driver) equals the pooled row at ``positions[i]`` (positions over ``roles``
        concatenated in order) on each column; only those pooled rows are read. Values compare
        as :meth:`row_ids` compares them."""

    def ranges_seconds(self, columns: Sequence[str], roles: Sequence[str] = ("original",)) -> np.ndarray:
        """:meth:`ranges` with datetime columns in exact seconds since the evaluation's earliest
        whole second (``exact_datetimes``: the units of the DCR metrics, SDMetrics' units)."""

    def kneighbors_seconds(self, query: str, reference: str, columns: Sequence[str],
                           metric: DistanceMetric, k: int, *,
                           query_rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`kneighbors` of two different roles with datetimes in exact seconds (as
        :meth:`ranges_seconds`): the exact ``k`` nearest ``reference`` rows of every ``query`` row
        (or of ``query_rows``, canonical positions, in that order), ties by the lower index."""

    def nearest_reached(self, query: str, references: Sequence[str], columns: Sequence[str],
                        metric: DistanceMetric, *, query_rows: np.ndarray | None = None
                        ) -> tuple[list[np.ndarray], np.ndarray]:
        """Which real rows are the nearest row of a query row, the ``references`` roles pooled
        (datetimes in exact seconds, as :meth:`ranges_seconds`): every pooled row at a query row's
        smallest distance to any pooled row is reached (identical rows together). Returns, per
        role of ``references``, a bool per row (reached), and per query row (``query_rows``, in
        that order, or all) whether more than one distinct row (encoded bits) is at its smallest
        distance."""

    def content_draw(self, roles: Sequence[str], columns: Sequence[str], n: int, rng: np.random.Generator, *,
                     among: np.ndarray | None = None) -> np.ndarray:
        """Sorted pooled positions (over ``roles`` concatenated in order) of ``n`` rows drawn at
        random by ``rng`` over the rows' canonical content order on ``columns`` (sorted stably by
        the 64-bit content hash of :func:`~synthguard.data.tables.canonical_order`), among the
        pooled positions ``among`` (sorted; default all): the same draw whatever the input order,
        identical rows drawn independently; all of them (``rng`` unused) when ``n`` covers them."""

    def kneighbors_block(self, query: Block, reference: str, columns: Sequence[str],
                         metric: DistanceMetric, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The exact ``k`` nearest rows of ``reference`` (encoded on ``columns``) of every row of
        ``query`` (encoded rows of the caller, e.g. from :meth:`encoded_rows`), ties by the lower
        index: ``(distances, indices)``, indices canonical positions of ``reference``."""

    def kneighbors_block_pooled(self, query: Block, references: Sequence[str], columns: Sequence[str],
                                metric: DistanceMetric, k: int) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`kneighbors_block` against the rows of ``references`` pooled (concatenated in
        order; ``k`` at most their rows): indices are pooled positions, ties by the lower one. The
        ``k`` nearest of the pool are, bit for bit, the ``k`` nearest of the per-role searches
        merged (a pair's distance does not depend on the search that computes it)."""

    def kneighbors_held(self, query: Block, reference: Block, metric: DistanceMetric, k: int
                        ) -> tuple[np.ndarray, np.ndarray]:
        """The exact ``k`` nearest rows of ``reference`` of every row of ``query`` (both encoded
        rows of the caller), ties by the lower index: ``(distances, indices)``, positions in
        ``reference``."""

    def kneighbors_rows_held(self, role: str, columns: Sequence[str], rows: np.ndarray, reference: Block,
                             metric: DistanceMetric, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The exact ``k`` nearest rows of ``reference`` (encoded rows of the caller) of the rows of
        ``role`` at canonical positions ``rows`` (encoded on ``columns``, as :meth:`encoded_rows`
        gives them), ties by the lower index: ``(distances, indices)``."""

    def near_counts(self, role: str, columns: Sequence[str], query: Block) -> tuple[np.ndarray, np.ndarray]:
        """Per row of ``query`` (encoded rows of the caller), how many rows of ``role`` (encoded on
        ``columns``) equal it on every cell, and on every cell but at most one
        (:func:`~synthguard.engine.cells.near_counts`): ``(exact, within)``."""

    def most_equal_cells(self, role: str, columns: Sequence[str], query: Block, idx: np.ndarray
                         ) -> np.ndarray:
        """Per row ``i`` of ``query`` (encoded rows of the caller), the most cells it shares with
        one of the rows of ``role`` (encoded on ``columns``) at canonical positions ``idx[i]``
        (``-1``: none; 0 when none is named): :func:`~synthguard.engine.cells.most_equal_cells`.
        Only the counts travel (a cluster compares the pairs where the rows lie)."""

    def rows_matched(self, query: str, reference: str, columns: Sequence[str], tol: np.ndarray, *,
                     relative: bool = False, query_rows: np.ndarray | None = None,
                     reference_rows: np.ndarray | None = None) -> np.ndarray:
        """Per ``query`` row (``query_rows``, canonical positions, in that order, or all), whether
        at least one ``reference`` row (``reference_rows``, canonical positions, or all) matches
        it on ``columns`` encoded as the run encodes them (datetimes in days): categorical codes
        equal (missing equal to missing), each numeric value within ``tol[j]`` (one per numeric
        column, in the encoded order) of the query's, or, ``relative``, within ``|tol[j] * q|``
        (``q`` the query's value); missing numeric matches missing only (:func:`match_rows`)."""

    def distinct_order(self, role: str, columns: Sequence[str]) -> np.ndarray:
        """The distinct rows of ``role`` on ``columns``, each as its lowest canonical position,
        ordered by the 64-bit content hash of their typed values
        (:func:`~synthguard.data.hashing.row_hashes`; distinct rows whose hashes collide count as
        one, probability about ``n**2 / 2**64``): the anonymeter trio's canonical rows, an order
        that depends on neither the input row order nor duplicates."""

    def value_bounds(self, columns: Sequence[str], roles: Sequence[str], *,
                     rows: Mapping[str, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Per numeric column of the rows encoded on ``columns`` (the encoder's numeric columns, in
        the order given), ``(min, max)`` over ``roles`` (with ``rows``, a role's rows at those
        canonical positions only), NaN skipped (``(inf, -inf)`` when a column has no value):
        :func:`~synthguard.data.encoding.value_bounds`."""

    def kneighbors_among(self, queries: Sequence[tuple[str, np.ndarray | None]], reference: str,
                         reference_rows: np.ndarray, columns: Sequence[str], metric: DistanceMetric,
                         k: int) -> tuple[np.ndarray, np.ndarray]:
        """The exact ``k`` nearest of the ``reference`` rows at ``reference_rows`` (distinct
        canonical positions in *any* order; indices into that array, ties by the lower index) of
        the query rows ``queries``: per ``(role, rows)``, the rows of ``role`` at canonical
        positions ``rows`` in that order (``None``: every row), stacked in the order given:
        ``(distances, indices)``. The reference rows need not be distinct on ``columns``."""

    def value_summaries(self, role: str, columns: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Per column of ``role``, what a uniform draw within its values and a unit check need
        (:func:`value_summary`, combined over the whole table by :func:`merge_value_summaries`):
        rows and missing values; datetimes: earliest and latest instant (int64 nanoseconds) and
        whether every value is a whole day (midnight); numerical columns: min, max and whether every
        value is a whole number; other columns: the distinct non-missing values, sorted by (type
        name, text) so that their order does not depend on the row order."""

    def kneighbors_frame_seconds(self, frame: pd.DataFrame, reference: str, columns: Sequence[str],
                                 metric: DistanceMetric, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The exact ``k`` nearest ``reference`` rows of every row of ``frame`` (a table of the
        driver with the run's columns and values, e.g. random rows drawn within them), datetimes in
        exact seconds (as :meth:`ranges_seconds`), ties by the lower index:
        ``(distances, indices)``."""

    def encode_frame(self, frame: pd.DataFrame, columns: Sequence[str]) -> Block:
        """Rows of the driver (``frame``, e.g. two boolean values) encoded on ``columns`` as the
        run encodes its tables (the same codes and values)."""

    def query_counts(self, role: str, columns: Sequence[str], queries: Queries, *, cap: int | None = None,
                     rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Per conjunctive query of ``queries`` (``(col, op, val)``, shape ``(m, k)``: predicates on
        the :func:`query_matrix` of ``role`` encoded on ``columns``, see
        :mod:`synthguard.engine.queries`), how many rows match (at most ``cap``) among
        the rows at canonical positions ``rows`` (any order; default every row), and the lowest
        matching canonical position (``-1``: none; exact when the count is below ``cap``):
        :func:`query_counts_of`, whose counts add up over any split of the rows."""

    def query_values(self, role: str, columns: Sequence[str], positions: np.ndarray, cols: np.ndarray | None, *,
                     rows: np.ndarray | None = None) -> np.ndarray:
        """The values of the :func:`query_matrix` of ``role`` encoded on ``columns`` at the rows of
        canonical positions ``positions`` and the column indices ``cols`` (the same shape; a
        singling-out search's drawn cells): :func:`matrix_values`; ``cols=None``: the whole
        matrix rows (``positions.shape + (len(columns),)``: a long search's whole release).
        ``rows``: the rows the search's :meth:`query_counts` ask among, whose query table a
        backend may hold and read (a cluster: each partition's held matrix, no partition read or
        encoded again). The array returned may be read-only (a cluster's whole rows, which its
        backend keeps to count those rows on the driver)."""

    def query_subset_counts(self, role: str, columns: Sequence[str], queries: Queries,
                            subsets: Sequence[np.ndarray], *, cap: int = 2) -> np.ndarray:
        """``(len(subsets), m)`` int64: per subset of rows of ``role`` (canonical positions) and
        per query of ``queries`` (as :meth:`query_counts`), how many rows of the subset match (at
        most ``cap``): :func:`subset_counts_of` (match lists of every query, counted per subset),
        the singling-out curve's subsamples in one pass."""

    def value_flags(self, role: str, columns: Sequence[str], rows: np.ndarray) -> dict[str, np.ndarray]:
        """Per column ``j`` of the :func:`query_matrix` of the rows of ``role`` at canonical
        positions ``rows`` (in that order; row ``i`` is ``rows[i]``), values compared as floats
        (``-0.0 == 0.0``; missing = NaN, never a value): ``missing[j, i]``; ``first[j, i]``, row
        ``i`` holds a value no earlier row holds; ``once[j, i]``, no other row holds row ``i``'s
        value; ``low[j]`` / ``high[j]``, the row holding the column's smallest / largest value
        when no other row holds it (``-1`` otherwise): :func:`value_flags_of`."""

    def medians(self, role: str, columns: Sequence[str], rows: np.ndarray) -> np.ndarray:
        """Per column of ``columns`` (in the order given; its :func:`query_matrix` values: numeric
        values or categorical codes), ``np.nanmedian`` over the rows of ``role`` at canonical
        positions ``rows`` (NaN when none holds a value; ``-0.0`` may come back as ``0.0``)."""


#: conjunctive queries ``(col, op, val)``, each of shape ``(m, k)`` (see
#: :mod:`synthguard.engine.queries`)
Queries = tuple[np.ndarray, np.ndarray, np.ndarray]
#: the row counts of :func:`subset_counts_of` in one piece (larger counts: one index per subset)
_LIST_LIMIT = 25_000_000


def query_matrix(block: Block) -> np.ndarray:
    """One float64 matrix of an encoded block: numeric values, then categorical codes (missing
    -> NaN), the matrix singling-out queries are written on."""
    return _query_matrix_of(block, np.arange(block.num.shape[1]), np.arange(block.cat.shape[1]), None)


#: rows of :func:`_query_matrix_of` gathered at a time
_MATRIX_ROWS = 1 << 16


def _query_matrix_of(block: Block, num: np.ndarray, cat: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
    """:func:`query_matrix` of ``block``'s numeric columns ``num`` and categorical columns ``cat``
    (positions) at ``rows`` (``None``: every row), filled a block of :data:`_MATRIX_ROWS` rows at
    a time: each block's rows gathered whole (a row's cells lie side by side; a column at a time,
    every cell of a reordered table was a cache miss of its own: about 11 s at 10M rows), then
    their columns written, so no copy of the table is made on the way."""
    from ..data.encoding import NAN_CODE

    at = None if rows is None else np.asarray(rows, dtype=np.int64)
    n = block.n_rows if at is None else at.size
    out = np.empty((n, num.size + cat.size), dtype=np.float64)
    if at is not None and num.size + cat.size == 1:  # one column (the flags', the medians'): its
        # cells gathered alone (a whole row a cell costs the same misses and copies the row: 4-7x)
        cells = np.take(block.num[:, num[0]] if num.size else block.cat[:, cat[0]], at)
        out[:, 0] = cells
        if cat.size:
            out[cells == NAN_CODE, 0] = np.nan
        return out
    for s in range(0, n, _MATRIX_ROWS):  # loop over row blocks, vectorised over their cells
        sel: Any = slice(s, s + _MATRIX_ROWS) if at is None else at[s:s + _MATRIX_ROWS]
        part = out[s:s + _MATRIX_ROWS]
        if num.size:
            part[:, :num.size] = block.num[sel][:, num]
        if cat.size:
            codes = block.cat[sel][:, cat]
            part[:, num.size:] = codes
            part[:, num.size:][codes == NAN_CODE] = np.nan
    return out


def held_rows(X: np.ndarray, at: np.ndarray, asked: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows of a held query matrix ``X`` (its rows' canonical positions ``at``, ascending) at
    the canonical positions ``asked`` (distinct, ascending) it holds: their places in ``asked``
    and their rows of ``X`` (one process's query table, or one partition's on a cluster).

    Examples
    --------
    >>> X = np.array([[1.0], [2.0], [3.0]])
    >>> [a.tolist() for a in held_rows(X, np.array([2, 5, 9]), np.array([1, 5, 9]))]
    [[1, 2], [[2.0], [3.0]]]
    """
    if at.size == 0:
        return np.zeros(0, dtype=np.int64), X[:0]
    j = np.minimum(np.searchsorted(at, asked), at.size - 1)
    found = np.flatnonzero(at[j] == asked)
    return found, X[j[found]]


def matrix_values(backend: Backend, role: str, columns: Sequence[str], positions: np.ndarray,
                  cols: np.ndarray | None) -> np.ndarray:
    """:meth:`Backend.query_values` from the rows taken (:meth:`Backend.encoded_rows` of the
    distinct positions): their :func:`query_matrix` at ``cols`` (``None``: whole rows)."""
    positions = np.asarray(positions, dtype=np.int64)
    uniq, inv = np.unique(positions, return_inverse=True)
    X = query_matrix(backend.encoded_rows(role, columns, uniq)) if uniq.size else np.zeros((0, len(columns)))
    return picked_values(X, inv.reshape(positions.shape), cols)


def picked_values(X: np.ndarray, at: np.ndarray, cols: np.ndarray | None) -> np.ndarray:
    """``X[at, cols]`` (the same shape as ``at``), or the whole rows ``X[at]`` when ``cols`` is
    ``None``: what :meth:`Backend.query_values` returns of the rows it found.

    Examples
    --------
    >>> X = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> picked_values(X, np.array([1, 0]), np.array([0, 1])).tolist()
    [3.0, 2.0]
    >>> picked_values(X, np.array([1]), None).tolist()
    [[3.0, 4.0]]
    """
    if cols is None:
        return X[at]
    return X[at, np.asarray(cols, dtype=np.int64)]


def query_counts_of(X: np.ndarray, positions: np.ndarray, queries: Queries, cap: int | None, *,
                    index: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """:meth:`Backend.query_counts` over the rows of ``X`` (their canonical ``positions``,
    ascending): counts and the lowest matching position (a column index scans each query's
    narrowest predicate's slice; ``index``: a :class:`~synthguard.engine.queries.ColumnIndex` of
    ``X`` already built).

    Examples
    --------
    >>> X = np.array([[1.0], [2.0], [1.0]])
    >>> q = (np.array([[0], [0]]), np.array([[0], [2]]), np.array([[1.0], [1.0]]))  # == 1, > 1
    >>> [a.tolist() for a in query_counts_of(X, np.array([3, 5, 8]), q, None)]
    [[2, 1], [3, 5]]
    """
    from . import queries as Q

    col, op, val = queries
    if X.shape[0] == 0:
        return np.zeros(col.shape[0], dtype=np.int64), np.full(col.shape[0], -1, dtype=np.int64)
    counts, first = Q.count_matches(Q.ColumnIndex(X) if index is None else index, col, op, val, cap=cap)
    pos = np.asarray(positions, dtype=np.int64)
    return counts, np.where(first >= 0, pos[np.maximum(first, 0)], -1)


def subset_counts_of(X: np.ndarray, member: np.ndarray, queries: Queries, n_subsets: int, cap: int, *,
                     index: Any = None) -> np.ndarray:
    """:meth:`Backend.query_subset_counts` over the rows of ``X``: ``member[r]`` holds bit ``s``
    when row ``r`` is in subset ``s`` (at most 64 subsets); ``(n_subsets, m)`` counts, at most
    ``cap``. Every query's match list is found once (a column index), then each subset's count is
    the difference of one running count over the lists; lists of more than 25 M rows in all are
    not built (each subset's rows counted with their own index). ``index``: a
    :class:`~synthguard.engine.queries.ColumnIndex` of ``X`` already built."""
    from . import queries as Q

    col, op, val = queries
    m = col.shape[0]
    out = np.zeros((n_subsets, m), dtype=np.int64)
    if X.shape[0] == 0 or m == 0:
        return out
    member = np.asarray(member, dtype=np.uint64)
    index = Q.ColumnIndex(X) if index is None else index
    counts, _ = Q.count_matches(index, col, op, val)
    if counts.sum() > _LIST_LIMIT:
        for s in range(n_subsets):  # loop over subsets
            inside = ((member >> np.uint64(s)) & np.uint64(1)).astype(bool)
            if inside.any():
                out[s] = Q.count_matches(Q.ColumnIndex(X[inside]), col, op, val, cap=cap)[0]
        return out
    offsets, rows = Q.match_lists(index, col, op, val, counts)
    bits = member[rows]
    run = np.zeros(rows.size + 1, dtype=np.int64)
    for s in range(n_subsets):  # loop over subsets, vectorised over every query's list
        np.cumsum((bits >> np.uint64(s)) & np.uint64(1), out=run[1:])
        out[s] = np.minimum(run[offsets[1:]] - run[offsets[:-1]], cap)
    return out


def subset_bits(n: int, subsets: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Per 64 subsets of ``range(n)`` (arrays of positions): one uint64 per position with bit ``s``
    set when the position is in subset ``s`` of those 64.

    Examples
    --------
    >>> subset_bits(3, [np.array([0, 2]), np.array([2])])[0].tolist()
    [1, 0, 3]
    """
    out = []
    for start in range(0, len(subsets), 64):  # loop over chunks of 64 subsets
        bits = np.zeros(n, dtype=np.uint64)
        for s, rows in enumerate(subsets[start:start + 64]):
            bits[np.asarray(rows, dtype=np.int64)] |= np.uint64(1) << np.uint64(s)
        out.append(bits)
    return out


def value_flags_of(X: np.ndarray) -> dict[str, np.ndarray]:
    """:meth:`Backend.value_flags` of the rows of ``X`` (row ``i`` is the ``i``-th asked).

    Examples
    --------
    >>> f = value_flags_of(np.array([[2.0], [np.nan], [-0.0], [0.0], [5.0]]))
    >>> f["first"][0].tolist(), f["once"][0].tolist(), f["low"].tolist(), f["high"].tolist()
    ([True, False, True, False, True], [True, False, False, False, True], [-1], [4])
    """
    return _value_flags_by_column(X.shape[0], X.shape[1], lambda j: X[:, j])


def _value_flags_by_column(n: int, p: int, column: Callable[[int], np.ndarray]) -> dict[str, np.ndarray]:
    """:func:`value_flags_of` of ``n`` rows whose ``p`` columns come one at a time from
    ``column(j)`` (no matrix of every column held)."""
    out = {k: np.zeros((p, n), dtype=bool) for k in ("missing", "first", "once")}
    out["low"] = np.full(p, -1, dtype=np.int64)
    out["high"] = np.full(p, -1, dtype=np.int64)
    for j in range(p):  # loop over columns, vectorised over rows
        x = column(j)
        nan = np.isnan(x)
        out["missing"][j] = nan
        pos = np.flatnonzero(~nan)
        if pos.size == 0:
            continue
        first, cnt = _first_rows(x[pos])
        out["first"][j, pos[first]] = True
        out["once"][j, pos[first[cnt == 1]]] = True
        out["low"][j] = pos[first[0]] if cnt[0] == 1 else -1
        out["high"][j] = pos[first[-1]] if cnt[-1] == 1 else -1
    return out


def _first_rows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(x, return_index=True, return_counts=True)[1:]`` of values without NaN: per
    distinct value, ascending, the position of its first row and its row count (``-0.0 ==
    0.0``).

    One hash pass (``pd.factorize`` numbers the values in order of first appearance, so a row is
    its value's first exactly when its code exceeds every earlier row's: a running maximum) and a
    sort of the distinct values only, instead of a stable sort of every row: about 6x less CPU on
    a 10M-row column of a few hundred values (``docs/scaling.md``).

    Examples
    --------
    >>> first, cnt = _first_rows(np.array([3.0, 1.0, -0.0, 3.0, 0.0, 2.0]))
    >>> first.tolist(), cnt.tolist()
    ([2, 1, 5, 0], [2, 1, 1, 2])
    """
    codes, uniques = pd.factorize(x, sort=False)
    if codes.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    new = np.empty(codes.size, dtype=bool)
    new[0] = True
    np.greater(codes[1:], np.maximum.accumulate(codes)[:-1], out=new[1:])
    order = np.argsort(np.asarray(uniques, dtype=np.float64), kind="stable")
    first = np.flatnonzero(new)[order]  # the k-th new row holds code k
    return first, np.bincount(codes, minlength=len(uniques))[order]


def median_of_order_stats(n: int, values_at: Callable[[np.ndarray], np.ndarray]) -> float:
    """``np.nanmedian`` of ``n`` values known through ``values_at(ranks)`` (their values at 0-based
    ranks of the sorted order): the middle value, or NumPy's mean of the two middle ones.

    Examples
    --------
    >>> v = np.array([4.0, 1.0, 3.0, 2.0])
    >>> bool(median_of_order_stats(4, lambda r: np.sort(v)[r]) == np.median(v))
    True
    """
    if n == 0:
        return float("nan")
    ranks = np.unique(np.array([(n - 1) // 2, n // 2], dtype=np.int64))
    return float(np.mean(np.asarray(values_at(ranks), dtype=np.float64)))


def raw_numeric(series: pd.Series) -> np.ndarray:
    """float64 values for binning (datetimes as int64 nanoseconds, as ``pd.to_numeric`` gives).

    Examples
    --------
    >>> raw_numeric(pd.Series([1, None])).tolist()
    [1.0, nan]
    """
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        ns = series.astype("datetime64[ns]").to_numpy().astype("int64").astype("float64")
        ns[series.isna().to_numpy()] = np.nan
        return ns
    if pd.api.types.is_bool_dtype(series.dtype):
        return series.astype("float64").to_numpy()
    conv = pd.to_numeric(series, errors="coerce")
    if (series.notna() & conv.isna()).any():
        raise ConfigError(f"column {series.name!r} is listed as continuous but holds non-numeric values; "
                          "remove it from continuous_column_names")
    return conv.astype("float64").to_numpy()


def _as_python(value: Any) -> Any:
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


def frame_sum(values: Any) -> Any:
    """The sum of a column as a Python int (integer or boolean columns) or float."""
    arr = np.asarray(values)
    if arr.dtype == bool:
        return int(arr.sum())
    return _as_python(arr.sum())


def group_sizes(values: Any) -> pd.Series:
    """Rows per distinct value of a Series (or per distinct row of a frame), sorted by value."""
    if isinstance(values, pd.DataFrame):
        return values.groupby(list(values.columns), sort=True).size()
    return values.groupby(values, sort=True).size()


def top_rows(frame: pd.DataFrame, n: int, by: Sequence[str], ascending: Sequence[bool],
             where: FrameFn | None = None, derive: FrameFn | None = None) -> pd.DataFrame:
    """:meth:`Relation.top` on one pandas frame."""
    if derive is not None:
        frame = derive(frame)
    if where is not None:
        frame = frame[np.asarray(where(frame), dtype=bool)]
    if n <= 0:
        return frame.iloc[:0]
    return frame.sort_values(list(by), ascending=list(ascending), kind="mergesort").head(n)


class LocalRelation:
    """A :class:`Relation` held as one pandas frame."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame

    def sums(self, *fns: FrameFn) -> list[Any]:
        return [frame_sum(fn(self.frame)) for fn in fns]

    def counts(self, fn: FrameFn) -> pd.Series:
        return group_sizes(fn(self.frame))

    def top(self, n: int, by: Sequence[str], ascending: Sequence[bool],
            where: FrameFn | None = None, derive: FrameFn | None = None) -> pd.DataFrame:
        return top_rows(self.frame, n, by, ascending, where, derive).reset_index(drop=True)

    def flags(self, **fns: FrameFn) -> dict[str, np.ndarray]:
        return {name: np.asarray(fn(self.frame), dtype=bool) for name, fn in fns.items()}


class LocalBackend:
    """The :class:`Backend` of one process: the context's tables (in canonical order) and encoded
    view; exact dense row ids (hash-free), NumPy counts, the neighbour engine.

    Parameters
    ----------
    tables, encoded
        ``ctx.tables`` and ``ctx.encoded``.
    neighbour_backend : str
        The neighbour engine's backend (``ctx.backend``).
    memo : callable, optional
        ``ctx.memo``: row ids are memoised per column set, so metrics of a run share them.
    """

    def __init__(self, tables: Any, encoded: Any, neighbour_backend: str = "auto",
                 memo: Callable[..., Any] | None = None) -> None:
        self.tables, self.encoded, self.neighbour_backend = tables, encoded, neighbour_backend
        self._memo = memo if memo is not None else (lambda key, compute, users=(): compute())
        # the query table singling out asked of last (its matrix and column index): a batch of
        # queries after another on the same rows reuses it; one entry, so at most one is held
        self._query_table: _QueryTable | None = None
        self._query_lock = threading.Lock()

    # --- identities -----------------------------------------------------------------------------
    def n_rows(self, role: str) -> int:
        return len(self.tables.get(role))

    def _codes(self, role: str, columns: Sequence[str], bins: Bins) -> Block:
        from ..data.encoding import Block

        exact = [c for c in columns if c not in bins]
        n = self.n_rows(role)
        out = np.empty((n, len(columns)), dtype=np.int64)
        if exact:
            block = self.encoded.block(role, exact, categorical_only=True)
            where = {c: j for j, c in enumerate(block.cat_columns)}
        for j, c in enumerate(columns):
            if c in bins:
                vals = raw_numeric(self.tables.get(role)[c])
                codes = np.searchsorted(bins[c], vals, side="left").astype(np.int64)
                codes[np.isnan(vals)] = -1
                out[:, j] = codes
            else:
                out[:, j] = block.cat[:, where[c]]
        return Block(np.zeros((n, 0)), out, (), tuple(f"c{j}" for j in range(len(columns))))

    def _ids(self, columns: Sequence[str], roles: Sequence[str], bins: Bins | None) -> dict[str, np.ndarray]:
        """Dense ids of the value tuples of ``columns`` over ``roles`` (equal tuples, equal ids)."""
        from ..data.encoding import row_identities

        roles = tuple(roles)
        if not bins:
            every = self.row_ids(columns)
            if all(r in every for r in roles):
                return {r: every[r] for r in roles}
        if not columns:
            return {r: np.zeros(self.n_rows(r), dtype=np.int64) for r in roles}
        cut = tuple(sorted((str(c), np.asarray(e, dtype=float).tobytes()) for c, e in (bins or {}).items()))

        def compute() -> dict[str, np.ndarray]:
            ids = row_identities(*[self._codes(r, columns, bins or {}) for r in roles])
            return dict(zip(roles, ids, strict=True))

        # the same columns, roles and bins asked again (DiSCO's lookups per sensitive column)
        return self._memo(("backend.ids", tuple(columns), roles, cut), compute)

    def row_ids(self, columns: Sequence[str]) -> dict[str, np.ndarray]:
        cols = tuple(columns)
        return self._memo(("backend.row_ids", cols), lambda: self.encoded.row_ids(list(cols)))

    def key_ids(self, columns: Sequence[str], roles: Sequence[str], *,
                bins: Bins | None = None) -> dict[str, np.ndarray]:
        """Per role of ``roles``: the dense ids :meth:`key_rows` and :meth:`key_groups` count with
        (equal value tuples of ``columns``, cut at ``bins``, equal ids; memoised, do not modify).
        One process only (not a :class:`Backend` question): for a metric naming the release rows
        behind its key counts."""
        return self._ids(columns, roles, bins)

    def key_groups(self, columns: Sequence[str], roles: Sequence[str], *,
                   bins: Bins | None = None) -> LocalRelation:
        ids = self._ids(columns, roles, bins)
        n_ids = max((int(i.max(initial=-1)) for i in ids.values()), default=-1) + 1
        present = np.zeros(n_ids, dtype=bool)
        out: dict[str, np.ndarray] = {}
        for role in roles:
            i = ids[role]
            present[i] = True
            out[f"n_{role}"] = np.bincount(i, minlength=n_ids).astype(np.int64)
            first = np.full(n_ids, -1, dtype=np.int64)
            uniq, at = np.unique(i, return_index=True)
            first[uniq] = at
            out[f"first_{role}"] = first
        frame = pd.DataFrame(out)
        return LocalRelation(frame[present].reset_index(drop=True))

    def key_groups_many(self, column_sets: Sequence[Sequence[str]], roles: Sequence[str], *,
                        bins: Bins | None = None) -> LocalRelation:
        roles = tuple(roles)
        frames = []
        for j, cols in enumerate(column_sets):  # loop over the column sets; each one vectorised
            frame = self.key_groups(cols, roles, bins=bins).frame
            frames.append(frame.assign(set=np.full(len(frame), j, dtype=np.int64)))
        cols_out = ["set", *(f"{p}_{r}" for r in roles for p in ("n", "first"))]
        if not frames:
            return LocalRelation(pd.DataFrame({c: np.zeros(0, dtype=np.int64) for c in cols_out}))
        return LocalRelation(pd.concat(frames, ignore_index=True)[cols_out])

    def key_rows(self, role: str, lookups: Lookups, *, bins: Bins | None = None) -> LocalRelation:
        out: dict[str, np.ndarray] = {"pos": np.arange(self.n_rows(role), dtype=np.int64)}
        for name, (columns, in_roles, *distinct) in lookups.items():
            roles = tuple(dict.fromkeys((role, *in_roles)))
            ids = self._ids(columns, roles, bins)
            n_ids = max(int(i.max(initial=-1)) for i in ids.values()) + 1
            count = np.zeros(n_ids, dtype=np.int64)
            if distinct:  # distinct value tuples of the columns ``distinct`` per group
                vals = self._ids(distinct[0], tuple(in_roles), bins)
                n_v = max(int(v.max(initial=-1)) for v in vals.values()) + 1
                pairs = np.unique(np.concatenate([ids[r] * n_v + vals[r] for r in in_roles]))
                count += np.bincount(pairs // max(n_v, 1), minlength=n_ids)
            else:
                for r in in_roles:
                    count += np.bincount(ids[r], minlength=n_ids)
            out[name] = count[ids[role]]
        return LocalRelation(pd.DataFrame(out))

    def key_distinct(self, role: str, columns: Sequence[str], values: Sequence[str], *,
                     bins: Bins | None = None) -> LocalRelation:
        key = self._ids(columns, (role,), bins)[role]
        val = self._ids(values, (role,), bins)[role]
        n_key = int(key.max(initial=-1)) + 1
        n_val = max(int(val.max(initial=-1)) + 1, 1)
        pairs = np.unique(key * n_val + val)  # distinct (key, value) pairs
        distinct = np.bincount(pairs // n_val, minlength=n_key).astype(np.int64)
        size = np.bincount(key, minlength=n_key).astype(np.int64)
        return LocalRelation(pd.DataFrame({"pos": np.arange(key.size, dtype=np.int64), "size": size[key],
                                           "distinct": distinct[key]}))

    # --- values ---------------------------------------------------------------------------------
    def ranges(self, columns: Sequence[str], roles: Sequence[str] = ("original",)) -> np.ndarray:
        return self.encoded.ranges(list(columns), tuple(roles))

    def bounds(self, columns: Sequence[str], roles: Sequence[str] = ("original",)
               ) -> dict[str, tuple[float, float]]:
        out = {}
        for c in columns:
            v = np.concatenate([raw_numeric(self.tables.get(r)[c]) for r in roles])
            v = v[~np.isnan(v)]
            out[c] = (float(v.min()), float(v.max())) if v.size else (np.inf, -np.inf)
        return out

    def quantiles(self, columns: Sequence[str], roles: Sequence[str], q: np.ndarray
                  ) -> dict[str, np.ndarray]:
        out = {}
        for c in columns:  # loop over columns
            v = np.concatenate([raw_numeric(self.tables.get(r)[c]) for r in roles])
            v = v[~np.isnan(v)]
            out[c] = np.quantile(v, np.asarray(q, dtype=np.float64)) if v.size else np.zeros(0)
        return out

    def _numbers(self, column: str, roles: Sequence[str]) -> np.ndarray:
        return pooled_numbers([self.tables.get(r)[column] for r in roles])

    def encoded_quantiles(self, columns: Sequence[str], roles: Sequence[str], q: np.ndarray
                          ) -> dict[str, np.ndarray]:
        out = {}
        for c in columns:  # loop over columns
            v = self._numbers(c, roles)
            out[c] = np.quantile(v, np.asarray(q, dtype=np.float64)) if v.size else np.zeros(0)
        return out

    def distinct_numbers(self, columns: Sequence[str], roles: Sequence[str], cap: int
                         ) -> dict[str, int]:
        return {c: int(min(np.unique(self._numbers(c, roles) + 0.0).size, cap)) for c in columns}

    def text_counts(self, column: str, roles: Sequence[str]) -> pd.Series:
        return text_counts_of([self.tables.get(r)[column] for r in roles])

    def missing_counts(self, columns: Sequence[str], roles: Sequence[str]) -> dict[str, dict[str, int]]:
        cols = list(columns)
        per_role = {r: self.tables.get(r)[cols].isna().sum().to_numpy(dtype=np.int64) for r in roles}
        return {c: {r: int(per_role[r][j]) for r in roles} for j, c in enumerate(cols)}

    # --- neighbours and rows --------------------------------------------------------------------
    def kneighbors(self, query: str, reference: str, columns: Sequence[str], metric: DistanceMetric,
                   k: int, *, reference_rows: np.ndarray | None = None,
                   query_rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        from .neighbors import kneighbors
        from .reuse import search

        cols = list(columns)
        self_search = query == reference and reference_rows is None
        if query_rows is not None and self_search:
            raise ValueError("query_rows: only for a query role other than the reference")  # a bug

        def run(q_rows: np.ndarray | None, r_rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
            q = self.encoded.block(query, cols)
            r = self.encoded.block(reference, cols)
            if q_rows is not None:
                q = q.take(np.asarray(q_rows, dtype=np.int64))
            if r_rows is not None:
                r = r.take(np.asarray(r_rows))
            nb = kneighbors(q, r, metric, k, exclude_self=self_search, backend=self.neighbour_backend)
            return nb.distances, nb.indices

        # a drop-and-retest answers what it can from the run's own searches (engine.reuse)
        return search(self.encoded, "days", query, reference, cols, metric, k, run,
                      query_rows=query_rows, reference_rows=reference_rows)

    def nearest_other(self, roles: Sequence[str], columns: Sequence[str], metric: DistanceMetric
                      ) -> np.ndarray:
        from .neighbors import kneighbors
        from .reuse import search

        cols, roles = list(columns), list(roles)
        if sum(self.n_rows(r) for r in roles) < 2:
            return np.full(sum(self.n_rows(r) for r in roles), np.inf)

        def run(_q_rows: None, _r_rows: None) -> tuple[np.ndarray, np.ndarray]:
            # one search of the pooled rows among themselves (each row itself excluded) in place
            # of one per pair of roles: the nearest distance is the smallest over the roles, and
            # the pooled search's small distances prune far more than a search of a smaller role
            pooled = stack_blocks([self.encoded.block(r, cols) for r in roles])
            nb = kneighbors(pooled, pooled, metric, 1, exclude_self=True, backend=self.neighbour_backend)
            return nb.distances, nb.indices

        # the roles pooled name both sides: a drop-and-retest of unchanged roles reads the run's
        name = "+".join(roles)
        return search(self.encoded, "days", name, name, cols, metric, 1, run)[0][:, 0]

    def within(self, role: str, columns: Sequence[str], metric: DistanceMetric,
               frames: Sequence[pd.DataFrame], radius: np.ndarray) -> list[tuple[np.ndarray, ...]]:
        cols = list(columns)
        enc = extending_encoder(self.encoded.encoder, self.tables, cols, categorical_only=False)
        blocks = [enc.encode(f, cols) for f in frames]
        return split_pairs(pairs_within(self.encoded.block(role, cols), stack_blocks(blocks), metric,
                                        np.asarray(radius, dtype=float), self.neighbour_backend),
                           [b.n_rows for b in blocks])

    def balanced_rows(self, role: str, columns: Sequence[str], n: int, seed: int) -> np.ndarray:
        frame = self.tables.get(role)
        if n >= len(frame):
            return np.arange(len(frame))
        keys = balanced_keys(frame[list(columns)], seed, role)
        return np.sort(np.argsort(keys, kind="stable")[:n])

    def encoded_rows(self, role: str, columns: Sequence[str], rows: np.ndarray) -> Block:
        # a slice of the run's block: no block encoded and kept per column set
        return _rows_of(self.encoded.block(role), columns, rows)

    def take(self, role: str, rows: np.ndarray, columns: Sequence[str]) -> pd.DataFrame:
        return self.tables.get(role)[list(columns)].iloc[np.asarray(rows)].reset_index(drop=True)

    def key_matches(self, frames: Sequence[pd.DataFrame], columns: Sequence[str], roles: Sequence[str]
                    ) -> list[tuple[np.ndarray, np.ndarray]]:
        return [only_matches(*got) for got in self.key_counts(frames, [columns], roles)[0]]

    def key_counts(self, frames: Sequence[pd.DataFrame], column_sets: Sequence[Sequence[str]],
                   roles: Sequence[str]) -> list[list[tuple[np.ndarray, np.ndarray]]]:
        from ..data.encoding import Block, row_identities

        every = list(dict.fromkeys(c for s in column_sets for c in s))
        enc = extending_encoder(self.encoded.encoder, self.tables, every, categorical_only=True)
        # the tables' rows by the run's encoder (the copy's codes for them; their factors kept)
        pooled = [self.encoded.encoder.encode(self.tables.get(r), every, categorical_only=True).cat
                  for r in roles]
        asked = [enc.encode(f, every, categorical_only=True).cat for f in frames]
        out = []
        for cols in column_sets:  # loop over column sets, vectorised over rows
            at = [every.index(c) for c in cols]

            def sub(codes: np.ndarray, at: list[int] = at) -> Block:
                return Block(np.zeros((codes.shape[0], 0)), codes[:, at], (), tuple(map(str, at)))

            ids = row_identities(*[sub(c) for c in pooled], *[sub(c) for c in asked])
            out.append(key_counts_of(np.concatenate(ids[:len(pooled)]), ids[len(pooled):]))
        return out

    def key_counts_rows(self, role: str, rows: np.ndarray | None, column_sets: Sequence[Sequence[str]],
                        roles: Sequence[str]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        every = list(dict.fromkeys(c for s in column_sets for c in s))
        at = np.arange(self.n_rows(role)) if rows is None else np.asarray(rows, dtype=np.int64)
        for per in self.key_counts([self.take(role, at, every)], column_sets, roles):
            yield per[0]

    def unique_sets(self, column_sets: Sequence[Sequence[str]], roles: Sequence[str]) -> np.ndarray:
        from ..data.encoding import row_identities

        out = np.zeros(sum(self.n_rows(r) for r in roles), dtype=np.int64)
        for cols in column_sets:  # loop over column sets, vectorised over rows
            ids = np.concatenate(row_identities(*[self._codes(r, list(cols), {}) for r in roles]))
            out += np.bincount(ids)[ids] == 1
        return out

    def cells_equal(self, frame: pd.DataFrame, positions: np.ndarray, columns: Sequence[str],
                    roles: Sequence[str]) -> np.ndarray:
        cols = list(columns)
        enc = extending_encoder(self.encoded.encoder, self.tables, cols, categorical_only=True)
        pos = np.asarray(positions, dtype=np.int64)
        real = np.empty((pos.size, len(cols)), dtype=np.int64)
        start = 0
        for role in roles:
            n = self.n_rows(role)
            sel = np.flatnonzero((pos >= start) & (pos < start + n))
            rows = self.tables.get(role)[cols].iloc[pos[sel] - start]
            real[sel] = enc.encode(rows, cols, categorical_only=True).cat
            start += n
        return enc.encode(frame, cols, categorical_only=True).cat == real

    # --- distances in exact seconds (the DCR metrics' units) --------------------------------------
    def _seconds_block(self, role: str, columns: Sequence[str], rows: np.ndarray | None = None) -> Block:
        block = self.encoded.block(role, list(columns), exact_datetimes=True)
        return block if rows is None else block.take(np.asarray(rows, dtype=np.int64))

    def ranges_seconds(self, columns: Sequence[str], roles: Sequence[str] = ("original",)) -> np.ndarray:
        return self.encoded.ranges(list(columns), tuple(roles), exact_datetimes=True)

    def kneighbors_seconds(self, query: str, reference: str, columns: Sequence[str],
                           metric: DistanceMetric, k: int, *,
                           query_rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        from .neighbors import kneighbors
        from .reuse import search

        if query == reference:
            raise ValueError("kneighbors_seconds: two different roles")  # a bug

        def run(q_rows: np.ndarray | None, _r_rows: None) -> tuple[np.ndarray, np.ndarray]:
            nb = kneighbors(self._seconds_block(query, columns, q_rows), self._seconds_block(reference, columns),
                            metric, k, backend=self.neighbour_backend)
            return nb.distances, nb.indices

        return search(self.encoded, "seconds", query, reference, columns, metric, k, run,
                      query_rows=query_rows, exact_datetimes=True)

    def nearest_reached(self, query: str, references: Sequence[str], columns: Sequence[str],
                        metric: DistanceMetric, *, query_rows: np.ndarray | None = None
                        ) -> tuple[list[np.ndarray], np.ndarray]:
        from .neighbors import nearest_ties
        from .neighbors.distinct import distinct_rows
        from .reuse import search

        q = self._seconds_block(query, columns, query_rows)
        blocks = [self._seconds_block(r, columns) for r in references]
        pooled = stack_blocks(blocks)
        first, inverse = distinct_rows(pooled)  # identical rows: one search row, reached together
        ref = pooled.take(first)

        def run(q_rows: np.ndarray | None, _r_rows: None) -> tuple[np.ndarray, np.ndarray]:
            nb, ties = nearest_ties(self._seconds_block(query, columns, q_rows), ref, metric,
                                    backend=self.neighbour_backend)
            return np.column_stack([nb.distances[:, 0], ties]), nb.indices  # (distance, ties), nearest

        # a drop-and-retest reads the kept release rows' answers from the run's (engine.reuse)
        # (indices among the distinct pooled rows and a tie count: not renumbered when the release
        # is the reference)
        got, nearest = search(self.encoded, "nearest-ties", query, "+".join(references), columns, metric,
                              1, run, query_rows=query_rows, exact_datetimes=True, renumber=False)
        dist, ties = got[:, 0], got[:, 1]
        # only a query with several rows at its nearest distance has rows to list beyond its nearest
        radius = np.where(ties > 1, dist, -1.0)
        at, r, _ = pairs_within(q, ref, metric, radius, backend=self.neighbour_backend)
        won = np.zeros(first.size, dtype=bool)
        won[nearest[ties > 0, 0]] = True  # ties 0: no reference row at a distance, nothing won
        won[r] = True
        won = won[inverse]
        bounds = np.cumsum([0, *(b.n_rows for b in blocks)])
        return ([won[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)],
                np.bincount(at, minlength=q.n_rows) > 1)

    # --- the membership attacks: seeded draws, searches and near copies of rows on hand -----------
    def content_draw(self, roles: Sequence[str], columns: Sequence[str], n: int, rng: np.random.Generator, *,
                     among: np.ndarray | None = None) -> np.ndarray:
        cols = list(columns)
        frames = [self.tables.get(r)[cols] for r in roles]
        frame = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
        rows = np.arange(len(frame)) if among is None else np.asarray(among, dtype=np.int64)
        if n >= rows.size:
            return rows
        if among is not None:
            frame = frame.iloc[rows]
        from ..data.hashing import row_hashes

        return draw_in_content_order(row_hashes(frame), rows, n, rng)

    def kneighbors_block(self, query: Block, reference: str, columns: Sequence[str],
                         metric: DistanceMetric, k: int) -> tuple[np.ndarray, np.ndarray]:
        from .neighbors import kneighbors
        from .reuse import block_name, search

        def run(q_rows: np.ndarray | None, _r_rows: None) -> tuple[np.ndarray, np.ndarray]:
            q = query if q_rows is None else query.take(np.asarray(q_rows, dtype=np.int64))
            nb = kneighbors(q, self.encoded.block(reference, list(columns)), metric, k,
                            backend=self.neighbour_backend)
            return nb.distances, nb.indices

        return search(self.encoded, "days", block_name(query), reference, columns, metric, k, run)

    def kneighbors_block_pooled(self, query: Block, references: Sequence[str], columns: Sequence[str],
                                metric: DistanceMetric, k: int) -> tuple[np.ndarray, np.ndarray]:
        from .neighbors import kneighbors
        from .reuse import block_name, search

        cols, roles = list(columns), list(references)

        def run(q_rows: np.ndarray | None, _r_rows: None) -> tuple[np.ndarray, np.ndarray]:
            # one search of the pool: a query's k nearest over the pool prune far more than a
            # search of each role for its own k nearest
            q = query if q_rows is None else query.take(np.asarray(q_rows, dtype=np.int64))
            pooled = stack_blocks([self.encoded.block(r, cols) for r in roles])
            nb = kneighbors(q, pooled, metric, k, backend=self.neighbour_backend)
            return nb.distances, nb.indices

        # the roles pooled name the reference: a drop-and-retest of unchanged roles reads the run's
        return search(self.encoded, "days", block_name(query), "+".join(roles), cols, metric, k, run)

    def kneighbors_held(self, query: Block, reference: Block, metric: DistanceMetric, k: int
                        ) -> tuple[np.ndarray, np.ndarray]:
        from .neighbors import kneighbors
        from .reuse import block_name, search

        def run(q_rows: np.ndarray | None, _r_rows: None) -> tuple[np.ndarray, np.ndarray]:
            q = query if q_rows is None else query.take(np.asarray(q_rows, dtype=np.int64))
            nb = kneighbors(q, reference, metric, k, backend=self.neighbour_backend)
            return nb.distances, nb.indices

        # both sides named by their bytes: a re-test holding the same rows reads the run's answer
        cols = (*reference.num_columns, *reference.cat_columns)
        return search(self.encoded, "held", block_name(query), block_name(reference), cols, metric, k, run)

    def kneighbors_rows_held(self, role: str, columns: Sequence[str], rows: np.ndarray, reference: Block,
                             metric: DistanceMetric, k: int) -> tuple[np.ndarray, np.ndarray]:
        from .neighbors import kneighbors
        from .reuse import block_name, search

        def run(q_rows: np.ndarray | None, _r_rows: None) -> tuple[np.ndarray, np.ndarray]:
            at = np.arange(self.n_rows(role)) if q_rows is None else np.asarray(q_rows, dtype=np.int64)
            nb = kneighbors(self.encoded_rows(role, columns, at), reference, metric, k,
                            backend=self.neighbour_backend)
            return nb.distances, nb.indices

        # an answer is its query row's alone: a re-test asking release rows reads those it shares
        # with the run's (engine.reuse), the reference named by its bytes
        return search(self.encoded, "held", role, block_name(reference), list(columns), metric, k, run,
                      query_rows=np.asarray(rows, dtype=np.int64))

    def near_counts(self, role: str, columns: Sequence[str], query: Block) -> tuple[np.ndarray, np.ndarray]:
        from .cells import near_counts

        return near_counts(query, self.encoded.block(role, list(columns)))

    def most_equal_cells(self, role: str, columns: Sequence[str], query: Block, idx: np.ndarray
                         ) -> np.ndarray:
        from .cells import most_equal_cells

        return most_equal_cells(query, self.encoded.block(role, list(columns)), idx)

    # --- tolerance matches (new_row_synthesis) ---------------------------------------------------
    def rows_matched(self, query: str, reference: str, columns: Sequence[str], tol: np.ndarray, *,
                     relative: bool = False, query_rows: np.ndarray | None = None,
                     reference_rows: np.ndarray | None = None) -> np.ndarray:
        from .reuse import RELEASE, release_counts, tracked

        if reference == RELEASE and query != RELEASE and query_rows is None and reference_rows is None \
                and tracked(self.encoded):
            # every record against the whole release (the evidence's join): by counts, which a
            # re-test reads from the run less the dropped rows' (engine.reuse.release_counts)
            def count(qb: Block, rb: Block) -> np.ndarray:
                return match_counts(rb.num, rb.cat, qb.num, qb.cat, tol, relative_to_synthetic=relative)

            key = ("match", np.asarray(tol, dtype=float).tobytes(), np.shape(tol), bool(relative))
            return release_counts(self.encoded, key, query, list(columns), count) > 0
        q = self.encoded.block(query, list(columns))
        r = self.encoded.block(reference, list(columns))
        if query_rows is not None:
            q = q.take(np.asarray(query_rows, dtype=np.int64))
        if reference_rows is not None:
            r = r.take(np.asarray(reference_rows, dtype=np.int64))
        return match_rows(r.num, r.cat, q.num, q.cat, tol, relative_to_synthetic=relative)

    # --- the anonymeter trio: canonical rows in content-hash order, neighbours among them --------
    def distinct_order(self, role: str, columns: Sequence[str]) -> np.ndarray:
        from ..data.hashing import distinct_groups

        return distinct_groups(self.tables.get(role)[list(columns)])[0]

    def value_bounds(self, columns: Sequence[str], roles: Sequence[str], *,
                     rows: Mapping[str, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
        from ..data.encoding import value_bounds

        rows = rows or {}
        if not roles:
            return np.zeros(0), np.zeros(0)
        blocks = [self.encoded.block(r) for r in roles]  # every numeric column, no copy of them
        # a whole table's bounds kept per role (asked by most tests), a subset's reduced here;
        # bounds of parts combine by minimum / maximum (none is NaN: inf, -inf without a value)
        parts = [self.encoded.bounds(r) if rows.get(r) is None else value_bounds(b, rows=[rows[r]])
                 for r, b in zip(roles, blocks, strict=True)]
        lo = np.minimum.reduce([p[0] for p in parts])
        hi = np.maximum.reduce([p[1] for p in parts])
        at = [blocks[0].num_columns.index(c) for c in columns if c in blocks[0].num_columns]
        return lo[at], hi[at]

    def kneighbors_among(self, queries: Sequence[tuple[str, np.ndarray | None]], reference: str,
                         reference_rows: np.ndarray, columns: Sequence[str], metric: DistanceMetric,
                         k: int) -> tuple[np.ndarray, np.ndarray]:
        from .neighbors.distinct import kneighbors_distinct, row_groups
        from .reuse import search

        cols = list(columns)

        def run(q_rows: np.ndarray | None, r_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            # slices of the run's encoded block of each role (encoded once, no block kept per column set)
            q = stack_blocks([self.encoded.block(r).select(cols) if rows is None
                              else self.encoded.block(r).select(cols).take(np.asarray(rows, dtype=np.int64))
                              for r, rows in queries])
            if q_rows is not None:
                q = q.take(np.asarray(q_rows, dtype=np.int64))
            ref = self.encoded.block(reference).select(cols).take(np.asarray(r_rows, dtype=np.int64))
            first, inverse = row_groups(q)  # equal query rows share their neighbours: searched once
            nb = kneighbors_distinct(q.take(first), ref, metric, k, backend=self.neighbour_backend)
            return nb.distances[inverse], nb.indices[inverse]

        if any(rows is not None for _, rows in queries):  # some rows (the attacks'): not kept
            return run(None, reference_rows)
        # every row of the roles pooled: a drop-and-retest renumbers the run's answers (engine.reuse)
        return search(self.encoded, "among", "+".join(r for r, _ in queries), reference, cols, metric, k,
                      run, reference_rows=np.asarray(reference_rows, dtype=np.int64))


    def value_summaries(self, role: str, columns: Sequence[str]) -> dict[str, dict[str, Any]]:
        sdtypes = {c: self.tables.schema.columns[c].sdtype for c in columns}
        return merge_value_summaries([value_summary(self.tables.get(role), list(columns), sdtypes)])

    def kneighbors_frame_seconds(self, frame: pd.DataFrame, reference: str, columns: Sequence[str],
                                 metric: DistanceMetric, k: int) -> tuple[np.ndarray, np.ndarray]:
        from .neighbors import kneighbors

        q = self.encoded.encode(frame, list(columns), exact_datetimes=True)
        nb = kneighbors(q, self._seconds_block(reference, columns), metric, k, backend=self.neighbour_backend)
        return nb.distances, nb.indices

    # --- singling out: conjunctive queries counted over chosen rows -------------------------------
    def encode_frame(self, frame: pd.DataFrame, columns: Sequence[str]) -> Block:
        return self.encoded.encode(frame, list(columns))

    def _matrix(self, role: str, columns: Sequence[str], rows: np.ndarray | None) -> np.ndarray:
        """The :func:`query_matrix` of ``role`` on ``columns`` at canonical positions ``rows``
        (sliced from the run's encoded block: no block kept per column set)."""
        return _query_matrix_at(self.encoded.block(role), columns, rows)

    def _queried(self, role: str, columns: Sequence[str], rows: np.ndarray | None) -> _QueryTable:
        """The query table of ``role`` on ``columns`` at ``rows`` (``None``: every row), reused
        while questions ask of the same rows (one entry). The rows asked are compared as given
        (no sort or digest per batch of a search); rows that are every row in some order (a table
        without duplicates) share the every-row table."""
        cols = tuple(columns)
        asked = None if rows is None else np.asarray(rows, dtype=np.int64)
        with self._query_lock:
            kept = self._query_table
        if kept is not None and kept.answers(role, cols, asked):
            return kept
        n = self.n_rows(role)
        at = np.arange(n, dtype=np.int64) if asked is None else np.sort(asked)
        every = asked is None or (at.size == n and bool((at == np.arange(n)).all()))
        if every and kept is not None and kept.every and kept.answers(role, cols, None):
            kept.remember(asked)  # the same every-row table, asked for by these rows too
            return kept
        with self._query_lock:  # the one table kept is replaced: not held while the next is built
            if self._query_table is kept:
                self._query_table = None
        kept = None
        table = _QueryTable(role, cols, self._matrix(role, cols, None if every else at), at, every,
                            view=self.encoded)
        table.remember(asked)
        with self._query_lock:
            self._query_table = table
        return table

    def query_counts(self, role: str, columns: Sequence[str], queries: Queries, *, cap: int | None = None,
                     rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        table = self._queried(role, columns, rows)
        return query_counts_of(table.X, table.at, queries, cap, index=table.index())

    def query_values(self, role: str, columns: Sequence[str], positions: np.ndarray, cols: np.ndarray | None, *,
                     rows: np.ndarray | None = None) -> np.ndarray:
        """From the query table :meth:`query_counts` reads (:meth:`_queried`: the rows' matrix
        made once, not encoded again each batch)."""
        table = self._queried(role, columns, rows)
        positions = np.asarray(positions, dtype=np.int64)
        uniq, inv = np.unique(positions, return_inverse=True)
        found, X = held_rows(table.X, table.at, uniq)
        if found.size != uniq.size:  # a position outside the asked rows: a bug, reported as an error
            raise RuntimeError(f"{uniq.size - found.size} asked {role} rows are not among the query rows")
        return picked_values(X, inv.reshape(positions.shape), cols)

    def query_subset_counts(self, role: str, columns: Sequence[str], queries: Queries,
                            subsets: Sequence[np.ndarray], *, cap: int = 2) -> np.ndarray:
        table = self._queried(role, columns, None)
        parts = [subset_counts_of(table.X, bits, queries, min(64, len(subsets) - 64 * i), cap,
                                  index=table.index())
                 for i, bits in enumerate(subset_bits(table.X.shape[0], subsets))]
        return np.concatenate(parts) if parts else np.zeros((0, queries[0].shape[0]), dtype=np.int64)

    def value_flags(self, role: str, columns: Sequence[str], rows: np.ndarray) -> dict[str, np.ndarray]:
        # a column of the query matrix at a time, from the run's block: no matrix of the rows
        # (8 bytes a cell: 1.2 GB for a 10M-row release of 15 columns) made for the flags
        block, at = self.encoded.block(role), np.asarray(rows, dtype=np.int64)
        return _value_flags_by_column(at.size, len(columns),
                                      lambda j: _query_matrix_at(block, [columns[j]], at)[:, 0])

    def medians(self, role: str, columns: Sequence[str], rows: np.ndarray) -> np.ndarray:
        # a column at a time (no copy of the block's rows, no matrix of them: 16 bytes a cell)
        block, at = self.encoded.block(role), np.asarray(rows, dtype=np.int64)
        out = np.full(len(columns), np.nan)
        for j, c in enumerate(columns):  # loop over columns
            x = _query_matrix_at(block, [c], at)[:, 0]
            if not np.isnan(x).all():
                out[j] = np.nanmedian(x)
        return out


def _positions(block: Block, columns: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The positions of ``columns`` among ``block``'s numeric and categorical columns (in the
    order given, by kind, as :meth:`Block.select`); a column the block lacks is refused."""
    cols = list(columns)
    missing = [c for c in cols if c not in block.num_columns and c not in block.cat_columns]
    if missing:
        raise ValueError(f"columns {missing} are not encoded (id or text columns?)")  # a bug
    return (np.array([block.num_columns.index(c) for c in cols if c in block.num_columns], dtype=np.intp),
            np.array([block.cat_columns.index(c) for c in cols if c in block.cat_columns], dtype=np.intp))


def _rows_of(block: Block, columns: Sequence[str], rows: np.ndarray | None) -> Block:
    """``block`` at ``rows`` (``None``: every row) and ``columns``, each cell copied once."""
    from ..data.encoding import Block

    num, cat = _positions(block, columns)
    if rows is None:
        return block.select(columns)
    at = np.asarray(rows, dtype=np.int64)
    return Block(np.ascontiguousarray(block.num[np.ix_(at, num)]),
                 np.ascontiguousarray(block.cat[np.ix_(at, cat)]),
                 tuple(block.num_columns[i] for i in num), tuple(block.cat_columns[i] for i in cat))


def _query_matrix_at(block: Block, columns: Sequence[str], rows: np.ndarray | None) -> np.ndarray:
    """:func:`query_matrix` of ``block`` at ``rows`` (``None``: every row) and ``columns``."""
    return _query_matrix_of(block, *_positions(block, columns), rows)


class _QueryTable:
    """The :func:`query_matrix` of ``role`` on ``columns`` at the canonical positions ``at``
    (ascending; ``every``: all of the role's rows), the rows it was last asked for (as given, or
    ``None`` for every row) and, built at its first use, its column index (thread-safe)."""

    def __init__(self, role: str, columns: tuple[str, ...], X: np.ndarray, at: np.ndarray,
                 every: bool, view: Any = None) -> None:
        self.role, self.columns, self.X, self.at, self.every = role, columns, X, at, every
        self._asked: np.ndarray | None = None
        self._index: Any = None
        self._lock = threading.Lock()
        from .reuse import RELEASE

        # the encoded view of a run that keeps its structures for its drop-and-retest, or of
        # such a re-test: the whole release's column orders kept, or read (engine.reuse)
        self._view = view if every and role == RELEASE else None

    def remember(self, asked: np.ndarray | None) -> None:
        """Keep a copy of the rows this table was asked for (``None``: every row)."""
        with self._lock:
            self._asked = None if asked is None else asked.copy()

    def answers(self, role: str, columns: tuple[str, ...], asked: np.ndarray | None) -> bool:
        """Whether this table holds ``role`` on ``columns`` at the rows ``asked`` (``None``: every
        row), compared as last asked for (same positions in the same order) or as every row."""
        if role != self.role or columns != self.columns:
            return False
        if asked is None:
            return self.every
        with self._lock:
            return self._asked is not None and np.array_equal(self._asked, asked)

    def index(self) -> Any:
        from . import queries as Q
        from .reuse import keep_release_structure

        with self._lock:
            if self._index is None:
                self._index = Q.ColumnIndex(self.X, orders=self._run_orders())
                if self._view is not None:  # for a drop-and-retest: its orders (at 1M x 15, 60 MB)
                    keep_release_structure(self._view, ("column orders", self.columns), (self._index.order,))
            return self._index

    def _run_orders(self) -> Callable[[int], np.ndarray | None] | None:
        """A drop-and-retest's candidate column orders of the whole release: its run's (kept by
        :meth:`index`) without the dropped rows, the kept rows renumbered (their order among
        themselves does not change); :class:`~.queries.ColumnIndex` checks each."""
        from .reuse import renumbering, run_release_structure

        got = None if self._view is None else run_release_structure(self._view, ("column orders", self.columns))
        if got is None:
            return None
        (orders,), parent = got
        if orders.shape[1] <= int(parent.max(initial=-1)) or parent.size != self.X.shape[0]:
            return None
        new_of = renumbering(np.arange(orders.shape[1]), parent)  # each run row's place here, -1: dropped

        def order(j: int) -> np.ndarray:
            o = new_of[orders[j]]
            return o[o >= 0]

        return order


def draw_in_content_order(hashes: np.ndarray, rows: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """:meth:`Backend.content_draw` from the content hashes of the rows ``rows`` (in that order):
    ``n`` ranks drawn by ``rng`` over the stable hash order, the sorted rows at those ranks.

    Examples
    --------
    >>> draw_in_content_order(np.array([9, 3, 5], np.uint64), np.array([4, 6, 8]), 2,
    ...                       np.random.default_rng(0)).tolist()
    [4, 8]
    """
    order = np.argsort(np.asarray(hashes, dtype=np.uint64), kind="stable")
    return np.sort(np.asarray(rows, dtype=np.int64)[order[rng.choice(order.size, n, replace=False)]])


def extending_encoder(encoder: Any, tables: Any, columns: Sequence[str], categorical_only: bool) -> Any:
    """A copy of a run's ``encoder`` that codes rows from outside the tables (leak rows) as the
    tables' rows are coded: the tables' values of ``columns`` are learnt by the run's encoder first
    (every role, in order), then it is copied, so a value of the tables gets its code, a new value
    a code of its own, and the run's codes never change (whoever asks first)."""
    import copy

    learn = [c for c in columns if categorical_only or not encoder.is_numeric(c)]
    for role in tables.roles:
        frame = tables.get(role)
        encoder.learn(frame, [c for c in learn if c in frame.columns], once=True)
    out = copy.copy(encoder)
    out._vocab = {k: dict(v) for k, v in encoder._vocab.items()}
    out._frozen = False
    return out


def stack_blocks(blocks: Sequence[Block]) -> Block:
    """Blocks of the same columns, one under the other (:meth:`Block.stack <synthguard.data.encoding.Block.stack>`)."""
    from ..data.encoding import Block

    return Block.stack(blocks)


#: Query rows :func:`pairs_within` searches at a time.
_WITHIN_ROWS = 1 << 19


def pairs_within(query: Block, reference: Block, metric: DistanceMetric, radius: np.ndarray,
                 backend: str = "auto") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every ``(query row, reference row, distance)`` at distance ``<= radius[query row]`` (queries
    with a negative radius take no part), sorted by query row, then distance, then reference row:
    a search within each query's radius (:func:`~synthguard.engine.neighbors.kneighbors_within`),
    widened (k doubled) for the queries with k rows inside it. A query's pairs depend on that
    query alone, so the rows of a table may be searched in any batches (partitions): here
    :data:`_WITHIN_ROWS` query rows at a time.

    Examples
    --------
    >>> from synthguard.data.encoding import Block
    >>> from synthguard.engine.neighbors import gower
    >>> q = Block(np.array([[0.0], [5.0]]), np.zeros((2, 0), np.int64), ("x",), ())
    >>> r = Block(np.array([[0.1], [0.2], [9.0]]), np.zeros((3, 0), np.int64), ("x",), ())
    >>> [a.tolist() for a in pairs_within(q, r, gower(np.array([10.0])), np.array([0.05, -1.0]))[:2]]
    [[0, 0], [0, 1]]
    """
    from .neighbors import kneighbors_within

    out_q, out_r, out_d = [], [], []
    radius = np.asarray(radius, dtype=float)
    # the queries a batch of rows at a time (a query's pairs are its own): a search's copies of
    # its queries and its k slots a query (7 arrays of 8 bytes x k) are a batch's, not the whole
    # release's (8.1 GB beside the 10M release's block at k = 8; 0.4 GB a batch)
    for a in range(0, query.n_rows, _WITHIN_ROWS):
        rows = np.arange(a, min(a + _WITHIN_ROWS, query.n_rows), dtype=np.int64)
        pending = rows[radius[rows] >= 0]
        k = min(8, reference.n_rows)
        while pending.size and k > 0:
            nb = kneighbors_within(query.take(pending), reference, metric, k, radius[pending], backend=backend)
            d, idx = nb.distances, nb.indices
            complete = (k >= reference.n_rows) | (idx[:, -1] < 0)  # every row inside the radius found
            jj, kk = np.nonzero(complete[:, None] & (idx >= 0))
            out_q.append(pending[jj])
            out_r.append(idx[jj, kk])
            out_d.append(d[jj, kk])
            pending = pending[~complete]
            k = min(2 * k, reference.n_rows)
    if not out_q:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    q, r, d = (np.concatenate(a) for a in (out_q, out_r, out_d))
    order = np.lexsort((r, d, q))  # each query's pairs by distance, then row
    return q[order].astype(np.int64), r[order].astype(np.int64), d[order]


def split_pairs(pairs: tuple[np.ndarray, np.ndarray, np.ndarray], sizes: Sequence[int]
                ) -> list[tuple[np.ndarray, ...]]:
    """:func:`pairs_within` against stacked frames, split per frame (rows renumbered in each)."""
    q, r, d = pairs
    out, start = [], 0
    for n in sizes:
        sel = (r >= start) & (r < start + n)
        out.append((q[sel], r[sel] - start, d[sel]))
        start += n
    return out


_MAX_PAIRS = 4_000_000


def _joint_ids(*codes: np.ndarray) -> list[np.ndarray]:
    """Dense ids of the rows of several code matrices (same columns): equal rows, equal ids."""
    from ..data.encoding import Block, row_identities

    if codes[0].shape[1] == 0:
        return [np.zeros(c.shape[0], dtype=np.int64) for c in codes]
    blocks = [Block(np.zeros((c.shape[0], 0)), np.ascontiguousarray(c, dtype=np.int64), (),
                    tuple(f"c{j}" for j in range(c.shape[1]))) for c in codes]
    return row_identities(*blocks)


def match_rows(real_num: np.ndarray, real_cat: np.ndarray, syn_num: np.ndarray, syn_cat: np.ndarray,
               tol: np.ndarray | float, *, relative_to_synthetic: bool = False) -> np.ndarray:
    """Whether each synthetic row matches at least one original row.

    Parameters
    ----------
    real_num, syn_num : ndarray of float, shape (n, p) / (m, p)
        Numeric columns (NaN = missing).
    real_cat, syn_cat : ndarray of int64, shape (n, q) / (m, q)
        Categorical codes from shared vocabularies.
    tol : float or ndarray of shape (p,)
        Absolute tolerance per numeric column, or (``relative_to_synthetic``) the relative factor
        applied to each synthetic value: ``|o - s| <= |tol * s|``.

    A synthetic row's answer depends on it and on the set of original rows alone (the window on
    the pivot column is a superset of the matches, each candidate then checked on every column),
    so original rows may be split in any parts and the answers OR-ed (:meth:`Backend.rows_matched`).

    Examples
    --------
    >>> real_num, real_cat = np.array([[1.0], [np.nan]]), np.array([[0], [1]])
    >>> syn_num, syn_cat = np.array([[1.05], [np.nan], [1.0]]), np.array([[0], [1], [1]])
    >>> match_rows(real_num, real_cat, syn_num, syn_cat, 0.1).tolist()
    [True, True, False]
    """
    rg, sg = _match_groups(real_num, real_cat, syn_num, syn_cat)
    if syn_num.shape[1] == 0:
        return np.isin(sg, rg)
    matched = np.zeros(syn_num.shape[0], dtype=bool)
    for owner in _matching_pairs(real_num, syn_num, rg, sg, tol, relative_to_synthetic):
        matched[owner] = True
    return matched


def match_counts(real_num: np.ndarray, real_cat: np.ndarray, syn_num: np.ndarray, syn_cat: np.ndarray,
                 tol: np.ndarray | float, *, relative_to_synthetic: bool = False) -> np.ndarray:
    """How many original rows each synthetic row matches (:func:`match_rows`' rule; ``> 0`` is
    :func:`match_rows`), int64. A count is a sum over the original rows, each pair decided by its
    two rows alone: the count against some original rows is the count against all of them minus
    the count against the others (a drop-and-retest's release, :func:`~synthguard.engine.reuse.release_counts`).

    Examples
    --------
    >>> real_num, real_cat = np.array([[1.0], [1.02], [np.nan]]), np.array([[0], [0], [1]])
    >>> syn_num, syn_cat = np.array([[1.05], [np.nan], [1.0]]), np.array([[0], [1], [1]])
    >>> match_counts(real_num, real_cat, syn_num, syn_cat, 0.1).tolist()
    [2, 1, 0]
    """
    m = syn_num.shape[0]
    rg, sg = _match_groups(real_num, real_cat, syn_num, syn_cat)
    if syn_num.shape[1] == 0:  # the key is the whole rule: every original row of the group
        return np.bincount(rg, minlength=int(max(rg.max(initial=-1), sg.max(initial=-1))) + 1)[sg].astype(np.int64)
    counts = np.zeros(m, dtype=np.int64)
    for owner in _matching_pairs(real_num, syn_num, rg, sg, tol, relative_to_synthetic):
        counts += np.bincount(owner, minlength=m)
    return counts


def _match_groups(real_num: np.ndarray, real_cat: np.ndarray, syn_num: np.ndarray, syn_cat: np.ndarray
                  ) -> list[np.ndarray]:
    """The join key's dense ids of the original and synthetic rows: categorical codes and the
    missing pattern of the numeric columns."""
    rk = np.concatenate([real_cat, np.isnan(real_num).astype(np.int64)], axis=1)
    sk = np.concatenate([syn_cat, np.isnan(syn_num).astype(np.int64)], axis=1)
    return _joint_ids(rk, sk)


def _matching_pairs(real_num: np.ndarray, syn_num: np.ndarray, rg: np.ndarray, sg: np.ndarray,
                    tol: np.ndarray | float, relative_to_synthetic: bool) -> Iterator[np.ndarray]:
    """The synthetic row of every matching (synthetic, original) pair, a bounded chunk of pairs at
    a time (a row once per original row it matches); ``rg``, ``sg``: :func:`_match_groups`; at
    least one numeric column."""
    p = syn_num.shape[1]
    tol = np.broadcast_to(np.asarray(tol, dtype=float), (p,))

    def allowed(s: np.ndarray, j: int) -> np.ndarray:
        return np.abs(tol[j] * s) if relative_to_synthetic else np.full(s.shape, tol[j])

    # pivot: the numeric column with the most distinct original values (narrowest windows)
    pivot = int(np.argmax([np.unique(real_num[:, j][~np.isnan(real_num[:, j])]).size for j in range(p)]))
    rv = np.where(np.isnan(real_num[:, pivot]), 0.0, real_num[:, pivot])
    sv = np.where(np.isnan(syn_num[:, pivot]), 0.0, syn_num[:, pivot])
    order = np.lexsort((rv, rg))
    rg_s, rv_s = rg[order], rv[order]
    width = allowed(sv, pivot) * (1 + 1e-9) + 1e-300
    width = np.where(np.isnan(syn_num[:, pivot]), 0.0, width)
    lo = merge_rank(rg_s, rv_s, sg, sv - width, strict=True)
    hi = merge_rank(rg_s, rv_s, sg, sv + width, strict=False)
    counts = np.maximum(hi - lo, 0)
    cand_rows = np.flatnonzero(counts > 0)
    if cand_rows.size == 0:
        return
    csum = np.cumsum(counts[cand_rows])
    start = 0
    while start < cand_rows.size:  # loop over chunks of bounded candidate pairs
        base = csum[start - 1] if start else 0
        stop = int(np.searchsorted(csum, base + _MAX_PAIRS, side="right"))
        stop = max(stop, start + 1)
        rows = cand_rows[start:stop]
        reps = counts[rows]
        owner = np.repeat(rows, reps)
        offs = np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps)
        cand = order[np.repeat(lo[rows], reps) + offs]
        ok = np.ones(owner.size, dtype=bool)
        for j in range(p):  # loop over numeric columns
            s = syn_num[owner, j]
            r = real_num[cand, j]
            with np.errstate(invalid="ignore"):
                close = np.abs(r - s) <= allowed(s, j)
            ok &= close | (np.isnan(s) & np.isnan(r))
        yield owner[ok]
        start = stop


def merge_rank(groups: np.ndarray, values: np.ndarray, q_groups: np.ndarray, q_values: np.ndarray, *,
                strict: bool) -> np.ndarray:
    """Per query, how many (group, value)-sorted rows come before it: rows with a smaller group, or
    the same group and a value ``< q`` (``strict``) / ``<= q``. One merged sort, no per-group loop."""
    n, m = groups.size, q_groups.size
    g = np.concatenate([groups, q_groups])
    v = np.concatenate([values, q_values])
    # tie order within equal (group, value): strict -> queries first; else rows first
    kind = np.concatenate([np.ones(n, np.int8), np.zeros(m, np.int8)]) if strict else \
        np.concatenate([np.zeros(n, np.int8), np.ones(m, np.int8)])
    order = np.lexsort((kind, v, g))
    is_row = order < n
    rows_before = np.cumsum(is_row) - is_row
    out = np.empty(m, dtype=np.int64)
    q_pos = ~is_row
    out[order[q_pos] - n] = rows_before[q_pos]
    return out


def quantile_ranks(n: int, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The two 0-based ranks NumPy's linear ``quantile`` of ``n`` values interpolates between for
    each of ``q`` (virtual index ``(n - 1) * q``; the last value above the end), and the weight.

    Examples
    --------
    >>> [a.tolist() for a in quantile_ranks(5, np.array([0.5, 0.6, 1.0]))]
    [[2, 2, 4], [3, 3, 4], [0.0, 0.3999999999999999, 0.0]]
    """
    q = np.asarray(q, dtype=np.float64)
    virtual = (int(n) - 1) * q
    prev = np.floor(virtual)
    gamma = virtual - prev.astype(np.intp)
    above = virtual >= n - 1
    return (np.where(above, n - 1, prev).astype(np.int64),
            np.where(above, n - 1, prev + 1).astype(np.int64), np.where(above, 0.0, gamma))


def quantiles_of_ranks(n: int, q: np.ndarray, order_stats: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """``np.quantile(values, q)`` of ``n`` values known through ``order_stats(ranks)`` (their values
    at 0-based ranks of the sorted order): the two order statistics around each virtual index, as
    NumPy picks them (:func:`quantile_ranks`), interpolated by NumPy's own ``quantile`` of those two
    values at the weight (``(2 - 1) * g == g`` exactly, so the same ``lerp`` with the same weight):
    bit for bit the quantiles of the whole array (``-0.0`` and ``0.0`` aside), without holding it.

    Examples
    --------
    >>> v = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0])
    >>> q = np.array([0.1, 0.5, 0.93])
    >>> bool((quantiles_of_ranks(v.size, q, lambda r: np.sort(v)[r]) == np.quantile(v, q)).all())
    True
    """
    q = np.asarray(q, dtype=np.float64)
    if not q.size:
        return np.zeros(0)
    prev, nxt, gamma = quantile_ranks(n, q)
    pair = np.stack([np.asarray(order_stats(prev), dtype=np.float64),
                     np.asarray(order_stats(nxt), dtype=np.float64)])  # (2, len(q))
    return np.diagonal(np.quantile(pair, gamma, axis=0)).copy()


def unique_matches(pooled: np.ndarray, asked: Sequence[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
    """:meth:`Backend.key_matches` from ids (equal values, equal ids): per array of ``asked``, the
    ``(row, pooled position)`` pairs whose id occurs exactly once in ``pooled``.

    Examples
    --------
    >>> unique_matches(np.array([3, 5, 5, 7]), [np.array([5, 7, 9, 3])])
    [(array([1, 3]), array([3, 0]))]
    """
    return [only_matches(*got) for got in key_counts_of(pooled, asked)]


def key_counts_of(pooled: np.ndarray, asked: Sequence[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
    """:meth:`Backend.key_counts` of one column set from ids (equal values, equal ids): per array
    of ``asked``, how many times each id occurs in ``pooled`` and its first position there
    (``-1``: none).

    Examples
    --------
    >>> key_counts_of(np.array([3, 5, 5, 7]), [np.array([5, 7, 9])])
    [(array([2, 1, 0]), array([ 1,  3, -1]))]
    """
    pooled = np.asarray(pooled, dtype=np.int64)
    size = int(max([pooled.max(initial=-1)] + [int(a.max(initial=-1)) for a in asked])) + 1
    count = np.bincount(pooled, minlength=size).astype(np.int64)
    first = np.full(size, -1, dtype=np.int64)
    uniq, at = np.unique(pooled, return_index=True)
    first[uniq] = at
    return [(count[a], first[a]) for a in (np.asarray(a, dtype=np.int64) for a in asked)]


def only_matches(count: np.ndarray, first: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:meth:`Backend.key_matches` from one frame's :meth:`Backend.key_counts`: the rows whose key
    one pooled row holds, with that row.

    Examples
    --------
    >>> only_matches(np.array([2, 1, 0, 1]), np.array([1, 3, -1, 0]))
    (array([1, 3]), array([3, 0]))
    """
    rows = np.flatnonzero(np.asarray(count) == 1)
    return rows.astype(np.int64), np.asarray(first, dtype=np.int64)[rows]


def balanced_keys(frame: pd.DataFrame, seed: int, label: str) -> np.ndarray:
    """The seeded content keys :meth:`Backend.balanced_rows` keeps the ``n`` smallest of (ties by
    position); a row's key depends on its content only, so partitions of a table can compute
    theirs apart.

    Examples
    --------
    >>> f = pd.DataFrame({"a": [1, 2, 1]})
    >>> k = balanced_keys(f, 0, "original")
    >>> bool(k[0] == k[2]), k.dtype.name
    (True, 'uint64')
    """
    from ..data.hashing import row_hashes
    from ..stats import make_rng

    h = row_hashes(frame)
    salt = make_rng(seed, "balanced_rows", label).integers(1, 2**62, dtype=np.uint64)
    with np.errstate(over="ignore"):
        mixed = (h ^ salt) * np.uint64(0x9E3779B97F4A7C15)
        mixed ^= mixed >> np.uint64(29)
    return mixed


_DAY_NS = np.int64(86_400 * 10**9)


def _value_sort_key(value: Any) -> tuple[str, str]:
    return type(value).__name__, str(value)


def value_summary(frame: pd.DataFrame, columns: Sequence[str], sdtypes: Mapping[str, str]
                  ) -> dict[str, dict[str, Any]]:
    """:meth:`Backend.value_summaries` of one table or partition (``sdtypes``: the columns'
    sdtypes); :func:`merge_value_summaries` combines partitions (and finishes one table).

    Examples
    --------
    >>> f = pd.DataFrame({"x": [1.0, None, 3.0], "k": ["b", "a", "b"]})
    >>> s = merge_value_summaries([value_summary(f, ["x", "k"], {"x": "numerical", "k": "categorical"})])
    >>> s["x"]["lo"], s["x"]["hi"], s["x"]["whole"], s["x"]["missing"], s["k"]["values"]
    (1.0, 3.0, True, 1, ['a', 'b'])
    """
    out: dict[str, dict[str, Any]] = {}
    for c in columns:  # loop over columns, vectorised over rows
        s = frame[c]
        vals = s.dropna()
        info: dict[str, Any] = {"rows": int(len(s)), "missing": int(s.isna().sum())}
        sd = sdtypes[c]
        if sd == "datetime":
            is_dt = pd.api.types.is_datetime64_any_dtype(s.dtype)
            try:
                ns = vals.astype("datetime64[ns]").to_numpy().astype("int64")
            except (TypeError, ValueError):  # not instants (a datetime column the loader kept as is)
                ns = np.zeros(0, dtype=np.int64)
            info.update(lo=int(ns.min()) if ns.size else None, hi=int(ns.max()) if ns.size else None,
                        whole_days=bool(is_dt and not np.any(ns % _DAY_NS)))
        elif sd == "numerical":
            v = vals.to_numpy(dtype=float)
            info.update(lo=float(v.min()) if v.size else None, hi=float(v.max()) if v.size else None,
                        whole=bool(np.all(np.mod(v, 1) == 0)))
        else:
            info["values"] = list(pd.unique(vals))
        out[c] = info
    return out


def merge_value_summaries(parts: Sequence[Mapping[str, Mapping[str, Any]]]) -> dict[str, dict[str, Any]]:
    """:func:`value_summary` of partitions combined into that of their union (counts summed, min of
    the mins, max of the maxes, flags and-ed, the distinct values of every partition made distinct
    and sorted by (type name, text)); of one summary, that table's."""
    out: dict[str, dict[str, Any]] = {}
    if not parts:
        return out
    for c in parts[0]:  # loop over columns
        got = [p[c] for p in parts]
        info: dict[str, Any] = {"rows": sum(g["rows"] for g in got), "missing": sum(g["missing"] for g in got)}
        if "lo" in got[0]:
            lo = [g["lo"] for g in got if g["lo"] is not None]
            hi = [g["hi"] for g in got if g["hi"] is not None]
            info.update(lo=min(lo) if lo else None, hi=max(hi) if hi else None)
            flag = "whole_days" if "whole_days" in got[0] else "whole"
            info[flag] = all(g[flag] for g in got)
        else:
            every = [v for g in got for v in g["values"]]  # a few distinct values a partition
            uniq = pd.unique(np.asarray(every, dtype=object)) if every else []
            info["values"] = sorted(uniq, key=_value_sort_key)
        out[c] = info
    return out
