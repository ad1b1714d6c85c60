"""Detection limits measured in the data: leak rows put into the release, the tests re-run.

For each leak family (:mod:`synthguard.data.leaks`) and each risk, the detection limit is the smallest
number of training records that, leaked as that family, makes the risk read ``high`` in at least
``power`` of the repetitions. A repetition:

1. **starts from the null**: the training/control labels are drawn at random over the real records,
   except that the ``k`` leaked training records (and the other training record an interpolated row
   is made of) stay training records. Any excess the observed
   release has is spread over both sides, so the limit is that of a release whose only leak is the
   injected one (it holds over repeated runs, not just for this split);
2. **injects the leak rows** of ``k`` training records (the first ``k`` of the repetition's seeded
   order of the family's candidates): every monotone test's per-record scores become
   ``max(score, the scores those rows give)``, measured by the test itself against the same rows
   (:class:`~synthguard.core.results.LeakResponse`; tests prove this equals a re-run on the release
   plus the rows);
3. **re-tests**: flags from the scores (tails re-cut over the new scores), training against control
   counts, one-sided Fisher p-value and Newcombe interval; the risk reads ``high`` when one of its
   tests has ``p <= alpha * w / W`` (the first step of the verdict's weighted Holm, which the joint
   min-P procedure can only beat: the limits are conservative) and an interval reaching the
   materiality.

Doubling then bisection on ``k``, with the same repetitions for every ``k`` (common random numbers),
so the detected share only grows with ``k``. At each ``k`` a risk's tests are run one at a time
(cheap counts first) until the share of repetitions one of them reads high in reaches ``power``:
the share of all of them can only be larger, so the search takes the same steps. Tests whose
state is not monotone in added release rows (CAP, DiSCO, anonymeter's guesses) state no responses
and take no part: a subset of a risk's tests detects no more than all of them, so the limits err
on the side of "not ruled out".
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..core.arrays import unique_codes
from ..core.results import LeakResponse, one_sided_level, tail_cut, tail_flags, tail_size
from ..stats import make_rng, z_value
from ..stats.maxt import fisher_p

__all__ = ["InjectionTest", "Scratch", "family_limits", "leak_visibility", "newcombe_upper", "visible_shares"]


class Scratch:
    """The repetitions x records arrays of :func:`family_limits` (the relabelling keys, the leak
    sources' places), kept for the next family one thread measures: an array of more than 32 MB
    is mapped afresh by the allocator each time, and faulting in its pages cost more than drawing
    its keys (about 0.2 s a family at 400,000 records). Arrays of one shape and type are reused;
    the numbers are those of fresh arrays. Each call hands out a new view of the memory: what a
    tail counter keeps per set of keys (``_TailCounter._top_keys``, by the array's identity) is
    not read for the next family's keys.

    Examples
    --------
    >>> s = Scratch()
    >>> a, b = s.array("keys", (2, 3), np.float64), s.array("keys", (2, 3), np.float64)
    >>> a is b, np.shares_memory(a, b)
    (False, True)
    """

    def __init__(self) -> None:
        self._arrays: dict[str, np.ndarray] = {}

    def array(self, name: str, shape: tuple[int, ...], dtype: type) -> np.ndarray:
        """An array ``name`` of ``shape`` and ``dtype``, its values left from the last use (a new
        view each call)."""
        a = self._arrays.get(name)
        if a is None or a.shape != shape or a.dtype != np.dtype(dtype):
            self._arrays.pop(name, None)  # freed before the new one is made
            a = self._arrays[name] = np.empty(shape, dtype=dtype)
        return a.view()


def leak_visibility(scores: np.ndarray, tail: float | None, resp: LeakResponse) -> float:
    """The share of a family's candidate training records whose leak row alone newly flags their
    own record (an interpolation: its own or its partner), at the current flags and tail cut: how
    much of a leak of this family the test sees (its *visible share*, issue #29).

    Decided without the training/control labels (the flags of every real record and the leak
    rows' responses), so a test may be chosen by it before its excess is read.

    Examples
    --------
    >>> resp = LeakResponse(np.arange(4), np.array([0, 1, 2]), np.array([0, 5, 2]), np.ones(3))
    >>> leak_visibility(np.zeros(8), None, resp)  # records 0 and 2 newly flagged, of 4
    0.5
    """
    return visible_shares(scores, tail, {"": resp})[""]


def visible_shares(scores: np.ndarray, tail: float | None, leaks: Mapping[str, LeakResponse]
                   ) -> dict[str, float]:
    """:func:`leak_visibility` of each family of ``leaks`` (family -> the test's response), the
    test's flags and tail cut found once (:func:`~synthguard.core.results.tail_flags`).

    Examples
    --------
    >>> resp = LeakResponse(np.arange(4), np.array([0, 1]), np.array([0, 1]), np.ones(2))
    >>> visible_shares(np.array([0.0, 1, 0, 0, 0, 0, 0, 0]), None, {"exact": resp})  # record 1 was flagged
    {'exact': 0.25}
    """
    s = np.asarray(scores, dtype=float)
    flagged = tail_flags(s, tail)
    cut = None if tail is None else tail_cut(s, tail)
    return {fam: _visible_share(flagged, cut, resp) for fam, resp in leaks.items()}


def _visible_share(flagged: np.ndarray, cut: float | None, resp: LeakResponse) -> float:
    """:func:`leak_visibility` at the test's flags ``flagged`` and tail cut ``cut`` (``None``:
    flags are ``score > 0``)."""
    n_src = resp.sources.size
    if n_src == 0 or resp.src.size == 0:
        return 0.0
    seen = resp.score > 0 if cut is None else (resp.score >= cut) & np.isfinite(resp.score)
    own = resp.target == resp.src
    if resp.partners is not None:
        partner_of = np.full(int(max(resp.sources.max(), resp.src.max())) + 1, -1, dtype=np.int64)
        partner_of[resp.sources] = resp.partners
        own |= (resp.target == partner_of[resp.src]) & (partner_of[resp.src] >= 0)
    new = own & seen & ~flagged[resp.target]
    hit = np.intersect1d(np.unique(resp.src[new]), resp.sources)
    return float(hit.size / n_src)


def newcombe_upper(k1: np.ndarray, n1: int, k2: np.ndarray, n2: int,
                   confidence_level: float = 0.95) -> np.ndarray:
    """Vectorised upper end of Newcombe's hybrid score interval of ``k1/n1 - k2/n2`` (as
    :func:`synthguard.stats.difference_ci`).

    Examples
    --------
    >>> from synthguard.stats import difference_ci
    >>> got = newcombe_upper(np.array([10]), 800, np.array([2]), 800)[0]
    >>> bool(abs(got - difference_ci(10, 800, 2, 800)["ci"][1]) < 1e-12)
    True
    """
    z = z_value(confidence_level)
    z2 = z * z

    def wilson(k: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        k = np.asarray(k, dtype=float)
        centre = (k + z2 / 2.0) / (n + z2)
        half = z / (n + z2) * np.sqrt(k * (n - k) / n + z2 / 4.0)
        low = np.where(k == 0, 0.0, np.maximum(0.0, centre - half))
        high = np.where(k == n, 1.0, np.minimum(1.0, centre + half))
        return low, high

    p1, p2 = np.asarray(k1) / n1, np.asarray(k2) / n2
    _, u1 = wilson(k1, n1)
    l2, _ = wilson(k2, n2)
    return np.minimum(1.0, p1 - p2 + np.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2))


@dataclass(frozen=True, eq=False)
class InjectionTest:
    """One verdict test as the limits see it.

    Parameters
    ----------
    name : str
        The test (run name).
    scores : ndarray
        Per pooled real record (training first, then control), higher = more exposed.
    tail : float, optional
        Flags are the pooled tail of this share (``None``: ``score > 0``).
    n_member : int
        Training records (the first ``n_member`` scores).
    threshold : float
        The p-value at or below which the test alarms at the first Holm step (``alpha * w / W``).
    risks : tuple of str
        The risks the test counts under.
    leaks : mapping
        Family -> the test's measured :class:`LeakResponse`.
    """

    name: str
    scores: np.ndarray
    tail: float | None
    n_member: int
    threshold: float
    risks: tuple[str, ...]
    leaks: Mapping[str, LeakResponse] = field(default_factory=dict)

    @cached_property
    def _counter(self) -> _TailCounter:
        """The tail counter of the scores (their order, once for every leak family)."""
        return _TailCounter(self.scores, float(self.tail))  # type: ignore[arg-type]


class _TailCounter:
    """Training and control records flagged by a tail test (:func:`~synthguard.core.results.tail_flags`
    with a ``tail``)
    after the leak rows raise some scores, per repetition, without a repetitions x records matrix.

    Only the raised records' scores change, and they only rise. With ``U`` the raised records of a
    repetition and ``A`` the ``k + |U|`` (or more) highest scores, the ``k``-th highest score after
    the rise (the cut) is the ``k``-th highest of ``A`` without ``U``'s old scores, plus ``U``'s new
    ones: at least ``k`` of ``A`` stay, and every score outside ``A`` is at most theirs. The flagged
    records are then those of old score at or above the cut (a prefix of the scores in descending
    order) but for ``U``, whose new scores are compared instead. For finite scores only (the caller
    falls back to ``tail_flags`` of a repetitions x records matrix otherwise).
    """

    def __init__(self, scores: np.ndarray, tail: float):
        self.scores = scores
        self.n = scores.size
        self.k = tail_size(self.n, tail)
        self.order = np.argsort(-scores, kind="stable")  # descending, ties in record order
        self.ascending = np.sort(scores)
        self.rank = np.empty(self.n, dtype=np.int64)  # each record's place in ``order``
        self.rank[self.order] = np.arange(self.n)
        # records at or above the old cut: the raised cut keeps the flagged old scores among them
        self.prefix = self.n - int(np.searchsorted(self.ascending, self.ascending[self.n - self.k],
                                                   "left")) if 0 < self.k <= self.n else self.n
        self._local = threading.local()  # per thread: ``top`` = (keys, their prefix in order)

    def _top_keys(self, keys: np.ndarray, width: int) -> np.ndarray:
        """``keys[:, order[:width]]`` (repetitions x records), gathered once per set of keys."""
        # one cache per thread: the families' limits are measured in threads
        # (run.verdict._family_limits), each with its own keys
        top = getattr(self._local, "top", None)
        if top is None or top[0] is not keys or top[1].shape[1] < width:
            top = self._local.top = (keys, keys[:, self.order[:max(width, self.prefix)]])
        return top[1]

    def counts(self, draw: _Draw, reps: int, rows: np.ndarray, targets: np.ndarray,
               raised: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(training, control) records flagged per repetition once record ``targets[i]`` of
        repetition ``rows[i]`` scores ``max(score, raised[i])``."""
        n, k = self.n, self.k
        code = rows.astype(np.int64) * n + targets
        srt = np.argsort(code, kind="stable")
        code = code[srt]
        first = np.flatnonzero(np.r_[True, code[1:] != code[:-1]]) if code.size else _NONE
        u_code = code[first]
        u_rep, u_idx = u_code // n, u_code % n
        old = self.scores[u_idx]
        new = np.maximum(old, np.maximum.reduceat(raised[srt], first)) if code.size else old
        per_rep = np.bincount(u_rep, minlength=reps)
        width = k + int(per_rep.max(initial=0))
        # candidates of each repetition: the `width` highest old scores (U's set to -inf: dropped,
        # at least k of them stay) and U's new scores (padding -inf)
        top = self.order[:width]
        cand = np.full((reps, width + int(per_rep.max(initial=0))), -np.inf)
        cand[:, :top.size] = self.scores[top][None, :]
        rank = self.rank
        in_top = rank[u_idx] < width
        cand[u_rep[in_top], rank[u_idx[in_top]]] = -np.inf
        slot = np.arange(u_code.size) - np.repeat(np.cumsum(per_rep) - per_rep, per_rep)
        cand[u_rep, width + slot] = new
        cols = cand.shape[1]
        cut = np.partition(cand, cols - k, axis=1)[:, cols - k]
        # old scores at or above the cut: a prefix of the descending order, per repetition
        length = n - np.searchsorted(self.ascending, cut, "left")
        k_all = length.astype(np.int64)
        k1 = draw.members_in_prefix(self._top_keys(draw.keys, int(length.max(initial=0))),
                                    self.rank, length)
        u_member = draw.is_member(u_rep, u_idx)
        was = old >= cut[u_rep]
        now = new >= cut[u_rep]
        change = now.astype(np.int64) - was
        k_all += np.bincount(u_rep, weights=change, minlength=reps).astype(np.int64)
        k1 += np.bincount(u_rep, weights=change * u_member, minlength=reps).astype(np.int64)
        return k1, k_all - k1


def _candidates(tests: Sequence[InjectionTest], family: str) -> np.ndarray | None:
    sources = [t.leaks[family].sources for t in tests if family in t.leaks]
    if not sources:
        return None
    common = sources[0]
    for s in sources[1:]:
        common = np.intersect1d(common, s)
    return common


_NONE = np.zeros(0, dtype=np.int64)

#: most cells (repetitions x records) the limits hold at once
_CELLS = 20_000_000

#: up to this many cells (repetitions x records) the relabelling counts the training records among a
#: set of records with one comparison of every key; above, by a binary search per repetition
_DENSE_CELLS = 4_000_000


def _p_and_upper(k1: np.ndarray, k2: np.ndarray, n1: int, big_n: int,
                 confidence_level: float) -> tuple[np.ndarray, np.ndarray]:
    """Per repetition, the one-sided Fisher p-value of ``k1`` training and ``k2`` control records
    flagged, and the upper end of the difference of their rates (:func:`newcombe_upper`), each
    computed once per distinct ``(k1, k2)``: repetitions share counts, and both functions are
    elementwise, so every value is the one a call on all repetitions gives."""
    k1 = np.asarray(k1, dtype=np.int64)
    k2 = np.asarray(k2, dtype=np.int64)
    _, first, inv = np.unique(k1 * np.int64(big_n + 1) + k2, return_index=True,
                              return_inverse=True)
    inv = inv.ravel()
    a, b = k1[first], k2[first]
    return (fisher_p(a, a + b, n1, big_n)[inv],
            newcombe_upper(a, n1, b, big_n - n1, confidence_level)[inv])


class _Tested:
    """:func:`_p_and_upper` of one family's repetitions, each distinct ``(k1, k2)`` computed once.

    The doubling and bisection re-test every test at every leak size, and the counts recur (the
    same relabellings, leak sizes close together): both functions are elementwise, so a value kept
    from an earlier call is the one this call would compute.
    """

    def __init__(self, n1: int, big_n: int, confidence_level: float):
        self.n1, self.big_n, self.confidence_level = n1, big_n, confidence_level
        self.codes = np.zeros(0, dtype=np.int64)  # k1 * (big_n + 1) + k2, ascending
        self.p = np.zeros(0)
        self.upper = np.zeros(0)

    def __call__(self, k1: np.ndarray, k2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        width = np.int64(self.big_n + 1)
        code = np.asarray(k1, dtype=np.int64) * width + np.asarray(k2, dtype=np.int64)
        at = np.searchsorted(self.codes, code)
        known = at < self.codes.size
        known[known] = self.codes[at[known]] == code[known]
        if not known.all():
            new = np.unique(code[~known])
            p, upper = _p_and_upper(new // width, new % width, self.n1, self.big_n,
                                    self.confidence_level)
            order = np.argsort(np.r_[self.codes, new], kind="stable")
            self.codes = np.r_[self.codes, new][order]
            self.p, self.upper = np.r_[self.p, p][order], np.r_[self.upper, upper][order]
            at = np.searchsorted(self.codes, code)
        return self.p[at], self.upper[at]


def _unique_pairs(rows: np.ndarray, cols: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``(row, col)`` pairs, sorted."""
    code = unique_codes(rows.astype(np.int64) * width + cols)
    return code // width, code % width


@dataclass(frozen=True)
class _Draw:
    """One relabelling per repetition: the forced training records (sorted, padded with the
    record count) and, per repetition, the key below which every other record is a training
    record."""

    forced: np.ndarray  # reps x w, sorted per row, padded with big_n
    below: np.ndarray  # reps: a record not forced is training when its key is below this
    keys: np.ndarray  # reps x big_n (shared)

    @cached_property
    def _pairs(self) -> tuple[np.ndarray, np.ndarray]:
        rr, cc = np.nonzero(self.forced < self.keys.shape[1])
        return rr, self.forced[rr, cc]

    def _forced_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """(repetition, record) of every forced training record, found once per draw."""
        return self._pairs

    @cached_property
    def _forced_codes(self) -> np.ndarray:
        """``repetition * (records + 1) + record`` of every forced slot, padding included: sorted,
        as each row of ``forced`` is sorted and its values (padding = records) stay below the next
        repetition's offset."""
        width = np.int64(self.keys.shape[1] + 1)
        return (self.forced.astype(np.int64) + np.arange(len(self.forced), dtype=np.int64)[:, None]
                * width).ravel()

    def is_member(self, rows: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """Is record ``idx[i]`` a training record in repetition ``rows[i]``?"""
        member = self.keys[rows, idx] < self.below[rows]
        codes = self._forced_codes
        if codes.size and rows.size:
            # forced: the pair's code is among the sorted codes (a binary search; never a padding
            # slot, whose record number is one past the last record)
            q = rows.astype(np.int64) * np.int64(self.keys.shape[1] + 1) + idx
            at = np.minimum(np.searchsorted(codes, q), codes.size - 1)
            member |= codes[at] == q
        return member

    def members_among(self, sorted_keys: Sequence[np.ndarray], mask: np.ndarray) -> np.ndarray:
        """Per repetition, how many records of ``mask`` (their keys, sorted, per repetition:
        ``sorted_keys``) are training records."""
        reps = len(self.keys)
        if isinstance(sorted_keys, np.ndarray) and sorted_keys.size <= _DENSE_CELLS:
            # every key compared at once: the count a binary search per repetition returns
            count = (sorted_keys < self.below[:, None]).sum(axis=1, dtype=np.int64)
        else:
            count = np.array([np.searchsorted(sorted_keys[r], self.below[r]) for r in range(reps)],
                             dtype=np.int64)
        fr, fi = self._above_pairs
        return count + np.bincount(fr[mask[fi]], minlength=reps)

    def members_in_prefix(self, top_keys: np.ndarray, place: np.ndarray,
                          length: np.ndarray) -> np.ndarray:
        """Per repetition ``r``, how many of the records placed first to ``length[r]``-th in an
        order are training records; ``top_keys`` holds their keys (repetitions x at least
        ``length.max()`` records, in that order), ``place`` each record's place in it."""
        inside = np.arange(top_keys.shape[1])[None, :] < length[:, None]
        count = ((top_keys < self.below[:, None]) & inside).sum(axis=1, dtype=np.int64)
        fr, fi = self._above_pairs
        return count + np.bincount(fr[place[fi] < length[fr]], minlength=len(self.keys))

    @cached_property
    def _above_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """(repetition, record) of the forced training records whose key is not below the cut:
        those the key comparison misses, found once per draw (a count over some records adds
        those of them among these pairs)."""
        fr, fi = self._forced_pairs()
        above = self.keys[fr, fi] >= self.below[fr]
        return fr[above], fi[above]

    def members(self, start: int, stop: int) -> np.ndarray:
        """(stop - start) x records: the training records of repetitions ``start:stop``."""
        members = self.keys[start:stop] < self.below[start:stop, None]
        fr, fi = self._forced_pairs()
        sel = (fr >= start) & (fr < stop)
        members[fr[sel] - start, fi[sel]] = True
        return members


#: keys sampled per repetition to bracket the band (:func:`_ranks_sorted`)
_SAMPLE = 8192


def _ranks_sorted(keys: np.ndarray, start: int, stop: int) -> np.ndarray:
    """The values of ranks ``start`` to ``stop - 1`` of ``keys`` (1-D), ascending: those of
    ``np.sort(keys)[start:stop]``.

    Two bounds from a sorted sample of the keys (every ``len / _SAMPLE``-th, each bound a few
    standard deviations of a sample quantile beyond the band) bracket the band: with ``c`` keys
    below the lower bound, the sorted keys between the bounds are ranks ``c`` onwards, and hold the
    band when ``c <= start`` and they reach rank ``stop - 1`` (checked; else a selection over every
    key). Sorting the bracket costs a fraction of a selection over every key.
    """
    n = keys.size
    step = max(1, n // _SAMPLE)
    sample = np.sort(keys[::step])
    m = sample.size
    margin = 4.0 * np.sqrt(m / 4.0) + 2.0  # sample ranks: 4 x the largest quantile's deviation
    i_lo, i_hi = int(np.floor(start / n * m - margin)), int(np.ceil(stop / n * m + margin))
    lo = sample[i_lo] if i_lo >= 0 else -np.inf
    hi = sample[i_hi] if i_hi < m else np.inf
    below = int(np.count_nonzero(keys < lo))
    if below <= start:
        bracket = keys[(keys >= lo) & (keys <= hi)]
        if below + bracket.size >= stop:
            bracket.sort()
            return bracket[start - below:stop - below]
    return np.sort(np.partition(keys, [start, stop - 1] if 0 < start < stop - 1 else stop - 1)
                   [start:stop])


class _Relabelling:
    """The random training/control relabelling of every repetition (step 1 above), from one key
    per record and repetition: the forced records, then the records of smallest key.

    Equal to taking the ``n_member`` smallest keys with the forced records' keys set to -1 (an
    ``argpartition`` per repetition and leak size): with ``f`` records forced, the others that are
    training records are those of key below the ``(n_member - f)``-th smallest key among the
    records not forced, which lies among the ``n_member`` smallest keys; with at most ``w``
    records forced, among the ``w + 1`` largest of them (ranks ``n_member - w - 1`` to
    ``n_member - 1``, the band). So the band is selected and sorted once per repetition, and each
    leak size only places its forced records' keys in it (a binary search; a key at or below the
    band's first counts as that rank, which decides the same as its own, lower rank), instead of a
    selection over every key per leak size. ``width``: the most records a draw forces (a wider draw
    selects a wider band first).
    """

    def __init__(self, keys: np.ndarray, n_member: int, width: int = 0):
        self.keys = keys
        self.n_member = n_member
        self.width = width
        self._band: tuple[int, np.ndarray] | None = None  # (first rank, reps x sorted keys)

    def sorted_keys(self, idx: np.ndarray) -> np.ndarray:
        """Per repetition (row), the keys of records ``idx``, sorted."""
        out = self.keys[:, idx]  # a copy (fancy indexing), sorted in place
        out.sort(axis=1)
        return out

    def _low(self, width: int) -> tuple[int, np.ndarray]:
        """The band of at least ``width + 1`` keys: its first rank ``b`` and, per repetition, the
        keys of ranks ``b`` to ``n_member - 1``, sorted (computed once per width)."""
        if self._band is None or self._band[0] > max(0, self.n_member - width - 1):
            self.width = max(self.width, width)
            n1 = self.n_member
            b = max(0, n1 - self.width - 1)
            low = np.empty((len(self.keys), n1 - b))
            for r, k in enumerate(self.keys):  # one selection per repetition: bounded memory
                low[r] = _ranks_sorted(k, b, n1)
            self._band = (b, low)
        return self._band

    def draw(self, forced: np.ndarray) -> _Draw | None:
        """The relabelling with the records ``forced`` (reps x w, -1 = none) kept training;
        ``None`` when more records are forced than there are training records."""
        reps, big_n = self.keys.shape
        f = np.where(forced >= 0, forced, big_n)
        f.sort(axis=1)
        if f.shape[1] > 1:
            dup = np.zeros(f.shape, dtype=bool)
            dup[:, 1:] = f[:, 1:] == f[:, :-1]
            f[dup] = big_n
            f.sort(axis=1)
        valid = f < big_n
        n_forced = valid.sum(axis=1)
        target = self.n_member - n_forced
        if (target < 0).any() or self.n_member == 0:
            return None
        n1 = self.n_member
        b, low = self._low(f.shape[1])
        rows = np.arange(reps)[:, None]
        # the forced records' keys, ascending (padding last), and their ranks among the n_member
        # smallest keys (n_member: above them all), ascending: a binary search per repetition
        # over ascending needles (NumPy reuses its bounds)
        fk = np.where(valid, self.keys[rows, np.where(valid, f, 0)], np.inf)
        fk.sort(axis=1)
        rank = b + np.stack([np.searchsorted(low[r], fk[r]) for r in range(reps)])
        none = n1 + 1  # padding: after every rank
        rank[fk == np.inf] = none  # (keys are finite)
        # the target-th record not forced, in key order: skip the forced ranks before it
        skip = ((rank - np.arange(rank.shape[1])[None, :] < target[:, None])
                & (rank < none)).sum(axis=1)
        cut = target + skip  # <= n_member
        last = np.nextafter(low[:, -1], np.inf)  # cut at n_member: every one of the smallest keys
        below = np.where(cut < n1, low[rows[:, 0], np.minimum(cut, n1 - 1) - b], last)
        return _Draw(f, below, self.keys)

    def members(self, draw: _Draw | None, start: int, stop: int, forced: np.ndarray) -> np.ndarray:
        """(stop - start) x records: the training records of repetitions ``start:stop``."""
        if draw is not None:
            return draw.members(start, stop)
        # more forced than training records: the n_member smallest keys, forced ones at -1
        key = self.keys[start:stop].copy()
        f = forced[start:stop]
        rr, cc = np.nonzero(f >= 0)
        key[rr, f[rr, cc]] = -1.0
        members = np.zeros(key.shape, dtype=bool)
        at = np.arange(stop - start)[:, None]
        members[at, np.argpartition(key, self.n_member - 1, axis=1)[:, :self.n_member]] = True
        return members


def family_limits(tests: Sequence[InjectionTest], family: str, risks: Sequence[str], *,
                  materiality: float, power: float = 0.8, reps: int = 40,
                  seed: int | None = 0, confidence_level: float = 0.95,
                  partial: Mapping[str, Mapping[str, tuple[str, float]]] | None = None,
                  scratch: Scratch | None = None) -> dict[str, dict]:
    """The detection limit of leak ``family`` for each of ``risks``.

    A risk reads high in a repetition when one of its tests does (significant, its interval
    reaching ``materiality``), or, with ``partial`` (risk -> leak family -> the risk's test that
    sees the family best and its visible share ``v``, :func:`leak_visibility`), when one of its
    tests is significant and for some family the upper end ``U`` of that test's interval over
    ``v`` reaches ``materiality``: the verdict's rule (:mod:`synthguard.run.verdict`), so a limit
    is stated for the rule that reads the release. ``"any"`` (the verdict) reads high when one of
    ``partial``'s risks does. ``scratch``: the arrays of the last family this thread measured
    (:class:`Scratch`; default: fresh ones); the limits are the same. ``confidence_level``: the
    level of each test's one-sided bound, as the evidence states it (its interval's upper end,
    :attr:`synthguard.core.results.Evidence.upper`, the verdict's reading).

    Returns
    -------
    dict
        Risk -> ``{"k", "share", "power", "reps", "candidates", "tests"}``: ``k`` the smallest leak
        (training records) read high with ``power``, ``None`` when no test of the risk responds to
        the family (``tests`` empty) or when even every candidate leaking is not detected;
        ``share`` = ``k / n_member``; ``tests`` the tests that responded.

    Examples
    --------
    >>> n = 400
    >>> scores = np.zeros(2 * n)
    >>> resp = LeakResponse(np.arange(n), np.arange(n), np.arange(n), np.ones(n))
    >>> t = InjectionTest("copies", scores, None, n, 0.05, ("presence",), {"exact": resp})
    >>> out = family_limits([t], "exact", ["presence"], materiality=0.01, reps=20)
    >>> 3 <= out["presence"]["k"] <= 12
    True
    """
    out: dict[str, dict] = {}
    seeing = [t for t in tests if family in t.leaks]
    cands = _candidates(seeing, family)
    if not seeing or cands is None or cands.size == 0:
        return {r: {"k": None, "share": None, "power": None, "reps": reps, "candidates": 0,
                    "tests": []} for r in risks}
    # the tests that bound the other families under ``partial`` are re-tested under each
    # relabelling too (an empty response: the leak rows of this family do not move their scores)
    empty = LeakResponse(cands, _NONE, _NONE, np.zeros(0))
    chosen = {name for fams in (partial or {}).values() for name, _ in fams.values()}
    seeing = seeing + [t for t in tests if family not in t.leaks and t.name in chosen]
    index = {t.name: j for j, t in enumerate(seeing)}
    resps = [t.leaks.get(family, empty) for t in seeing]
    n1 = seeing[0].n_member
    big_n = seeing[0].scores.size
    rng = make_rng(seed, "limits", family)
    orders = np.vstack([rng.permutation(cands) for _ in range(reps)])
    partner_of = np.full(n1, -1, dtype=np.int64)  # the other training record a leak row is made of
    first = seeing[0].leaks[family]
    if first.partners is not None:
        partner_of[first.sources] = first.partners
    scratch = Scratch() if scratch is None else scratch
    keys = rng.random(out=scratch.array("keys", (reps, big_n), np.float64))  # rng.random((reps, big_n))
    relabel = _Relabelling(keys, n1, 2 * int(cands.size))  # a draw forces k leaked and k partners
    # the verdict reads each test's one-sided bound at ``confidence_level`` (the upper end of the
    # two-sided interval at ``2 * confidence_level - 1``: Evidence.upper), and so do the limits
    tested = _Tested(n1, big_n, one_sided_level(confidence_level))

    chunk = max(1, min(reps, _CELLS // max(big_n, 1)))  # bounded memory: reps x records

    # a test whose flags are ``score > 0`` on NaN-free scores: max(score, update) > 0 is
    # ``score > 0 or update > 0``, counted without a repetitions x records matrix
    plain = [t.tail is None and not np.isnan(t.scores).any()
             and not np.isnan(r.score).any() for t, r in zip(seeing, resps, strict=True)]
    # a tail test on finite scores: its flags counted from the raised records (_TailCounter)
    # (within the same memory bound: its candidates and flagged prefixes are reps x the tail)
    tails = [t._counter if t.tail is not None and np.isfinite(t.scores).all()
             and np.isfinite(r.score).all()
             and 1 <= np.ceil(float(t.tail) * big_n) <= _CELLS // (2 * reps)
             else None for t, r in zip(seeing, resps, strict=True)]
    positive = [t.scores > 0 if pl else None for t, pl in zip(seeing, plain, strict=True)]
    positive_keys = [relabel.sorted_keys(np.flatnonzero(pos)) if pos is not None else None
                      for pos in positive]

    # where each test's leak sources sit in every repetition's order (a source not among the
    # candidates: past the end), so the first k leaked are those placed below k
    place = scratch.array("place", (reps, n1), np.int32)
    place.fill(np.iinfo(np.int32).max)
    place[np.arange(reps)[:, None], orders] = np.arange(orders.shape[1], dtype=np.int32)[None, :]
    src_place = [place[:, r.src] for r in resps]
    del place
    # the tests in the order they are tried: the cheap counts first, the matrices last
    effort = [0 if plain[j] else 1 if tails[j] is not None else 2 for j in range(len(seeing))]
    # (k, test) -> per repetition: is it significant, the upper end of its interval
    column: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
    drawn: list = []  # the relabelling of the last leak size (k, forced, draw)

    def relabelled(k: int) -> tuple[np.ndarray, _Draw | None]:
        if not drawn or drawn[0] != k:
            src = orders[:, :k]
            # the leaked records, and the training records their rows are made of, stay training
            forced = np.concatenate([src, partner_of[src]], axis=1)
            drawn[:] = [k, forced, relabel.draw(forced)]
        return drawn[1], drawn[2]

    def high(k: int, j: int) -> np.ndarray:
        """Per repetition: does test ``j`` read high with the first k leaked?"""
        sig, hi = tested_at(k, j)
        return sig & (hi >= materiality)

    def tested_at(k: int, j: int) -> tuple[np.ndarray, np.ndarray]:
        """Per repetition: is test ``j`` significant with the first k leaked, and its upper end."""
        if (k, j) in column:
            return column[(k, j)]
        forced, draw = relabelled(k)
        t = seeing[j]
        resp = resps[j]
        r_idx, u_idx = np.nonzero(src_place[j] < k) if resp.src.size else (_NONE, _NONE)
        up = resp.score[u_idx] > 0
        if plain[j] and draw is not None:
            pos = positive[j]
            # flags: the test's own, or a record an injected row now reaches
            rr, tg = _unique_pairs(r_idx[up], resp.target[u_idx[up]], big_n)
            new = ~pos[tg]
            rr, tg = rr[new], tg[new]
            k_all = int(pos.sum()) + np.bincount(rr, minlength=reps)
            k1 = (draw.members_among(positive_keys[j], pos) +
                  np.bincount(rr, weights=draw.is_member(rr, tg), minlength=reps).astype(np.int64))
            k2 = k_all - k1
        elif tails[j] is not None and draw is not None:
            k1, k2 = tails[j].counts(draw, reps, r_idx, resp.target[u_idx], resp.score[u_idx])
        else:
            k1, k2 = np.zeros(reps, dtype=np.int64), np.zeros(reps, dtype=np.int64)
            for start in range(0, reps, chunk):
                stop = min(reps, start + chunk)
                members = relabel.members(draw, start, stop, forced)
                sel = (r_idx >= start) & (r_idx < stop)
                if plain[j]:
                    flags = np.repeat(positive[j][None, :], stop - start, axis=0)
                    flags[r_idx[sel & up] - start, resp.target[u_idx[sel & up]]] = True
                else:
                    scores = np.repeat(t.scores[None, :], stop - start, axis=0)
                    np.maximum.at(scores, (r_idx[sel] - start, resp.target[u_idx[sel]]),
                                  resp.score[u_idx[sel]])
                    flags = tail_flags(scores, t.tail)
                k1[start:stop] = (flags & members).sum(axis=1)
                k2[start:stop] = flags.sum(axis=1) - k1[start:stop]
        p, hi = tested(k1, k2)
        column[(k, j)] = res = (p <= t.threshold, hi)
        return res

    def cols_of(risk: str) -> list[int]:
        """The tests of ``risk``, the cheap counts first."""
        return sorted((j for j, t in enumerate(seeing) if risk in t.risks), key=lambda j: (effort[j], j))

    def risk_high(k: int, risk: str, enough: float | None = None) -> np.ndarray:
        """Per repetition, under ``partial``: does ``risk`` read high with the first k leaked?
        With ``enough``, its tests are tried one at a time, the cheap counts first, and the
        share is returned once it reaches ``enough`` (what is read only grows with each test:
        alarms, significance and the largest leak allowed are each over the tests read)."""
        assert partial is not None
        if risk == "any":
            out_any = np.zeros(reps, dtype=bool)
            for r in partial:
                if r != "any":
                    out_any |= risk_high(k, r)
            return out_any
        # a test best for several families: the smallest visible share gives the largest leak
        seen: dict[int, float] = {}
        for name, v in (partial.get(risk) or {}).values():
            seen[index[name]] = min(v, seen.get(index[name], np.inf))
        sig_any = np.zeros(reps, dtype=bool)
        alarm = np.zeros(reps, dtype=bool)
        worst = np.zeros(reps)
        high_now = alarm
        for j in cols_of(risk):
            sig, hi = tested_at(k, j)
            sig_any |= sig
            alarm |= sig & (hi >= materiality)
            if j in seen:
                worst = np.maximum(worst, hi / seen[j])
            high_now = alarm | (sig_any & (worst >= materiality))
            if enough is not None and float(high_now.mean()) >= enough:
                break
        return high_now

    for risk in risks:
        cols = cols_of(risk)
        names = [seeing[j].name for j in sorted(cols) if family in seeing[j].leaks]
        if not names:
            out[risk] = {"k": None, "share": None, "power": None, "reps": reps,
                         "candidates": int(cands.size), "tests": []}
            continue

        def pw(k: int, cols: list[int] = cols, risk: str = risk) -> float:
            """The share of repetitions one of the risk's tests reads high in."""
            if partial is not None:
                return float(risk_high(k, risk).mean())
            any_high = np.zeros(reps, dtype=bool)
            for j in cols:
                any_high |= high(k, j)
            return float(any_high.mean())

        def reached(k: int, cols: list[int] = cols, risk: str = risk) -> bool:
            """``pw(k) >= power``, its tests tried one at a time: the share of repetitions some of
            them read high in only grows with each test, so once it reaches ``power`` the share
            of all of them does, and the others need not be run at this ``k``."""
            if partial is not None:
                return float(risk_high(k, risk, enough=power).mean()) >= power
            any_high = np.zeros(reps, dtype=bool)
            for j in cols:
                any_high |= high(k, j)
                if float(any_high.mean()) >= power:
                    return True
            return False

        hi = 1
        while hi < cands.size and not reached(hi):
            hi = min(int(cands.size), hi * 2)
        p_hi = pw(hi)
        if p_hi < power:
            out[risk] = {"k": None, "share": None, "power": p_hi, "reps": reps,
                         "candidates": int(cands.size), "tests": names}
            continue
        lo = hi // 2
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if reached(mid):
                hi = mid
            else:
                lo = mid
        out[risk] = {"k": int(hi), "share": hi / n1, "power": pw(hi), "reps": reps,
                     "candidates": int(cands.size), "tests": names}
    return out
