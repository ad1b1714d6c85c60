"""The metric card: what a metric *is*, declared once by :func:`register` beside its function.

A card (:class:`MetricSpec`) holds the metric's name, family, inputs, parameters and thresholds, and
everything the verdict, the report, the dossier, the presets and the cluster need to know about it:
the risk it answers, what its attacker knows, the leak types it sees, the presets it belongs to and
its position in a report, whether it runs on the Dask backend, what its per-record output means, the
charts it draws and a paragraph that explains it. No other module keeps a table keyed by a metric's
name: they ask the card (:func:`synthguard.registry.get_metric`, or the manifest's
:func:`~synthguard.registry.metric_info` without importing the metric).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .params import Param, suggest

if TYPE_CHECKING:  # pragma: no cover
    from ..core.results import MetricResult

__all__ = ["BACKENDS", "CARD_RISKS", "LEVEL_FROM_THRESHOLDS", "MetricSpec", "NEEDS", "ORIGINAL_ROWS_NEEDED",
           "PRESET_NAMES", "RecordsCard", "finalise", "register", "unregister"]

NEEDS = ("original", "synthetic", "control", "generator")
#: The ``risk_level`` a metric returns for :func:`finalise` to set from its declared thresholds; a
#: metric sets a level itself only where the thresholds do not decide it (``"unknown"`` stays unknown).
LEVEL_FROM_THRESHOLDS = "from thresholds"
#: Why a metric is skipped when only the original's statistics were given.
ORIGINAL_ROWS_NEEDED = "the original rows (not available with --original-stats)"
#: What a card's ``risk`` may say: one of the four risks of the verdict
#: (:data:`synthguard.core.results.RISKS`), or ``"informative"`` for a privacy number that never
#: answers a risk; ``None`` for metrics that do not speak about people (fidelity, utility...).
CARD_RISKS = ("presence", "singling_out", "linkability", "inference", "informative")
#: Where a metric runs: ``"local"`` (one process) or ``"any"`` (also on the Dask backend, with the
#: same numbers).
BACKENDS = ("local", "any")
#: The presets a card may join (:mod:`synthguard.run.config`); a plugin may name its own.
PRESET_NAMES = ("quick", "privacy", "full")
_LEAK_TYPES = ("exact", "near", "rare", "neighbourhood", "person", "text")  # core.results.LEAK_TYPES


@dataclass(frozen=True)
class RecordsCard:
    """What a metric's per-record output (``MetricResult.records``) means.

    Parameters
    ----------
    row : {"original", "synthetic", "control"}
        The table a record's plain ``row`` field points into.
    reason : callable, optional
        ``reason(record) -> str``: one plain phrase saying why the record is listed; default: the
        generic phrase built from the record's fields (:func:`synthguard.report.records.reason_of`).
    verbatim : bool or str
        Whether a listed release row is a verbatim copy of a training row (a row to drop when the
        test alarms): ``True`` for every record, a field name for records whose field is 0 (a
        distance of 0), ``False`` otherwise.
    complete : callable, optional
        ``complete(original, synthetic, metadata) -> list of records`` in the schema of
        :data:`synthguard.report.records.COLUMNS`: *every* such row, where the metric lists only its
        top rows (the rows-to-drop export).
    count : callable, optional
        ``count(result_dict) -> (k, n) or None``: how many of the ``n`` release rows are verbatim
        training rows, read from the metric's JSON result.
    meaning : str
        One sentence for the documentation and ``synthguard metrics``: what a record is.

    Examples
    --------
    >>> RecordsCard(meaning="a training row with a copy").to_dict()["row"]
    'original'
    """

    row: str = "original"
    reason: Callable[[Mapping[str, Any]], str] | None = None
    verbatim: bool | str = False
    complete: Callable[..., list[dict[str, Any]]] | None = None
    count: Callable[[Mapping[str, Any]], tuple[int, int] | None] | None = None
    meaning: str = ""

    def __post_init__(self) -> None:
        if self.row not in ("original", "synthetic", "control"):
            raise ValueError(f"RecordsCard.row must be original, synthetic or control, got {self.row!r}")

    def to_dict(self) -> dict[str, Any]:
        """The card's JSON form (the manifest): the callables are named, not serialised."""
        return {"row": self.row, "verbatim": self.verbatim, "meaning": self.meaning,
                "complete": self.complete is not None, "count": self.count is not None}


