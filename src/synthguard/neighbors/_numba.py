"""numba kernels for exact k-NN and radius counts, with a sorted-window lower bound.

The reference rows are sorted by one numeric "pivot" column. For a query, candidates are visited
outwards from the query's pivot value; the pivot column's own term is a lower bound of the whole
weighted sum (every term is non-negative, and float addition of non-negative numbers is monotone),
so the scan stops once that bound exceeds the current k-th best sum. Rows whose pivot is missing
are always scanned. Results are bitwise identical to the NumPy brute force: the same terms are
added in the same order, and ties are broken by the lower reference index.
"""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, nogil=True)
def _term(a, b, scale, clip, p, nan_rule):
    a_nan = a != a
    b_nan = b != b
    if a_nan or b_nan:
        if a_nan and b_nan:
            return 0.0 if nan_rule == 0 else 1.0
        return 1.0 if nan_rule == 0 else np.inf
    diff = abs(a - b)
    if scale > 0:
        t = diff / scale
    else:
        t = 0.0 if diff == 0 else 1.0
    if clip and t > 1.0:
        t = 1.0
    if p != 1.0:
        t = t ** p
    return t


@nb.njit(cache=True, nogil=True)
def _pair_sum(qn, qc, rn, rc, i, j, scale, wn, wc, clip, p, nan_rule, bound):
    """Weighted sum for (query i, reference j); returns +inf-ish early if it exceeds ``bound``."""
    acc = 0.0
    for c in range(qn.shape[1]):
        acc += wn[c] * _term(qn[i, c], rn[j, c], scale[c], clip, p, nan_rule)
        if acc > bound:
            return acc, False
    for c in range(qc.shape[1]):
        if qc[i, c] != rc[j, c]:
            acc += wc[c]
            if acc > bound:
                return acc, False
    return acc, True


@nb.njit(cache=True, nogil=True)
def _offer(bs, bi, k, acc, j):
    if acc < bs[k - 1] or (acc == bs[k - 1] and j < bi[k - 1]):
        m = k - 1
        while m > 0 and (bs[m - 1] > acc or (bs[m - 1] == acc and bi[m - 1] > j)):
            bs[m] = bs[m - 1]
            bi[m] = bi[m - 1]
            m -= 1
        bs[m] = acc
        bi[m] = j


@nb.njit(parallel=True, cache=True)
def knn_kernel(qn, qc, rn, rc, scale, wn, wc, clip, p, nan_rule, k, exclude_self, q_offset,
               order, pivot_vals, nan_rows, pivot, out_s, out_i):
    nq = qn.shape[0]
    n_sorted = order.shape[0]
    for i in nb.prange(nq):
        bs = out_s[i]
        bi = out_i[i]
        gi = i + q_offset
        for t in range(nan_rows.shape[0]):
            j = nan_rows[t]
            if exclude_self and j == gi:
                continue
            acc, ok = _pair_sum(qn, qc, rn, rc, i, j, scale, wn, wc, clip, p, nan_rule, bs[k - 1])
            if ok:
                _offer(bs, bi, k, acc, j)
        if pivot < 0 or qn[i, pivot] != qn[i, pivot]:
            for t in range(n_sorted):
                j = order[t]
                if exclude_self and j == gi:
                    continue
                acc, ok = _pair_sum(qn, qc, rn, rc, i, j, scale, wn, wc, clip, p, nan_rule, bs[k - 1])
                if ok:
                    _offer(bs, bi, k, acc, j)
            continue
        qv = qn[i, pivot]
        right = np.searchsorted(pivot_vals, qv)
        left = right - 1
        wp = wn[pivot]
        sp = scale[pivot]
        while left >= 0 or right < n_sorted:
            lb_l = np.inf
            lb_r = np.inf
            if left >= 0:
                lb_l = wp * _term(qv, pivot_vals[left], sp, clip, p, nan_rule)
            if right < n_sorted:
                lb_r = wp * _term(qv, pivot_vals[right], sp, clip, p, nan_rule)
            if lb_l <= lb_r:
                lb = lb_l
                t = left
                left -= 1
            else:
                lb = lb_r
                t = right
                right += 1
            if lb > bs[k - 1]:
                break
            j = order[t]
            if exclude_self and j == gi:
                continue
            acc, ok = _pair_sum(qn, qc, rn, rc, i, j, scale, wn, wc, clip, p, nan_rule, bs[k - 1])
            if ok:
                _offer(bs, bi, k, acc, j)


@nb.njit(parallel=True, cache=True)
def count_kernel(qn, qc, rn, rc, scale, wn, wc, clip, p, nan_rule, radius, exclude_self, q_offset,
                 order, pivot_vals, nan_rows, pivot, out):
    nq = qn.shape[0]
    n_sorted = order.shape[0]
    for i in nb.prange(nq):
        gi = i + q_offset
        cnt = 0
        for t in range(nan_rows.shape[0]):
            j = nan_rows[t]
            if exclude_self and j == gi:
                continue
            acc, ok = _pair_sum(qn, qc, rn, rc, i, j, scale, wn, wc, clip, p, nan_rule, radius)
            if ok:
                cnt += 1
        if pivot < 0 or qn[i, pivot] != qn[i, pivot]:
            for t in range(n_sorted):
                j = order[t]
                if exclude_self and j == gi:
                    continue
                acc, ok = _pair_sum(qn, qc, rn, rc, i, j, scale, wn, wc, clip, p, nan_rule, radius)
                if ok:
                    cnt += 1
            out[i] = cnt
            continue
        qv = qn[i, pivot]
        wp = wn[pivot]
        sp = scale[pivot]
        right = np.searchsorted(pivot_vals, qv)
        left = right - 1
        while left >= 0:
            if wp * _term(qv, pivot_vals[left], sp, clip, p, nan_rule) > radius:
                break
            j = order[left]
            left -= 1
            if exclude_self and j == gi:
                continue
            acc, ok = _pair_sum(qn, qc, rn, rc, i, j, scale, wn, wc, clip, p, nan_rule, radius)
            if ok:
                cnt += 1
        while right < n_sorted:
            if wp * _term(qv, pivot_vals[right], sp, clip, p, nan_rule) > radius:
                break
            j = order[right]
            right += 1
            if exclude_self and j == gi:
                continue
            acc, ok = _pair_sum(qn, qc, rn, rc, i, j, scale, wn, wc, clip, p, nan_rule, radius)
            if ok:
                cnt += 1
        out[i] = cnt
