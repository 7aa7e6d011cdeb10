"""Tiny inline-SVG charts for the HTML report (no JavaScript, no network, no plotting dependency).

Only what the report needs: an x/y chart (lines, step lines, dots; linear or log y), a bar chart over
time bins, and a horizontal 100 % stacked bar. Every text that may come from a user goes through
``html.escape``; numbers are formatted here.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from html import escape

PALETTE = ("#2563eb", "#dc2626", "#059669", "#7c3aed", "#ea580c", "#0891b2", "#be185d", "#4d7c0f")
FONT = 'font-family="system-ui, -apple-system, Segoe UI, Roboto, sans-serif"'


@dataclasses.dataclass
class Series:
    """One thing to draw on an x/y chart. ``step`` draws a staircase (best-so-far curves)."""

    name: str
    xs: Sequence[float]
    ys: Sequence[float]
    color: str
    kind: str = "line"  # "line" | "step" | "dots"
    titles: Sequence[str] | None = None  # hover tooltips for dots (escaped here)
    legend: bool = True


def fmt(v: float) -> str:
    """Short human number: 3-4 significant digits, thousands separators for big ones."""
    if v == 0 or not math.isfinite(v):
        return "0" if v == 0 else str(v)
    a = abs(v)
    if a >= 10000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    return f"{v:.3g}"


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """Round-numbered ticks (1/2/5 x 10^k steps) covering [lo, hi]."""
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / max(n, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    ticks, t = [], first
    while t <= hi + step * 1e-9:
        ticks.append(0.0 if abs(t) < step * 1e-9 else t)
        t += step
    return ticks


def log_ticks(lo: float, hi: float) -> list[float]:
    """Ticks for a log axis: decades, plus 2x and 5x when the range spans few decades."""
    for mults in ((1,), (1, 2, 5), (1, 1.5, 2, 3, 5, 7)):
        ticks = [m * 10 ** e for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
                 for m in mults if lo <= m * 10 ** e <= hi]
        if len(ticks) >= 3:
            return ticks
    return [t for t in nice_ticks(lo, hi, 4) if t > 0]


class Scale:
    """Maps data values in [lo, hi] to pixels in [a, b], linearly or logarithmically."""

    def __init__(self, lo: float, hi: float, a: float, b: float, log: bool = False):
        if log:
            lo, hi = max(lo, 1e-12), max(hi, 1e-12)
        if hi <= lo:
            lo, hi = (lo / 2, lo * 2) if log else (lo - 1, hi + 1)
        self.lo, self.hi, self.a, self.b, self.log = lo, hi, a, b, log

    def __call__(self, v: float) -> float:
        f = (lambda x: math.log10(max(x, 1e-12))) if self.log else (lambda x: x)
        return self.a + (f(v) - f(self.lo)) / (f(self.hi) - f(self.lo)) * (self.b - self.a)

    def ticks(self) -> list[float]:
        return log_ticks(self.lo, self.hi) if self.log else nice_ticks(self.lo, self.hi)


def _text(x: float, y: float, s: str, anchor: str = "middle", size: int = 11, extra: str = "") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}" {FONT} '
            f'fill="#334155"{extra}>{escape(s)}</text>')


def _frame(width: int, height: int, title: str) -> list[str]:
    return [f'<svg class="chart" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
            f'aria-label="{escape(title)}">',
            f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
            _text(12, 18, title, anchor="start", size=13, extra=' font-weight="600"')]


def _axes(out: list[str], xs: Scale, ys: Scale, x_label: str, y_label: str, box: tuple) -> None:
    left, top, right, bottom = box
    for t in ys.ticks():
        y = ys(t)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="#e2e8f0"/>')
        out.append(_text(left - 6, y + 4, fmt(t), anchor="end", size=10))
    for t in xs.ticks():
        x = xs(t)
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{bottom}" stroke="#f1f5f9"/>')
        out.append(_text(x, bottom + 14, fmt(t), size=10))
    out.append(f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#64748b"/>')
    out.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="#64748b"/>')
    out.append(_text((left + right) / 2, bottom + 32, x_label))
    cy = (top + bottom) / 2
    out.append(_text(14, cy, y_label, extra=f' transform="rotate(-90 14 {cy:.1f})"'))


def _legend(out: list[str], series: Sequence[Series], right: float, top: float) -> None:
    shown = [s for s in series if s.legend]
    if len(shown) < 2:
        return
    for i, s in enumerate(shown):
        y = top + 4 + 14 * i
        label = s.name if len(s.name) <= 80 else s.name[:77] + "..."
        out.append(f'<g><title>{escape(s.name)}</title>'
                   f'<rect x="{right - 10:.1f}" y="{y - 8:.1f}" width="10" height="10" fill="{s.color}"/>'
                   + _text(right - 14, y + 1, label, anchor="end", size=10) + "</g>")


def xy_chart(series: Sequence[Series], *, title: str, x_label: str, y_label: str, log_y: bool = False,
             width: int = 560, height: int = 300, empty_text: str = "no data") -> str:
    """Lines / step lines / dots on shared axes; ``log_y`` for latencies spanning orders of magnitude."""
    out = _frame(width, height, title)
    n_legend = sum(s.legend for s in series)
    legend_h = 14 * n_legend + 4 if n_legend >= 2 else 0  # legend sits between title and plot, never on data
    box = (64, 30 + legend_h, width - 16, height - 46)
    left, top, right, bottom = box
    pts = [(x, y) for s in series for x, y in zip(s.xs, s.ys) if math.isfinite(x) and math.isfinite(y)
           and (y > 0 or not log_y)]
    if not pts:
        out.append(_text((left + right) / 2, (top + bottom) / 2, empty_text, size=13))
        return "\n".join(out + ["</svg>"])
    x_lo, x_hi = min(p[0] for p in pts), max(p[0] for p in pts)
    y_lo, y_hi = min(p[1] for p in pts), max(p[1] for p in pts)
    if log_y:
        y_lo, y_hi = y_lo / 1.15, y_hi * 1.15
    else:
        pad = (y_hi - y_lo) * 0.05 or abs(y_hi) * 0.1 or 1
        y_lo, y_hi = min(0.0, y_lo) if y_lo >= 0 else y_lo - pad, y_hi + pad
    xs = Scale(min(0.0, x_lo) if x_lo >= 0 else x_lo, x_hi, left, right)
    ys = Scale(y_lo, y_hi, bottom, top, log=log_y)
    _axes(out, xs, ys, x_label, y_label, box)
    for s in series:
        p = [(xs(x), ys(y)) for x, y in zip(s.xs, s.ys) if math.isfinite(x) and math.isfinite(y)
             and (y > 0 or not log_y)]
        if not p:
            continue
        if s.kind == "dots":
            titles = list(s.titles) if s.titles is not None else None
            dots = []
            for i, (px, py) in enumerate(p):
                tip = f"<title>{escape(titles[i])}</title>" if titles else ""
                dots.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="2.2">{tip}</circle>')
            out.append(f'<g fill="{s.color}" fill-opacity="0.35">' + "".join(dots) + "</g>")
            continue
        d = [f"M{p[0][0]:.1f},{p[0][1]:.1f}"]
        for (px, py) in p[1:]:
            d.append(f"H{px:.1f}V{py:.1f}" if s.kind == "step" else f"L{px:.1f},{py:.1f}")
        out.append(f'<path d="{"".join(d)}" fill="none" stroke="{s.color}" stroke-width="2.5" '
                   f'stroke-linejoin="round"><title>{escape(s.name)}</title></path>')
    _legend(out, series, right, 30)
    return "\n".join(out + ["</svg>"])


def bar_chart(edges: Sequence[float], heights: Sequence[float], *, title: str, x_label: str, y_label: str,
              titles: Sequence[str] | None = None) -> str:
    """Bars over consecutive bins ``[edges[i], edges[i+1])`` (a histogram over time), 560 x 300 pixels."""
    width, height = 560, 300
    out = _frame(width, height, title)
    box = (64, 30, width - 16, height - 46)
    left, top, right, bottom = box
    if len(edges) < 2 or not heights:
        out.append(_text((left + right) / 2, (top + bottom) / 2, "no data", size=13))
        return "\n".join(out + ["</svg>"])
    xs = Scale(edges[0], edges[-1], left, right)
    ys = Scale(0.0, max(max(heights) * 1.1, 1e-9), bottom, top)
    _axes(out, xs, ys, x_label, y_label, box)
    bars = []
    for i, h in enumerate(heights):
        x0, x1 = xs(edges[i]), xs(edges[i + 1])
        y = ys(h)
        tip = f"<title>{escape(titles[i])}</title>" if titles else ""
        bars.append(f'<rect x="{x0 + 0.5:.1f}" y="{y:.1f}" width="{max(x1 - x0 - 1, 1):.1f}" '
                    f'height="{bottom - y:.1f}">{tip}</rect>')
    out.append(f'<g fill="{PALETTE[0]}">' + "".join(bars) + "</g>")
    return "\n".join(out + ["</svg>"])


def stacked_bar(parts: Sequence[tuple[str, int, str]], *, title: str, width: int = 560) -> str:
    """One horizontal bar split by share, with a legend of counts and percentages (zero parts omitted)."""
    parts = [p for p in parts if p[1] > 0]
    rows = (len(parts) + 2) // 3
    height = 78 + 18 * rows
    out = _frame(width, height, title)
    total = sum(p[1] for p in parts)
    left, right = 16, width - 16
    if not total:
        out.append(_text(width / 2, 50, "no trials", size=13))
        return "\n".join(out + ["</svg>"])
    x = float(left)
    for label, n, color in parts:
        w = (right - left) * n / total
        out.append(f'<rect x="{x:.1f}" y="30" width="{w:.1f}" height="24" fill="{color}">'
                   f'<title>{escape(label)}: {n} ({100 * n / total:.1f}%)</title></rect>')
        x += w
    col_w = (right - left) / 3
    for i, (label, n, color) in enumerate(parts):
        cx, cy = left + col_w * (i % 3), 72 + 18 * (i // 3)
        out.append(f'<rect x="{cx:.1f}" y="{cy - 9:.1f}" width="10" height="10" fill="{color}"/>')
        out.append(_text(cx + 14, cy, f"{label}: {n:,} ({100 * n / total:.1f}%)", anchor="start"))
    return "\n".join(out + ["</svg>"])
