"""The built-in generators by name, and :func:`as_generator`: a generator from an object, a
callable, a built-in name or a command."""

from __future__ import annotations

from ..errors import ConfigError
from .base import CallableGenerator, CommandGenerator, Generator
from .copula import GaussianCopula
from .simple import IndependentMarginals, Raw

__all__ = ["BUILTIN", "as_generator"]

BUILTIN = {"raw": Raw, "independent_marginals": IndependentMarginals, "marginals": IndependentMarginals,
           "gaussian_copula": GaussianCopula, "copula": GaussianCopula}


def as_generator(obj: object, seed: int | None = None) -> Generator:
    """Turn a generator, a builtin name, a callable or a command string into a :class:`Generator`."""
    if isinstance(obj, str):
        key = obj.strip().lower().replace("-", "_")
        if key in BUILTIN:
            return BUILTIN[key](seed=seed)
        return CommandGenerator(obj, seed=seed)
    if hasattr(obj, "fit") and hasattr(obj, "generate"):
        return obj  # type: ignore[return-value]
    if callable(obj):
        return CallableGenerator(obj, seed=seed)
    raise ConfigError(f"cannot use {type(obj).__name__} as a generator: give an object with fit/generate, "
                      "a callable (df, n) -> DataFrame, a builtin name or a command")
