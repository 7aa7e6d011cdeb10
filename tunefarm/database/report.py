"""Self-contained HTML report of a trace database: one file, inline CSS and SVG, no network, no JS.

Per workload (task): best latency against trials and against wall time, the status breakdown of trials,
throughput (trials per minute) over time, the top-k table with each trace (as the ``sch.*`` calls the CLI
prints), and the most frequent errors. The two wall-time charts are drawn only for workloads tuned over a
minute or more (``MIN_WALL_CHART_S``): below that, per-minute bins and elapsed seconds carry no information.
Targets are shown by their label (the full string, 500+ characters of CPU features, is in the tooltip).
Every string that comes from the database (names, targets, errors, traces, hosts) is HTML-escaped.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import os
import string
from html import escape
from importlib import resources
from typing import Any

import numpy as np
import pandas as pd

from tunefarm.database import svg
from tunefarm.runtime.measure_result import MeasureStatus
from tunefarm.target import target_label

STATUS_COLORS = {
    MeasureStatus.OK.value: "#16a34a",
    MeasureStatus.BUILD_ERROR.value: "#f59e0b",
    MeasureStatus.RUN_ERROR.value: "#dc2626",
    MeasureStatus.WRONG_RESULT.value: "#9333ea",
    MeasureStatus.TIMEOUT.value: "#64748b",
    MeasureStatus.WORKER_LOST.value: "#0ea5e9",
}
MAX_DOTS = 1500  # per series: keeps a 100k-trial report small and fast to render
MIN_WALL_CHART_S = 60.0


def _template() -> string.Template:
    text = resources.files("tunefarm.database").joinpath("report_template.html").read_text(encoding="utf-8")
    return string.Template(text)


def _us(v: float) -> str:
    return "–" if not math.isfinite(v) else f"{v:,.2f}" if v < 1000 else f"{v:,.0f}"


def _num(v: float, digits: int = 2) -> str:
    return "–" if v is None or not math.isfinite(v) else f"{v:,.{digits}f}"


def _when(ts: Any) -> str:
    return "–" if ts is None or pd.isna(ts) else pd.Timestamp(ts).strftime("%Y-%m-%d %H:%M:%S UTC")


def _time_unit(span_s: float) -> tuple[str, float]:
    if span_s <= 120:
        return "s", 1.0
    if span_s <= 3 * 3600:
        return "min", 60.0
    return "h", 3600.0


def pretty_trace(trace: Any) -> str:
    """One instruction (and one decision) per line: readable and still valid JSON."""
    def block(items: list) -> str:
        return "[\n" + ",\n".join("  " + json.dumps(i, ensure_ascii=False) for i in items) + "\n]"

    if isinstance(trace, dict):
        parts = [f'"{k}": ' + block(list(v)).replace("\n", "\n  ") for k, v in trace.items()]
        return "{\n  " + ",\n  ".join(parts) + "\n}"
    return block(list(trace))


def trace_text(record) -> str:
    """A stored trace as the ``sch.*`` calls it stands for; as JSON if this version cannot read it."""
    try:
        return str(record.trace)
    except Exception:  # noqa: BLE001 - a trace from another version of tunefarm is still shown
        return pretty_trace(record.trace_json)


def _target_html(target: str) -> str:
    return f'<span class="target" title="{escape(target)}">{escape(target_label(target))}</span>'


def _sample(idx: np.ndarray, keep: np.ndarray, limit: int = MAX_DOTS) -> np.ndarray:
    """At most ``limit`` evenly spaced positions of ``idx``, always keeping those where ``keep``."""
    if len(idx) <= limit:
        return idx
    chosen = np.zeros(len(idx), bool)
    chosen[np.linspace(0, len(idx) - 1, limit).astype(int)] = True
    return idx[chosen | keep]


def _curves(wdf: pd.DataFrame, colors: dict[str, str], t0: pd.Timestamp) -> tuple[str, str]:
    """Best-so-far latency against trial count and against elapsed wall time, one colour per target."""
    span = (wdf["created"].max() - t0).total_seconds()
    unit, div = _time_unit(span)
    by_trial, by_time = [], []
    for target, tdf in wdf.groupby("target", sort=True):
        tdf = tdf.sort_values(["created", "record_id"])
        lat = tdf["median_us"].to_numpy()
        n = np.arange(1, len(tdf) + 1, dtype=float)
        secs = (tdf["created"] - t0).dt.total_seconds().to_numpy() / div
        best = np.fmin.accumulate(lat)  # NaN (failures) never win
        prev = np.concatenate([[np.inf], best[:-1]])
        improved = np.isfinite(best) & (best < np.where(np.isfinite(prev), prev, np.inf))
        ok = np.flatnonzero(np.isfinite(lat))
        dots = _sample(ok, improved[ok])
        tips = [f"trial {int(n[i])}: {_us(lat[i])} µs" for i in dots]
        color = colors[target]
        steps = np.flatnonzero(improved)
        if len(steps):
            steps_x, steps_y = list(n[steps]) + [n[-1]], list(best[steps]) + [best[steps[-1]]]
            time_x = list(secs[steps]) + [secs[-1]]
        else:
            steps_x = steps_y = time_x = []
        by_trial += [svg.Series(target, n[dots], lat[dots], color, "dots", tips, legend=False),
                     svg.Series(target, steps_x, steps_y, color, "step")]
        by_time += [svg.Series(target, secs[dots], lat[dots], color, "dots", tips, legend=False),
                    svg.Series(target, time_x, steps_y, color, "step")]
    kw = dict(y_label="best latency (µs, log)", log_y=True, empty_text="no successful trials yet")
    return (svg.xy_chart(by_trial, title="Tuning curve: best latency vs trials", x_label="trials measured", **kw),
            svg.xy_chart(by_time, title="Tuning curve: best latency vs wall time",
                         x_label=f"elapsed wall time ({unit})", **kw))


def _throughput(wdf: pd.DataFrame, t0: pd.Timestamp) -> str:
    """Trials per minute in time bins of a round width (>= 1 min)."""
    secs = (wdf["created"] - t0).dt.total_seconds().to_numpy()
    span_min = max(float(secs.max()) / 60.0, 1e-9)
    width = next((w for w in (1, 2, 5, 10, 15, 30, 60, 120, 240, 480, 1440) if span_min / w <= 60), 2880)
    n_bins = max(1, math.ceil(span_min / width + 1e-9))
    if secs.max() >= n_bins * width * 60:
        n_bins += 1
    counts, _ = np.histogram(secs / 60.0, bins=n_bins, range=(0, n_bins * width))
    edges = [i * width for i in range(n_bins + 1)]
    rates = [c / width for c in counts]
    tips = [f"{edges[i]}–{edges[i + 1]} min: {int(counts[i])} trials" for i in range(n_bins)]
    return svg.bar_chart(edges, rates, title=f"Throughput ({width}-minute bins)",
                         x_label="elapsed wall time (min)", y_label="trials / min", titles=tips)


def _status_bar(wdf: pd.DataFrame) -> str:
    counts = wdf["status"].value_counts()
    parts = [(s.value, int(counts.get(s.value, 0)), STATUS_COLORS[s.value]) for s in MeasureStatus]
    return svg.stacked_bar(parts, title=f"Trial status ({len(wdf):,} trials)")


def _confirmed(r) -> str:
    """A record's confirmed median and p10-p90 spread, or a dash (never confirmed)."""
    if not r.confirmed:
        return "–"
    med, p10, p90 = (v * 1e6 for v in r.confirmed)
    return f"{_us(med)} ({_us(p10)}-{_us(p90)})"


