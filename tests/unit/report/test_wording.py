"""One vocabulary, written once (issue #30.3, #32.2-3): renderers only render.

Every sentence about the verdict that the console, the HTML page, the notebook view and the dossier
show comes from :mod:`synthguard.run.wording` (or is the verdict's own); no renderer reads a
metric's ``details``; "detection limit" means one thing everywhere; two metrics share a row only
when the verdict says they are the same statistic on the same records; advice that cannot apply is
not given.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import synthguard
from synthguard.core.format import pct
from synthguard.core.results import Evidence, MetricResult, RecordFlags
from synthguard.data.leaks import FAMILY_NAMES
from synthguard.report import Report
from synthguard.run import wording
from synthguard.run.verdict import RiskRule, assess

PKG = Path(synthguard.__file__).resolve().parent
RENDERERS = sorted((PKG / "report").glob("*.py"))
#: What only the verdict and run/wording.py may say: levels, what is ruled out, what to do.
VERDICT_WORDS = re.compile(r"\b(high|medium|low|inconclusive|not assessed|ruled out|rules out|"
                           r"not excluded|publish|unseen|detectable)\b", re.I)


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def _literals(path: Path) -> list[tuple[int, str]]:
    """Every string constant of a module (f-string parts included), docstrings excluded."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstrings(tree)
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skip]


def test_no_renderer_writes_a_verdict_sentence_of_its_own():
    """Scan every string literal of report/ for prose (four words or more, not a style sheet)
    that speaks of levels, what is ruled out or publishing: such sentences live in run/wording."""
    offending = []
    for path in RENDERERS:
        for line, text in _literals(path):
            if "{" in text and "}" in text:  # a style sheet
                continue
            if len(re.findall(r"[A-Za-z]+", text)) >= 4 and VERDICT_WORDS.search(text):
                offending.append(f"{path.name}:{line}: {text[:70]!r}")
    assert not offending, "verdict sentences written by a renderer:\n" + "\n".join(offending)


#: Modules of the run that act on the verdict and hand their sentences to run/wording.py.
ACTORS = [PKG / "run" / "actions.py"]


def _prose(path: Path) -> list[str]:
    """The string literals of a module that read as prose: three words or more (an identifier,
    a column name or a JSON key is one word)."""
    return [f"{path.name}:{line}: {text[:70]!r}" for line, text in _literals(path)
            if len(text.split()) >= 3]


def test_run_actions_writes_no_sentence_of_its_own():
    """The drop-and-retest and coarsen-and-retest entries' texts, their costs and their reasons
    are written by run/wording.py: run/actions.py holds no prose literal at all."""
    offending = [hit for path in ACTORS for hit in _prose(path)]
    assert not offending, "sentences written by run/actions.py:\n" + "\n".join(offending)


def test_the_actions_scan_sees_a_sentence(tmp_path):
    """The scan above can fail: a coarsening text built in place is caught."""
    path = tmp_path / "actions.py"
    path.write_text('text = f"{title}: {lb}, driven by exact values of {col}"\n', encoding="utf-8")
    assert _prose(path)


def test_the_scan_sees_a_verdict_sentence():
    """The scan above can fail: a renderer line that words a level itself is caught."""
    sample = 'out.append(f"{title}: the release reads high, do not publish it")\n'
    tree_lits = [n.value for n in ast.walk(ast.parse(sample)) if isinstance(n, ast.Constant)]
    assert any(VERDICT_WORDS.search(t) and len(t.split()) >= 4 for t in tree_lits)


def test_no_renderer_reads_a_metrics_details():
    offending = []
    for path in RENDERERS:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "details":
                offending.append(f"{path.name}:{node.lineno}: .details")
            if (isinstance(node, ast.Constant) and node.value == "details"
                    and id(node) not in skip):
                offending.append(f"{path.name}:{node.lineno}: 'details'")
    assert not offending, "renderers reading details:\n" + "\n".join(offending)


def test_no_advice_to_merge_categories_is_written_anywhere():
    """The category-merging tip was given whatever the categories' sizes; coarsening advice now
    comes only from a re-test that lowered the level."""
    for path in [*RENDERERS, PKG / "run" / "wording.py"]:
        assert "merge categories" not in path.read_text(encoding="utf-8"), path