@dataclass(frozen=True)
class MetricSpec:
    """A metric's card (see :func:`register` for every field)."""

    name: str
    family: str
    func: Callable[..., MetricResult]
    needs: tuple[str, ...]
    params: tuple[Param, ...]
    direction: str
    thresholds: Mapping[str, float]
    description: str
    aliases: tuple[str, ...] = ()
    default: bool = True
    optional_needs: tuple[str, ...] = ()
    from_stats: bool = False
    weight: float = 1.0
    risk: str | None = None
    knowledge: str = ""
    sees: tuple[str, ...] = ()
    presets: tuple[str, ...] = ()
    order: int = 1000
    backend: str = "local"
    records: RecordsCard | None = None
    charts: tuple[str, ...] = ()
    explainer: str = ""
    contained_in: str | None = None
    warmup: bool = False
    entity_only: bool = False
    also: tuple[str, ...] = ()
    per_column: str | None = None
    queries: str = "records"
    anonymised_only: bool = False

    def param_defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def check_given(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """``given`` with every declared parameter validated (the direct-call path: names the
        metric does not declare are left to the function's signature)."""
        known = {p.name: p for p in self.params}
        return {k: known[k].validate(v, self.name) if k in known else v for k, v in given.items()}

    def resolve_params(self, given: Mapping[str, Any] | None) -> dict[str, Any]:
        """Defaults overlaid with ``given``, each validated; unknown names are errors."""
        from ..errors import ConfigError

        given = dict(given or {})
        known = {p.name: p for p in self.params}
        unknown = [k for k in given if k not in known]
        if unknown:
            hint = suggest(unknown[0], known)
            raise ConfigError(f"metric {self.name!r} has no parameter {unknown[0]!r}{hint}; "
                              f"its parameters are: {', '.join(known) or '(none)'}")
        out = self.param_defaults()
        for k, v in given.items():
            out[k] = known[k].validate(v, self.name)
        return out

    @property
    def privacy(self) -> bool:
        """Whether the metric speaks about people (its card names a risk or ``informative``)."""
        return self.risk is not None

    def card_dict(self) -> dict[str, Any]:
        """The card's fields beyond the classic declaration, as JSON (the manifest,
        ``synthguard metrics --json``)."""
        return {"weight": self.weight, "risk": self.risk, "knowledge": self.knowledge,
                "sees": list(self.sees), "presets": list(self.presets), "order": self.order,
                "backend": self.backend,
                "records": self.records.to_dict() if self.records is not None else None,
                "charts": list(self.charts), "explainer": self.explainer,
                "contained_in": self.contained_in, "warmup": self.warmup,
                "entity_only": self.entity_only, "also": list(self.also),
                "per_column": self.per_column, "queries": self.queries,
                "anonymised_only": self.anonymised_only}

    def to_dict(self) -> dict[str, Any]:
        from ..core.results import to_jsonable

        return {"name": self.name, "family": self.family, "needs": list(self.needs),
                "optional_needs": list(self.optional_needs), "direction": self.direction,
                "thresholds": dict(self.thresholds), "description": self.description,
                "aliases": list(self.aliases), "default": self.default, "from_stats": self.from_stats,
                "params": {p.name: {"default": to_jsonable(p.default), "doc": p.doc} for p in self.params},
                **self.card_dict()}


#: name -> card of every registered metric (the package's and plugins'); alias -> name
_REGISTRY: dict[str, MetricSpec] = {}
_ALIASES: dict[str, str] = {}


def _check_card(name: str, risk: str | None, sees: Sequence[str], presets: Sequence[str],
                backend: str, contained_in: str | None) -> None:
    if risk is not None and risk not in CARD_RISKS:
        raise ValueError(f"metric {name!r}: risk must be one of {list(CARD_RISKS)} or None, got {risk!r}")
    bad = [t for t in sees if t not in _LEAK_TYPES]
    if bad:
        raise ValueError(f"metric {name!r}: unknown leak types {bad}; one of {list(_LEAK_TYPES)}")
    if backend not in BACKENDS:
        raise ValueError(f"metric {name!r}: backend must be one of {list(BACKENDS)}, got {backend!r}")
    if any(not isinstance(p, str) or not p for p in presets):
        raise ValueError(f"metric {name!r}: presets must be names, got {list(presets)!r}")
    if contained_in == name:
        raise ValueError(f"metric {name!r} cannot be contained in itself")


def register(name: str, *, family: str, direction: str, needs: Sequence[str] = ("original", "synthetic"),
             params: Sequence[Param] = (), thresholds: Mapping[str, float] | None = None,
             description: str = "", aliases: Sequence[str] = (), default: bool = True,
             optional_needs: Sequence[str] = (), from_stats: bool = False,
             weight: float = 1.0, risk: str | None = None, knowledge: str = "",
             sees: Sequence[str] = (), presets: Sequence[str] = (), order: int = 1000,
             backend: str = "local", records: RecordsCard | None = None,
             charts: Sequence[str] = (), explainer: str = "", contained_in: str | None = None,
             warmup: bool = False, entity_only: bool = False, also: Sequence[str] = (),
             per_column: str | None = None, queries: str = "records",
             anonymised_only: bool = False,
             ) -> Callable[[Callable[..., MetricResult]], Callable[..., MetricResult]]:
    """Decorator that registers a metric function under ``name``, with its card.

    Parameters
    ----------
    name : str
        Public name (the JSON and CLI contract).
    family : str
        Group shown in reports (``"privacy"``, ``"anonymeter"``, ``"disclosure"``, ``"fidelity"``...).
    direction : str
        ``"lower is safer"``, ``"higher is safer"``, ``"higher is better"`` or ``"lower is better"``.
    needs : sequence of str
        Required inputs among ``original``, ``synthetic``, ``control``, ``generator``.
    params : sequence of Param
        Parameters with defaults and constraints (``seed`` is not one: it comes from the run).
    thresholds : mapping, optional
        Default reference cut-offs, e.g. ``{"medium": 0.3, "high": 0.5}``.
    description : str
        One line saying what the value means (shown in reports).
    aliases : sequence of str
        Other accepted names (e.g. ``membership_inference`` for ``distinguishability``).
    default : bool
        Whether the metric runs when the user names none.
    optional_needs : sequence of str
        Inputs used when present (e.g. ``control`` for a baseline).
    from_stats : bool
        Whether the metric also runs from the original's statistics (``synthguard profile``,
        ``--original-stats``) instead of its rows.
    weight : float
        The test's share of the verdict's false-alarm budget relative to the other tests
        (weighted Holm / weighted max-T); set on the result's ``Evidence`` by :func:`finalise`.
    risk : str, optional
        The risk the metric's test answers (:data:`CARD_RISKS`): ``"presence"``,
        ``"singling_out"``, ``"linkability"``, ``"inference"``, or ``"informative"`` for a privacy
        number that never answers one; ``None`` (default) for metrics that are not about people.
    knowledge : str
        What the attacker is assumed to know and do, in one sentence (the dossier's threat model).
    sees : sequence of str
        The leak types (:data:`synthguard.core.results.LEAK_TYPES`) the metric's test can see; its
        evidence never claims more.
    presets : sequence of str
        The presets the metric belongs to (``"quick"``, ``"privacy"``, ``"full"``, or a plugin's).
    order : int
        Position in presets and reports (lower first; ties by name).
    backend : {"local", "any"}
        ``"any"``: the metric asks only the :class:`~synthguard.engine.backend.Backend` for its
        counts, searches and samples, so it runs unchanged on the Dask backend; ``"local"``: one
        process only (skipped with the reason in a distributed run).
    records : RecordsCard, optional
        What the metric's per-record output means (rows to drop or review).
    charts : sequence of str
        Kinds of :class:`~synthguard.core.results.Chart` the metric draws.
    explainer : str
        A paragraph for the report: what the metric measures, against what, and how to read it.
    contained_in : str, optional
        Another metric that runs this metric's attack and tests it jointly: when both run, this
        one is counted once, as that one.
    warmup : bool
        Whether ``synthguard warmup`` runs it to compile its kernels.
    entity_only : bool
        A metric of entity-level runs only (needs an entity key), added to them automatically.
    also : sequence of str
        Further risks the test counts under besides ``risk`` (GDPR WP216: a training record exposed
        as a verbatim or identifying near copy is singled out, linkable and its attributes inferred
        as well as present).
    per_column : str, optional
        The parameter which, left unset, makes the metric run once per column (``inference``'s
        ``secret`` without declared sensitive columns): the run plan counts its cost per column.
    queries : {"records", "release"}
        Whose rows the test asks of: ``"records"`` (default), real records against the whole
        release; ``"release"``, release rows (a share or a distribution over them, which a seeded
        sample of them estimates), so that a sampled run asks a sample of the release of it
        (:meth:`~synthguard.registry.Context.release_query_rows`).
    anonymised_only : bool
        A test whose evidence exists only for an anonymised release (``release_type``: each
        release row a real person; k-anonymity, l-diversity): skipped in such a run, the verdict
        names it under its risk, as a test that could not run.

    Returns
    -------
    callable
        The decorator. The function it returns validates the declared parameters it is given
        (the same ``ConfigError`` as a run) before calling the metric, so a direct call
        ``metric(ctx, top_n=0)`` is checked like ``evaluate(..., metrics={"metric": {"top_n": 0}})``,
        and runs on the metric's own random stream and thresholds (:meth:`Context.for_metric`),
        with record row numbers pointing at the input rows, so it draws the same numbers as a run; ``spec.func`` (what the executor calls, with
        parameters it resolved) is the undecorated function.

    Examples
    --------
    >>> from synthguard.registry import Param, register
    >>> @register("example_share", family="privacy", direction="lower is safer",
    ...           params=[Param("top_n", 5, "rows listed", "positive int")], risk="presence")
    ... def example_share(ctx, *, top_n=5):
    ...     return top_n
    >>> example_share(None, top_n=0)
    Traceback (most recent call last):
    ...
    synthguard.errors.ConfigError: metric 'example_share': parameter 'top_n' must be an integer >= 1, got 0
    >>> _ = _REGISTRY.pop("example_share")
    """
    bad = [n for n in needs if n not in NEEDS]
    if bad:
        raise ValueError(f"unknown needs {bad}")
    if not (isinstance(weight, (int, float)) and weight > 0):
        raise ValueError(f"metric {name!r}: weight must be a positive number, got {weight!r}")
    _check_card(name, risk, sees, presets, backend, contained_in)
    if per_column is not None and per_column not in {p.name for p in params}:
        raise ValueError(f"metric {name!r}: per_column names no parameter ({per_column!r})")
    if queries not in ("records", "release"):
        raise ValueError(f"metric {name!r}: queries must be 'records' or 'release', got {queries!r}")
    bad_also = [r for r in also if r not in CARD_RISKS[:4] or r == risk]
    if bad_also:
        raise ValueError(f"metric {name!r}: also must name other risks among {list(CARD_RISKS[:4])}, "
                         f"got {bad_also}")

    def deco(func: Callable[..., MetricResult]) -> Callable[..., MetricResult]:
        if name in _REGISTRY and _REGISTRY[name].func is not func:
            raise ValueError(f"metric {name!r} registered twice")
        spec = MetricSpec(name, family, func, tuple(needs), tuple(params), direction,
                          dict(thresholds or {}), description, tuple(aliases), default,
                          tuple(optional_needs), from_stats, float(weight), risk, knowledge,
                          tuple(sees), tuple(presets), int(order), backend, records, tuple(charts),
                          explainer or description, contained_in, bool(warmup), bool(entity_only),
                          tuple(also), per_column, queries, bool(anonymised_only))
        _REGISTRY[name] = spec
        for a in aliases:
            _ALIASES[a] = name
        func.spec = spec  # type: ignore[attr-defined]

        @functools.wraps(func)
        def checked(ctx: Any, *args: Any, **given: Any) -> MetricResult:
            given = spec.check_given(given)
            if getattr(ctx, "metric", name) != name and hasattr(ctx, "for_metric"):
                # a direct call: the metric's own random stream and thresholds (its defaults
                # overlaid with those of a fresh context), as the executor gives them
                ctx = ctx.for_metric(spec, None if ctx.metric else ctx.thresholds)
            res = finalise(spec, ctx, func(ctx, *args, **given))
            if getattr(res, "records", None) and getattr(ctx, "tables", None) is not None:
                from ..data.tables import input_row_records

                # row numbers from the tables' canonical order back to the input rows, as a run's
                row = spec.records.row if spec.records is not None else "original"
                res = replace(res, records=input_row_records(res.records, ctx.tables, row))
            return res

        checked.spec = spec  # type: ignore[attr-defined]
        return checked

    return deco


def unregister(name: str) -> MetricSpec | None:
    """Remove the metric ``name`` and its aliases from the registry (a metric registered for a
    while: a test's stand-in, a plugin unloaded); the removed spec, ``None`` when ``name`` was not
    registered.

    Examples
    --------
    >>> @register("example_gone", family="privacy", direction="lower is safer", aliases=("gone",))
    ... def example_gone(ctx):
    ...     return None
    >>> unregister("example_gone").name, "example_gone" in _REGISTRY, "gone" in _ALIASES
    ('example_gone', False, False)
    >>> unregister("example_gone") is None
    True
    """
    spec = _REGISTRY.pop(name, None)
    if spec is not None:
        for a in spec.aliases:
            if _ALIASES.get(a) == name:
                del _ALIASES[a]
    return spec


def finalise(spec: MetricSpec, ctx: Any, result: Any) -> Any:
    """What the registration declares, applied to a metric's result (the executor and a direct call).

    * ``risk_level``: a metric that returns :data:`LEVEL_FROM_THRESHOLDS` gets the level of its
      ``value`` against the declared thresholds (the context's, i.e. the defaults overlaid with the
      user's; the registered defaults when a direct call's context has none), read in the declared
      ``direction`` (:func:`~synthguard.core.results.level_from_thresholds`); ``"unknown"`` without
      declared thresholds. A metric sets the level itself only where the thresholds do not decide
      it (not meaningful, not significant, nothing to measure...).
    * ``evidence.weight``: the declared ``weight`` (the test's share of the verdict's false-alarm
      budget).

    Anything that is not a :class:`~synthguard.core.results.MetricResult` is returned unchanged.

    Examples
    --------
    >>> from synthguard.core.results import MetricResult
    >>> spec = MetricSpec("x", "privacy", lambda ctx: None, (), (), "lower is safer",
    ...                   {"medium": 0.1, "high": 0.5}, "")
    >>> finalise(spec, None, MetricResult("x", "privacy", 0.2, "lower is safer",
    ...                                   risk_level=LEVEL_FROM_THRESHOLDS)).risk_level
    'medium'
    >>> finalise(spec, None, MetricResult("x", "privacy", 0.2, "lower is safer",
    ...                                   risk_level="not meaningful")).risk_level
    'not meaningful'
    """
    from ..core.results import MetricResult, level_from_thresholds

    if not isinstance(result, MetricResult):
        return result
    changes: dict[str, Any] = {}
    if result.risk_level == LEVEL_FROM_THRESHOLDS:
        thresholds = getattr(ctx, "thresholds", None) or spec.thresholds
        changes["risk_level"] = (level_from_thresholds(result.value, thresholds, spec.direction)
                                 if spec.thresholds else "unknown")
    ev = result.evidence
    if ev is not None and ev.weight != spec.weight:
        changes["evidence"] = replace(ev, weight=spec.weight)
    return replace(result, **changes) if changes else result
