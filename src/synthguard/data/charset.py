"""Which character encoding a text file is in, when it is not UTF-8, told in one line.

synthguard reads text files (CSV, JSON, YAML) as UTF-8 (a UTF-8 byte-order mark is fine). A file
saved as UTF-16 or UTF-32 (Excel's "Unicode text", PowerShell's default), with or without a
byte-order mark, or as Latin-1 / Windows-1252 would otherwise be misread: UTF-16 without a mark
decodes as UTF-8 with a NUL byte between letters (columns named ``'\\x00T\\x00...'``), Latin-1
fails somewhere in the middle of the file. Here the encoding is recognised from the bytes and the
error names the file, the encoding and the command that converts it.
"""

from __future__ import annotations

import codecs
import gzip
from pathlib import Path

import numpy as np

__all__ = ["not_utf8", "sniff_utf16_32"]

_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
         (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"))
#: bytes looked at to recognise UTF-16/32 without a byte-order mark
HEAD = 4096


def _open(path: Path):
    return gzip.open(path, "rb") if path.suffix.lower() == ".gz" else path.open("rb")


def sniff_utf16_32(head: bytes) -> str | None:
    """``"UTF-16"`` / ``"UTF-32"`` (with a byte-order mark), ``"UTF-16LE"`` ... (without one, from
    the NUL bytes that pad ASCII characters), or ``None`` for anything else.

    Examples
    --------
    >>> sniff_utf16_32("age,sex\\n".encode("utf-16-le"))
    'UTF-16LE'
    >>> sniff_utf16_32(b"age,sex\\n") is None
    True
    """
    for bom, name in _BOMS:
        if head.startswith(bom):
            return name
    b = np.frombuffer(head[: len(head) - len(head) % 4], dtype=np.uint8)
    if len(b) < 8:
        return None
    zero = (b == 0).reshape(-1, 4).mean(axis=0)  # share of NUL bytes at each position mod 4
    if zero[1:].min() > 0.9 and zero[0] < 0.5:
        return "UTF-32LE"
    if zero[:3].min() > 0.9 and zero[3] < 0.5:
        return "UTF-32BE"
    odd, even = zero[1::2].mean(), zero[0::2].mean()
    if odd > 0.6 and even < 0.1:
        return "UTF-16LE"
    if even > 0.6 and odd < 0.1:
        return "UTF-16BE"
    return None


def _first_bad_utf8(path: Path) -> tuple[int, bytes] | None:
    """The line number (1-based) and the bytes of the first line that is not UTF-8."""
    dec = codecs.getincrementaldecoder("utf-8")()
    with _open(path) as fh:
        for i, line in enumerate(fh, start=1):
            try:
                dec.decode(line)
            except UnicodeDecodeError:
                return i, line
    return None


def not_utf8(path: Path, what: str) -> str | None:
    """The one-line reason why ``path`` is not UTF-8 text, with the fix; ``None`` when it is
    UTF-8 (or plain binary, which the caller reports as it does).

    Parameters
    ----------
    path : Path
        The file (``.gz`` files are looked at decompressed).
    what : str
        How the file is named in the message (``"original file data.csv"``).

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "o.csv"
    >>> _ = p.write_bytes("r\\u00e9gion\\nÎle\\n".encode("latin-1"))
    >>> not_utf8(p, "original file o.csv")[:52]
    'original file o.csv is not UTF-8: line 1 reads as La'
    """
    with _open(path) as fh:
        head = fh.read(HEAD)
    kind = sniff_utf16_32(head)
    if kind is not None:
        mark = "with a byte-order mark" if kind in ("UTF-16", "UTF-32") else "without a byte-order mark"
        return (f"{what} is {kind} text ({mark}), synthguard reads UTF-8: re-save it as UTF-8, e.g. "
                f"iconv -f {kind} -t UTF-8 {path} > {path.stem}-utf8{''.join(path.suffixes)}")
    bad = _first_bad_utf8(path)
    if bad is None:
        return None
    line_no, line = bad
    if b"\x00" in line:
        return None  # binary: not a text file in some other encoding
    text = line.decode("cp1252", errors="replace").rstrip("\r\n")
    shown = text if len(text) <= 60 else text[:57] + "..."
    return (f"{what} is not UTF-8: line {line_no} reads as Latin-1 / Windows-1252 text ({shown!r}); "
            f"re-save it as UTF-8, e.g. iconv -f WINDOWS-1252 -t UTF-8 {path} > "
            f"{path.stem}-utf8{''.join(path.suffixes)}")
