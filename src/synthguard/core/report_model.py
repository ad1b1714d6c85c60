"""The typed report model: frozen dataclasses for what a report holds, read by every renderer.

The verdict (:mod:`synthguard.run.verdict`) builds its rows as these types: one :class:`RiskRow` per
risk (presence, singling out, linkability, inference), one :class:`TestRow` per verdict-driving test,
one :class:`LeakLimit` per leak type and the headline :class:`HeadlineLimit`; a re-test of a coarsened
column is a :class:`Coarsening`, the re-test after dropping the listed release rows a
:class:`DropRetest`. The report (:class:`~synthguard.report.Report`) adds the inputs
(:class:`InputInfo`), the metric entries (:class:`MetricEntry`) and the records (:class:`RecordRow`)
in a :class:`ReportModel`. Each type serialises to the report's JSON with ``to_dict()`` (keys in the
JSON contract's order; an optional key that a run did not produce is left out, not written as
``null``) and reads it back with ``from_dict()``: ``T.from_dict(x).to_dict() == x``.

Rows also answer ``row["key"]`` and ``row.get("key")`` (read-only), so code written against the JSON
dicts reads the typed rows unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from .results import MetricResult, to_jsonable

__all__ = ["ABSENT", "Coarsening", "DropRetest", "HeadlineLimit", "InputInfo", "LeakLimit", "MetricEntry", "PartialSight", "RecordRow",
           "ReportModel", "RiskRow", "TestRow"]


class _Absent:
    """The value of an optional key a run did not produce (left out of ``to_dict()``)."""

    _instance: _Absent | None = None

    def __new__(cls) -> _Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "ABSENT"


#: An optional key that is not there (distinct from ``None``, which is written as ``null``).
ABSENT: Any = _Absent()


class _Row(Mapping[str, Any]):
    """Shared behaviour of the model's rows: JSON round trip and read-only mapping access."""

    #: field name -> (container, row type) for nested typed values: ``"list"`` (a tuple of rows),
    #: ``"map"`` (a mapping of key to row) or ``"row"`` (one row)
    _nested: ClassVar[Mapping[str, tuple[str, type]]] = {}

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (plain values; optional keys left out when absent)."""
        out: dict[str, Any] = {}
        for f in fields(self):  # type: ignore[arg-type]
            v = getattr(self, f.name)
            if v is ABSENT:
                continue
            kind = self._nested.get(f.name)
            if kind is not None and v is not None:
                if kind[0] == "list":
                    v = [x.to_dict() if isinstance(x, _Row) else x for x in v]
                elif kind[0] == "row":
                    v = v.to_dict() if isinstance(v, _Row) else v
                else:
                    v = {k: (x.to_dict() if isinstance(x, _Row) else x) for k, x in v.items()}
            out[f.name] = to_jsonable(v)
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Any:
        """The row of a JSON dict (the inverse of :meth:`to_dict`); unknown keys are an error."""
        if isinstance(d, cls):
            return d
        names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
        unknown = [k for k in d if k not in names]
        if unknown:
            raise ValueError(f"{cls.__name__}: unknown key(s) {unknown}; known: {names}")
        kw: dict[str, Any] = {}
        for k, v in d.items():
            kind = cls._nested.get(k)
            if kind is not None and v is not None:
                typ = kind[1]
                v = (tuple(typ.from_dict(x) for x in v) if kind[0] == "list"  # type: ignore[attr-defined]
                     else typ.from_dict(v) if kind[0] == "row"  # type: ignore[attr-defined]
                     else {kk: typ.from_dict(x) for kk, x in v.items()})  # type: ignore[attr-defined]
            elif isinstance(v, list):
                v = tuple(v)
            kw[k] = v
        return cls(**kw)

    def replace(self, **changes: Any) -> Any:
        """A copy with ``changes`` (``dataclasses.replace``)."""
        import dataclasses

        return dataclasses.replace(self, **changes)  # type: ignore[type-var]

    # read-only mapping access (the JSON dict's keys)
    def __getitem__(self, key: str) -> Any:
        names = {f.name for f in fields(self)}  # type: ignore[arg-type]
        if key not in names or getattr(self, key) is ABSENT:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return (f.name for f in fields(self) if getattr(self, f.name) is not ABSENT)  # type: ignore[arg-type]

    def __len__(self) -> int:
        return sum(1 for _ in self)

    __hash__ = None  # type: ignore[assignment]  # rows hold mutable-looking mappings


@dataclass(frozen=True, eq=True)
class LeakLimit(_Row):
    """The detection limit of one leak type: the smallest leak the run reads ``high`` with
    ``power`` (``value``: a share of the training records, ``k`` of them; ``None``: not detected,
    or no test of the run responds to this leak). ``eligible``: the training records the leak type
    applies to; ``ceiling``: ``True`` when ``value`` is their share, below the materiality (no
    leak of this type can reach it), instead of a measured limit.

    Examples
    --------
    >>> LeakLimit(value=0.02, k=8, tests=("exact_matches",), power=0.8, text="...").to_dict()["k"]
    8
    """

    value: float | None
    k: int | None
    tests: tuple[str, ...]
    power: float
    candidates: int | None = ABSENT
    eligible: int = ABSENT
    ceiling: bool = ABSENT
    text: str = ""


@dataclass(frozen=True, eq=True)
class PartialSight(_Row):
    """What an alarming risk's excess is consistent with, for the leak family its tests see least:
    ``metric``, the risk's test that sees ``family`` best, flags ``visible`` of that family's leak
    rows (each alone flagging its own record), so the upper end ``upper`` of its interval is
    consistent with a leak of up to ``consistent`` = ``upper / visible`` of the training records
    (at most 1). The risk reads ``high`` when that reaches the materiality, ``medium`` only below it.

    Examples
    --------
    >>> PartialSight("near2", "near_copies_2", 0.55, 0.049, 0.089).to_dict()["consistent"]
    0.089
    """

    family: str
    metric: str
    visible: float
    upper: float
    consistent: float


@dataclass(frozen=True, eq=True)
class HeadlineLimit(_Row):
    """The run's stated detection limit (the largest measured limit over the leak types it
    answers for; a type bounded by its ceiling is named in ``text``, not counted), or, for older
    verdicts, the best-powered test's."""

    value: float | None
    metric: str | None
    leak: str = ABSENT
    power: float = ABSENT
    alpha: float = ABSENT
    unit: str = ABSENT
    by_type: Mapping[str, LeakLimit] = ABSENT
    text: str = ""

    _nested: ClassVar[Mapping[str, tuple[str, type]]] = {"by_type": ("map", LeakLimit)}


