"""A self-contained HTML page for one :class:`~synthguard.report.Report`.

One file, no JavaScript, no external fonts, images or style sheets: charts are inline SVG drawn by
:mod:`synthguard.report.svg`, and a Content-Security-Policy forbids every network fetch, so the page
renders identically offline. Every value taken from a metric's details is read defensively: a
metric that is missing or lacks a chart's data simply gives no chart.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from ..core.results import Chart, MetricResult, to_jsonable
from ..run.verdict import NON_PRIVACY_FAMILIES  # noqa: F401  (re-exported for report.compare)
from . import svg
from .console import fmt_number

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
"""

CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src 'none'; "
       "script-src 'none'; connect-src 'none'; base-uri 'none'; form-action 'none'")


def page(title: str, body: str) -> str:
    """Wrap ``body`` in a complete offline HTML document."""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<link rel=\"icon\" href=\"data:,\">"
            f"<title>{escape(title)}</title><style>{CSS}</style></head>"
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


def _verdict_html(v: Any) -> str:
    """The verdict box: one level, the tests that drive it, and the detection limit."""
    d = v.to_dict()
    level = str(d["level"])
    cls = level if level in ("high", "medium", "low") else ""
    parts = [f'<div class="verdict {cls}"><div>Verdict: <span class="big">{escape(level.upper())}</span>'
             f' <span class="small">(rule: {escape(str(d["rule"]))}, materiality '
             f'{escape(fmt_number(100 * d["materiality"]))} % of training {escape(str(d.get("unit", "records")))}, release: '
             f'{escape(str(d["release_type"]))})</span></div>',
             f'<div>{escape(str(d["summary"]))}</div>']
    tests = d.get("tests") or []
    if tests:
        rows = [[f"<b>{escape(t['metric'])}</b>", badge(t["level"]), escape(str(t["statistic"])),
                 escape(fmt_number(t["member"])) + f" <span class=\"small\">(n={escape(fmt_number(t['n_member']))})</span>",
                 escape(fmt_number(t["non_member"])) + (f" <span class=\"small\">(n={escape(fmt_number(t['n_non_member']))})</span>"
                                                        if t.get("n_non_member") is not None else ""),
                 escape(fmt_number(t["effect"])) + " " + escape(fmt_number(t["effect_ci"])),
                 escape(fmt_number(t["p_adjusted"])), escape(fmt_number(t["detection_limit"]))]
                for t in tests]
        parts.append('<details><summary>The tests behind the verdict (training rows vs real rows never '
                     'seen by the generator)</summary>'
                     + table(["metric", "level", "statistic", "training", "control / null",
                              "excess [CI]", "adjusted p", "detectable"], rows, raw=True) + "</details>")
    limit = d.get("detection_limit")
    if limit and limit.get("text") and limit["text"] not in str(d["summary"]):
        parts.append(f'<div class="small">Detection limit: {escape(str(limit["text"]))}.</div>')
    if d.get("not_assessed"):
        parts.append('<div class="small">Not assessed (no test against the control; shown for '
                     'information): ' + escape(", ".join(d["not_assessed"])) + "</div>")
    return "".join(parts) + "</div>"


def _metric_rows(report: Any, entries: Mapping[str, Mapping[str, Any]]) -> list[list[str]]:
    rows = []
    for name in report.metrics:
        res = report.result(name)
        if res is None:
            continue
        base = "-"
        if res.baseline is not None:
            base = (f"{escape(fmt_number(res.baseline.value))}<br><span class=\"small\">"
                    f"{escape(res.baseline.description or '')}</span>")
        ref = res.details.get("reference_auc") if isinstance(res.details, Mapping) else None
        if isinstance(ref, Mapping) and ref.get("value") is not None:
            base += (f'<br><span class="small">reference (control vs original): AUC '
                     f'{escape(fmt_number(ref.get("value")))} {escape(fmt_number(ref.get("ci")))}</span>')
        entry = entries.get(name, {})
        cached = ' <span class="small">(cached)</span>' if entry.get("cached") else ""
        meaning = escape(describe(name))
        if res.warning:
            meaning += f'<br><span class="warn">{escape(res.warning)}</span>'
        rows.append([f"<b>{escape(name)}</b>{cached}<br><span class=\"small\">{escape(res.family)}</span>",
                     f'<span class="num">{escape(fmt_number(res.value))}</span>', base,
                     escape(fmt_number(res.ci)), escape(fmt_number(res.n)), badge(res.risk_level),
                     f'<span class="small">{escape(res.direction)}</span>', meaning])
    return rows


