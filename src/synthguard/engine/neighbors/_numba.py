"""numba kernels for exact k-NN and radius counts over a mixed-type box tree.

The reference rows are organised in a binary tree (a k-d tree over numeric AND categorical columns):
every node holds a contiguous slice of the reordered reference rows and, per column, the box of its
values (numeric: min/max of the present values and whether a value is missing; categorical: min/max
code). For a query, the *lower bound* of a node is the weighted sum of, per column, the smallest term
any row in the box can produce (numeric: the term to the query value clamped into the box, or the
missing-value term; categorical: the weight when the query's code lies outside the node's code range).
Every term of the bound is <= the corresponding term of every row in the node, all terms are
non-negative and are added in the same column order as the real sum, and IEEE addition, multiplication
by a non-negative weight, division, clipping and powers are all monotone, so the bound never exceeds
the real weighted sum *as computed in floating point*. A node is skipped only when its bound exceeds
the current k-th best, so results are exactly those of the NumPy brute force (bit for bit: the same
terms are added in the same order), including ties, which are decided on the finished distance and then
the lower reference index.

Queries are searched depth first, nearer child first, and a pair sum is abandoned as soon as its
partial sum exceeds the threshold.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..._jit import njit

_IMAX = np.iinfo(np.int64).max
_NO_LB = np.zeros(0)


@njit(cache=True, nogil=True)
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
    if p == 2.0:
        t = t * t
    elif p != 1.0:
        t = t ** p
    return t


@njit(cache=True, nogil=True)
def _finish(s, total, normalise, p):
    d = s / total if (normalise and total > 0) else s
    if p == 2.0:
        d = np.sqrt(d)
    elif p != 1.0:
        d = d ** (1.0 / p)
    return d


@njit(cache=True, nogil=True)
def _threshold(d, s, total, normalise, p):
    """The largest weighted sum whose finished distance is <= ``d`` (``s`` finishes to ``d``)."""
    if d == np.inf:
        return np.inf
    for _ in range(64):
        nxt = np.nextafter(s, np.inf)
        if _finish(nxt, total, normalise, p) <= d:
            s = nxt
        else:
            break
    return s


@njit(cache=True, nogil=True, inline="always")
def _pair_sum(qn, qc, rn, rc, i, j, scale, wn, wc, clip, p, nan_rule, bound):
    """Weighted sum for (query i, reference row j); gives up (returns a value ``> bound``) once it
    exceeds ``bound``, so the pair qualifies exactly when the result is ``<= bound``."""
    acc = 0.0
    for c in range(qn.shape[1]):
        acc += wn[c] * _term(qn[i, c], rn[j, c], scale[c], clip, p, nan_rule)
        if acc > bound:
            return acc
    for c in range(qc.shape[1]):
        if qc[i, c] != rc[j, c]:
            acc += wc[c]
            if acc > bound:
                return acc
    return acc


@njit(cache=True, nogil=True, inline="always")
def _pair_sum_gower(qn, qc, rn, rc, i, j, scale, wn, wc, cat_lb, clip, bound, skip=-1):
    """:func:`_pair_sum` specialised to ``p == 1``, ``nan_rule == "max"`` and all scales ``> 0`` (Gower,
    the common case): the same operations on the same values in the same order, so bitwise the same
    sum, without ``_term``'s branches (a NaN on either side shows as a NaN quotient: rare path).

    The categorical mismatches are counted first (integer compares, vectorised): ``cat_lb[m]``, the
    floating-point sum of ``m`` copies of the smallest categorical weight added from 0, is a lower bound
    of the real sum whenever ``m`` codes differ (IEEE addition is monotone, numeric terms are >= 0 and
    every mismatch adds a weight >= the smallest), and on most pairs it already exceeds ``bound``.

    ``skip``: a row with at most this many categorical codes unequal to the query's is not summed
    (NaN, which never qualifies): the search has visited these rows already (``-1``: none skipped).
    """
    m = 0
    for c in range(qc.shape[1]):
        m += qc[i, c] != rc[j, c]
    if m <= skip:
        return np.nan
    lb = cat_lb[m]
    if lb > bound:
        return lb
    acc = 0.0
    for c in range(qn.shape[1]):
        a = qn[i, c]
        b = rn[j, c]
        t = abs(a - b) / scale[c]
        if t != t:  # as _term: both missing 0, one missing 1, else (inf - inf) stays NaN
            if a != a and b != b:
                t = 0.0
            elif a != a or b != b:
                t = 1.0
        elif clip and t > 1.0:
            t = 1.0
        acc += wn[c] * t
        if acc > bound:
            return acc
    for c in range(qc.shape[1]):
        if qc[i, c] != rc[j, c]:
            acc += wc[c]
            if acc > bound:
                return acc
    return acc


@njit(cache=True, nogil=True)
def _cat_floor(wc):
    """``out[m]``: ``m`` copies of the smallest categorical weight summed from 0.0 in floating point."""
    out = np.zeros(wc.shape[0] + 1)
    if wc.shape[0] == 0:
        return out
    w = wc.min()
    if not w > 0:
        return out
    for m in range(1, wc.shape[0] + 1):
        out[m] = out[m - 1] + w
    return out


@njit(cache=True, nogil=True)
def _is_gower(scale, p, nan_rule):
    """Whether the :func:`_pair_sum_gower` fast path applies."""
    if p != 1.0 or nan_rule != 0:
        return False
    for c in range(scale.shape[0]):
        if not scale[c] > 0 or scale[c] == np.inf:
            return False
    return True


# ----------------------------------------------------------------------------- tree construction
@njit(cache=True, nogil=True)
def _spread(rn, rc, perm, start, end, scale, wn, wc, clip, p, nan_rule, exact):
    """Per column, how much it contributes to distances inside the node (sampled or exact)."""
    n_num = rn.shape[1]
    n_cat = rc.shape[1]
    out = np.zeros(n_num + n_cat)
    n = end - start
    if not exact:
        m = min(32, n)
        half = m // 2
        for a in range(m):
            ia = perm[start + (a * n) // m]
            ib = perm[start + (((a + half) % m) * n) // m]
            for c in range(n_num):
                t = _term(rn[ia, c], rn[ib, c], scale[c], clip, p, nan_rule)
                out[c] += wn[c] * min(t, 2.0)
            for c in range(n_cat):
                if rc[ia, c] != rc[ib, c]:
                    out[n_num + c] += wc[c]
        return out
    for c in range(n_num):
        lo = np.inf
        hi = -np.inf
        has_nan = False
        for t in range(start, end):
            v = rn[perm[t], c]
            if v != v:
                has_nan = True
            else:
                lo = min(lo, v)
                hi = max(hi, v)
        if lo < hi:
            out[c] = 1.0
        elif has_nan and lo <= hi:
            out[c] = 1.0
    for c in range(n_cat):
        first = rc[perm[start], c]
        for t in range(start, end):
            if rc[perm[t], c] != first:
                out[n_num + c] = 1.0
                break
    return out


@njit(cache=True, nogil=True)
def _split(rn, rc, perm, start, end, col):
    """Sort the node's rows by column ``col`` and return a split position on a value boundary."""
    n = end - start
    n_num = rn.shape[1]
    key = np.empty(n)
    for t in range(n):
        j = perm[start + t]
        if col < n_num:
            v = rn[j, col]
            key[t] = np.inf if v != v else v
        else:
            key[t] = float(rc[j, col - n_num])
    order = np.argsort(key, kind="mergesort")
    seg = perm[start:end].copy()
    sk = key[order]
    for t in range(n):
        perm[start + t] = seg[order[t]]
    # NaN rows (key inf) and real inf share a key: box bounds stay exact, only the split is coarser
    mid = n // 2
    m = mid
    while m < n and sk[m] == sk[m - 1]:
        m += 1
    if m < n:
        return start + m
    m = mid
    while m > 0 and sk[m] == sk[m - 1]:
        m -= 1
    if m > 0:
        return start + m
    return -1


