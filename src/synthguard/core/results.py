"""Result types shared by every metric: small frozen dataclasses that serialise to plain JSON."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from .arrays import equal_range

Direction = Literal["lower is safer", "higher is safer", "higher is better", "lower is better"]
RiskLevel = Literal["low", "medium", "high", "inconclusive", "not assessed", "not meaningful",
                    "unknown"]

#: The risks a privacy officer must answer (GDPR WP216's criteria plus membership): every test that
#: drives the verdict belongs to one of them.
RISKS = ("presence", "singling_out", "linkability", "inference")
#: Leak types a test can see: verbatim copies, near-copies (a few cells changed), copies of rare
#: (quasi-identifier-unique) records, memorised neighbourhoods, whole persons (entity runs), text
#: documents copied (near-)verbatim.
LEAK_TYPES = ("exact", "near", "rare", "neighbourhood", "person", "text")
#: Leak families defined in the data (:mod:`synthguard.data.leaks` builds their rows): the detection
#: limits are measured by putting rows of each family, built from the run's training records, into
#: the release and re-testing.
LEAK_FAMILIES = ("exact", "rare", "near1", "near2", "noise2", "noise5", "noise10", "linkage",
                 "interpolation", "person", "text")


@dataclass(frozen=True, eq=False)
class LeakResponse:
    """What leak rows of one family (:mod:`synthguard.data.leaks`) do to a test's per-record scores,
    measured by putting them into the release and re-running the test's own computation.

    ``sources`` are the training records (positions in the run's canonical order) whose leak rows
    were built: the candidates of the family, the same for every test of the run; ``partners``
    (optional, one per source, ``-1`` for none) the other training record a leak row is made from
    (an interpolation's neighbour). Each update says:
    with the leak row of training record ``src`` in the release, pooled real record ``target``
    (training records first, then control records) has score ``score``. Scores only rise when
    release rows are added (a copy appears, a distance falls), so the scores with a set ``S`` of
    leak rows in the release are ``max(score, updates of S)``: what re-running the test on the
    release plus those rows gives.

    Examples
    --------
    >>> import numpy as np
    >>> r = LeakResponse(np.array([0, 1]), np.array([0]), np.array([0]), np.array([1.0]))
    >>> r.apply(np.zeros(4), np.array([True, False])).tolist()
    [1.0, 0.0, 0.0, 0.0]
    """

    sources: np.ndarray
    src: np.ndarray
    target: np.ndarray
    score: np.ndarray
    partners: np.ndarray | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "sources", np.asarray(self.sources, dtype=np.int64))
        if self.partners is not None:
            object.__setattr__(self, "partners", np.asarray(self.partners, dtype=np.int64))
            if self.partners.shape != self.sources.shape:
                raise ValueError("LeakResponse: one partner (or -1) per source")
        object.__setattr__(self, "src", np.asarray(self.src, dtype=np.int64))
        object.__setattr__(self, "target", np.asarray(self.target, dtype=np.int64))
        object.__setattr__(self, "score", np.asarray(self.score, dtype=float))
        if not (self.src.shape == self.target.shape == self.score.shape):
            raise ValueError("LeakResponse: src, target and score need one entry per update")

    def apply(self, scores: np.ndarray, leaked: np.ndarray) -> np.ndarray:
        """``scores`` (pooled, training first) with the leak rows of the training records marked in
        ``leaked`` (a boolean mask over training records) in the release."""
        out = np.array(scores, dtype=float, copy=True)
        sel = leaked[self.src] if self.src.size else np.zeros(0, dtype=bool)
        if sel.any():
            np.maximum.at(out, self.target[sel], self.score[sel])
        return out


#: What removing the release rows behind a flagged record does: ``"drop"`` (the rows are copies or
#: near-copies of the record, or sit on it: removing them removes the exposure) or ``"review"``
#: (the rows disclose the record through what they share with it, e.g. a key cell: a person
#: decides).
PAIR_ACTIONS = ("drop", "review")


@dataclass(frozen=True, eq=False)
class RowPairs:
    """The release rows behind a test's per-record flags: which release row ties to which pooled
    real record (training records first, then control records; both in the run's canonical order).

    Two forms, either or both:

    * explicit pairs: ``record[i]`` ties to release row ``row[i]`` (copies within a few cells,
      release rows within a record's closeness radius);
    * key groups: ``record_key`` (one per pooled record, ``-1`` for none) and ``row_key`` (one per
      release row, ``-1`` for none); a record and a row tie when their keys are equal (a verbatim
      copy: equal row identities; a disclosure test's key cell). A many-to-many join kept in
      ``n + m`` numbers.

    The ties of a *flagged* record are the rows whose removal clears its flag (for a tail test, at
    the tail's current cut); a test may state ties of records it does not flag too.

    Parameters
    ----------
    record, row : ndarray of int
        Explicit pairs (may be empty).
    n_rows : int
        Release rows of the run (row indices lie in ``[0, n_rows)``).
    record_key, row_key : ndarray of int, optional
        Key groups (both or neither).
    tie : str
        What ties a row to a record, in a few words (``"equal on every compared cell"``).
    action : {"drop", "review"}
        See :data:`PAIR_ACTIONS`.
    copies : bool
        Every tie of a training record is a copy of it (verbatim, or within the test's cells and
        identifying it): listed whether the record is flagged or not.
    crowd : ndarray of int, optional
        One per release row: how many pooled real records lie within one cell more than the tie
        allows (the row's chance stratum: a row with many real records around it equals or nears
        one of them by chance more often). The drop list compares, stratum by stratum from the
        sparsest, the release rows tied to training records with those tied to control records
        (the chance baseline); ``0`` for rows the test ties to no record; ``None``: unknown (the
        ties are compared with chance in one stratum).
    chance_crowd : ndarray of int, optional
        One per control record taken as a fresh row against the other real records: its crowd
        when the test would tie it to a training record as it ties release rows, else ``-1`` (a
        second chance baseline beside the release rows tied to control records).

    Examples
    --------
    >>> import numpy as np
    >>> p = RowPairs(np.array([0, 2]), np.array([1, 1]), 3, tie="within one cell")
    >>> p.pairs_of(np.array([True, False, False])).tolist()
    [[0, 1]]
    >>> g = RowPairs.groups(np.array([5, 6, -1]), np.array([6, 6, 5]), tie="equal rows")
    >>> g.pairs_of(np.array([True, True, True])).tolist()
    [[0, 2], [1, 0], [1, 1]]
    """

    record: np.ndarray
    row: np.ndarray
    n_rows: int
    record_key: np.ndarray | None = None
    row_key: np.ndarray | None = None
    tie: str = ""
    action: str = "drop"
    copies: bool = False
    crowd: np.ndarray | None = None
    chance_crowd: np.ndarray | None = None

    def __post_init__(self) -> None:
        for name in ("record", "row"):
            object.__setattr__(self, name, np.asarray(getattr(self, name), dtype=np.int64).ravel())
        if self.record.shape != self.row.shape:
            raise ValueError("RowPairs: one release row per record in the explicit pairs")
        if (self.record_key is None) != (self.row_key is None):
            raise ValueError("RowPairs: give both record_key and row_key, or neither")
        if self.row_key is not None:
            object.__setattr__(self, "record_key", np.asarray(self.record_key, dtype=np.int64))
            object.__setattr__(self, "row_key", np.asarray(self.row_key, dtype=np.int64))
            if self.row_key.size != int(self.n_rows):
                raise ValueError("RowPairs: row_key needs one key per release row")
        if self.action not in PAIR_ACTIONS:
            raise ValueError(f"RowPairs: action must be one of {PAIR_ACTIONS}")
        if self.crowd is not None:
            object.__setattr__(self, "crowd", np.asarray(self.crowd, dtype=np.int64))
            if self.crowd.shape != (int(self.n_rows),):
                raise ValueError("RowPairs: crowd needs one count per release row")
        if self.chance_crowd is not None:
            object.__setattr__(self, "chance_crowd", np.asarray(self.chance_crowd, dtype=np.int64))
        if self.row.size and (self.row.min() < 0 or self.row.max() >= int(self.n_rows)):
            raise ValueError("RowPairs: release rows must lie in [0, n_rows)")

    @classmethod
    def groups(cls, record_key: np.ndarray, row_key: np.ndarray, *, tie: str = "",
               action: str = "drop", copies: bool = False, crowd: np.ndarray | None = None,
               chance_crowd: np.ndarray | None = None) -> RowPairs:
        """Ties by key groups only (see the class)."""
        empty = np.zeros(0, dtype=np.int64)
        return cls(empty, empty, int(np.asarray(row_key).size), record_key, row_key, tie, action,
                   copies, crowd, chance_crowd)

    def pairs_of(self, records: np.ndarray, budget: int = 50_000_000) -> np.ndarray:
        """Every ``(record, row)`` tie of the pooled records marked in ``records`` (a boolean mask),
        as an ``(n, 2)`` array sorted by record then row; key groups are expanded (a
        :class:`MemoryError` names the budget when a join would exceed ``budget`` pairs)."""
        mask = np.asarray(records, dtype=bool)
        sel = mask[self.record] if self.record.size else np.zeros(0, dtype=bool)
        parts = [np.stack([self.record[sel], self.row[sel]], axis=1)]
        if self.row_key is not None:
            assert self.record_key is not None
            rec = np.flatnonzero(mask & (self.record_key >= 0))
            keys = self.record_key[rec]
            rows = np.flatnonzero(self.row_key >= 0)
            order = rows[np.argsort(self.row_key[rows], kind="stable")]
            sorted_keys = self.row_key[order]
            lo, hi = equal_range(sorted_keys, keys)
            cnt = hi - lo
            if int(cnt.sum()) > budget:
                raise MemoryError(f"RowPairs: {int(cnt.sum())} tied pairs exceed the budget {budget}")
            starts = np.repeat(lo - np.r_[0, np.cumsum(cnt)[:-1]], cnt)
            parts.append(np.stack([np.repeat(rec, cnt),
                                   order[starts + np.arange(int(cnt.sum()))]], axis=1))
        out = np.concatenate(parts, axis=0) if parts else np.zeros((0, 2), dtype=np.int64)
        if out.shape[0]:
            out = np.unique(out, axis=0)
        return out.astype(np.int64)


def tail_flags(scores: np.ndarray, tail: float | None) -> np.ndarray:
    """Flags from per-record scores: ``score > 0`` (``tail`` None), else the records at or above the
    pooled ``(1 - tail)`` quantile: the ``ceil(tail * n)`` highest scores, ties included
    (label-free: ``scores`` pools training and control records). A 2-D ``scores`` (repetitions x
    records, the detection limits' re-tests) is flagged row by row.

    Examples
    --------
    >>> import numpy as np
    >>> tail_flags(np.array([0.0, 2.0, 1.0, 3.0]), 0.5).tolist()
    [False, True, False, True]
    >>> tail_flags(np.array([[0.0, 2.0, 1.0, 3.0], [5.0, 0.0, 0.0, 1.0]]), 0.5).tolist()
    [[False, True, False, True], [True, False, False, True]]
    """
    s = np.asarray(scores, dtype=float)
    if tail is None:
        return s > 0
    return (s >= _cuts(s, tail)[..., None]) & np.isfinite(s)


def tail_size(n: int, tail: float) -> int:
    """How many of ``n`` pooled records a tail of share ``tail`` holds: ``ceil(tail * n)`` (ties at
    its cut come in too, :func:`tail_flags`).

    Examples
    --------
    >>> tail_size(1600, 0.0625), tail_size(10, 0.01), tail_size(10, 0.0)
    (100, 1, 0)
    """
    return int(np.ceil(float(tail) * int(n)))


def _cuts(s: np.ndarray, tail: float) -> np.ndarray:
    """:func:`tail_cut` along the last axis of ``s`` (one cut per row)."""
    n = s.shape[-1]
    k = tail_size(n, tail)
    if k <= 0 or n == 0:
        return np.full(s.shape[:-1], np.inf)
    return np.partition(s, n - k, axis=-1)[..., n - k]


def tail_cut(scores: np.ndarray, tail: float) -> float:
    """The score at or above which :func:`tail_flags` flags a finite score under ``tail``: the
    ``ceil(tail * n)``-th highest (``inf`` when that is no record: nothing finite is flagged).

    Examples
    --------
    >>> import numpy as np
    >>> tail_cut(np.array([0.0, 2.0, 1.0, 3.0]), 0.5), tail_cut(np.array([1.0]), 0.0)
    (2.0, inf)
    """
    return float(_cuts(np.asarray(scores, dtype=float).ravel(), tail))


@dataclass(frozen=True, eq=False)
class RecordFlags:
    """Per-record indicators behind a test: which training and which control records it flags.

    The verdict permutes the training/control labels over these flags (a joint Westfall-Young
    max-T across every test that has them) and injects simulated leaks into them to measure the
    detection limit per leak type. Not serialised.

    Parameters
    ----------
    member : ndarray of bool
        One flag per training record (or entity), in the run's canonical order.
    non_member : ndarray of bool
        One flag per control record (or entity).
    responds : mapping of str to ndarray of bool
        Leak type -> one flag per training record: whether a leak of that type of this record
        (e.g. an exact copy of it put into the release) would set its flag (for a type with many
        variants, such as a copy with a cell changed, whether some variant could; the test then
        states its measured share in ``Evidence.visibility``). Decided without the
        labels (from the pooled real records), so the injected detection limit stays honest.
    candidates : mapping of str to ndarray of bool, optional
        Leak type -> which training records such a leak concerns when the type is about a kind of
        record (``"rare"``: records unique on the quasi-identifiers); default every record.
    scores : ndarray of float, optional
        Per record, training records first then control records, higher = more exposed; the flags
        are ``scores > 0`` or, with ``tail``, the pooled tail of that share (:func:`tail_flags`).
    tail : float, optional
        See ``scores``.
    leaks : mapping of str to LeakResponse, optional
        Leak family -> what the run's leak rows of that family do to ``scores``
        (:class:`LeakResponse`, measured by the test against the rows).
    families : mapping of str to str or None, optional
        Every leak family of the run: ``None`` when it applies to the tables, else why not.
    eligible : mapping of str to int, optional
        Applicable leak family -> how many training records it applies to (``rare`` and
        ``linkage`` concern a kind of record): no leak of that family can exceed that many.
    pairs : RowPairs, optional
        The release rows behind the flags (:class:`RowPairs`): what the records export lists and
        what the run drops and re-tests (:mod:`synthguard.run.actions`).

    Examples
    --------
    >>> import numpy as np
    >>> f = RecordFlags(np.array([True, False]), np.array([False, False]),
    ...                 {"exact": np.array([True, True])})
    >>> int(f.member.sum()), float(f.responds["exact"].mean())
    (1, 1.0)
    """

    member: np.ndarray
    non_member: np.ndarray
    responds: Mapping[str, np.ndarray] = field(default_factory=dict)
    candidates: Mapping[str, np.ndarray] = field(default_factory=dict)
    scores: np.ndarray | None = None
    tail: float | None = None
    leaks: Mapping[str, LeakResponse] = field(default_factory=dict)
    families: Mapping[str, str | None] = field(default_factory=dict)
    pairs: RowPairs | None = None
    eligible: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def from_scores(cls, member: np.ndarray, non_member: np.ndarray, *, tail: float | None = None,
                    leaks: Mapping[str, LeakResponse] | None = None,
                    families: Mapping[str, str | None] | None = None,
                    eligible: Mapping[str, int] | None = None) -> RecordFlags:
        """Flags from per-record scores (higher = more exposed; see :func:`tail_flags`), with the
        leak responses measured for them.

        Examples
        --------
        >>> import numpy as np
        >>> f = RecordFlags.from_scores(np.array([1.0, 0.0]), np.array([0.0, 0.0]))
        >>> f.member.tolist(), f.scores.tolist()
        ([True, False], [1.0, 0.0, 0.0, 0.0])
        """
        scores = np.concatenate([np.asarray(member, dtype=float), np.asarray(non_member, dtype=float)])
        flags = tail_flags(scores, tail)
        n1 = np.asarray(member).size
        return cls(flags[:n1], flags[n1:], scores=scores, tail=tail, leaks=dict(leaks or {}),
                   families=dict(families or {}), eligible=dict(eligible or {}))

    def __post_init__(self) -> None:
        object.__setattr__(self, "member", np.asarray(self.member, dtype=bool))
        object.__setattr__(self, "non_member", np.asarray(self.non_member, dtype=bool))
        resp = {str(k): np.asarray(v, dtype=bool) for k, v in self.responds.items()}
        for k, v in resp.items():
            if k not in LEAK_TYPES:
                raise ValueError(f"unknown leak type {k!r}; one of {LEAK_TYPES}")
            if v.shape != self.member.shape:
                raise ValueError(f"responds[{k!r}] needs one flag per training record")
        object.__setattr__(self, "responds", resp)
        cand = {str(k): np.asarray(v, dtype=bool) for k, v in self.candidates.items()}
        for k, v in cand.items():
            if k not in LEAK_TYPES or v.shape != self.member.shape:
                raise ValueError(f"candidates[{k!r}]: a known leak type, one flag per training record")
        object.__setattr__(self, "candidates", cand)
        if self.scores is not None:
            sc = np.asarray(self.scores, dtype=float)
            if sc.shape != (self.member.size + self.non_member.size,):
                raise ValueError("scores: one per training record, then one per control record")
            object.__setattr__(self, "scores", sc)
        object.__setattr__(self, "eligible", {str(k): int(v) for k, v in self.eligible.items()})
        bad = [k for k in (*self.leaks, *self.eligible) if k not in LEAK_FAMILIES]
        if bad:
            raise ValueError(f"unknown leak families {bad}; one of {LEAK_FAMILIES}")
        if self.leaks and self.scores is None:
            raise ValueError("leak responses need the per-record scores they raise")
        if self.pairs is not None:
            n = self.member.size + self.non_member.size
            p = self.pairs
            if (p.record.size and (p.record.min() < 0 or p.record.max() >= n)) or \
                    (p.record_key is not None and p.record_key.size != n):
                raise ValueError("pairs: records are pooled positions (training, then control)")
            if p.chance_crowd is not None and p.chance_crowd.size != self.non_member.size:
                raise ValueError("pairs: chance_crowd needs one entry per control record")


@dataclass(frozen=True)
class Baseline:
    """What a metric's value is compared with.

    Parameters
    ----------
    value : float or None
        The baseline number, in the same unit as the metric's value.
    description : str
        What the baseline is, e.g. ``"control vs original"`` or ``"no baseline: no control given"``.
    ci : tuple of float, optional
        Confidence interval of the baseline, when it is estimated.
    """

    value: float | None
    description: str
    ci: tuple[float, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"value": to_jsonable(self.value), "description": self.description,
                "ci": to_jsonable(self.ci)}


@dataclass(frozen=True)
class Evidence:
    """A privacy metric's test: does the release expose training rows more than unseen real rows?

    Every privacy metric that can compare members (training rows, ``original``) with non-members
    (real rows it never saw, ``control``), or with a null distribution where that is the natural
    baseline, states its evidence here; :mod:`synthguard.run.verdict` alone turns evidence into risk
    levels and one verdict.

    Parameters
    ----------
    statistic : str
        What is measured per record, in plain words, e.g. ``"share of records with an exact copy in
        the release"``.
    member : float
        The statistic on members (training rows).
    n_member : int
        How many members it was measured on (records, or entities when ``unit`` says so).
    non_member : float or None
        The same statistic on non-members (control rows), or the null value.
    n_non_member : int or None
        How many non-members (``None`` for a fixed null value).
    effect : float
        ``member - non_member``: the share of training records exposed beyond chance.
    effect_ci : tuple of float
        The interval of ``effect`` whose ends are its one-sided bounds at ``confidence_level``
        (the two-sided interval at ``2 * confidence_level - 1``: 90 % for the default 0.95), the
        dual of the one-sided test: its upper end is the largest excess the test rules out
        (:attr:`upper`), so a test reads ``low`` exactly when the interval printed beside it stays
        below the materiality (an interval at ``confidence_level`` two-sided would print an upper
        end the verdict does not use).
    p_value : float
        One-sided p-value of ``effect > 0`` (unadjusted).
    test : str
        The test, e.g. ``"Fisher exact, one-sided"``.
    baseline : str
        What the non-member statistic is, e.g. ``"control rows against the same release"``.
    k_member, k_non_member : int, optional
        Counts behind rate statistics.
    detection_limit : float, optional
        Smallest effect this run would detect with 80 % power at unadjusted alpha 0.05.
    drives_verdict : bool
        False for evidence that informs but must not drive the verdict.
    weight : float
        Share of the verdict's false-alarm budget this test gets relative to the others (weighted
        Holm); fixed per metric before any data is seen. Default 1.
    unit : str
        ``"records"`` or ``"entities"``.
    confidence_level : float
        Level of each one-sided bound of ``effect_ci`` (and of the one-sided test's dual).
    note : str, optional
        A caveat about the test.
    p_adjusted : float, optional
        Adjusted p-value (joint max-T over the tests with record flags, weighted Holm across the
        rest), filled in by the verdict.
    level : str, optional
        Calibrated level, filled in by the verdict.
    risk : str, optional
        Which risk the test answers (one of :data:`RISKS`); default from the metric's name
        (the metric's card, :attr:`synthguard.registry.MetricSpec.risk`).
    sees : tuple of str
        Leak types (:data:`LEAK_TYPES`) whose effect this test measures in full, in training
        records: for those it can support ``low``. A test whose effect is capped (a tail share) or
        that cannot move for a leak type leaves it out; it can still raise an alarm.
    visibility : mapping, optional
        Leak type -> share of the training records a leak of that type would move (label-free),
        filled in from ``flags.responds`` by :meth:`from_flags` (a test may state a measured share
        instead). Reported; the verdict's limits come from the leak responses
        (``flags.leaks``), not from it.
    effect_upper : float, optional
        One-sided upper confidence bound of ``effect`` at ``confidence_level`` (the upper end of
        ``effect_ci`` for the constructors below): the largest excess the test rules out on its
        own (:attr:`upper`).
    flags : RecordFlags, optional
        The per-record indicators (not serialised).
    ties : RecordFlags, optional
        The records and release rows behind the finding when the verdict does not test ``flags``
        (a test combined over several attacks, whose per-record flags would be re-tested without
        its adjustment): the records export lists the rows of its :attr:`RecordFlags.pairs` for
        the flagged training records (:mod:`synthguard.run.drops`); the verdict never reads it
        (not serialised).
    """

    statistic: str
    member: float
    n_member: int
    non_member: float | None
    n_non_member: int | None
    effect: float
    effect_ci: tuple[float, float]
    p_value: float
    test: str
    baseline: str
    k_member: int | None = None
    k_non_member: int | None = None
    detection_limit: float | None = None
    drives_verdict: bool = True
    unit: str = "records"
    confidence_level: float = 0.95
    note: str | None = None
    weight: float = 1.0
    p_adjusted: float | None = None
    level: str | None = None
    risk: str | None = None
    sees: tuple[str, ...] = ()
    visibility: Mapping[str, float] | None = None
    effect_upper: float | None = None
    flags: RecordFlags | None = field(default=None, compare=False, repr=False)
    ties: RecordFlags | None = field(default=None, compare=False, repr=False)

    @property
    def upper(self) -> float:
        """The one-sided upper bound of the effect (``effect_upper``; the upper end of ``effect_ci``
        when the test states none, which the constructors make the same bound)."""
        if self.effect_upper is not None and not math.isnan(float(self.effect_upper)):
            return float(self.effect_upper)
        hi = self.effect_ci[1] if self.effect_ci else float("nan")
        return float("nan") if hi is None else float(hi)

    def to_dict(self) -> dict[str, Any]:
        return {k: to_jsonable(getattr(self, k)) for k in self.__dataclass_fields__
                if k not in ("flags", "ties")}

    @classmethod
    def from_flags(cls, statistic: str, flags: RecordFlags, *, sees: tuple[str, ...] = (),
                   risk: str | None = None, baseline: str = "control rows against the same release",
                   confidence_level: float = 0.95, drives_verdict: bool = True,
                   unit: str = "records", note: str | None = None, weight: float = 1.0) -> Evidence:
        """Evidence from per-record flags over *every* training and *every* control record.

        The effect is the share of training records flagged minus the share of control records
        flagged (Newcombe interval, Fisher's exact test); the flags travel with the evidence so the
        verdict can test all such tests jointly (label permutation) and inject leaks into them.

        Examples
        --------
        >>> import numpy as np
        >>> flags = RecordFlags(np.r_[np.ones(5, bool), np.zeros(95, bool)], np.zeros(100, bool),
        ...                     {"exact": np.ones(100, bool)})
        >>> ev = Evidence.from_flags("share with an exact copy", flags, sees=("exact",),
        ...                          risk="presence")
        >>> round(ev.effect, 2), ev.visibility["exact"]
        (0.05, 1.0)
        """
        ev = cls.from_counts(statistic, int(flags.member.sum()), int(flags.member.size),
                             int(flags.non_member.sum()), int(flags.non_member.size),
                             baseline=baseline, confidence_level=confidence_level,
                             drives_verdict=drives_verdict, unit=unit, note=note, weight=weight)
        bad = [t for t in sees if t not in LEAK_TYPES]
        if bad:
            raise ValueError(f"unknown leak types {bad}; one of {LEAK_TYPES}")
        vis = {t: (float(flags.responds[t].mean()) if t in flags.responds and flags.member.size
                   else 1.0) for t in sees}
        return replace(ev, risk=risk, sees=tuple(sees), visibility=vis, flags=flags)

    @classmethod
    def from_counts(cls, statistic: str, k_member: int, n_member: int, k_non_member: int,
                    n_non_member: int, *, baseline: str = "control rows against the same release",
                    confidence_level: float = 0.95, drives_verdict: bool = True,
                    unit: str = "records", note: str | None = None, weight: float = 1.0) -> Evidence:
        """Evidence from two counts: ``k_member`` of ``n_member`` members and ``k_non_member`` of
        ``n_non_member`` non-members show the statistic (e.g. have an exact copy in the release).

        The effect is the difference of the two rates with Newcombe's interval; the test is
        Fisher's exact test, one-sided (members more exposed); the detection limit is the
        smallest difference a one-sided two-proportion test at alpha 0.05 finds with 80 % power
        at these sizes and the non-member rate.
        """
        from ..stats import detection_limit, difference_ci, fisher_greater

        if n_member <= 0 or n_non_member <= 0:
            nan = float("nan")
            return cls(statistic, nan, int(n_member), nan, int(n_non_member), nan, (nan, nan), nan,
                       "Fisher exact, one-sided", baseline, int(k_member), int(k_non_member), None,
                       drives_verdict, unit, confidence_level,
                       note or "no rows on one side: nothing to test")
        # the interval of the two one-sided bounds: its upper end is the bound the verdict uses
        diff = difference_ci(k_member, n_member, k_non_member, n_non_member,
                             one_sided_level(confidence_level))
        p0 = k_non_member / n_non_member
        return cls(statistic, k_member / n_member, int(n_member), p0, int(n_non_member),
                   float(diff["value"]), (float(diff["ci"][0]), float(diff["ci"][1])),
                   fisher_greater(k_member, n_member, k_non_member, n_non_member),
                   "Fisher exact, one-sided", baseline, int(k_member), int(k_non_member),
                   detection_limit(n_member, n_non_member, p0), drives_verdict, unit,
                   confidence_level, note, weight, effect_upper=float(diff["ci"][1]))

    @classmethod
    def from_binomial(cls, statistic: str, k_member: int, n_member: int, null_rate: float, *,
                      baseline: str, confidence_level: float = 0.95, drives_verdict: bool = True,
                      unit: str = "records", note: str | None = None, weight: float = 1.0) -> Evidence:
        """Evidence from one count against a known null rate (exact binomial test, one-sided;
        Clopper-Pearson interval shifted by the null rate)."""
        from ..stats import binomial_greater, clopper_pearson, detection_limit

        if n_member <= 0:
            nan = float("nan")
            return cls(statistic, nan, 0, null_rate, None, nan, (nan, nan), nan,
                       "exact binomial, one-sided", baseline, int(k_member), None, None,
                       drives_verdict, unit, confidence_level, note or "no rows: nothing to test")
        lo, hi = clopper_pearson(int(k_member), int(n_member), one_sided_level(confidence_level))
        upper = hi  # the interval's ends are the one-sided bounds
        rate = k_member / n_member
        return cls(statistic, rate, int(n_member), float(null_rate), None, rate - null_rate,
                   (lo - null_rate, hi - null_rate),
                   binomial_greater(int(k_member), int(n_member), float(null_rate)),
                   "exact binomial, one-sided", baseline, int(k_member), None,
                   detection_limit(n_member, None, float(null_rate)), drives_verdict, unit,
                   confidence_level, note, weight, effect_upper=float(upper - null_rate))


def one_sided_level(confidence_level: float) -> float:
    """The two-sided level whose upper end is the one-sided bound at ``confidence_level``:
    ``2 * confidence_level - 1`` (0.90 for a 95 % one-sided bound).

    Examples
    --------
    >>> round(one_sided_level(0.95), 10)
    0.9
    """
    return 2.0 * float(confidence_level) - 1.0


#: What a :class:`Chart` draws: step lines of shares per bin, ROC curves (overlaid with every other
#: ROC chart of the same title), horizontal bars, grouped bars of shares per bin (one bar per series),
#: a lower-triangle heatmap of pair values.
CHART_KINDS = ("histogram", "roc", "bars", "overlay", "heatmap")


def _fmt3(x: float) -> str:
    """``x`` with three significant digits, as the reports write numbers (``0.734``, ``1.23e-04``)."""
    f = float(x)
    if math.isnan(f):
        return "nan"
    if f != 0 and (abs(f) < 1e-3 or abs(f) >= 1e5):
        return f"{f:.2e}"
    return f"{f:.3g}"


@dataclass(frozen=True)
class Chart:
    """Typed chart data a metric attaches to its result; the HTML report draws it by ``kind``.

    Not serialised (the numbers behind a chart stay in ``details``, the metric's JSON contract).
    ``data`` is normalised to plain JSON values on creation (arrays become lists, NaN ``None``),
    so charts compare equal by value and pickle.

    Parameters
    ----------
    kind : str
        One of :data:`CHART_KINDS`: ``"histogram"`` (``data`` = ``{"edges": [...], series: counts,
        ...}``, counts per bin per series, drawn as shares), ``"roc"`` (``data`` = ``[[fpr, tpr],
        ...]``) or ``"bars"`` (``data`` = ``[(label, value), ...]``).
    title : str
        The chart's title after the metric's name (the report writes ``"<metric>: <title>"``); for
        ``"roc"`` the title of the overlay every ROC chart with this title is drawn into.
    axis : str
        The label of the value axis (the x axis of histograms and bars).
    data : object
        The numbers, as described under ``kind``.
    label : str, optional
        ``"roc"``: the curve's legend after the metric's name, e.g. ``"AUC 0.734"``.
    max : float, optional
        ``"bars"``: the value at the axis' end (default: the largest value); ``"heatmap"``: the
        value of the saturated colour.
    colour : str, optional
        ``"bars"``: the bars' colour (CSS colour); default the report's blue.

    Examples
    --------
    >>> c = Chart.roc([[0.0, 0.0], [0.2, 0.6], [1.0, 1.0]], auc=0.7342)
    >>> c.kind, c.label, c.data[1]
    ('roc', 'AUC 0.734', [0.2, 0.6])
    >>> Chart("bars", "distortion by column", "distance", [("age", 0.25)], max=1.0).data
    [['age', 0.25]]
    """

    kind: str
    title: str
    axis: str
    data: Any
    label: str | None = None
    max: float | None = None
    colour: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in CHART_KINDS:
            raise ValueError(f"unknown chart kind {self.kind!r}; one of {CHART_KINDS}")
        object.__setattr__(self, "data", to_jsonable(self.data))

    @classmethod
    def histogram(cls, histogram: Mapping[str, Any], axis: str) -> Chart:
        """A histogram of ``{"edges": ..., series: counts}`` titled by its series, e.g.
        ``"synthetic vs control rows"`` (synthetic, control, original first, then the others).

        Examples
        --------
        >>> Chart.histogram({"edges": [0, 1, 2], "original": [1, 2], "synthetic": [3, 0]},
        ...                 "distance").title
        'synthetic vs original rows'
        """
        series = [k for k in ("synthetic", "control", "original") if k in histogram]
        series += [k for k in histogram if k not in series and k != "edges"]
        return cls("histogram", f"{' vs '.join(series)} rows", axis, histogram)

    @classmethod
    def roc(cls, points: Any, auc: float | None = None,
            title: str = "ROC curves of the attacks") -> Chart:
        """A ROC curve ``[[fpr, tpr], ...]`` with its AUC in the legend (none when ``auc`` is
        missing or not finite)."""
        ok = auc is not None and math.isfinite(float(auc))
        return cls("roc", title, "false positive rate", points,
                   label=f"AUC {_fmt3(float(auc))}" if ok else None)


@dataclass(frozen=True)
class Section:
    """A table (with charts above it) the report draws for a metric: typed presentation data the
    metric fills where it builds its result, as it does :class:`Chart`.

    Not serialised: every number in a section is also in the metric's ``details`` (its JSON
    contract). The HTML draws each section under the metric's family, in order: the title, the
    note, the charts, then the table (folded when ``folded``). Cells are plain values, normalised
    to JSON values on creation (floats are written with three decimals, strings as they are).

    Parameters
    ----------
    title : str
        What the section shows, e.g. ``"Pairs (1770; the 100 worst shown)"``.
    headers : tuple of str
        The table's column headers (empty: no table).
    rows : tuple of tuple
        The table's rows, one value per header.
    note : str
        One or two sentences under the title: how to read the section.
    charts : tuple of Chart
        Charts drawn above the table, each with its own title.
    folded : bool
        Draw the table folded away (one click to open).

    Examples
    --------
    >>> s = Section("accuracy by level", ("level", "synthetic"), [("univariate", 0.91)])
    >>> s.rows
    (('univariate', 0.91),)
    """

    title: str
    headers: tuple[str, ...] = ()
    rows: tuple[tuple[Any, ...], ...] = ()
    note: str = ""
    charts: tuple[Chart, ...] = ()
    folded: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "headers", tuple(str(h) for h in self.headers))
        rows = tuple(tuple(to_jsonable(list(r))) for r in self.rows)
        if any(len(r) != len(self.headers) for r in rows):
            raise ValueError(f"section {self.title!r}: every row needs one value per header")
        object.__setattr__(self, "rows", rows)
        object.__setattr__(self, "charts", tuple(self.charts))
        if any(not isinstance(c, Chart) for c in self.charts):
            raise TypeError(f"section {self.title!r}: charts must be Chart objects")


@dataclass(frozen=True)
class Headline:
    """What a fidelity or utility number means, for the report's summary cards and the dossier:
    the release's score beside the score real data reaches, and one sentence reading them.

    Not serialised (``value`` and ``ceiling`` are numbers of the metric's JSON). The share of the
    ceiling is ``value / ceiling`` when the ceiling is positive.

    Parameters
    ----------
    value : float or None
        The release's score, on the scale of ``ceiling`` (e.g. accuracy at the control's size).
    ceiling : float or None
        What real data reaches on the same measure (``None``: no ceiling measured).
    measure : str
        What the score is, in a few words, e.g. ``"accuracy"`` or ``"macro F1 on held-out rows"``.
    reference : str
        What reaches the ceiling, e.g. ``"real held-out rows"``.
    reading : str
        One sentence with the numbers, as the metric writes it in its JSON.
    direction : str
        How to read ``value`` (``"higher is better"``).

    Examples
    --------
    >>> h = Headline(0.8, 0.9, "accuracy", "real held-out rows", "0.8 of 0.9")
    >>> round(h.share, 3)
    0.889
    """

    value: float | None
    ceiling: float | None
    measure: str
    reference: str
    reading: str
    direction: str = "higher is better"

    @property
    def share(self) -> float | None:
        """``value / ceiling`` (``None`` without a positive ceiling)."""
        if self.value is None or self.ceiling is None:
            return None
        v, c = float(self.value), float(self.ceiling)
        if not (math.isfinite(v) and math.isfinite(c)) or c <= 0:
            return None
        return v / c

    @property
    def above_ceiling(self) -> bool:
        """Whether a score measured against real held-out rows sits more than half the way from
        their ceiling to a verbatim copy's 1.0 (:func:`beyond_ceiling`; fresh real samples of the
        shared tables reached at most 0.29 of that way, a rule measured, not a test); never for another
        reference (a utility score above the model trained on the training rows says nothing of
        copies)."""
        return (self.reference == REAL_HOLDOUT and self.share is not None
                and beyond_ceiling(float(self.value), float(self.ceiling)))


#: The reference of a fidelity score's ceiling measured on real held-out rows (the control): the
#: only ceiling a copy of the training rows can sit above (:attr:`Headline.above_ceiling`).
REAL_HOLDOUT = "real held-out rows"

#: How far above its ceiling a fidelity score must be, as a share of the way from the ceiling to a
#: verbatim copy's 1.0, before it reads as closer to the training rows than fresh real data is:
#: half. Fresh real samples (147-600 rows of four shared tables, 20 splits each) reached at most
#: 0.14 of that way on ``accuracy`` and 0.29 on ``quality_report`` (docs/fidelity-utility.md).
ABOVE_CEILING_GAP = 0.5


def beyond_ceiling(value: float, ceiling: float) -> bool:
    """Whether a fidelity score (1 = the training rows' own) is above what real held-out rows
    reach by more than :data:`ABOVE_CEILING_GAP` of the way from that ceiling to 1.0.

    Examples
    --------
    >>> beyond_ceiling(0.756, 0.743), beyond_ceiling(0.95, 0.743)
    (False, True)
    """
    if not (math.isfinite(value) and math.isfinite(ceiling)) or ceiling >= 1:
        return False
    return (value - ceiling) > ABOVE_CEILING_GAP * (1.0 - ceiling)


@dataclass(frozen=True)
class MetricResult:
    """The outcome of one metric.

    Parameters
    ----------
    name, family : str
        Registry name and family (``"privacy"``, ``"anonymeter"``, ``"disclosure"``, ...).
    value : float or None
        The headline number.
    direction : str
        How to read ``value``: ``"lower is safer"``, ``"higher is safer"``, ``"higher is better"``...
    baseline : Baseline or None
        What ``value`` is compared with; ``Baseline(None, "no baseline: ...")`` says why there is none.
    ci : tuple of float or None
        Confidence interval of ``value``.
    n : int or None
        Sample size behind ``value``.
    risk_level : str
        ``"low"``, ``"medium"``, ``"high"``, ``"not meaningful"`` (attack no better than its baseline)
        or ``"unknown"``.
    warning : str or None
        A caveat the reader must see.
    details : mapping
        Further named numbers (the metric's JSON contract); flattened into ``to_dict()``.
    records : list of dict or None
        Optional per-record table (e.g. the most exposed original rows).
    evidence : Evidence or None
        The members-vs-non-members test behind a calibrated risk level (privacy metrics).
    reference_level : str or None
        The level the metric's fixed reference cut-offs give (SynEval / anonymeter / SDMetrics
        style), kept beside the calibrated ``risk_level``; filled in by the verdict.
    charts : tuple of Chart
        What the HTML report draws for this result (histograms, ROC curves, bars); not part of
        ``to_dict()`` (the numbers stay in ``details``).
    sections : tuple of Section
        Tables (with their charts) the HTML report draws for this result, in order; not part of
        ``to_dict()``.
    headline : Headline or None
        The release's score against what real data reaches, for the summary cards and the
        dossier (fidelity and utility metrics); not part of ``to_dict()``.
    """

    name: str
    family: str
    value: float | None
    direction: str
    baseline: Baseline | None = None
    ci: tuple[float, float] | None = None
    n: int | None = None
    risk_level: str = "unknown"
    warning: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    records: list[dict[str, Any]] | None = None
    evidence: Evidence | None = None
    reference_level: str | None = None
    charts: tuple[Chart, ...] = ()
    sections: tuple[Section, ...] = ()
    headline: Headline | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.charts, tuple):
            object.__setattr__(self, "charts", tuple(self.charts))
        if any(not isinstance(c, Chart) for c in self.charts):
            raise TypeError(f"charts of metric {self.name!r} must be Chart objects")
        if not isinstance(self.sections, tuple):
            object.__setattr__(self, "sections", tuple(self.sections))
        if any(not isinstance(s, Section) for s in self.sections):
            raise TypeError(f"sections of metric {self.name!r} must be Section objects")
        if self.headline is not None and not isinstance(self.headline, Headline):
            raise TypeError(f"headline of metric {self.name!r} must be a Headline")

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form: the headline fields, then every entry of ``details`` at top level."""
        out: dict[str, Any] = {
            "name": self.name,
            "family": self.family,
            "value": to_jsonable(self.value),
            "direction": self.direction,
            "baseline": self.baseline.to_dict() if self.baseline is not None else None,
            "ci": to_jsonable(self.ci),
            "n": to_jsonable(self.n),
            "risk_level": self.risk_level,
            "warning": self.warning,
            "reference_level": self.reference_level,
            "evidence": self.evidence.to_dict() if self.evidence is not None else None,
        }
        for key, val in self.details.items():
            if key in out:
                raise KeyError(f"details key {key!r} of metric {self.name!r} shadows a headline field")
            out[key] = to_jsonable(val)
        if self.records is not None:
            out["records"] = to_jsonable(self.records)
        return out

    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]


def to_jsonable(obj: Any) -> Any:
    """Convert numpy scalars/arrays, tuples, NaN and infinities into plain JSON values.

    NaN and infinities become ``None`` (JSON has no NaN); tuples become lists.
    """
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        return f if math.isfinite(f) else None
    if isinstance(obj, np.ndarray):
        return [to_jsonable(x) for x in obj.tolist()]
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [to_jsonable(x) for x in obj]
    if hasattr(obj, "to_dict") and callable(obj.to_dict):
        return to_jsonable(obj.to_dict())
    if hasattr(obj, "isoformat"):
        return obj.isoformat()
    try:
        import pandas as pd

        if obj is pd.NaT or (not isinstance(obj, (list, dict)) and pd.isna(obj)):
            return None
    except (TypeError, ValueError):
        pass
    return str(obj)


def level_from_thresholds(value: float | None, thresholds: Mapping[str, float], direction: str) -> str:
    """Map ``value`` to ``"low"``/``"medium"``/``"high"`` risk given ``{"medium": a, "high": b}``.

    For ``"lower is safer"`` metrics the level rises with the value (value >= high -> "high");
    for ``"higher is safer"`` metrics it falls (value <= high -> "high"). Missing thresholds are skipped.
    A value of ``None``/NaN gives ``"unknown"``.
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "unknown"
    high = thresholds.get("high")
    medium = thresholds.get("medium")
    if direction.startswith("lower"):
        if high is not None and value >= high:
            return "high"
        if medium is not None and value >= medium:
            return "medium"
        return "low"
    if high is not None and value <= high:
        return "high"
    if medium is not None and value <= medium:
        return "medium"
    return "low"
