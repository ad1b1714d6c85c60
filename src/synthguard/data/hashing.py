"""Row hashes: one content hash per row, and the masked-row hashes of the copy tests.

:func:`row_hashes` is the content hash shared by every place that needs a row's identity cheaply
(canonical row order, seeded content-keyed subsamples, the control-overlap check, fingerprints).

The *cell* hashes (:func:`cell_hashes`) are the one way rows are hashed on many column sets: every
cell of a table is hashed once, keyed by its column, and the hash of a row on a column set is the
wrapping (mod ``2**64``) sum of its cells' hashes on the set (:func:`set_sums`), so the hash of a
row with some columns left out (masked) is its whole-row sum minus those cells (:func:`masked`):
one subtraction per masked column, the same 64-bit word as summing the kept cells, and the same
whichever other columns the table holds. The near-copy tests (in one process and on a cluster) and
the near-copy counts of the membership attacks all hash masked rows this way. Up to two *chains*
(independently seeded hashes of the same cells) give 64- or 128-bit row keys; two rows that differ
on a column set collide in one chain with probability about ``2**-64``, in both about ``2**-128``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["CHAINS", "cell_hashes", "column_ids", "float_codes", "masked", "row_hashes", "set_sums"]


def row_hashes(frame: pd.DataFrame) -> np.ndarray:
    """A 64-bit hash of every row's content (``uint64``; the index takes no part).

    Equal rows get equal hashes; distinct rows collide with probability ~ n^2 / 2^64. Exact-row
    metrics use the collision-free identities of :mod:`synthguard.data.encoding` instead.
    """
    return pd.util.hash_pandas_object(frame, index=False).to_numpy().astype(np.uint64, copy=False)


#: (seed, odd multiplier) of the two hash chains: digits of pi and golden-ratio / plastic-number
#: constants (:func:`synthguard.data.encoding.row_hash128` and :func:`cell_hashes`)
CHAINS: tuple[tuple[np.uint64, np.uint64], ...] = (
    (np.uint64(0x243F6A8885A308D3), np.uint64(0x9E3779B97F4A7C15)),
    (np.uint64(0x13198A2E03707344), np.uint64(0xD1B54A32D192ED03)),
)


def splitmix(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser of ``uint64`` words (a bijection; wrapping arithmetic, a new array).

    Examples
    --------
    >>> import numpy as np
    >>> splitmix(np.array([0, 1], dtype=np.uint64)).tolist()
    [0, 6238072747940578789]
    """
    x = np.asarray(x, dtype=np.uint64)
    with np.errstate(over="ignore"):
        x = x ^ (x >> np.uint64(30))
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return x


def float_codes(values: np.ndarray) -> np.ndarray:
    """int64 codes of float64 values by their bits: equal values, equal codes, ``-0.0`` folded into
    ``0.0`` and every NaN one code (the smallest int64); different values, different codes.

    Examples
    --------
    >>> import numpy as np
    >>> c = float_codes(np.array([0.0, -0.0, np.nan, -np.nan, 1.5]))
    >>> bool(c[0] == c[1]), bool(c[2] == c[3]), bool(c[0] == c[4])
    (True, True, False)
    """
    v = np.asarray(values, dtype=np.float64) + 0.0  # folds -0.0 into 0.0
    bits = np.ascontiguousarray(v).view(np.int64)
    return np.where(np.isnan(v), np.int64(np.iinfo(np.int64).min), bits)


def column_ids(names: Sequence[object]) -> np.ndarray:
    """A fixed 64-bit id per column name (SipHash of its text under a fixed key): the key of a
    column's cells in :func:`cell_hashes`, the same whatever table or column order it comes in.

    Examples
    --------
    >>> ids = column_ids(["a", "b", "a"])
    >>> ids.dtype.name, bool(ids[0] == ids[2]), bool(ids[0] == ids[1])
    ('uint64', True, False)
    """
    text = np.array([str(n) for n in names], dtype=object)
    return pd.util.hash_array(text, hash_key="sg-column-ident!").astype(np.uint64, copy=False)


