"""Writing output files: checked before any work starts, written atomically (temp file + rename)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..errors import ConfigError


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


def _same_file(a: Path, b: Path) -> bool:
    """Whether two paths name the same file: equal once resolved (symlinks, ``..``), or the same
    inode when both exist (hard links, bind mounts)."""
    try:
        if a.resolve() == b.resolve():
            return True
    except OSError:  # pragma: no cover - resolve loops
        pass
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:  # pragma: no cover
        return False


def check_distinct_outputs(outputs: dict[str, str | Path | None],
                           inputs: dict[str, str | Path | None]) -> None:
    """Fail with one line, before any work, when an output would overwrite an input (data,
    metadata, config) or another output.

    Parameters
    ----------
    outputs : mapping
        Option (``--json``) -> output path, ``None`` when not given.
    inputs : mapping
        Option (``--original``) -> input path, ``None`` when not given.

    Raises
    ------
    ConfigError
        Naming both options and the path.
    """
    outs = [(k, Path(v)) for k, v in outputs.items() if v is not None]
    ins = [(k, Path(v)) for k, v in inputs.items() if v is not None]
    for i, (opt, path) in enumerate(outs):
        for other, ipath in ins:
            if _same_file(path, ipath):
                raise ConfigError(f"{opt} {path} is the {other} input: it would be overwritten; "
                                  "write the report to another path")
        for other, opath in outs[:i]:
            if _same_file(path, opath):
                raise ConfigError(f"{opt} and {other} both name {path}: one would replace the other; "
                                  "give each its own path")


def _umask() -> int:
    """The process umask (read without changing it where /proc allows)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    old = os.umask(0o022)  # pragma: no cover - not Linux
    os.umask(old)
    return old


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file in the same folder and an atomic
    rename: a reader never sees a half-written file, and a failure leaves any old file intact.
    An existing file keeps its permission bits; a new one gets ``0666`` minus the umask, like any
    file the user creates (the temporary file is private until then)."""
    p = Path(path)
    try:
        mode = os.stat(p).st_mode & 0o7777
    except OSError:
        mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent if str(p.parent) else ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
