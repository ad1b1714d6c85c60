"""Static inline SVG charts for the HTML report: no JavaScript, no fonts, no network.

Every function returns one ``<svg>`` element as a string, sized by its ``viewBox`` so it scales
with the page. Inputs are read defensively: a malformed series gives an empty string, never an
exception (a chart must not sink a report).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

# colour-blind safe (Okabe-Ito)
PALETTE = {"synthetic": "#D55E00", "control": "#0072B2", "original": "#777777"}
CYCLE = ["#D55E00", "#0072B2", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"]


def _num(x: Any) -> float | None:
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _seq(x: Any) -> list[Any] | None:
    """``x`` as a list when it is a list, tuple or array; else ``None``."""
    if isinstance(x, (list, tuple)):
        return list(x)
    if hasattr(x, "tolist") and getattr(x, "ndim", 0) >= 1:
        return list(x.tolist())
    return None


def _tick_label(x: float) -> str:
    return readable(x)


def readable(x: float, digits: int = 4) -> str:
    """A number people read without decoding: ``10470.3`` -> ``"10,470"``, ``0.0034`` ->
    ``"0.0034"``; scientific notation only below ``1e-4``."""
    x = float(x)
    if x == 0 or x != x:
        return "0" if x == 0 else "n/a"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) < 1e-4:
        return f"{x:.1e}"
    text = f"{x:.{digits}g}"
    return text if "e" not in text else f"{x:.{digits}f}".rstrip("0").rstrip(".")


def _nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(n - 1, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.ceil(lo / step) * step
    ticks = []
    t = start
    while t <= hi + 1e-12 * abs(hi) and len(ticks) < 12:
        ticks.append(round(t, 12))
        t += step
    return ticks


class _Frame:
    """Plot area mapping data coordinates to SVG coordinates."""

    def __init__(self, x0: float, x1: float, y0: float, y1: float, width: int = 560,
                 height: int = 300, left: int = 56, right: int = 16, top: int = 30,
                 bottom: int = 46) -> None:
        self.x0, self.x1 = x0, (x1 if x1 > x0 else x0 + 1.0)
        self.y0, self.y1 = y0, (y1 if y1 > y0 else y0 + 1.0)
        self.w, self.h = width, height
        self.l, self.r, self.t, self.b = left, right, top, bottom

    def x(self, v: float) -> float:
        return self.l + (v - self.x0) / (self.x1 - self.x0) * (self.w - self.l - self.r)

    def y(self, v: float) -> float:
        return self.h - self.b - (v - self.y0) / (self.y1 - self.y0) * (self.h - self.t - self.b)

    def axes(self, title: str, xlabel: str, ylabel: str, xticks: Sequence[float],
             yticks: Sequence[float]) -> list[str]:
        out = [f'<text x="{self.w / 2:.1f}" y="18" text-anchor="middle" class="ct">{escape(title)}</text>']
        bx, by = self.l, self.h - self.b
        out.append(f'<line x1="{bx}" y1="{by}" x2="{self.w - self.r}" y2="{by}" class="ax"/>')
        out.append(f'<line x1="{bx}" y1="{self.t}" x2="{bx}" y2="{by}" class="ax"/>')
        for t in xticks:
            px = self.x(t)
            out.append(f'<line x1="{px:.1f}" y1="{by}" x2="{px:.1f}" y2="{by + 4}" class="ax"/>')
            out.append(f'<text x="{px:.1f}" y="{by + 15}" text-anchor="middle" class="tk">'
                       f'{escape(_tick_label(t))}</text>')
        for t in yticks:
            py = self.y(t)
            out.append(f'<line x1="{bx}" y1="{py:.1f}" x2="{self.w - self.r}" y2="{py:.1f}" class="gr"/>')
            out.append(f'<text x="{bx - 5}" y="{py + 3:.1f}" text-anchor="end" class="tk">'
                       f'{escape(_tick_label(t))}</text>')
        out.append(f'<text x="{self.w / 2:.1f}" y="{self.h - 8}" text-anchor="middle" class="lb">'
                   f'{escape(xlabel)}</text>')
        out.append(f'<text x="14" y="{self.h / 2:.1f}" text-anchor="middle" class="lb" '
                   f'transform="rotate(-90 14 {self.h / 2:.1f})">{escape(ylabel)}</text>')
        return out


def _svg(width: int, height: int, body: Sequence[str], label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
            f'class="chart" role="img" aria-label="{escape(label)}"><title>{escape(label)}</title>'
            + "".join(body) + "</svg>")


def _legend(items: Sequence[tuple[str, str]], x: float, y: float) -> list[str]:
    out = []
    for i, (name, colour) in enumerate(items):
        yy = y + 15 * i
        out.append(f'<rect x="{x:.1f}" y="{yy - 8:.1f}" width="12" height="3" fill="{colour}"/>')
        out.append(f'<text x="{x + 16:.1f}" y="{yy - 4:.1f}" class="tk">{escape(name)}</text>')
    return out


def histogram_chart(histogram: Mapping[str, Any], title: str, xlabel: str = "distance") -> str:
    """Step lines of the share of rows per bin, one per series (synthetic, control, original).

    ``histogram`` is ``{"edges": [...], "synthetic": counts, "control": counts, ...}``; counts are
    normalised to shares so tables of different sizes compare.
    """
    if not isinstance(histogram, Mapping):
        return ""
    edges = [_num(e) for e in (_seq(histogram.get("edges")) or [])]
    if len(edges) < 2 or any(e is None for e in edges):
        return ""
    series: list[tuple[str, list[float]]] = []
    for name in ("synthetic", "control", "original", *[k for k in histogram
                                                        if k not in ("edges", "synthetic", "control", "original")]):
        counts = _seq(histogram.get(name))
        if counts is None or len(counts) != len(edges) - 1:
            continue
        vals = [_num(c) or 0.0 for c in counts]
        total = sum(vals)
        if total <= 0:
            continue
        series.append((name, [v / total for v in vals]))
    if not series:
        return ""
    ymax = max(max(v) for _, v in series) * 1.08 or 1.0
    fr = _Frame(edges[0], edges[-1], 0.0, ymax)
    body = fr.axes(title, xlabel, "share of rows", _nice_ticks(edges[0], edges[-1]), _nice_ticks(0, ymax, 4))
    legend = []
    for i, (name, shares) in enumerate(series):
        colour = PALETTE.get(name, CYCLE[i % len(CYCLE)])
        pts = [f"{fr.x(edges[0]):.1f},{fr.y(0):.1f}"]
        for j, s in enumerate(shares):
            pts.append(f"{fr.x(edges[j]):.1f},{fr.y(s):.1f}")
            pts.append(f"{fr.x(edges[j + 1]):.1f},{fr.y(s):.1f}")
        pts.append(f"{fr.x(edges[-1]):.1f},{fr.y(0):.1f}")
        body.append(f'<polyline points="{" ".join(pts)}" fill="none" stroke="{colour}" '
                    f'stroke-width="2" stroke-opacity="0.9"/>')
        legend.append((name, colour))
    body += _legend(legend, fr.w - fr.r - 110, fr.t + 12)
    return _svg(fr.w, fr.h, body, title)


def roc_chart(curves: Mapping[str, Any], title: str = "ROC curves of the attacks") -> str:
    """ROC curves ``{label: [[fpr, tpr], ...]}`` with the chance diagonal."""
    clean: list[tuple[str, list[tuple[float, float]]]] = []
    for label, pts in (curves or {}).items():
        pts = _seq(pts)
        if pts is None:
            continue
        xy = []
        for p in pts:
            p = _seq(p)
            if p is not None and len(p) >= 2:
                a, b = _num(p[0]), _num(p[1])
                if a is not None and b is not None:
                    xy.append((min(max(a, 0.0), 1.0), min(max(b, 0.0), 1.0)))
        if len(xy) >= 2:
            clean.append((str(label), sorted(xy)))
    if not clean:
        return ""
    fr = _Frame(0.0, 1.0, 0.0, 1.0, width=560, height=420, left=150, right=90)
    ticks = [0, 0.25, 0.5, 0.75, 1.0]
    body = fr.axes(title, "false positive rate", "true positive rate", ticks, ticks)
    body.append(f'<line x1="{fr.x(0):.1f}" y1="{fr.y(0):.1f}" x2="{fr.x(1):.1f}" y2="{fr.y(1):.1f}" '
                'stroke="#999" stroke-dasharray="4 3"/>')
    legend = []
    for i, (label, xy) in enumerate(clean):
        colour = CYCLE[i % len(CYCLE)]
        pts = " ".join(f"{fr.x(a):.1f},{fr.y(b):.1f}" for a, b in xy)
        body.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="2"/>')
        legend.append((label, colour))
    legend.append(("chance", "#999999"))
    body += _legend(legend, fr.x(0.52), fr.y(0.38))
    return _svg(fr.w, fr.h, body, title)


def bar_chart(items: Sequence[tuple[str, float | None]], title: str, xlabel: str = "score",
              vmax: float | None = 1.0, colour: str = "#0072B2") -> str:
    """Horizontal bars ``[(label, value), ...]`` (values in ``[0, vmax]``); missing values show "n/a"."""
    rows = [(str(lbl), _num(v)) for lbl, v in items][:60]
    if not rows:
        return ""
    top = vmax if vmax is not None else max([v for _, v in rows if v is not None] or [1.0]) or 1.0
    label_w = min(220, 12 + 7 * max(len(lbl) for lbl, _ in rows))
    row_h = 20
    height = 44 + row_h * len(rows) + 34
    width = 560
    fr = _Frame(0.0, top, 0.0, 1.0, width=width, height=height, left=label_w, right=56, top=30,
                bottom=34)
    body = [f'<text x="{width / 2:.1f}" y="18" text-anchor="middle" class="ct">{escape(title)}</text>']
    y = 34
    for lbl, v in rows:
        short = lbl if len(lbl) <= 30 else lbl[:29] + "\u2026"
        body.append(f'<text x="{label_w - 6}" y="{y + 14}" text-anchor="end" class="tk">{escape(short)}</text>')
        if v is None:
            body.append(f'<text x="{label_w + 4}" y="{y + 14}" class="tk">n/a</text>')
        else:
            w = max(0.0, fr.x(min(max(v, 0.0), top)) - label_w)
            body.append(f'<rect x="{label_w}" y="{y + 3}" width="{w:.1f}" height="{row_h - 6}" '
                        f'fill="{colour}"><title>{escape(lbl)}: {escape(_tick_label(v))}</title></rect>')
            body.append(f'<text x="{label_w + w + 4:.1f}" y="{y + 14}" class="tk">{escape(_tick_label(v))}</text>')
        y += row_h
    base = y + 4
    body.append(f'<line x1="{label_w}" y1="{base}" x2="{width - 56}" y2="{base}" class="ax"/>')
    for t in _nice_ticks(0.0, top, 5):
        px = fr.x(t)
        body.append(f'<text x="{px:.1f}" y="{base + 14}" text-anchor="middle" class="tk">{escape(_tick_label(t))}</text>')
    body.append(f'<text x="{(label_w + width) / 2:.1f}" y="{base + 28}" text-anchor="middle" class="lb">'
                f'{escape(xlabel)}</text>')
    return _svg(width, height, body, title)


def overlay_bars(bins: Sequence[str], series: Mapping[str, Any], title: str,
                 ylabel: str = "share of rows") -> str:
    """Grouped vertical bars: the share of rows per bin, one bar per series (original, synthetic,
    control), so the three distributions overlay bin by bin.

    ``series`` maps a name to counts per bin (normalised to shares here, so tables of different
    sizes compare). Bins no series fills are still drawn (an empty slot).
    """
    labels = [str(b) for b in (_seq(bins) or [])]
    if not labels:
        return ""
    clean: list[tuple[str, list[float]]] = []
    for name in ("original", "synthetic", "control", *[k for k in series
                                                       if k not in ("original", "synthetic", "control")]):
        counts = _seq(series.get(name)) if isinstance(series, Mapping) else None
        if counts is None or len(counts) != len(labels):
            continue
        vals = [_num(c) or 0.0 for c in counts]
        total = sum(vals)
        if total > 0:
            clean.append((name, [v / total for v in vals]))
    if not clean:
        return ""
    k = len(labels)
    rotate = k > 6 or max(len(lbl) for lbl in labels) > 10
    bottom = 78 if rotate else 46
    ymax = max(max(v) for _, v in clean) * 1.12 or 1.0
    fr = _Frame(0.0, float(k), 0.0, ymax, width=560, height=270 + (bottom - 46), top=44, bottom=bottom)
    body = fr.axes(title, "", ylabel, [], _nice_ticks(0, ymax, 4))
    band = (fr.x(1.0) - fr.x(0.0))
    bar = band * 0.8 / len(clean)
    legend = []
    for s_i, (name, shares) in enumerate(clean):
        colour = PALETTE.get(name, CYCLE[s_i % len(CYCLE)])
        legend.append((name, colour))
        for j, v in enumerate(shares):
            x = fr.x(float(j)) + band * 0.1 + s_i * bar
            y = fr.y(v)
            body.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(bar - 0.6, 0.6):.1f}" '
                        f'height="{max(fr.y(0) - y, 0):.1f}" fill="{colour}" fill-opacity="0.85">'
                        f'<title>{escape(labels[j])} | {escape(name)}: {100 * v:.1f} %</title></rect>')
    by = fr.h - fr.b
    for j, lbl in enumerate(labels):
        short = lbl if len(lbl) <= 16 else lbl[:15] + "\u2026"
        px = fr.x(j + 0.5)
        if rotate:
            body.append(f'<text x="{px:.1f}" y="{by + 12}" text-anchor="end" class="tk" '
                        f'transform="rotate(-35 {px:.1f} {by + 12})">{escape(short)}</text>')
        else:
            body.append(f'<text x="{px:.1f}" y="{by + 15}" text-anchor="middle" class="tk">{escape(short)}</text>')
    x = fr.l
    for name, colour in legend:  # one row under the title, clear of the bars
        body.append(f'<rect x="{x:.1f}" y="27" width="10" height="10" fill="{colour}"/>')
        body.append(f'<text x="{x + 14:.1f}" y="36" class="tk">{escape(name)}</text>')
        x += 24 + 6.5 * len(name)
    return _svg(fr.w, fr.h, body, title)


def _heat_colour(v: float, vmax: float) -> str:
    t = min(max(v / vmax, 0.0), 1.0) if vmax > 0 else 0.0
    # white -> #b3261e
    r = round(255 + (179 - 255) * t)
    g = round(255 + (38 - 255) * t)
    b = round(255 + (30 - 255) * t)
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap(labels: Sequence[str], cells: Mapping[tuple[int, int], float | None], title: str,
            legend: str = "|difference|", vmax: float = 0.5) -> str:
    """Lower-triangle heatmap of pair values ``{(i, j): value}`` (``i > j`` drawn below the diagonal).

    One SVG whatever the number of columns: cells shrink to fit (column names are written up to 60
    columns; beyond that each cell's tooltip names its pair). Missing values are drawn grey.
    """
    names = [str(x) for x in labels]
    p = len(names)
    if p < 2 or not cells:
        return ""
    cell = max(4.0, min(36.0, 560.0 / p))
    show = p <= 60
    font = max(6.0, min(11.0, cell * 0.6))
    lab_w = (min(16, max(len(n) for n in names)) * font * 0.6 + 8) if show else 10
    left, top = lab_w + 8, 34
    grid = cell * p
    width = int(left + grid + 130)
    height = int(top + grid + (lab_w if show else 10) + 30)
    body = [f'<text x="{width / 2:.1f}" y="18" text-anchor="middle" class="ct">{escape(title)}</text>']
    for (i, j), v in cells.items():
        a, b = (i, j) if i > j else (j, i)
        x, y = left + b * cell, top + a * cell
        val = _num(v)
        fill = "#d0d3d6" if val is None else _heat_colour(abs(val), vmax)
        tip = f"{names[b]} x {names[a]}: " + ("n/a" if val is None else f"{val:.3f}")
        body.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{cell:.1f}" height="{cell:.1f}" fill="{fill}">'
                    f'<title>{escape(tip)}</title></rect>')
    body.append(f'<rect x="{left}" y="{top}" width="{grid:.1f}" height="{grid:.1f}" fill="none" '
                'stroke="#d9dee3"/>')
    if show:
        for k, n in enumerate(names):
            short = n if len(n) <= 16 else n[:15] + "\u2026"
            yy = top + (k + 0.5) * cell + font * 0.35
            body.append(f'<text x="{left - 4:.1f}" y="{yy:.1f}" text-anchor="end" class="tk" '
                        f'style="font-size:{font:.1f}px">{escape(short)}</text>')
            xx = left + (k + 0.5) * cell
            by = top + grid + 4
            body.append(f'<text x="{xx:.1f}" y="{by:.1f}" text-anchor="end" class="tk" '
                        f'style="font-size:{font:.1f}px" transform="rotate(-90 {xx:.1f} {by:.1f})">'
                        f'{escape(short)}</text>')
    lx = left + grid + 20
    for s in range(6):
        v = vmax * (5 - s) / 5
        body.append(f'<rect x="{lx:.1f}" y="{top + 18 * s:.1f}" width="14" height="18" '
                    f'fill="{_heat_colour(v, vmax)}" stroke="#d9dee3"/>')
        mark = "\u2265 " if s == 0 else ""
        body.append(f'<text x="{lx + 18:.1f}" y="{top + 18 * s + 12:.1f}" class="tk">'
                    f'{mark}{v:.2g}</text>')
    body.append(f'<text x="{lx:.1f}" y="{top + 18 * 6 + 14:.1f}" class="tk">{escape(legend)}</text>')
    return _svg(width, height, body, title)