@njit(cache=True, nogil=True)
def build_tree(rn, rc, scale, wn, wc, clip, p, nan_rule, leaf_size):
    """Build the box tree: returns (perm, start, end, left, right, depth) per node."""
    nr = rn.shape[0]
    n_num = rn.shape[1]
    perm = np.arange(nr)
    cap = max(1, 2 * nr)
    n_start = np.empty(cap, dtype=np.int64)
    n_end = np.empty(cap, dtype=np.int64)
    n_left = np.full(cap, -1, dtype=np.int64)
    n_right = np.full(cap, -1, dtype=np.int64)
    n_depth = np.zeros(cap, dtype=np.int64)
    n_start[0] = 0
    n_end[0] = nr
    count = 1
    stack = np.empty(cap, dtype=np.int64)
    stack[0] = 0
    sp = 1
    max_depth = 0
    while sp > 0:
        sp -= 1
        node = stack[sp]
        s, e = n_start[node], n_end[node]
        if n_depth[node] > max_depth:
            max_depth = n_depth[node]
        if e - s <= leaf_size:
            continue
        spread = _spread(rn, rc, perm, s, e, scale, wn, wc, clip, p, nan_rule, False)
        if spread.max() <= 0:
            spread = _spread(rn, rc, perm, s, e, scale, wn, wc, clip, p, nan_rule, True)
            if spread.max() <= 0:
                continue  # all rows identical on every column: a leaf
        mid = -1
        for _ in range(n_num + rc.shape[1]):
            col = np.argmax(spread)
            if spread[col] <= 0:
                break
            mid = _split(rn, rc, perm, s, e, col)
            if mid >= 0:
                break
            spread[col] = 0.0
        if mid < 0:
            continue
        for child, (cs, ce) in enumerate(((s, mid), (mid, e))):
            n_start[count] = cs
            n_end[count] = ce
            n_depth[count] = n_depth[node] + 1
            if child == 0:
                n_left[node] = count
            else:
                n_right[node] = count
            stack[sp] = count
            sp += 1
            count += 1
    return perm, n_start[:count].copy(), n_end[:count].copy(), n_left[:count].copy(), \
        n_right[:count].copy(), max_depth