@dataclass(frozen=True, eq=True)
class TestRow(_Row):
    """One verdict-driving test: training (member) against control (non-member) statistic, the
    excess with its interval, raw and adjusted p-values, and its level."""

    metric: str
    family: str
    level: str | None
    statistic: str
    member: float | None
    non_member: float | None
    n_member: int | None
    n_non_member: int | None
    effect: float | None
    effect_ci: tuple[float | None, float | None] | None
    p_value: float | None
    p_adjusted: float | None
    test: str
    baseline: str
    detection_limit: float | None
    unit: str
    risk: str = ABSENT
    same_as: str | None = ABSENT
    also: tuple[str, ...] = ABSENT
    contained_in: str | None = ABSENT


@dataclass(frozen=True, eq=True)
class Coarsening(_Row):
    """A driving column coarsened and the risk re-tested (:mod:`synthguard.run.actions`)."""

    column: str
    sdtype: str
    coarsening: str
    level_before: str
    level_after: str
    effect_before: float | None
    effect_after: float | None
    effect_ci_after: tuple[float | None, float | None] | None
    metric_after: str | None
    text: str
    not_rerun: tuple[str, ...] = ABSENT
    #: release rows dropped before the column was coarsened (the drop-and-retest's rows): the
    #: levels are then those of the release without them
    rows_dropped_first: int = ABSENT


