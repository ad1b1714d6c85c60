"""The release dossier: the file a privacy officer signs and a regulator asks for.

Its sections follow what data-protection authorities ask of an anonymisation or synthetic-data
release (Article 29 Working Party Opinion 05/2014, WP216; the UK ICO's anonymisation guidance and
its motivated-intruder test; ISO/IEC 27559's context, data and identifiability assessments and
governance; NIST SP 800-188's release models and disclosure review):

1. decision summary; 2. release and purpose (release model, recipients, purpose, controller);
3. the data (inputs with their fingerprints, quasi-identifiers, sensitive columns, the generator);
4. threat model (each test's attacker knowledge, from the metric cards, in one table);
5. acceptance threshold and its justification; 6. results per criterion with the bound reached;
7. mitigations and the re-evaluation after them; 8. utility; 9. residual risk;
10. decision and sign-off (approve / approve with conditions / reject, date, controller,
signatory, review date).

Organisational fields come from the context (:mod:`synthguard.report.context`) and are left as
visible blanks otherwise. Every number comes from the report's JSON (``Report.to_json``), written as
there or as a percentage of it; every sentence about the verdict is :mod:`synthguard.run.wording`'s.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from ..core.escape import md_code, md_escape, md_inline_html
from ..core.format import fmt_number, pct
from ..run import wording
from .context import RELEASE_MODELS, DossierContext
from .risks import evidence_levels, knowledge_of, risk_rows

#: A field the context did not give: a visible blank to fill in by hand.
BLANK = "\\_\\_\\_\\_\\_\\_\\_\\_\\_\\_\\_\\_ (not given)"
#: The dossier's sections, in order (tests check each is there).
SECTIONS = ("1. Decision summary", "2. Release and purpose", "3. The data", "4. Threat model",
            "5. Acceptance threshold", "6. Results per criterion",
            "7. Mitigations and re-evaluation", "8. Utility", "9. Residual risk",
            "10. Decision and sign-off")
#: WP216's three criteria, then the presence of training records.
CRITERIA_ORDER = ("singling_out", "linkability", "inference", "presence")


def review_date(run: _dt.date) -> _dt.date:
    """One year after ``run`` (28 February for a 29 February run).

    Examples
    --------
    >>> review_date(_dt.date(2024, 2, 29))
    datetime.date(2025, 2, 28)
    """
    try:
        return run.replace(year=run.year + 1)
    except ValueError:
        return run.replace(year=run.year + 1, day=28)


def render_dossier(report: Any, fmt: str = "markdown", today: _dt.date | None = None,
                   context: DossierContext | None = None) -> str:
    """The dossier of ``report`` as Markdown (``fmt="markdown"``) or one print-ready HTML page.

    Parameters
    ----------
    report : Report
        The evaluation.
    fmt : {"markdown", "html"}
        Output format.
    today : date, optional
        The run date (default: today); the review date is one year later unless the context
        gives one.
    context : DossierContext, optional
        The organisational fields (default: the report's own, else blanks).

    Returns
    -------
    str
        The dossier text.
    """
    if fmt not in ("markdown", "html"):
        raise ValueError(f"fmt must be 'markdown' or 'html', got {fmt!r}")
    ctx = context if context is not None else getattr(report, "context", None)
    md = _markdown(report, today or _dt.date.today(), ctx or DossierContext())
    return md if fmt == "markdown" else _to_html(md)


def _field(value: Any) -> str:
    return BLANK if value in (None, "") else _md(str(value))


def _md(text: Any) -> str:
    """Text safe inside a Markdown table cell or line (:func:`~synthguard.core.escape.md_escape`)."""
    return md_escape(text)


def _markdown(report: Any, today: _dt.date, ctx: DossierContext) -> str:
    from .records import facts

    model = report.model
    v = model.verdict
    header = model.header
    f = facts(model, "both")
    risks = risk_rows(model)
    by = {r.risk: r for r in risks}
    schema = header.get("schema") or {}
    outcome, _ = wording.decision_proposal(v.level)
    review = ctx.review_date or review_date(today)
    title = ctx.release_name or f"{v.rule.release_type} release"
    out = [f"# Release dossier: {_md(title)}", "",
           f"Prepared with synthguard {header.get('synthguard_version')} on {today.isoformat()} "
           f"(seed {header.get('seed')}, rule {v.rule.rule}).", ""]

    # 1. decision summary
    out += [f"## {SECTIONS[0]}", "",
            wording.verdict_line(v.level), "", _md(wording.sentence(v.summary)), ""]

    # 2. release and purpose
    model_text = (f"{ctx.release_model}: {RELEASE_MODELS[ctx.release_model]}"
                  if ctx.release_model else None)
    out += [f"## {SECTIONS[1]}", "", "| field | value |", "|---|---|",
            f"| release model | {_field(model_text)} |",
            f"| recipients | {_field(ctx.recipients)} |",
            f"| purpose | {_field(ctx.purpose)} |",
            f"| release type | {v.rule.release_type} |", ""]

    # 3. the data
    out += [f"## {SECTIONS[2]}", "", "| input | rows | columns | SHA-256 |", "|---|---|---|---|"]
    for role, fp in model.inputs.items():
        out.append(f"| {_md(role)} | {fmt_number(fp.get('rows'))} | {fmt_number(fp.get('columns'))} | "
                   f"{md_code(fp.get('sha256') or '')} |")
    qis = [str(c) for c in schema.get("quasi_identifiers") or []]
    sens = [str(c) for c in schema.get("sensitive") or []]
    others = [str(c) for c in (schema.get("columns") or {}) if str(c) not in set(qis) | set(sens)]
    out += ["", "- Quasi-identifiers (what an intruder may know): "
                + (", ".join(md_code(c) for c in qis) if qis else "none declared") + ".",
            "- Sensitive columns (what must not be learnt): "
            + (", ".join(md_code(c) for c in sens) if sens else "none declared") + "."]
    if others:
        out.append("- Other columns: " + ", ".join(md_code(c) for c in others) + ".")
    out.append(f"- Unit of every privacy statistic: the training {v.unit}.")
    out.append(f"- Generator: {_field(ctx.generator)}"
               + (f"; settings: {_md(ctx.generator_settings)}" if ctx.generator_settings else "")
               + ".")
    out.append("")

    # 4. threat model
    out += [f"## {SECTIONS[3]}", "", "| the attacker knows, and does | tests | risk |",
            "|---|---|---|"]
    for knows, names, risk in _threat_rows(model):
        out.append(f"| {_md(knows)} | {', '.join(md_code(n) for n in names)} | {risk} |")
    out += ["", _md(wording.intruder(risks, model.tests)), ""]

    # 5. acceptance threshold
    rule = v.rule
    out += [f"## {SECTIONS[4]}", "",
            f"- {wording.materiality(rule.materiality, v.unit)}",
            f"- False-alarm rate of the whole assessment: {pct(rule.alpha)}.",
            f"- Justification: {_md(wording.threshold_justification(ctx.threshold_justification, rule.materiality))}.",
            ""]

    # 6. results per criterion
    out += [f"## {SECTIONS[5]}", "", "| criterion | level | result | tests |", "|---|---|---|---|"]
    for key in CRITERIA_ORDER:
        r = by.get(key)
        if r is None:
            continue
        out.append(f"| {_md(r.title)} | **{r.level}** | {_md(wording.dossier_reading(r, rule.materiality))} | "
                   + (", ".join(md_code(n) for n in r.tests) or "none") + " |")
    out.append("")
    assessed = [r for r in (by[k] for k in CRITERIA_ORDER if k in by) if r.level != "not assessed"]
    readings = [f"- {_md(r.title)}: {_md(text)}"
                for r, text in zip(assessed, wording.risk_readings(assessed), strict=True)]
    out += readings
    limits = wording.decision_limits(risks)
    out += [f"- {_md(t)}" for t in limits]
    if readings or limits:
        out.append("")
    tests = list(model.tests)
    if tests:
        out += ["| test | training | control | excess (interval) | adjusted p | level |",
                "|---|---|---|---|---|---|"]
        for t in tests:
            same = (f" (= {md_code(t.get('same_as'))})" if t.get("same_as") else
                    f" ({wording.contained_mark(md_code(t.get('contained_in')))})" if t.get("contained_in")
                    else "")
            out.append(f"| {md_code(t.metric)}{same} | {pct(t.member)} | {pct(t.non_member)} | "
                       f"{pct(t.effect)} ({wording.interval(t.effect_ci)}) | "
                       f"{fmt_number(t.p_adjusted)} | {t.level} |")
        out += ["", _md(wording.interval_note(evidence_levels(report))), ""]

    # 7. mitigations and re-evaluation
    out += [f"## {SECTIONS[6]}", ""]
    todo = wording.what_to_do(risks, v.level, f)
    out += [f"- Action: {_md(t)}" for t in todo] or ["- Action: none proposed by this run."]
    retests = wording.dropped_all(risks)
    retests += [wording.retest(r.title, c) for r in risks for c in r.get("coarsening") or ()]
    out += [f"- {_md(t)}" for t in retests] or ["- No mitigation was re-tested in this run."]
    cost = ((header.get("actions") or {}).get("coarsen_retest") or {}).get("cost")
    if cost:
        out.append(f"- Cost of the re-test: {_md(cost)}.")
    out.append("")

    # 8. utility
    readings_u = [(e.name, e.result.headline.reading) for e in model.metrics
                  if e.result is not None and e.result.headline is not None
                  and e.result.family in ("fidelity", "utility")]
    out += [f"## {SECTIONS[7]}", "", _md(wording.utility_paragraph(readings_u)), ""]

    # 9. residual risk
    out += [f"## {SECTIONS[8]}", ""]
    out += [f"- {_md(t)}" for t in wording.residual(risks, f, rule.materiality)]
    reading = wording.no_control(f)
    if reading:
        out.append(f"- Without a control: {_md(reading)}")
    info = wording.informative_line(list(v.not_assessed))
    if info:
        out.append(f"- {_md(info)}")
    out.append("")

    # 10. decision and sign-off
    out += [f"## {SECTIONS[9]}", "", "| field | value |", "|---|---|",
            f"| decision supported by the assessment | {outcome} |",
            f"| decision taken | {_field(ctx.decision)} (approve / approve with conditions / "
            "reject) |",
            f"| conditions | {_field(ctx.conditions)} |",
            f"| date of decision | {_field(ctx.decision_date and ctx.decision_date.isoformat())} |",
            f"| controller | {_field(ctx.controller)} |",
            f"| signatory | {_field(ctx.signatory)} |",
            f"| role | {_field(ctx.signatory_role)} |",
            f"| signature | {BLANK.replace(' (not given)', '')} |",
            f"| review date | {review.isoformat()} (or sooner if the release, its source data or "
            "the generator change) |", ""]
    if ctx.source:
        out += [f"Organisational fields read from {_md(ctx.source)}.", ""]
    return "\n".join(out)


def _threat_rows(model: Any) -> list[tuple[str, list[str], str]]:
    """One row per attacker knowledge (from the metric cards): the tests that assume it and the
    risk they answer (``informative`` for a privacy metric that decides no level)."""
    from ..run.verdict import NON_PRIVACY_FAMILIES, RISK_TITLES
    from .risks import risk_of

    tests = {t.metric for t in model.tests}
    rows: dict[str, tuple[list[str], set[str]]] = {}
    for e in model.metrics:
        res = e.result
        if res is None or res.family in NON_PRIVACY_FAMILIES:
            continue
        metric = e.metric or e.name
        risk = risk_of(metric)
        label = (RISK_TITLES[risk][0].lower() if risk else "informative") \
            if e.name in tests else "informative"
        names, risks = rows.setdefault(knowledge_of(metric), ([], set()))
        names.append(e.name)
        risks.add(label)
    return [(k, names, ", ".join(sorted(r))) for k, (names, r) in rows.items()]


#: Page and print rules of the dossier's HTML (A4, no navigation, tables kept whole).
PRINT_CSS = ("@page{size:A4;margin:16mm 14mm}"
             "@media print{body{font-size:11px}main{max-width:none;padding:0}"
             "tr,li{page-break-inside:avoid}h2{page-break-after:avoid}}")


def _to_html(md: str) -> str:
    """The dossier's Markdown as one offline, print-ready HTML page (headings, lists, tables,
    bold, code; text escaped by :func:`~synthguard.core.escape.md_inline_html`)."""
    import re

    from .html import CSS, page

    inline = md_inline_html
    body: list[str] = []
    in_list = False
    rows: list[list[str]] = []

    def flush_table() -> None:
        if rows:
            head, *rest = rows
            body.append("<table><thead><tr>" + "".join(f"<th>{inline(c)}</th>" for c in head)
                        + "</tr></thead><tbody>"
                        + "".join("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in r) + "</tr>"
                                  for r in rest) + "</tbody></table>")
            rows.clear()

    for line in md.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in
                     re.split(r"(?<!\\)\|", line.strip().removeprefix("|").removesuffix("|"))]
            if not all(set(c) <= {"-"} for c in cells):
                rows.append(cells)
            continue
        flush_table()
        if line.startswith("- "):
            if not in_list:
                body.append("<ul>")
                in_list = True
            body.append(f"<li>{inline(line[2:])}</li>")
            continue
        if in_list:
            body.append("</ul>")
            in_list = False
        if line.startswith("### "):
            body.append(f"<h3>{inline(line[4:])}</h3>")
        elif line.startswith("## "):
            body.append(f"<h2>{inline(line[3:])}</h2>")
        elif line.startswith("# "):
            body.append(f"<h1>{inline(line[2:])}</h1>")
        elif line.strip():
            body.append(f"<p>{inline(line)}</p>")
    flush_table()
    if in_list:
        body.append("</ul>")
    return page("synthguard release dossier", "".join(body), css=CSS + PRINT_CSS)


def sentences(text: str) -> list[str]:
    """The sentences of a dossier's text (for the no-repeat check)."""
    import re

    flat = " ".join(re.sub(r"[|*`#]", " ", text).split())
    return [s.strip() for s in re.split(r"(?<=[.;:])\s+(?=[A-Z])", flat) if s.strip()]


