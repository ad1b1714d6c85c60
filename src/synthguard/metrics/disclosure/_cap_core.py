"""The CAP computation as group-bys and joins on integer codes (no loop over rows).

For each original row with key tuple ``k`` and sensitive tuple ``s``, the attacker pools the
synthetic rows whose key equals ``k`` (``cap``, ``zero_cap``) or, when there is none, the rows of
every distinct synthetic key at the smallest Hamming distance (``generalized_cap``), and the
*correct attribution probability* is the share of pooled rows whose sensitive tuple equals ``s``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...data.encoding import Block
from ...engine.neighbors import hamming, pairwise_distances
from ._common import joint_ids

METHODS = ("cap", "zero_cap", "generalized_cap")
_MAX_CELLS = 4_000_000


@dataclass(frozen=True)
class CapRows:
    """Per original row: ``probability`` of the true sensitive tuple (NaN = not counted, i.e. no
    synthetic row shares its key under ``cap``), ``pool`` = number of synthetic rows the attacker
    pooled, ``distance`` = Hamming distance of the pooled keys (0 = exact match; -1 = none)."""

    probability: np.ndarray
    pool: np.ndarray
    distance: np.ndarray

    @property
    def counted(self) -> np.ndarray:
        return ~np.isnan(self.probability)


def _pair_lookup(syn_pairs: np.ndarray, query_pairs: np.ndarray) -> np.ndarray:
    """How many times each query pair code occurs among ``syn_pairs``."""
    uniq, cnt = np.unique(syn_pairs, return_counts=True)
    if uniq.size == 0:
        return np.zeros(query_pairs.size, dtype=np.int64)
    pos = np.minimum(np.searchsorted(uniq, query_pairs), uniq.size - 1)
    return np.where(uniq[pos] == query_pairs, cnt[pos], 0)


def cap_rows(real_keys: np.ndarray, real_sens: np.ndarray, syn_keys: np.ndarray, syn_sens: np.ndarray,
             method: str = "cap") -> CapRows:
    """Correct attribution probability of every original row.

    Parameters
    ----------
    real_keys, syn_keys : ndarray of int64, shape (n, q) and (m, q)
        Codes of the key columns (shared vocabularies; ``-1`` = missing, a category of its own).
    real_sens, syn_sens : ndarray of int64, shape (n, s) and (m, s)
        Codes of the sensitive columns (the sensitive tuple is matched jointly).
    method : {"cap", "zero_cap", "generalized_cap"}
        What happens to a row whose key no synthetic row has: skipped, probability 0, or the
        synthetic keys at the smallest Hamming distance are pooled (ties kept).
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}")
    n = real_keys.shape[0]
    rk, sk = joint_ids(real_keys, syn_keys)
    rs, ss = joint_ids(real_sens, syn_sens)
    n_keys = int(max(rk.max(initial=-1), sk.max(initial=-1))) + 1
    n_sens = int(max(rs.max(initial=-1), ss.max(initial=-1))) + 1
    key_count = np.bincount(sk, minlength=n_keys)
    pair_count = _pair_lookup(sk * n_sens + ss, rk * n_sens + rs)
    pool = key_count[rk].astype(np.int64)
    matched = pool > 0
    prob = np.full(n, np.nan)
    prob[matched] = pair_count[matched] / pool[matched]
    distance = np.where(matched, 0, -1).astype(np.int64)
    if method == "zero_cap":
        prob[~matched] = 0.0
    elif method == "generalized_cap" and (~matched).any() and syn_keys.shape[0] > 0:
        rows = np.flatnonzero(~matched)
        _generalized(rows, rk, rs, real_keys, sk, ss, syn_keys, n_sens, key_count, prob, pool, distance)
    return CapRows(prob, pool, distance)


def copy_responds(real_keys: np.ndarray, real_sens: np.ndarray, syn_keys: np.ndarray,
                  syn_sens: np.ndarray) -> np.ndarray:
    """Per real row: would its CAP probability exceed 1/2 once an exact copy of the row is added to
    the synthetic rows? The copy makes its key an exact match (every variant then pools the rows
    of that key), so the probability becomes ``(pairs + 1) / (key rows + 1)`` with the synthetic
    rows sharing its key (and its sensitive tuple) counted before the copy.

    Examples
    --------
    >>> import numpy as np
    >>> rk, rs = np.array([[0], [1], [2]]), np.array([[0], [0], [0]])
    >>> sk, ss = np.array([[0], [1], [1]]), np.array([[1], [1], [1]])
    >>> copy_responds(rk, rs, sk, ss).tolist()
    [False, False, True]
    """
    rk, sk = joint_ids(real_keys, syn_keys)
    rs, ss = joint_ids(real_sens, syn_sens)
    n_keys = int(max(rk.max(initial=-1), sk.max(initial=-1))) + 1
    n_sens = int(max(rs.max(initial=-1), ss.max(initial=-1))) + 1
    key_count = np.bincount(sk, minlength=n_keys)[rk]
    pair_count = _pair_lookup(sk * n_sens + ss, rk * n_sens + rs)
    return copy_responds_counts(pair_count, key_count)


