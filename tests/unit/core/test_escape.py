"""Names and values made safe for CSV (formula injection), Markdown (raw HTML, structure) and the
terminal (control characters), each written so it still reads as itself."""

from __future__ import annotations

import csv
import doctest
import html
import io
import re

import numpy as np
import pandas as pd
import pytest

import synthguard.core.escape as esc
from synthguard.core.escape import (
    csv_formula,
    csv_safe,
    md_code,
    md_escape,
    md_inline_html,
    terminal_safe,
)

HOSTILE = ["=1+1", "@sex", '=HYPERLINK("http://x")', "</code><script>alert(1)</script>", "| pipe",
           "`tick`", "a\nb", "+emp", "-edu", "\tTab", "\rcr", "*b* _i_ [l](javascript:alert(1))",
           "# heading", "1. item", "- item", "&lt;x&gt;", "back\\slash", "\x1b[2Jclear", "\u202eevil"]


def test_docstring_examples_run():
    assert doctest.testmod(esc).failed == 0


def _cells(text: str) -> list[str]:
    return [c for row in csv.reader(io.StringIO(text, newline="")) for c in row]


def starts_a_formula(cell: str) -> bool:
    """A spreadsheet runs the cell: a trigger first and not a number Python reads (decided without
    the writer's code)."""
    if not cell or cell[0] not in "=+-@\t\r":
        return False
    try:
        float(cell)
        return False
    except ValueError:
        return True


def test_no_header_or_cell_starts_a_formula_and_numbers_stay_numbers():
    frame = pd.DataFrame({name: [name, "ok", None] for name in HOSTILE})
    frame["-3.5"] = [-3.5, np.inf, -np.inf]  # a numeric column: written as pandas writes numbers
    frame["codes"] = ["-3.5", "+2", "-1e-05"]  # numbers in a text column are numbers too
    frame["cat"] = pd.Series(["=cat", "-", "x"], dtype="category")
    text = csv_safe(frame).to_csv(index=False, lineterminator="\r\n")
    cells = _cells(text)
    assert not [c for c in cells if starts_a_formula(c)]
    back = pd.read_csv(io.StringIO(text))
    assert back["-3.5"].tolist()[0] == -3.5 and np.isinf(back["-3.5"]).sum() == 2
    assert back["codes"].tolist() == [-3.5, 2.0, -1e-05]
    assert back.iloc[0, 0] == "'=1+1" and back.columns[0] == "'=1+1"
    assert back["cat"].tolist() == ["'=cat", "'-", "x"]
    # every other cell and name unchanged
    assert back.iloc[1, 0] == "ok" and "| pipe" in back.columns and "`tick`" in back.columns


def test_csv_safe_does_not_modify_its_input_and_keeps_missing_values():
    frame = pd.DataFrame({"a": ["=x", None, "y"]})
    before = frame.copy()
    out = csv_safe(frame)
    pd.testing.assert_frame_equal(frame, before)
    assert out["a"].isna().tolist() == [False, True, False]


@pytest.mark.parametrize("text,formula", [("=1", True), ("+1", False), ("-1", False), ("-1.5e3", False),
                                          ("-inf", False), ("nan", False), ("-", True), ("--1", True),
                                          ("-1,5", True), ("@", True), ("\t1", True), ("\r1", True),
                                          (" =1", False), ("a", False), ("", False)])
def test_what_counts_as_a_formula(text, formula):
    assert csv_formula(text) is formula


@pytest.mark.parametrize("name", HOSTILE)
def test_markdown_escape_renders_the_name_as_text(name):
    markdown_it = pytest.importorskip("markdown_it")
    md = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table")
    line = f"- Column {md_escape(name)} and {md_code(name)} here"
    rendered = md.render(line)
    assert "<script" not in rendered and "<a " not in rendered and "<em>" not in rendered
    assert rendered.count("<li>") == 1 and "<h1>" not in rendered and "<ol>" not in rendered
    assert "\n" not in line and "<" not in line
    # the text a reader sees is the name (control characters shown as escapes)
    inner = rendered.removeprefix("<ul>\n<li>").removesuffix("</li>\n</ul>\n")
    shown = html.unescape(re.sub(r"<[^>]+>", "", inner))
    assert shown == f"Column {terminal_safe(name)} and {terminal_safe(name)} here"


def test_markdown_table_cells_keep_their_pipes():
    markdown_it = pytest.importorskip("markdown_it")
    md = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table")
    rendered = md.render(f"| a | b |\n|---|---|\n| {md_escape('| pipe')} | x |\n")
    assert rendered.count("<td>") == 2 and "| pipe" in rendered


def test_markdown_line_to_html_inverts_the_escapes():
    for name in HOSTILE:
        out = md_inline_html(f"**Level** {md_escape(name)} `code`")
        assert "<script" not in out and out.startswith("<b>Level</b> ") and out.endswith(" <code>code</code>")
        assert html.unescape(out.removeprefix("<b>Level</b> ").removesuffix(" <code>code</code>")) == terminal_safe(name)


def test_terminal_safe_shows_control_characters():
    assert terminal_safe("a\x1b[2Jb\r\x9b") == "a\\x1b[2Jb\\r\\x9b"
    assert terminal_safe("a\nb\tc") == "a\\nb\\tc"
    assert terminal_safe("a\nb\tc", keep_lines=True) == "a\nb\tc"
    assert terminal_safe("\u202eevil") == "\\u202eevil"
    assert terminal_safe("âge 年齢") == "âge 年齢"
