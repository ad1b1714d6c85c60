"""How numbers are written in every report (console, HTML, dossier, records)."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["fmt_number", "pct", "row_ranges"]


def fmt_number(x: Any, digits: int = 4) -> str:
    """Compact number formatting; ``-`` for missing.

    Examples
    --------
    >>> fmt_number(0.000123), fmt_number(12.3456789), fmt_number(None), fmt_number((0.1, 0.25))
    ('1.230e-04', '12.35', '-', '[0.1, 0.25]')
    """
    if x is None:
        return "-"
    if isinstance(x, (list, tuple)) and len(x) == 2:
        return f"[{fmt_number(x[0], 3)}, {fmt_number(x[1], 3)}]"
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int):
        return str(x)
    try:
        f = float(x)
    except (TypeError, ValueError):
        return str(x)
    if math.isnan(f):
        return "nan"
    if f != 0 and (abs(f) < 1e-3 or abs(f) >= 1e5):
        return f"{f:.{digits - 1}e}"
    return f"{f:.{digits}g}"


def row_ranges(rows: Any, limit: int = 60) -> str:
    """Row numbers as runs: ``[0, 1, 2, 5, 7, 8]`` -> ``"0-2, 5, 7-8"`` (at most ``limit`` runs,
    then how many more).

    Examples
    --------
    >>> row_ranges([8, 0, 1, 2, 5, 7])
    '0-2, 5, 7-8'
    """
    runs: list[list[int]] = []
    for r in sorted(int(x) for x in rows):
        if runs and r == runs[-1][1] + 1:
            runs[-1][1] = r
        else:
            runs.append([r, r])
    text = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs[:limit])
    return text + (f", \u2026 ({len(runs) - limit} more runs)" if len(runs) > limit else "")


def pct(x: Any, digits: int = 1) -> str:
    """A share as a percentage: ``0.4012`` -> ``"40.1 %"``; shares below 1 % keep two significant
    digits (``"0.34 %"``); ``"n/a"`` for a missing value.

    Examples
    --------
    >>> pct(0.4012), pct(0.0034), pct(0), pct(None)
    ('40.1 %', '0.34 %', '0 %', 'n/a')
    """
    if x is None or isinstance(x, bool):
        return "n/a"
    try:
        v = 100.0 * float(x)
    except (TypeError, ValueError):
        return "n/a"
    if math.isnan(v):
        return "n/a"
    if v == 0:
        return "0 %"
    if abs(v) < 1:
        return f"{v:.2g} %"
    return f"{v:.{digits}f} %"
