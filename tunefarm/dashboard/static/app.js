// The dashboard page: polls /api/summary (and /api/task for the chosen task) and redraws tables and charts.
// Every value from the study reaches the page through textContent or an attribute, never as markup.
"use strict";

const REFRESH_MS = 3000;
const STATUS_COLORS = {ok: "#16a34a", build_error: "#f59e0b", run_error: "#dc2626", wrong_result: "#9333ea",
                       timeout: "#64748b", worker_lost: "#0ea5e9"};
const state = {selected: null, summary: null, taskColors: new Map()};

function h(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== null && v !== undefined) e.setAttribute(k, String(v));
  }
  for (const c of children) e.append(c instanceof Node ? c : String(c));
  return e;
}

const fmt = {
  us: (v) => (v === null || v === undefined) ? "–" : v >= 1000 ? Math.round(v).toLocaleString("en-US")
                                                               : v.toPrecision(4),
  num: (v, d) => (v === null || v === undefined) ? "–" : v.toFixed(d),
  when: (us) => {
    if (!us) return "–";
    const d = new Date(us / 1000), p = (n) => String(n).padStart(2, "0");
    return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
  },
  ago: (us, now) => {
    const s = Math.max(0, (now - us) / 1e6);
    return s < 90 ? `${Math.round(s)} s` : s < 5400 ? `${Math.round(s / 60)} min` : `${(s / 3600).toFixed(1)} h`;
  },
};

const taskKey = (t) => `${t.workload_id}:${t.target_id}`;
const taskName = (t) => `${t.workload} @ ${t.target_label}`;
// with several studies (--db A --db B) jobs, curves and programs say which study they are from
const studyOf = (x) => (x.study === undefined ? "" : x.study);
const withStudy = (text, x) => (x.study === undefined ? [text]
                                                      : [text, h("div", {class: "study", title: x.study}, x.study)]);

function colorOf(t) {
  const k = taskKey(t);
  if (!state.taskColors.has(k)) state.taskColors.set(k, charts.PALETTE[state.taskColors.size % charts.PALETTE.length]);
  return state.taskColors.get(k);
}

function statusBar(statuses) {
  const total = Object.values(statuses).reduce((a, b) => a + b, 0);
  const bar = h("div", {class: "statusbar"});
  for (const [s, n] of Object.entries(statuses)) {
    const seg = h("div", {title: `${s}: ${n}`});
    seg.style.width = `${100 * n / total}%`;
    seg.style.background = STATUS_COLORS[s] || "#94a3b8";
    bar.append(seg);
  }
  const label = Object.entries(statuses).map(([s, n]) => `${s} ${n}`).join(" · ");
  return h("div", {}, h("span", {class: "muted"}, label), bar);
}

function errorsCell(errors) {
  const cell = h("div", {class: "errors"});
  for (const [text, n] of errors) cell.append(h("div", {title: text}, `${n}× ${text}`));
  return cell;
}

function progress(n, budget) {
  const bar = h("div", {class: "progress"});
  const fill = h("div");
  fill.style.width = budget ? `${Math.min(100, 100 * n / budget)}%` : "0";
  bar.append(fill, h("span", {}, budget ? `${n} / ${budget}` : `${n}`));
  return bar;
}

function fillBody(table, rows) {
  table.querySelector("tbody").replaceChildren(...rows);
}

function renderJobs(s) {
  const badge = (st) => h("span", {class: `badge ${["running", "finished", "killed", "stale", "failed"]
    .includes(st) ? st : "other"}`}, st);
  fillBody(document.getElementById("jobs"), s.jobs.slice().reverse().map((j) => h("tr",
    {"data-job-id": j.id, "data-study": j.study},
    h("td", {class: "name"}, ...withStudy(j.name, j)), h("td", {class: "state"}, badge(j.state)),
    h("td", {}, j.host || "–"),
    h("td", {}, fmt.when(j.started_us) + (j.finished_us ? ` (ran ${fmt.ago(j.started_us, j.finished_us)})`
                                                        : ` (${fmt.ago(j.started_us, s.now_us)} ago)`)),
    h("td", {class: "trials", "data-n": j.n}, progress(j.n, j.budget)),
    h("td", {class: "num rate"}, fmt.num(j.rate, 2)))));
  document.getElementById("jobs-empty").hidden = s.jobs.length > 0;
  const rows = [];
  for (const j of s.jobs.slice().reverse()) for (const t of j.tasks) {
    rows.push(h("tr", {"data-job-id": j.id, "data-study": j.study, "data-task": taskKey(t)},
      h("td", {}, ...withStudy(j.name, j)), h("td", {class: "name"}, t.workload),
      h("td", {title: t.target}, t.target_label), h("td", {class: "num"}, t.n),
      h("td", {class: "num"}, fmt.us(t.best_us)), h("td", {class: "num"}, fmt.num(t.gflops, 2)),
      h("td", {}, t.n ? statusBar(t.statuses) : h("span", {class: "muted"}, "waiting")),
      h("td", {}, errorsCell(t.errors))));
  }
  fillBody(document.getElementById("tasks"), rows.length ? rows
    : [h("tr", {}, h("td", {colspan: 8, class: "muted"}, "no tasks yet"))]);
}

