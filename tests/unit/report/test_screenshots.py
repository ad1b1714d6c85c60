"""Chromium screenshots of what a reader sees first (issue #30.7): the HTML report of a leaky and of
a safe release at 1,400 px, and a notebook showing a report's ``_repr_html_``. Each test asserts
what must be in the first 900 px: the decision, the four risks with their levels and what bounds
them (the excess found, or the detection limit). The dossier prints on about four A4 pages.

Screenshots are written under pytest's ``tmp_path`` (``SYNTHGUARD_SCREENSHOT_DIR`` keeps them).
Needs Debian's ``chromium`` and the ``playwright`` package, as ``test_browser.py``.
"""

from __future__ import annotations

import os
import re
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest

from synthguard.core.format import pct

from .test_browser import BROWSER_ENV, CHROMIUM, FLAGS

FOLD = 900
WIDTH = 1400


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail("chromium is not installed: run scripts/test.sh as root or apt-get install chromium")
    pytest.importorskip("playwright", reason="install the test extra: pip install -e '.[test]'")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="sg", dir=BROWSER_ENV["TMPDIR"]) as profile, \
            sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, headless=True,
                                                   args=FLAGS, java_script_enabled=False,
                                                   viewport={"width": WIDTH, "height": FOLD}, env=BROWSER_ENV)
        try:
            yield ctx
        finally:
            ctx.close()


@contextmanager
def opened(ctx, path: Path):
    page = ctx.new_page()
    try:
        page.goto(path.resolve().as_uri(), wait_until="load")
        yield page
    finally:
        page.close()


def _shots(tmp_path: Path) -> Path:
    shots = Path(os.environ.get("SYNTHGUARD_SCREENSHOT_DIR") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    return shots


def _above_fold(page, selector: str) -> bool:
    box = page.locator(selector).first.bounding_box()
    return box is not None and box["y"] + box["height"] <= FOLD


def _expected_bound(r) -> str:
    """What the decision row must show: the excess found by a risk that alarms, else the bound it
    reaches (what it rules out)."""
    if r["level"] in ("high", "medium"):
        return pct(r["effect"])
    if r.get("unassessed"):  # a family no test sees: no bound is claimed
        return "none"
    return "nothing below the materiality" if r["bound"] is None else pct(r["bound"])


@pytest.mark.parametrize("release", ["leaky", "safe"])
def test_the_first_900_px_hold_the_decision_and_the_four_risks(browser, calibration_reports,
                                                                 release, tmp_path):
    rep = calibration_reports[release][0]
    html = tmp_path / f"{release}.html"
    rep.to_html(html)
    png = _shots(tmp_path) / f"report_{release}_1400.png"
    with opened(browser, html) as page:
        page.screenshot(path=str(png))  # the viewport: 1,400 x 900
        verdict = page.locator("#decision .big").first
        assert verdict.inner_text() == rep.verdict.level.upper()
        for sel in ("nav.nav", ".cards", "#decision .big", "#decision table"):
            assert _above_fold(page, sel), sel
        rows = page.locator("#decision tbody tr")
        assert rows.count() == 4
        for i, r in enumerate(rep.risks()):
            row = rows.nth(i)
            box = row.bounding_box()
            assert box is not None and box["y"] + box["height"] <= FOLD, (r["risk"], box)
            cells = [c.replace("\u00a0", " ") for c in row.locator("td").all_inner_texts()]
            assert cells[0].startswith(r["title"]) and cells[1] == r["level"]
            assert _expected_bound(r) in cells[2] + " " + cells[3], (r["risk"], cells)
    assert png.stat().st_size > 20_000  # a real, non-blank screenshot


NOTEBOOK = """<!DOCTYPE html><html><head><meta charset="utf-8"><style>
body{{font-family:serif;font-size:17px;margin:12px;background:#fafafa}}
h1{{font-size:40px;color:rgb(0,0,128)}} table{{border:3px solid rgb(0,128,0);border-collapse:separate}}
</style></head><body><h1 id="nbh">Notebook</h1><table id="nbt"><tr><td>cell</td></tr></table>
<div class="output">{output}</div><p id="nbp">after the output</p></body></html>"""


def test_a_notebook_shows_the_decision_and_keeps_its_own_look(browser, calibration_reports,
                                                            tmp_path):
    rep = calibration_reports["leaky"][0]
    bare, shown = tmp_path / "bare.html", tmp_path / "notebook.html"
    bare.write_text(NOTEBOOK.format(output=""), encoding="utf-8")
    shown.write_text(NOTEBOOK.format(output=rep._repr_html_()), encoding="utf-8")
    probe = ("() => ['#nbh', '#nbt', '#nbp', 'body'].map(s => {const c = getComputedStyle("
             "document.querySelector(s)); return [c.fontFamily, c.fontSize, c.color, "
             "c.borderTopWidth, c.borderCollapse, c.margin, c.backgroundColor].join('|')})")
    with opened(browser, bare) as page:
        before = page.evaluate(probe)
    png = _shots(tmp_path) / "notebook_1400.png"
    with opened(browser, shown) as page:
        after = page.evaluate(probe)
        page.screenshot(path=str(png))
        assert _above_fold(page, "#decision table")
        rows = page.locator("#decision tbody tr").all_inner_texts()
        assert len(rows) == 4
        for text, r in zip(rows, rep.risks(), strict=True):
            assert r["title"] in text and r["level"] in text
        assert "report.records(original, synthetic)" in page.locator("#todo").inner_text()
    assert after == before, "the report's styles leaked into the notebook's own elements"
    assert png.stat().st_size > 20_000


def _pdf_pages(data: bytes) -> int:
    return len(re.findall(rb"/Type\s*/Page(?![s\w])", data))


def test_the_dossier_prints_on_about_four_pages(browser, calibration_reports, tmp_path):
    for name, (rep, _, _) in calibration_reports.items():
        html = tmp_path / f"dossier_{name}.html"
        rep.to_dossier(html)
        with opened(browser, html) as page:
            pdf = page.pdf(format="A4")
        pages = _pdf_pages(pdf)
        (_shots(tmp_path) / f"dossier_{name}.pdf").write_bytes(pdf)
        assert 1 <= pages <= 5, (name, pages)