def _topk_table(db, key: str, target: str, k: int) -> str:
    recs = db.top_k(key, k, target=target)
    if not recs:
        return '<p class="empty">no successful trials on this target</p>'
    rows = []
    for i, r in enumerate(recs, 1):
        trace = trace_text(r)
        n_inst = len(r.trace_json["insts"] if isinstance(r.trace_json, dict) else r.trace_json)
        rows.append(
            f'<tr><td class="num">{i}</td><td class="num">{_us(r.median_us)}</td>'
            f'<td class="num">{_confirmed(r)}</td><td class="num">{_us(min(r.result.run_secs) * 1e6)}</td><td class="num">{_num(r.gflops)}</td>'
            f'<td class="num">{r.trial}</td><td class="num">{"" if r.job_id is None else r.job_id}</td>'
            f'<td>{escape(r.result.host)}</td>'
            f'<td><code title="{escape(r.program_hash or "")}">{escape((r.program_hash or "")[:16])}</code></td>'
            f'<td>{_when(r.created.replace(tzinfo=None))}</td>'
            f'<td><details><summary>{n_inst} instructions</summary><pre>{escape(trace)}</pre></details></td></tr>')
    head = ('<tr><th class="num">#</th><th class="num">median µs</th>'
            '<th class="num">confirmed µs (p10-p90)</th><th class="num">min µs</th>'
            '<th class="num">GFLOP/s</th><th class="num">trial</th><th class="num">job</th><th>host</th>'
            '<th>program hash</th><th>measured</th><th>trace</th></tr>')
    return f"<table>{head}{''.join(rows)}</table>"


def _errors_table(wdf: pd.DataFrame, limit: int = 5) -> str:
    failed = wdf[wdf["status"] != MeasureStatus.OK.value]
    if failed.empty:
        return ""
    msg = failed["error"].fillna("").astype(str).str.strip().str.split("\n").str[0].str.slice(0, 300)
    top = (pd.DataFrame({"status": failed["status"].astype(str), "error": msg})
           .value_counts().head(limit))
    rows = "".join(f'<tr><td class="num">{int(n):,}</td><td>{escape(s)}</td>'
                   f'<td class="err">{escape(e) or "–"}</td></tr>' for (s, e), n in top.items())
    return (f"<h3>Most frequent failures</h3><table><tr><th class=\"num\">trials</th><th>status</th>"
            f"<th>error (first line)</th></tr>{rows}</table>")