function renderCurves(s) {
  // one curve per task, or per task and study: a trial number counts the records of one study
  const curves = s.tasks.flatMap((t) => (t.curves || [t.curve]).filter((c) => c.trial.length)
    .map((c) => ({t, c, name: c.study === undefined ? taskName(t) : `${taskName(t)} · ${c.study}`,
                  dash: c.study !== undefined && c.study !== s.layers[0].name})));
  const legend = document.getElementById("legend");
  legend.replaceChildren(...s.tasks.map((t) => {
    const swatch = h("i");
    swatch.style.background = colorOf(t);
    return h("span", {title: t.target}, swatch, taskName(t));
  }));
  if (s.layers) legend.append(h("span", {class: "muted"}, `solid: ${s.layers[0].name}; dashed: the other studies`));
  const series = (xKey) => curves.map(({t, c, name, dash}) => ({name, color: colorOf(t), x: c[xKey],
                                                                y: c.best_us, step: true, dash}));
  charts.lineChart(document.getElementById("chart-trials"), series("trial"),
    {xLabel: "trials of the task", yLabel: "best latency µs", yUnit: "µs", logY: "auto", positive: true,
     empty: "no successful trial yet"});
  charts.lineChart(document.getElementById("chart-time"), series("t_us"),
    {xLabel: "wall time", yLabel: "best latency µs", yUnit: "µs", time: true, logY: "auto", positive: true,
     empty: "no successful trial yet"});
  const names = new Map(s.jobs.map((j) => [`${studyOf(j)}|${j.id}`, j.name]));
  charts.lineChart(document.getElementById("chart-throughput"), s.throughput.series.map((ser, i) => ({
    name: (ser.job === null ? "imported" : (names.get(`${studyOf(ser)}|${ser.job}`) || `job ${ser.job}`)) +
          (ser.study === undefined ? "" : ` · ${ser.study}`),
    color: charts.PALETTE[(i + 3) % charts.PALETTE.length], x: ser.t_us, y: ser.per_min, step: true,
    stepEnd: s.throughput.bin_s * 1e6})),
    {xLabel: `wall time (${s.throughput.bin_s} s bins)`, yLabel: "trials / min", time: true, logY: false,
     empty: "no trials yet"});
}

function renderHosts(s) {
  fillBody(document.getElementById("hosts"), s.hosts.map((x) => h("tr", {},
    h("td", {class: "name"}, x.host), h("td", {class: "num"}, x.n), h("td", {class: "num"}, x.errors),
    h("td", {}, statusBar(x.statuses)), h("td", {class: "num"}, fmt.num(x.build_s, 3)),
    h("td", {class: "num"}, fmt.us(x.run_s === null ? null : x.run_s * 1e6)))));
}

function renderSelect(s) {
  const select = document.getElementById("task-select");
  const keys = s.tasks.map(taskKey);
  if (!state.selected || !keys.includes(state.selected)) {
    const best = s.tasks.slice().sort((a, b) => b.n - a.n)[0];
    state.selected = best ? taskKey(best) : null;
  }
  if (select.options.length !== keys.length || [...select.options].some((o, i) => o.value !== keys[i])) {
    select.replaceChildren(...s.tasks.map((t) => h("option", {value: taskKey(t)}, taskName(t))));
  }
  if (state.selected) select.value = state.selected;
  if (!s.tasks.length) {
    document.getElementById("workload-info").textContent =
      "No records yet: this part fills in as soon as a job stores its first trial.";
    fillBody(document.getElementById("topk"), []);
    document.getElementById("decisions").replaceChildren();
  }
}

