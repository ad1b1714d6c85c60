"""Joint tests over per-record flags: Westfall-Young min-P by label permutation.

Most privacy tests are functions of one indicator per real record (has an exact copy in the
release, sits in the pooled distance tail, is disclosive and correct, ...), over the same training
(member) and control (non-member) records. Under the null the labels are exchangeable: any
``n_member`` of the ``N`` records could have been the training rows. Permuting the labels jointly
over every test keeps their dependence, so the distribution of the smallest (weighted) p-value is
the exact null of the family, and the Westfall-Young step-down adjustment built on it controls the
family-wise false-alarm rate while wasting far less than Holm on strongly dependent tests (several
tests flag the same copied records).

Each test's own p-value is Fisher's exact one-sided test, which is exactly the permutation test of
its member count (the pooled count is fixed under relabelling), so the permutation only has to be
drawn for the records some test flags.

Detection limits are not computed here: :mod:`synthguard.run.limits` measures them by putting leak
rows into the release and testing them with the same :func:`fisher_p`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ._special import _hypergeom_sf
from .rng import make_rng

__all__ = ["JointTest", "fisher_p", "flag_patterns", "joint_minp", "pattern_counts", "relabelled_counts"]


@dataclass(frozen=True, eq=False)
class JointTest:
    """Result of :func:`joint_minp`.

    Attributes
    ----------
    p_raw : ndarray
        Each test's own one-sided Fisher p-value.
    p_adjusted : ndarray
        Westfall-Young step-down min-P adjusted p-values (weighted: the statistic is ``p / w``).
    null_min : ndarray
        The permutation null of ``min_j p_j / w_j`` (one value per relabelling), for critical values.
    n_perm : int
        Number of relabellings.
    """

    p_raw: np.ndarray
    p_adjusted: np.ndarray
    null_min: np.ndarray
    n_perm: int

    def critical(self, level: float) -> float:
        """The largest ``c`` with ``P_null(min p/w <= c) <= level`` (a test rejects when ``p/w <= c``)."""
        s = np.sort(self.null_min)
        # (1 + #{null <= c}) / (1 + B) <= level  <=>  #{null <= c} <= level (1 + B) - 1
        allowed = int(np.floor(level * (1 + self.n_perm) - 1 + 1e-12))
        if allowed < 0:
            return 0.0
        if allowed >= s.size:
            return float("inf")
        # any c below the (allowed+1)-th smallest null value keeps the count at `allowed`
        return float(np.nextafter(s[allowed], -np.inf))


def _perm_p(k1: np.ndarray, k_total: int, n1: int, big_n: int) -> np.ndarray:
    """One-sided Fisher p-value ``P(X >= k)`` of each relabelled member count ``k`` in ``k1``,
    computed once per distinct count (relabelled counts cluster around their mean: a few hundred
    distinct values where a table of every ``k = 0..k_total`` took one special-function call per
    flagged record; the same values, elementwise)."""
    ks, inv = np.unique(k1, return_inverse=True)
    return np.minimum(1.0, _hypergeom_sf(ks - 1, big_n, k_total, n1))[inv.ravel()]


def fisher_p(k1: np.ndarray, k_total: np.ndarray, n1: int, big_n: int) -> np.ndarray:
    """Vectorised one-sided Fisher p-values (member count ``k1`` of ``k_total`` flagged records)."""
    return np.minimum(1.0, _hypergeom_sf(np.asarray(k1) - 1, big_n, np.asarray(k_total), n1))


#: above this many record labels (flagged records x relabellings) the large-problem draws are used
COMPILED_CELLS = 20_000_000

#: a large problem draws per flag pattern when its flagged records share at most one pattern (a
#: distinct set of tests flagging them) per this many records; else record by record (the urn)
PATTERN_RECORDS = 16


def relabelled_counts(flags_u: np.ndarray, n1: int, n2: int, reps: int,
                      rng: np.random.Generator, max_cells: int = 5_000_000) -> np.ndarray:
    """Each test's member count under ``reps`` uniform relabellings of ``n1 + n2`` records.

    ``flags_u`` (flagged records x tests, bool) holds only the records some test flags; the others
    cannot change any count. Small problems sort random keys (a uniformly random subset of the
    hypergeometric number of members), in chunks of at most ``max_cells`` labels. Large ones (more
    than :data:`COMPILED_CELLS` labels) draw how many members each group of records with the same
    flags holds (:func:`pattern_counts`) when the groups are few (at most one per
    :data:`PATTERN_RECORDS` records), else the labels from an urn in a compiled kernel (numba
    installed). Each gives exactly the counts of a uniform relabelling; which one runs depends only
    on the sizes and the flags, so a seed gives the same counts on every machine.
    """
    u, n_tests = flags_u.shape
    out = np.zeros((reps, n_tests), dtype=np.int64)
    if u == 0 or reps == 0:
        return out
    if u * reps > COMPILED_CELLS:
        pattern, size = flag_patterns(flags_u)
        if size.size * PATTERN_RECORDS <= u:
            return pattern_counts(pattern, size, n1, n2, reps, rng)
        try:
            from ._maxt_numba import urn_counts
        except ImportError:  # numba missing: sort keys instead (slower, same distribution)
            urn_counts = None
        if urn_counts is not None:
            rows, cols = np.nonzero(flags_u)
            indptr = np.r_[0, np.cumsum(np.bincount(rows, minlength=u))].astype(np.int64)
            return urn_counts(int(rng.integers(0, 2**31 - 1)), int(reps), indptr,
                              cols.astype(np.int64), int(n1), int(n1 + n2), int(n_tests))
    chunk = max(1, min(reps, max_cells // u))
    f = flags_u.astype(float)
    for start in range(0, reps, chunk):
        b = min(chunk, reps - start)
        h = rng.hypergeometric(n1, n2, u, size=b) if n2 else np.full(b, u)
        lab = smallest_keys(rng.random((b, u)), h)
        out[start:start + b] = np.rint(lab.astype(float) @ f).astype(np.int64)
    return out


def flag_patterns(flags_u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``flags_u`` (records x tests, bool), in ascending order of their bits
    (test 0 the lowest), and how many records hold each: whatever the order of the records.

    Examples
    --------
    >>> import numpy as np
    >>> f = np.array([[1, 0], [0, 1], [1, 0], [1, 1]], dtype=bool)
    >>> pattern, size = flag_patterns(f)
    >>> pattern.astype(int).tolist(), size.tolist()
    ([[1, 0], [0, 1], [1, 1]], [2, 1, 1])
    """
    u, n_tests = flags_u.shape
    if n_tests <= 62:  # one integer key per record: its bits
        key = flags_u.astype(np.int64) @ (np.int64(1) << np.arange(n_tests, dtype=np.int64))
        uniq, size = np.unique(key, return_counts=True)
        return ((uniq[:, None] >> np.arange(n_tests, dtype=np.int64)) & 1).astype(bool), size
    packed = np.packbits(flags_u, axis=1, bitorder="little")[:, ::-1]  # highest bits first
    uniq, size = np.unique(packed, axis=0, return_counts=True)
    return np.unpackbits(uniq[:, ::-1], axis=1, count=n_tests, bitorder="little").astype(bool), size


