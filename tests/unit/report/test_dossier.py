"""The dossier a regulator asks for (issue #30.4): every item by section, every quasi-identifier and
sensitive column named, every number a number of the JSON, no sentence twice, about four pages,
organisational fields from a context file or visibly blank, the rows marked for review mentioned."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from synthguard.calibration import PUBLIC_TABLE_METADATA
from synthguard.core.format import fmt_number, pct
from synthguard.errors import ConfigError
from synthguard.registry import info_of
from synthguard.report.context import DossierContext, load_context
from synthguard.report.dossier import BLANK, SECTIONS, sentences

EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "dossier-context.example.yaml"


def _sections(text: str) -> dict[str, str]:
    parts = re.split(r"^## ", text, flags=re.M)
    return {p.split("\n", 1)[0]: p.split("\n", 1)[1] for p in parts[1:]}


@pytest.fixture(scope="module")
def dossiers(calibration_reports):
    return {name: rep.to_dossier() for name, (rep, _, _) in calibration_reports.items()}


def test_the_leaky_release_reads_high_and_the_safe_one_raises_no_alarm(calibration_reports):
    assert calibration_reports["safe"][0].verdict.level in ("low", "inconclusive")
    assert calibration_reports["leaky"][0].verdict.level == "high"


def test_every_item_is_in_its_section(calibration_reports, dossiers):
    for name, (rep, _, _) in calibration_reports.items():
        sec = _sections(dossiers[name])
        assert list(sec) == list(SECTIONS), name
        v = rep.verdict
        assert v.level.upper() in sec["1. Decision summary"]
        supported = {"low": "approve", "inconclusive": "approve with conditions",
                     "high": "reject"}[v.level]
        assert f"the assessment supports {supported} (" in sec["1. Decision summary"]
        for field in ("release model", "recipients", "purpose", "release type"):
            assert f"| {field} |" in sec["2. Release and purpose"], field
        data = sec["3. The data"]
        for role, fp in rep.model.inputs.items():
            assert f"| {role} | {fp['rows']} | {fp['columns']} | `{fp['sha256']}` |" in data
        assert "Generator:" in data and "Unit of every privacy statistic" in data
        threat = sec["4. Threat model"]
        for t in rep.verdict.tests:  # each test's attacker knowledge, from its card
            row = next(line for line in threat.splitlines() if f"`{t.metric}`" in line)
            assert info_of(t.metric).card["knowledge"] in row
        assert "motivated intruder" in threat.lower()
        threshold = sec["5. Acceptance threshold"]
        assert pct(v.rule.materiality) in threshold and "Justification:" in threshold
        results = sec["6. Results per criterion"]
        for r in rep.risks():
            assert re.search(rf"\| {r['title']} \| \*\*{r['level']}\*\* \|", results), r["title"]
        assert "Action:" in sec["7. Mitigations and re-evaluation"]
        assert rep.result("accuracy").headline.reading in sec["8. Utility"]
        assert "Outside these tests" in sec["9. Residual risk"]
        sign = sec["10. Decision and sign-off"]
        for field in ("decision supported by the assessment", "decision taken", "conditions",
                      "date of decision", "controller", "signatory", "signature", "review date"):
            assert f"| {field} |" in sign, field


def test_every_quasi_identifier_and_sensitive_column_is_named(dossiers):
    meta = PUBLIC_TABLE_METADATA["nhefs"]
    for text in dossiers.values():
        data = _sections(text)["3. The data"]
        for col in [*meta["quasi_identifiers"], *meta["sensitive"]]:
            assert f"`{col}`" in data, col


def _numbers(text: str) -> list[str]:
    return re.findall(r"-?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?", text)


def _json_renderings(d) -> set[str]:
    """Every way the dossier may write a JSON number: as is, and as a percentage."""
    out: set[str] = set()

    def walk(x):
        if isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
        elif isinstance(x, (int, float)) and not isinstance(x, bool):
            out.update({str(x), fmt_number(x), fmt_number(100 * x), pct(x).replace(" %", ""),
                        pct(x, 0).replace(" %", "")})
        elif isinstance(x, str):
            out.update(_numbers(x))

    walk(d)
    return out


def test_every_number_in_the_dossier_is_a_number_of_the_json(calibration_reports, dossiers):
    for name, (rep, _, _) in calibration_reports.items():
        text = dossiers[name]
        d = json.loads(rep.to_json())
        allowed = _json_renderings(d)
        body = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
        body = re.sub(r"`[0-9a-f]{64}`", "", body)  # fingerprints
        body = re.sub(r"\d{4}-\d{2}-\d{2}", "", body)  # run and review dates
        body = re.sub(r"synthguard [\w.+-]+|SHA-256|WP216|criterion [123]", "", body)
        # the records export's count is checked against the export itself below
        body = re.sub(r"The records export marks \d+ record", "", body)
        body = re.sub(r"The records export lists [\d,]+ record\(s\) behind the high and medium "
                      r"findings \([\d,]+ to drop, [\d,]+ to review\)", "", body)
        body = re.sub(r"its [\d,]+ record\(s\) marked 'context'", "", body)
        stray = [x for x in _numbers(body) if x not in allowed]
        assert not stray, f"{name}: dossier numbers not in the JSON report: {stray[:10]}"


def test_no_sentence_repeats_and_it_fits_about_four_pages(dossiers):
    for name, text in dossiers.items():
        prose = "\n".join(line for line in text.splitlines() if not line.startswith("|"))
        seen = [s for s in sentences(prose) if len(s) > 25]
        repeated = {s for s in seen if seen.count(s) > 1}
        assert not repeated, (name, repeated)
        words = len(text.split())
        assert words <= 2200, (name, words)  # about four printed pages (see test_screenshots)


def test_a_dossier_without_alarm_claims_no_finding_and_counts_the_context_records(
        calibration_reports, dossiers):
    """A safe release: no test reads high or medium, so the export marks no record 'drop' or
    'review'; the records its tests list themselves are 'context' (not findings), and the dossier
    says so with their count (it said 'N record(s) review' before)."""
    rep, parts, release = calibration_reports["safe"]
    assert rep.verdict.level in ("low", "inconclusive")
    export = rep.records(parts["original"], release)
    assert set(export["action"]) <= {"context"}
    n = int((export["action"] == "context").sum())
    assert n > 0 and export["reason"].str.startswith("not a finding (").all()
    residual = " ".join(_sections(dossiers["safe"])["9. Residual risk"].split())
    assert "'review'" not in residual
    assert ("The records export lists no row behind a finding: no test reads high or medium; its "
            f"{n:,} record(s) marked 'context' are those tests that found nothing beyond chance "
            "list themselves: not findings (no excess over chance, which does not show that none "
            "copies a person), not counted among the rows to drop or review.") in residual


def test_a_low_dossier_mentions_the_rows_marked_review_and_the_bound_of_each_risk():
    from synthguard.run import wording

    risks = [{"risk": r, "title": t, "level": "low", "bound": b} for r, t, b in (
        ("presence", "Presence of training records", 0.006), ("singling_out", "Singling out", 0.004))]
    lines = wording.residual(risks, wording.Facts(review_all=283), 0.01)
    assert "The records export marks 283 record(s) 'review'" in " ".join(lines)
    assert any("below 0.6 %" in line for line in lines) and any("below 0.4 %" in line
                                                                 for line in lines)
    assert len(set(lines)) == len(lines)


def test_without_context_the_organisational_fields_are_visibly_blank(dossiers):
    for text in dossiers.values():
        sec = _sections(text)
        for field in ("release model", "recipients", "purpose"):
            assert f"| {field} | {BLANK} |" in sec["2. Release and purpose"]
        for field in ("decision taken", "controller", "signatory", "date of decision"):
            assert re.search(rf"\| {field} \| {re.escape(BLANK)}", sec["10. Decision and sign-off"])


def test_the_context_file_fills_the_organisational_fields(calibration_reports, tmp_path):
    rep = calibration_reports["leaky"][0]
    ctx = load_context(EXAMPLE)
    text = rep.to_dossier(tmp_path / "d.md", context=EXAMPLE)
    sec = _sections(text)
    assert text.startswith(f"# Release dossier: {ctx.release_name}")
    assert "restricted: shared with named recipients" in sec["2. Release and purpose"]
    for value in (ctx.recipients, ctx.purpose):
        assert value in sec["2. Release and purpose"]
    assert ctx.generator in sec["3. The data"] and ctx.generator_settings in sec["3. The data"]
    assert ctx.threshold_justification in sec["5. Acceptance threshold"]
    sign = sec["10. Decision and sign-off"]
    for value in (ctx.decision, ctx.conditions, ctx.controller, ctx.signatory, ctx.signatory_role,
                  ctx.decision_date.isoformat(), ctx.review_date.isoformat()):
        assert value in sign, value
    assert sign.count("(not given)") == 0
    # the supported decision stays the assessment's, beside the one taken
    assert "| decision supported by the assessment | reject |" in sign
    assert "context" not in json.loads(rep.to_json())  # never part of the JSON


@pytest.mark.parametrize("body, field", [
    ("release_modle: public\n", "release_modle"),
    ("release_model: open\n", "release_model"),
    ("decision: maybe\n", "decision"),
    ("review_date: next year\n", "review_date"),
    ("- a list\n", "mapping"),
])
def test_a_bad_context_file_names_the_file_and_the_field(tmp_path, body, field):
    path = tmp_path / "ctx.yaml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(ConfigError, match=re.escape(str(path))) as err:
        load_context(path)
    assert field in str(err.value)


def test_the_cli_refuses_a_bad_context_before_any_work(tmp_path):
    from click.testing import CliRunner

    from synthguard.cli import main

    bad = tmp_path / "ctx.yaml"
    bad.write_text("signatory_rolee: DPO\n", encoding="utf-8")
    missing = tmp_path / "nope.csv"  # the inputs are never read: the context is checked first
    res = CliRunner().invoke(main, ["evaluate", "-o", str(missing), "-s", str(missing),
                                    "--context", str(bad), "--no-progress"])
    assert res.exit_code == 2 and "signatory_rolee" in res.output and "nope.csv" not in res.output


def test_the_example_context_is_valid_and_complete():
    ctx = load_context(EXAMPLE)
    names = [f for f in DossierContext.__dataclass_fields__ if f != "source"]
    assert all(getattr(ctx, f) for f in names), [f for f in names if not getattr(ctx, f)]


def test_the_html_dossier_is_print_ready(calibration_reports, tmp_path):
    rep = calibration_reports["safe"][0]
    html = rep.to_dossier(tmp_path / "d.html")
    assert html.startswith("<!DOCTYPE html>") and "@page{size:A4" in html
    for title in SECTIONS:
        assert f"<h2>{title}</h2>" in html
    assert "<script" not in html.lower() and "\\_" not in html


def test_each_criterion_of_the_intruder_paragraph_cites_its_own_finding():
    """A finding that drives several criteria (copies vote for each) is cited once with its
    excess; the other criteria say "the same copies" and cite their own strongest test, so the
    inference clause states the inference tests' excess, not the copies' (issue #30)."""
    from synthguard.run import wording

    risks = [{"risk": r, "title": r, "level": "high", "metric": "near_copies", "effect": 0.448}
             for r in ("presence", "singling_out", "linkability", "inference")]
    tests = [{"metric": m, "risk": r, "level": "high", "effect": e} for m, r, e in (
        ("near_copies", "presence", 0.448), ("singling_out_univariate", "singling_out", 0.249),
        ("linkability", "linkability", 0.288), ("inference", "inference", 0.203),
        ("cap", "inference", 0.278), ("disco", "inference", 0.3))]
    tests.append({"metric": "nndr", "risk": "inference", "level": "high", "effect": 0.5,
                  "same_as": "disco"})  # a twin is not a finding of its own
    text = wording.intruder(risks, tests)
    assert text.count(pct(0.448)) == 1 and text.count("the same copies as above") == 3
    clauses = text.split("; ")
    assert "singling_out_univariate on its own: 24.9 %" in text
    assert "linkability on its own: 28.8 %" in text
    assert clauses[-1].endswith("disco on its own: 30.0 % of the training records beyond chance).")


def test_a_dossier_path_promising_another_format_is_refused_by_the_api_too(calibration_reports,
                                                                           tmp_path):
    """``Report.to_dossier("x.pdf")`` would hold Markdown under a PDF's name: refused, nothing
    written; ``.md`` and ``.html`` are written."""
    rep = calibration_reports["safe"][0]
    with pytest.raises(ConfigError, match=r"not as \.pdf: name it \.md or \.html"):
        rep.to_dossier(tmp_path / "x.pdf")
    assert not (tmp_path / "x.pdf").exists()
    rep.to_dossier(tmp_path / "x.md")
    assert (tmp_path / "x.md").read_text().startswith("#")