def test_the_columns_a_retest_no_longer_compares_are_said_in_one_clause_in_name_order():
    """A round's ``typed_otherwise`` in one clause, whatever the order of its entries: columns in
    name order, those read alike named together, each with what it reads as after (an identifier
    is no longer compared; another type still is, as that type); no markup, no second clause."""
    from synthguard.data.quirks import row_numbers_reason, surrogate_reason

    changed = [
        {"column": "seqn", "sdtype_before": "numerical", "sdtype_after": "id",
         "reason": surrogate_reason("numerical")},
        {"column": "case", "sdtype_before": "numerical", "sdtype_after": "id",
         "reason": row_numbers_reason("numbers the rows of every table")},
        {"column": "code", "sdtype_before": "categorical", "sdtype_after": "id",
         "reason": surrogate_reason("categorical")},
        {"column": "age", "sdtype_before": "numerical", "sdtype_after": "categorical",
         "reason": "text values (3 distinct)"}]
    said = ("without those rows, column 'age' reads as categorical (was numerical), column 'case' "
            "reads as an identifier (row numbers, not data) and is no longer compared and columns "
            "'code' and 'seqn' read as identifiers (unique per row, no value shared between the "
            "tables) and are no longer compared")
    assert wording.retyped(changed) == wording.retyped(changed[::-1]) == said
    assert ";" not in said and "<" not in said
    assert wording.retyped(None) == wording.retyped([]) == ""


# ------------------------------------------------------------------------ the advice that applies
def _row(risk, level, **kw):
    return {"risk": risk, "title": risk.title(), "level": level, **kw}


def test_advice_is_given_only_where_its_precondition_holds():
    facts = wording.Facts(copies=(3, 10), review_presence=5, how="cli")
    high = [_row("presence", "high"), _row("linkability", "inconclusive")]
    todo = " ".join(wording.what_to_do(high, "high", facts))
    assert "Drop the 3 release rows" in todo and "Review the 5" in todo
    assert "more training and control records" not in todo  # a risk alarms: fix it first
    quiet = [_row("presence", "inconclusive"), _row("linkability", "low")]
    todo = " ".join(wording.what_to_do(quiet, "inconclusive", facts))
    assert "more training and control records" in todo
    assert "Drop" not in todo and "Review" not in todo  # nothing alarms: no rows to act on
    helped = {"column": "income", "coarsening": "10 quantile bins", "level_before": "high",
              "level_after": "low", "effect_after": 0.0, "effect_ci_after": [-0.01, 0.01]}
    useless = dict(helped, column="zip", level_after="high")
    so = [_row("singling_out", "high", coarsening=[helped, useless])]
    todo = " ".join(wording.what_to_do(so, "high", wording.Facts()))
    assert "'income' coarsened" in todo and "'zip'" not in todo
    assert wording.risk_advice(_row("presence", "low"), facts) is None


def test_rows_to_review_are_called_matches_only_when_they_match_a_training_row():
    """A presence test that reads the release as a whole lists rows as examples, not as copies it
    found: the advice counts them apart, never as near matches (before: 93 rows called near
    matches, 37 of them a whole-release test's)."""
    high = [_row("presence", "high")]
    todo = " ".join(wording.what_to_do(high, "high", wording.Facts(review_presence=56,
                                                                   review_listed=37)))
    assert "Review the 93 release row(s)" in todo
    assert "56 verbatim or near matches of training rows" in todo
    assert "37 a test of the release as a whole lists itself" in todo
    only = " ".join(wording.what_to_do(high, "high", wording.Facts(review_listed=4)))
    assert "Review the 4 release row(s) a test of the release as a whole" in only
    assert "matches" not in only
    near = " ".join(wording.what_to_do(high, "high", wording.Facts(review_presence=5)))
    assert "Review the 5 release row(s) listed as verbatim or near matches" in near


def test_rows_a_linkability_test_ties_are_not_called_the_declared_roles_leak_family():
    """The export's ``linkage`` rows are those a linkability attack ties to the record it links,
    with or without declared roles: the advice never calls them "quasi-identifiers with the
    sensitive values" (the injected family, which needs declared roles)."""
    facts = wording.Facts(drops=(("neighbourhood", 37), ("linkage", 62)))
    todo = " ".join(wording.what_to_do([_row("presence", "high")], "high", facts))
    assert "62 rows that link a training record" in todo, todo
    assert "quasi-identifiers with the sensitive values" not in todo