def copy_responds_counts(pair_count: np.ndarray, key_count: np.ndarray) -> np.ndarray:
    """:func:`copy_responds` from, per real row, the synthetic rows sharing its key and sensitive
    tuple (``pair_count``) and its key (``key_count``) (from the backend's key lookups).

    Examples
    --------
    >>> import numpy as np
    >>> copy_responds_counts(np.array([0, 0, 1]), np.array([0, 1, 2])).tolist()
    [True, False, True]
    """
    return 2 * (np.asarray(pair_count) + 1) > np.asarray(key_count) + 1


def _generalized(rows: np.ndarray, rk: np.ndarray, rs: np.ndarray, real_keys: np.ndarray,
                 sk: np.ndarray, ss: np.ndarray, syn_keys: np.ndarray, n_sens: int,
                 key_count: np.ndarray, prob: np.ndarray, pool: np.ndarray,
                 distance: np.ndarray) -> None:
    """Fill ``prob``/``pool``/``distance`` of the unmatched ``rows`` from the nearest synthetic keys.

    Works on distinct key tuples: Hamming distances (the engine's ``pairwise_distances``) between
    chunks of distinct unmatched original keys and all distinct synthetic keys; the keys at the
    minimum distance are pooled; a join on (pooled key, sensitive tuple) gives the counts.
    """
    syn_ids, syn_first = np.unique(sk, return_index=True)  # distinct synthetic keys
    syn_block = Block(np.zeros((syn_ids.size, 0)), np.ascontiguousarray(syn_keys[syn_first]), (),
                      tuple(f"k{j}" for j in range(syn_keys.shape[1])))
    syn_pairs_sorted, syn_pair_counts = np.unique(sk * n_sens + ss, return_counts=True)
    syn_count = key_count[syn_ids].astype(np.float64)
    metric = hamming(0, normalise=False)

    # distinct (key, sensitive) pairs among the unmatched rows, grouped by key
    key_ids, key_first, key_inv = np.unique(rk[rows], return_index=True, return_inverse=True)
    pair_code = key_inv.astype(np.int64) * n_sens + rs[rows]
    pairs, pair_inv = np.unique(pair_code, return_inverse=True)
    pair_key = pairs // n_sens  # index into key_ids
    pair_sens = pairs % n_sens
    pair_num = np.zeros(pairs.size)
    key_den = np.zeros(key_ids.size)
    key_dist = np.zeros(key_ids.size, dtype=np.int64)

    chunk = max(1, _MAX_CELLS // max(1, syn_ids.size))
    for start in range(0, key_ids.size, chunk):  # loop over chunks of distinct keys
        stop = min(key_ids.size, start + chunk)
        q = Block(np.zeros((stop - start, 0)),
                  np.ascontiguousarray(real_keys[rows[key_first[start:stop]]]), (), syn_block.cat_columns)
        d = pairwise_distances(q, syn_block, metric)
        dmin = d.min(axis=1)
        ta, tj = np.nonzero(d <= dmin[:, None])  # ties kept; ta sorted
        key_den[start:stop] = np.bincount(ta, weights=syn_count[tj], minlength=stop - start)
        key_dist[start:stop] = np.rint(dmin).astype(np.int64)
        # expand each (key, sensitive) pair of this chunk over the tied synthetic keys of its key
        lo, hi = np.searchsorted(pair_key, [start, stop])
        if hi == lo:
            continue
        tie_len = np.bincount(ta, minlength=stop - start)
        tie_start = np.concatenate([[0], np.cumsum(tie_len)[:-1]])
        local = pair_key[lo:hi] - start
        reps = tie_len[local]
        owner = np.repeat(np.arange(lo, hi), reps)
        offset = np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps)
        j = tj[np.repeat(tie_start[local], reps) + offset]
        code = syn_ids[j] * n_sens + pair_sens[owner]
        pos = np.minimum(np.searchsorted(syn_pairs_sorted, code), syn_pairs_sorted.size - 1)
        hits = np.where(syn_pairs_sorted[pos] == code, syn_pair_counts[pos], 0)
        pair_num[lo:hi] = np.bincount(owner - lo, weights=hits, minlength=hi - lo)
    prob[rows] = pair_num[pair_inv] / key_den[key_inv]
    pool[rows] = key_den[key_inv].astype(np.int64)
    distance[rows] = key_dist[key_inv]