@njit(cache=True, nogil=True)
def node_boxes(rn_s, rc_s, n_start, n_end, n_left, n_right):
    """Per node and column: numeric min/max of present values (NaN if none), has-missing flag,
    categorical min/max code and a 64-bit mask of the codes present (bit ``(code + 1) % 64``). Children are built after parents, so a reverse pass is bottom-up."""
    n_nodes = n_start.shape[0]
    n_num = rn_s.shape[1]
    n_cat = rc_s.shape[1]
    lo = np.full((n_nodes, n_num), np.nan)
    hi = np.full((n_nodes, n_num), np.nan)
    has_nan = np.zeros((n_nodes, n_num), dtype=np.bool_)
    clo = np.zeros((n_nodes, n_cat), dtype=np.int64)
    chi = np.zeros((n_nodes, n_cat), dtype=np.int64)
    cmask = np.zeros((n_nodes, n_cat), dtype=np.uint64)
    for node in range(n_nodes - 1, -1, -1):
        a, b = n_left[node], n_right[node]
        if a < 0:
            for c in range(n_num):
                mn = np.inf
                mx = -np.inf
                nan = False
                for t in range(n_start[node], n_end[node]):
                    v = rn_s[t, c]
                    if v != v:
                        nan = True
                    else:
                        mn = min(mn, v)
                        mx = max(mx, v)
                if mn <= mx:
                    lo[node, c] = mn
                    hi[node, c] = mx
                has_nan[node, c] = nan
            for c in range(n_cat):
                mn = _IMAX
                mx = -_IMAX
                bits = np.uint64(0)
                for t in range(n_start[node], n_end[node]):
                    v = rc_s[t, c]
                    mn = min(mn, v)
                    mx = max(mx, v)
                    bits |= _bit(v)
                clo[node, c] = mn
                chi[node, c] = mx
                cmask[node, c] = bits
        else:
            for c in range(n_num):
                lo[node, c] = np.fmin(lo[a, c], lo[b, c])
                hi[node, c] = np.fmax(hi[a, c], hi[b, c])
                has_nan[node, c] = has_nan[a, c] or has_nan[b, c]
            for c in range(n_cat):
                clo[node, c] = min(clo[a, c], clo[b, c])
                chi[node, c] = max(chi[a, c], chi[b, c])
                cmask[node, c] = cmask[a, c] | cmask[b, c]
    return lo, hi, has_nan, clo, chi, cmask


@njit(cache=True, nogil=True)
def _bit(code):
    """The bit of a categorical code in a node's 64-bit code mask (codes share bits modulo 64)."""
    return np.uint64(1) << np.uint64((code + 1) & 63)


