"""A self-contained HTML page for one :class:`~synthguard.report.Report`, and its notebook view.

One file, no JavaScript, no external fonts, images or style sheets: charts are inline SVG drawn by
:mod:`synthguard.report.svg`, and a Content-Security-Policy forbids every network fetch, so the page
renders identically offline. The page reads the report's typed model only: the verdict's rows, each
metric's typed presentation data (``charts``, ``sections``, ``headline``) and its card, never a
metric's name or its ``details``; every sentence about the verdict is :mod:`synthguard.run.wording`'s.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from ..core.format import fmt_number, pct
from ..core.results import Chart, MetricResult, Section, to_jsonable
from ..run import wording
from ..run.verdict import NON_PRIVACY_FAMILIES
from . import svg
from .risks import evidence_levels

CSS = """
:root{--fg:#1b1f23;--muted:#5b6570;--line:#d9dee3;--bg:#ffffff;--soft:#f5f7f9;
--high:#b3261e;--medium:#b86e00;--low:#1e7b34;--nm:#5b6570}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1120px;margin:0 auto;padding:24px 28px 60px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:34px 0 10px;border-bottom:1px solid var(--line);
padding-bottom:4px}h3{font-size:15px;margin:18px 0 6px}
.sub{color:var(--muted);margin:0 0 18px}
.verdict{border-radius:8px;padding:16px 20px;border:2px solid var(--line);background:var(--soft)}
.verdict.high{border-color:var(--high)}.verdict.medium{border-color:var(--medium)}
.verdict.low{border-color:var(--low)}
.verdict .big{font-size:22px;font-weight:700}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;color:#fff;
background:var(--nm);white-space:nowrap}
.badge.high{background:var(--high)}.badge.medium{background:var(--medium)}.badge.low{background:var(--low)}
.badge.skipped,.badge.error{background:#8a8f95}
table{border-collapse:collapse;width:100%;margin:6px 0 12px;font-size:13px}
th,td{border-bottom:1px solid var(--line);padding:5px 7px;text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600}
td.num,span.num{font-variant-numeric:tabular-nums;white-space:nowrap}
.small{font-size:12px;color:var(--muted)}
.charts{display:flex;flex-wrap:wrap;gap:18px}
.chartbox{flex:1 1 440px;max-width:560px;border:1px solid var(--line);border-radius:6px;padding:6px}
.chartbox.wide{max-width:880px}
svg.chart{width:100%;height:auto;display:block}
svg .ct{font-size:13px;font-weight:600;fill:#1b1f23}svg .tk{font-size:10px;fill:#3b434b}
svg .lb{font-size:11px;fill:#3b434b}svg .ax{stroke:#3b434b;stroke-width:1}
svg .gr{stroke:#e4e8ec;stroke-width:1}
pre{background:var(--soft);border:1px solid var(--line);padding:10px;overflow:auto;font-size:12px;
font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.warn{color:var(--medium)}
details{margin:6px 0}summary{cursor:pointer;padding:3px 0}
footer{margin-top:40px;color:var(--muted);font-size:12px}
.nav{position:sticky;top:0;background:var(--bg);border-bottom:1px solid var(--line);padding:6px 0;
margin-bottom:8px;z-index:2}.nav a{margin-right:16px;color:#0b57d0;text-decoration:none;font-size:13px}
.cards{display:flex;gap:14px;margin:10px 0 14px;flex-wrap:wrap}
.card{flex:1 1 200px;border:1px solid var(--line);border-radius:8px;padding:10px 14px;background:var(--soft)}
.card .big{font-size:22px;font-weight:700}.card.high{border-left:6px solid var(--high)}
.card.medium{border-left:6px solid var(--medium)}.card.low{border-left:6px solid var(--low)}
.card.inconclusive{border-left:6px solid var(--nm)}
section.verdict table{background:var(--bg)}
.retest{margin:4px 0 0 18px;padding:0}
"""

CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src 'none'; "
       "script-src 'none'; connect-src 'none'; base-uri 'none'; form-action 'none'")

#: The class every rule of the notebook view's style sheet is scoped to.
SCOPE = "sg-report"


def scoped_css(css: str = CSS, scope: str = SCOPE) -> str:
    """``css`` with every rule scoped to ``.scope``: the page's ``:root`` and ``body`` rules apply
    to the scope element itself, every other selector to its descendants, so a notebook that shows
    the report keeps its own look.

    Examples
    --------
    >>> scoped_css("body{margin:0}h1,h2{font-size:2px}")
    '.sg-report{margin:0}.sg-report h1,.sg-report h2{font-size:2px}'
    """
    out = []
    for rule in css.replace("\n", "").split("}"):
        if "{" not in rule:
            continue
        sel, body = rule.split("{", 1)
        parts = []
        for one in sel.split(","):
            one = one.strip()
            parts.append(f".{scope}" if one in (":root", "body") else f".{scope} {one}")
        out.append(",".join(parts) + "{" + body + "}")
    return "".join(out)


def page(title: str, body: str, css: str = CSS) -> str:
    """Wrap ``body`` in a complete offline HTML document."""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<link rel=\"icon\" href=\"data:,\">"
            f"<title>{escape(title)}</title><style>{css}</style></head>"
            f"<body><main>{body}</main></body></html>\n")


def badge(level: str | None) -> str:
    lvl = str(level or "unknown")
    cls = lvl if lvl in ("high", "medium", "low", "skipped", "error") else "nm"
    return f'<span class="badge {cls}">{escape(lvl)}</span>'


def describe(name: str) -> str:
    """The registry's one-line description of ``name`` ('' when the metric is not installed)."""
    try:
        from ..registry import get_metric

        return get_metric(name).description or ""
    except Exception:  # noqa: BLE001 - a report must render even for an unknown metric
        return ""


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], raw: bool = False) -> str:
    """An HTML table; cells are escaped unless ``raw``."""
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c if raw else escape(str(c))}</td>" for c in r) + "</tr>"
                   for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _f(x: Any, digits: int = 3) -> str:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return "-"
    if v != v:
        return "-"
    text = f"{v:.{digits}f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text  # no "-0.000"


def _cell(v: Any) -> str:
    """A section's cell: floats with three decimals, intervals as ``[a, b]``, text as it is."""
    if v is None:
        return "-"
    if isinstance(v, bool) or isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _f(v)
    if isinstance(v, (list, tuple)):
        return fmt_number(list(v)) if len(v) == 2 else ", ".join(_cell(x) for x in v)
    return str(v)


# --------------------------------------------------------------------------------- charts by kind
def _tick(label: Any) -> str:
    """Short axis label of a bin: ``(a, b]`` becomes ``<= b`` (bins are in order), with the bound
    written for people (``1.047e+04`` -> ``10,470``)."""
    text = str(label)
    if text.startswith("(") and text.endswith("]") and ", " in text:
        return "\u2264 " + _bound(text[1:-1].split(", ", 1)[1])
    if text.startswith("[") and text.endswith(")") and ", " in text:  # closed on the left
        return "< " + _bound(text[1:-1].split(", ", 1)[1])
    for prefix, mark in (("<= ", "\u2264 "), (">= ", "\u2265 "), ("> ", "> "), ("< ", "< ")):
        if text.startswith(prefix):
            return mark + _bound(text[len(prefix):])
    return text


def _bound(text: str) -> str:
    try:
        return svg.readable(float(text))
    except ValueError:
        return text


def draw(c: Chart, title: str) -> tuple[str, bool]:
    """One chart drawn by its kind, titled ``title``: ``(svg, wide)`` ('' when its data is
    malformed)."""
    if c.kind == "histogram":
        return svg.histogram_chart(c.data, title, c.axis), False
    if c.kind == "bars" and isinstance(c.data, (list, tuple)):
        return svg.bar_chart(c.data, title, c.axis, c.max, c.colour or "#0072B2"), False
    if c.kind == "overlay" and isinstance(c.data, Mapping):
        bins = [_tick(b) for b in c.data.get("bins") or []]
        return svg.overlay_bars(bins, c.data.get("series") or {}, title, c.axis), False
    if c.kind == "heatmap" and isinstance(c.data, Mapping):
        labels = [str(x) for x in c.data.get("labels") or []]
        cells = {(int(a), int(b)): v for a, b, v in c.data.get("cells") or []}
        return (svg.heatmap(labels, cells, title, legend=c.axis,
                            vmax=float(c.max) if c.max else 0.5), len(labels) > 25)
    if c.kind == "roc" and isinstance(c.data, (list, tuple)) and c.data:
        return svg.roc_chart({c.label or title: c.data}, title), False
    return "", False


def _boxes(drawn: Sequence[tuple[str, bool]]) -> str:
    boxes = [f'<div class="chartbox{" wide" if wide else ""}">{b}</div>' for b, wide in drawn if b]
    return '<div class="charts">' + "".join(boxes) + "</div>" if boxes else ""


def charts_html(results: Mapping[str, MetricResult]) -> str:
    """Every chart the results carry (their ``charts``), drawn by kind: histograms, then the ROC
    overlays (every ROC chart of one title in one box, each curve named by its metric), then the
    other kinds; results in their order.

    A chart whose data is malformed is left out; a failure to draw is one line, never a crash.
    """
    try:
        charts = [(name, c) for name, res in results.items() for c in getattr(res, "charts", ())
                  if isinstance(c, Chart)]
        drawn = [draw(c, f"{name}: {c.title}") for name, c in charts if c.kind == "histogram"]
        overlays: dict[str, dict[str, Any]] = {}
        for name, c in charts:
            if c.kind == "roc" and isinstance(c.data, (list, tuple)) and c.data:
                overlays.setdefault(c.title, {})[f"{name} ({c.label})" if c.label else name] = c.data
        drawn += [(svg.roc_chart(curves, title), False) for title, curves in overlays.items()]
        drawn += [draw(c, f"{name}: {c.title}") for name, c in charts
                  if c.kind not in ("histogram", "roc")]
        out = _boxes(drawn)
    except Exception as exc:  # noqa: BLE001
        return (f'<p class="small">Charts could not be drawn ({escape(type(exc).__name__)}: '
                f'{escape(str(exc))}).</p>')
    return out or '<p class="small">No metric in this report carries chart data.</p>'


def sections_html(name: str, sections: Sequence[Section]) -> str:
    """A metric's sections in order: the title, its note, its charts, its table (folded ones
    one click away)."""
    out = []
    for s in sections:
        try:
            inner = (f'<p class="small">{escape(s.note)}</p>' if s.note else "")
            inner += _boxes([draw(c, c.title) for c in s.charts])
            if s.headers:
                inner += table(s.headers, [[_cell(v) for v in row] for row in s.rows])
        except Exception as exc:  # noqa: BLE001 - a section must not sink the report
            inner = (f'<p class="small">This section could not be drawn '
                     f'({escape(type(exc).__name__)}: {escape(str(exc))}).</p>')
        title = f"<b>{escape(name)}</b>: {escape(s.title)}"
        out.append(f"<details><summary>{title}</summary>{inner}</details>" if s.folded
                   else f"<h3>{escape(name)}: {escape(s.title)}</h3>{inner}")
    return "".join(out)


# ------------------------------------------------------------------------------- decision block
def decision_html(report: Any, standalone: bool = False, how: str = "both") -> str:
    """The decision block (one row per risk) and what to do, as an HTML fragment: the page's
    first section, and the notebook view of a report (``standalone``: with its own style sheet,
    scoped to the fragment)."""
    from .records import facts
    from .risks import risk_rows

    model = report.model
    v = model.verdict
    f = facts(model, how)
    risks = risk_rows(model)
    level = str(v.level)
    cls = level if level in ("high", "medium", "low") else ""
    nb = chr(160) + "%"
    rows, retests = [], wording.dropped_all(risks)
    for r, reading in zip(risks, wording.risk_readings(risks, f), strict=True):
        exposed = "-"
        if r.effect is not None:
            exposed = (f'<span class="num">{escape(pct(r.effect).replace(" %", nb))}</span><br>'
                       f'<span class="small">{escape(wording.interval(r.effect_ci).replace(" %", nb))}'
                       "</span>")
        more = wording.settle(r)
        rows.append([f"<b>{escape(r.title)}</b><br><span class=\"small\">{escape(r.criterion)}</span>",
                     badge(r.level), exposed,
                     escape(wording.bound_cell(r).replace(" %", nb)),
                     escape(reading) + (f'<br><span class="small">{escape(more)}</span>'
                                        if more else "")])
        retests += [wording.retest(r.title, c) for c in r.get("coarsening") or ()]
    parts = [f'<section id="decision" class="verdict {cls}"><div>Verdict: '
             f'<span class="big">{escape(level.upper())}</span> <span class="small">('
             f'{escape(wording.settings(v))})</span></div>',
             table(["risk", "level", "exposed beyond chance", "rules out", "reading"], rows,
                   raw=True)]
    parts += [f'<p class="small">{escape(t)}</p>' for t in wording.decision_limits(risks)]
    if model.header.get("sample"):
        parts.append(f'<p class="small" id="sample">'
                     f'{escape(wording.sentence("Sampled: " + wording.sample_line(model.header["sample"])))}</p>')
    if retests:
        parts.append('<ul class="retest small">' + "".join(f"<li>{escape(t)}</li>" for t in retests)
                     + "</ul>")
    reading = wording.no_control(f)
    if reading:
        parts.append(f"<p><b>Without a control.</b> {escape(reading)}</p>")
    todo = wording.what_to_do(risks, level, f)
    if todo:
        cost = ((model.header.get("actions") or {}).get("coarsen_retest") or {}).get("cost")
        parts.append('<div id="todo"><b>What to do</b><ul>'
                     + "".join(f"<li>{escape(t)}</li>" for t in todo) + "</ul>"
                     + (f'<p class="small">Coarsening re-test: {escape(str(cost))}.</p>'
                        if cost else "") + "</div>")
    parts.append("</section>")
    body = "".join(parts)
    if standalone:  # notebooks: the page's look, scoped to the fragment
        return f'<div class="{SCOPE}"><style>{scoped_css()}</style>{body}</div>'
    return body


# -------------------------------------------------------------------------------- summary cards
def _card(label: str, big: str, small: str, cls: str = "") -> str:
    return (f'<div class="card {cls}"><div class="small">{escape(label)}</div>'
            f'<div class="big">{escape(big)}</div><div class="small">{escape(small)}</div></div>')


def _cards(report: Any) -> str:
    """Summary cards: the privacy verdict, then fidelity and utility, each a number with its
    direction and meaning in words (from the metrics' typed headlines)."""
    model = report.model
    v = model.verdict
    cards = [_card("Privacy", str(v.level).upper(), wording.card_privacy(v), str(v.level))]
    for family, label in (("fidelity", "Fidelity"), ("utility", "Utility")):
        heads = [(e.name, e.result.headline) for e in model.metrics
                 if e.result is not None and e.result.family == family
                 and e.result.headline is not None]
        if heads:  # the lowest share of its ceiling, the others named beside it
            name, head, others = wording.card_pick(heads)
            big, small = wording.card_headline(name, head, others)
            cards.append(_card(label, big, small))
    return '<div class="cards">' + "".join(cards) + "</div>"


# ------------------------------------------------------------------------------------ the page
def _privacy_rows(report: Any) -> list[list[str]]:
    """The test table: one row per test the verdict counts (metrics the verdict found to be the
    same statistic on the same records share its row), then the informative privacy metrics."""
    from ..run.verdict import RISK_TITLES
    from .risks import risk_of

    model = report.model
    tests = {t.metric: t for t in model.tests}
    names: dict[str, list[str]] = {}
    for t in model.tests:
        host = t.get("same_as") if t.get("same_as") in tests else t.metric
        names.setdefault(host, []).append(t.metric)
    order = {r: i for i, r in enumerate(RISK_TITLES)}
    rows = []
    for host in sorted(names, key=lambda h: (order.get(tests[h].get("risk") or "", 9),
                                             list(tests).index(h))):
        t = tests[host]
        same = [n for n in names[host] if n != host]
        note = escape(t.statistic) + (f"<br>{escape(wording.same_test(same))}" if same else "")
        if t.get("contained_in"):
            note += f"<br>{escape(wording.contained_test(t.get('contained_in')))}"
        rows.append([f"<b>{escape(host)}</b><br><span class=\"small\">{note}</span>",
                     escape(RISK_TITLES.get(t.get("risk") or "", (t.get("risk") or "-",))[0]),
                     badge(t.level), escape(pct(t.member)), escape(pct(t.non_member)),
                     escape(pct(t.effect)) + "<br><span class=\"small\">"
                     + escape(wording.interval(t.effect_ci)) + "</span>"])
    for e in model.metrics:
        res = e.result
        if res is None or res.family in NON_PRIVACY_FAMILIES or e.name in tests:
            continue
        risk = risk_of(e.metric or e.name)
        rows.append([f"<b>{escape(e.name)}</b><br><span class=\"small\">"
                     f"{escape(describe(e.metric or e.name))}</span>",
                     escape(RISK_TITLES[risk][0] if risk else "informative"),
                     '<span class="small">informative</span>',
                     escape(fmt_number(res.value)), "-", "-"])
    return rows


NAV = (("decision", "Decision"), ("privacy", "Privacy tests"), ("fidelity", "Fidelity"),
       ("utility", "Utility"), ("records", "Records"), ("inputs", "Inputs"),
       ("config", "Configuration"))


def render_html(report: Any, title: str = "synthguard report") -> str:
    """The full page of ``report``: summary cards and the decision first, then the privacy tests
    (each test once), fidelity, utility, records, inputs; charts and configuration folded away."""
    from .records import listed_counts, report_records

    model = report.model
    header = model.header
    entries = list(model.metrics)
    results = {e.name: e.result for e in entries if e.result is not None}
    nav = "".join(f'<a href="#{a}">{escape(t)}</a>' for a, t in NAV)
    parts = [f'<nav class="nav">{nav}</nav>', f"<h1>{escape(title)}</h1>",
             f'<p class="sub">synthguard {escape(str(header.get("synthguard_version", "?")))} &middot; '
             f'seed {escape(str(header.get("seed", "?")))} &middot; '
             f'{len(results)} of {len(entries)} metric(s) computed</p>',
             _cards(report), decision_html(report)]

    note = f"{wording.TESTS_NOTE} {wording.interval_note(evidence_levels(report))}"
    parts.append(f'<h2 id="privacy">Privacy tests</h2><p class="small">{escape(note)}</p>')
    prow = _privacy_rows(report)
    parts.append(table(["test", "risk", "level", "training", "control", "excess [interval]"], prow,
                       raw=True) if prow else '<p class="small">No privacy metric ran.</p>')
    priv = {n: r for n, r in results.items() if r.family not in NON_PRIVACY_FAMILIES}
    parts += [sections_html(n, r.sections) for n, r in priv.items() if r.sections]
    charts = charts_html(priv)
    if "chartbox" in charts:
        parts.append("<details><summary>Charts of the privacy tests (distances, ROC curves)"
                     f"</summary>{charts}</details>")

    parts.append('<h2 id="fidelity">Fidelity</h2>')
    fid = {n: r for n, r in results.items() if r.family in NON_PRIVACY_FAMILIES - {"utility"}}
    heads = [[f"<b>{escape(n)}</b>", _f(r.headline.value), _f(r.headline.ceiling),
              escape(pct(r.headline.share)), escape(r.headline.reading)]
             for n, r in fid.items() if r.headline is not None and r.headline.ceiling is not None]
    if heads:
        parts.append("<h3>Fidelity against its ceiling</h3>"
                     f'<p class="small">{escape(wording.CEILING_NOTE)}</p>'
                     + table(["metric", "synthetic", "ceiling (control)", "share of ceiling",
                              "reading"], heads, raw=True))
    parts += [sections_html(n, r.sections) for n, r in fid.items() if r.sections]
    rest = [[f"<b>{escape(n)}</b>", escape(fmt_number(r.value)), escape(fmt_number(r.ci)),
             f'<span class="small">{escape(r.direction)}</span>', escape(describe(n))]
            for n, r in fid.items()]
    if rest:
        parts.append(table(["metric", "value", "CI", "direction", "meaning"], rest, raw=True))
    fcharts = charts_html(fid)
    if "chartbox" in fcharts:
        parts.append(f"<details><summary>Fidelity and distortion charts</summary>{fcharts}</details>")

    parts.append('<h2 id="utility">Utility</h2>')
    util = {n: r for n, r in results.items() if r.family == "utility"}
    urows = [[f"<b>{escape(n)}</b>", escape(fmt_number(r.value)), escape(fmt_number(r.ci)),
              escape(fmt_number(r.baseline.value if r.baseline else None)),
              f'<span class="small">{escape(r.direction)}</span>',
              escape(r.headline.reading if r.headline is not None else describe(n))]
             for n, r in util.items()]
    parts.append(table(["metric", "value", "CI", "baseline", "direction", "meaning"], urows, raw=True)
                 if urows else '<p class="small">No utility metric ran.</p>')
    parts += [sections_html(n, r.sections) for n, r in util.items() if r.sections]

    parts.append('<h2 id="records">Records behind the findings</h2>')
    recs = report_records(model)  # the one export (--records-out, report.records()), its order
    if recs:
        drop = [r for r in recs if r["action"] == "drop"]
        shown = drop[:10] + [r for r in recs if r["action"] != "drop"][:10]
        rrows = [[r["metric"], r["risk"], r["action"], _opt(r["release_row"]),
                  _opt(r["training_row"]), r["reason"]] for r in shown]
        context = listed_counts([r["action"] for r in recs])[2]  # not findings
        parts.append(f"<details><summary>{escape(wording.records_caption(len(recs), len(drop), 10, context))}"
                     "</summary>"
                     + table(["metric", "risk", "action", "release row", "training row", "reason"],
                             rrows) + "</details>")
    else:
        parts.append('<p class="small">No metric listed individual records.</p>')

    skipped = [[f"<b>{escape(e.name)}</b>", badge(e.status), escape(e.reason or "")]
               for e in entries if e.status != "ok"]
    if skipped:
        parts.append(f"<details><summary>Skipped metrics ({len(skipped)})</summary>"
                     + table(["metric", "status", "reason"], skipped, raw=True) + "</details>")

    parts.append('<h2 id="inputs">Inputs</h2>')
    in_rows = [[role, fmt_number(fp.get("rows")), fmt_number(fp.get("columns")),
                str(fp.get("sha256") or "")[:16] + "\u2026", str(fp.get("source") or "")]
               for role, fp in model.inputs.items()]
    parts.append(table(["role", "rows", "columns", "sha256 (first 16)", "source"], in_rows))
    schema = header.get("schema") or {}
    for key, label in (("quasi_identifiers", "Quasi-identifiers"), ("sensitive", "Sensitive columns")):
        cols = schema.get(key) or []
        parts.append(f'<p class="small">{label}: '
                     + escape(", ".join(map(str, cols)) if cols else "none declared") + "</p>")
    for w in model.warnings:
        parts.append(f'<p class="small warn">warning: {escape(str(w))}</p>')
    inferred = header.get("inferred_metadata")
    if inferred:
        parts.append('<p class="small">Column types inferred (not given in the metadata): '
                     + escape(", ".join(f"{k}: {v.get('sdtype', v) if isinstance(v, Mapping) else v}"
                                        for k, v in inferred.items())) + "</p>")

    parts.append('<details id="config"><summary><b>Configuration used</b></summary><pre>'
                 + escape(json.dumps(to_jsonable(header.get("config", {})), indent=2))
                 + "</pre></details>")
    parts.append(f"<footer>Generated by synthguard {escape(str(header.get('synthguard_version', '')))}. "
                 "This page is self-contained: it loads nothing from the network.</footer>")
    return page(title, "".join(parts))


def _opt(x: Any) -> str:
    return "" if x is None else str(x)
