"""The options of an evaluation, in one typed object validated once: :class:`EvaluateOptions`.

Every path that starts an evaluation builds one and passes it on: :func:`synthguard.evaluate` and
:func:`synthguard.compare` (their keyword arguments are its fields), the ``synthguard evaluate`` and
``synthguard compare`` commands, the SynEval facade and the Dask path (:mod:`synthguard.run.cluster`).
The configuration file fills what the options leave unset (``seed``, the risk rule's keys), in
:meth:`EvaluateOptions.with_config`. A path that cannot honour an option refuses it with one line
naming it (:meth:`EvaluateOptions.refuse`), never drops it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError
from ..registry import validate_seed

__all__ = ["ENGINE_BACKENDS", "EvaluateOptions", "OPTION_NAMES"]

#: The neighbour-engine backends an evaluation may ask for (``synthguard.engine.neighbors.engine.BACKENDS``,
#: not imported here: it loads the engine).
ENGINE_BACKENDS = ("auto", "numba", "numpy")


@dataclasses.dataclass(frozen=True)
class EvaluateOptions:
    """How an evaluation runs: everything :func:`synthguard.evaluate` takes besides the tables
    (``original``, ``synthetic``, ``control``) and their ``metadata``.

    The fields are the keyword arguments of :func:`synthguard.evaluate` and
    :func:`synthguard.compare`, with the same meaning and defaults (see there). Construction
    validates every field once (``ConfigError`` naming it); ``seed`` becomes a plain ``int`` and
    ``cache`` a :class:`~synthguard.engine.cache.DiskCache` (or ``None``).

    Examples
    --------
    >>> EvaluateOptions(seed=3, materiality=0.02).seed
    3
    >>> EvaluateOptions(alpha=0.7)
    Traceback (most recent call last):
    ...
    synthguard.errors.ConfigError: alpha must be a number strictly between 0.0 and 0.5, got 0.7
    """

    metrics: Any = None
    config: Mapping[str, Any] | str | Path | None = None
    seed: int | None = None
    preset: str | None = None
    backend: str = "auto"
    progress: bool = False
    generator: Any = None
    cache: Any = None
    on_progress: Callable[[str, int, int], Any] | None = None
    original_stats: Any = None
    risk_rule: str | None = None
    materiality: float | None = None
    release_type: str | None = None
    alpha: float | None = None
    entity_key: str | None = None
    sequence_key: str | None = None
    original_context: Any = None
    synthetic_context: Any = None
    control_context: Any = None
    client: Any = None
    jobs: int | None = None
    retest_columns: int | None = None
    on_plan: Callable[[Any], Any] | None = None
    retest_rows: int | None = None
    max_records: int | None = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "seed", validate_seed(self.seed))
        if self.preset is not None and not isinstance(self.preset, str):
            raise ConfigError(f"preset must be a preset's name, got {self.preset!r}")
        if self.backend not in ENGINE_BACKENDS:
            raise ConfigError(f"backend must be one of {list(ENGINE_BACKENDS)}, got {self.backend!r}")
        if not isinstance(self.progress, bool):
            raise ConfigError(f"progress must be True or False, got {self.progress!r}")
        if self.on_progress is not None and not callable(self.on_progress):
            raise ConfigError(f"on_progress must be callable as on_progress(metric, step, total), "
                              f"got {self.on_progress!r}")
        if self.on_plan is not None and not callable(self.on_plan):
            raise ConfigError(f"on_plan must be callable as on_plan(plan), got {self.on_plan!r}")
        for name in ("jobs", "retest_columns", "retest_rows", "max_records"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer))):
                raise ConfigError(f"{name} must be an integer, got {v!r}")
            if v is not None:
                set_(self, name, int(v))
        for name in ("retest_columns", "retest_rows", "max_records"):
            v = getattr(self, name)
            if v is not None and v < 0:
                raise ConfigError(f"{name} must be 0 (off) or more, got {v}")
        for name in ("entity_key", "sequence_key"):
            v = getattr(self, name)
            if v is not None and not isinstance(v, str):
                raise ConfigError(f"{name} must be a column name, got {v!r}")
        if any(v is not None for v in self.risk_overrides().values()):
            from .verdict import RiskRule

            RiskRule(**{k: v for k, v in self.risk_overrides().items() if v is not None})
        if self.cache is not None:
            from ..engine.cache import as_cache

            set_(self, "cache", as_cache(self.cache))

    # ------------------------------------------------------------------------------- building
    @classmethod
    def build(cls, options: EvaluateOptions | None = None, **given: Any) -> EvaluateOptions:
        """``options`` or the options of the keyword arguments ``given`` (what
        :func:`synthguard.evaluate` and :func:`synthguard.compare` were called with), not both: a
        keyword argument that differs from its default next to ``options=`` is refused.

        Examples
        --------
        >>> EvaluateOptions.build(seed=2).seed
        2
        >>> EvaluateOptions.build(EvaluateOptions(seed=2), jobs=3)
        Traceback (most recent call last):
        ...
        synthguard.errors.ConfigError: give the options as keyword arguments or as options=, not both (got options= and jobs=)
        """
        if options is None:
            return cls(**given)
        if not isinstance(options, cls):
            raise ConfigError(f"options must be an EvaluateOptions, got {type(options).__name__}")
        defaults = {f.name: f.default for f in dataclasses.fields(cls)}
        extra = [k for k, v in given.items() if _differs(v, defaults[k])]
        if extra:
            raise ConfigError(f"give the options as keyword arguments or as options=, not both (got "
                              f"options= and {extra[0]}=)")
        return options

    def replace(self, **changes: Any) -> EvaluateOptions:
        """These options with ``changes`` (validated again)."""
        return dataclasses.replace(self, **changes)

    def with_config(self, run_config: Any) -> EvaluateOptions:
        """The options with what the configuration file sets filled in where they leave it unset:
        ``seed`` (else 0). The risk rule's keys are merged by
        :func:`synthguard.run.verdict.risk_rule_of` (these options first, then the file, then the
        metadata)."""
        seed = self.seed
        if seed is None:
            seed = run_config.seed if run_config.seed is not None else 0
        return self if seed == self.seed else self.replace(seed=seed)

    # ------------------------------------------------------------------------------- reading
    def risk_overrides(self) -> dict[str, Any]:
        """The risk rule's keys these options set (``None`` = not set), as
        :func:`synthguard.run.verdict.risk_rule_of` takes them."""
        return {"rule": self.risk_rule, "materiality": self.materiality,
                "release_type": self.release_type, "alpha": self.alpha}

    def entity_options(self) -> dict[str, Any]:
        """The entity-level options that are set (entity key, sequence key, context tables)."""
        return {k: getattr(self, k) for k in ENTITY_OPTIONS if getattr(self, k) is not None}

    def given(self) -> dict[str, Any]:
        """The options that differ from their defaults (what a caller asked for)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if _differs(getattr(self, f.name), f.default)}

    def refuse(self, where: str, reasons: Mapping[str, str]) -> None:
        """One line naming the first option set here that the path ``where`` cannot honour
        (``reasons``: option -> why), as a ``ConfigError``; nothing when none is set.

        Examples
        --------
        >>> EvaluateOptions(jobs=1).refuse("evaluate(client=...)", {"jobs": "metrics run one at a time"})
        >>> EvaluateOptions(jobs=4).refuse("evaluate(client=...)", {"jobs": "metrics run one at a time"})
        Traceback (most recent call last):
        ...
        synthguard.errors.ConfigError: evaluate(client=...) cannot take jobs=4: metrics run one at a time
        """
        given = self.given()
        for name, why in reasons.items():
            if name in given and not (name == "jobs" and given[name] == 1):
                value = given[name]
                shown = repr(value) if isinstance(value, (int, float, str)) else "..."
                raise ConfigError(f"{where} cannot take {name}={shown}: {why}")


def _differs(value: Any, default: Any) -> bool:
    """Whether an option's value is not its default (``None``, or a plain value: frames and other
    objects are compared by identity, never element-wise)."""
    if default is None:
        return value is not None
    return type(value) is not type(default) or value != default


#: The entity-level options (one row per person, ``docs/entity-level.md``).
ENTITY_OPTIONS = ("entity_key", "sequence_key", "original_context", "synthetic_context",
                  "control_context")
#: Every option's name, in the order of :func:`synthguard.evaluate`'s keyword arguments.
OPTION_NAMES = tuple(f.name for f in dataclasses.fields(EvaluateOptions))
