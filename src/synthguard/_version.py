"""The package's version, in a module of its own that imports nothing of synthguard: the modules that
write it (report headers, cache keys, profiles, ``synthguard --version``) import it from here, never
from the package itself (which would tie them to everything the package exposes).

Read from the installed distribution's metadata on first use (``importlib.metadata``), so importing
this module costs nothing.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

__all__ = ["__version__", "version"]  # noqa: F822 - __version__ comes from __getattr__


@lru_cache(maxsize=1)
def version() -> str:
    """The installed synthguard's version (``"0.0.0+unknown"`` from a source tree never installed).

    Examples
    --------
    >>> isinstance(version(), str)
    True
    """
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("synthguard")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0.0.0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        return version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