def cell_hashes(codes: np.ndarray, ids: np.ndarray, chain: int = 0) -> np.ndarray:
    """``uint64`` hashes of the cells of an int64 code matrix ``codes`` (``(n, p)``; or one column,
    ``(n,)`` with one id), the cells of column ``j`` keyed by ``ids[j]``; ``chain`` (0 or 1) picks
    one of two independently seeded hashes (:data:`CHAINS`).

    Within a column the hash is a bijection of the code (different values never collide); a row's
    hash on a column set is the wrapping sum of its cells' (:func:`set_sums`, :func:`masked`).

    Examples
    --------
    >>> import numpy as np
    >>> h = cell_hashes(np.array([[1, 1], [1, 2]]), np.array([7, 8], dtype=np.uint64))
    >>> bool(h[0, 0] == h[1, 0]), bool(h[0, 0] == h[0, 1])  # same value, other column: other hash
    (True, False)
    """
    seed, mult = CHAINS[chain]
    key = splitmix(np.asarray(ids, dtype=np.uint64) ^ seed)  # one key per column
    with np.errstate(over="ignore"):
        return splitmix(np.asarray(codes, dtype=np.int64).view(np.uint64) * mult + key)


def masked(rows: np.ndarray, cells: np.ndarray, mask: Sequence[int]) -> np.ndarray:
    """The row hashes ``rows`` (sums of every cell of ``cells``, ``(n, p)`` or ``(n, p, chains)``)
    with the columns ``mask`` left out: ``rows`` minus those cells (a new array; wrapping).

    Examples
    --------
    >>> import numpy as np
    >>> cells = cell_hashes(np.array([[1, 2, 3], [1, 5, 3]]), np.arange(3, dtype=np.uint64))
    >>> h = masked(cells.sum(axis=1), cells, [1])  # column 1 left out: the rows agree
    >>> bool(h[0] == h[1])
    True
    """
    out = np.array(rows, dtype=np.uint64, copy=True)
    with np.errstate(over="ignore"):
        for j in mask:  # loop over the masked columns, vectorised over rows
            out -= cells[:, j]
    return out


def set_sums(cells: np.ndarray, sets: Sequence[Sequence[int]]) -> list[np.ndarray]:
    """Per column set (positions in ``cells``, ``(n, p)`` or ``(n, p, chains)``), every row's hash
    on it: the wrapping sum of its cells there (``(n,)`` or ``(n, chains)``; an empty set sums to
    0). A set is summed directly or, when it leaves out fewer columns than it keeps, as the
    whole-row sum minus the left-out cells (:func:`masked`): the same words, fewer operations for
    the leave-few-out sets of the near-copy tests. A column named twice counts twice.

    Examples
    --------
    >>> import numpy as np
    >>> cells = cell_hashes(np.array([[1, 2, 3, 4], [1, 2, 9, 4]]), np.arange(4, dtype=np.uint64))
    >>> kept, direct = set_sums(cells, [[0, 1, 3], [1, 0, 3, 2]])
    >>> bool(kept[0] == kept[1]), bool(direct[0] == direct[1])  # column 2 told apart
    (True, False)
    >>> bool(kept[0] == cells[0, [0, 1, 3]].sum())
    True
    """
    p = cells.shape[1]
    total = None
    out = []
    with np.errstate(over="ignore"):
        for s in sets:  # loop over column sets, vectorised over rows
            at = np.asarray(s, dtype=np.int64).reshape(-1)
            hits = np.bincount(at, minlength=p)
            if 2 * at.size <= p or hits.max(initial=0) > 1:  # few columns kept, or one twice
                out.append(cells[:, at].sum(axis=1, dtype=np.uint64))
                continue
            if total is None:
                total = cells.sum(axis=1, dtype=np.uint64)
            out.append(masked(total, cells, np.flatnonzero(hits == 0)))
    return out