# -------------------------------------------------------------- one meaning of "detection limit"
def _texts(rep: Report, tmp_path: Path) -> dict[str, str]:
    from html import unescape

    # table headers are labels, not statements: the cells under them are checked elsewhere
    page = re.sub(r"<thead>.*?</thead>", " ", rep.to_html())
    html = unescape(re.sub(r"<[^>]+>", " ", page)).replace("\u00a0", " ")
    dossier = re.sub(r"^\|.*\|\n\|[-|]+\|$", " ", rep.to_dossier(tmp_path / "d.md"), flags=re.M)
    return {"console": " ".join(rep.to_console(100).split()),
            "html": " ".join(html.split()),
            "dossier": " ".join(re.sub(r"[|*`]", " ", dossier).split())}


def _limit_mentions(text: str) -> list[str]:
    """Each stretch of text that states a detection limit, up to the end of its sentence."""
    return re.findall(r"(?:[Dd]etection limits?|detectable from)(?:[^.]|\.\d)*", text)


def test_detection_limit_has_one_meaning_on_console_html_and_dossier(calibration_reports,
                                                                     tmp_path):
    for name, (rep, _, _) in calibration_reports.items():
        limits = [*rep.verdict.detection_limits.values(),
                  *(x for r in rep.risks() for x in (r.get("detection_limits") or {}).values())]
        allowed = {pct(x["value"]) for x in limits if x["value"] is not None}
        allowed |= {pct(x["power"], 0) for x in limits}
        tests = {pct(t.detection_limit) for t in rep.verdict.tests} - allowed
        for surface, text in _texts(rep, tmp_path).items():
            if rep.verdict.level == "high":  # a high verdict states what it found
                assert "could go unseen" not in text, (name, surface)
            for mention in _limit_mentions(text):
                for family in FAMILY_NAMES.values():  # names such as "copies with 2 % noise"
                    mention = mention.replace(family, "")
                shown = set(re.findall(r"-?\d+(?:\.\d+)? %", mention))
                assert shown <= allowed, (name, surface, mention, shown - allowed)
                assert not shown & tests, (name, surface, mention)
        if rep.verdict.level == "high":  # a high risk states what it found, not what it misses
            for r in rep.risks():
                if r["level"] == "high":
                    assert "detect" not in r["summary"]


def test_the_limit_check_sees_a_second_meaning():
    """The check above can fail: a test's own power calculation called a detection limit."""
    text = "Detection limits (80 % power): exact copies 2.1 %; near-copies 0.6 %."
    shown = set(re.findall(r"-?\d+(?:\.\d+)? %", _limit_mentions(text)[0]))
    assert shown - {"80 %", "2.1 %"} == {"0.6 %"}


# --------------------------------------------------------------------- the same test, shown once
def _report(results, verdict) -> Report:
    header = {"synthguard_version": "test", "seed": 0,
              "inputs": {"original": {"rows": 400}, "control": {"rows": 400}}}
    entries = {n: {"status": "ok", "reason": None, "params": {}, "seconds": 0.0} for n in results}
    return Report(header, entries, results, verdict)


def test_two_tests_share_a_row_only_when_the_verdict_says_they_are_the_same():
    rng = np.random.default_rng(0)
    member = rng.random(400) < 0.2
    non_member = rng.random(400) < 0.02
    flags = RecordFlags(member, non_member, {"exact": np.ones(400, bool)})
    other = RecordFlags(np.roll(member, 7), np.roll(non_member, 3), {"exact": np.ones(400, bool)})
    ev = Evidence.from_flags("share flagged", flags, sees=("exact",), risk="presence")
    twin = Evidence.from_flags("share flagged", flags, sees=("exact",), risk="presence")
    lookalike = Evidence.from_flags("share flagged", other, sees=("exact",), risk="presence")
    assert (lookalike.member, lookalike.non_member) == (ev.member, ev.non_member)  # equal numbers
    results = {n: MetricResult(n, "privacy", e.member, "lower is safer", evidence=e)
               for n, e in (("zz_one", ev), ("zz_twin", twin), ("zz_lookalike", lookalike))}
    out, verdict = assess(results, RiskRule(), seed=0, n_perm=200)
    same = {t.metric: t.get("same_as") for t in verdict.tests}
    assert same["zz_twin"] == "zz_one" and same["zz_lookalike"] is None
    html = _report(out, verdict).to_html()
    privacy = html.split('id="privacy"', 1)[1].split('id="fidelity"', 1)[0]
    heads = re.findall(r"<tr><td><b>([^<]+)</b>", privacy)
    assert sorted(heads) == ["zz_lookalike", "zz_one"]  # equal numbers, separate tests
    row = privacy.split("<b>zz_one</b>", 1)[1].split("</tr>", 1)[0]
    assert "same statistic on the same records" in row and "zz_twin" in row


