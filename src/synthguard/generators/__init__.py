"""Built-in generators (``fit(df)`` / ``generate(n)``), so attacks and the demo need no third party."""

from .base import CallableGenerator, CommandGenerator, Generator, as_generator
from .copula import GaussianCopula
from .simple import IndependentMarginals, Raw

BUILTIN = {"raw": Raw, "independent_marginals": IndependentMarginals, "marginals": IndependentMarginals,
           "gaussian_copula": GaussianCopula, "copula": GaussianCopula}

__all__ = ["BUILTIN", "CallableGenerator", "CommandGenerator", "GaussianCopula", "Generator",
           "IndependentMarginals", "Raw", "as_generator"]
