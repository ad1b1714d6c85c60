"""Console text as tests read it: the message, never the lines the console wrapped it into.

The console wraps every paragraph to the terminal's width (``$COLUMNS``, else the terminal, else
100 columns), and a path or a column name moves the breaks: a phrase split over two lines on one
machine is whole on another. A test of console text asserts on :func:`flat` of it (both for what
must and what must not appear), on the JSON report, or on a rendering with an explicit width.
"""

from __future__ import annotations


def flat(text: object) -> str:
    """``text`` with every run of whitespace (line breaks, the indents of wrapped lines) as one space.

    Examples
    --------
    >>> flat("warning: 'income' holds 3\\n      value(s) beyond +/-1e300")
    "warning: 'income' holds 3 value(s) beyond +/-1e300"
    """
    return " ".join(str(text).split())