def pattern_counts(pattern: np.ndarray, size: np.ndarray, n1: int, n2: int, reps: int,
                   rng: np.random.Generator) -> np.ndarray:
    """Each test's member count under ``reps`` uniform relabellings of ``n1 + n2`` records, from
    the flagged records' groups: ``size[g]`` records flagged by the tests ``pattern[g]`` (groups x
    tests, bool; the other records flagged by none).

    A uniformly random set of ``n1`` members holds, in the groups and the unflagged records
    together, a multivariate hypergeometric draw of members (NumPy's ``marginals`` method: one
    hypergeometric draw per group); a test's count is the sum over the groups it flags. The same
    distribution as drawing every record's label, at a cost per group, not per record.

    Examples
    --------
    >>> import numpy as np
    >>> pattern = np.array([[True, False], [True, True]])
    >>> out = pattern_counts(pattern, np.array([30, 5]), 50, 50, 4, np.random.default_rng(0))
    >>> out.shape, bool((out[:, 1] <= 5).all() and (out[:, 0] >= out[:, 1]).all())
    ((4, 2), True)
    """
    size = np.asarray(size, dtype=np.int64)
    rest = int(n1 + n2 - size.sum())
    drawn = rng.multivariate_hypergeometric(np.r_[size, rest], int(n1), size=int(reps),
                                            method="marginals")[:, :-1]
    return drawn.astype(np.int64) @ pattern.astype(np.int64)


