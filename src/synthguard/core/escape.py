"""Names and values made safe for the format they are written in: CSV cells a spreadsheet opens,
Markdown a viewer renders, text a terminal prints.

Column names and category values come from the user's files and can be anything: ``=HYPERLINK(...)``,
``</code><script>...</script>``, ``| pipe``, a newline, an escape sequence. Every writer passes them
through one function here; none is dropped or reworded, each is written so it reads as the text it is.

CSV (OWASP "CSV injection")
    A cell or header that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is
    prefixed with a single quote (``'=1+1``), which spreadsheets show as text and never run. A
    *number* is not a formula and is written as it is: a cell that is a plain decimal number
    (``-3.5``, ``+2``, ``-1e-05``) or ``inf`` / ``-inf`` / ``nan`` as pandas writes them. Excel,
    LibreOffice and Google Sheets read ``-3.5`` as the number -3.5; prefixing it would turn every
    negative number into text and break sums, for no protection (a formula needs more than a
    sign and digits). Numeric columns are therefore left untouched, and a text cell is judged by
    its text only, whatever its column's type.
Markdown
    :func:`md_escape` writes a value as literal text: ``<``, ``>`` and ``&`` as entities (no raw
    HTML can start), Markdown's punctuation backslash-escaped (no emphasis, link, code span or
    table cell can start or end inside a name), a leading block marker escaped, and line breaks
    and other control characters as visible escapes (``\\n``), so a value never starts a new block.
    :func:`md_code` puts a plain identifier in a code span and anything else through
    :func:`md_escape`. :func:`md_inline_html` turns such a line back into HTML.
Terminal
    :func:`terminal_safe` shows control characters (escape sequences, carriage returns, C1 codes)
    and Unicode direction overrides as ``\\x1b``-style escapes, so a name cannot move the cursor,
    recolour or reorder what the terminal shows.
"""

from __future__ import annotations

import html
import re
from typing import Any

#: First characters that make a spreadsheet read a cell as a formula (OWASP).
CSV_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
# a plain number, as a spreadsheet reads one and as pandas writes floats
_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?inf|nan"
_NUMBER_RE = re.compile(_NUMBER)


def csv_formula(text: str) -> bool:
    """Whether a spreadsheet would read the CSV cell ``text`` as a formula.

    Examples
    --------
    >>> [csv_formula(t) for t in ("=1+1", "@sex", "-3.5", "-1e-05", "-x", "a=b", "")]
    [True, True, False, False, True, False, False]
    """
    return bool(text) and text[0] in CSV_TRIGGERS and _NUMBER_RE.fullmatch(text) is None


def _safe_labels(labels: Any) -> list[str]:
    out = []
    for c in labels:  # column names: a handful, not rows
        s = str(c)
        out.append("'" + s if csv_formula(s) else s)
    return out


def csv_safe(frame: Any) -> Any:
    """A copy of ``frame`` whose headers and text cells no spreadsheet runs as a formula.

    Numeric, boolean and datetime columns are returned as they are; in every other column, a cell
    whose text begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return and is not a
    plain number gets a leading single quote. Missing values stay missing. The input is not
    modified.

    Parameters
    ----------
    frame : DataFrame
        The table to write.

    Returns
    -------
    DataFrame
        The same table with neutralised headers and cells.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"@who": ["=HYPERLINK(\\"http://x\\")", "-", "-2.5"], "v": [-1.0, 2, 3]})
    >>> out = csv_safe(df)
    >>> list(out.columns), out.iloc[:, 0].tolist(), out["v"].tolist()
    (["'@who", 'v'], ['\\'=HYPERLINK("http://x")', "'-", '-2.5'], [-1.0, 2.0, 3.0])
    """
    import pandas as pd

    out = frame.copy(deep=False)
    for i in range(out.shape[1]):
        col = out.iloc[:, i]
        kind = getattr(col.dtype, "kind", "O")
        if kind in "biufcmM" or isinstance(col.dtype, pd.DatetimeTZDtype):
            continue
        text = col.astype("string")
        risky = (text.str.slice(0, 1).isin(CSV_TRIGGERS)
                 & ~text.str.fullmatch(_NUMBER).fillna(False)).fillna(False).to_numpy(dtype=bool)
        if risky.any():
            values = col.astype(object).to_numpy(copy=True)
            values[risky] = ("'" + text[risky]).astype(object).to_numpy()
            out.isetitem(i, values)
    out.columns = _safe_labels(out.columns)
    return out


