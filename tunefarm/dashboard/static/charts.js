// Small SVG charts for the dashboard: step lines, lines and categorical scatter, with axes, units and a
// log scale where values span decades. Hand-written (about 250 lines) instead of a vendored chart library:
// the page needs three chart kinds, and every text node is set with textContent (data never becomes markup).
"use strict";

const SVGNS = "http://www.w3.org/2000/svg";
const PALETTE = ["#2563eb", "#ea580c", "#16a34a", "#9333ea", "#dc2626", "#0891b2", "#ca8a04", "#db2777",
                 "#4b5563", "#65a30d"];
const M = {left: 62, right: 14, top: 12, bottom: 40};
const MS = {left: 62, right: 10, top: 10, bottom: 66};  // slice plots: room for slanted value labels

function el(name, attrs, parent) {
  const e = document.createElementNS(SVGNS, name);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== null) e.setAttribute(k, String(v));
  if (parent) parent.appendChild(e);
  return e;
}

function text(parent, x, y, s, attrs) {
  const t = el("text", Object.assign({x, y}, attrs || {}), parent);
  t.textContent = s;
  return t;
}

function niceStep(span, count) {
  const raw = span / Math.max(1, count);
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const f = raw / mag;
  return mag * (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10);
}

function linearTicks(lo, hi, count) {
  if (!(hi > lo)) return [lo];
  const step = niceStep(hi - lo, count);
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(+v.toPrecision(12));
  return out;
}

function logTicks(lo, hi) {
  const out = [];
  const a = Math.floor(Math.log10(lo)), b = Math.ceil(Math.log10(hi));
  const mults = b - a <= 2 ? [1, 2, 5] : [1];
  for (let e = a; e <= b; e++) for (const m of mults) {
    const v = m * Math.pow(10, e);
    if (v >= lo * 0.999 && v <= hi * 1.001) out.push(v);
  }
  return out.length >= 2 ? out : linearTicks(lo, hi, 4);
}

function fmtNum(v) {
  const a = Math.abs(v);
  if (a === 0) return "0";
  if (a >= 1e6 || a < 1e-3) return v.toExponential(0);
  if (a >= 1000) return (v / 1000).toFixed(a >= 1e4 ? 0 : 1) + "k";
  return String(+v.toPrecision(3));
}

function fmtClock(us, span) {
  const d = new Date(us / 1000);
  const p = (n) => String(n).padStart(2, "0");
  return span < 600e6 ? `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`
                      : `${p(d.getHours())}:${p(d.getMinutes())}`;
}

// A scale over [lo, hi] to pixels [a, b]; log when asked and the values are positive.
function scale(lo, hi, a, b, log) {
  if (log) {
    const l0 = Math.log10(lo), l1 = Math.log10(hi);
    return (v) => a + (b - a) * (Math.log10(v) - l0) / ((l1 - l0) || 1);
  }
  return (v) => a + (b - a) * (v - lo) / ((hi - lo) || 1);
}

