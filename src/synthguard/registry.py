"""The metric registry: every metric declares its name, family, needs, parameters, direction and
default risk thresholds, and is looked up here by name (or alias).

A metric is a plain function ``func(ctx: Context, **params) -> MetricResult`` decorated with
:func:`register`. Modules under :mod:`synthguard.metrics` are discovered and imported automatically.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .data.tables import Tables
from .encoding import EncodedView
from .errors import ConfigError, MetricError
from .results import MetricResult
from .stats import make_rng

NEEDS = ("original", "synthetic", "control", "generator")
#: Why a metric is skipped when only the original's statistics were given.
ORIGINAL_ROWS_NEEDED = "the original rows (not available with --original-stats)"


@dataclass(frozen=True)
class Param:
    """One metric parameter: name, default, documentation and the check applied to user values.

    ``kind`` is a type or tuple of types (``None`` = anything); ``choices`` restricts the values;
    ``check`` is an optional callable returning an error text for a bad value (or ``None``).
    """

    name: str
    default: Any = None
    doc: str = ""
    kind: type | tuple[type, ...] | None = None
    choices: tuple[Any, ...] | None = None
    check: Callable[[Any], str | None] | None = None

    def validate(self, value: Any, metric: str) -> Any:
        if value is None:
            return None
        kind = self.kind
        if kind is not None:
            kinds = kind if isinstance(kind, tuple) else (kind,)
            if float in kinds and isinstance(value, (int, np.integer)) and not isinstance(value, bool):
                value = float(value)
            if int in kinds and isinstance(value, float) and value.is_integer() and float not in kinds:
                value = int(value)
            if tuple in kinds and isinstance(value, list):
                value = tuple(value)
            if list in kinds and isinstance(value, tuple):
                value = list(value)
            if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
                names = " or ".join(k.__name__ for k in kinds)
                raise ConfigError(f"metric {metric!r}: parameter {self.name!r} must be {names}, "
                                  f"got {value!r}")
        if self.choices is not None and value not in self.choices:
            raise ConfigError(f"metric {metric!r}: parameter {self.name!r} must be one of "
                              f"{list(self.choices)}, got {value!r}")
        if self.check is not None:
            problem = self.check(value)
            if problem:
                raise ConfigError(f"metric {metric!r}: parameter {self.name!r}: {problem}")
        return value


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

    def param_defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

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
        from .results import to_jsonable

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
        Entity-level inputs (:mod:`synthguard.entity`) when an entity key was given; ``tables`` is
        then the entity table for privacy metrics and the event table for the others.
    """

    tables: Tables
    encoded: EncodedView
    seed: int = 0
    thresholds: Mapping[str, float] = field(default_factory=dict)
    metric: str = ""
    backend: str = "auto"
    generator: Any = None
    cache: dict[str, Any] = field(default_factory=dict)
    release_type: str = "synthetic"
    entities: Any = None

    def rng(self, *labels: int | str) -> np.random.Generator:
        """A generator seeded by the run's seed, this metric's name and ``labels``."""
        return make_rng(self.seed, self.metric, *labels)

    def for_metric(self, spec: MetricSpec, thresholds: Mapping[str, float] | None = None) -> Context:
        th = dict(spec.thresholds)
        th.update(thresholds or {})
        return replace(self, metric=spec.name, thresholds=th)

    @classmethod
    def from_frames(cls, original: Any, synthetic: Any, control: Any = None, metadata: Any = None, *,
                    seed: int = 0, backend: str = "auto", strict_control: bool = True) -> Context:
        """Build a context straight from frames or paths (for calling metric functions directly)."""
        from .data.tables import prepare_tables

        tables = prepare_tables(original, synthetic, control, metadata, strict_control=strict_control)
        return cls(tables=tables, encoded=EncodedView(tables), seed=seed, backend=backend)


_REGISTRY: dict[str, MetricSpec] = {}
_ALIASES: dict[str, str] = {}
_DISCOVERED = False


def register(name: str, *, family: str, direction: str, needs: Sequence[str] = ("original", "synthetic"),
             params: Sequence[Param] = (), thresholds: Mapping[str, float] | None = None,
             description: str = "", aliases: Sequence[str] = (), default: bool = True,
             optional_needs: Sequence[str] = (), from_stats: bool = False) -> Callable[[Callable[..., MetricResult]],
                                                              Callable[..., MetricResult]]:
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
    """
    bad = [n for n in needs if n not in NEEDS]
    if bad:
        raise ValueError(f"unknown needs {bad}")

    def deco(func: Callable[..., MetricResult]) -> Callable[..., MetricResult]:
        if name in _REGISTRY and _REGISTRY[name].func is not func:
            raise ValueError(f"metric {name!r} registered twice")
        spec = MetricSpec(name, family, func, tuple(needs), tuple(params), direction,
                          dict(thresholds or {}), description, tuple(aliases), default,
                          tuple(optional_needs), from_stats)
        _REGISTRY[name] = spec
        for a in aliases:
            _ALIASES[a] = name
        func.spec = spec  # type: ignore[attr-defined]
        return func

    return deco


def _discover() -> None:
    global _DISCOVERED
    if _DISCOVERED:
        return
    _DISCOVERED = True
    from . import metrics as pkg

    for mod in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
        if mod.name.rsplit(".", 1)[-1].startswith("_"):
            continue
        importlib.import_module(mod.name)


def canonical_name(name: str) -> str:
    """Registry name for ``name`` or an alias (case-insensitive, ``-`` read as ``_``)."""
    _discover()
    key = str(name).strip().lower().replace("-", "_")
    if key in _REGISTRY:
        return key
    if key in _ALIASES:
        return _ALIASES[key]
    hint = _suggest(key, list(_REGISTRY) + list(_ALIASES))
    raise ConfigError(f"unknown metric {name!r}{hint}; run 'synthguard metrics' to list them")


def get_metric(name: str) -> MetricSpec:
    """The :class:`MetricSpec` of ``name`` (or alias); raises ``ConfigError`` for unknown names."""
    return _REGISTRY[canonical_name(name)]


def all_metrics() -> list[MetricSpec]:
    """Every registered metric, by family then name."""
    _discover()
    return sorted(_REGISTRY.values(), key=lambda s: (s.family, s.name))


def default_metrics() -> list[str]:
    return [s.name for s in all_metrics() if s.default]


def _suggest(word: str, options: Any) -> str:
    close = difflib.get_close_matches(word, list(options), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def missing_inputs(spec: MetricSpec, ctx: Context) -> list[str]:
    """Inputs ``spec`` needs that ``ctx`` lacks."""
    have = set(ctx.tables.roles) | ({"generator"} if ctx.generator is not None else set())
    if spec.from_stats and getattr(ctx.tables, "original_stats", None) is not None:
        have.add("original")  # the original's statistics stand in for its rows
    return [n for n in spec.needs if n not in have]


def run_metric(spec: MetricSpec, ctx: Context, params: Mapping[str, Any]) -> MetricResult:
    """Run one metric with validated parameters; ``MetricError`` when inputs are missing."""
    missing = missing_inputs(spec, ctx)
    if missing:
        flag = {"control": "a control table (--control, real rows held out from training)",
                "original": ORIGINAL_ROWS_NEEDED,
                "generator": "a generator (synthguard attack)"}
        raise MetricError("needs " + " and ".join(flag.get(m, m) for m in missing))
    res = spec.func(ctx, **params)
    if getattr(res, "records", None):
        from .data.tables import input_row_records

        # row numbers from the tables' canonical content order back to the input rows
        res = replace(res, records=input_row_records(res.records, ctx.tables, spec.name))
    return res


