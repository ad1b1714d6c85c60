"""``njit`` that never dies on a read-only install: numba's on-disk cache decided per function.

``numba.njit(cache=True)`` looks for a cache folder when the function is DECORATED (at import):
next to the source (``__pycache__``), then numba's user-wide folder (``~/.cache/numba``). With a
read-only install and a read-only HOME neither is writable and the import fails with ``RuntimeError:
cannot cache function '...': no locator available``. Here that error is caught: the cache moves to
a private folder under the system temp dir (``$TMPDIR/synthguard-numba-<uid>``, set as numba's
``CACHE_DIR``), and when even that cannot be written the kernels run uncached (compiled once per
process) with one :class:`NumbaCacheWarning`. ``NUMBA_CACHE_DIR`` set by the user wins, as in numba.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba as nb

__all__ = ["NumbaCacheWarning", "njit"]


class NumbaCacheWarning(UserWarning):
    """No folder can hold numba's compiled kernels: they are compiled in every process."""


_STATE: dict[str, Any] = {"fallback": None, "warned": False}


def _temp_cache_dir() -> str | None:
    """A private, writable cache folder under the temp dir, or ``None``."""
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    path = Path(tempfile.gettempdir()) / f"synthguard-numba-{uid}"
    try:
        path.mkdir(mode=0o700, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError:
        return None
    return str(path)


def _no_locator(exc: RuntimeError) -> bool:
    return "no locator available" in str(exc)


def njit(**options: Any) -> Callable[[Callable], Any]:
    """``numba.njit(**options)``, where ``cache=True`` falls back to a temp folder, then to no
    cache with one warning, instead of failing at import.

    Parameters
    ----------
    **options
        Passed to :func:`numba.njit`.

    Returns
    -------
    callable
        The decorator.
    """
    def decorate(func: Callable) -> Any:
        if not options.get("cache"):
            return nb.njit(**options)(func)
        try:
            return nb.njit(**options)(func)
        except RuntimeError as exc:
            if not _no_locator(exc):
                raise
        from numba.core import config

        if _STATE["fallback"] is None:
            folder = None if config.CACHE_DIR else _temp_cache_dir()
            if folder is not None:
                config.CACHE_DIR = folder
            _STATE["fallback"] = folder or ""
        if _STATE["fallback"]:
            try:
                return nb.njit(**options)(func)
            except RuntimeError as exc:
                if not _no_locator(exc):
                    raise
        if not _STATE["warned"]:
            _STATE["warned"] = True
            warnings.warn("no writable folder for numba's compiled kernels (install folder, ~/.cache and "
                          "the temp dir are read-only): they are compiled in every run (a few seconds); "
                          "set NUMBA_CACHE_DIR to a writable folder to keep them",
                          NumbaCacheWarning, stacklevel=2)
        return nb.njit(**{**options, "cache": False})(func)

    return decorate