# ----------------------------------------------------------------------------- searches
@njit(cache=True, nogil=True)
def _node_bound(qn, qc, i, node, lo, hi, has_nan, clo, chi, cmask, scale, wn, wc, clip, p, nan_rule, bound,
                cat_lb):
    """A lower bound of the weighted sum from query ``i`` to every row of ``node``.

    With ``cat_lb`` (see :func:`_pair_sum_gower`; an empty array disables it) the categorical columns
    whose query code cannot occur in the node are counted first: every row mismatches there, so
    ``cat_lb[m]`` is already a lower bound, returned at once when it exceeds ``bound``."""
    if cat_lb.shape[0] > 0 and bound < np.inf:
        m = 0
        for c in range(qc.shape[1]):
            v = qc[i, c]
            m += (v < clo[node, c]) | (v > chi[node, c]) | ((cmask[node, c] & _bit(v)) == 0)
        if cat_lb[m] > bound:
            return cat_lb[m]
    acc = 0.0
    for c in range(qn.shape[1]):
        q = qn[i, c]
        best = np.inf
        a = lo[node, c]
        if a == a:  # the node holds present values
            if q != q:
                best = _term(q, a, scale[c], clip, p, nan_rule)
            else:
                b = hi[node, c]
                x = a if q < a else (b if q > b else q)
                best = _term(q, x, scale[c], clip, p, nan_rule)
        if has_nan[node, c]:
            t = _term(q, np.nan, scale[c], clip, p, nan_rule)
            if t < best:
                best = t
        acc += wn[c] * best
        if acc > bound:
            return acc
    for c in range(qc.shape[1]):
        v = qc[i, c]
        if v < clo[node, c] or v > chi[node, c] or (cmask[node, c] & _bit(v)) == 0:
            acc += wc[c]
            if acc > bound:
                return acc
    return acc


@njit(cache=True, nogil=True, inline="always")
def _offer(acc, j, bd, bs, bi, k, thr, at_best, counted, total, normalise, p):
    """Enter reference row ``j`` (weighted sum ``acc <= thr``) into the k-best list ``bd/bs/bi``
    (by finished distance, then the lower id): returns the new threshold and count at the best."""
    d = _finish(acc, total, normalise, p)
    if counted:
        if d < bd[0]:
            at_best = 1
        elif d == bd[0]:
            at_best += 1
    if d < bd[k - 1] or (d == bd[k - 1] and j < bi[k - 1]):
        m = k - 1
        while m > 0 and (bd[m - 1] > d or (bd[m - 1] == d and bi[m - 1] > j)):
            bd[m] = bd[m - 1]
            bs[m] = bs[m - 1]
            bi[m] = bi[m - 1]
            m -= 1
        bd[m] = d
        bs[m] = acc
        bi[m] = j
        if bi[k - 1] != _IMAX:
            thr = _threshold(bd[k - 1], bs[k - 1], total, normalise, p)
    return thr, at_best


@njit(cache=True, nogil=True, inline="always")
def _visit_group_row(r, t, gi, perm, r_ids, has_ids, exclude_self, qn, qc, rn_s, rc_s, scale, wn, wc, cat_lb,
                     clip, thr, bd, bs, bi, k, at_best, counted, total, normalise, p):
    """Reference row ``r`` (a tree position) of query ``t``'s categorical groups, offered to the
    k-best list when its Gower sum is within the threshold (``exclude_self``: not the query's own
    row ``gi``); the new ``(thr, at_best)``."""
    j = perm[r]
    if has_ids:
        j = r_ids[j]
    if exclude_self and j == gi:
        return thr, at_best
    acc = _pair_sum_gower(qn, qc, rn_s, rc_s, t, r, scale, wn, wc, cat_lb, clip, thr)
    if acc <= thr:
        return _offer(acc, j, bd, bs, bi, k, thr, at_best, counted, total, normalise, p)
    return thr, at_best


