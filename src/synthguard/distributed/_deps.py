"""Run-time detection of the optional ``dask`` extra."""

from __future__ import annotations

from importlib.util import find_spec

from ..errors import ConfigError

INSTALL_HINT = "pip install 'synthguard[dask]'"


def has_dask() -> bool:
    """Whether ``dask.dataframe`` and ``distributed`` are importable."""
    return find_spec("dask") is not None and find_spec("distributed") is not None


def require_dask(what: str = "a distributed run") -> None:
    """Raise a :class:`ConfigError` naming the install command when Dask is missing."""
    if not has_dask():
        raise ConfigError(f"{what} needs Dask (dask[dataframe] and distributed), which is not installed: "
                          f"install synthguard[dask] ({INSTALL_HINT})")
    try:
        import dask.dataframe  # noqa: F401
        import distributed  # noqa: F401
    except ImportError as exc:  # e.g. dask without its dataframe dependencies
        raise ConfigError(f"{what} needs dask[dataframe] and distributed, but importing them failed "
                          f"({exc}): install synthguard[dask] ({INSTALL_HINT})") from exc
