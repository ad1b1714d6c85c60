"""Plain-text summary table for the terminal."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.escape import terminal_safe
from ..core.format import fmt_number
from ..run import wording

__all__ = ["fmt_number", "render_decision", "render_table", "render_verdict", "terminal_width", "wrap"]


def terminal_width(default: int = 100) -> int:
    """The terminal's width in columns (``$COLUMNS`` first; ``default`` when not a terminal)."""
    import shutil

    return max(40, shutil.get_terminal_size((default, 24)).columns)


def wrap(text: str, width: int, indent: str = "", first: str | None = None) -> list[str]:
    """``text`` wrapped to ``width`` columns; words (numbers included) are never broken."""
    import textwrap

    first = indent if first is None else first
    return textwrap.wrap(terminal_safe(text, keep_lines=True), width=max(20, width), initial_indent=first,
                         subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False) or [first.rstrip()]


def render_table(rows: Sequence[dict[str, Any]], width: int = 120) -> str:
    """Render summary rows (see ``Report.summary_rows``) as an aligned text table.

    The note column wraps within ``width``; when the other columns leave it fewer than 24
    columns, each note goes on its own indented lines under its row. Nothing is cut.
    """
    headers = ["metric", "status", "value", "baseline", "ci", "n", "risk", "note"]
    cells = [[terminal_safe(r["metric"]), str(r["status"]), fmt_number(r["value"]), fmt_number(r["baseline"]),
              fmt_number(r["ci"]), fmt_number(r["n"]), str(r["risk"]), terminal_safe(r["note"] or "", keep_lines=True)] for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h) for i, h in enumerate(headers)]
    fixed = sum(widths[:-1]) + 2 * (len(headers) - 1)
    room = width - fixed
    below = room < 24
    if fixed - 2 > width:  # too narrow for columns: one block per metric
        out = []
        for c in cells:
            out += wrap(f"{c[0]}  {c[1]}  risk {c[6]}", width, "    ", "")
            out += wrap(f"value {c[2]}, baseline {c[3]}, CI {c[4]}, n {c[5]}", width, "    ",
                        "    ")
            if c[7]:
                out += wrap(c[7], width, "    ")
        return "\n".join(out)

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.ljust(w) for v, w in zip(values, widths[:-1], strict=False)).rstrip()

    out = [line(headers[:-1]) + ("" if below else "  note"),
           line(["-" * w for w in widths[:-1]]) + ("" if below else "  " + "-" * min(room, widths[-1]))]
    for c in cells:
        if below:
            out.append(line(c[:-1]))
            if c[-1]:
                out += wrap(c[-1], width, "    ")
            continue
        notes = wrap(c[-1], room) if c[-1] else [""]
        out.append((line(c[:-1]).ljust(fixed) + notes[0]).rstrip())
        out += [" " * fixed + n for n in notes[1:]]
    return "\n".join(out)


def render_decision(report: Any, width: int = 100, how: str = "both") -> str:
    """The decision block for the terminal: one paragraph per risk, the detection limits of the
    risks that do not alarm, then what to do. Every sentence is the verdict's or
    :mod:`synthguard.run.wording`'s."""
    from .records import facts
    from .risks import risk_rows

    model = report.model
    v = model.verdict
    f = facts(model, how)
    risks = risk_rows(model)
    lines = wrap(f"DECISION: {str(v.level).upper()}  ({wording.settings(v)})", width, "  ", "")
    if model.header.get("sample"):
        lines += wrap(wording.sentence("Sampled: " + wording.sample_line(model.header["sample"])),
                      width, "    ", "  ")
    for r, text in zip(risks, wording.risk_readings(risks, f), strict=True):
        lines += wrap(f"{r.title}: {str(r.level).upper()}. {text}", width, "      ", "  ")
        for extra in (wording.settle(r), wording.dropped(r),
                      *(wording.retest(r.title, c) for c in r.get("coarsening") or ())):
            if extra:
                lines += wrap(extra, width, "      ", "      ")
    for limits in wording.decision_limits(risks):
        lines += wrap(limits, width, "    ", "  ")
    reading = wording.no_control(f)
    if reading:
        lines += wrap("Without a control: " + reading, width, "    ", "  ")
    todo = wording.what_to_do(risks, v.level, f)
    if todo:
        lines.append("WHAT TO DO:")
        for t in todo:
            lines += wrap("- " + t, width, "    ", "  ")
    return "\n".join(lines)


def render_verdict(verdict: Any, width: int = 100) -> str:
    """The verdict as a few plain lines: level, its rule and settings, its summary, and the
    privacy metrics that only inform."""
    width = max(20, width)
    head = f"VERDICT: {str(verdict.level).upper()}  (rule: {verdict.rule.rule}, {wording.settings(verdict)})"
    lines = wrap(head, width, "  ", "")
    lines += wrap(wording.sentence(verdict.summary), width, "  ", "  ")
    info = wording.informative_line(list(verdict.not_assessed))
    if info:
        lines += wrap(info, width, "  ", "  ")
    return "\n".join(lines)