def test_a_verdict_without_risks_renders_every_risk_as_not_assessed():
    res = {"zz_ref": MetricResult("zz_ref", "privacy", 0.5, "lower is safer", risk_level="high")}
    out, verdict = assess(res, RiskRule(rule="reference"))
    rep = _report(out, verdict)
    assert [r["level"] for r in rep.risks()] == ["not assessed"] * 4
    text = " ".join(rep.to_console(100).split())
    assert text.count(wording.NOT_ASSESSED) == 4


# -------------------------------------------------------------------- cards, frame and notebook
def test_cards_state_a_number_with_its_direction_and_meaning(calibration_reports):
    rep = calibration_reports["safe"][0]
    head = rep.result("accuracy").headline
    html = rep.to_html()
    cards = html.split('<div class="cards">', 1)[1].split('<section id="decision"', 1)[0]
    big, small = wording.card_headline("accuracy", head)
    assert big == pct(head.share) and f">{big}<" in cards
    assert "higher is better" in small and "of what real held-out rows reach" in small
    # one number for the share: the card's equals the fidelity table's and the metric's reading
    assert big in head.reading and html.count(f">{big}<") >= 2


def test_to_frame_works_with_skipped_metrics():
    data = synthguard.demo.make_demo(200, 0)
    rep = synthguard.evaluate(data["original"], data["leaky"], control=data["control"],
                              metrics=["exact_matches", "text_exact_matches"], seed=0)
    assert rep.status("text_exact_matches") == "skipped"
    frame = rep.to_frame()
    assert str(frame["n"].dtype) == "Int64" and frame["value"].dtype == float
    row = frame.set_index("metric").loc["text_exact_matches"]
    assert pd.isna(row["n"]) and pd.isna(row["value"]) and row["status"] == "skipped"
    assert frame.set_index("metric").loc["exact_matches", "n"] == 100


def test_notebook_view_scopes_its_styles_and_speaks_the_api(calibration_reports):
    from synthguard.report.html import SCOPE

    html = calibration_reports["leaky"][0]._repr_html_()
    assert html.startswith(f'<div class="{SCOPE}">')
    css = html.split("<style>", 1)[1].split("</style>", 1)[0]
    selectors = [sel.strip() for rule in css.split("}") if "{" in rule
                 for sel in rule.split("{", 1)[0].split(",")]
    assert selectors and all(s == f".{SCOPE}" or s.startswith(f".{SCOPE} ") for s in selectors)
    assert "--records-out" not in html and "report.records(original, synthetic)" in html


@pytest.mark.parametrize("css", ["body{margin:0}", "h1,table{x:1}", ":root{--a:1}"])
def test_scoped_css_leaves_no_page_wide_rule(css):
    from synthguard.report.html import scoped_css

    out = scoped_css(css)
    assert not re.search(r"(^|[},])\s*(body|h1|table|:root)\b", out), out


def test_the_interval_note_states_the_tests_own_confidence_level():
    """The HTML page and the dossier say which interval an excess is printed with, at the level
    the tests' evidence states (a fixed '95 %' would claim more than a 99 % run's numbers)."""
    import numpy as np
    import pandas as pd

    import synthguard

    rng = np.random.default_rng(0)
    f = pd.DataFrame({"a": rng.integers(0, 30, 600), "b": rng.integers(0, 30, 600),
                      "c": rng.choice(list("xyz"), 600)})
    rep = synthguard.evaluate(f.iloc[:250], f.iloc[250:400], control=f.iloc[400:],
                              metrics={"near_copies": {"confidence_level": 0.99}},
                              retest_rows=0, retest_columns=0)
    note = "two one-sided 99 % bounds (a 98 % interval)"
    assert note in rep.to_dossier() and note in rep.to_html()
    assert wording.interval_note([0.95]).startswith(
        "The interval of an excess is its two one-sided 95 % bounds (a 90 % interval)")
