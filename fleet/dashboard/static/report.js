// report.js: the Backlog report panel. Reads GET /v1/reports for a label
// filter and, optionally, a comparison filter (its labels put over the
// first's), and draws it with inline SVG: the burn-down (queued, running,
// succeeded, failed over time, stacked), the success rate of each filter
// with its 95% Wilson score interval, the outcome table and the top
// failure reasons. The summary table's cells are formatted exactly as
// `dispatcher report --format md` formats them (fleet/report), so the two
// read alike. Uses api, el and $ of app.js.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
const BD_SERIES = ["queued", "running", "succeeded", "failed"];

function svg(tag, attrs, ...children) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "text") e.textContent = v;
    else e.setAttribute(k, String(v));
  }
  for (const c of children) if (c) e.append(c);
  return e;
}

// The formats of fleet/report (render.go): keep them in step.
const rfixed = (x, d) => Number(x || 0).toFixed(d);
const rpct = (x) => rfixed((x || 0) * 100, 1) + "%";
const rusd = (x) => "$" + rfixed(x, 4);
const rsecs = (x) => rfixed(x, 1) + "s";

function filterName(f) {
  const parts = Object.entries(f || {}).map(([k, v]) => k + "=" + v).sort();
  return parts.length ? parts.join(", ") : "all tasks";
}

// REPORT_METRICS are the summary table's lines, as fleet/report.Metrics.
const REPORT_METRICS = [
  ["Tasks", (r) => String(r.tasks)],
  ["Queued / running / succeeded / failed", (r) => `${r.now.queued} / ${r.now.running} / ${r.now.succeeded} / ${r.now.failed}`],
  ["Success rate (95% Wilson interval)", (r) => r.finished ? `${rpct(r.success_rate)} [${rpct(r.success_interval[0])}, ${rpct(r.success_interval[1])}]` : "-"],
  ["Cost", (r) => rusd(r.cost_usd)],
  ["Cost per success", (r) => rusd(r.cost_per_success_usd)],
  ["Tokens per success", (r) => rfixed(r.tokens_per_success, 0)],
  ["Median turns", (r) => rfixed(r.median_turns, 1)],
  ["Time to result p50 / p90 / p99", (r) => { const p = r.time_to_result; return `${rsecs(p.p50)} / ${rsecs(p.p90)} / ${rsecs(p.p99)}`; }],
];

// parseFilter reads "k=v, k2=v2" into a map; null with a bad pair.
function parseFilter(s) {
  const out = {};
  for (const part of s.split(",").map((p) => p.trim()).filter(Boolean)) {
    const i = part.indexOf("=");
    if (i <= 0) return null;
    out[part.slice(0, i).trim()] = part.slice(i + 1).trim();
  }
  return out;
}

async function refreshReport() {
  if (!$("report-box").open) return;
  const label = parseFilter($("report-label").value), compare = parseFilter($("report-compare").value);
  if (!label || !compare) {
    toast("report: write the filters as key=value, separated by commas", true);
    return;
  }
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(label)) q.append("label", k + "=" + v);
  for (const [k, v] of Object.entries(compare)) q.append("compare", k + "=" + v);
  try {
    renderReports(await api("GET", "/v1/reports?" + q));
  } catch (err) {
    if (!(err instanceof APIError && (err.status === 401 || err.status === 403))) toast("report: " + err.message, true);
  }
}

function renderReports(rs) {
  const all = [rs.report].concat(rs.compare ? [rs.compare] : []);
  const head = el("tr", {}, el("th", { text: "" }), ...all.map((r) => el("th", { text: filterName(r.filter) })));
  $("report-summary").querySelector("thead").replaceChildren(head);
  $("report-summary").querySelector("tbody").replaceChildren(...REPORT_METRICS.map(([name, f], i) =>
    el("tr", { "data-metric": i }, el("th", { text: name }), ...all.map((r) => el("td", { text: f(r) })))));
  $("report-rates").replaceChildren(rateChart(all));
  $("report-details").replaceChildren(...all.map((r, i) => reportDetail(r, i)));
  $("report-empty").hidden = all.some((r) => r.tasks > 0);
  $("report-view").dataset.ready = String(Date.now());
}