@njit(parallel=True, cache=True)
def knn_tree(qn, qc, rn_s, rc_s, perm, n_start, n_end, n_left, n_right, lo, hi, has_nan, clo, chi, cmask,
             max_depth, scale, wn, wc, clip, p, nan_rule, total, normalise, k, exclude_self, q_rows,
             r_ids, seed_d, seed_s, seed_i, grp_start, grp_end, grp_pos, budget, out_d, out_s, out_i, out_c):
    """k nearest reference rows of the queries ``q_rows`` (ids; ``qn[t]`` is query q_rows[t]).

    ``r_ids``: the id of every reference row (in the caller's row order, not the tree's); empty means
    row ``j`` has id ``j``. Ids are what is returned, what ties are broken by (lower id first) and
    what ``exclude_self`` compares with the query's id. ``seed_d/seed_s/seed_i`` (shape ``(nq, k)``,
    or empty): a k-best list already found elsewhere (distances, weighted sums, ids; ``-1`` = none),
    merged as if its rows were part of this reference, so a search over several reference blocks
    can run one block after another with the bound of the blocks before (exactly the result of one
    search over their union). ``out_s`` receives the weighted sums, to seed the next block.

    ``grp_start/grp_end`` (shape ``(nq, 1 + n_cat)``; Gower fast path only; empty: not used) and
    ``grp_pos`` (``(1 + n_cat, n_ref)``): the reference rows that share query ``t``'s categorical
    codes are at the tree positions ``grp_pos[0, grp_start[t, 0]:grp_end[t, 0]]``; those that share
    all but column ``c``'s (and those sharing all) at ``grp_pos[c + 1, grp_start[t, c + 1]:...]``.
    They are visited first (each part only while it holds at most ``budget`` rows): rows with no
    mismatching code, then, unless the threshold is already below ``cat_lb[1]`` (every other row
    mismatches somewhere, so its sum is >= ``cat_lb[1]`` and cannot qualify), rows with one. The tree
    is searched only while a row with more mismatches could still qualify, skipping the rows
    visited. The rows that can qualify are all visited and the k-best rule does not depend on the
    order of visits, so the result is that of the plain search.

    ``out_c`` (shape ``(nq,)``, or empty: not counted) receives the number of reference rows of
    this search at the nearest finished distance (``out_d[t, 0]``; the seed's rows are not
    counted). Every such row is visited: a node or pair is given up only when its sum exceeds the
    threshold of the current k-th distance, which is never below the nearest one."""
    nq = qn.shape[0]
    gow = _is_gower(scale, p, nan_rule)
    cat_lb = _cat_floor(wc) if gow else np.zeros(0)
    has_ids = r_ids.shape[0] > 0
    seeded = seed_d.shape[0] > 0
    counted = out_c.shape[0] > 0
    grouped = gow and grp_start.shape[0] > 0 and qc.shape[1] > 0 and qc.shape[0] == grp_start.shape[0]
    for t in nb.prange(nq):
        gi = q_rows[t]
        at_best = 0  # rows seen at the distance bd[0]
        bd = np.full(k, np.inf)
        bs = np.full(k, np.inf)
        bi = np.full(k, _IMAX, dtype=np.int64)
        if seeded:
            for m in range(k):
                if seed_i[t, m] >= 0:
                    bd[m] = seed_d[t, m]
                    bs[m] = seed_s[t, m]
                    bi[m] = seed_i[t, m]
        thr = np.inf
        if bi[k - 1] != _IMAX:
            thr = _threshold(bd[k - 1], bs[k - 1], total, normalise, p)
        skip = -1  # rows with at most this many categorical mismatches are visited already
        if grouped and grp_end[t, 0] - grp_start[t, 0] <= budget:
            for g in range(grp_start[t, 0], grp_end[t, 0]):  # the rows with every code equal
                thr, at_best = _visit_group_row(grp_pos[0, g], t, gi, perm, r_ids, has_ids, exclude_self, qn, qc,
                                                rn_s, rc_s, scale, wn, wc, cat_lb, clip, thr, bd, bs, bi, k,
                                                at_best, counted, total, normalise, p)
            skip = 0
            size = 0
            for c in range(qc.shape[1]):
                size += grp_end[t, c + 1] - grp_start[t, c + 1]
            if not cat_lb[1] > thr and size <= budget:
                for c in range(qc.shape[1]):  # the rows with every code but column c's equal
                    v = qc[t, c]
                    for g in range(grp_start[t, c + 1], grp_end[t, c + 1]):
                        r = grp_pos[c + 1, g]
                        if rc_s[r, c] == v:
                            continue  # every code equal: visited above
                        thr, at_best = _visit_group_row(r, t, gi, perm, r_ids, has_ids, exclude_self, qn, qc, rn_s,
                                                        rc_s, scale, wn, wc, cat_lb, clip, thr, bd, bs, bi, k,
                                                        at_best, counted, total, normalise, p)
                skip = 1
        st_node = np.empty(max_depth + 2, dtype=np.int64)
        st_lb = np.empty(max_depth + 2)
        sp = 0
        # every row not visited yet mismatches on more than ``skip`` columns: its sum is >= cat_lb[skip + 1]
        if skip < 0 or (skip + 1 < cat_lb.shape[0] and not cat_lb[skip + 1] > thr):
            st_node[0] = 0
            st_lb[0] = _node_bound(qn, qc, t, 0, lo, hi, has_nan, clo, chi, cmask, scale, wn, wc, clip, p, nan_rule,
                                   thr, cat_lb)
            sp = 1
        while sp > 0:
            sp -= 1
            node = st_node[sp]
            if st_lb[sp] > thr:
                continue
            left = n_left[node]
            if left < 0:
                for r in range(n_start[node], n_end[node]):
                    j = perm[r]
                    if has_ids:
                        j = r_ids[j]
                    if exclude_self and j == gi:
                        continue
                    if gow:
                        acc = _pair_sum_gower(qn, qc, rn_s, rc_s, t, r, scale, wn, wc, cat_lb, clip, thr, skip)
                    else:
                        acc = _pair_sum(qn, qc, rn_s, rc_s, t, r, scale, wn, wc, clip, p, nan_rule, thr)
                    if acc <= thr:
                        thr, at_best = _offer(acc, j, bd, bs, bi, k, thr, at_best, counted, total, normalise, p)
                continue
            right = n_right[node]
            lb_l = _node_bound(qn, qc, t, left, lo, hi, has_nan, clo, chi, cmask, scale, wn, wc, clip, p, nan_rule, thr, cat_lb)
            lb_r = _node_bound(qn, qc, t, right, lo, hi, has_nan, clo, chi, cmask, scale, wn, wc, clip, p, nan_rule, thr, cat_lb)
            if lb_l <= lb_r:
                near, far, lb_n, lb_f = left, right, lb_l, lb_r
            else:
                near, far, lb_n, lb_f = right, left, lb_r, lb_l
            if lb_f <= thr:
                st_node[sp] = far
                st_lb[sp] = lb_f
                sp += 1
            if lb_n <= thr:
                st_node[sp] = near
                st_lb[sp] = lb_n
                sp += 1
        for m in range(k):
            out_d[t, m] = bd[m]
            out_s[t, m] = bs[m]
            out_i[t, m] = bi[m] if bi[m] != _IMAX else -1
        if counted:
            out_c[t] = at_best