@dataclass(frozen=True, eq=True)
class DropRetest(_Row):
    """The release rows the records export lists to drop, dropped and every test run again
    (:func:`synthguard.run.actions.drop_retest`): what the risk reads after, in as many rounds as
    it took (rows an alarming test still names after a round are dropped in the next), and what
    still alarms with why.

    ``remaining`` names the tests of this risk that still read ``high`` or ``medium`` after the
    last round; ``why`` says, per such test, why dropping rows did not settle it (it ties no rows
    to its findings, it names rows to review rather than drop, or the rounds ran out).
    ``typed_otherwise`` (absent when none): the columns the release without the rows is typed
    otherwise than the run's tables, the last round's ``typed_otherwise`` (each ``{"column",
    "sdtype_before", "sdtype_after", "reason"}``): the level after is not a test on the same
    columns, and ``text`` says so.

    Examples
    --------
    >>> d = DropRetest(rows_dropped=360, rounds=1, level_before="high", level_after="low",
    ...                effect_before=0.24, effect_after=0.0, effect_ci_after=(-0.01, 0.01),
    ...                metric_after="near_copies", remaining=(), why={}, text="...")
    >>> DropRetest.from_dict(d.to_dict()) == d
    True
    """

    rows_dropped: int
    rounds: int
    level_before: str
    level_after: str
    effect_before: float | None
    effect_after: float | None
    effect_ci_after: tuple[float | None, float | None] | None
    metric_after: str | None
    remaining: tuple[str, ...]
    why: Mapping[str, str]
    text: str
    typed_otherwise: tuple[Mapping[str, Any], ...] = ABSENT


@dataclass(frozen=True, eq=True)
class RiskRow(_Row):
    """One risk a privacy officer answers: its level, the test behind it, what it rules out, and
    what would settle it.

    ``bound`` is the largest excess (a share of the training records) the run rules out for this
    risk: the largest of its tests' one-sided upper bounds and of its leak families' detection
    limits (``bound_by`` names which); ``None`` when a family it answers for is not assessed
    (``unassessed``). ``not_applicable`` names the families that do not apply to the tables, with
    why. The risk reads ``low`` only when ``bound`` is below the materiality and nothing is
    unassessed. ``not_run`` names the tests of this risk that failed or could not run here (on a
    cluster, without an optional package), with why (absent when none). ``partial`` (an
    alarming risk's, absent otherwise): the largest leak its excess is consistent with, from the
    test that sees each family best (:class:`PartialSight`): ``high`` when it reaches the
    materiality although no test does."""

    risk: str
    title: str
    criterion: str
    tests: tuple[str, ...]
    detection_limits: Mapping[str, LeakLimit]
    effect: float | None
    effect_ci: tuple[float | None, float | None] | None
    metric: str | None
    settle: str | None
    member: float | None
    non_member: float | None
    unresolved: tuple[str, ...]
    level: str
    summary: str
    bound: float | None = ABSENT
    bound_by: str | None = ABSENT
    unassessed: tuple[str, ...] = ABSENT
    not_applicable: Mapping[str, str] = ABSENT
    coarsening: tuple[Coarsening, ...] = ABSENT
    drop_retest: DropRetest = ABSENT
    not_run: tuple[str, ...] = ABSENT
    partial: PartialSight = ABSENT

    _nested: ClassVar[Mapping[str, tuple[str, type]]] = {
        "detection_limits": ("map", LeakLimit), "coarsening": ("list", Coarsening),
        "drop_retest": ("row", DropRetest), "partial": ("row", PartialSight)}




