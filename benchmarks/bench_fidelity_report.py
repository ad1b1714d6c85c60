"""Benchmark: the fidelity-against-ceiling report on a wide table (default 100 columns).

Times the ``accuracy`` and ``quality_report`` metrics, ``synthguard profile`` and an evaluation from
the profile, the HTML rendering, how long the HTML takes to open in headless Chromium (Debian's
``chromium`` through playwright), and the sizes of the profile and the page.

Run: ``python benchmarks/bench_fidelity_report.py [--rows 2000] [--columns 100] [--html out.html]``.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd


def wide_table(n: int, p: int = 100, seed: int = 0, noise: float = 0.0) -> pd.DataFrame:
    """``n`` rows, ``p`` columns driven by two latent factors: numerical, categorical (3-8
    categories), boolean and datetime columns in turn, a few per cent missing."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 2))
    cols: dict[str, object] = {}
    for j in range(p):
        w = np.cos(j), np.sin(j)
        lat = w[0] * z[:, 0] + w[1] * z[:, 1] + rng.normal(0, 0.6 + noise, n)
        kind = j % 4
        if kind == 0:
            x = np.round(50 + 10 * lat, 1)
            x[rng.random(n) < 0.03] = np.nan
            cols[f"num_{j:03d}"] = x
        elif kind == 1:
            k = 3 + j % 6
            cut = np.digitize(lat, np.quantile(lat, np.linspace(0, 1, k + 1)[1:-1]))
            vals = np.array([f"c{i}" for i in range(k)], dtype=object)[cut]
            vals[rng.random(n) < 0.03] = None
            cols[f"cat_{j:03d}"] = vals
        elif kind == 2:
            cols[f"flag_{j:03d}"] = lat > 0.3
        else:
            cols[f"date_{j:03d}"] = (pd.Timestamp("2020-01-01")
                                     + pd.to_timedelta(np.round(200 * lat).astype(int), unit="D"))
    return pd.DataFrame(cols)


def frames(n: int, p: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """original, synthetic (noisier, every 7th column shuffled: broken dependence), control."""
    original = wide_table(n, p, seed=0)
    control = wide_table(n, p, seed=2)
    synthetic = wide_table(n, p, seed=1, noise=0.3)
    rng = np.random.default_rng(3)
    for c in list(synthetic.columns)[::7]:
        synthetic[c] = synthetic[c].to_numpy()[rng.permutation(n)]
    return original, synthetic, control


def open_seconds(html: Path) -> dict:
    """Seconds until the page's load event in headless Chromium, and what it shows."""
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    with tempfile.TemporaryDirectory() as profile, sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(profile, executable_path=chromium, headless=True,
                                                    args=["--no-sandbox", "--disable-gpu"])
        try:
            page = ctx.new_page()
            t0 = time.perf_counter()
            page.goto(html.resolve().as_uri(), wait_until="load")
            load = time.perf_counter() - t0
            timing = page.evaluate("() => { const t = performance.getEntriesByType('navigation')[0];"
                                   " return {dom: t.domContentLoadedEventEnd, load: t.loadEventEnd}; }")
            svgs = page.evaluate("() => document.querySelectorAll('svg.chart').length")
        finally:
            ctx.close()
    return {"wall_s": load, "navigation_ms": timing, "svgs": svgs}


def main() -> None:
    from synthguard import evaluate

    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--columns", type=int, default=100)
    ap.add_argument("--html", type=Path, default=None)
    args = ap.parse_args()
    original, synthetic, control = frames(args.rows, args.columns)
    for metric in ("accuracy", "quality_report"):
        t0 = time.perf_counter()
        c0 = time.process_time()
        rep = evaluate(original, synthetic, control, metrics=[metric], seed=0)
        print(f"{metric}: {time.perf_counter() - t0:.2f} s wall, {time.process_time() - c0:.2f} s CPU; "
              f"value {rep.result(metric).value:.4f}, ceiling {rep.result(metric).baseline.value:.4f}")
    from synthguard.run.profile import profile

    t0 = time.perf_counter()
    stats = profile(original, seed=0)
    prof = Path(tempfile.mkdtemp()) / "stats.json"
    stats.save(prof)
    print(f"profile: {time.perf_counter() - t0:.2f} s, {prof.stat().st_size / 1024:.0f} KiB")
    t0 = time.perf_counter()
    evaluate(None, synthetic, control, metrics=["accuracy", "quality_report"], seed=0, original_stats=prof)
    print(f"evaluate --original-stats (accuracy + quality_report): {time.perf_counter() - t0:.2f} s")
    rep = evaluate(original, synthetic, control, metrics=["accuracy", "quality_report"], seed=0)
    t0 = time.perf_counter()
    text = rep.to_html()
    print(f"HTML rendering: {time.perf_counter() - t0:.2f} s, {len(text.encode()) / 1024:.0f} KiB")
    out = args.html or Path(tempfile.mkdtemp()) / "wide.html"
    out.write_text(text, encoding="utf-8")
    for _ in range(3):
        print("open in headless Chromium:", open_seconds(out))


if __name__ == "__main__":
    main()