function renderTask(d) {
  // unchanged answer: leave the DOM alone (a trace someone opened stays open)
  const sig = JSON.stringify([state.selected, d.top.map((p) => [studyOf(p), p.record_id]), d.n_sampled]);
  if (sig === state.taskSig) return;
  if (!state.taskSig || JSON.parse(state.taskSig)[0] !== state.selected) state.touched = false;
  state.taskSig = sig;
  const rowKey = (p) => `${studyOf(p)}|${p.record_id}`;
  const open = new Set([...document.querySelectorAll("#topk details[open]")]
    .map((e) => e.closest("tr").getAttribute("data-key")));
  const t = state.summary.tasks.find((x) => taskKey(x) === state.selected);
  document.getElementById("workload-info").textContent = t
    ? `${t.workload} (key ${t.key.slice(0, 10)}) on ${t.target_label}: ${t.n} trials, ${t.ok} ok, ` +
      `best ${fmt.us(t.best_us)} µs` + (t.gflops ? `, ${t.gflops.toFixed(2)} GFLOP/s` : "") : "";
  const confirmed = (c) => c === null ? h("span", {class: "muted"}, "not confirmed")
    : h("span", {title: "re-timed on a quiet host: median (10th–90th percentile)"},
        `${fmt.us(c.us)} (${fmt.us(c.p10_us)}–${fmt.us(c.p90_us)})`);
  fillBody(document.getElementById("topk"), d.top.map((p, i) => h("tr",
    {"data-record-id": p.record_id, "data-study": p.study, "data-key": rowKey(p)},
    h("td", {}, i + 1), h("td", {class: "num confirmed"}, confirmed(p.confirmed)),
    h("td", {class: "num"}, fmt.us(p.us)), h("td", {class: "num"}, fmt.num(p.gflops, 2)),
    h("td", {}, ...withStudy(p.job_id === null ? "–" : p.job_id, p)), h("td", {}, p.host),
    h("td", {}, h("details", (state.touched ? open.has(rowKey(p)) : i === 0) ? {open: ""} : {},
                  h("summary", {}, `${p.trace.split("\n").length} lines`),
                  h("pre", {class: "trace"}, p.trace))))));
  if (!d.top.length) {
    fillBody(document.getElementById("topk"), [h("tr", {}, h("td", {colspan: 7, class: "muted"},
      "no successful program yet"))]);
  }
  const box = document.getElementById("decisions");
  box.replaceChildren(...d.decisions.map((dec) => {
    const fig = h("figure", {"data-decision": dec.name});
    const plot = h("div");
    fig.append(h("figcaption", {}, `${dec.name} (${dec.n_values} values)`), plot);
    charts.sliceChart(plot, dec.x, dec.us, {xLabel: "decision value"});
    return fig;
  }));
  if (!d.decisions.length) box.replaceChildren(h("p", {class: "muted"}, "no sampled decisions yet"));
}

async function getJSON(url) {
  const r = await fetch(url, {cache: "no-store"});
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || `${url}: HTTP ${r.status}`);
  return body;
}

async function refresh() {
  const banner = document.getElementById("error");
  try {
    const s = await getJSON("/api/summary");
    state.summary = s;
    renderJobs(s);
    renderCurves(s);
    renderHosts(s);
    renderSelect(s);
    if (state.selected) {
      const [w, t] = state.selected.split(":");
      renderTask(await getJSON(`/api/task?workload=${w}&target=${t}&k=10`));
    }
    const studies = s.layers ? `${s.layers.length} studies · ` : "";
    document.getElementById("status").textContent =
      `${studies}${s.n_records.toLocaleString("en-US")} records · ` +
      `${s.jobs.filter((j) => j.state === "running").length} running · ` +
      `updated ${new Date().toLocaleTimeString("en-GB", {hour12: false})}`;
    document.body.setAttribute("data-last-record",
      s.layers ? s.layers.map((l) => l.last_record_id).join(" ") : String(s.last_record_id));
    const failed = document.getElementById("layer-errors");  // a study that cannot be read; the others show
    failed.replaceChildren(...(s.errors || []).map((e) => h("div", {}, `a study cannot be read: ${e}`)));
    failed.hidden = !(s.errors || []).length;
    banner.hidden = true;
  } catch (e) {
    banner.textContent = `cannot refresh: ${e.message}`;
    banner.hidden = false;
  } finally {
    setTimeout(refresh, REFRESH_MS);
  }
}

// once someone opens or closes a trace, the page keeps their choice instead of opening the fastest one
document.getElementById("topk").addEventListener("click", (ev) => {
  if (ev.target.closest("summary")) state.touched = true;
});
document.getElementById("task-select").addEventListener("change", (ev) => {
  state.selected = ev.target.value;
  const [w, t] = state.selected.split(":");
  getJSON(`/api/task?workload=${w}&target=${t}&k=10`).then(renderTask).catch(() => {});
});
refresh();