def _summary(by_key: dict[str, pd.DataFrame], empty: pd.DataFrame, workloads: pd.DataFrame) -> str:
    rows = []
    for w in workloads.itertuples():
        wdf = by_key.get(w.key, empty)
        groups = list(wdf.groupby("target", sort=True)) or [(None, wdf)]
        for target, tdf in groups:
            best = tdf["median_us"].min()
            gf = tdf["gflops"].max()
            n_ok = int((tdf["status"] == "ok").sum())
            rows.append(
                f'<tr><td><a href="#w{w.workload_id}">{escape(w.name)}</a></td>'
                f'<td>{_target_html(target) if target else "–"}</td><td class="num">{len(tdf):,}</td>'
                f'<td class="num">{n_ok:,}</td><td class="num">{_us(best)}</td><td class="num">{_num(gf)}</td></tr>')
    head = ('<tr><th>workload</th><th>target</th><th class="num">trials</th><th class="num">ok</th>'
            '<th class="num">best µs</th><th class="num">best GFLOP/s</th></tr>')
    return f'<section class="card"><h2>Summary</h2><table>{head}{"".join(rows)}</table></section>'


def _jobs(jobs: pd.DataFrame) -> str:
    if jobs.empty:
        return ""
    rows = "".join(
        f'<tr><td class="num">{j.job_id}</td><td>{escape(str(j.name))}</td><td>{escape(str(j.status))}</td>'
        f'<td>{_when(j.started)}</td><td>{_when(j.finished)}</td><td class="num">{j.n_records:,}</td>'
        f'<td>{escape(_versions(j))}</td></tr>' for j in jobs.itertuples())
    return ('<section class="card"><h2>Jobs</h2><table><tr><th class="num">id</th><th>name</th><th>status</th>'
            f'<th>started</th><th>finished</th><th class="num">trials</th><th>code generator</th></tr>{rows}'
            '</table></section>')


def _versions(j) -> str:
    """tunefarm / llvmlite / LLVM versions of a job ('' for a job stored before they were)."""
    parts = [f"{name} {v}" for name, v in (("tunefarm", j.tunefarm_version), ("llvmlite", j.llvmlite_version),
                                           ("LLVM", j.llvm_version)) if isinstance(v, str) and v]
    return ", ".join(parts)


def _workload_section(db, w: Any, wdf: pd.DataFrame, k: int) -> str:
    flop = f"{w.flop / 1e6:,.3f} MFLOP" if math.isfinite(w.flop) else "FLOP count unknown"
    head = (f'<section class="card" id="w{w.workload_id}"><h2>{escape(w.name)}</h2>'
            f'<p class="meta">key <code>{escape(w.key)}</code> · {flop} · {len(wdf):,} trials</p>')
    if wdf.empty:
        return head + '<p class="empty">no trials recorded</p></section>'
    targets = sorted(wdf["target"].unique())
    colors = {t: svg.PALETTE[i % len(svg.PALETTE)] for i, t in enumerate(targets)}
    t0 = wdf["created"].min()
    by_trial, by_time = _curves(wdf, colors, t0)
    span_s = (wdf["created"].max() - t0).total_seconds()
    if span_s >= MIN_WALL_CHART_S:
        charts = f'<div class="charts">{by_trial}{by_time}{_status_bar(wdf)}{_throughput(wdf, t0)}</div>'
    else:
        charts = (f'<div class="charts">{by_trial}{_status_bar(wdf)}</div><p class="empty">tuned in {span_s:.0f} s: '
                  f'the wall-time and throughput charts are drawn from {MIN_WALL_CHART_S:.0f} s of tuning on</p>')
    tables = "".join(f'<h3>Top {k} on {_target_html(t)}</h3>{_topk_table(db, w.key, t, k)}' for t in targets)
    return head + charts + tables + _errors_table(wdf) + "</section>"


def render_report(db, *, top_k: int = 10, title: str = "tunefarm tuning report") -> str:
    """The report as an HTML string."""
    df = db.records(decisions=False)
    workloads = db.workloads()
    jobs = db.jobs()
    span = ""
    if not df.empty:
        span = f" · {_when(df['created'].min())} → {_when(df['created'].max())}"
    now = pd.Timestamp(_dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None))
    subtitle = (f"{escape(os.path.basename(db.path))} · {len(workloads):,} workloads · {len(df):,} trials · "
                f"{len(jobs):,} jobs{span} · generated {_when(now)}")
    by_key = {k: g for k, g in df.groupby("workload_key", sort=False)}
    empty = df.iloc[0:0]
    sections = [_workload_section(db, w, by_key.get(w.key, empty), top_k) for w in workloads.itertuples()]
    body = _summary(by_key, empty, workloads) + "".join(sections) + _jobs(jobs)
    return _template().substitute(title=escape(title), subtitle=subtitle, body=body)


def write_report(db, path: str | os.PathLike, *, top_k: int = 10, title: str = "tunefarm tuning report") -> str:
    """Write the self-contained HTML report of ``db`` (a :class:`Database`) to ``path``; returns the path."""
    html = render_report(db, top_k=top_k, title=title)
    path = os.fspath(path)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(html)
    os.replace(tmp, path)  # readers never see a half-written report
    return path