function extent(values, pad) {
  let lo = Infinity, hi = -Infinity;
  for (const v of values) if (Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  if (!Number.isFinite(lo)) return null;
  if (lo === hi) { lo -= Math.abs(lo) * 0.1 || 1; hi += Math.abs(hi) * 0.1 || 1; }
  return [lo - (hi - lo) * pad, hi + (hi - lo) * pad];
}

function frame(host, w, h) {
  host.replaceChildren();
  return el("svg", {viewBox: `0 0 ${w} ${h}`, width: "100%", class: "chart", role: "img"}, host);
}

function empty(svg, w, h, message) {
  text(svg, w / 2, h / 2, message, {class: "empty", "text-anchor": "middle"});
}

// Axes and grid, inside margins m (x labels slanted when opt.slant).
function axes(svg, w, h, xs, ys, xt, yt, opt, m) {
  const g = el("g", {class: "axis"}, svg);
  for (const v of yt) {
    const y = ys(v);
    el("line", {x1: m.left, x2: w - m.right, y1: y, y2: y, class: "grid"}, g);
    text(g, m.left - 6, y + 4, opt.yFmt(v), {"text-anchor": "end"});
  }
  for (const v of xt) {
    const x = xs(v), y = h - m.bottom + 16;
    el("line", {x1: x, x2: x, y1: h - m.bottom, y2: h - m.bottom + 4, class: "tick"}, g);
    text(g, x, y, opt.xFmt(v), opt.slant ? {"text-anchor": "end", transform: `rotate(-35 ${x} ${y - 8})`}
                                          : {"text-anchor": "middle"});
  }
  el("line", {x1: m.left, x2: w - m.right, y1: h - m.bottom, y2: h - m.bottom, class: "base"}, g);
  el("line", {x1: m.left, x2: m.left, y1: m.top, y2: h - m.bottom, class: "base"}, g);
  text(g, (m.left + w - m.right) / 2, h - 6, opt.xLabel, {"text-anchor": "middle", class: "label"});
  text(g, 12, (m.top + h - m.bottom) / 2, opt.yLabel + (opt.logY ? " (log)" : ""),
       {"text-anchor": "middle", class: "label", transform: `rotate(-90 12 ${(m.top + h - m.bottom) / 2})`});
}

// series: [{name, x: [...], y: [...], step, dash}]; opt: {xLabel, yLabel, time, logY: "auto"|true|false, empty}
function lineChart(host, series, opt) {
  const w = opt.width || 560, h = opt.height || 260;
  const svg = frame(host, w, h);
  const xsAll = series.flatMap((s) => s.stepEnd ? [...s.x, s.x[s.x.length - 1] + s.stepEnd] : s.x), ysAll = series.flatMap((s) => s.y).filter((v) => v > 0 || !opt.positive);
  const ex = extent(xsAll, 0), ey = extent(ysAll, 0.05);
  svg.setAttribute("data-points", String(xsAll.length));
  if (!ex || !ey) { empty(svg, w, h, opt.empty || "no data yet"); return svg; }
  const yMin = Math.min(...ysAll.filter(Number.isFinite)), yMax = Math.max(...ysAll.filter(Number.isFinite));
  const logY = opt.logY === true || (opt.logY === "auto" && yMin > 0 && yMax / yMin >= 8);
  const [ylo, yhi] = logY ? [yMin / 1.15, yMax * 1.15] : [Math.min(0, ey[0]), ey[1]];
  const xs = scale(ex[0], ex[1], M.left, w - M.right, false);
  const ys = scale(ylo, yhi, h - M.bottom, M.top, logY);
  const span = ex[1] - ex[0];
  axes(svg, w, h, xs, ys, linearTicks(ex[0], ex[1], opt.time ? 5 : 6), logY ? logTicks(ylo, yhi) : linearTicks(ylo, yhi, 5),
       {xLabel: opt.xLabel, yLabel: opt.yLabel, logY,
        xFmt: opt.time ? (v) => fmtClock(v, span) : fmtNum, yFmt: fmtNum}, M);
  series.forEach((s, i) => {
    if (!s.x.length) return;
    const color = s.color || PALETTE[i % PALETTE.length];
    let d = "";
    s.x.forEach((x, j) => {
      const px = xs(x).toFixed(1), py = ys(s.y[j]).toFixed(1);
      if (j === 0) d += `M${px},${py}`;
      else d += s.step ? `H${px}V${py}` : `L${px},${py}`;
    });
    if (s.stepEnd) d += `H${xs(s.x[s.x.length - 1] + s.stepEnd).toFixed(1)}`;
    const path = el("path", {d, class: "series", stroke: color, "data-series": s.name,
                             "stroke-dasharray": s.dash ? "6 3" : null,
                             "data-last-x": s.x[s.x.length - 1], "data-last-y": s.y[s.y.length - 1]}, svg);
    path.appendChild(document.createElementNS(SVGNS, "title")).textContent = s.name;
    const lx = s.x.length - 1;
    const dot = el("circle", {cx: xs(s.x[lx]), cy: ys(s.y[lx]), r: 3, fill: color}, svg);
    dot.appendChild(document.createElementNS(SVGNS, "title")).textContent =
      `${s.name}: ${fmtNum(s.y[lx])} ${opt.yUnit || ""} at ${opt.time ? fmtClock(s.x[lx], 0) : fmtNum(s.x[lx])}`;
  });
  return svg;
}

// One decision's slice plot: latency (log) against the decision's values, one column per value.
function sliceChart(host, xValues, ys, opt) {
  const w = opt.width || 300, h = opt.height || 210;
  const svg = frame(host, w, h);
  svg.setAttribute("data-points", String(ys.length));
  if (!ys.length) { empty(svg, w, h, "no successful trials"); return svg; }
  const cats = [...new Set(xValues)];
  const numeric = cats.every((c) => typeof c === "number");
  cats.sort(numeric ? (a, b) => a - b : (a, b) => String(a).localeCompare(String(b), undefined, {numeric: true}));
  const index = new Map(cats.map((c, i) => [c, i]));
  const yMin = Math.min(...ys), yMax = Math.max(...ys);
  const logY = yMin > 0 && yMax / yMin >= 5;
  const slant = cats.some((c) => String(c).length > 3);
  const m = slant ? MS : Object.assign({}, MS, {bottom: 40});
  const ys_ = scale(logY ? yMin / 1.2 : 0, yMax * 1.1, h - m.bottom, m.top, logY);
  const xs = (i) => m.left + (w - m.left - m.right) * (i + 0.5) / cats.length;
  const every = Math.max(1, Math.ceil(cats.length / (slant ? 14 : 10)));
  axes(svg, w, h, xs, ys_, cats.map((_, i) => i).filter((i) => i % every === 0),
       logY ? logTicks(yMin / 1.2, yMax * 1.1) : linearTicks(0, yMax * 1.1, 4),
       {xLabel: opt.xLabel, yLabel: "latency µs", logY, slant, xFmt: (i) => String(cats[i]), yFmt: fmtNum}, m);
  const band = (w - m.left - m.right) / cats.length;
  const g = el("g", {class: "dots"}, svg);
  ys.forEach((y, j) => {
    const jitter = (((j * 2654435761) >>> 0) % 1000 / 1000 - 0.5) * band * 0.6;
    el("circle", {cx: (xs(index.get(xValues[j])) + jitter).toFixed(1), cy: ys_(y).toFixed(1), r: 2.2}, g);
  });
  return svg;
}

window.charts = {lineChart, sliceChart, PALETTE};
