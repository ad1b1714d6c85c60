"""Plain-text summary table for the terminal."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.escape import terminal_safe
from ..core.format import fmt_number

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


def render_decision(report: Any, width: int = 100) -> str:
    """The decision block for the terminal: one paragraph per risk, then what to do."""
    from .risks import no_control_reading, risks_of

    d = report.to_dict()
    v = d.get("verdict") or {}
    lines = [f"DECISION: {str(v.get('level', '?')).upper()}  (release: {v.get('release_type')}, "
             f"materiality {fmt_number(100 * float(v.get('materiality') or 0.01))} % of training "
             f"{v.get('unit', 'records')})"]
    for r in risks_of(d):
        head = f"  {r['title']}: {str(r['level']).upper()}. "
        lines += wrap(head + str(r.get("summary") or ""), width, "      ", "")
        lim = _limit_text(r) if r["risk"] == "presence" or r["level"] == "inconclusive" else ""
        if lim:
            lines += wrap("detection limit: " + lim, width, "      ", "      ")
        if r.get("settle"):
            lines += wrap("to decide: " + str(r["settle"]), width, "      ", "      ")
        for c in r.get("coarsening") or ():  # measured: the driver coarsened and re-tested
            lines += wrap("re-tested: " + str(c["text"]), width, "      ", "      ")
    reading = no_control_reading(d)
    if reading:
        lines += wrap("Without a control: " + reading, width, "  ", "  ")
    todo = what_to_do(d)
    if todo:
        lines.append("WHAT TO DO:")
        for t in todo:
            lines += wrap("- " + t, width, "    ", "  ")
    return "\n".join(lines)


def _family(t: str) -> str:
    from ..data.leaks import FAMILY_NAMES

    return FAMILY_NAMES.get(t, t)


def _limit_text(r: Any) -> str:
    """Detection limits in one short line: ``exact copies 0.6 %, near-copies 0.6 %, ...``."""
    lims = r.get("detection_limits") or {}
    parts = []
    for t, x in lims.items():
        if not isinstance(x, dict):
            continue
        v = x.get("value")
        parts.append(f"{_family(t)} {fmt_number(100 * float(v))} %" if v is not None
                     else f"{_family(t)} not detectable here")
    return ", ".join(parts) + (" of the training records (80 % power, measured by injecting the "
                               "leak)" if parts else "")


def what_to_do(d: Any) -> list[str]:
    """Plain actions from a report's JSON: rows to drop, columns to coarsen, how to decide."""
    from .records import coarsening, normalise_records
    from .risks import card_of, control_size_needed, risks_of, verbatim_release_rows

    out = []
    copies = verbatim_release_rows(d)
    if copies and copies[0]:
        out.append(f"Drop the {copies[0]} release rows that are verbatim training rows: "
                   "'--records-out rows.csv' (or report.records(original, synthetic)) lists every "
                   "one with the training row it copies.")
    counted = {n for n, e in (d.get("metrics") or {}).items()  # their copies are said above
               if getattr(getattr(card_of((e or {}).get("metric") or n), "records", None), "count", None)}
    drops = {r["release_row"] for r in normalise_records(d) if r["action"] == "drop"
             and r["metric"] not in counted}
    if drops:
        out.append(f"Drop the {len(drops)} further release row(s) at distance 0 from a training "
                   "row (action 'drop' in --records-out).")
    near = {r["release_row"] for r in normalise_records(d) if r["action"] == "review"
            and r["risk"] == "presence" and r["release_row"] is not None}
    if near and any(r["risk"] == "presence" and r["level"] in ("high", "medium")
                    for r in risks_of(d)):
        out.append(f"Review the {len(near)} release row(s) listed as near matches of training rows "
                   "(action 'review', risk 'presence' in --records-out).")
    measured: dict[str, list[Any]] = {}
    for r in risks_of(d):
        for m in r.get("coarsening") or ():
            measured.setdefault(m["column"], []).append(m)
    for c in coarsening(d):
        done = measured.pop(c["column"], None)
        if done:  # re-tested by the run: say what the coarsening did, in the verdict's words
            out.append(f"Column {c['column']!r} ({c['sdtype']}) singles people out in "
                       f"{c['queries']} successful attack queries: " + _retested(done))
            continue
        out.append(f"Column {c['column']!r} ({c['sdtype']}) singles people out in {c['queries']} "
                   f"successful attack queries: {c['suggestion']}, then re-run the evaluation.")
    for col, done in measured.items():
        out.append(f"Column {col!r} ({done[0]['sdtype']}) drives "
                   + " and ".join(m["text"].split(":")[0] for m in done) + ": " + _retested(done))
    if "control" not in (d.get("inputs") or {}):
        need = control_size_needed(d)
        out.append("No control table: hold out real rows the generator never saw and pass them "
                   "with --control" + (f" (about {need:,} training and {need:,} control rows give "
                                       "a detection limit of 1 %)" if need else "") + ".")
    elif any(r["level"] == "inconclusive" for r in risks_of(d)):
        out.append("Inconclusive risks: evaluate on more training and control rows (see 'to "
                   "decide' above).")
    return out


def _retested(done: list[Any]) -> str:
    """What coarsening a driving column did, as measured by the re-test."""
    helps = all(m["level_after"] not in ("high", "medium") for m in done)
    head = ("release it coarsened (" if helps else "coarsening it alone does not remove the "
            "excess (") + f"{done[0]['coarsening']}). Re-tested: "
    return head + "; ".join(m["text"] for m in done) + "."


def render_verdict(verdict: Any, width: int = 100) -> str:
    """The verdict as a few plain lines: level, why, and the detection limit."""
    import textwrap

    width = max(20, width)

    v = verdict.to_dict() if hasattr(verdict, "to_dict") else dict(verdict)
    head = (f"VERDICT: {str(v['level']).upper()}  (rule: {v['rule']}, materiality "
            f"{fmt_number(100 * v['materiality'])} % of training {v.get('unit', 'records')}, release: "
            f"{v['release_type']})")
    lines = wrap(head, width, "  ", "")
    lines += textwrap.wrap(terminal_safe(v.get("summary") or "", keep_lines=True), width=width, initial_indent="  ",
                           subsequent_indent="  ", break_long_words=False,
                           break_on_hyphens=False)
    limit = v.get("detection_limit")
    if limit and limit.get("text") and limit["text"] not in str(v.get("summary") or ""):
        lines += textwrap.wrap("detection limit: " + terminal_safe(limit["text"], keep_lines=True), width=width, initial_indent="  ",
                               subsequent_indent="  ", break_long_words=False,
                           break_on_hyphens=False)
    if v.get("not_assessed"):
        lines += textwrap.wrap("not assessed (no test against the control; informative only): "
                               + terminal_safe(", ".join(v["not_assessed"])), width=width, initial_indent="  ",
                               subsequent_indent="  ", break_long_words=False,
                           break_on_hyphens=False)
    return "\n".join(lines)
