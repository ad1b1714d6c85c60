"""Writing output files: checked before any work starts, written atomically (temp file + rename)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .errors import ConfigError


def check_writable(path: str | Path, option: str = "output") -> None:
    """Fail fast, with one line, when ``path`` cannot be written (before any metric runs).

    Parameters
    ----------
    path : str or Path
        The output file.
    option : str
        The option or argument that named it (``--json``), for the message.

    Raises
    ------
    ConfigError
        The path is a folder, its folder does not exist or is not a folder, or no file can be
        created there (permissions, read-only file system).
    """
    p = Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise ConfigError(f"{option} {p} is a folder: give a file path")
    if not parent.exists():
        raise ConfigError(f"{option} {p}: folder {parent} does not exist: create it or choose another path")
    if not parent.is_dir():
        raise ConfigError(f"{option} {p}: {parent} is not a folder: choose another path")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=parent)
        os.close(fd)
        os.unlink(tmp)
        if p.exists() and not os.access(p, os.W_OK):
            raise PermissionError("the file is read-only")
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ConfigError(f"{option} {p}: cannot write there ({reason}): choose another path") from exc


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file in the same folder and an atomic
    rename: a reader never sees a half-written file, and a failure leaves any old file intact."""
    p = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent if str(p.parent) else ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