@njit(parallel=True, cache=True)
def count_tree(qn, qc, rn_s, rc_s, perm, n_start, n_end, n_left, n_right, lo, hi, has_nan, clo, chi, cmask,
               max_depth, scale, wn, wc, clip, p, nan_rule, thr, exclude_self, q_rows, out):
    """Number of reference rows whose weighted sum to each query is <= ``thr``."""
    nq = qn.shape[0]
    gow = _is_gower(scale, p, nan_rule)
    cat_lb = _cat_floor(wc) if gow else np.zeros(0)
    for t in nb.prange(nq):
        gi = q_rows[t]
        cnt = 0
        st_node = np.empty(max_depth + 2, dtype=np.int64)
        st_node[0] = 0
        sp = 1
        while sp > 0:
            sp -= 1
            node = st_node[sp]
            if _node_bound(qn, qc, t, node, lo, hi, has_nan, clo, chi, cmask, scale, wn, wc, clip, p, nan_rule,
                           thr, cat_lb) > thr:
                continue
            left = n_left[node]
            if left < 0:
                for r in range(n_start[node], n_end[node]):
                    j = perm[r]
                    if exclude_self and j == gi:
                        continue
                    if gow:
                        acc = _pair_sum_gower(qn, qc, rn_s, rc_s, t, r, scale, wn, wc, cat_lb, clip, thr)
                    else:
                        acc = _pair_sum(qn, qc, rn_s, rc_s, t, r, scale, wn, wc, clip, p, nan_rule, thr)
                    if acc <= thr:
                        cnt += 1
                continue
            st_node[sp] = left
            st_node[sp + 1] = n_right[node]
            sp += 2
        out[t] = cnt


