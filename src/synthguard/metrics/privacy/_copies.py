"""Copies within a few cells, by hash joins: the exact-copy and near-copy tests' shared core.

A release row within ``k`` cells of a real record (training or control) is a near-copy of it
(``k = 0``: a verbatim copy); it *points at* the record when no other real record is within ``k``
cells of the row (:func:`identifying_matches`, the near-copy tests' flags). A record is *near-unique*
at ``k`` cells when no other real record is within ``k`` cells of it (:func:`near_pairs` joins
queries to such records: quasi-identifier linkage). Cells are compared by exact value (numeric cells
by their typed value, missing equal to missing) through hashes of each row: a block join over column
groups, or one hash join per masked column set, vectorised over rows; no n x m matrix.
:func:`copy_responses` measures what the run's leak rows (:mod:`synthguard.metrics._leakrows`) would
do to such a test."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ...core.arrays import equal_range, search_sorted, unique_codes
from ...data.hashing import cell_hashes, iter_set_sums, masked
from ...registry import Context

if TYPE_CHECKING:  # pragma: no cover
    from ...engine.backend import Backend

__all__ = ["CROWD_BUDGET", "CROWD_CHUNK", "KEY_COUNT_KEYS", "backend_chance_crowds", "backend_crowds", "backend_identifiable_share", "backend_matches", "chance_crowds", "control_chance", "copy_crowd", "copy_responses",
           "crowd_counts", "exact_copy_responses", "identifiable_share", "identifying_matches",
           "identifying_pairs", "key_counts_in_batches", "masked_hashes", "near_pairs", "within_pairs"]


def masked_hashes(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-cell hashes and row hashes of an int64 code matrix (equal codes, equal hashes): the
    64-bit cell hashes of :mod:`synthguard.data.hashing` (chain 0, keyed by column position).

    The row hash is the wrapping sum of the cell hashes, so the hash of a row with the columns
    ``S`` masked is ``row - cells[:, S].sum(axis=1)``: one subtraction per masked set.

    Examples
    --------
    >>> import numpy as np
    >>> cells, rows = masked_hashes(np.array([[1, 2], [1, 3]]))
    >>> masked = rows - cells[:, 1]  # column 1 masked
    >>> bool(masked[0] == masked[1])
    True
    """
    codes = np.asarray(codes, dtype=np.int64)
    cells = cell_hashes(codes, np.arange(codes.shape[1], dtype=np.uint64))
    return cells, cells.sum(axis=1, dtype=np.uint64)


