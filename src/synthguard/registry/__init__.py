"""The metric registry: every metric declares its name, family, needs, parameters, direction and
default risk thresholds, and is looked up here by name (or alias).

A metric is a plain function ``func(ctx: Context, **params) -> MetricResult`` decorated with
:func:`register`. The decorators are the single source of truth. So that listing the metrics, checking
a configuration or starting the CLI does not import every implementation (and sklearn, scipy, numba...),
their declarations are also written to a generated manifest, :mod:`synthguard.registry._manifest`, that records
each metric's module; a metric's module is imported only when the metric is looked up with
:func:`get_metric` (to run it or to validate its parameters). Regenerate the manifest after adding or
changing a metric::

    python -m synthguard.registry --write-manifest

(``tests/unit/registry/test_manifest.py`` fails, naming that command, whenever it is out of date.) Metrics that are
not in the manifest (registered at run time by user code, or added without regenerating it) are still
found: an unknown name triggers the full discovery of :mod:`synthguard.metrics` before it is an error.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, MetricError

if TYPE_CHECKING:  # pragma: no cover - imported lazily at run time (cold start)
    import numpy as np

    from ..core.results import MetricResult
    from ..data.encoding import EncodedView
    from ..data.tables import Tables
    from ..engine.backend import Backend

NEEDS = ("original", "synthetic", "control", "generator")
#: The ``risk_level`` a metric returns for :func:`finalise` to set from its declared thresholds; a
#: metric sets a level itself only where the thresholds do not decide it (``"unknown"`` stays unknown).
LEVEL_FROM_THRESHOLDS = "from thresholds"
#: Why a metric is skipped when only the original's statistics were given.
ORIGINAL_ROWS_NEEDED = "the original rows (not available with --original-stats)"


@dataclass(frozen=True)
class Interval:
    """A declared numeric range of a parameter (as scikit-learn's ``Interval`` constraint).

    ``low``/``high`` are the bounds (``None`` = unbounded); ``closed`` says which bounds belong to
    the range: ``"both"`` (default), ``"left"``, ``"right"`` or ``"neither"``.

    Examples
    --------
    >>> Interval(0, 1, closed="neither").describe()
    'strictly between 0 and 1'
    >>> Interval(1).describe()
    '>= 1'
    """

    low: float | None = None
    high: float | None = None
    closed: str = "both"

    def __post_init__(self) -> None:
        if self.closed not in ("both", "left", "right", "neither"):
            raise ValueError(f"closed must be both, left, right or neither, got {self.closed!r}")

    def contains(self, value: Any) -> bool:
        low_in = self.closed in ("both", "left")
        high_in = self.closed in ("both", "right")
        if self.low is not None and not (value >= self.low if low_in else value > self.low):
            return False
        return self.high is None or bool(value <= self.high if high_in else value < self.high)

    def describe(self) -> str:
        low_in = self.closed in ("both", "left")
        high_in = self.closed in ("both", "right")
        if self.low is None and self.high is None:
            return "any value"
        if self.high is None:
            return f"{'>=' if low_in else '>'} {self.low}"
        if self.low is None:
            return f"{'<=' if high_in else '<'} {self.high}"
        if self.closed == "neither":
            return f"strictly between {self.low} and {self.high}"
        return f"in {'[' if low_in else '('}{self.low}, {self.high}{']' if high_in else ')'}"


#: Named constraints, as scikit-learn's string constraints: ``Param(..., "positive int")`` declares
#: the type and the range at once.
CONSTRAINTS: dict[str, tuple[type | tuple[type, ...], Interval]] = {
    "positive int": (int, Interval(1)),
    "non-negative int": (int, Interval(0)),
    "int": (int, Interval()),
    "probability": (float, Interval(0, 1, closed="neither")),  # confidence levels, shares
    "fraction": (float, Interval(0, 1)),
    "non-negative float": (float, Interval(0)),
    "float": (float, Interval()),
}
_NUMERIC = (int, float)


def _is_number(value: Any) -> bool:
    import numbers

    return isinstance(value, numbers.Real) and not isinstance(value, bool)


@dataclass(frozen=True)
class Param:
    """One metric parameter: name, default, documentation and its declared constraints.

    The constraints are declared once, here, and checked by the registry on every path (the runner,
    the facades and a direct call of the registered function): ``kind`` is a type or tuple of types,
    or a named constraint of :data:`CONSTRAINTS` (``"positive int"``, ``"probability"``...), which
    sets both the type and the interval; ``interval`` bounds numbers (:class:`Interval`);
    ``choices`` restricts the values; ``check`` is an optional callable returning an error text for
    a bad value (or ``None``), for what a type and a range cannot say (a list of distinct column
    names...). ``nullable`` says whether ``None`` (``null`` in a configuration file) is accepted;
    by default it is when the default is ``None``.

    Examples
    --------
    >>> Param("top_n", 20, "rows listed", "positive int").validate(3, "m")
    3
    >>> Param("top_n", 20, "rows listed", "positive int").validate(0, "m")
    Traceback (most recent call last):
    ...
    synthguard.errors.ConfigError: metric 'm': parameter 'top_n' must be an integer >= 1, got 0
    """

    name: str
    default: Any = None
    doc: str = ""
    kind: type | tuple[type, ...] | str | None = None
    choices: tuple[Any, ...] | None = None
    check: Callable[[Any], str | None] | None = None
    interval: Interval | None = None
    nullable: bool | None = None

    def __post_init__(self) -> None:
        if self.nullable is None:
            object.__setattr__(self, "nullable", self.default is None)
        if isinstance(self.kind, str):
            if self.kind not in CONSTRAINTS:
                raise ValueError(f"parameter {self.name!r}: unknown constraint {self.kind!r}; "
                                 f"use a type or one of {list(CONSTRAINTS)}")
            kind, interval = CONSTRAINTS[self.kind]
            if self.interval is not None:
                raise ValueError(f"parameter {self.name!r}: {self.kind!r} already sets the interval")
            object.__setattr__(self, "kind", kind)
            object.__setattr__(self, "interval", interval)

    @property
    def kinds(self) -> tuple[type, ...]:
        """The declared types (empty when undeclared)."""
        if self.kind is None:
            return ()
        return self.kind if isinstance(self.kind, tuple) else (self.kind,)  # type: ignore[return-value]

    def constraint_text(self) -> str:
        """The declared constraint in words, e.g. ``"an integer >= 1"`` (empty when undeclared)."""
        parts = []
        kinds = self.kinds
        if kinds:
            words = {int: "an integer", float: "a number", bool: "true or false", str: "a string",
                     list: "a list", tuple: "a list", dict: "a mapping"}
            named = list(dict.fromkeys(words.get(k, k.__name__) for k in kinds))
            if set(kinds) >= {int, float}:
                named = ["a number"] + [n for n in named if n not in ("an integer", "a number")]
            parts.append(" or ".join(named))
        if self.interval is not None and self.interval.describe() != "any value":
            parts.append(self.interval.describe())
        text = " ".join(parts)
        if self.choices is not None:
            text = f"one of {list(self.choices)}"
        if self.nullable and self.default is not None and text:
            text += " (or null)"
        return text

    def validate(self, value: Any, metric: str) -> Any:
        """``value`` checked against the declared constraints (and coerced: an integral float
        to an int parameter, an int to a float parameter, a list to a tuple parameter...);
        ``ConfigError`` naming the metric, the parameter and what is allowed otherwise."""
        where = f"metric {metric!r}: parameter {self.name!r}"
        if value is None:
            if self.nullable:
                return None
            raise ConfigError(f"{where} must be {self.constraint_text() or 'set'}, got None")
        import numpy as np

        kinds = self.kinds
        if kinds:
            if float in kinds and isinstance(value, (int, np.integer)) and not isinstance(value, bool):
                value = float(value)
            if int in kinds and isinstance(value, np.integer) and not isinstance(value, bool):
                value = int(value)
            if int in kinds and isinstance(value, float) and value.is_integer() and float not in kinds:
                value = int(value)
            if tuple in kinds and isinstance(value, list):
                value = tuple(value)
            if list in kinds and isinstance(value, tuple):
                value = list(value)
            if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
                names = " or ".join(k.__name__ for k in kinds)
                raise ConfigError(f"{where} must be {names}, got {value!r}")
        if self.choices is not None and value not in self.choices:
            raise ConfigError(f"{where} must be one of {list(self.choices)}, got {value!r}")
        if self.interval is not None and _is_number(value) and not self.interval.contains(value):
            raise ConfigError(f"{where} must be {self.constraint_text()}, got {value!r}")
        if self.check is not None:
            problem = self.check(value)
            if problem:
                raise ConfigError(f"{where}: {problem}")
        return value

    @property
    def declared(self) -> bool:
        """Whether the parameter declares a constraint: a type, and for a number a range or
        choices (what ``tests/unit/registry`` requires of every registered parameter)."""
        if not self.kinds:
            return False
        if set(self.kinds) & set(_NUMERIC) and bool not in self.kinds:
            return self.interval is not None or self.choices is not None
        return True


@dataclass(frozen=True)
class MetricSpec:
    """Declaration of a metric (see :func:`register`)."""

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

    def param_defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def check_given(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """``given`` with every declared parameter validated (the direct-call path: names the
        metric does not declare are left to the function's signature)."""
        known = {p.name: p for p in self.params}
        return {k: known[k].validate(v, self.name) if k in known else v for k, v in given.items()}

    def resolve_params(self, given: Mapping[str, Any] | None) -> dict[str, Any]:
        """Defaults overlaid with ``given``, each validated; unknown names are errors."""
        given = dict(given or {})
        known = {p.name: p for p in self.params}
        unknown = [k for k in given if k not in known]
        if unknown:
            hint = _suggest(unknown[0], known)
            raise ConfigError(f"metric {self.name!r} has no parameter {unknown[0]!r}{hint}; "
                              f"its parameters are: {', '.join(known) or '(none)'}")
        out = self.param_defaults()
        for k, v in given.items():
            out[k] = known[k].validate(v, self.name)
        return out

    def to_dict(self) -> dict[str, Any]:
        from ..core.results import to_jsonable

        return {"name": self.name, "family": self.family, "needs": list(self.needs),
                "optional_needs": list(self.optional_needs), "direction": self.direction,
                "thresholds": dict(self.thresholds), "description": self.description,
                "aliases": list(self.aliases), "default": self.default, "from_stats": self.from_stats,
                "params": {p.name: {"default": to_jsonable(p.default), "doc": p.doc} for p in self.params}}


@dataclass(frozen=True)
class Context:
    """What a metric function receives besides its parameters.

    Attributes
    ----------
    tables : Tables
        Validated inputs.
    encoded : EncodedView
        The shared encoded view (neighbour engine input).
    seed : int
        The run's seed; use :meth:`rng` for randomness.
    thresholds : mapping
        Risk thresholds for this metric (defaults overlaid with the user's).
    metric : str
        The metric's name (seeds the random stream, so metrics do not share one).
    backend : str
        Neighbour-engine backend.
    generator : object, optional
        A generator (``fit``/``generate``) for metrics that need one.
    release_type : str
        ``"synthetic"`` (default) or ``"anonymised"`` (each release row is a real person).
    entities : EntityRun, optional
        Entity-level inputs (:mod:`synthguard.data.entities`) when an entity key was given; ``tables`` is
        then the entity table for privacy metrics and the event table for the others.
    run_metrics : tuple of str
        The names of the metrics of the current run (empty for a direct call); see
        :meth:`for_run`.
    data_backend : Backend, optional
        Where counts, neighbours and row samples are computed (:attr:`data`); ``None`` = one process
        on ``tables`` / ``encoded``; a distributed run passes its Dask backend.
    executor : callable, optional
        How a composite metric runs its parts (:meth:`submetric`): set by
        :func:`synthguard.run.executor.execute`, the one caller of metric functions.
    """

    tables: Tables
    encoded: EncodedView
    seed: int = 0
    thresholds: Mapping[str, float] = field(default_factory=dict)
    metric: str = ""
    backend: str = "auto"
    generator: Any = None
    release_type: str = "synthetic"
    entities: Any = None
    data_backend: Backend | None = None
    executor: Callable[..., MetricResult] | None = None
    # the run's one memo, shared by the contexts ``replace`` derives from this one; only through
    # :meth:`memo` (not the on-disk result cache of ``evaluate(cache=...)``)
    _memo: Memo = field(default_factory=lambda: Memo(), repr=False, compare=False)

    @property
    def run_metrics(self) -> tuple[str, ...]:
        """The names of the metrics of the current run (set by :meth:`for_run`; empty when a metric
        is called directly), so a metric can pick the form of a shared intermediate result that
        the others will reuse."""
        return self._memo.run_metrics

    def for_run(self, names: Sequence[str]) -> Context:
        """This context with a fresh memo for a run of the metrics ``names`` (the runner)."""
        return replace(self, _memo=Memo(names))

    def release_memos(self, pending: set[str]) -> None:
        """Drop memoised entries whose declared users (``memo(..., users=...)``) are no longer
        ``pending`` in this run (called by the runner as metrics finish)."""
        self._memo.release(pending)

    @property
    def data(self) -> Backend:
        """The :class:`~synthguard.engine.backend.Backend` metrics count and search through: the
        given ``data_backend``, else one process on this context's tables and encoded view."""
        if self.data_backend is not None:
            return self.data_backend
        from ..engine.backend import LocalBackend

        return LocalBackend(self.tables, self.encoded, self.backend, self.memo)

    def rng(self, *labels: int | str) -> np.random.Generator:
        """A generator seeded by the run's seed, this metric's name and ``labels``."""
        from ..stats import make_rng

        return make_rng(self.seed, self.metric, *labels)

    def memo(self, key: Any, compute: Callable[[], Any], users: Sequence[str] = ()) -> Any:
        """The run's memoised entry ``key``, computing it once with ``compute()`` if absent.

        Metrics running in threads (``jobs > 1``) that need the same intermediate result (a neighbour
        search, row ids) wait for one computation instead of repeating it: a lock per key.
        ``users``: the metrics that read this entry; once every one of them in the run has finished,
        the runner drops it (:meth:`release_memos`) so large intermediates do not live to the end.

        Examples
        --------
        >>> import pandas as pd
        >>> ctx = Context.from_frames(pd.DataFrame({"a": [1, 2]}), pd.DataFrame({"a": [2, 3]}))
        >>> ctx.memo("answer", lambda: 42), ctx.memo("answer", lambda: 0)
        (42, 42)
        """
        return self._memo.get(key, compute, users)

    def submetric(self, spec: MetricSpec, params: Mapping[str, Any],
                  thresholds: Mapping[str, float] | None = None) -> MetricResult:
        """Run the metric ``spec`` as a part of this one (a composite metric, e.g. ``anonymeter``)
        through the executor; raises :class:`MetricError` when it is skipped, its exception when it
        fails. ``thresholds`` override the part's defaults."""
        if self.executor is None:
            raise MetricError(f"{self.metric or 'this metric'} runs other metrics: run it through "
                              "synthguard.evaluate or synthguard.run.executor.run_metric")
        return self.executor(spec, self, params, thresholds)

    def for_metric(self, spec: MetricSpec, thresholds: Mapping[str, float] | None = None) -> Context:
        th = dict(spec.thresholds)
        th.update(thresholds or {})
        return replace(self, metric=spec.name, thresholds=th)

    @classmethod
    def from_frames(cls, original: Any, synthetic: Any, control: Any = None, metadata: Any = None, *,
                    seed: int = 0, backend: str = "auto", strict_control: bool = True) -> Context:
        """Build a context straight from frames or paths (for calling metric functions directly)."""
        from ..data.encoding import EncodedView
        from ..data.tables import prepare_tables

        tables = prepare_tables(original, synthetic, control, metadata, strict_control=strict_control)
        return cls(tables=tables, encoded=EncodedView(tables), seed=seed, backend=backend)


class Memo:
    """The storage of a run's one memo (:meth:`Context.memo`): intermediate results shared by the
    metrics of one run, computed once under a lock per key and dropped once their declared users
    have finished. Not a result cache (that is :mod:`synthguard.engine.cache`)."""

    __slots__ = ("_entries", "_guard", "_locks", "_users", "run_metrics")

    def __init__(self, run_metrics: Sequence[str] = ()) -> None:
        self._entries: dict[Any, Any] = {}
        self._locks: dict[Any, threading.Lock] = {}
        self._users: dict[Any, frozenset[str]] = {}
        self._guard = threading.Lock()
        self.run_metrics: tuple[str, ...] = tuple(run_metrics)

    def get(self, key: Any, compute: Callable[[], Any], users: Sequence[str] = ()) -> Any:
        """``key``'s entry, computed once with ``compute()`` (see :meth:`Context.memo`)."""
        entries = self._entries
        if users:
            with self._guard:
                self._users[key] = frozenset(users)
        if key in entries:
            return entries[key]
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if key not in entries:
                entries[key] = compute()
        return entries[key]

    def release(self, pending: set[str]) -> None:
        """Drop the entries none of whose declared users is ``pending``."""
        with self._guard:
            for key, who in list(self._users.items()):
                if not who & pending:
                    self._entries.pop(key, None)
                    del self._users[key]


_REGISTRY: dict[str, MetricSpec] = {}
_ALIASES: dict[str, str] = {}
_DISCOVERED = False


def register(name: str, *, family: str, direction: str, needs: Sequence[str] = ("original", "synthetic"),
             params: Sequence[Param] = (), thresholds: Mapping[str, float] | None = None,
             description: str = "", aliases: Sequence[str] = (), default: bool = True,
             optional_needs: Sequence[str] = (), from_stats: bool = False,
             weight: float = 1.0) -> Callable[[Callable[..., MetricResult]], Callable[..., MetricResult]]:
    """Decorator that registers a metric function under ``name``.

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
        Parameters with defaults (``seed`` is not one: it comes from the run).
    thresholds : mapping, optional
        Default risk thresholds, e.g. ``{"medium": 0.3, "high": 0.5}``.
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
        The metric's share of the verdict's false-alarm budget relative to the other tests
        (weighted Holm / weighted max-T); set on the result's ``Evidence`` by the registry.

    Returns
    -------
    callable
        The decorator. The function it returns validates the declared parameters it is given
        (the same ``ConfigError`` as a run) before calling the metric, so a direct call
        ``metric(ctx, top_n=0)`` is checked like ``evaluate(..., metrics={"metric": {"top_n": 0}})``;
        ``spec.func`` (what the runner calls, with parameters it resolved) is the undecorated function.

    Examples
    --------
    >>> from synthguard.registry import Param, register
    >>> @register("example_share", family="privacy", direction="lower is safer",
    ...           params=[Param("top_n", 5, "rows listed", "positive int")])
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

    def deco(func: Callable[..., MetricResult]) -> Callable[..., MetricResult]:
        if name in _REGISTRY and _REGISTRY[name].func is not func:
            raise ValueError(f"metric {name!r} registered twice")
        spec = MetricSpec(name, family, func, tuple(needs), tuple(params), direction,
                          dict(thresholds or {}), description, tuple(aliases), default,
                          tuple(optional_needs), from_stats, float(weight))
        _REGISTRY[name] = spec
        for a in aliases:
            _ALIASES[a] = name
        func.spec = spec  # type: ignore[attr-defined]

        @functools.wraps(func)
        def checked(ctx: Any, *args: Any, **given: Any) -> MetricResult:
            return finalise(spec, ctx, func(ctx, *args, **spec.check_given(given)))

        checked.spec = spec  # type: ignore[attr-defined]
        return checked

    return deco


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


_DISCOVER_LOCK = threading.RLock()


def _discover() -> None:
    """Import every public module under :mod:`synthguard.metrics` (each registers its metrics)."""
    global _DISCOVERED
    if _DISCOVERED:
        return
    with _DISCOVER_LOCK:
        if _DISCOVERED:
            return
        from .. import metrics as pkg

        for mod in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            if mod.name.rsplit(".", 1)[-1].startswith("_"):
                continue
            importlib.import_module(mod.name)
        _DISCOVERED = True


# ------------------------------------------------------------------------------------ the manifest
@dataclass(frozen=True)
class ParamInfo:
    """A parameter as the manifest records it: name, default (JSON form) and documentation."""

    name: str
    default: Any
    doc: str


@dataclass(frozen=True)
class MetricInfo:
    """What the manifest knows of a metric without importing it (the fields of :class:`MetricSpec`
    except the function and the parameter checks, plus ``module``, where the metric lives)."""

    name: str
    family: str
    module: str
    needs: tuple[str, ...]
    optional_needs: tuple[str, ...]
    params: tuple[ParamInfo, ...]
    direction: str
    thresholds: Mapping[str, float]
    description: str
    aliases: tuple[str, ...]
    default: bool
    from_stats: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The same dictionary as :meth:`MetricSpec.to_dict` (``synthguard metrics --json``)."""
        return {"name": self.name, "family": self.family, "needs": list(self.needs),
                "optional_needs": list(self.optional_needs), "direction": self.direction,
                "thresholds": dict(self.thresholds), "description": self.description,
                "aliases": list(self.aliases), "default": self.default, "from_stats": self.from_stats,
                "params": {p.name: {"default": p.default, "doc": p.doc} for p in self.params}}

    @classmethod
    def from_entry(cls, entry: Mapping[str, Any]) -> MetricInfo:
        return cls(entry["name"], entry["family"], entry["module"], tuple(entry["needs"]),
                   tuple(entry["optional_needs"]),
                   tuple(ParamInfo(k, v["default"], v["doc"]) for k, v in entry["params"].items()),
                   entry["direction"], dict(entry["thresholds"]), entry["description"],
                   tuple(entry["aliases"]), bool(entry["default"]), bool(entry.get("from_stats", False)))


def manifest_entry(spec: MetricSpec) -> dict[str, Any]:
    """The manifest's record of ``spec``: :meth:`MetricSpec.to_dict` plus the defining module."""
    return {**spec.to_dict(), "module": spec.func.__module__}


_MANIFEST_CACHE: dict[str, MetricInfo] | None = None


def _manifest_infos() -> dict[str, MetricInfo]:
    global _MANIFEST_CACHE
    if _MANIFEST_CACHE is None:
        try:
            from ._manifest import METRICS
        except ImportError:  # pragma: no cover - a broken install: fall back to discovery
            METRICS = {}
        _MANIFEST_CACHE = {k: MetricInfo.from_entry(v) for k, v in METRICS.items()}
    return _MANIFEST_CACHE


def _info(spec: MetricSpec) -> MetricInfo:
    return MetricInfo.from_entry(manifest_entry(spec))


def _lookup(key: str) -> str | None:
    if key in _REGISTRY:
        return key
    if key in _ALIASES:
        return _ALIASES[key]
    man = _manifest_infos()
    if key in man:
        return key
    for info in man.values():
        if key in info.aliases:
            return info.name
    return None


def canonical_name(name: str) -> str:
    """Registry name for ``name`` or an alias (case-insensitive, ``-`` read as ``_``).

    Answered from the manifest and the live registry; a name neither knows triggers the full
    discovery (a metric added without regenerating the manifest) before it is an error."""
    key = str(name).strip().lower().replace("-", "_")
    found = _lookup(key)
    if found is None:
        _discover()
        found = _lookup(key)
    if found is not None:
        return found
    names = {i.name for i in metric_infos()}
    aliases = {a for i in metric_infos() for a in i.aliases}
    hint = _suggest(key, sorted(names | aliases))
    raise ConfigError(f"unknown metric {name!r}{hint}; run 'synthguard metrics' to list them")


def get_metric(name: str) -> MetricSpec:
    """The :class:`MetricSpec` of ``name`` (or alias), importing just the module that defines it;
    raises ``ConfigError`` for unknown names."""
    canon = canonical_name(name)
    if canon not in _REGISTRY:
        info = _manifest_infos().get(canon)
        if info is not None:
            try:
                importlib.import_module(info.module)
            except ModuleNotFoundError as exc:
                if exc.name != info.module:
                    raise
        if canon not in _REGISTRY:  # moved or renamed since the manifest was written
            _discover()
        if canon not in _REGISTRY:
            raise ConfigError(f"metric {canon!r} is listed in synthguard's manifest but no module "
                              "defines it; regenerate it: python -m synthguard.registry --write-manifest")
    return _REGISTRY[canon]


def metric_info(name: str) -> MetricInfo:
    """What the registry knows of ``name`` (or alias) without importing its implementation."""
    canon = canonical_name(name)
    if canon in _REGISTRY:
        return _info(_REGISTRY[canon])
    return _manifest_infos()[canon]


def metric_infos() -> list[MetricInfo]:
    """Every metric (the manifest overlaid with metrics registered at run time), by family then name,
    without importing implementations."""
    infos = dict(_manifest_infos())
    for name, spec in list(_REGISTRY.items()):
        infos[name] = _info(spec)
    return sorted(infos.values(), key=lambda s: (s.family, s.name))


def all_metrics() -> list[MetricSpec]:
    """Every registered metric, by family then name (imports every metric module)."""
    _discover()
    return sorted(_REGISTRY.values(), key=lambda s: (s.family, s.name))


def default_metrics() -> list[str]:
    """Names of the metrics that run when the user names none."""
    return [s.name for s in metric_infos() if s.default]


# ---------------------------------------------------------------------------- manifest generation
MANIFEST_PATH = Path(__file__).with_name("_manifest.py")
REGENERATE = "python -m synthguard.registry --write-manifest"


def live_manifest() -> dict[str, dict[str, Any]]:
    """The manifest as the decorators declare it now (imports every metric module)."""
    _discover()
    return {s.name: manifest_entry(s) for s in sorted(_REGISTRY.values(), key=lambda s: s.name)
            if s.func.__module__.startswith("synthguard.metrics.")}


def render_manifest(entries: Mapping[str, Mapping[str, Any]]) -> str:
    """The source text of :mod:`synthguard.registry._manifest` for ``entries``."""
    import pprint

    body = pprint.pformat(dict(entries), indent=1, width=100, sort_dicts=False)
    return ('"""Generated by ``' + REGENERATE + '``: do not edit.\n\n'
            "Every metric's declaration (its ``@register`` arguments and module), so the registry can list\n"
            'and check metrics without importing them. ``tests/unit/registry/test_manifest.py`` checks it is current.\n"""\n\n'
            "# fmt: off\n"
            f"METRICS = {body}\n")


def write_manifest(path: Path | None = None) -> Path:
    """Regenerate :mod:`synthguard.registry._manifest` from the live registry."""
    path = Path(path or MANIFEST_PATH)
    path.write_text(render_manifest(live_manifest()), encoding="utf-8")
    global _MANIFEST_CACHE
    _MANIFEST_CACHE = None
    return path


def _suggest(word: str, options: Any) -> str:
    import difflib

    close = difflib.get_close_matches(word, list(options), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def missing_inputs(spec: MetricSpec, ctx: Context) -> list[str]:
    """Inputs ``spec`` needs that ``ctx`` lacks."""
    have = set(ctx.tables.roles) | ({"generator"} if ctx.generator is not None else set())
    if spec.from_stats and getattr(ctx.tables, "original_stats", None) is not None:
        have.add("original")  # the original's statistics stand in for its rows
    return [n for n in spec.needs if n not in have]
