"""Writing output files: checked before any work starts, then written through one writer.

Every file the project writes goes through :func:`open_output` (or its shorthands
:func:`atomic_write_text` and :func:`write_csv`), which decides from the target what writing means:

* a regular file, or a new name: a temporary file in the target's folder, renamed over the target
  (``os.replace``) once complete: a reader never sees half a file, a failure leaves the old file
  intact, an existing file keeps its permission bits;
* ``-``: standard output, written as a stream;
* a named pipe (FIFO) or a character device (a terminal, ``/dev/null``): opened and written in
  place as a stream (replacing a pipe by a file would leave its reader waiting forever);
* an open file descriptor (``/dev/stdout``, ``/dev/fd/63`` from ``>(...)``, ``/proc/self/fd/1``,
  or a link to one): a stream, written through the descriptor itself, whatever it is open on (a
  shell redirection ``> out.txt`` keeps what was printed before, in order);
* another symbolic link: followed to a regular file (written atomically there, the link kept) or
  to a pipe or a terminal (a stream); refused with one line when it dangles, loops or points at
  anything else;
* a folder, a block device, a socket: refused with one line.

Whether an output names an input (also through a link, ``..`` or a hard link) is checked by
:func:`check_distinct_outputs` before any work.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..errors import ConfigError

#: The output name that means standard output.
STDOUT = "-"


@dataclass(frozen=True)
class Target:
    """How an output path is written.

    Attributes
    ----------
    kind : {"file", "stream", "stdout"}
        ``file``: temporary file + rename; ``stream``: opened and written in place (pipe,
        terminal); ``stdout``: standard output.
    path : Path
        Where the bytes go: for a link to a regular file, the file it points at.
    fd : int or None
        For a stream naming one of this process's open descriptors, its number (written through
        a duplicate of it, so the output lands where that descriptor is, in order).
    """

    kind: str
    path: Path
    fd: int | None = None


def is_stdout(path: str | Path | None) -> bool:
    """Whether ``path`` is ``-`` (standard output).

    Examples
    --------
    >>> is_stdout("-"), is_stdout("report.json"), is_stdout(None)
    (True, False, False)
    """
    return path is not None and str(path) == STDOUT


def _kind_name(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "folder"), (stat.S_ISBLK, "block device"),
                       (stat.S_ISSOCK, "socket"), (stat.S_ISFIFO, "named pipe"),
                       (stat.S_ISCHR, "terminal or device")):
        if test(mode):
            return name
    return "special file"


def _is_stream(mode: int) -> bool:
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)


_DESCRIPTOR = re.compile(r"/dev/(?:std(?P<std>in|out|err)|fd/(?P<dev>\d+))"
                         r"|/proc/(?P<pid>self|thread-self|\d+)(?:/task/\d+)?/fd/(?P<proc>\d+)")


def _descriptor(p: Path) -> int | None:
    """When ``p``, or a link on the way from it, names an open file descriptor (``/dev/stdout``,
    ``/dev/fd/N``, ``/proc/self/fd/N``): its number (``-1`` for another process's); else
    ``None``. The file behind such a path is someone's open stream, not a file to replace."""
    cur = os.path.abspath(p)
    for _ in range(40):  # the kernel's own limit on links followed
        m = _DESCRIPTOR.fullmatch(cur)
        if m:
            if m["std"]:
                return {"in": 0, "out": 1, "err": 2}[m["std"]]
            if m["dev"]:
                return int(m["dev"])
            own = m["pid"] in ("self", "thread-self") or int(m["pid"]) == os.getpid()
            return int(m["proc"]) if own else -1
        try:
            nxt = os.readlink(cur)
        except OSError:
            return None
        cur = os.path.normpath(os.path.join(os.path.dirname(cur), nxt))
    return None


def output_target(path: str | Path, option: str = "output") -> Target:
    """Decide how ``path`` is written (see the module docstring), or refuse it with one line.

    Parameters
    ----------
    path : str or Path
        The output, as the user gave it (``-`` for standard output).
    option : str
        The option that named it (``--json``), for the message.

    Returns
    -------
    Target
        The kind of writing and the path the bytes go to.

    Raises
    ------
    ConfigError
        The path is a folder, a block device or a socket, or a link that dangles, loops or points
        at anything but a regular file, a pipe or a terminal.

    Examples
    --------
    >>> output_target("-").kind
    'stdout'
    >>> output_target("/dev/null").kind
    'stream'
    """
    if is_stdout(path):
        return Target("stdout", Path(STDOUT))
    p = Path(path)
    try:
        lst = os.lstat(p)
    except FileNotFoundError:
        return Target("file", p)
    except OSError as exc:
        raise ConfigError(f"{option} {p}: cannot use this path ({exc.strerror or exc}): choose "
                          "another path") from exc
    fd = _descriptor(p) if stat.S_ISLNK(lst.st_mode) else None
    if fd is not None:
        return Target("stream", p, fd if fd >= 0 else None)
    if stat.S_ISLNK(lst.st_mode):
        dest = os.readlink(p)
        try:
            st = os.stat(p)
        except OSError as exc:
            raise ConfigError(f"{option} {p} is a symbolic link to {dest}, which "
                              f"{'does not exist' if isinstance(exc, FileNotFoundError) else 'cannot be followed'}"
                              ": give the path of a file (the link would be replaced)") from exc
        if stat.S_ISREG(st.st_mode):
            return Target("file", Path(os.path.realpath(p)))
        if _is_stream(st.st_mode):
            return Target("stream", p)
        raise ConfigError(f"{option} {p} is a symbolic link to a {_kind_name(st.st_mode)} ({dest}): "
                          "give the path of a file")
    if stat.S_ISREG(lst.st_mode):
        return Target("file", p)
    if _is_stream(lst.st_mode):
        return Target("stream", p)
    if stat.S_ISDIR(lst.st_mode):
        raise ConfigError(f"{option} {p} is a folder: give a file path")
    raise ConfigError(f"{option} {p} is a {_kind_name(lst.st_mode)}, not a file, a pipe or a "
                      "terminal: give a file path")


def check_writable(path: str | Path, option: str = "output") -> None:
    """Fail fast, with one line, when ``path`` cannot be written (before any metric runs).

    Parameters
    ----------
    path : str or Path
        The output file (``-``, a pipe or a terminal are streams: only checked for permission).
    option : str
        The option or argument that named it (``--json``), for the message.

    Raises
    ------
    ConfigError
        The path is refused by :func:`output_target`, its folder does not exist or is not a
        folder, or no file can be created there (permissions, read-only file system).

    Examples
    --------
    >>> check_writable("-", "--json")
    """
    target = output_target(path, option)
    if target.kind == "stdout":
        return
    p = target.path
    if target.kind == "stream":  # never opened here: opening a pipe and closing it ends its reader
        if not os.access(p, os.W_OK):
            raise ConfigError(f"{option} {path}: cannot write there (permission denied): choose "
                              "another path")
        return
    parent = p.parent if str(p.parent) else Path(".")
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
    metadata, config) or another output (two outputs on standard output included).

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

    Examples
    --------
    >>> check_distinct_outputs({"--json": "r.json", "--html": None}, {"--original": "o.csv"})
    """
    outs = [(k, Path(v)) for k, v in outputs.items() if v is not None]
    ins = [(k, Path(v)) for k, v in inputs.items() if v is not None]
    for i, (opt, path) in enumerate(outs):
        if is_stdout(path):
            for other, opath in outs[:i]:
                if is_stdout(opath):
                    raise ConfigError(f"{opt} and {other} both write to standard output ('-'): give "
                                      "one of them a file path")
            continue
        for other, ipath in ins:
            if not is_stdout(ipath) and _same_file(path, ipath):
                raise ConfigError(f"{opt} {path} is the {other} input: it would be overwritten; "
                                  "write the report to another path")
        for other, opath in outs[:i]:
            if not is_stdout(opath) and _same_file(path, opath):
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


@contextmanager
def open_output(path: str | Path, option: str = "output", *, binary: bool = False) -> Iterator[IO[Any]]:
    """The one way the project writes a file: a handle to write ``path`` through (see the module
    docstring for what each kind of target gets).

    Text is UTF-8 with ``\\n`` line ends, on every system. A regular file appears only when the
    ``with`` block ends without an exception, through a temporary file in its folder and a rename;
    an existing file keeps its permission bits, a new one gets ``0666`` minus the umask (the
    temporary file is private until then).

    Parameters
    ----------
    path : str or Path
        The output (``-`` for standard output).
    option : str
        The option that named it, for messages.
    binary : bool
        Yield a binary handle instead of a text one.

    Yields
    ------
    file object
        Write the content to it; do not close it.

    Raises
    ------
    ConfigError
        The target is refused (:func:`output_target`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "notes.txt"
    >>> with open_output(out) as fh:
    ...     _ = fh.write("done\\n")
    >>> out.read_text()
    'done\\n'
    """
    target = output_target(path, option)
    if target.kind == "stdout":
        sys.stdout.flush()
        handle: IO[Any] = sys.stdout.buffer if binary else sys.stdout
        yield handle
        handle.flush()
        return
    if target.kind == "stream":
        sys.stdout.flush()  # what was printed comes first
        sys.stderr.flush()
        raw: Any = os.dup(target.fd) if target.fd is not None else target.path
        with (open(raw, "ab") if binary else open(raw, "a", encoding="utf-8", newline="")) as fh:
            yield fh
        return
    p = target.path
    try:
        mode = os.stat(p).st_mode & 0o7777
    except OSError:
        mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent if str(p.parent) else ".")
    try:
        with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="")) as fh:
            yield fh
        os.chmod(tmp, mode)
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_text(path: str | Path, text: str, option: str = "output") -> None:
    """Write ``text`` (UTF-8) to ``path`` through :func:`open_output`: a regular file through a
    temporary file in the same folder and an atomic rename, a pipe, a terminal or ``-`` as a
    stream, a link only to what it may be followed to.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "r.json"
    >>> atomic_write_text(out, "{}\\n")
    >>> out.read_text()
    '{}\\n'
    """
    with open_output(path, option) as fh:
        fh.write(text)


def write_csv(frame: Any, path: str | Path, option: str = "output") -> None:
    """Write a DataFrame as CSV through :func:`open_output`, every header and cell that a
    spreadsheet would run as a formula neutralised first (:func:`synthguard.core.escape.csv_safe`):
    the one CSV writer of the project.

    No index, UTF-8, RFC 4180 line ends (``\\r\\n``): a name or value holding a carriage return or
    a newline is then always quoted (with ``\\n`` line ends Python's CSV writer leaves a bare
    ``\\r``, where a spreadsheet starts a new row: a second way to start a cell with a formula).

    Examples
    --------
    >>> import tempfile, pathlib, pandas as pd
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> write_csv(pd.DataFrame({"=1+1": ["@sex", "x"], "v": [-3.5, 2.0]}), out)
    >>> out.read_bytes()
    b"'=1+1,v\\r\\n'@sex,-3.5\\r\\nx,2.0\\r\\n"
    """
    from .escape import csv_safe

    safe = csv_safe(frame)
    with open_output(path, option) as fh:
        safe.to_csv(fh, index=False, lineterminator="\r\n")
