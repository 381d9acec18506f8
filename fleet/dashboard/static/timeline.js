// timeline.js: the Timeline tab of the selected task, a waterfall of its
// session drawn as inline SVG from the events app.js receives (the hook
// in onEvent calls timelineEvent): the queue wait (created to first
// claim), each model call (from the step before it to the end of its
// answer), each tool call (start to end), each check (its duration, ending
// at its event), parked time (PARKED to the next event), approval waits,
// compactions and the delivery (instants). Rows are in start order;
// hovering one shows its times. Above it, when the dispatcher has a
// tracing UI (tracing.ui_url) and the task a trace, a link to the trace
// there (GET /v1/tasks/{id}/trace, read once per task). Uses el, $ and
// api of app.js.
"use strict";

const tl = { task: "", events: [], timer: 0, trace: null, traceFor: "" };

// timelineEvent records one event envelope of task (app.js calls it for
// the selected task's stream) and redraws while the tab is shown.
function timelineEvent(task, env) {
  if (task !== tl.task) { tl.task = task; tl.events = []; }
  if (!env || !env.time) return;
  tl.events.push(env);
  if (ui.activeTab === "timeline" && !tl.timer) tl.timer = setTimeout(() => { tl.timer = 0; renderTimeline(); }, 200);
}

// timelineRows turns the events (in stream order) into spans
// {kind, name, start, end} in milliseconds since the epoch.
function timelineRows(task, events) {
  const rows = [], open = new Map();
  const t = (e) => Date.parse(e.time);
  if (task && task.created_at && task.started_at) {
    rows.push({ kind: "queue", name: "queue wait", start: Date.parse(task.created_at), end: Date.parse(task.started_at) });
  }
  let stepStart = 0, parked = null, approval = null;
  for (const e of events) {
    const d = e.data || {}, at = t(e);
    if (parked) { rows.push({ kind: "parked", name: "parked", start: parked, end: at }); parked = null; }
    if (approval && e.kind !== "APPROVAL_REQUESTED") { rows.push({ kind: "approval", name: "approval wait", start: approval, end: at }); approval = null; }
    switch (e.kind) {
      case "SESSION_START": case "USER_INPUT": case "STEERING_INJECTED":
        stepStart = at;
        break;
      case "ASSISTANT_TEXT_END":
        rows.push({ kind: "model", name: "model call", start: stepStart || at, end: at });
        stepStart = at;
        break;
      case "TOOL_CALL_START":
        open.set(d.call_id, { kind: "tool", name: "tool · " + (d.tool_name || "?"), start: at, end: at });
        break;
      case "TOOL_CALL_END": {
        const r = open.get(d.call_id) || { kind: "tool", name: "tool · " + (d.tool_name || "?"), start: at };
        r.end = at;
        open.delete(d.call_id);
        rows.push(r);
        stepStart = Math.max(stepStart, at);
        break;
      }
      case "CHECK_END":
        rows.push({ kind: "check", name: "check · " + (d.name || "?") + (d.passed ? "" : " (failed)"), start: at - (d.duration_ms || 0), end: at });
        break;
      case "PARKED": parked = at; break;
      case "APPROVAL_REQUESTED": approval = at; break;
      case "COMPACTION_END": rows.push({ kind: "compaction", name: "compaction", start: at, end: at }); break;
      case "DELIVERY": rows.push({ kind: "delivery", name: "delivery" + (d.error ? " (failed)" : ""), start: at, end: at }); break;
    }
  }
  for (const r of open.values()) rows.push(r); // still running
  return rows.sort((a, b) => a.start - b.start);
}

// loadTrace reads where task id's trace is, once per selected task, and
// redraws the timeline with its link.
async function loadTrace(id) {
  tl.traceFor = id;
  tl.trace = null;
  try {
    const tr = await api("GET", "/v1/tasks/" + encodeURIComponent(id) + "/trace");
    if (tl.traceFor !== id) return;
    tl.trace = tr;
  } catch { return; } // no link: the timeline does without
  if (ui.activeTab === "timeline") renderTimeline();
}

// traceLink is the link to the selected task's trace in the tracing UI,
// or a note that its trace was not kept, or null (no UI, no trace). A
// trace the sampler dropped is kept only when the task failed.
function traceLink(task, tr) {
  if (!tr || !tr.url || !tr.trace_id) return null;
  if (!tr.sampled && !(task && task.state === "failed")) {
    return el("p", { class: "muted trace-link", text: "This task's trace " + tr.trace_id + " was not sampled." });
  }
  return el("p", { class: "trace-link" }, el("a", { href: tr.url, target: "_blank", rel: "noopener noreferrer",
    "data-trace-id": tr.trace_id, text: "Open the trace in the tracing UI ↗" }));
}

function renderTimeline() {
  const box = $("timeline");
  if (ui.selected && tl.traceFor !== ui.selected) loadTrace(ui.selected);
  const link = tl.traceFor === ui.selected ? traceLink(ui.selectedTask, tl.trace) : null;
  const rows = timelineRows(ui.selectedTask, tl.task === ui.selected ? tl.events : []);
  if (!rows.length) {
    box.replaceChildren(...[link, el("p", { class: "muted", text: "No timed events yet." })].filter(Boolean));
    return;
  }
  const t0 = Math.min(...rows.map((r) => r.start)), t1 = Math.max(...rows.map((r) => r.end), t0 + 1);
  const W = 640, left = 150, rowH = 16, H = rows.length * rowH + 20;
  const x = (v) => left + (v - t0) / (t1 - t0) * (W - left - 8);
  const s = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart timeline", role: "img", "aria-label": "task timeline" });
  rows.forEach((r, i) => {
    const y = i * rowH;
    const ms = r.end - r.start;
    s.append(svg("g", { class: "tl-row", "data-kind": r.kind, "data-ms": ms },
      svg("text", { x: left - 6, y: y + 11, "text-anchor": "end", class: "label", text: r.name }),
      svg("rect", { x: x(r.start), y: y + 2, width: Math.max(2, x(r.end) - x(r.start)), height: rowH - 4, class: "tl-" + r.kind }),
      svg("title", { text: `${r.name}: ${(ms / 1000).toFixed(2)}s from +${((r.start - t0) / 1000).toFixed(2)}s` })));
  });
  s.append(svg("text", { x: left, y: H - 4, class: "axis", text: "0s" }),
    svg("text", { x: W - 8, y: H - 4, "text-anchor": "end", class: "axis", text: ((t1 - t0) / 1000).toFixed(1) + "s" }));
  box.replaceChildren(...[link, s].filter(Boolean));
}

document.addEventListener("DOMContentLoaded", () => {
  for (const b of document.querySelectorAll('.tab[data-tab="timeline"]')) b.addEventListener("click", renderTimeline);
});