def smallest_keys(keys: np.ndarray, h: np.ndarray) -> np.ndarray:
    """Per row of ``keys`` (relabellings x records), which records are among the ``h[row]`` first
    in ``np.argsort(keys[row])``: the members of a relabelling drawn by sorting random keys.

    A sort of the values gives each row's ``h``-th smallest key; the records at or below it are the
    members. Only a row where that key is tied with another record's (so the set would depend on
    how the argsort orders the tie) is decided by the argsort itself: the same sets as
    ``argsort``, row by row.

    Examples
    --------
    >>> import numpy as np
    >>> smallest_keys(np.array([[0.3, 0.1, 0.2], [0.5, 0.5, 0.1]]), np.array([2, 1])).tolist()
    [[False, True, True], [False, False, True]]
    """
    b, u = keys.shape
    h = np.asarray(h, dtype=np.int64)
    rows = np.arange(b)
    kth = np.sort(keys, axis=1)[rows, np.clip(h - 1, 0, max(u - 1, 0))]
    lab = (keys <= kth[:, None]) & (h > 0)[:, None]
    tied = np.flatnonzero(lab.sum(axis=1) != np.minimum(h, u))  # a tie at the h-th key: rare
    if tied.size:
        pos = np.argsort(keys[tied], axis=1)
        exact = np.zeros((tied.size, u), dtype=bool)
        np.put_along_axis(exact, pos, np.arange(u)[None, :] < h[tied][:, None], axis=1)
        lab[tied] = exact
    return lab


def joint_minp(member: Sequence[np.ndarray], non_member: Sequence[np.ndarray],
               weights: Sequence[float] | None = None, *, n_perm: int = 1000,
               seed: int | np.random.Generator | None = 0, max_cells: int = 20_000_000) -> JointTest:
    """Westfall-Young step-down min-P over tests given as per-record flags.

    Parameters
    ----------
    member, non_member : sequences of bool arrays
        Test ``j`` flags ``member[j]`` (one per training record; all the same length ``n1``) and
        ``non_member[j]`` (one per control record; length ``n2``).
    weights : sequence of float, optional
        Positive weights fixed before seeing the data; the statistic is ``p_j / w_j`` (weights
        normalised to mean 1).
    n_perm : int
        Relabellings (the adjusted p-values resolve to ``1 / (1 + n_perm)``).
    seed : int or Generator
        Seed of the relabellings.
    max_cells : int
        Memory bound: relabellings are drawn in chunks of at most this many record labels.

    Returns
    -------
    JointTest

    Examples
    --------
    >>> import numpy as np
    >>> m = [np.r_[np.ones(30, bool), np.zeros(470, bool)], np.zeros(500, bool)]
    >>> c = [np.zeros(500, bool), np.zeros(500, bool)]
    >>> jt = joint_minp(m, c, n_perm=200, seed=0)
    >>> bool(jt.p_adjusted[0] < 0.01), float(jt.p_adjusted[1])
    (True, 1.0)
    """
    a = np.vstack([np.asarray(x, dtype=bool) for x in member])
    b = np.vstack([np.asarray(x, dtype=bool) for x in non_member])
    n_tests, n1 = a.shape
    n2 = b.shape[1]
    big_n = n1 + n2
    w = np.ones(n_tests) if weights is None else np.asarray(weights, dtype=float)
    w = w / w.mean()
    k1 = a.sum(axis=1)
    k_tot = k1 + b.sum(axis=1)
    p_raw = fisher_p(k1, k_tot, n1, big_n)
    pooled = np.hstack([a, b])  # tests x records
    flags_u = pooled[:, pooled.any(axis=0)].T  # flagged records x tests
    rng = make_rng(seed, "verdict-maxT") if not isinstance(seed, np.random.Generator) else seed
    order = np.lexsort((np.arange(n_tests), p_raw / w))  # most significant first
    obs = (p_raw / w)[order]
    k1_perm = relabelled_counts(flags_u, n1, n2, n_perm, rng, max_cells)
    p_perm = np.column_stack([_perm_p(k1_perm[:, j], int(k_tot[j]), n1, big_n)
                              for j in range(n_tests)]) / w  # loop over tests
    succ_min = np.minimum.accumulate(p_perm[:, order][:, ::-1], axis=1)[:, ::-1]  # min over i..J
    exceed = (succ_min <= obs[None, :] * (1 + 1e-12)).sum(axis=0)
    null_min = succ_min[:, 0]
    adj_sorted = np.maximum.accumulate((1 + exceed) / (1 + n_perm))
    # the exact step-down min-P p-value never exceeds weighted Holm's (a union bound); below the
    # Monte Carlo resolution 1 / (1 + n_perm) Holm's is the sharper statement of the two
    holm = np.maximum.accumulate(np.minimum(1.0, obs * np.cumsum(w[order][::-1])[::-1]))
    p_adj = np.empty(n_tests)
    p_adj[order] = np.minimum(1.0, np.minimum(adj_sorted, holm))
    return JointTest(p_raw, p_adj, null_min, n_perm)