@dataclass(frozen=True, eq=True)
class InputInfo(_Row):
    """One input table as the report states it: its size and content fingerprint (and, on a
    cluster, how many partitions it was read in)."""

    rows: int | None = ABSENT
    columns: int | None = ABSENT
    sha256: str | None = ABSENT
    source: str | None = ABSENT
    partitions: int | None = ABSENT


@dataclass(frozen=True, eq=True)
class RecordRow(_Row):
    """One row of the records export (``--records-out``, ``Report.records()``).

    The run's own rows (every release row behind a high or medium finding,
    :mod:`synthguard.run.drops`) also carry their ``rank`` (1 = removes the most excess), the leak
    ``family`` their cells show (``exact``, ``near1``, ``near2``, ``linkage``, ``neighbourhood``,
    ``key``), every test that ties them (``tests``) and the drop-and-retest ``round`` that found
    them."""

    metric: str
    risk: str
    action: str
    release_row: int | None
    training_row: int | None
    reason: str
    rank: int | None = ABSENT
    family: str | None = ABSENT
    tests: str | None = ABSENT
    round: int | None = ABSENT


@dataclass(frozen=True)
class MetricEntry:
    """One metric of a report: how it ran (status, reason, parameters, time) and its result."""

    name: str
    status: str
    reason: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    seconds: float | None = None
    result: MetricResult | None = None
    cached: bool = False
    unit: str | None = None
    metric: str | None = None  # a named run: the registered metric it ran

    def to_dict(self) -> dict[str, Any]:
        """The report's JSON entry of this metric."""
        out: dict[str, Any] = {"status": self.status, "reason": self.reason,
                               "params": to_jsonable(dict(self.params)),
                               "seconds": to_jsonable(self.seconds),
                               "result": self.result.to_dict() if self.result is not None else None}
        if self.cached:
            out["cached"] = True
        if self.unit:
            out["unit"] = self.unit
        if self.metric:
            out["metric"] = self.metric
        return out


@dataclass(frozen=True)
class ReportModel:
    """Everything a report holds, typed: the header (version, seed, inputs, inferred metadata,
    warnings, schema, configuration, actions), the verdict and the metric entries.

    ``header`` keeps the header's JSON form; :attr:`inputs` and :attr:`warnings` read it typed.
    """

    header: Mapping[str, Any]
    verdict: Any
    metrics: tuple[MetricEntry, ...]

    @property
    def inputs(self) -> dict[str, InputInfo]:
        """Role -> the input table's size and fingerprint."""
        return {role: InputInfo.from_dict(info) for role, info in
                dict(self.header.get("inputs") or {}).items()}

    @property
    def warnings(self) -> tuple[str, ...]:
        return tuple(self.header.get("warnings") or ())

    @property
    def records(self) -> tuple[RecordRow, ...]:
        """The run's own rows of the records export: the release rows behind its high or medium
        findings that name rows, ranked, each with its training row (the header's ``records``;
        empty when the run named none). ``Report.records()`` adds the rows a whole-release test
        lists itself as examples and, apart, the context rows."""
        return tuple(RecordRow.from_dict(r) for r in self.header.get("records") or ())

    @property
    def drop_retest(self) -> Mapping[str, Any] | None:
        """What dropping the listed rows and re-testing cost and found, round by round (the
        header's ``actions.drop_retest``; ``None`` when the run did not re-test)."""
        return (self.header.get("actions") or {}).get("drop_retest")

    @property
    def risks(self) -> tuple[RiskRow, ...]:
        return tuple(getattr(self.verdict, "risks", ()) or ())

    @property
    def tests(self) -> tuple[TestRow, ...]:
        return tuple(getattr(self.verdict, "tests", ()) or ())

    def entry(self, name: str) -> MetricEntry:
        for e in self.metrics:
            if e.name == name:
                return e
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        """The report's JSON contract."""
        out = to_jsonable(dict(self.header))
        out["verdict"] = self.verdict.to_dict()
        out["metrics"] = {e.name: e.to_dict() for e in self.metrics}
        return out
