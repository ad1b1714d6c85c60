"""Metric parameters and their declared constraints (as scikit-learn's parameter validation):
:class:`Param` with a type or a named constraint (:data:`CONSTRAINTS`), an :class:`Interval`, choices or
a check, validated once by the registry on every path."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError

__all__ = ["CONSTRAINTS", "Interval", "Param", "suggest", "validate_seed"]


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


def suggest(word: str, options: Any) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``options``, else ``""``."""
    import difflib

    close = difflib.get_close_matches(word, list(options), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def validate_seed(seed: Any, where: str = "seed") -> int | None:
    """A seed as a plain non-negative ``int`` (numpy integers accepted); ``None`` stays ``None``.

    Raises
    ------
    ConfigError
        Not an integer (booleans and floats included), or negative: seeds feed
        ``numpy.random.SeedSequence``, which takes non-negative integers only.
    """
    import numpy as np

    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ConfigError(f"{where} must be a non-negative integer, got {seed!r}")
    if seed < 0:
        raise ConfigError(f"{where} must be a non-negative integer (0, 1, 2, ...), got {int(seed)}")
    return int(seed)