_CONTROL = {**{c: f"\\x{c:02x}" for c in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0))},
            0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"}
# Unicode direction overrides and isolates (they reorder what is displayed)
_BIDI = {c: f"\\u{c:04x}" for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F)}
_TERMINAL = str.maketrans({**_CONTROL, **_BIDI})
_TERMINAL_KEEP_LINES = {k: v for k, v in _TERMINAL.items() if k not in (0x0A, 0x09)}


def terminal_safe(text: Any, keep_lines: bool = False) -> str:
    """``text`` with control characters and direction overrides shown as escapes.

    Parameters
    ----------
    text : Any
        What to print (``str()`` of it).
    keep_lines : bool
        Keep newlines and tabs (for text laid out by the program, e.g. a table).

    Examples
    --------
    >>> terminal_safe("age\\x1b[2J\\r")
    'age\\\\x1b[2J\\\\r'
    """
    s = str(text)
    if s.isprintable():
        return s
    return s.translate(_TERMINAL_KEEP_LINES if keep_lines else _TERMINAL)


_MD_PUNCT = re.compile(r"([\\`*\[\]|~#{}])")
_MD_UNDERSCORE = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")  # not inside a word
_MD_LEADING = re.compile(r"^(?:([-+=])|(\d+)([.)]))")
_MD_CODE_OK = re.compile(r"[\w.:/@+=,%-]+(?: [\w.:/@+=,%-]+)*")


def md_escape(value: Any) -> str:
    """``value`` as literal Markdown text: no HTML, emphasis, link, code span, table cell or new
    block can start inside it.

    Examples
    --------
    >>> md_escape("</code><script>alert(1)</script>")
    '&lt;/code&gt;&lt;script&gt;alert(1)&lt;/script&gt;'
    >>> md_escape("| pipe `x` *y* snake_case _z_\\n# h")
    '\\\\| pipe \\\\`x\\\\` \\\\*y\\\\* snake_case \\\\_z\\\\_\\\\n\\\\# h'
    """
    s = str(value)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = _MD_PUNCT.sub(r"\\\1", s)
    s = _MD_UNDERSCORE.sub(r"\\_", s)
    s = _MD_LEADING.sub(lambda m: "\\" + m.group(1) if m.group(1) else m.group(2) + "\\" + m.group(3), s)
    return s.translate(_TERMINAL)


def md_code(value: Any) -> str:
    """``value`` in a code span when it is a plain identifier (letters, digits, ``_ . : / @ + = ,
    % -``, single spaces), else as :func:`md_escape` text (a code span cannot escape anything).

    Examples
    --------
    >>> md_code("exact_matches"), md_code("a`b<c>")
    ('`exact_matches`', 'a\\\\`b&lt;c&gt;')
    """
    s = str(value)
    return f"`{s}`" if _MD_CODE_OK.fullmatch(s) else md_escape(s)


_MD_LITERAL = re.compile(r"\\([!-/:-@\[-`{-~])|&(amp|lt|gt|quot|#39);")


def md_inline_html(text: str) -> str:
    """One line of Markdown written with :func:`md_escape` / :func:`md_code` as HTML: escapes and
    entities become the characters they stand for (HTML-escaped), ``**bold**`` and code spans
    become ``<b>`` and ``<code>``.

    Examples
    --------
    >>> md_inline_html("Level **high** for `age`: \\\\*not\\\\* &lt;b&gt;")
    'Level <b>high</b> for <code>age</code>: *not* &lt;b&gt;'
    """
    literals: list[str] = []

    def keep(m: re.Match[str]) -> str:
        literals.append(m.group(1) if m.group(1) is not None else html.unescape(f"&{m.group(2)};"))
        return f"\x00{len(literals) - 1}\x00"

    s = _MD_LITERAL.sub(keep, str(text).replace("\x00", ""))
    s = html.escape(s)
    s = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", s)
    s = re.sub(r"`(.+?)`", r"<code>\1</code>", s)
    return re.sub("\x00(\\d+)\x00", lambda m: html.escape(literals[int(m.group(1))]), s)
