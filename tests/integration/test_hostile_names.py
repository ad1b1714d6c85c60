"""Exports safe to open (issue 33): a real shared table (acs12) whose columns are renamed to hostile
names (``=1+1``, ``@sex``, ``=HYPERLINK(...)``, ``</code><script>...``, ``| pipe``, backticks, newlines,
an escape sequence...) and whose values hold a spreadsheet command, run through every output of the
command line. No CSV cell or header starts a formula, the Markdown dossier holds no raw HTML (and
renders none in a CommonMark viewer that passes HTML through), the HTML pages escape every name,
the console prints no control character, and no input file is touched.
"""

from __future__ import annotations

import csv
import html
import json
import re

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from synthguard.cli import main
from synthguard.generators import GaussianCopula
from tests.unit.core.test_escape import starts_a_formula

from .test_bad_input import run

SCRIPT = "</code><script>alert(1)</script>"
#: acs12 column -> hostile name; ``income`` drives singling out, so its name reaches every sentence
NAMES = {"income": SCRIPT + "\x1b[2J", "age": "=1+1", "gender": "@sex", "race": '=HYPERLINK("http://x")',
         "married": "| pipe", "lang": "`tick`", "citizen": "new\nline", "edu": "-edu", "employment": "+emp",
         "hrs_work": "\tTab", "disability": "*b* _i_ [l](javascript:alert(1))", "birth_qrtr": "# heading",
         "time_to_work": "\rcr=2+3"}
COMMAND = "=cmd|' /C calc'!A0"


def _csv_cells(path) -> list[str]:
    with open(path, encoding="utf-8", newline="") as fh:
        return [c for row in csv.reader(fh) for c in row]


@pytest.fixture(scope="module")
def hostile(shared_data, tmp_path_factory):
    d = pd.read_csv(shared_data / "acs12.csv", nrows=500).rename(columns=NAMES)
    d.loc[d.index % 7 == 0, "@sex"] = COMMAND  # a value, not only a name
    perm = np.random.default_rng(33).permutation(len(d))
    train, control = d.iloc[perm[:250]].reset_index(drop=True), d.iloc[perm[250:]].reset_index(drop=True)
    fresh = GaussianCopula(seed=0).fit(train).generate(len(train))
    release = pd.concat([train.iloc[:75], fresh.iloc[75:]], ignore_index=True)  # 30 % copies
    folder = tmp_path_factory.mktemp("hostile")
    files = {}
    for role, frame in (("original", train), ("synthetic", release), ("control", control)):
        files[role] = folder / f"{role}.csv"
        frame.to_csv(files[role], index=False, lineterminator="\r\n")  # so the \r in a name is quoted
    files["metadata"] = folder / "meta.json"
    files["metadata"].write_text(json.dumps({"quasi_identifiers": ["=1+1", "@sex", '=HYPERLINK("http://x")', "-edu"],
                                             "sensitive": [NAMES["income"]]}))
    before = {p: p.read_bytes() for p in files.values()}
    out = {k: folder / f"out.{k}" for k in ("json", "html", "md", "csv")}
    # color=True: printed as to a terminal (click strips ANSI sequences only off a terminal)
    res = CliRunner().invoke(main, ["evaluate", "-o", str(files["original"]), "-s", str(files["synthetic"]), "-c", str(files["control"]),
               "-m", str(files["metadata"]), "--metrics", "exact_matches,singling_out_univariate,cap",
               "--no-progress", "--retest-rows", "0", "--json", str(out["json"]), "--html", str(out["html"]), "--dossier",
               str(out["md"]), "--records-out", str(out["csv"])], color=True)
    assert res.exit_code == 0, res.output
    yaml = folder / "p.yaml"
    yaml.write_text(f"Loader:\n  data:\n    filepath: {files['original']}\nSplitter:\n  s:\n    random_state: 1\n"
                    f"Synthesizer:\n  syn:\n    method: custom_data\n    filepath: {files['synthetic']}\n"
                    "Evaluator:\n  q:\n    method: default\nReporter:\n  r:\n    method: save_report\n"
                    "    granularity: [global, columnwise, pairwise]\n  d:\n    method: save_data\n"
                    "    source: Synthesizer\n")
    petsard = run(["run", str(yaml), "--output-dir", str(folder / "petsard")])
    assert petsard.exit_code == 0, petsard.output
    return {"files": files, "before": before, "out": out, "console": res.stdout, "folder": folder,
            "report": json.loads(out["json"].read_text(encoding="utf-8")), "evaluate": res, "run": petsard}