__all__ = ["BLANK", "DOSSIER_SUFFIXES", "HTML_SUFFIXES", "SECTIONS", "check_dossier_name", "render_dossier", "review_date",
           "sentences"]


#: the dossier's file names written as print-ready HTML
HTML_SUFFIXES = (".html", ".htm")
#: the dossier's file names: Markdown (no suffix, ``.md``, ``.markdown``, ``.txt``) or HTML
DOSSIER_SUFFIXES = ("", ".md", ".markdown", ".txt", *HTML_SUFFIXES)


def check_dossier_name(path: Any, option: str = "dossier") -> None:
    """Refuse, with one line, a dossier path whose name promises another format than the two it
    is written in (Markdown, print-ready HTML), e.g. ``dossier.pdf``; ``-`` (standard output)
    passes.

    Examples
    --------
    >>> check_dossier_name("dossier.html"), check_dossier_name("-")
    (None, None)
    >>> check_dossier_name("dossier.pdf", "--dossier")
    Traceback (most recent call last):
    ...
    synthguard.errors.ConfigError: --dossier dossier.pdf: the dossier is written as Markdown or as print-ready HTML, not as .pdf: name it .md or .html (print the HTML page to get a PDF)
    """
    from pathlib import Path

    from ..errors import ConfigError

    suffix = Path(str(path)).suffix.lower()
    if str(path) != "-" and suffix not in DOSSIER_SUFFIXES:
        raise ConfigError(f"{option} {path}: the dossier is written as Markdown or as print-ready "
                          f"HTML, not as {suffix}: name it .md or .html (print the HTML page to "
                          "get a PDF)")
