"""Several releases of the same original, evaluated alike and ranked on privacy and utility.

Ranking rule (simple and stated in every output): for each metric that produced a number for at
least two releases, the releases are ranked from safest (privacy metrics, by their direction) or
most useful (fidelity/utility metrics) to worst, ties sharing the mean rank. A release's privacy
score is its mean rank over the privacy metrics, its utility score the mean over the utility
metrics; rank 1 is best. High-risk counts and the verdict of each release are shown alongside,
because a mean rank can hide one severe leak.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from ..core.format import fmt_number
from ..core.io import atomic_write_text
from ..core.results import to_jsonable
from ..run.verdict import NON_PRIVACY_FAMILIES
from .html import badge, page, table
from .report import Report

UTILITY_FAMILIES = {"fidelity", "utility"}
RULE = ("rank 1 = best; per metric, releases are ranked by value in the metric's direction (ties "
        "share the mean rank); the score is the mean rank over privacy (resp. fidelity/utility) "
        "metrics")


def _ranks(values: dict[str, float], best_high: bool) -> dict[str, float]:
    order = sorted(values, key=lambda k: values[k], reverse=best_high)
    out: dict[str, float] = {}
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in order[i:j + 1]:
            out[k] = (i + j) / 2 + 1
        i = j + 1
    return out


class Comparison:
    """Reports of several releases and their ranking (see the module docstring)."""

    def __init__(self, reports: Mapping[str, Report]) -> None:
        self.reports = dict(reports)
        self.ranking = self._rank()

    def _rank(self) -> list[dict[str, Any]]:
        names = list(self.reports)
        metric_names: list[str] = []
        for rep in self.reports.values():
            for m in rep.metrics:
                if m not in metric_names:
                    metric_names.append(m)
        priv: dict[str, list[float]] = {n: [] for n in names}
        util: dict[str, list[float]] = {n: [] for n in names}
        for m in metric_names:
            vals: dict[str, float] = {}
            family = direction = None
            for n in names:
                res = self.reports[n].result(m) if m in self.reports[n] else None
                if res is None or res.value is None:
                    continue
                try:
                    v = float(res.value)
                except (TypeError, ValueError):
                    continue
                if v != v:  # NaN
                    continue
                vals[n] = v
                family, direction = res.family, res.direction
            if len(vals) < 2 or direction is None:
                continue
            best_high = direction.startswith("higher")
            ranks = _ranks(vals, best_high)
            target = util if family in UTILITY_FAMILIES else (
                priv if family not in NON_PRIVACY_FAMILIES else None)
            if target is None:
                continue
            for n, r in ranks.items():
                target[n].append(r)
        rows = []
        for n in names:
            v = self.reports[n].verdict
            rows.append({"release": n,
                         "privacy_score": (sum(priv[n]) / len(priv[n])) if priv[n] else None,
                         "privacy_metrics_ranked": len(priv[n]),
                         "utility_score": (sum(util[n]) / len(util[n])) if util[n] else None,
                         "utility_metrics_ranked": len(util[n]),
                         "high_risk_metrics": v.counts.get("high", 0), "overall_risk": v.level,
                         "driven_by": v.driver})
        for key, rank_key in (("privacy_score", "privacy_rank"), ("utility_score", "utility_rank")):
            scored = {r["release"]: r[key] for r in rows if r[key] is not None}
            ranks = _ranks(scored, best_high=False) if scored else {}
            for r in rows:
                r[rank_key] = ranks.get(r["release"])
        rows.sort(key=lambda r: (r["privacy_rank"] if r["privacy_rank"] is not None else 1e9,
                                 r["utility_rank"] if r["utility_rank"] is not None else 1e9))
        return rows

    def metric_matrix(self) -> list[dict[str, Any]]:
        """One row per metric: ``{metric, family, direction, <release>: {value, risk_level, status}}``.

        A release's cell also carries ``baseline`` (value), ``ci`` and ``n`` when its metric ran.
        """
        out = []
        seen: list[str] = []
        for rep in self.reports.values():
            for m in rep.metrics:
                if m not in seen:
                    seen.append(m)
        for m in seen:
            row: dict[str, Any] = {"metric": m, "family": None, "direction": None}
            for n, rep in self.reports.items():
                if m not in rep:
                    row[n] = {"value": None, "risk_level": None, "status": "absent"}
                    continue
                res = rep.result(m)
                if res is not None:
                    row["family"], row["direction"] = res.family, res.direction
                    row[n] = {"value": to_jsonable(res.value), "risk_level": res.risk_level,
                              "status": "ok",
                              "baseline": (to_jsonable(res.baseline.value)
                                           if res.baseline is not None else None),
                              "ci": to_jsonable(res.ci), "n": to_jsonable(res.n)}
                else:
                    row[n] = {"value": None, "risk_level": None, "status": rep.status(m)}
            out.append(row)
        return out

    def to_dict(self) -> dict[str, Any]:
        """``{"rule", "ranking", "metrics", "reports": {release: report JSON}}``."""
        return {"rule": RULE, "ranking": to_jsonable(self.ranking), "metrics": self.metric_matrix(),
                "reports": {n: r.to_dict() for n, r in self.reports.items()}}

    def to_json(self, path: str | Path | None = None, *, indent: int = 2) -> str:
        text = json.dumps(self.to_dict(), indent=indent, allow_nan=False)
        if path is not None:
            atomic_write_text(path, text + "\n")
        return text

    def __repr__(self) -> str:
        ranks = "; ".join(f"{r['release']}: {str(r['overall_risk']).upper()}" for r in self.ranking)
        return f"<Comparison of {len(self.reports)} release(s): {ranks}>"

    def _repr_html_(self) -> str:
        """Notebook display: the ranking, then each release's decision block (styles scoped to the
        view, advice in the Python API's words)."""
        from .html import SCOPE, decision_html, scoped_css

        rows = [[escape(r["release"]), escape(fmt_number(r["privacy_rank"])), badge(r["overall_risk"]),
                 escape(fmt_number(r["utility_rank"]))] for r in self.ranking]
        parts = [f'<div class="{SCOPE}"><style>{scoped_css()}</style>',
                 table(["release", "privacy rank", "overall risk", "utility rank"], rows, raw=True)]
        for name, rep in self.reports.items():
            parts.append(f"<h3>{escape(name)}</h3>" + decision_html(rep, how="api"))
        return "".join(parts) + "</div>"

    def to_console(self, width: int | None = None) -> str:
        """Ranking and metric matrix wrapped to ``width`` (default: the terminal's width)."""
        from .console import terminal_width, wrap

        width = width or terminal_width()
        names = list(self.reports)
        head = ["release", "privacy rank", "privacy score", "high", "overall risk", "driven by",
                "utility rank", "utility score"]
        rows = [[r["release"], fmt_number(r["privacy_rank"]), fmt_number(r["privacy_score"]),
                 str(r["high_risk_metrics"]), r["overall_risk"], str(r["driven_by"] or "-"),
                 fmt_number(r["utility_rank"]), fmt_number(r["utility_score"])] for r in self.ranking]
        out = [_text_table(head, rows, width), ""] + wrap(f"({RULE})", width) + [""]
        mrows = []
        for row in self.metric_matrix():
            cells = [row["metric"]]
            for n in names:
                c = row[n]
                cells.append(f"{fmt_number(c['value'])} {_context(c)} ({c['risk_level']})"
                             if c["status"] == "ok" else c["status"])
            mrows.append(cells)
        out.append(_text_table(["metric", *names], mrows, width))
        warns = [(n, w) for n, r in self.reports.items() for w in r.header.get("warnings") or ()]
        if warns:
            out.append("")
            for n, w in warns:
                out += wrap(f"warning ({n}): {w}", width, "  ")
        return "\n".join(out)

    def to_html(self, path: str | Path | None = None, *, title: str = "synthguard comparison") -> str:
        """A self-contained page: ranking, metric-by-release matrix, inputs and configuration."""
        names = list(self.reports)
        parts = [f"<h1>{escape(title)}</h1>",
                 f'<p class="sub">{len(names)} release(s) of the same original</p>', "<h2>Ranking</h2>"]
        rows = [[escape(r["release"]), escape(fmt_number(r["privacy_rank"])),
                 escape(fmt_number(r["privacy_score"])), escape(str(r["high_risk_metrics"])),
                 badge(r["overall_risk"]), escape(str(r["driven_by"] or "-")),
                 escape(fmt_number(r["utility_rank"])), escape(fmt_number(r["utility_score"]))]
                for r in self.ranking]
        parts.append(table(["release", "privacy rank", "privacy score", "high-risk metrics",
                            "overall risk", "driven by", "utility rank", "utility score"], rows, raw=True))
        parts.append(f'<p class="small">{escape(RULE)}</p><h2>Metrics by release</h2>')
        mrows = []
        for row in self.metric_matrix():
            cells = [f"<b>{escape(row['metric'])}</b><br><span class=\"small\">"
                     f"{escape(str(row['family'] or ''))} &middot; {escape(str(row['direction'] or ''))}</span>"]
            for n in names:
                c = row[n]
                cells.append(f"{escape(fmt_number(c['value']))} {badge(c['risk_level'])}"
                             f"<br><span class=\"small\">{escape(_context(c))}</span>"
                             if c["status"] == "ok" else badge(c["status"]))
            mrows.append(cells)
        parts.append(table(["metric", *names], mrows, raw=True))
        parts.append("<h2>Inputs</h2>")
        in_rows = []
        for n, rep in self.reports.items():
            for role, fp in (rep.header.get("inputs") or {}).items():
                if isinstance(fp, Mapping):
                    in_rows.append([n, role, fmt_number(fp.get("rows")), str(fp.get("sha256", ""))[:16],
                                    str(fp.get("source") or "")])
        parts.append(table(["release", "role", "rows", "sha256 (first 16)", "source"], in_rows))
        first = next(iter(self.reports.values()), None)
        if first is not None:
            parts.append("<h2>Configuration used</h2><pre>"
                         + escape(json.dumps(to_jsonable(first.header.get("config", {})), indent=2))
                         + "</pre>")
        text = page(title, "".join(parts))
        if path is not None:
            atomic_write_text(path, text)
        return text