def _code_matrices(ctx: Context, cols: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Pooled real (original then control) and release code matrices, exact values as codes.
    Encoded once per run and column set (``ctx.memo``: the copy tests, their crowds and chance
    baselines share them), read-only."""
    enc = ctx.encoded.encoder

    def codes(role: str) -> np.ndarray:
        b = enc.encode(ctx.tables.get(role), cols, categorical_only=True)
        return b.cat

    def compute() -> tuple[np.ndarray, np.ndarray]:
        real = np.concatenate([codes("original"), codes("control")], axis=0)
        rel = codes("synthetic")  # a new array of this call: nothing else holds it
        for a in (real, rel):
            a.setflags(write=False)  # shared by every caller of the run
        return real, rel

    # dropped once the copy tests are done (the release's codes: 8 bytes a cell); a later caller
    # encodes them again, the same codes
    return ctx.memo(("copy-code-matrices", tuple(cols)), compute, users=CODE_MATRIX_USERS)


#: the tests that read :func:`_code_matrices` (their memo is dropped once these have finished)
CODE_MATRIX_USERS = ("exact_matches", "near_copies", "near_copies_2")


#: Most candidate pairs the block join (:func:`within_pairs`) verifies before the masked-hash joins
#: take over.
PAIR_BUDGET = 20_000_000
#: Most keys (query rows x column sets) one :meth:`~synthguard.engine.backend.Backend.key_counts`
#: call of the masked-set joins asks (:func:`key_counts_in_batches`): the driver holds per set the
#: rows' keys, their distinct keys and two numbers a row (about 48 bytes a key), a batch at a time
#: (the 121 sets within two cells of 300,000 release rows at once took 3.3 GB on a cluster's driver)
KEY_COUNT_KEYS = 4_000_000


def key_counts_in_batches(data: Backend, frames: Sequence[pd.DataFrame], sets: Sequence[Sequence[str]],
                          roles: Sequence[str]) -> Iterator[list[tuple[np.ndarray, np.ndarray]]]:
    """``data.key_counts(frames, sets, roles)`` one set after another, asked in batches of at most
    :data:`KEY_COUNT_KEYS` keys (each set's counts depend on that set alone: the same numbers,
    a batch in memory at a time).

    Examples
    --------
    >>> from synthguard.registry import Context
    >>> real = pd.DataFrame({"a": [0, 0, 5], "b": [0, 1, 5]})
    >>> ctx = Context.from_frames(real, real, real.iloc[:1], canonical=False)
    >>> [per[0][0].tolist() for per in key_counts_in_batches(ctx.data, [real], [["a"], ["b"]], ["original"])]
    [[2, 2, 1], [1, 1, 1]]
    """
    rows = max(1, sum(len(f) for f in frames))
    step = max(1, KEY_COUNT_KEYS // rows)
    for a in range(0, len(sets), step):
        yield from data.key_counts(frames, sets[a:a + step], roles)


def _cardinalities(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per column, the number of distinct codes in the rows of ``a`` and ``b`` together: one
    counting pass over the columns' code ranges when they are narrow (the encoders' dense codes),
    row blocks at a time (contiguous reads); a sort for a column of wide range."""
    p = a.shape[1]
    lo = np.minimum(a.min(axis=0), b.min(axis=0))
    hi = np.maximum(a.max(axis=0), b.max(axis=0))
    narrow = hi.astype(np.float64) - lo.astype(np.float64) < 4 * (a.shape[0] + b.shape[0]) + 1024
    span = np.where(narrow, hi - np.where(narrow, lo, hi) + 1, 0)  # no int64 overflow
    out = np.zeros(p, dtype=np.int64)
    cols = np.flatnonzero(narrow)
    if cols.size:
        start = np.r_[0, np.cumsum(span[cols])]  # each narrow column's slots in one table
        seen = np.zeros(int(start[-1]), dtype=bool)
        shift = start[:-1] - lo[cols]
        step = max(1, 2_000_000 // cols.size)
        for m in (a, b):
            for s in range(0, m.shape[0], step):  # loop over row blocks, vectorised over cells
                seen[(m[s:s + step, cols] + shift).ravel()] = True
        out[cols] = np.add.reduceat(seen, start[:-1]) if seen.size else 0
    for j in np.flatnonzero(~narrow):  # loop over wide columns
        out[j] = unique_codes(np.concatenate([a[:, j], b[:, j]])).size
    return out


def _join_sets(card: np.ndarray, k: int, g: int) -> list[np.ndarray]:
    """The column sets of a block join at ``k`` cells with ``g`` groups: the columns dealt
    round-robin into ``g`` disjoint groups by their numbers of distinct codes ``card`` (the highest
    first), so every group's values are as varied as the table allows; one set per choice of
    ``g - k`` groups (their columns together). Two rows within ``k`` cells differ in at most ``k``
    groups, so they agree on every column of at least one set (pigeonhole)."""
    order = np.argsort(-card, kind="stable")
    groups = [order[i::g] for i in range(g)]
    return [np.sort(np.concatenate([groups[i] for i in keep]))
            for keep in combinations(range(g), g - k)]


def within_pairs(a: np.ndarray, b: np.ndarray, k: int, *, same: bool = False,
                 budget: int = PAIR_BUDGET, cells: tuple[np.ndarray, np.ndarray] | None = None,
                 distinct: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """Every pair (row of ``a``, row of ``b``) that differs in at most ``k`` cells, sorted by row
    of ``a`` then row of ``b``; ``None`` when the candidates exceed ``budget``.

    Pigeonhole: deal the columns into ``g > k`` groups; two rows within ``k`` cells agree on every
    column of at least ``g - k`` groups. One hash join per choice of ``g - k`` groups gives the
    candidates, each verified cell by cell. First ``g = k + 1`` (``k + 1`` joins); while the
    candidates exceed ``budget`` (groups of few distinct values), or verifying them would cost more
    than the joins of one group more, one group more (each join keys on more columns, fewer
    candidates), within half as many joins as the masked-hash counts (one per column set of at
    most ``k`` columns) that answer over budget. Whichever ``g`` answers, the pairs are the same.
    ``same``: ``a`` is ``b`` (pairs of a row with itself left out). ``cells``: the cell hashes of
    ``a`` and ``b`` (:func:`masked_hashes`' first part) when the caller holds them (not computed
    again); ``distinct``: per column, the number of distinct codes of ``a`` and ``b`` together
    when the caller knows it (e.g. from the encoder's vocabularies), else counted here.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([[0, 0, 0, 0], [1, 1, 1, 1]])
    >>> within_pairs(a, np.array([[0, 0, 5, 6], [1, 2, 1, 1]]), 2)
    (array([0, 1]), array([0, 1]))
    """
    from math import comb

    n, p = a.shape
    if n == 0 or b.shape[0] == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if cells is not None:
        cells_a, cells_b = cells
    else:
        ids = np.arange(p, dtype=np.uint64)  # the keys of masked_hashes
        cells_a = cell_hashes(a, ids)
        cells_b = cells_a if same else cell_hashes(b, ids)
    card = _cardinalities(a, b) if distinct is None else np.asarray(distinct, dtype=np.int64)
    # at most half as many joins as the masked-hash counts that answer when this gives up
    most = sum(comb(p, d) for d in range(k + 1)) // 2
    joins, run, total = None, 0, budget
    for g in range(k + 1, max(p, k + 1) + 1):  # more groups: fewer candidates, more joins
        sets = _join_sets(card, k, g)
        if g > k + 1 and run + len(sets) > most:
            break
        run += len(sets)
        got = _block_join(cells_a, cells_b, sets, total)
        if got is None:
            if joins is not None:  # more groups than the best so far find more: keep the best
                break
            continue
        joins, total = got, got[0].size
        # one group more when verifying the candidates costs more than the joins it would add
        # (a candidate pair about twice a row's share of one join)
        if 2 * total <= comb(g + 1, k) * (n + b.shape[0]):
            break
    if joins is None:
        return None
    ia, ib = joins
    if same:
        keep = ia != ib
        ia, ib = ia[keep], ib[keep]
    if ia.size:
        key = unique_codes(ia.astype(np.int64) * b.shape[0] + ib)
        ia, ib = key // b.shape[0], key % b.shape[0]
    ok = np.zeros(ia.size, dtype=bool)
    step = max(1, 4_000_000 // max(p, 1))
    for s in range(0, ia.size, step):  # verify in chunks: pairs x columns booleans
        ok[s:s + step] = (a[ia[s:s + step]] != b[ib[s:s + step]]).sum(axis=1) <= k
    return ia[ok], ib[ok]


def _block_join(cells_a: np.ndarray, cells_b: np.ndarray, sets: list[np.ndarray], budget: int
                ) -> tuple[np.ndarray, np.ndarray] | None:
    """The candidate pairs (row of ``a``, row of ``b``) of one hash join per column set (the rows'
    cell hashes ``cells_a``, ``cells_b``; ``cells_a is cells_b``: ``a`` is ``b``), a pair once per
    set that finds it; ``None`` as soon as they exceed ``budget``.

    Each side is sorted once per set as one word per row, the hash's high bits above the row's
    number (:func:`_packed_sort`): rows equal on the set stay equal on the high bits (rows that
    differ rarely collide there, and every candidate is verified cell by cell)."""
    n_a, n_b = cells_a.shape[0], cells_b.shape[0]
    bits = np.uint64(max(n_a, n_b, 2).bit_length())
    cand_a, cand_b, total = [], [], 0
    same = cells_a is cells_b
    # one set's hashes at a time (every set's at once: sets x rows x 8 bytes per side)
    pairs = (((None, hb) for hb in iter_set_sums(cells_b, sets)) if same else
             zip(iter_set_sums(cells_a, sets), iter_set_sums(cells_b, sets), strict=True))
    for ha, hb in pairs:
        key_b, row_b = _packed_sort(hb, bits)
        if same:  # each row's run of equal keys, from the one sorted order
            new = np.empty(n_b, dtype=bool)
            new[0] = True
            np.not_equal(key_b[1:], key_b[:-1], out=new[1:])
            run = np.cumsum(new) - 1
            first = np.flatnonzero(new)
            lo = first[run]
            cnt = np.diff(np.r_[first, n_b])[run]
            row_a = row_b
        else:
            key_a, row_a = _packed_sort(ha, bits)
            lo, hi = equal_range(key_b, key_a)
            cnt = hi - lo
        total += int(cnt.sum())
        if total > budget:
            return None
        ia = np.repeat(row_a, cnt)
        starts = np.repeat(lo - np.r_[0, np.cumsum(cnt)[:-1]], cnt)
        cand_a.append(ia)
        cand_b.append(row_b[starts + np.arange(ia.size)])
    if not cand_a:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(cand_a), np.concatenate(cand_b)


def _packed_sort(h: np.ndarray, bits: np.uint64) -> tuple[np.ndarray, np.ndarray]:
    """The 64-bit hashes ``h`` with their low ``bits`` bits replaced by the row number, sorted: the
    high bits (ascending) and the row numbers in that order (one sort of words, no argsort)."""
    low = (np.uint64(1) << bits) - np.uint64(1)
    packed = (h & ~low) | np.arange(h.size, dtype=np.uint64)
    packed.sort()
    return packed >> bits, (packed & low).astype(np.int64)


def _masks_cheaper(p: int, k: int) -> bool:
    """Whether one hash join per ``k``-subset of columns costs less than the block join."""
    from math import comb

    return k == 0 or comb(p, k) <= 3 * (k + 1)


def near_pairs(real: np.ndarray, eligible: np.ndarray, queries: np.ndarray, max_diff: int
               ) -> tuple[np.ndarray, np.ndarray]:
    """Every (query row, eligible real record) pair within ``max_diff`` cells (0: equal rows).

    Eligible records are unique among the real records on every ``max_diff``-masked column set
    (near-unique: no other real record within ``max_diff`` cells), so each masked hash of a query row meets at most one of
    them: one hash join per column set, at most one pair per query row and set.

    Examples
    --------
    >>> import numpy as np
    >>> real = np.array([[0, 0, 0], [1, 1, 1]])
    >>> near_pairs(real, np.array([True, True]), np.array([[0, 5, 0], [2, 2, 2]]), 1)
    (array([0]), array([0]))
    """
    n, p = real.shape
    idx = np.flatnonzero(eligible)
    if idx.size == 0 or queries.shape[0] == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if p <= max_diff:  # every two rows are within max_diff cells
        q = np.repeat(np.arange(queries.shape[0]), idx.size)
        return q, np.tile(idx, queries.shape[0])
    if not _masks_cheaper(p, max_diff):
        got = within_pairs(queries, real[idx], max_diff)
        if got is not None:
            order = np.lexsort((idx[got[1]], got[0]))
            return got[0][order], idx[got[1]][order]
    cells_r, rows_r = masked_hashes(real[idx])
    cells_q, rows_q = masked_hashes(queries)
    qs, rs = [], []
    for mask in combinations(range(p), max_diff):  # loop over column sets; vectorised over rows
        hr, hq = masked(rows_r, cells_r, mask), masked(rows_q, cells_q, mask)
        order = np.argsort(hr, kind="stable")
        pos = search_sorted(hr[order], hq)
        ok = (pos < hr.size) & (hr[order][np.minimum(pos, hr.size - 1)] == hq)
        qs.append(np.flatnonzero(ok))
        rs.append(idx[order[pos[ok]]])
    q, r = np.concatenate(qs), np.concatenate(rs)
    keys = np.unique(np.stack([q, r], axis=1), axis=0)  # a pair found by several column sets, once
    return keys[:, 0], keys[:, 1]


def _responses(ctx: Context, families: Sequence[str],
               pairs: Iterable[tuple[np.ndarray, np.ndarray]]) -> dict[str, Any]:
    """Per family, its ``(leak row, pooled record)`` pairs as a leak response (score 1)."""
    from .._leakrows import response

    out = {}
    for family, (q, r) in zip(families, pairs, strict=True):
        got = response(ctx, family, (q, r, np.ones(q.size)))
        if got is not None:
            out[family] = got
    return out


def copy_responses(ctx: Context, cols: list[str], max_diff: int) -> dict[str, Any]:
    """The leak responses of a near-copy test (a record is flagged when it is the only real record
    within ``max_diff`` cells of some release row, :func:`identifying_matches`): for each family,
    the pooled record each leak row (:mod:`synthguard.metrics._leakrows`) is alone near, raised to
    score 1. On a cluster (``ctx.data_backend``), the same pairs asked of the backend
    (:func:`backend_matches`)."""
    from .._leakrows import leak_sets, real_result, row_families

    if ctx.data_backend is not None:  # a cluster: the leak rows as queries of the backend
        families = row_families(ctx)
        sets = leak_sets(ctx)
        return _responses(ctx, families, backend_matches(ctx.data, [sets[f].rows for f in families],
                                                         cols, max_diff))
    # the leak rows and the real records alone: a drop-and-retest reads the run's
    return real_result(ctx, ("near-copy-responses", tuple(cols), max_diff, ctx.seed, ctx.materiality),
                       lambda: _near_copy_responses(ctx, cols, max_diff), cols)


def _near_copy_responses(ctx: Context, cols: list[str], max_diff: int) -> dict[str, Any]:
    """:func:`copy_responses` in one process."""
    from .._leakrows import leak_block, row_families

    real, _ = _code_matrices(ctx, cols)
    fams, blocks = [], []
    for family in row_families(ctx):
        block = leak_block(ctx, family, cols, categorical_only=True)
        if block is not None:
            fams.append(family)
            blocks.append(block.cat)
    if not blocks:
        return {}
    # one join for every family's rows (each row is matched on its own): the real records are
    # hashed and sorted once, not once per family
    start = np.cumsum([0] + [b.shape[0] for b in blocks])
    q_all, r_all = identifying_matches(real, np.concatenate(blocks, axis=0), max_diff)
    at = [(q_all >= start[i]) & (q_all < start[i + 1]) for i in range(len(fams))]
    return _responses(ctx, fams, [(q_all[a] - start[i], r_all[a]) for i, a in enumerate(at)])


def exact_copy_responses(ctx: Context, cols: list[str]) -> dict[str, Any]:
    """The leak responses of the exact-copy test (a record is flagged when no other real record
    has its row and the release holds it): for each family, the pooled real record each leak row
    equals on ``cols`` when that record's row is unique among the real records, raised to score 1.
    One broadcast join of the leak rows' keys against the pooled keys, asked of the run's backend
    (:meth:`~synthguard.engine.backend.Backend.key_matches`), in one process or on a cluster."""
    from .._leakrows import leak_sets, real_result, row_families

    def compute() -> dict[str, Any]:
        families = row_families(ctx)
        sets = leak_sets(ctx)
        return _responses(ctx, families, ctx.data.key_matches([sets[f].rows for f in families], cols,
                                                              ("original", "control")))

    # the leak rows and the real records alone: a drop-and-retest reads the run's
    return real_result(ctx, ("exact-copy-responses", tuple(cols), ctx.seed, ctx.materiality), compute,
                       cols)


def identifying_pairs(real: np.ndarray, release: np.ndarray, max_diff: int, *,
                      budget: int = PAIR_BUDGET, own: np.ndarray | None = None
                      ) -> tuple[np.ndarray, np.ndarray] | None:
    """Every ``(release row, real record)`` pair where the release row is within ``max_diff``
    cells of the record and *identifies* it: it is within ``max_diff`` cells of no other real
    record (training or control), and no other real record equals it on the cells where it equals
    the record. A copy with a cell or two changed of a record unique on its untouched cells,
    standing alone among the real records; ``None`` when the candidate pairs exceed ``budget``.

    Pairs come from the block join (:func:`within_pairs`); a release row with more than one real
    record within ``max_diff`` cells is left out (in a crowd of real records, e.g. people told apart
    by one cell, a row this close to one of them is as often another person of the crowd: on the
    shared tables such rows were mostly fresh people); each remaining pair's differing cells ``D``
    mask the same columns of every real record, and the pair stays when one real record has the
    release row's values outside ``D`` (one hash count per distinct ``D``, vectorised over rows).
    ``own``: per query row, its own position in ``real`` (``-1``: none), left out of its
    comparisons (real records taken as fresh rows against the others).

    Examples
    --------
    >>> import numpy as np
    >>> real = np.array([[0, 0, 0], [0, 0, 1], [5, 5, 5]])
    >>> identifying_pairs(real, np.array([[0, 0, 9], [5, 5, 9]]), 1)  # [0, 0, _] is two records
    (array([1]), array([2]))
    """
    n, p = real.shape
    got = within_pairs(release, real, max_diff, budget=budget)
    if got is None:
        return None
    q, r = got
    if own is not None:
        own = np.asarray(own, dtype=np.int64)
        q, r = q[r != own[q]], r[r != own[q]]
    alone = np.bincount(q, minlength=release.shape[0])[q] == 1
    q, r = q[alone], r[alone]
    if q.size == 0:
        return q, r
    diff = release[q] != real[r]
    # each pair's differing columns as one key (at most max_diff of them, padded with p)
    cols = np.where(diff, np.arange(p)[None, :], p)
    cols.sort(axis=1)
    cols = cols[:, :max(max_diff, 1)]
    mask_key = np.zeros(q.size, dtype=np.int64)
    for j in range(cols.shape[1]):  # at most max_diff columns
        mask_key = mask_key * (p + 1) + cols[:, j]
    cells_r, rows_r = masked_hashes(real)
    cells_q, rows_q = masked_hashes(release)
    keep = np.zeros(q.size, dtype=bool)
    for key in np.unique(mask_key):  # loop over distinct masks; vectorised over rows
        at = np.flatnonzero(mask_key == key)
        left = [int(c) for c in cols[at[0]] if c < p]
        hr, hq = masked(rows_r, cells_r, left), masked(rows_q[q[at]], cells_q[q[at]], left)
        hr.sort()
        lo, hi = equal_range(hr, hq)
        count = hi - lo
        if own is not None:  # a query's own record shares all its values
            count = count - (own[q[at]] >= 0)
        keep[at] = count == 1
    return q[keep], r[keep]


def identifying_matches(real: np.ndarray, queries: np.ndarray, max_diff: int, *,
                        budget: int = PAIR_BUDGET, cells: tuple[np.ndarray, np.ndarray] | None = None,
                        distinct: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Every ``(query row, real record)`` pair where the record is the *only* real record (training
    or control) within ``max_diff`` cells of the query row: a copy with at most ``max_diff`` cells
    changed that points at one person. (No other real record then shares the row's untouched
    cells either: the row identifies the record.) The near-copy tests' flags, leak responses and
    release rows.

    Pairs come from the block join (:func:`within_pairs`, rows with one real record within
    ``max_diff`` cells); over its budget, from one hash count per masked column set ``M``
    (``|M| <= max_diff``): the real records equal to a row outside ``M``, summed over the sets of
    each size, give by inclusion-exclusion how many real records lie at exactly ``d`` cells, and
    the rows with one in all are joined to the record unique outside some ``M`` and checked cell by
    cell. Both give the same pairs (up to a 64-bit hash collision among the counts), sorted by
    query row (at most one pair per row). ``cells``: the cell hashes of ``queries`` and ``real``
    (:func:`masked_hashes`' first part) when the caller holds them, and ``distinct`` (per column,
    the number of distinct codes of ``queries`` and ``real`` together) when it knows it, for the
    block join.

    Examples
    --------
    >>> import numpy as np
    >>> real = np.array([[0, 0, 0], [0, 0, 1], [5, 5, 5]])
    >>> identifying_matches(real, np.array([[0, 0, 9], [5, 5, 9], [0, 9, 1]]), 1)
    (array([1, 2]), array([2, 1]))
    """
    n, p = real.shape
    m = queries.shape[0]
    got = within_pairs(queries, real, max_diff, budget=budget, cells=cells, distinct=distinct)
    if got is not None:
        q, r = got
        alone = np.bincount(q, minlength=m)[q] == 1
        q, r = q[alone], r[alone]
    else:
        cells_r, rows_r = masked_hashes(real)
        cells_r = np.asfortranarray(cells_r)  # column-major, the row-major hashes freed before the next
        cells_q, rows_q = masked_hashes(queries)
        cells_q = np.asfortranarray(cells_q)

        def counts(masks: list[tuple[int, ...]]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
            for mask in masks:  # loop over column sets; vectorised over rows
                hr, hq = masked(rows_r, cells_r, mask), masked(rows_q, cells_q, mask)
                # one hash table of both sides' hashes (no sort): per distinct hash, how many real
                # records have it and one of them (the one, when it is alone)
                codes, uniques = pd.factorize(np.concatenate([hr, hq]))
                count = np.bincount(codes[:n], minlength=len(uniques))
                some = np.zeros(len(uniques), dtype=np.int64)
                some[codes[:n]] = np.arange(n)
                yield count[codes[n:]], some[codes[n:]]

        def differ(q: np.ndarray, r: np.ndarray) -> np.ndarray:
            out = np.zeros(q.size, dtype=np.int64)
            step = max(1, 4_000_000 // max(p, 1))
            for s in range(0, q.size, step):  # 64-bit hashes: verify cell by cell, in chunks
                out[s:s + step] = (real[r[s:s + step]] != queries[q[s:s + step]]).sum(axis=1)
            return out

        q, r = _mask_matches(m, p, max_diff, counts, differ)
    if q.size:
        key = unique_codes(q.astype(np.int64) * max(n, 1) + r)
        q, r = key // max(n, 1), key % max(n, 1)
    return q.astype(np.int64), r.astype(np.int64)


def _mask_matches(m: int, p: int, max_diff: int,
                  counts: Callable[[list[tuple[int, ...]]], Iterable[tuple[np.ndarray, np.ndarray]]],
                  differ: Callable[[np.ndarray, np.ndarray], np.ndarray]
                  ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`identifying_matches` by masked column sets, for ``m`` query rows of ``p`` columns:
    ``counts(masks)`` gives, per masked column set (in order), how many real records equal each
    query row outside it and one of them (the one when there is one); by inclusion-exclusion
    over the mask sizes, the rows with one real record within ``max_diff`` cells are joined to it
    and checked cell by cell (``differ(q, r)``: differing cells of query rows ``q`` and records
    ``r``). Pairs sorted by query row."""
    from math import comb

    k = min(max_diff, p)
    masks = [mask for d in range(k + 1) for mask in combinations(range(p), d)]
    at = np.zeros((k + 1, m), dtype=np.int64)  # per size d: real records over the d-sets
    cand = np.full(m, -1, dtype=np.int64)  # a record alone under some mask (the one, if any)
    for mask, (count, first) in zip(masks, counts(masks), strict=True):
        at[len(mask)] += count
        one = count == 1
        cand[one] = first[one]
    exact = np.zeros_like(at)  # real records at exactly d cells, by inclusion-exclusion
    for d in range(k + 1):
        exact[d] = at[d] - sum(exact[e] * comb(p - e, d - e) for e in range(d))
    # one real record within k cells: every mask that finds it alone names it
    q = np.flatnonzero((exact.sum(axis=0) == 1) & (cand >= 0))
    r = cand[q]
    ok = differ(q, r) <= max_diff  # hashes: verified cell by cell
    return q[ok], r[ok]


def backend_matches(data: Backend, frames: Sequence[pd.DataFrame | None], cols: list[str], max_diff: int,
                    roles: Sequence[str] = ("original", "control"), *,
                    rows_of: Sequence[tuple[str, np.ndarray | None] | None] | None = None
                    ) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`identifying_matches` of the rows of each of ``frames`` (small tables of the driver:
    release rows, leak rows) against the pooled real records of ``roles``, asked of the run's
    backend: one :meth:`~synthguard.engine.backend.Backend.key_counts` pass for every masked
    column set (the count of real records per masked key and one of them), the cell-by-cell check
    of the candidate records by position (:meth:`~synthguard.engine.backend.Backend.cells_equal`).
    The same pairs as in one process, in one process or on a cluster.

    ``rows_of``: per frame, ``(role, positions)`` when the frame is the backend's rows of ``role``
    at those canonical positions (``None``: all, in canonical order), as
    :meth:`~synthguard.engine.backend.Backend.take` gives them; such a frame's counts are asked by
    position (:meth:`~synthguard.engine.backend.Backend.key_counts_rows`: on a cluster, joined on
    the workers, its keys never on the driver) unless :data:`ASK_ROWS_BY_POSITION` is off; the same
    pairs. Such a frame may be given as ``None``: its rows are never taken whole to the driver
    (on a cluster the whole release's typed rows held on the workers until gathered, then on
    the driver: past 3 GB a worker at 10M rows, issue #31), only the candidate rows the cell
    check reads (:func:`_rows_asked`); taken whole only when :data:`ASK_ROWS_BY_POSITION` is off.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from synthguard.registry import Context
    >>> real = pd.DataFrame({"a": [0, 0, 5], "b": [0, 0, 5], "c": [0, 1, 5]})
    >>> ctx = Context.from_frames(real.iloc[:2], real, real.iloc[2:], canonical=False)
    >>> rows = pd.DataFrame({"a": [0, 5, 0], "b": [0, 5, 9], "c": [9, 9, 1]})
    >>> backend_matches(ctx.data, [rows], ["a", "b", "c"], 1)
    [(array([1, 2]), array([2, 1]))]
    """
    p = len(cols)
    parts = _rows_asked(data, frames, cols, rows_of)  # a None frame's rows never taken whole
    sizes = [len(f) for f in parts]
    start = np.cumsum([0, *sizes])

    held = [None] * len(frames) if rows_of is None or not ASK_ROWS_BY_POSITION else list(rows_of)
    driver = [i for i, h in enumerate(held) if h is None]  # the frames whose keys the driver sends

    def counts(masks: list[tuple[int, ...]]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        sets = [[c for j, c in enumerate(cols) if j not in mask] for mask in masks]
        sent = key_counts_in_batches(data, [parts[i].frame for i in driver], sets, roles) if driver else None
        asked = {i: data.key_counts_rows(h[0], h[1], sets, roles) for i, h in enumerate(held) if h is not None}
        for _ in sets:  # read set by set, every frame's answers in frame order
            per = dict(zip(driver, next(sent), strict=True)) if sent is not None else {}
            per.update({i: next(it) for i, it in asked.items()})
            yield (np.concatenate([per[i][0] for i in range(len(frames))]),
                   np.concatenate([per[i][1] for i in range(len(frames))]))

    def differ(q: np.ndarray, r: np.ndarray) -> np.ndarray:
        out = np.zeros(q.size, dtype=np.int64)
        for i, part in enumerate(parts):  # per frame: its rows as typed
            at = np.flatnonzero((q >= start[i]) & (q < start[i + 1]))
            if at.size:
                rows = part.take(q[at] - start[i])
                out[at] = (~data.cells_equal(rows, r[at], cols, roles)).sum(axis=1)
        return out

    q, r = _mask_matches(int(start[-1]), p, max_diff, counts, differ)
    return [(q[(q >= start[i]) & (q < start[i + 1])] - start[i], r[(q >= start[i]) & (q < start[i + 1])])
            for i in range(len(frames))]


class _RowsOf:
    """The rows of ``role`` at canonical positions ``rows`` (``None``: all, in canonical order) on
    ``columns`` as a frame :func:`backend_matches` reads: its length, and its rows at given
    places fetched when asked (:meth:`~synthguard.engine.backend.Backend.take`), never all of
    them. A frame given is read in place (``frame.iloc``)."""

    def __init__(self, data: Backend, role: str, rows: np.ndarray | None, columns: Sequence[str],
                 frame: pd.DataFrame | None = None) -> None:
        self.data, self.role, self.columns, self.frame = data, role, list(columns), frame
        self.rows = None if rows is None else np.asarray(rows, dtype=np.int64)
        self.n = (len(frame) if frame is not None else data.n_rows(role) if self.rows is None
                  else self.rows.size)

    def __len__(self) -> int:
        return self.n

    def take(self, at: np.ndarray) -> pd.DataFrame:
        """The rows at places ``at`` of this frame, as typed."""
        if self.frame is not None:
            return self.frame.iloc[at].reset_index(drop=True)
        at = np.asarray(at, dtype=np.int64)
        return self.data.take(self.role, at if self.rows is None else self.rows[at], self.columns)


def _rows_asked(data: Backend, frames: Sequence[pd.DataFrame | None], cols: Sequence[str],
                rows_of: Sequence[tuple[str, np.ndarray | None] | None] | None) -> list[Any]:
    """:func:`backend_matches`' frames as :class:`_RowsOf`: a ``None`` frame stands for the rows
    ``rows_of`` names (taken whole only when :data:`ASK_ROWS_BY_POSITION` is off: its keys are
    then sent from the driver), a given frame read in place.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from synthguard.registry import Context
    >>> real = pd.DataFrame({"a": ["x", "y", "z"]})
    >>> data = Context.from_frames(real, real.iloc[:2], None, canonical=False).data
    >>> got = _rows_asked(data, [None], ["a"], [("synthetic", np.array([1]))])
    >>> len(got[0]), got[0].take(np.array([0]))["a"].tolist()
    (1, ['y'])
    """
    out = []
    for i, frame in enumerate(frames):
        of = None if rows_of is None else rows_of[i]
        if frame is None and of is None:
            raise ValueError(f"frame {i}: None without its rows (rows_of)")
        if of is None:
            out.append(_RowsOf(data, "", None, cols, frame))
            continue
        if frame is None and not ASK_ROWS_BY_POSITION:  # its keys sent from the driver: the rows taken
            at = np.arange(data.n_rows(of[0])) if of[1] is None else np.asarray(of[1], dtype=np.int64)
            frame = data.take(of[0], at, cols)
        out.append(_RowsOf(data, of[0], of[1], cols, frame))
    return out


#: Whether :func:`backend_matches` asks the frames it is told are a role's rows by position
#: (``rows_of``; off: every frame's keys sent from the driver, the path of other frames; the same
#: pairs, a switch for comparing the two)
ASK_ROWS_BY_POSITION = True


def backend_identifiable_share(data: Backend, cols: list[str], k: int,
                               roles: Sequence[str] = ("original", "control")) -> np.ndarray:
    """:func:`identifiable_share` of the pooled real records of ``roles``, asked of the run's
    backend: on how many ``k``-column sets ``M`` each record is the only real record with its
    values outside ``M`` (:meth:`~synthguard.engine.backend.Backend.unique_sets`, one group-by of
    every set's keys). The same floats as :func:`identifiable_share` in one process, bit for bit
    (both divide an integer count of column sets once).

    Examples
    --------
    >>> import pandas as pd
    >>> from synthguard.registry import Context
    >>> o = pd.DataFrame({"a": [0, 0], "b": [0, 0], "c": [0, 1]})
    >>> c = pd.DataFrame({"a": [5, 5], "b": [5, 5], "c": [5, 5]})
    >>> ctx = Context.from_frames(o, o, c, canonical=False)
    >>> backend_identifiable_share(ctx.data, ["a", "b", "c"], 1).round(3).tolist()
    [0.667, 0.667, 0.0, 0.0]
    """
    from math import comb

    n, p = sum(data.n_rows(r) for r in roles), len(cols)
    if n == 0:
        return np.zeros(0)
    if p <= k:
        return np.full(n, 1.0 if n == 1 else 0.0)
    sets = [[c for j, c in enumerate(cols) if j not in mask] for mask in combinations(range(p), k)]
    count = np.asarray(data.unique_sets(sets, roles), dtype=np.int64)
    return count / comb(p, k)


def identifiable_share(real: np.ndarray, k: int, *, budget: int = PAIR_BUDGET) -> np.ndarray:
    """Per real record, the share of the ``k``-column sets ``M`` outside which it is unique among
    the real records: at most the chance that a copy of it with ``k`` cells changed (columns drawn
    uniformly) is flagged by :func:`identifying_matches` (the copy's new values may also bring it
    within ``k`` cells of another record). ``1``: no other real record within ``k`` cells (an exact
    copy is flagged); ``0`` for a record with a real duplicate.

    From the record's real twins within ``k`` cells (:func:`within_pairs`): a twin differing in
    the cells ``D`` takes away every ``M`` that holds ``D``; over the block join's budget, one hash
    count per column set. Either way the column sets are counted as integers and divided once, so
    the floats are the same bit for bit whichever path ``budget`` picks.

    Examples
    --------
    >>> import numpy as np
    >>> real = np.array([[0, 0, 0], [0, 0, 1], [5, 5, 5], [5, 5, 5]])
    >>> identifiable_share(real, 1).round(3).tolist()  # the first two: unique unless column 2 is masked
    [0.667, 0.667, 0.0, 0.0]
    """
    from math import comb

    n, p = real.shape
    if n == 0:
        return np.zeros(0)
    if p <= k:
        return np.full(n, 1.0 if n == 1 else 0.0)
    total = comb(p, k)
    twins = None if _masks_cheaper(p, k) else within_pairs(real, real, k, same=True, budget=budget)
    if twins is None:
        cells, rows = masked_hashes(real)
        cells = np.asfortranarray(cells)
        count = np.zeros(n, dtype=np.int64)
        for mask in combinations(range(p), k):  # loop over column sets; vectorised over rows
            h = masked(rows, cells, mask)
            count += ~pd.Series(h, copy=False).duplicated(keep=False).to_numpy()
        return count / total
    a, b = twins
    size = np.zeros(a.size, dtype=np.int64)
    cols = np.zeros((a.size, k), dtype=np.int64)
    step = max(1, 4_000_000 // max(p, 1))
    for s in range(0, a.size, step):  # in chunks of pairs: pairs x columns booleans
        diff = real[a[s:s + step]] != real[b[s:s + step]]
        size[s:s + step] = diff.sum(axis=1)
        # each twin's differing columns (sorted, padded with p) -> the k-sets they take away
        cols[s:s + step] = np.sort(np.where(diff, np.arange(p)[None, :], p), axis=1)[:, :k]
    dup = np.zeros(n, dtype=bool)
    dup[a[size == 0]] = True
    single = np.zeros((n, p), dtype=bool)  # columns whose change alone meets a twin
    s1 = size == 1
    single[a[s1], cols[s1, 0]] = True
    n_single = single.sum(axis=1)
    covered = total - np.array([comb(p - int(s), k) for s in range(p + 1)])[n_single]
    if k == 2:  # a twin two cells away takes its own pair, unless a single already did
        s2 = size == 2
        a2, c0, c1 = a[s2], cols[s2, 0], cols[s2, 1]
        fresh = ~single[a2, c0] & ~single[a2, c1]
        key = unique_codes((a2[fresh] * p + c0[fresh]) * p + c1[fresh])
        covered = covered + np.bincount(key // (p * p), minlength=n)
    elif k > 2:
        raise ValueError("identifiable_share counts column sets of at most two cells")
    unique = total - covered  # integer counts of column sets: one division, as the masks path
    unique[dup] = 0
    return unique / total


#: Most candidate pairs a crowd count's block join (:func:`crowd_counts`) verifies in one process;
#: beyond it the crowds are hash counts asked of the backend (:func:`backend_crowds`), as on a
#: cluster: the same numbers either way.
CROWD_BUDGET = 5_000_000

#: Most tied release rows whose crowds are counted at once from the backend (rows fetched per pass)
CROWD_CHUNK = 100_000


def copy_crowd(ctx: Context, cols: list[str], k: int, rows: np.ndarray) -> np.ndarray:
    """The crowds of the release rows ``rows`` (those a copy test ties) at ``k`` cells over the
    pooled real records on the columns ``cols``, one per release row (``0`` for the others).

    In one process a block join of the code matrices (:func:`crowd_counts`) while its candidate
    pairs stay within :data:`CROWD_BUDGET`; beyond it, and always on a cluster
    (``ctx.data_backend``), hash counts asked of the run's backend (:func:`backend_crowds`, no
    budget), :data:`CROWD_CHUNK` tied rows fetched at a time. Both count the same records, so the
    crowds, and the drop list ranked by them, are the same in one process and on a cluster. A
    drop-and-retest reads the run's crowds of the rows it keeps
    (:func:`~synthguard.engine.reuse.release_pairs_memo`) and counts only rows the run did not.

    Examples
    --------
    >>> import pandas as pd
    >>> from synthguard.registry import Context
    >>> real = pd.DataFrame({"a": [0, 0, 5], "b": [0, 0, 5], "c": [0, 1, 5]})
    >>> rel = pd.DataFrame({"a": [0, 5, 7], "b": [0, 5, 7], "c": [2, 5, 7]})
    >>> ctx = Context.from_frames(real.iloc[:2], rel, real.iloc[2:], canonical=False)
    >>> copy_crowd(ctx, ["a", "b", "c"], 1, np.array([0, 1])).tolist()
    [2, 1, 0]
    """
    from .._leakrows import reuse_view

    rows = unique_codes(np.asarray(rows, dtype=np.int64))
    out = np.zeros(ctx.data.n_rows("synthetic"), dtype=np.int64)
    if not rows.size:
        return out
    view = reuse_view(ctx)
    if view is None:
        out[rows] = _crowds(ctx, cols, k, rows)
        return out
    from ...engine.reuse import release_pairs_memo, renumbering

    # a release row's crowd is its own (the real records within k cells of its values): a
    # drop-and-retest reads the run's crowds of the rows it keeps, and counts only the others
    have, crowds = release_pairs_memo(view, ("copy-crowd", tuple(cols), k),
                                      lambda: (rows, _crowds(ctx, cols, k, rows)), cols)
    at = renumbering(rows, have)  # each row's place among the kept crowds' rows (-1: none)
    known = at >= 0
    out[rows[known]] = crowds[at[known]]
    if not known.all():
        out[rows[~known]] = _crowds(ctx, cols, k, rows[~known])
    return out


def _crowds(ctx: Context, cols: list[str], k: int, rows: np.ndarray) -> np.ndarray:
    """:func:`copy_crowd`'s counts of the release rows ``rows`` (distinct, ascending), one per row."""
    data = ctx.data
    if ctx.data_backend is None:
        real, rel = _code_matrices(ctx, cols)
        got = crowd_counts(real, rel[rows], k, budget=CROWD_BUDGET)
        if got is not None:
            return np.asarray(got, dtype=np.int64)
    out = np.zeros(rows.size, dtype=np.int64)
    for s in range(0, rows.size, CROWD_CHUNK):  # loop over chunks of tied rows, not rows
        part = rows[s:s + CROWD_CHUNK]
        out[s:s + part.size] = backend_crowds(data, data.take("synthetic", part, cols), cols, k)
    return out


def control_chance(ctx: Context, cols: list[str], k: int) -> np.ndarray:
    """The chance baseline of a copy test at ``k`` cells (0 or 1) from the control records taken
    as fresh rows: per control record, its crowd (other real records within ``k + 1`` cells) when
    the test would tie it to a training record as it ties release rows (``k = 0``: equal to one;
    ``k = 1``: identifying one, :func:`identifying_pairs` against the other real records), else
    ``-1`` (:attr:`~synthguard.core.results.RowPairs.chance_crowd`). In one process from the code
    matrices' joins while they stay within their budget (:data:`PAIR_BUDGET`), else, and on a
    cluster, from the backend's key lookups (:func:`backend_chance_crowds`): the same numbers.
    Memoised with ``ctx.memo``."""
    from .._leakrows import real_result

    def compute() -> np.ndarray:
        if ctx.data_backend is None:
            real, _ = _code_matrices(ctx, cols)
            got = chance_crowds(real, len(ctx.tables.original), k, budget=PAIR_BUDGET)
            if got is not None:
                return got
        return backend_chance_crowds(ctx.data, cols, k)

    # the real records alone: a drop-and-retest reads the run's
    return ctx.memo(("copy-chance", tuple(cols), k),
                    lambda: real_result(ctx, ("copy-chance", tuple(cols), k), compute, cols))


def chance_crowds(real: np.ndarray, n_o: int, k: int, *,
                  budget: int = PAIR_BUDGET) -> np.ndarray | None:
    """:func:`control_chance` from the pooled code matrix (training rows first, ``n_o`` of them).

    Examples
    --------
    >>> import numpy as np
    >>> real = np.array([[0, 0, 0], [5, 5, 5], [0, 0, 0], [5, 5, 9], [7, 7, 7]])
    >>> chance_crowds(real, 2, 0).tolist()  # control records 2, 3, 4
    [1, -1, -1]
    >>> chance_crowds(real, 2, 1).tolist()  # an equal record identifies too
    [1, 1, -1]
    """
    ctl = real[n_o:]
    own = np.arange(n_o, real.shape[0], dtype=np.int64)
    if k == 0:
        got = within_pairs(ctl, real[:n_o], 0, budget=budget)
        tied = None if got is None else np.unique(got[0])
    else:
        got = identifying_pairs(real, ctl, k, budget=budget, own=own)
        tied = None if got is None else np.unique(got[0][got[1] < n_o])
    crowd = None if tied is None else crowd_counts(real, ctl[tied], k + 1,
                                                   budget=min(budget, CROWD_BUDGET))
    if crowd is None:
        return None
    out = np.full(ctl.shape[0], -1, dtype=np.int64)
    out[tied] = crowd - 1  # the record itself is within k + 1 cells of itself
    return out


def crowd_counts(real: np.ndarray, release: np.ndarray, k: int, *,
                 budget: int = PAIR_BUDGET) -> np.ndarray | None:
    """Per release row, how many real records (training and control pooled) lie within ``k``
    cells of it: the crowd a copy test at ``k - 1`` cells draws its chance matches from
    (:attr:`~synthguard.core.results.RowPairs.crowd`); ``None`` when the candidate pairs of the
    block join exceed ``budget``.

    Examples
    --------
    >>> import numpy as np
    >>> real = np.array([[0, 0, 0], [0, 0, 1], [5, 5, 5]])
    >>> crowd_counts(real, np.array([[0, 0, 2], [5, 5, 5], [7, 7, 7]]), 1).tolist()
    [2, 1, 0]
    """
    n, p = real.shape
    if p <= k:  # every real record is within k cells of every row
        return np.full(release.shape[0], n, dtype=np.int64)
    got = within_pairs(release, real, k, budget=budget)
    if got is None:
        return None
    return np.bincount(got[0], minlength=release.shape[0]).astype(np.int64)


def backend_crowds(data: Backend, frame: pd.DataFrame, cols: list[str], k: int,
                   roles: Sequence[str] = ("original", "control")) -> np.ndarray:
    """:func:`crowd_counts` of the rows of ``frame`` (a small table of the driver: the release rows a
    copy test ties) against the pooled real records of ``roles``, asked of the run's backend: one
    :meth:`~synthguard.engine.backend.Backend.key_counts` pass for every masked column set of at
    most ``k`` columns, and by inclusion-exclusion over the mask sizes the real records within
    ``k`` cells of each row (as :func:`_mask_matches` counts them).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from synthguard.registry import Context
    >>> real = pd.DataFrame({"a": [0, 0, 5], "b": [0, 0, 5], "c": [0, 1, 5]})
    >>> ctx = Context.from_frames(real.iloc[:2], real, real.iloc[2:], canonical=False)
    >>> rows = pd.DataFrame({"a": [0, 5, 7], "b": [0, 5, 7], "c": [2, 5, 7]})
    >>> backend_crowds(ctx.data, rows, ["a", "b", "c"], 1).tolist()
    [2, 1, 0]
    """
    from math import comb

    m, p = len(frame), len(cols)
    if p <= k:  # every real record is within k cells of every row
        return np.full(m, sum(data.n_rows(r) for r in roles), dtype=np.int64)
    if m == 0:
        return np.zeros(0, dtype=np.int64)
    masks = [mask for d in range(k + 1) for mask in combinations(range(p), d)]
    sets = [[c for j, c in enumerate(cols) if j not in mask] for mask in masks]
    at = np.zeros((k + 1, m), dtype=np.int64)  # per size d: real records over the d-sets
    for mask, per in zip(masks, key_counts_in_batches(data, [frame], sets, roles), strict=True):
        at[len(mask)] += np.asarray(per[0][0], dtype=np.int64)
    exact = np.zeros_like(at)  # real records at exactly d cells, by inclusion-exclusion
    for d in range(k + 1):
        exact[d] = at[d] - sum(exact[e] * comb(p - e, d - e) for e in range(d))
    return exact.sum(axis=0).astype(np.int64)


def backend_chance_crowds(data: Backend, cols: list[str], k: int) -> np.ndarray:
    """:func:`chance_crowds` asked of the run's backend (``k`` 0 or 1): which control records a
    copy test would tie to a training record as it ties release rows, from per-record key lookups
    (:meth:`~synthguard.engine.backend.Backend.key_rows`; ``k = 0``: equal to a training record;
    ``k = 1``: exactly one other real record within one cell of it, and it a training record, which
    then is the record it identifies, see :func:`identifying_pairs`), then the crowds of only those
    control records (fetched, :func:`backend_crowds`, itself left out). The same numbers as in one
    process, in one process or on a cluster.

    Examples
    --------
    >>> import pandas as pd
    >>> from synthguard.registry import Context
    >>> real = pd.DataFrame({"a": [0, 5, 0, 5, 7], "b": [0, 5, 0, 5, 7], "c": [0, 5, 0, 9, 7]})
    >>> ctx = Context.from_frames(real.iloc[:2], real.iloc[:2], real.iloc[2:], canonical=False)
    >>> backend_chance_crowds(ctx.data, ["a", "b", "c"], 0).tolist()
    [1, -1, -1]
    >>> backend_chance_crowds(ctx.data, ["a", "b", "c"], 1).tolist()
    [1, 1, -1]
    """
    if k not in (0, 1):
        raise ValueError("backend_chance_crowds: the copy tests tie at 0 or 1 cell")
    p = len(cols)
    if k == 0:
        lookups = {"t0": (list(cols), ("original",))}
        tied = np.flatnonzero(data.key_rows("control", lookups).flags(
            tied=lambda f: f["t0"] > 0)["tied"])
    else:
        sets = [list(cols)] + [[c for j, c in enumerate(cols) if j != i] for i in range(p)]
        lookups = {f"r{i}": (s, ("original", "control")) for i, s in enumerate(sets)}

        def alone(f: pd.DataFrame) -> Any:
            """One other real record within one cell (itself is one of them): exactly equal, plus
            at one cell, by inclusion-exclusion."""
            at1 = sum(f[f"r{i + 1}"] for i in range(p))
            return f["r0"] + (at1 - p * f["r0"]) == 2

        alone_at = np.flatnonzero(data.key_rows("control", lookups).flags(tied=alone)["tied"])
        # of those, the ones whose other record is a training record (fetched: only these rows)
        near_training = backend_crowds(data, data.take("control", alone_at, cols), cols, 1,
                                       ("original",)) >= 1 if alone_at.size else np.zeros(0, bool)
        tied = alone_at[near_training]
    out = np.full(data.n_rows("control"), -1, dtype=np.int64)
    if tied.size:
        out[tied] = backend_crowds(data, data.take("control", tied, cols), cols, k + 1) - 1
    return out