// rateChart: one bar per filter, the success rate, with the interval as a
// whisker; 0..100% across.
function rateChart(all) {
  const W = 520, left = 160, right = 60, rowH = 28, H = all.length * rowH + 24;
  const x = (v) => left + v * (W - left - right);
  const s = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart rates", role: "img", "aria-label": "success rate per filter" });
  for (const t of [0, 0.25, 0.5, 0.75, 1]) {
    s.append(svg("line", { x1: x(t), x2: x(t), y1: 0, y2: H - 18, class: "grid" }),
      svg("text", { x: x(t), y: H - 4, "text-anchor": "middle", class: "axis", text: Math.round(t * 100) + "%" }));
  }
  all.forEach((r, i) => {
    const y = i * rowH + 4, rate = r.success_rate || 0, [lo, hi] = r.success_interval || [0, 0];
    s.append(svg("g", { class: "rate", "data-filter": filterName(r.filter), "data-rate": rpct(rate), "data-low": rpct(lo), "data-high": rpct(hi) },
      svg("text", { x: left - 6, y: y + 14, "text-anchor": "end", class: "label", text: filterName(r.filter) }),
      svg("rect", { x: x(0), y, width: Math.max(0, x(rate) - x(0)), height: 18, class: "bar s" + i }),
      svg("line", { x1: x(lo), x2: x(hi), y1: y + 9, y2: y + 9, class: "whisker" }),
      svg("line", { x1: x(lo), x2: x(lo), y1: y + 3, y2: y + 15, class: "whisker" }),
      svg("line", { x1: x(hi), x2: x(hi), y1: y + 3, y2: y + 15, class: "whisker" }),
      svg("text", { x: x(1) + 4, y: y + 14, class: "value", text: rpct(rate) }),
      svg("title", { text: `${filterName(r.filter)}: ${rpct(rate)} succeeded of ${r.finished} finished, 95% Wilson interval ${rpct(lo)} to ${rpct(hi)}` })));
  });
  return s;
}

// burnDownChart stacks the four states at each instant of the burn-down.
function burnDownChart(r) {
  const pts = r.burn_down || [], W = 520, H = 160, top = 8, bottom = 22, left = 34;
  const s = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart burndown", role: "img", "aria-label": "tasks by state over time" });
  const total = Math.max(1, ...pts.map((p) => BD_SERIES.reduce((n, k) => n + p[k], 0)));
  const bw = (W - left) / Math.max(1, pts.length);
  const y = (v) => top + (H - top - bottom) * (1 - v / total);
  s.append(svg("text", { x: left - 4, y: y(total) + 4, "text-anchor": "end", class: "axis", text: String(total) }),
    svg("text", { x: left - 4, y: y(0), "text-anchor": "end", class: "axis", text: "0" }));
  pts.forEach((p, i) => {
    const g = svg("g", { class: "bd-point", "data-at": p.at, ...Object.fromEntries(BD_SERIES.map((k) => ["data-" + k, p[k]])) });
    let acc = 0;
    for (const k of ["succeeded", "failed", "running", "queued"]) {
      if (!p[k]) continue;
      g.append(svg("rect", { x: left + i * bw + 1, y: y(acc + p[k]), width: Math.max(1, bw - 2), height: y(acc) - y(acc + p[k]), class: "st-" + k }));
      acc += p[k];
    }
    g.append(svg("title", { text: `${new Date(p.at).toLocaleString()}: ` + BD_SERIES.map((k) => `${p[k]} ${k}`).join(", ") }));
    s.append(g);
  });
  if (pts.length) {
    s.append(svg("text", { x: left, y: H - 6, class: "axis", text: new Date(pts[0].at).toLocaleTimeString() }),
      svg("text", { x: W, y: H - 6, "text-anchor": "end", class: "axis", text: new Date(pts[pts.length - 1].at).toLocaleTimeString() }));
  }
  return s;
}

function reportDetail(r, i) {
  const legend = el("p", { class: "legend" }, ...BD_SERIES.map((k) => el("span", { class: "key st-" + k, text: k })));
  const outcomes = el("table", { class: "usage outcomes" },
    el("thead", {}, el("tr", {}, el("th", { text: "outcome" }), el("th", { text: "detail" }), el("th", { text: "tasks" }))),
    el("tbody", {}, ...(r.outcomes || []).map((o) => el("tr", { "data-outcome": o.outcome, "data-detail": o.detail },
      el("td", { text: o.outcome }), el("td", { text: o.detail }), el("td", { text: String(o.tasks) })))));
  const failures = el("ul", { class: "failures" }, ...(r.top_failures || []).map((f) => el("li", { "data-reason": f.reason },
    el("b", { text: `${f.reason} · ${f.tasks}` }), " e.g. ",
    ...f.examples.map((id) => el("a", { href: "#task=" + id, class: "mono", text: id.slice(0, 8) + " " })))));
  return el("div", { class: "report-filter", "data-index": i },
    el("h4", { text: filterName(r.filter) + (r.truncated ? " (the oldest tasks only: more matched)" : "") }),
    burnDownChart(r), legend, outcomes,
    (r.top_failures || []).length ? el("h5", { text: "Top failure reasons" }) : null, failures);
}

document.addEventListener("DOMContentLoaded", () => {
  $("report-box").addEventListener("toggle", refreshReport);
  $("report-form").addEventListener("submit", (e) => { e.preventDefault(); refreshReport(); });
});