def _records_table(records: Sequence[Any], limit: int = 10, max_cols: int = 12) -> str:
    recs = [r for r in records if isinstance(r, Mapping)][:limit]
    if not recs:
        return ""
    cols: list[str] = []
    for r in recs:
        for k in r:
            if str(k) not in cols:
                cols.append(str(k))
    cols = cols[:max_cols]
    rows = []
    for r in recs:
        row = []
        for c in cols:
            v = r.get(c, "")
            v = to_jsonable(v)
            txt = fmt_number(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else (
                "" if v is None else (json.dumps(v) if isinstance(v, (list, dict)) else str(v)))
            row.append(txt if len(txt) <= 80 else txt[:79] + "\u2026")
        rows.append(row)
    return table(cols, rows)


def _details(res: MetricResult) -> dict[str, Any]:
    try:
        det = to_jsonable(dict(res.details)) if isinstance(res.details, Mapping) else {}
    except Exception:  # noqa: BLE001 - odd details give no chart, never a crash
        return {}
    return det if isinstance(det, dict) else {}


def charts_html(results: Mapping[str, MetricResult]) -> str:
    """Every chart the results carry (their ``charts``: histograms, ROC curves, bars).

    A chart whose data is malformed is replaced by a one-line note; the page still renders.
    """
    try:
        return _charts_html(results)
    except Exception as exc:  # noqa: BLE001
        return f'<p class="small">Charts could not be drawn ({escape(type(exc).__name__)}: {escape(str(exc))}).</p>'


def _charts_html(results: Mapping[str, MetricResult]) -> str:
    """The results' charts by kind: histograms, then the ROC overlays (every ROC chart of one
    title in one box, each curve named by its metric), then bars; results in their order."""
    charts = [(name, c) for name, res in results.items() for c in getattr(res, "charts", ())
              if isinstance(c, Chart)]
    boxes = [svg.histogram_chart(c.data, f"{name}: {c.title}", c.axis)
             for name, c in charts if c.kind == "histogram"]
    overlays: dict[str, dict[str, Any]] = {}
    for name, c in charts:
        if c.kind == "roc" and isinstance(c.data, (list, tuple)) and c.data:
            overlays.setdefault(c.title, {})[f"{name} ({c.label})" if c.label else name] = c.data
    boxes += [svg.roc_chart(curves, title) for title, curves in overlays.items()]
    boxes += [svg.bar_chart(c.data, f"{name}: {c.title}", c.axis, c.max,
                            c.colour or "#0072B2")
              for name, c in charts if c.kind == "bars" and isinstance(c.data, (list, tuple))]
    boxes = [b for b in boxes if b]
    if not boxes:
        return '<p class="small">No metric in this report carries chart data.</p>'
    return '<div class="charts">' + "".join(f'<div class="chartbox">{b}</div>' for b in boxes) + "</div>"


#: Caps that keep a 100-column report fast to open (everything else stays in the JSON).
MAX_COLUMN_CHARTS = 24
MAX_PAIR_ROWS = 100
MAX_TRIPLE_ROWS = 50


def _f(x: Any, digits: int = 3) -> str:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return "-"
    if v != v:
        return "-"
    text = f"{v:.{digits}f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text  # no "-0.000"


def _gap(row: Mapping[str, Any]) -> float:
    """How far a column/pair falls short: ceiling - accuracy (1 - accuracy without a ceiling)."""
    acc = row.get("accuracy")
    acc = 0.0 if acc is None else float(acc)
    ceil = row.get("control_accuracy")
    return (float(ceil) if ceil is not None else 1.0) - acc


def _tick(label: Any) -> str:
    """Short axis label of a bin: ``(a, b]`` becomes ``<= b`` (bins are in order), with the bound
    written for people (``1.047e+04`` -> ``10,470``)."""
    text = str(label)
    if text.startswith("(") and text.endswith("]") and ", " in text:
        return "\u2264 " + _bound(text[1:-1].split(", ", 1)[1])
    if text.startswith("[") and text.endswith(")") and ", " in text:  # closed on the left
        return "< " + _bound(text[1:-1].split(", ", 1)[1])
    if text.startswith("<= "):
        return "\u2264 " + _bound(text[3:])
    if text.startswith(">= "):
        return "\u2265 " + _bound(text[3:])
    if text.startswith("> "):
        return "> " + _bound(text[2:])
    if text.startswith("< "):
        return "< " + _bound(text[2:])
    return text


def _bound(text: str) -> str:
    try:
        return svg.readable(float(text))
    except ValueError:
        return text


def _worst_first(rows: Sequence[Any], name: Any) -> list[Mapping[str, Any]]:
    ok = [r for r in rows if isinstance(r, Mapping)]
    return sorted(ok, key=lambda r: (-_gap(r), str(name(r))))


def fidelity_html(results: Mapping[str, MetricResult]) -> str:
    """The fidelity section: every fidelity score against its control ceiling, then the
    ``accuracy`` metric's overlay charts, association-difference heatmap and accuracy tables
    (worst first). Empty when no fidelity metric ran."""
    try:
        return _fidelity_html(results)
    except Exception as exc:  # noqa: BLE001 - a section must not sink the report
        return (f'<p class="small">The fidelity section could not be drawn ({escape(type(exc).__name__)}: '
                f'{escape(str(exc))}).</p>')


def _fidelity_html(results: Mapping[str, MetricResult]) -> str:
    heads = []
    for name, res in results.items():
        det = _details(res)
        if res.family != "fidelity" or "ceiling" not in det:
            continue  # e.g. diagnostic_report: its baseline (1.0) is not a control ceiling
        ceiling = det.get("ceiling")
        ratio = (res.value / ceiling) if (ceiling and res.value is not None) else None
        reading = det.get("headline") or (res.baseline.description if res.baseline else "")
        heads.append([f"<b>{escape(name)}</b>", _f(res.value), _f(ceiling),
                      "-" if ratio is None else f"{100 * ratio:.1f} %", escape(str(reading))])
    if not heads:
        return ""
    out = ["<h2>Fidelity against its ceiling</h2>",
           '<p class="small">The ceiling is what the control table (real rows held out from training) '
           "scores against the original: what a perfect generator would reach at this sample size.</p>",
           table(["metric", "synthetic", "ceiling (control)", "share of ceiling", "reading"], heads, raw=True)]
    acc = results.get("accuracy")
    if acc is None:
        return "".join(out)
    det = _details(acc)
    levels = [[lvl, _f(det[lvl].get("synthetic")), _f(det[lvl].get("control")), str(det[lvl].get("count"))]
              for lvl in ("univariate", "bivariate", "trivariate") if isinstance(det.get(lvl), Mapping)]
    if levels:
        out.append("<h3>accuracy by level</h3>")
        out.append(table(["level", "synthetic", "ceiling (control)", "scored"], levels))
    columns = _worst_first(det.get("columns") or [], lambda r: r.get("column"))
    boxes = []
    for r in columns[:MAX_COLUMN_CHARTS]:
        series = {k: r.get(k) for k in ("original", "synthetic", "control") if r.get(k) is not None}
        title = (f"{r.get('column')}: accuracy {_f(r.get('accuracy'))}"
                 + (f" (ceiling {_f(r.get('control_accuracy'))})" if r.get("control_accuracy") is not None else ""))
        boxes.append(svg.overlay_bars([_tick(b) for b in r.get("bins") or []], series, title))
    boxes = [b for b in boxes if b]
    if boxes:
        more = len(columns) - len(boxes)
        out.append(f"<h3>Columns, original vs synthetic vs control (the {len(boxes)} furthest from their "
                   "ceiling)</h3>")
        if more > 0:
            out.append(f'<p class="small">{more} more column(s) in the table below and in the JSON.</p>')
        out.append('<div class="charts">' + "".join(f'<div class="chartbox">{b}</div>' for b in boxes)
                   + "</div>")
    pairs = [r for r in det.get("pairs") or [] if isinstance(r, Mapping)]
    if pairs:
        names = [str(r.get("column")) for r in det.get("columns") or [] if isinstance(r, Mapping)]
        pos = {n: i for i, n in enumerate(names)}
        cells: dict[tuple[int, int], float | None] = {}
        for r in pairs:
            i, j = pos.get(str(r.get("column_1"))), pos.get(str(r.get("column_2")))
            a, b = r.get("association_original"), r.get("association_synthetic")
            if i is None or j is None:
                continue
            cells[(j, i)] = None if a is None or b is None else abs(float(b) - float(a))
        hm = svg.heatmap(names, cells, "association difference |V(synthetic) - V(original)|",
                         legend="|diff. Cramer's V|")
        if hm:
            out.append("<h3>Association difference between column pairs</h3>"
                       '<p class="small">Cramer\'s V of each binned column pair in the synthetic table minus '
                       "the same in the original (0 = the dependence is reproduced; grey = undefined).</p>"
                       f'<div class="chartbox{" wide" if len(names) > 25 else ""}">{hm}</div>')
    rows = [[escape(str(r.get("column"))), escape(str(r.get("sdtype", ""))), _f(r.get("accuracy")),
             _f(r.get("control_accuracy")), _f(-_gap(r) if r.get("control_accuracy") is not None else None)]
            for r in columns]
    out.append("<h3>Accuracy tables (worst first)</h3>")
    out.append('<p class="small">Sorted by the shortfall from the ceiling (ceiling - synthetic); '
               "a positive difference means the release is closer to the original than real held-out "
               "data is.</p>")
    if rows:
        out.append(f"<details open><summary><b>Columns</b> ({len(rows)})</summary>"
                   + table(["column", "sdtype", "synthetic", "ceiling (control)", "synthetic - ceiling"],
                           rows, raw=True) + "</details>")
    if pairs:
        worst = _worst_first(pairs, lambda r: (r.get("column_1"), r.get("column_2")))[:MAX_PAIR_ROWS]
        prow = [[escape(f"{r.get('column_1')} x {r.get('column_2')}"), _f(r.get("accuracy")),
                 _f(r.get("control_accuracy")),
                 _f(-_gap(r) if r.get("control_accuracy") is not None else None),
                 _f(r.get("association_original")), _f(r.get("association_synthetic"))] for r in worst]
        out.append(f"<details open><summary><b>Pairs</b> ({len(pairs)}; the {len(prow)} worst shown)"
                   "</summary>" + table(["pair", "synthetic", "ceiling (control)", "synthetic - ceiling",
                                         "V original", "V synthetic"], prow, raw=True) + "</details>")
    triples = [r for r in det.get("triples") or [] if isinstance(r, Mapping)]
    if triples:
        worst = _worst_first(triples, lambda r: tuple(r.get("columns") or ()))[:MAX_TRIPLE_ROWS]
        trow = [[escape(" x ".join(map(str, r.get("columns") or []))), _f(r.get("accuracy")),
                 _f(r.get("control_accuracy")),
                 _f(-_gap(r) if r.get("control_accuracy") is not None else None)] for r in worst]
        out.append(f"<details><summary><b>Sampled triples</b> ({len(triples)}; the {len(trow)} worst "
                   "shown)</summary>" + table(["triple", "synthetic", "ceiling (control)",
                                               "synthetic - ceiling"], trow, raw=True) + "</details>")
    return "".join(out)


def _group_privacy_tests(report: Any, d: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Privacy tests, one entry per distinct test: metrics giving the same numbers (e.g.
    ``anonymeter`` and ``inference``; ``cap``, ``zero_cap``, ``disclosure_protection`` and its
    estimate) are one test shown once, named by all of them."""
    from .risks import risk_of

    tests = {t["metric"]: t for t in (d.get("verdict") or {}).get("tests") or []}
    groups: dict[Any, dict[str, Any]] = {}
    for name in report.metrics:
        res = report.result(name)
        if res is None or res.family in NON_PRIVACY_FAMILIES:
            continue
        t = tests.get(name)
        if t is not None and t.get("same_as") in tests:  # the verdict collapsed it into another
            t = tests[t["same_as"]]
        ev = t if t is not None else (res.evidence.to_dict() if res.evidence is not None else None)
        if ev is not None and ev.get("member") is not None:
            # one test, whichever metrics report it: the same counts on the same records
            key = ("t", _r(ev.get("member")), _r(ev.get("non_member")), ev.get("n_member"),
                   ev.get("n_non_member"), _r(ev.get("effect")))
        else:
            key = ("m", name, _r(res.value))
        g = groups.setdefault(key, {"names": [], "test": t, "result": res,
                                    "risk": risk_of(name) or "other"})
        if g["test"] is None and t is not None:  # the driving member of the group leads it
            g.update(test=t, result=res)
        g["names"].append(name)
    order = {"presence": 0, "singling_out": 1, "linkability": 2, "inference": 3}
    return sorted(groups.values(), key=lambda g: (g["test"] is None, order.get(g["risk"], 9)))


def _r(x: Any) -> Any:
    try:
        return round(float(x), 9)
    except (TypeError, ValueError):
        return x


def decision_html(report: Any, standalone: bool = False) -> str:
    """The decision block (one line per risk) and what to do, as an HTML fragment (the page's
    first section; also the notebook display of a report)."""
    from .console import what_to_do
    from .risks import headline_limit, interval, no_control_reading, pct, risks_of

    d = report.to_dict()
    v = d.get("verdict") or {}
    level = str(v.get("level", "?"))
    cls = level if level in ("high", "medium", "low") else ""
    rows = []
    for r in risks_of(d):
        r = {k: (x.replace(" %", "\u00a0%") if isinstance(x, str) else x) for k, x in r.items()}
        lim = headline_limit(r)  # the verdict's headline: the largest over the leak types
        rows.append([f"<b>{escape(str(r['title']))}</b><br><span class=\"small\">"
                     f"{escape(str(r.get('criterion') or ''))}</span>",
                     badge(r.get("level")),
                     (f'<span class="num">{escape(pct(r.get("effect")))}</span><br>'
                      f'<span class="small">'
                      f'{escape(interval(r.get("effect_ci")).replace(" %", chr(160) + "%"))}</span>')
                     if r.get("effect") is not None else "-",
                     escape(lim["text"]) if lim else "-",
                     escape(str(r.get("summary") or ""))
                     + (f'<br><span class="small">To decide: {escape(str(r["settle"]))}</span>'
                        if r.get("settle") else "")
                     + "".join(f'<br><span class="small retest">Re-tested: {escape(str(c["text"]))}'
                               "</span>" for c in r.get("coarsening") or ())])
    parts = [f'<section id="decision" class="verdict {cls}"><div>Verdict: '
             f'<span class="big">{escape(level.upper())}</span> <span class="small">(release: '
             f'{escape(str(v.get("release_type")))}, materiality {escape(pct(v.get("materiality")))}'
             f' of training {escape(str(v.get("unit", "records")))}, false-alarm rate '
             f'{escape(pct(v.get("alpha")))})</span></div>',
             table(["risk", "level", "exposed beyond chance", "detection limit", "reading"], rows,
                   raw=True)]
    reading = no_control_reading(d)
    if reading:
        parts.append(f'<p><b>Without a control.</b> {escape(reading)}</p>')
    todo = what_to_do(d)
    if todo:
        cost = ((d.get("actions") or {}).get("coarsen_retest") or {}).get("cost")
        parts.append('<div id="todo"><b>What to do</b><ul>'
                     + "".join(f"<li>{escape(t)}</li>" for t in todo) + "</ul>"
                     + (f'<p class="small">Coarsening re-test: {escape(str(cost))}.</p>'
                        if cost else "") + "</div>")
    parts.append("</section>")
    body = "".join(parts)
    if standalone:  # notebooks: the page's look without the page
        return f"<div><style>{CSS}</style>{body}</div>"
    return body


def _cards(report: Any, d: Mapping[str, Any], results: Mapping[str, MetricResult]) -> str:
    """Summary cards: privacy verdict, fidelity as a share of the achievable, utility."""
    v = d.get("verdict") or {}
    level = str(v.get("level", "?"))
    n_high = sum(1 for t in v.get("tests") or [] if t.get("level") in ("high", "medium"))
    cards = [f'<div class="card {level}"><div class="small">Privacy</div>'
             f'<div class="big">{escape(level.upper())}</div><div class="small">'
             f'{n_high} test(s) alarm</div></div>']
    shares = []
    for name in ("accuracy", "quality_report"):
        res = results.get(name)
        ceiling = _details(res).get("ceiling") if res is not None else None
        if res is not None and ceiling and res.value is not None:
            shares.append((name, float(res.value) / float(ceiling)))
    if shares:
        name, share = shares[0]
        cards.append(f'<div class="card"><div class="small">Fidelity</div><div class="big">'
                     f'{100 * share:.0f} %</div><div class="small">of the achievable ({escape(name)} '
                     "against real held-out rows)</div></div>")
    else:
        fid = [r for r in results.values() if r.family == "fidelity" and r.value is not None]
        if fid:
            cards.append(f'<div class="card"><div class="small">Fidelity</div><div class="big">'
                         f'{escape(fmt_number(fid[0].value, 3))}</div><div class="small">'
                         f'{escape(fid[0].name)} (no control ceiling)</div></div>')
    util = [r for r in results.values() if r.family == "utility" and r.value is not None]
    if util:
        cards.append(f'<div class="card"><div class="small">Utility</div><div class="big">'
                     f'{escape(fmt_number(util[0].value, 3))}</div><div class="small">'
                     f'{escape(util[0].name)} ({escape(util[0].direction)})</div></div>')
    return '<div class="cards">' + "".join(cards) + "</div>"


NAV = (("decision", "Decision"), ("privacy", "Privacy tests"), ("fidelity", "Fidelity"),
       ("utility", "Utility"), ("records", "Records"), ("inputs", "Inputs"),
       ("config", "Configuration"))


def render_html(report: Any, title: str = "synthguard report") -> str:
    """The full page of ``report``: summary cards and the decision first, then the privacy tests
    (each test once), fidelity, utility, records, inputs; charts and configuration folded away."""
    from .records import normalise_records
    from .risks import TITLES, pct

    header = report.header
    results = {n: report.result(n) for n in report.metrics if report.result(n) is not None}
    full = report.to_dict()
    d = full["metrics"]
    nav = "".join(f'<a href="#{a}">{escape(t)}</a>' for a, t in NAV)
    parts = [f'<nav class="nav">{nav}</nav>', f"<h1>{escape(title)}</h1>",
             f'<p class="sub">synthguard {escape(str(header.get("synthguard_version", "?")))} &middot; '
             f'seed {escape(str(header.get("seed", "?")))} &middot; '
             f'{len(results)} of {len(report.metrics)} metric(s) computed</p>',
             _cards(report, full, results), decision_html(report)]

    # privacy: each distinct test once, grouped by risk
    parts.append('<h2 id="privacy">Privacy tests</h2><p class="small">Each test compares training '
                 "records with real records the generator never saw (the control), under the same "
                 "release. Metrics that compute the same test are shown once.</p>")
    prow = []
    for g in _group_privacy_tests(report, full):
        t, res = g["test"], g["result"]
        names = " = ".join(g["names"])
        if t is not None:
            prow.append([f"<b>{escape(names)}</b><br><span class=\"small\">"
                         f"{escape(str(t.get('statistic') or ''))}</span>",
                         escape(TITLES.get(g["risk"], g["risk"])), badge(t.get("level")),
                         escape(pct(t.get("member"))), escape(pct(t.get("non_member"))),
                         escape(pct(t.get("effect"))) + "<br><span class=\"small\">"
                         + escape(fmt_number(t.get("effect_ci"))) + "</span>",
                         escape(pct(t.get("detection_limit")))])
        else:
            prow.append([f"<b>{escape(names)}</b><br><span class=\"small\">"
                         f"{escape(describe(g['names'][0]))}</span>",
                         escape(TITLES.get(g["risk"], g["risk"])),
                         '<span class="small">informative</span>',
                         escape(fmt_number(res.value)), "-", "-", "-"])
    parts.append(table(["test", "risk", "level", "training", "control", "excess [CI]",
                        "detectable"], prow, raw=True) if prow
                 else '<p class="small">No privacy metric ran.</p>')
    priv = {n: r for n, r in results.items() if r.family not in NON_PRIVACY_FAMILIES}
    charts = charts_html(priv)
    if "chartbox" in charts:
        parts.append("<details><summary>Charts of the privacy tests (distances, ROC curves)"
                     f"</summary>{charts}</details>")

    parts.append(membership_html(results))

    # fidelity: numbers, no risk badges; the per-column charts folded
    parts.append('<h2 id="fidelity">Fidelity</h2>')
    fid = fidelity_html(results)
    if fid:
        fid = fid.replace("<h2>Fidelity against its ceiling</h2>",
                          "<h3>Fidelity against its ceiling</h3>")
        cut = fid.find("<h3>Columns, original vs synthetic")
        if cut >= 0:  # the column charts and everything after them: one click away
            fid = fid[:cut] + "<details><summary>Column charts and accuracy tables</summary>" \
                + fid[cut:] + "</details>"
        parts.append(fid)
    rest = [[f"<b>{escape(n)}</b>", escape(fmt_number(r.value)), escape(fmt_number(r.ci)),
             f'<span class="small">{escape(r.direction)}</span>', escape(describe(n))]
            for n, r in results.items() if r.family in NON_PRIVACY_FAMILIES - {"utility"}]
    if rest:
        parts.append(table(["metric", "value", "CI", "direction", "meaning"], rest, raw=True))
    other = {n: r for n, r in results.items() if r.family in NON_PRIVACY_FAMILIES}
    fcharts = charts_html(other)
    if "chartbox" in fcharts:
        parts.append(f"<details><summary>Fidelity and distortion charts</summary>{fcharts}</details>")

    parts.append('<h2 id="utility">Utility</h2>')
    util = [[f"<b>{escape(n)}</b>", escape(fmt_number(r.value)), escape(fmt_number(r.ci)),
             escape(fmt_number(r.baseline.value if r.baseline else None)),
             f'<span class="small">{escape(r.direction)}</span>', escape(describe(n))]
            for n, r in results.items() if r.family == "utility"]
    parts.append(table(["metric", "value", "CI", "baseline", "direction", "meaning"], util, raw=True)
                 if util else '<p class="small">No utility metric ran.</p>')

    parts.append('<h2 id="records">Records behind the findings</h2>')
    recs = normalise_records(full)
    if recs:
        recs.sort(key=lambda r: (r["action"] != "drop", r["risk"], r["metric"]))
        shown = recs[:15]
        rrows = [[r["metric"], r["risk"], r["action"], _opt(r["release_row"]),
                  _opt(r["training_row"]), r["reason"]] for r in shown]
        parts.append(f'<details><summary>{len(recs)} record(s) listed by the metrics; the first '
                     f"{len(shown)} here, all of them (and every verbatim copy) with --records-out "
                     "or report.records()</summary>"
                     + table(["metric", "risk", "action", "release row", "training row", "reason"],
                             rrows) + "</details>")
    else:
        parts.append('<p class="small">No metric listed individual records.</p>')

    skipped = [[f"<b>{escape(name)}</b>", badge(entry["status"]), escape(entry.get("reason") or "")]
               for name, entry in d.items() if entry["status"] != "ok"]
    if skipped:
        parts.append(f"<details><summary>Skipped metrics ({len(skipped)})</summary>"
                     + table(["metric", "status", "reason"], skipped, raw=True) + "</details>")

    parts.append('<h2 id="inputs">Inputs</h2>')
    inputs = header.get("inputs") or {}
    in_rows = [[role, fmt_number(fp.get("rows")), fmt_number(fp.get("columns")),
                str(fp.get("sha256", ""))[:16] + "\u2026", str(fp.get("source") or "")]
               for role, fp in inputs.items() if isinstance(fp, Mapping)]
    parts.append(table(["role", "rows", "columns", "sha256 (first 16)", "source"], in_rows))
    for w in header.get("warnings") or ():
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


def _row_ranges(rows: Sequence[int], limit: int = 60) -> str:
    """``[0, 1, 2, 5, 7, 8]`` -> ``"0-2, 5, 7-8"`` (at most ``limit`` runs, then how many more)."""
    runs: list[list[int]] = []
    for r in sorted(int(x) for x in rows):
        if runs and r == runs[-1][1] + 1:
            runs[-1][1] = r
        else:
            runs.append([r, r])
    text = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs[:limit])
    return text + (f", \u2026 ({len(runs) - limit} more runs)" if len(runs) > limit else "")


def membership_html(results: Mapping[str, MetricResult]) -> str:
    """The membership-attack ensemble's most exposed training records per attack and the roles of
    the control rows (reference sample, non-members), folded; '' when it did not run."""
    out = []
    for name, res in results.items():
        det = res.details if res.name == "membership_attacks" else None
        if not det or "attacks" not in det:
            continue
        rows = []
        for attack, a in det["attacks"].items():
            top = a.get("top_records") or []
            cells = ", ".join(f"{r['row']} ({fmt_number(r['score'], 3)})" for r in top)
            rows.append([f"<b>{escape(attack)}</b>", escape(fmt_number(a.get("auc"), 3)),
                         escape(fmt_number(a.get("p_adjusted"), 3)), escape(cells or "-")])
        roles = det.get("roles") or {}
        role_rows = [["members (training)", escape(str(roles.get("members_note", "")))]]
        for key, label in (("reference_rows", "reference (control)"),
                           ("non_member_rows", "non-members (control)")):
            listed = roles.get(key)
            count = roles.get(key.replace("_rows", "") if key == "reference_rows" else "non_members")
            if key == "reference_rows" and roles.get("reference_kind") == "pooled":
                role_rows.append(["reference", escape(
                    f"{count} rows: every other real record (training and control pooled without "
                    "labels, the record scored left out)")])
                continue
            role_rows.append([escape(label), escape(f"{count} rows: " + (
                _row_ranges(listed) if listed is not None else "not listed (a large control)"))])
        out.append(
            f'<details id="membership"><summary><b>{escape(name)}</b>: the ten most exposed '
            "training records per attack, and which control rows were reference and non-members"
            '</summary><p class="small">Training row numbers of the input (score in brackets, '
            "higher = more exposed); the same lists are in the JSON (details.attacks.*.top_records, "
            f"details.roles). {escape(str(roles.get('split', '')))}</p>"
            + table(["attack", "AUC", "adjusted p", "most exposed training rows (score)"], rows,
                    raw=True)
            + table(["role", "rows of the input"], role_rows, raw=True) + "</details>")
    return "".join(out)


def _opt(x: Any) -> str:
    return "" if x is None else str(x)
