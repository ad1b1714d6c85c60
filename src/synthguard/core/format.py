"""How numbers are written in every report (console, HTML, dossier, records)."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["fmt_number"]


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