def test_the_hostile_names_reach_the_outputs(hostile):
    """The run used the names (else the checks below prove nothing): every one is a column of the
    report, and the script-named column drives the findings the dossier and the console print."""
    assert hostile["evaluate"].exit_code == 0 and hostile["run"].exit_code == 0
    cols = set(hostile["report"]["inferred_metadata"])
    assert {"=1+1", "@sex", '=HYPERLINK("http://x")', SCRIPT + "\x1b[2J", "| pipe", "`tick`", "new\nline"} <= cols
    assert hostile["report"]["verdict"]["level"] == "high"
    assert "script" in hostile["out"]["md"].read_text(encoding="utf-8")
    assert "script" in hostile["console"]


def test_no_csv_cell_or_header_starts_a_formula(hostile):
    assert hostile["evaluate"].exit_code == 0 and hostile["run"].exit_code == 0
    csvs = [hostile["out"]["csv"], *sorted((hostile["folder"] / "petsard").glob("*.csv"))]
    names = sorted(p.name for p in csvs[1:])
    assert names == ["petsard_Loader[data]_Splitter[s_[1-1]]_Synthesizer[syn].csv", "petsard_Reporter[columnwise].csv",
                     "petsard_Reporter[global].csv", "petsard_Reporter[pairwise].csv"]
    for path in csvs:
        cells = _csv_cells(path)
        assert cells and not [c for c in cells if starts_a_formula(c)], path.name
    # the names are there, neutralised, and read back as one cell each (no row broken by a \r)
    columnwise = pd.read_csv(hostile["folder"] / "petsard" / "petsard_Reporter[columnwise].csv")
    assert {"'=1+1", "'@sex", "'=HYPERLINK(\"http://x\")", SCRIPT + "\x1b[2J", "'\rcr=2+3"} <= set(columnwise["column"])
    data = pd.read_csv(hostile["folder"] / "petsard" / "petsard_Loader[data]_Splitter[s_[1-1]]_Synthesizer[syn].csv")
    assert "'" + COMMAND in set(data["'@sex"]) and data["'=1+1"].dtype.kind in "if"  # numbers stay numbers


def test_the_markdown_dossier_holds_and_renders_no_raw_html(hostile):
    assert hostile["evaluate"].exit_code == 0
    md = hostile["out"]["md"].read_text(encoding="utf-8")
    assert "<" not in md  # every < of a name or sentence is &lt;
    assert "&lt;/code&gt;&lt;script&gt;alert(1)&lt;/script&gt;\\x1b\\[2J" in md  # as text, escapes shown
    markdown_it = pytest.importorskip("markdown_it")
    rendered = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table").render(md)
    assert "<script" not in rendered and "<a " not in rendered and "<em>" not in rendered
    assert len(re.findall(r"<h1>", rendered)) == 1  # '# heading' started no heading
    from synthguard.report.dossier import _to_html  # the HTML dossier is this page of the Markdown

    page = _to_html(md)
    assert "<script" not in page and html.escape(SCRIPT) in page


def test_the_html_pages_escape_every_name(hostile):
    assert hostile["evaluate"].exit_code == 0
    page = hostile["out"]["html"].read_text(encoding="utf-8")
    assert "<script" not in page and "href=\"javascript" not in page
    assert html.escape(SCRIPT) in page and html.escape('=HYPERLINK("http://x")') in page


def test_the_console_prints_no_control_character(hostile):
    assert hostile["evaluate"].exit_code == 0
    out = hostile["console"]
    assert "\x1b" not in out and "\r" not in out
    assert SCRIPT + "\\x1b[2J" in out  # shown, escaped


def test_no_input_was_touched(hostile):
    assert hostile["evaluate"].exit_code == 0 and hostile["run"].exit_code == 0
    assert {p: p.read_bytes() for p in hostile["files"].values()} == hostile["before"]


def test_the_json_report_keeps_the_names_as_they_are(hostile):
    text = hostile["out"]["json"].read_text(encoding="utf-8")
    assert json.loads(text)["inferred_metadata"][SCRIPT + "\x1b[2J"]
    assert text.isascii()  # escaped by JSON itself (\u001b, \n)
