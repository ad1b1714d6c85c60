"""The demo's HTML report renders in headless Chromium with no network request and no console error.

Needs Debian's ``chromium`` (installed by ``scripts/test.sh``) and the ``playwright`` Python package
(``test`` extra; its bundled driver drives the system Chromium, no browser download).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from synthguard.cli import main

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# Chromium puts a Unix socket in $TMPDIR and dies when that path exceeds 108 bytes: a long TMPDIR
# (a CI runner's work folder) must not fail the test, so the browser gets /tmp where it exists
BROWSER_ENV = {**os.environ, "TMPDIR": "/tmp" if os.access("/tmp", os.W_OK) else tempfile.gettempdir()}


def render(html_path: Path, png_path: Path) -> dict:
    """Open ``html_path`` in headless Chromium; return requests, console messages and page facts."""
    from playwright.sync_api import sync_playwright

    requests: list[str] = []
    console: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory() as profile, sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, headless=True,
                                                   args=FLAGS, viewport={"width": 1200, "height": 900},
                                                   env=BROWSER_ENV)
        try:
            page = ctx.new_page()
            page.on("request", lambda r: requests.append(r.url))
            page.on("console", lambda m: console.append((m.type, m.text)))
            page.on("pageerror", lambda e: console.append(("pageerror", str(e))))
            page.on("requestfailed", lambda r: console.append(("requestfailed", r.url)))
            page.goto(html_path.resolve().as_uri(), wait_until="load")
            page.wait_for_timeout(300)
            facts = page.evaluate("""() => ({
                svgs: document.querySelectorAll('svg.chart').length,
                rows: document.querySelectorAll('table tbody tr').length,
                verdict: (document.querySelector('.verdict') || {}).innerText || '',
                height: document.body.scrollHeight,
                load_ms: (performance.getEntriesByType('navigation')[0] || {}).loadEventEnd})""")
            page.screenshot(path=str(png_path), full_page=True)
        finally:
            ctx.close()
    network = [u for u in requests if not u.startswith(("file:", "data:", "about:"))]
    errors = [(t, m) for t, m in console if t in ("error", "pageerror", "requestfailed", "warning")]
    return {"network": network, "errors": errors, "facts": facts, "requests": requests}


@pytest.fixture(scope="module")
def browser_ok():
    if not Path(CHROMIUM).exists():
        pytest.fail("chromium is not installed: run scripts/test.sh as root or apt-get install chromium")
    pytest.importorskip("playwright", reason="install the test extra: pip install -e '.[test]'")


def test_demo_html_renders_offline(tmp_path, browser_ok):
    html = tmp_path / "demo.html"
    # every chart kind, the attacks and a fidelity report; the slow ML-utility models are left out
    metrics = ("exact_matches,ims,dcr,nndr,distinguishability,closest_distance_mia,"
               "singling_out_univariate,linkability,k_anonymity,quality_report,anonymisation_score")
    res = CliRunner().invoke(main, ["demo", "--rows", "600", "--metrics", metrics, "--no-progress",
                                    "--html", str(html)])
    assert res.exit_code == 0, res.output
    text = html.read_text(encoding="utf-8")
    assert "<script" not in text.lower()
    # set SYNTHGUARD_SCREENSHOT_DIR to keep the screenshot for a look
    shots = Path(os.environ.get("SYNTHGUARD_SCREENSHOT_DIR") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    png = shots / "demo_report.png"
    out = render(html, png)
    assert out["network"] == [], f"the report fetched from the network: {out['network']}"
    assert out["errors"] == [], f"console errors: {out['errors']}"
    assert png.stat().st_size > 20_000  # a real, non-blank screenshot
    # DCR and NNDR histograms, ROC curves, per-column fidelity, distortion by column
    assert out["facts"]["svgs"] >= 5, out["facts"]
    for title in ("<title>dcr: synthetic vs control", "<title>nndr: synthetic vs control",
                  "<title>ROC curves of the attacks", "<title>quality_report: per-column fidelity",
                  "<title>anonymisation_score: distortion by column"):
        assert title in text, title
    assert "Verdict" in out["facts"]["verdict"]
    assert "HIGH" in out["facts"]["verdict"]  # the leaky release copies 40 % of the rows
    side = html.with_name("demo.compare.html")
    out2 = render(side, tmp_path / "compare.png")
    assert out2["network"] == [] and out2["errors"] == [], out2


def test_detector_catches_network_and_console_errors(tmp_path, browser_ok):
    """The checks above can fail: a page that fetches an image and logs an error is caught."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><head><link rel='icon' href='data:,'></head><body>"
                   "<img src='http://127.0.0.1:9/x.png'><script>console.error('boom')</script>"
                   "</body></html>", encoding="utf-8")
    out = render(bad, tmp_path / "bad.png")
    assert any(u.startswith("http://127.0.0.1:9/") for u in out["network"])
    assert any(m == "boom" for _, m in out["errors"])


def test_wide_fidelity_report_opens_with_its_charts(tmp_path, browser_ok, wide_frames):
    """A 100-column release: the fidelity section (24 overlay charts, the 100 x 100 association
    heatmap in one SVG, worst-first tables) renders offline with no console error. The load time is
    printed (see benchmarks/README_fidelity.md); it is never asserted."""
    import time

    from synthguard import evaluate

    orig, syn, ctl = wide_frames(400, 100)
    html = tmp_path / "wide.html"
    evaluate(orig, syn, ctl, metrics=["accuracy", "quality_report"], seed=0).to_html(html)
    t0 = time.perf_counter()
    out = render(html, tmp_path / "wide.png")
    print(f"\n100-column report ({html.stat().st_size / 1024:.0f} KiB): load event after "
          f"{out['facts']['load_ms']:.0f} ms in headless Chromium; {time.perf_counter() - t0:.2f} s "
          "including browser start-up and a full-page screenshot")
    assert out["network"] == [] and out["errors"] == [], out
    assert out["facts"]["svgs"] == 24 + 1 + 1  # overlay charts, heatmap, quality_report's column bars
    text = html.read_text(encoding="utf-8")
    assert "<script" not in text.lower()
    assert text.count("<rect") > 4950  # every pair has its heatmap cell
