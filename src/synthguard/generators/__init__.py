"""Built-in generators (``fit(df)`` / ``generate(n)``), so attacks and the demo need no third party."""

from .base import CallableGenerator, CommandGenerator, Generator
from .builtin import BUILTIN, as_generator
from .copula import GaussianCopula
from .simple import IndependentMarginals, Raw

__all__ = ["BUILTIN", "CallableGenerator", "CommandGenerator", "GaussianCopula", "Generator",
           "IndependentMarginals", "Raw", "as_generator"]