def _context(cell: Mapping[str, Any]) -> str:
    """``ci [lo, hi] n=.. base=..`` for a matrix cell (only the parts the result has)."""
    parts = []
    if cell.get("ci") is not None:
        parts.append(f"ci {fmt_number(cell['ci'])}")
    if cell.get("n") is not None:
        parts.append(f"n={fmt_number(cell['n'])}")
    if cell.get("baseline") is not None:
        parts.append(f"base={fmt_number(cell['baseline'])}")
    return " ".join(parts)


def _text_table(headers: Sequence[str], rows: Sequence[Sequence[str]], width: int = 10_000) -> str:
    """An aligned table; when wider than ``width``, the widest columns wrap (words whole, so a
    number is never cut)."""
    import textwrap

    widths = [max([len(h)] + [len(str(r[i])) for r in rows]) for i, h in enumerate(headers)]
    longest = [max([len(w) for h in [headers[i]] + [str(r[i]) for r in rows] for w in str(h).split()]
                   or [1]) for i in range(len(headers))]
    while sum(widths) + 2 * (len(widths) - 1) > width:
        i = max(range(len(widths)), key=lambda k: widths[k] - longest[k])
        if widths[i] <= longest[i]:
            break  # every column at its longest word: nothing left to wrap
        widths[i] -= 1
    if sum(widths) + 2 * (len(widths) - 1) > width:
        # too many columns for the terminal: one block per row, "header: value" lines
        out: list[str] = []
        for r in rows:
            for h, c in zip(headers, r, strict=True):
                out += textwrap.wrap(f"{h}: {c}", width, subsequent_indent="    ",
                                     break_long_words=False, break_on_hyphens=False) or [""]
            out.append("")
        return "\n".join(out).rstrip()

    def block(cells: Sequence[str]) -> list[str]:
        cols = [textwrap.wrap(str(c), w, break_long_words=False, break_on_hyphens=False) or [""]
                for c, w in zip(cells, widths, strict=True)]
        return ["  ".join((col[k] if k < len(col) else "").ljust(w)
                          for col, w in zip(cols, widths, strict=True)).rstrip()
                for k in range(max(len(c) for c in cols))]

    lines = block(headers) + ["  ".join("-" * w for w in widths)]
    for r in rows:
        lines += block(r)
    return "\n".join(lines)
