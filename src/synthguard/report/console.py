"""Plain-text summary table for the terminal."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


def fmt_number(x: Any, digits: int = 4) -> str:
    """Compact number formatting; ``-`` for missing."""
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


def render_table(rows: Sequence[dict[str, Any]], width: int = 120) -> str:
    """Render summary rows (see ``Report.summary_rows``) as an aligned text table."""
    headers = ["metric", "status", "value", "baseline", "ci", "n", "risk", "note"]
    cells = [[str(r["metric"]), str(r["status"]), fmt_number(r["value"]), fmt_number(r["baseline"]),
              fmt_number(r["ci"]), fmt_number(r["n"]), str(r["risk"]), str(r["note"] or "")] for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h) for i, h in enumerate(headers)]
    fixed = sum(widths[:-1]) + 2 * (len(headers) - 1)
    widths[-1] = max(10, min(widths[-1], width - fixed))
    def line(values: Sequence[str]) -> str:
        parts = [v.ljust(w) if i < len(values) - 1 else v[:w] for i, (v, w) in enumerate(zip(values, widths, strict=True))]
        return "  ".join(parts).rstrip()
    out = [line(headers), line(["-" * w for w in widths])]
    out += [line(c) for c in cells]
    return "\n".join(out)


def render_verdict(verdict: Any, width: int = 100) -> str:
    """The verdict as a few plain lines: level, why, and the detection limit."""
    import textwrap

    v = verdict.to_dict() if hasattr(verdict, "to_dict") else dict(verdict)
    head = (f"VERDICT: {str(v['level']).upper()}  (rule: {v['rule']}, materiality "
            f"{fmt_number(100 * v['materiality'])} % of training {v.get('unit', 'records')}, release: "
            f"{v['release_type']})")
    lines = [head]
    lines += textwrap.wrap(str(v.get("summary") or ""), width=width, initial_indent="  ",
                           subsequent_indent="  ")
    limit = v.get("detection_limit")
    if limit and limit.get("text") and limit["text"] not in str(v.get("summary") or ""):
        lines += textwrap.wrap("detection limit: " + limit["text"], width=width, initial_indent="  ",
                               subsequent_indent="  ")
    if v.get("not_assessed"):
        lines += textwrap.wrap("not assessed (no test against the control; informative only): "
                               + ", ".join(v["not_assessed"]), width=width, initial_indent="  ",
                               subsequent_indent="  ")
    return "\n".join(lines)
