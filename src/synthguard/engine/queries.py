"""Counting the rows that satisfy conjunctive singling-out queries, in batches.

A query is ``k`` predicates ``(column, op, value)`` over one float64 matrix (numeric values and
categorical codes, missing = NaN). Operators: ``EQ, NE, GT, LT, GE, LE`` (a missing value never
satisfies a comparison), ``ISNULL`` and ``NOTNULL``. Counts can be capped (``cap=2`` answers "does the
query single out a row?" and stops scanning at the second match). A numba kernel runs when numba is
installed (parallel over queries); otherwise a chunked NumPy version gives the same numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.util import find_spec

import numpy as np

from ..core.arrays import stable_order
from .parallel import PARALLEL_KERNELS

EQ, NE, GT, LT, GE, LE, ISNULL, NOTNULL = range(8)
OP_TEXT = {EQ: "==", NE: "!=", GT: ">", LT: "<", GE: ">=", LE: "<=", ISNULL: "is null",
           NOTNULL: "is not null"}
_HAS_NUMBA = find_spec("numba") is not None
_MAX_CELLS = 4_000_000
#: a column index keeps bucket codes (``n * p * p`` bytes) up to this size; above it (wide tables)
#: its kernels test every predicate on the rows' values
CODES_BYTES = 256 * 2**20
#: a column index keeps a column's distinct values for its binary searches up to this many
DISTINCT_KEPT = 1 << 16

if _HAS_NUMBA:
    import numba as nb

    from .._jit import njit
    from .cells import fibonacci_slot

    @njit(cache=True, nogil=True)
    def _holds(x, op, v):  # pragma: no cover - compiled
        if op == ISNULL:
            return x != x
        if op == NOTNULL:
            return x == x
        if x != x:
            return False
        if op == EQ:
            return x == v
        if op == NE:
            return x != v
        if op == GT:
            return x > v
        if op == LT:
            return x < v
        if op == GE:
            return x >= v
        return x <= v

    @njit(cache=True, nogil=True)
    def _row_holds(X, r, qcol, qop, qval, i, k):  # pragma: no cover - compiled
        """Whether row ``r`` of ``X`` satisfies all ``k`` predicates of query ``i``."""
        for t in range(k):
            if not _holds(X[r, qcol[i, t]], qop[i, t], qval[i, t]):
                return False
        return True

    @njit(parallel=True, cache=True)
    def _count_kernel(X, qcol, qop, qval, cap, out_count, out_first):  # pragma: no cover - compiled
        nq = qcol.shape[0]
        k = qcol.shape[1]
        n = X.shape[0]
        for i in nb.prange(nq):
            cnt = 0
            first = -1
            for r in range(n):
                if _row_holds(X, r, qcol, qop, qval, i, k):
                    if cnt == 0:
                        first = r
                    cnt += 1
                    if cnt >= cap:
                        break
            out_count[i] = cnt
            out_first[i] = first

    @njit(parallel=True, cache=True)
    def _fill_kernel(X, qcol, qop, qval, offsets, out_rows):  # pragma: no cover - compiled
        nq = qcol.shape[0]
        k = qcol.shape[1]
        n = X.shape[0]
        for i in nb.prange(nq):
            pos = offsets[i]
            end = offsets[i + 1]
            for r in range(n):
                if pos >= end:
                    break
                if _row_holds(X, r, qcol, qop, qval, i, k):
                    out_rows[pos] = r
                    pos += 1

    @njit(cache=True, nogil=True)
    def _search(a, lo, hi, v, right):  # pragma: no cover - compiled
        """``lo`` plus how many of the ascending ``a[lo:hi]`` are ``< v`` (``right``: ``<= v``;
        ``v`` not missing): ``np.searchsorted`` of that slice, with a fixed number of halvings
        and no data-dependent branch (compiled to conditional moves)."""
        n = hi - lo
        if n <= 0:
            return lo
        base = lo
        while n > 1:
            half = n >> 1
            x = a[base + half - 1]
            base = base + half if (x < v or (right and x == v)) else base
            n -= half
        x = a[base]
        return base + (1 if (x < v or (right and x == v)) else 0)

    @njit(cache=True, nogil=True)
    def _search_order(X, order, c, nv, v, right):  # pragma: no cover - compiled
        """How many of column ``c``'s ``nv`` non-missing values are ``< v`` (``right``: ``<= v``;
        ``v`` not missing): :func:`_search` of its sorted values read through its order
        (``X[order[c, t], c]`` is the value at position ``t``): no sorted copy is kept."""
        n = nv
        if n <= 0:
            return 0
        base = 0
        while n > 1:
            half = n >> 1
            x = X[order[c, base + half - 1], c]
            base = base + half if (x < v or (right and x == v)) else base
            n -= half
        x = X[order[c, base], c]
        return base + (1 if (x < v or (right and x == v)) else 0)

    @njit(cache=True, nogil=True)
    def _slot(bits, mask):  # pragma: no cover - compiled
        """A value's first slot in a hash table of ``mask + 1`` slots (at most ``2**24``): its bits'
        Fibonacci slot in ``2**24`` slots (:func:`~synthguard.engine.cells.fibonacci_slot`), cut
        to the table."""
        return fibonacci_slot(np.uint64(bits), np.uint64(40)) & mask

    @njit(cache=True, nogil=True)
    def _find(hk, hv, hof, c, v):  # pragma: no cover - compiled
        """The position in the distinct values of column ``c``'s distinct value equal to ``v``
        (not missing), from its hash table (open addressing: keys ``hk``, the values' bits,
        ``-0.0`` as ``0.0``; positions ``hv``, -1 for an empty slot); -1 when absent."""
        h0 = hof[c]
        mask = hof[c + 1] - h0 - 1
        bits = np.float64(v + 0.0).view(np.int64)
        j = _slot(bits, mask)
        while True:
            at = hv[h0 + j]
            if at < 0:
                return -1
            if hk[h0 + j] == bits:
                return at
            j = (j + 1) & mask

    @njit(cache=True, nogil=True)
    def _hash_kernel(dv, dof, hof, hk, hv):  # pragma: no cover - compiled
        """Fill each column's hash table of its distinct values (see :func:`_find`)."""
        for c in range(dof.size - 1):
            mask = hof[c + 1] - hof[c] - 1
            for i in range(dof[c], dof[c + 1]):
                bits = np.float64(dv[i] + 0.0).view(np.int64)
                j = _slot(bits, mask)
                while hv[hof[c] + j] >= 0:
                    j = (j + 1) & mask
                hk[hof[c] + j] = bits
                hv[hof[c] + j] = i

    @njit(cache=True, nogil=True)
    def _below(X, order, nv, dv, ds, dof, hk, hv, hof, c, v, right):  # pragma: no cover - compiled
        """How many of column ``c``'s ``nv`` non-missing values (column ``c`` of ``X``, in the
        order ``order[c]``) are ``< v`` (``right``: ``<= v``; ``v`` not missing): from the first
        position of ``v``'s run when ``v`` is one of the distinct values the column keeps (its
        hash table), else a binary search of those distinct values (``dv``, each one's first
        position ``ds``), else of its values through its order (:func:`_search_order`)."""
        a, b = dof[c], dof[c + 1]
        if b > a:
            f = _find(hk, hv, hof, c, v)
            if f >= 0:
                i = f + 1 if right else f
            else:
                i = _search(dv, a, b, v, right)
            return ds[i] if i < b else nv
        return _search_order(X, order, c, nv, v, right)

    @njit(cache=True, nogil=True)
    def _exact_slice(X, order, nv, n, op, v, dv, ds, dof, hk, hv, hof, c):  # pragma: no cover - compiled
        """The rows satisfying ``(op, v)``: positions ``[lo, hi)`` of the column's order, less
        ``[xlo, xhi)`` (``NE``: the value's run; else empty). Exact: a missing value satisfies
        only ``ISNULL``, and a missing ``v`` no comparison but ``!=``."""
        if op == ISNULL:
            return nv, n, 0, 0
        if op == NOTNULL:
            return 0, nv, 0, 0
        if v != v:
            return (0, nv, 0, 0) if op == NE else (0, 0, 0, 0)
        if op == EQ:
            return _below(X, order, nv, dv, ds, dof, hk, hv, hof, c, v, False), _below(X, order, nv, dv, ds, dof, hk, hv, hof, c, v, True), 0, 0
        if op == NE:
            return 0, nv, _below(X, order, nv, dv, ds, dof, hk, hv, hof, c, v, False), _below(X, order, nv, dv, ds, dof, hk, hv, hof, c, v, True)
        if op == GT:
            return _below(X, order, nv, dv, ds, dof, hk, hv, hof, c, v, True), nv, 0, 0
        if op == GE:
            return _below(X, order, nv, dv, ds, dof, hk, hv, hof, c, v, False), nv, 0, 0
        if op == LT:
            return 0, _below(X, order, nv, dv, ds, dof, hk, hv, hof, c, v, False), 0, 0
        return 0, _below(X, order, nv, dv, ds, dof, hk, hv, hof, c, v, True), 0, 0

    @njit(cache=True, nogil=True)
    def _plan(X, order, n_valid, n, pcode, dv, ds, dof, hk, hv, hof, qcol, qop, qval, i, k, lim):  # pragma: no cover - compiled
        """Query ``i``'s scan: its narrowest predicate ``best_t`` and that predicate's slice
        ``[lo, hi)`` of its column's order (``NE``: the non-missing slice, a superset); ``lim[t]``:
        predicate ``t``'s code bounds ``(blo, bhi, xlo, xhi)`` (``pcode``: the code of each
        position of a column's order; a row whose code is outside ``[blo, bhi]`` fails it; one
        strictly inside and outside ``[xlo, xhi]`` satisfies it; the others are tested on their
        value, but in a column whose codes are its values' ranks, where a code inside ``[xlo,
        xhi]`` fails and any other passes). ``lo == hi`` when some predicate selects no row."""
        best_t = 0
        best_lo = 0
        best_hi = n + 1
        for t in range(k):
            c = qcol[i, t]
            lo, hi, xlo, xhi = _exact_slice(X, order, n_valid[c], n, qop[i, t], qval[i, t], dv, ds, dof, hk, hv, hof, c)
            if hi <= lo:
                return t, 0, 0
            if qop[i, t] == NE:
                lo, hi = 0, n_valid[c]
            if hi - lo < best_hi - best_lo:
                best_t, best_lo, best_hi = t, lo, hi
            lim[t, 0] = pcode[c, lo]
            lim[t, 1] = pcode[c, hi - 1]
            if xhi > xlo:
                lim[t, 2] = pcode[c, xlo]
                lim[t, 3] = pcode[c, xhi - 1]
            else:
                lim[t, 2] = 1
                lim[t, 3] = 0
        if qop[i, best_t] != NE:  # the scanned slice is exactly the rows satisfying it: no test
            lim[best_t, 0] = -1
            lim[best_t, 1] = 256
        return best_t, best_lo, best_hi

    @njit(cache=True, nogil=True)
    def _passes(X, row_codes, r, qcol, qop, qval, i, k, lim, ranked):  # pragma: no cover - compiled
        """Whether row ``r`` (codes ``row_codes``) satisfies every predicate of query ``i``:
        decided on the codes, but on the values for a bucket code at a bound (see :func:`_plan`;
        ``ranked[c]``: column ``c``'s codes are its values' ranks, never at a bound)."""
        for t in range(k):
            c = qcol[i, t]
            b = row_codes[c]
            if b < lim[t, 0] or b > lim[t, 1]:
                return False
            if ranked[c]:
                if b >= lim[t, 2] and b <= lim[t, 3]:
                    return False
            elif b == lim[t, 0] or b == lim[t, 1] or (b >= lim[t, 2] and b <= lim[t, 3]):
                if not _holds(X[r, c], qop[i, t], qval[i, t]):
                    return False
        return True

    @njit(parallel=True, cache=True)
    def _count_indexed_kernel(X, order, n_valid, codes, coded, pcode, ranked, dv, ds, dof, hk, hv, hof, qcol, qop,
                              qval, cap, out_count, out_first):  # pragma: no cover - compiled
        nq = qcol.shape[0]
        k = qcol.shape[1]
        n = X.shape[0]
        lim = np.empty((nq, k, 4), dtype=np.int64)
        for i in nb.prange(nq):
            best_t, lo, hi = _plan(X, order, n_valid, n, pcode, dv, ds, dof, hk, hv, hof, qcol, qop, qval, i, k, lim[i])
            c0 = qcol[i, best_t]
            cnt = 0
            first = -1
            for t0 in range(lo, hi):
                r = order[c0, t0]
                if (_passes(X, codes[c0, t0], r, qcol, qop, qval, i, k, lim[i], ranked) if coded
                        else _row_holds(X, r, qcol, qop, qval, i, k)):
                    if cnt == 0 or r < first:
                        first = r
                    cnt += 1
                    if cnt >= cap:
                        break
            out_count[i] = cnt
            out_first[i] = first

    @njit(parallel=True, cache=True)
    def _fill_indexed_kernel(X, order, n_valid, codes, coded, pcode, ranked, dv, ds, dof, hk, hv, hof, qcol, qop,
                             qval, offsets, out_rows):  # pragma: no cover - compiled
        nq = qcol.shape[0]
        k = qcol.shape[1]
        n = X.shape[0]
        lim = np.empty((nq, k, 4), dtype=np.int64)
        for i in nb.prange(nq):
            pos = offsets[i]
            end = offsets[i + 1]
            if pos >= end:
                continue
            best_t, lo, hi = _plan(X, order, n_valid, n, pcode, dv, ds, dof, hk, hv, hof, qcol, qop, qval, i, k, lim[i])
            c0 = qcol[i, best_t]
            for t0 in range(lo, hi):
                if pos >= end:
                    break
                r = order[c0, t0]
                if (_passes(X, codes[c0, t0], r, qcol, qop, qval, i, k, lim[i], ranked) if coded
                        else _row_holds(X, r, qcol, qop, qval, i, k)):
                    out_rows[pos] = r
                    pos += 1
            out_rows[offsets[i]:end].sort()  # ascending rows, as the plain scan lists them

    @njit(parallel=True, cache=True)
    def _codes_kernel(order, pcode, out):  # pragma: no cover - compiled
        """``out[j, t]``: the codes, in every column, of the row at position ``t`` of column
        ``j``'s order (``pcode[c, t]``: the code of position ``t`` of column ``c``'s order)."""
        p, n = order.shape
        code = np.empty((n, p), dtype=np.uint8)
        for j in nb.prange(p):
            for t in range(n):
                code[order[j, t], j] = pcode[j, t]
        for j in nb.prange(p):
            for t in range(n):
                out[j, t, :] = code[order[j, t], :]


    @njit(cache=True, nogil=True, inline="always")
    def _smallest_row(u, i, k, bv, bi, out, tie):  # pragma: no cover - compiled
        """Row ``i`` of :func:`_smallest_kernel` (``bv``, ``bi``: scratch of ``k`` values)."""
        p = u.shape[1]
        m = 0
        for j in range(p):  # insertion into the k smallest so far, by (value, column)
            x = u[i, j]
            if m == k and not x < bv[k - 1]:
                continue
            at = m if m < k else k - 1
            while at > 0 and x < bv[at - 1]:
                if at < k:
                    bv[at] = bv[at - 1]
                    bi[at] = bi[at - 1]
                at -= 1
            bv[at] = x
            bi[at] = j
            if m < k:
                m += 1
        kth = bv[k - 1]
        n_all = 0
        for j in range(p):
            n_all += u[i, j] == kth
        n_in = 0
        for t in range(k):
            n_in += bv[t] == kth
        tie[i] = n_all > n_in
        _ascending(bi, k, out, i)

    @njit(cache=True, nogil=True, inline="always")
    def _ascending(bi, k, out, i):  # pragma: no cover - compiled
        """``out[i]``: the ``k`` columns ``bi[:k]`` ascending (an insertion sort in place:
        ``out[i].sort()`` made a call per row that cost twice the rest of the row)."""
        for t in range(k):
            c = bi[t]
            at = t
            while at > 0 and out[i, at - 1] > c:
                out[i, at] = out[i, at - 1]
                at -= 1
            out[i, at] = c

    @njit(cache=True, nogil=True, inline="always")
    def _smallest_row_keys(u, i, k, shift, bk, bi, out, tie):  # pragma: no cover - compiled
        """Row ``i`` of :func:`_smallest_kernel` for values in ``[0, 1)`` and at most
        ``2 ** shift <= 1024`` columns: each value as the integer ``floor(x * 2**53)`` (exact for
        ``rng.random``'s values, and never reversing two values' order), its column in the low
        ``shift`` bits, and the ``k + 1`` smallest such keys kept by a min/max network (no branch
        on the values: a branch per value mispredicted about half the time). ``tie``: the
        ``(k+1)``-th smallest value equals the ``k``-th (or two values fell on one integer, or a
        value lies outside ``[0, 1)``): numpy decides that row (:func:`smallest_columns`).
        ``bk``: scratch of ``k + 1`` keys."""
        p = u.shape[1]
        top = np.int64(9223372036854775807)
        for t in range(k + 1):
            bk[t] = top
        bad = False
        for j in range(p):
            x = u[i, j]
            bad |= not (x >= 0.0 and x < 1.0)
            key = (np.int64(x * 9007199254740992.0) << shift) | j
            for t in range(k + 1):
                lo = min(bk[t], key)
                key = max(bk[t], key)
                bk[t] = lo
        tie[i] = bad or (k < p and (bk[k] >> shift) == (bk[k - 1] >> shift))
        mask = (np.int64(1) << shift) - 1
        for t in range(k):
            bi[t] = bk[t] & mask
        _ascending(bi, k, out, i)

    @njit(cache=True, nogil=True)
    def _key_shift(p):  # pragma: no cover - compiled
        """The low bits a column needs in :func:`_smallest_row_keys`' keys (-1: too many columns)."""
        shift = 1
        while (1 << shift) < p:
            shift += 1
        return shift if shift <= 10 else -1

    @njit(cache=True, nogil=True)
    def _smallest_kernel(u, k, out, tie):  # pragma: no cover - compiled
        """Per row of ``u``: the columns of its ``k`` smallest values, ascending (``out``), and
        whether another column holds the ``k``-th smallest value too (``tie``; also set on rows the
        integer keys cannot order, see :func:`_smallest_row_keys`). One thread: the reference of
        :func:`_smallest_parallel`."""
        shift = _key_shift(u.shape[1])
        bv = np.empty(k)
        bk = np.empty(k + 1, dtype=np.int64)
        bi = np.empty(k, dtype=np.int64)
        for i in range(u.shape[0]):
            if shift > 0:
                _smallest_row_keys(u, i, k, shift, bk, bi, out, tie)
            else:
                _smallest_row(u, i, k, bv, bi, out, tie)

    @njit(parallel=True, cache=True)
    def _smallest_parallel(u, k, out, tie, block):  # pragma: no cover - compiled
        """:func:`_smallest_kernel` over blocks of ``block`` rows in parallel (each row's output is
        its own: the same arrays whatever the number of threads)."""
        b = u.shape[0]
        shift = _key_shift(u.shape[1])
        for c in nb.prange((b + block - 1) // block):
            bv = np.empty(k)
            bk = np.empty(k + 1, dtype=np.int64)
            bi = np.empty(k, dtype=np.int64)
            for i in range(c * block, min(b, (c + 1) * block)):
                if shift > 0:
                    _smallest_row_keys(u, i, k, shift, bk, bi, out, tie)
                else:
                    _smallest_row(u, i, k, bv, bi, out, tie)

def _mask_numpy(X: np.ndarray, qcol: np.ndarray, qop: np.ndarray, qval: np.ndarray) -> np.ndarray:
    """(n_rows, n_queries) boolean matrix of the rows each query selects (small chunks only)."""
    n = X.shape[0]
    m = np.ones((n, qcol.shape[0]), dtype=bool)
    with np.errstate(invalid="ignore"):
        for t in range(qcol.shape[1]):
            vals = X[:, qcol[:, t]]
            nan = np.isnan(vals)
            v = qval[:, t][None, :]
            op = qop[:, t]
            cur = np.zeros_like(m)
            for code, fn in ((EQ, np.equal), (NE, np.not_equal), (GT, np.greater), (LT, np.less),
                             (GE, np.greater_equal), (LE, np.less_equal)):
                sel = op == code
                if sel.any():
                    cur[:, sel] = fn(vals[:, sel], v[:, sel]) & ~nan[:, sel]
            sel = op == ISNULL
            cur[:, sel] = nan[:, sel]
            sel = op == NOTNULL
            cur[:, sel] = ~nan[:, sel]
            m &= cur
    return m


def is_stable_order(values: np.ndarray, order: np.ndarray) -> bool:
    """Whether ``order`` is the stable sort order (``np.argsort(kind="stable")``, NaN last) of the
    column whose values along ``order`` are ``values`` (``column[order]``): ascending, equal
    values (NaN with NaN) in ascending positions. ``order`` must hold every position once.

    Examples
    --------
    >>> col = np.array([2.0, np.nan, 1.0, 2.0])
    >>> is_stable_order(col[[2, 0, 3, 1]], np.array([2, 0, 3, 1]))
    True
    >>> is_stable_order(col[[2, 3, 0, 1]], np.array([2, 3, 0, 1]))
    False
    """
    if values.size < 2:
        return True
    a, b = values[:-1], values[1:]
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    rising = order[1:] > order[:-1]
    # a step is in order when it rises, or when it reaches the missing values, or when it stays
    # (equal, or missing to missing) on an ascending position
    return bool(((a < b) | (~nan_a & nan_b) | (((a == b) | (nan_a & nan_b)) & rising)).all())


class ColumnIndex:
    """Per-column sort orders of a float matrix (missing values last), so that every predicate's
    matching rows form one contiguous slice of its column's order (``NE``: the non-missing slice
    less the value's run). Counting scans only the narrowest predicate's slice, and tests the other
    predicates on codes stored in that column's order (sequential reads, not the rows).

    A column of at most 256 distinct values (missing counted as one) is coded by its values'
    ranks: every predicate on it is decided on its codes alone. Another is coded by buckets of
    its order (a predicate is tested on the value for a row in a bucket at the predicate's
    bounds). A predicate's slice is found by a binary search of the column's distinct values (at
    most :data:`DISTINCT_KEPT` kept per column, a few kB that stay in cache); a column of more
    distinct values is searched through its order (its values are not stored a second time, in
    sorted order: 8 bytes a cell less, the same slices).

    Attributes
    ----------
    X : ndarray of float64, shape (n, p)
        The matrix.
    order : ndarray, shape (p, n)
        Each column's stable sort order (int32 below 2**31 rows, else int64).
    n_valid : ndarray of int64, shape (p,)
        Non-missing values per column.
    shift : int
        A bucket code is a position in the column's order ``>> shift`` (at most 256 buckets).
    position_codes : ndarray of uint8, shape (p, n)
        The code of each position of each column's order (its value's rank in a ranked column,
        missing values last; else its bucket).
    ranked : ndarray of bool, shape (p,)
        Columns coded by their values' ranks (none when no codes are kept).
    distinct, starts, distinct_at : ndarray
        The columns' distinct non-missing values, ascending, concatenated (float64), the first
        position of each in its column's order (int64), and each column's share
        ``distinct[distinct_at[c]:distinct_at[c + 1]]`` (empty: not kept, the column's values
        are searched through its order).
    hash_keys, hash_rows, hash_at : ndarray of int64
        Per column keeping its distinct values, a hash table of them (open addressing, 2 to 4
        slots a value: each slot's value bits, ``-0.0`` as ``0.0``, and its position in
        ``distinct``, -1 when empty), column ``c``'s at ``hash_at[c]:hash_at[c + 1]``: a query
        value found there needs no binary search.
    codes : ndarray of uint8, shape (p, n, p)
        ``codes[j, t]``: the codes, in every column, of the row at position ``t`` of column
        ``j``'s order (``n * p * p`` bytes). Above :data:`CODES_BYTES` (and without numba) none
        are kept (a zero-stride view) and ``shift`` is 63: the kernels test every predicate on its
        value, as the plain scan does.
    """

    def __init__(self, X: np.ndarray, orders: Callable[[int], np.ndarray | None] | None = None) -> None:
        """``orders(j)``: a candidate stable order of column ``j`` (a drop-and-retest's, its run's
        order without the dropped rows), used when it is that order (checked:
        :func:`is_stable_order`), else the column is sorted; the index is the same."""
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        n, p = self.X.shape
        self.order = np.empty((p, n), dtype=np.int32 if n < 2**31 else np.int64)
        self.n_valid = np.empty(p, dtype=np.int64)
        coded = _HAS_NUMBA and n * p * p <= CODES_BYTES
        self.shift = max(0, (n - 1).bit_length() - 8) if coded else 63
        self.position_codes = np.empty((p, n), dtype=np.uint8)
        self.ranked = np.zeros(p, dtype=np.bool_)
        distinct, starts, at = [], [], [0]
        bucket = (np.arange(n, dtype=np.int64) >> min(self.shift, 62)).astype(np.uint8) if coded else None
        for j in range(p):  # loop over columns
            o = orders(j) if orders is not None else None
            srt = self.X[o, j] if o is not None and o.size == n else None
            if srt is None or not is_stable_order(srt, o):
                o = stable_order(self.X[:, j])  # np.argsort(kind="stable"): NaN sorts last
                srt = self.X[o, j]  # this column's sorted values, not kept
            self.order[j] = o
            nv = int((~np.isnan(srt)).sum())
            self.n_valid[j] = nv
            first = np.flatnonzero(np.r_[True, srt[1:nv] != srt[:nv - 1]]) if nv else np.zeros(0, np.int64)
            m = int(first.size)
            if m <= DISTINCT_KEPT:
                distinct.append(srt[first]), starts.append(first)
            at.append(at[-1] + (m if m <= DISTINCT_KEPT else 0))
            if coded and m + (nv < n) <= 256:  # ranks: the position's run (missing: the last code)
                self.ranked[j] = True
                rank = np.full(n, m, dtype=np.uint8)
                rank[:nv] = np.repeat(np.arange(m, dtype=np.uint8), np.diff(np.r_[first, nv]))
                self.position_codes[j] = rank
            else:
                self.position_codes[j] = bucket if bucket is not None else 0
        self.distinct = np.concatenate(distinct) if distinct else np.zeros(0)
        self.starts = np.concatenate(starts).astype(np.int64) if starts else np.zeros(0, np.int64)
        self.distinct_at = np.asarray(at, dtype=np.int64)
        m = np.diff(self.distinct_at)  # hash tables of the kept distinct values: 2 to 4 slots each
        size = np.where(m > 0, np.left_shift(1, np.array([int(2 * x - 1).bit_length() for x in m.tolist()],
                                                         dtype=np.int64)), 0)
        self.hash_at = np.r_[0, np.cumsum(size)].astype(np.int64)
        self.hash_keys = np.zeros(int(self.hash_at[-1]), dtype=np.int64)
        self.hash_rows = np.full(int(self.hash_at[-1]), -1, dtype=np.int64)
        if _HAS_NUMBA and self.hash_keys.size:
            _hash_kernel(self.distinct, self.distinct_at, self.hash_at, self.hash_keys, self.hash_rows)
        if coded:
            self.codes = np.empty((p, n, p), dtype=np.uint8)
            if n > 0:
                with PARALLEL_KERNELS:
                    _codes_kernel(self.order, self.position_codes, self.codes)
        else:  # no memory for codes: one bucket, whose code every row reads (a zero-stride view)
            self.codes = np.broadcast_to(np.zeros(1, dtype=np.uint8), (p, n, p))

    def _kernel_args(self) -> tuple:
        """The index's arrays as the indexed kernels read them."""
        return (self.order, self.n_valid, self.codes, self.shift < 63, self.position_codes,
                self.ranked, self.distinct, self.starts, self.distinct_at, self.hash_keys, self.hash_rows,
                self.hash_at)


def count_matches(X: np.ndarray | ColumnIndex, qcol: np.ndarray, qop: np.ndarray, qval: np.ndarray, *,
                  cap: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``X`` satisfying each query: the count (at most ``cap``) and the first matching row.

    Parameters
    ----------
    X : ndarray, shape (n, p), or ColumnIndex
        float64 data (missing = NaN); a :class:`ColumnIndex` of it scans only the narrowest
        predicate's slice (numba backend).
    qcol, qop : ndarray of int64, shape (m, k)
        Column and operator of each predicate.
    qval : ndarray of float64, shape (m, k)
        Comparison values.
    cap : int, optional
        Stop counting a query at this many matches.

    Returns
    -------
    counts, first : ndarray of int64, shape (m,)
        ``first`` is the lowest matching row when the count is below ``cap`` (some matching row
        otherwise), -1 when nothing matches.
    """
    index = X if isinstance(X, ColumnIndex) else None
    X = index.X if index is not None else np.ascontiguousarray(X, dtype=np.float64)
    qcol = np.ascontiguousarray(qcol, dtype=np.int64)
    qop = np.ascontiguousarray(qop, dtype=np.int64)
    qval = np.ascontiguousarray(qval, dtype=np.float64)
    m = qcol.shape[0]
    cap_ = int(cap) if cap is not None else np.iinfo(np.int64).max
    counts = np.zeros(m, dtype=np.int64)
    first = np.full(m, -1, dtype=np.int64)
    if m == 0 or X.shape[0] == 0:
        return counts, first
    if _HAS_NUMBA:
        with PARALLEL_KERNELS:
            if index is not None:
                _count_indexed_kernel(X, *index._kernel_args(), qcol, qop, qval, cap_, counts, first)
            else:
                _count_kernel(X, qcol, qop, qval, cap_, counts, first)
        return counts, first
    chunk = max(1, _MAX_CELLS // max(X.shape[0], 1))
    for s in range(0, m, chunk):
        e = min(m, s + chunk)
        mk = _mask_numpy(X, qcol[s:e], qop[s:e], qval[s:e])
        c = mk.sum(axis=0)
        counts[s:e] = np.minimum(c, cap_)
        first[s:e] = np.where(c > 0, mk.argmax(axis=0), -1)
    return counts, first


def match_lists(X: np.ndarray | ColumnIndex, qcol: np.ndarray, qop: np.ndarray, qval: np.ndarray,
                counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every row matching each query, as CSR ``(offsets, rows)`` (``counts`` from :func:`count_matches`
    without a cap). Rows are ascending within a query. With a :class:`ColumnIndex` (numba backend)
    only the narrowest predicate's slice is scanned: the same lists."""
    index = X if isinstance(X, ColumnIndex) else None
    X = index.X if index is not None else np.ascontiguousarray(X, dtype=np.float64)
    offsets = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    rows = np.empty(int(offsets[-1]), dtype=np.int64)
    if rows.size == 0:
        return offsets, rows
    if _HAS_NUMBA:
        qcol = np.ascontiguousarray(qcol, dtype=np.int64)
        qop = np.ascontiguousarray(qop, dtype=np.int64)
        qval = np.ascontiguousarray(qval, dtype=np.float64)
        with PARALLEL_KERNELS:
            if index is not None:
                _fill_indexed_kernel(X, *index._kernel_args(), qcol, qop, qval, offsets, rows)
            else:
                _fill_kernel(X, qcol, qop, qval, offsets, rows)
        return offsets, rows
    chunk = max(1, _MAX_CELLS // max(X.shape[0], 1))
    for s in range(0, counts.size, chunk):
        e = min(counts.size, s + chunk)
        mk = _mask_numpy(X, qcol[s:e], qop[s:e], qval[s:e])
        qq, rr = np.nonzero(mk.T)
        rows[offsets[s]:offsets[e]] = rr  # np.nonzero is row-major: grouped by query, rows ascending
    return offsets, rows


def smallest_columns(u: np.ndarray, k: int) -> np.ndarray:
    """Per row of ``u`` (shape ``(b, p)``, ``1 <= k <= p``), the columns of its ``k`` smallest
    values, ascending: ``np.sort(np.argpartition(u, k - 1, axis=1)[:, :k], axis=1)``, which it
    equals (a row where another column ties with its ``k``-th smallest value is handed to that
    very expression, as numpy breaks such ties its own way).

    Examples
    --------
    >>> smallest_columns(np.array([[0.5, 0.1, 0.9, 0.3], [0.2, 0.8, 0.1, 0.7]]), 2).tolist()
    [[1, 3], [0, 2]]
    """
    u = np.ascontiguousarray(u, dtype=np.float64)
    if not _HAS_NUMBA or u.shape[0] == 0:
        return np.sort(np.argpartition(u, k - 1, axis=1)[:, :k], axis=1)
    out = np.empty((u.shape[0], k), dtype=np.int64)
    tie = np.zeros(u.shape[0], dtype=np.bool_)
    with PARALLEL_KERNELS:
        _smallest_parallel(u, int(k), out, tie, 4096)
    if tie.any():
        out[tie] = np.sort(np.argpartition(u[tie], k - 1, axis=1)[:, :k], axis=1)
    return out
