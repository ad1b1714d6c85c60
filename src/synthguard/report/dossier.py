"""The release dossier: the file a privacy officer signs and a regulator asks for.

Laid out the way data-protection authorities read an anonymisation assessment (Article 29 Working
Party, Opinion 05/2014 "on Anonymisation Techniques", WP216): the release and its context, the
attacker's assumed knowledge per test, the three criteria (singling out, linkability, inference)
plus the presence of training records, each with its test, baseline, interval and detection limit,
the motivated-intruder reading, the residual risk, the inputs' fingerprints, the tool version, the
seed, and a review date (run date + 1 year). Every number in it comes from the report's JSON
(``Report.to_json``), formatted as there or as a percentage of it.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from typing import Any

from ..core.escape import md_code, md_escape, md_inline_html
from .risks import headline_limit, interval, knowledge_of, no_control_reading, pct, risks_of

WP216 = ("singling_out", "linkability", "inference")


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


def render_dossier(report: Any, fmt: str = "markdown", today: _dt.date | None = None) -> str:
    """The dossier of ``report`` as Markdown (``fmt="markdown"``) or one offline HTML page.

    Parameters
    ----------
    report : Report
        The evaluation.
    fmt : {"markdown", "html"}
        Output format.
    today : date, optional
        The run date (default: today); the review date is one year later.

    Returns
    -------
    str
        The dossier text.
    """
    if fmt not in ("markdown", "html"):
        raise ValueError(f"fmt must be 'markdown' or 'html', got {fmt!r}")
    md = _markdown(report, today or _dt.date.today())
    if fmt == "markdown":
        return md
    return _to_html(md)


def _markdown(report: Any, today: _dt.date) -> str:
    from .console import what_to_do

    d = report.to_dict()
    v = d.get("verdict") or {}
    tests = {t["metric"]: t for t in v.get("tests") or []}
    release = md_escape(v.get("release_type", "synthetic"))
    out = ["# Release dossier", "",
           f"Decision: **{str(v.get('level', '?')).upper()}**. Prepared with synthguard "
           f"{d.get('synthguard_version')} on {today.isoformat()}; review by "
           f"{review_date(today).isoformat()} or whenever the release, its source data or the "
           "generator change.", "",
           "## Release context", "",
           f"- Release type: {release} ("
           + ("every release row is generated; none is meant to be a real person"
              if release == "synthetic" else "every release row stands for a real person")
           + ").",
           f"- Materiality: a leak matters when it exposes {pct(v.get('materiality'))} or more of "
           f"the training {md_escape(v.get('unit', 'records'))} beyond what the release reveals about "
           f"people it never saw.",
           f"- False-alarm rate of the whole assessment: {pct(v.get('alpha'))}; detection limits "
           f"at {pct(v.get('power'))} power.",
           f"- Seed: {md_escape(d.get('seed'))}; tool: synthguard {md_escape(d.get('synthguard_version'))}; "
           f"rule: {md_escape(v.get('rule'))}.", "",
           "| input | rows | columns | SHA-256 |", "|---|---|---|---|"]
    for role, fp in (d.get("inputs") or {}).items():
        if isinstance(fp, Mapping):
            out.append(f"| {md_escape(role)} | {md_escape(fp.get('rows'))} | {md_escape(fp.get('columns'))} | "
                       f"{md_code(fp.get('sha256'))} |")
    out += ["", "## Criteria", "",
            "The three criteria of the Article 29 Working Party's opinion on anonymisation "
            "(WP216: singling out, linkability, inference), and the presence of training records "
            "in the release. Each test compares training records with real records held out "
            "from training (the control), under the same release.", ""]
    risks = risks_of(d)
    by = {r["risk"]: r for r in risks}
    for key in (*WP216, "presence"):
        r = by.get(key)
        if r is None:
            continue
        out += [f"### {md_escape(r['title'])}", "", md_escape(r.get('criterion')), "",
                f"- Level: **{md_escape(r['level'])}**.", f"- Reading: {md_escape(r.get('summary'))}"]
        for name in r.get("tests") or []:
            t = tests.get(name) or {}
            out.append(f"- Test {md_code(name)}: {md_escape(t.get('statistic', 'see the JSON report'))}; "
                       f"attacker knows {md_escape(knowledge_of(name))}; "
                       f"baseline: {md_escape(t.get('baseline', 'the control'))}; training "
                       f"{pct(t.get('member'))} vs control {pct(t.get('non_member'))}; excess "
                       f"{pct(t.get('effect'))} ({interval(t.get('effect_ci'))}); "
                       f"{md_escape(t.get('test', 'test'))}, adjusted p {_p(t.get('p_adjusted'))}; "
                       f"detection limit {pct(t.get('detection_limit'))}; level {md_escape(t.get('level'))}.")
        lims = [x for x in (r.get("detection_limits") or {}).values() if isinstance(x, Mapping)]
        for x in lims:
            out.append(f"- Detection limit: {md_escape(x.get('text'))}.")
        if not r.get("tests"):
            out.append("- No test of this criterion compared training records with the control.")
        if r.get("settle"):
            out.append(f"- To decide: {md_escape(r['settle'])}.")
        for c in r.get("coarsening") or ():
            out.append(f"- Mitigation tested: {md_escape(c['text'])}; coarsening: {md_escape(c['coarsening'])}, the "
                       "same applied to the release, the training and the control rows, every "
                       "test of the verdict run again.")
        out.append("")
    out += ["## Motivated-intruder reading", "", md_escape(_intruder(risks)), ""]
    out += ["## Residual risk", ""]
    reading = no_control_reading(d)
    if reading:
        out.append(f"- Without a control: {md_escape(reading)}")
    for r in risks:
        lim = headline_limit(r)  # the largest over the leak types, as the verdict states it
        if r["level"] == "low" and lim is not None and lim["value"] is not None:
            out.append(f"- {md_escape(r['title'])}: leaks smaller than {pct(lim['value'])} of the training "
                       "records could go unseen.")
        elif r["level"] in ("inconclusive", "not assessed"):
            out.append(f"- {md_escape(r['title'])}: {md_escape(r['level'])}; the risk is not bounded by this run.")
    if v.get("not_assessed"):
        out.append("- Informative only (no test against the control): "
                   + ", ".join(md_code(n) for n in v["not_assessed"]) + ".")
    out.append("- Outside these tests: attackers with knowledge beyond the assumptions above, "
               "and linkage with data sets that are not part of this assessment.")
    todo = what_to_do(d)
    if todo:
        out += ["", "## Actions", ""] + [f"- {md_escape(t)}" for t in todo]
        cost = ((d.get("actions") or {}).get("coarsen_retest") or {}).get("cost")
        if cost:
            out.append(f"- Cost of the coarsening re-test: {md_escape(cost)}.")
    out += ["", "## Sign-off", "", "Reviewed by: ______________________  Role: ______________  "
            "Signature: ______________", ""]
    return "\n".join(out)


def _p(x: Any) -> str:
    from .console import fmt_number

    return fmt_number(x)


def _intruder(risks: list[dict[str, Any]]) -> str:
    """What a motivated intruder (competent, with the release and public information, no special
    skills or insider access) could do, read from the levels."""
    bad = [r for r in risks if r["level"] in ("high", "medium")]
    if not bad:
        undecided = [r["title"].lower() for r in risks if r["level"] in ("inconclusive",
                                                                          "not assessed")]
        text = ("A motivated intruder holding the release and a target's public details would do "
                "no better on the training records than on people never used to train the "
                "generator, for every risk this run decided.")
        if undecided:
            text += " Not decided by this run: " + ", ".join(undecided) + "."
        return text
    can = {"presence": "tell that a person was in the training data by finding their record in "
                       "the release",
           "singling_out": "isolate one person's record with a simple condition on its values",
           "linkability": "link a person's records across two sources through the release",
           "inference": "guess a person's hidden attribute from the release"}
    return ("A motivated intruder holding the release and a target's public details could "
            + "; ".join(f"{can.get(r['risk'], r['risk'])} ({pct(r.get('effect'))} of the "
                        "training records beyond chance)" for r in bad)
            + ". The release should not be published as it is.")


def _to_html(md: str) -> str:
    """The dossier's Markdown as one offline HTML page (headings, lists, tables, bold, code)."""
    import re

    from .html import page

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
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().removeprefix("|").removesuffix("|"))]
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
    return page("synthguard release dossier", "".join(body))
