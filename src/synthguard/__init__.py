"""synthguard: how much a synthetic or anonymised dataset leaks, and how useful it still is.

Public surface::

    synthguard.evaluate(original, synthetic, control=None, metadata=None, metrics=None,
                        config=None, seed=0) -> Report
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("synthguard")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+unknown"

from .errors import ConfigError, InputError, MetricError, SynthguardError  # noqa: E402
from .report import Report  # noqa: E402
from .runner import evaluate  # noqa: E402

__all__ = ["ConfigError", "InputError", "MetricError", "Report", "SynthguardError", "__version__",
           "evaluate"]
