"""synthguard: how much a synthetic or anonymised dataset leaks, and how useful it still is.

Public surface::

    synthguard.evaluate(original, synthetic, control=None, metadata=None, metrics=None,
                        config=None, seed=None, preset=None, cache=None) -> Report
    synthguard.compare(original, {"name": synthetic, ...}, control=None, ...) -> Comparison
    synthguard.Evaluator(method, **kwargs)              # PETsARD-style facade
    synthguard.PrivacyEvaluator(syn, ori, metadata, selected_metrics=[...])   # SynEval-style
    synthguard.EvaluatorBase                            # base of custom PETsARD-style evaluators
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("synthguard")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+unknown"

from .compat import Evaluator, EvaluatorBase, PrivacyEvaluator  # noqa: E402
from .errors import ConfigError, InputError, MetricError, SynthguardError  # noqa: E402
from .report import Report  # noqa: E402
from .report.compare import Comparison, compare  # noqa: E402
from .runner import evaluate  # noqa: E402

__all__ = ["Comparison", "ConfigError", "Evaluator", "EvaluatorBase", "InputError", "MetricError",
           "PrivacyEvaluator", "Report", "SynthguardError", "__version__", "compare", "evaluate"]
