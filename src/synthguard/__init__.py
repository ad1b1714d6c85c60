"""synthguard: how much a synthetic or anonymised dataset leaks, and how useful it still is.

Public surface::

    synthguard.evaluate(original, synthetic, control=None, metadata=None, metrics=None,
                        config=None, seed=None, preset=None, cache=None) -> Report
    synthguard.compare(original, {"name": synthetic, ...}, control=None, ...) -> Comparison
    synthguard.Evaluator(method, **kwargs)              # PETsARD-style facade
    synthguard.PrivacyEvaluator(syn, ori, metadata, selected_metrics=[...])   # SynEval-style
    synthguard.EvaluatorBase                            # base of custom PETsARD-style evaluators

Importing ``synthguard`` is cheap (no pandas, scipy, numba or sklearn): the names above are loaded on
first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .errors import ConfigError, InputError, MetricError, SynthguardError

if TYPE_CHECKING:  # pragma: no cover
    from .api import compare, evaluate
    from .compat import Evaluator, EvaluatorBase, PrivacyEvaluator
    from .report import Report
    from .report.compare import Comparison

_LAZY = {"evaluate": ".api", "Report": ".report", "Comparison": ".report.compare",
         "compare": ".api", "Evaluator": ".compat", "EvaluatorBase": ".compat",
         "PrivacyEvaluator": ".compat"}


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from ._version import version

        value: Any = version()
    elif name in _LAZY:
        value = getattr(import_module(_LAZY[name], __name__), name)
    else:
        raise AttributeError(f"module 'synthguard' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = ["Comparison", "ConfigError", "Evaluator", "EvaluatorBase", "InputError", "MetricError",
           "PrivacyEvaluator", "Report", "SynthguardError", "__version__", "compare", "evaluate"]