@njit(parallel=True, cache=True)
def home_leaves(qn, qc, n_left, n_right, lo, hi, has_nan, clo, chi, cmask, scale, wn, wc, clip, p, nan_rule):
    """The leaf each query reaches by always stepping into the child with the smaller bound (the
    left one on a tie): sorting queries by it makes consecutive queries search the same part of the
    tree (cache locality). The right child's bound stops once it exceeds the left one's (then the
    left one is taken, as with the whole bound): the same leaves, at a fraction of the work when
    the query lies in the left child's box (a bound of 0)."""
    out = np.empty(qn.shape[0], dtype=np.int64)
    for t in nb.prange(qn.shape[0]):
        node = 0
        while n_left[node] >= 0:
            a, b = n_left[node], n_right[node]
            la = _node_bound(qn, qc, t, a, lo, hi, has_nan, clo, chi, cmask, scale, wn, wc, clip, p, nan_rule, np.inf, _NO_LB)
            lb = _node_bound(qn, qc, t, b, lo, hi, has_nan, clo, chi, cmask, scale, wn, wc, clip, p, nan_rule, la, _NO_LB)
            node = a if la <= lb else b
        out[t] = node
    return out


@njit(cache=True, nogil=True)
def split_rules(n_left, n_right, lo, hi, has_nan, clo, chi):
    """Per node, a column that separates its children and the rule: ``col[node]`` (numeric
    columns first, then categorical ones numbered after them; ``-1``: a leaf, or no column
    separates) and ``cut[node]``, the right child's smallest key there. A row's key is its
    value (a missing value: ``inf``) or its code; every left row's key is below ``cut`` and
    every right row's is not, read from the children's boxes (the build's split column is one
    such column)."""
    n_nodes = n_left.shape[0]
    n_num = lo.shape[1]
    col = np.full(n_nodes, -1, dtype=np.int64)
    cut = np.zeros(n_nodes)
    for node in range(n_nodes):
        a, b = n_left[node], n_right[node]
        if a < 0:
            continue
        for c in range(n_num):
            a_top = np.inf if has_nan[a, c] else hi[a, c]  # NaN when no present value: not a separator
            b_low = lo[b, c] if lo[b, c] == lo[b, c] else np.inf
            if a_top < b_low:
                col[node] = c
                cut[node] = b_low
                break
        if col[node] >= 0:
            continue
        for c in range(clo.shape[1]):
            if chi[a, c] < clo[b, c]:
                col[node] = n_num + c
                cut[node] = float(clo[b, c])
                break
    return col, cut


@njit(parallel=True, cache=True)
def split_leaves(qn, qc, n_left, n_right, col, cut, lo, hi, has_nan, clo, chi, cmask, scale, wn, wc, clip, p,
                 nan_rule):
    """The leaf each query reaches by stepping, at every node, to the side of the node's separating
    column (:func:`split_rules`) its key falls on (a missing value: ``inf``), as in a k-d tree; at
    a node without one, into the child of smaller bound (as :func:`home_leaves`). One comparison
    per level: sorting queries by it keeps consecutive queries in the same part of the tree."""
    out = np.empty(qn.shape[0], dtype=np.int64)
    n_num = qn.shape[1]
    for t in nb.prange(qn.shape[0]):
        node = 0
        while n_left[node] >= 0:
            a, b = n_left[node], n_right[node]
            c = col[node]
            if c >= n_num:
                node = a if float(qc[t, c - n_num]) < cut[node] else b
            elif c >= 0:
                v = qn[t, c]
                node = a if (v == v and v < cut[node]) else b
            else:
                la = _node_bound(qn, qc, t, a, lo, hi, has_nan, clo, chi, cmask, scale, wn, wc, clip, p, nan_rule,
                                 np.inf, _NO_LB)
                lb = _node_bound(qn, qc, t, b, lo, hi, has_nan, clo, chi, cmask, scale, wn, wc, clip, p, nan_rule,
                                 la, _NO_LB)
                node = a if la <= lb else b
        out[t] = node
    return out
