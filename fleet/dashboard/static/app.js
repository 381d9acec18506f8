// agentfleet dashboard: plain JavaScript over the dispatcher's HTTP API
// (docs/api.md). No build step. Everything the page shows comes from:
//   GET  /v1/stats                   counts by state, queue lag, throughput
//   GET  /v1/tasks                   the task list (filtered by state, searched with q=: search.js)
//   GET  /v1/events?from=new         fleet-wide events: refresh hints
//   GET  /v1/tasks/{id}/events       one task's events, replayed from the start
//   GET  /v1/tasks/{id}/tree         parents and children
//   GET  /v1/tasks/{id}/sessions, /v1/sessions/{sid}/turns   stored turns
//   GET  /v1/usage, /v1/budgets      the usage panel: tokens, cost, budgets
//   POST /v1/tasks, /cancel, /steer, /follow_up, /approvals/{call_id}
// A bearer token, when the dispatcher needs one, comes from #token= (or
// ?token=) once and is kept in sessionStorage (this tab only); event
// streams open with single-use tickets (POST /v1/stream-tickets), never
// with the token in their URL. With single sign-on the session cookie
// authenticates instead; who.js reads GET /v1/whoami and hides what the
// role may not do.
"use strict";

const STATES = ["queued", "running", "waiting", "succeeded", "failed", "cancelled"];
const TERMINAL = new Set(["succeeded", "failed", "cancelled"]);
const LIST_LIMIT = 300;
const POLL_MS = 3000;

const $ = (id) => document.getElementById(id);

const ui = {
  token: "",
  filterStates: new Set(), // empty: all
  tasks: [],
  selected: "",
  selectedTask: null,
  stream: null, // EventSource of the selected task
  streamGen: 0, // bumped when the selected task's stream is closed
  fleet: null, // EventSource of the whole fleet
  refreshTimer: 0,
  activeTab: "events",
  calls: new Map(), // call_id -> {out, summary, box} of the selected task
  assistant: null, // the assistant block being streamed
};

// ---- token and API ----

function initToken() {
  // The token comes once in the fragment (#token=..., as dev mode prints
  // it: never sent to a server) or the query (?token=...); it is kept in
  // sessionStorage and removed from the address bar at once.
  const params = new URLSearchParams(location.search);
  const hash = new URLSearchParams(location.hash.slice(1));
  const fromURL = hash.get("token") || params.get("token");
  if (fromURL) {
    sessionStorage.setItem("agentfleet.token", fromURL);
    params.delete("token");
    hash.delete("token");
    const q = params.toString(), h = hash.toString();
    history.replaceState(null, "", location.pathname + (q ? "?" + q : "") + (h ? "#" + h : ""));
  }
  ui.token = sessionStorage.getItem("agentfleet.token") || "";
  $("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    ui.token = $("token-input").value.trim();
    sessionStorage.setItem("agentfleet.token", ui.token);
    $("token-banner").hidden = true;
    restart();
  });
}

function needToken() {
  $("token-banner").hidden = false;
  offerSSO(); // who.js
}

class APIError extends Error {
  constructor(status, body, text) {
    super((body && body.error && body.error.message) || `HTTP ${status}: ${text}`);
    this.status = status;
  }
}

async function api(method, path, body) {
  const headers = { Accept: "application/json" };
  if (ui.token) headers.Authorization = "Bearer " + ui.token;
  const init = { method, headers };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const resp = await fetch(path, init);
  const text = await resp.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (resp.status === 401 || resp.status === 403) needToken();
  if (!resp.ok) throw new APIError(resp.status, data, text);
  return data;
}

// streamURL is path with a stream ticket (POST /v1/stream-tickets): an
// EventSource cannot send the Authorization header, and the token never
// goes into a URL. A ticket opens one stream once, so a stream that drops
// is reopened with a new one (see reopenable).
async function streamURL(path) {
  if (!ui.token) return path;
  const t = await api("POST", "/v1/stream-tickets", {});
  return path + (path.includes("?") ? "&" : "?") + "ticket=" + encodeURIComponent(t.ticket);
}

// STREAM_RETRIES is how many times in a row a stream is reopened without
// receiving anything before the page gives up and says so.
const STREAM_RETRIES = 5;

function toast(msg, isError) {
  const t = $("toast");
  t.textContent = msg;
  t.classList.toggle("error", !!isError);
  t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, isError ? 8000 : 3500);
}

// ---- small DOM helpers ----

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function stateBadge(state) {
  return el("span", { class: "state", "data-state": state, text: state });
}

// shortID is the tail of an id: ids are UUIDv7, whose heads are timestamps
// and look alike for tasks created together.
function shortID(id) {
  return id ? id.slice(-8) : "";
}

function firstLine(s, n) {
  const line = (s || "").split("\n").find((l) => l.trim() !== "") || "";
  return line.length > n ? line.slice(0, n - 1) + "…" : line;
}

function ago(iso) {
  if (!iso) return "";
  const s = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
  if (s < 60) return Math.floor(s) + "s";
  if (s < 3600) return Math.floor(s / 60) + "m";
  if (s < 86400) return Math.floor(s / 3600) + "h";
  return Math.floor(s / 86400) + "d";
}

function clock(iso) {
  return iso ? new Date(iso).toLocaleTimeString() : "";
}

function specOf(t) {
  return (t && t.spec) || {};
}

function pretty(raw) {
  if (raw === undefined || raw === null || raw === "") return "";
  if (typeof raw === "string") {
    try { return JSON.stringify(JSON.parse(raw), null, 2); } catch { return raw; }
  }
  return JSON.stringify(raw, null, 2);
}

// ---- counts, lag, throughput ----

function renderCounts(counts) {
  const nav = $("counts");
  nav.replaceChildren();
  let total = 0;
  for (const s of STATES) total += counts[s] || 0;
  nav.append(countChip("all", total, ui.filterStates.size === 0));
  for (const s of STATES) nav.append(countChip(s, counts[s] || 0, ui.filterStates.has(s)));
}

function countChip(state, n, pressed) {
  return el("span", {
    class: "count", role: "button", tabindex: "0", "data-state": state, "aria-pressed": String(pressed),
    onclick: () => toggleFilter(state),
  }, state === "all" ? null : el("span", { class: "dot", "data-state": state }), state + " ", el("b", { text: String(n) }));
}

function toggleFilter(state) {
  if (state === "all") ui.filterStates.clear();
  else if (ui.filterStates.has(state)) ui.filterStates.delete(state);
  else ui.filterStates.add(state);
  refresh();
}

function renderStats(st) {
  renderCounts(st.counts || {});
  let lag = 0;
  const parts = [];
  for (const q of st.queues || []) {
    lag += q.lag || 0;
    parts.push(`${q.queue}: ${q.pending} pending, ${q.ack_pending} in flight` + (q.error ? ` (${q.error})` : ""));
  }
  $("lag").querySelector("b").textContent = String(lag);
  $("lag").title = parts.join("\n") || "no queues";
  const perMin = (st.finished_per_s || 0) * 60;
  $("throughput").querySelector("b").textContent = st.window_s ? perMin.toFixed(perMin < 10 ? 1 : 0) : "–";
}

// ---- task list ----

async function refresh() {
  try {
    const q = new URLSearchParams({ limit: String(LIST_LIMIT) });
    if (ui.filterStates.size) q.set("state", [...ui.filterStates].join(","));
    searchParams(q); // search.js
    const [stats, list] = await Promise.all([api("GET", "/v1/stats"), api("GET", "/v1/tasks?" + q)]);
    renderStats(stats);
    refreshUsage();
    ui.tasks = list.tasks || [];
    renderList();
    searchShown(q.get("q") || "");
    if (ui.selected) {
      const t = ui.tasks.find((x) => x.id === ui.selected);
      if (t && (!ui.selectedTask || t.updated_at !== ui.selectedTask.updated_at)) loadTask(ui.selected, false);
    }
  } catch (err) {
    if (!(err instanceof APIError && (err.status === 401 || err.status === 403))) toast("refresh: " + err.message, true);
  }
}

// ---- usage and budgets ----

function usd(n) {
  return "$" + (n || 0).toFixed(n >= 100 ? 0 : n >= 1 ? 2 : 4);
}

function usageRow(name, r, cls) {
  const u = r.usage || {};
  return el("tr", { class: (cls || "") + (r.unpriced ? " unpriced" : ""), title: r.unpriced ? "no price for this model: its cost is unknown" : "" },
    el("td", { text: name }), el("td", { text: String(r.tasks || 0) }), el("td", { text: String(u.input_tokens || 0) }),
    el("td", { text: `${u.cache_read_tokens || 0} (${Math.round(100 * (r.cache_read_share || 0))}%)` }),
    el("td", { text: String(u.output_tokens || 0) }), el("td", { text: r.unpriced ? "unknown" : usd(r.cost_usd) }));
}

async function refreshUsage() {
  if (!$("usage-box").open) return;
  const by = $("usage-by").value;
  const q = new URLSearchParams();
  if (by) q.set("group_by", by);
  if (by === "label") q.set("label_key", $("usage-key").value.trim() || "team");
  try {
    const budgets$ = can(homeTenant(), "viewer") ? api("GET", "/v1/budgets") : Promise.resolve({ budgets: [] }); // who.js
    const [rep, b] = await Promise.all([api("GET", "/v1/usage?" + q), budgets$]);
    const body = $("usage-table").querySelector("tbody");
    body.replaceChildren(...(rep.rows || []).filter(() => by).map((r) => usageRow(r.key || "(none)", r)),
      usageRow("total", rep.total || {}, "total"));
    const unpriced = rep.unpriced || [];
    $("usage-total").textContent = "· " + usd((rep.total || {}).cost_usd) + (unpriced.length ? " + unpriced" : "");
    $("usage-unpriced").hidden = unpriced.length === 0;
    $("usage-unpriced-models").textContent = unpriced.map((r) => {
      const u = r.usage || {};
      return `${r.key} (${r.sessions} sessions, ${(u.input_tokens || 0) + (u.output_tokens || 0)} tokens)`;
    }).join(", ");
    const budgets = b.budgets || [];
    $("budget-table").querySelector("tbody").replaceChildren(...budgets.map((x) => el("tr", {},
      el("td", { text: x.tenant || "(fleet)" }), el("td", { text: x.label === "*" ? "* (every task)" : x.label }), el("td", { text: usd(x.limit_usd) }), el("td", { text: usd(x.spent_usd) }),
      el("td", { text: x.exhausted ? "spent" : "ok", "data-state": x.exhausted ? "spent" : "ok",
        title: x.exhausted ? `tasks are ${x.on_exhausted === "cancel" ? "cancelled" : "held"}` : "" }))));
    $("budget-empty").hidden = budgets.length > 0;
  } catch (err) {
    if (!(err instanceof APIError && (err.status === 401 || err.status === 403))) toast("usage: " + err.message, true);
  }
}

function scheduleRefresh() {
  if (ui.refreshTimer) return;
  ui.refreshTimer = setTimeout(() => { ui.refreshTimer = 0; refresh(); }, 300);
}

function matches(t, text) {
  if (!text) return true;
  const hay = [t.id, specOf(t).prompt, t.state, t.worker_id, ...Object.entries(t.labels || {}).map(([k, v]) => k + "=" + v)]
    .join(" ").toLowerCase();
  return hay.includes(text);
}

function renderList() {
  const text = $("filter-text").value.trim().toLowerCase();
  const rootsOnly = $("filter-roots").checked;
  const ul = $("task-list");
  ul.replaceChildren();
  let shown = 0;
  for (const t of ui.tasks) {
    if (rootsOnly && t.parent_id) continue;
    if (!matches(t, text)) continue;
    shown++;
    const labels = Object.entries(t.labels || {}).map(([k, v]) => k + "=" + v).join(" ");
    ul.append(el("li", {
      class: "task" + (t.parent_id ? " child" : ""), "data-id": t.id, "data-state": t.state,
      "aria-selected": String(t.id === ui.selected), onclick: () => select(t.id),
    },
    stateBadge(t.state),
    el("span", { class: "title", text: firstLine(specOf(t).prompt, 120) || t.id }),
    el("span", { class: "age", title: t.created_at, text: ago(t.created_at) }),
    el("span", { class: "sub mono", text: "…" + shortID(t.id) + (labels ? "  " + labels : "") + (t.worker_id ? "  @" + t.worker_id : "") +
      (t.state === "queued" && t.error === "budget" ? "  · held: budget spent" : "") })));
  }
  $("task-empty").hidden = shown > 0;
}

// ---- the selected task ----

function select(id) {
  if (id === ui.selected) return;
  location.hash = "task=" + id;
}

function fromHash() {
  const m = /task=([0-9a-f-]{36})/.exec(location.hash);
  const id = m ? m[1] : "";
  if (id === ui.selected) return;
  ui.selected = id;
  ui.selectedTask = null;
  closeStream();
  $("detail").hidden = !id;
  $("no-detail").hidden = !!id;
  for (const li of document.querySelectorAll("#task-list .task")) li.setAttribute("aria-selected", String(li.dataset.id === id));
  if (!id) return;
  $("events").replaceChildren();
  $("turns").replaceChildren();
  $("diff").textContent = "";
  ui.calls.clear();
  ui.assistant = null;
  loadTask(id, true);
  openStream(id);
  showTab(ui.activeTab);
}

async function loadTask(id, withTree) {
  try {
    const t = await api("GET", "/v1/tasks/" + id);
    if (id !== ui.selected) return;
    const changed = !ui.selectedTask || ui.selectedTask.state !== t.state;
    ui.selectedTask = t;
    renderDetail(t);
    if (withTree || changed) loadTree(id);
    if (changed && ui.activeTab !== "events") showTab(ui.activeTab);
  } catch (err) {
    toast("task " + shortID(id) + ": " + err.message, true);
  }
}

function renderDetail(t) {
  const spec = specOf(t);
  const badge = $("detail-state");
  badge.textContent = t.state;
  badge.dataset.state = t.state;
  $("detail").dataset.state = t.state;
  $("detail-id").textContent = t.id;
  $("detail-title").textContent = spec.prompt || "";
  const meta = $("detail-meta");
  meta.replaceChildren();
  const add = (k, v) => { if (v !== undefined && v !== null && v !== "") meta.append(el("dt", { text: k }), el("dd", { text: String(v) })); };
  add("profile", [spec.profile, spec.model].filter(Boolean).join(" / "));
  add("queue", t.queue + (t.priority ? " (priority " + t.priority + ")" : ""));
  add("depth", t.depth || undefined);
  add("worker", t.worker_id);
  add("attempts", t.attempts || undefined);
  add("labels", Object.entries(t.labels || {}).map(([k, v]) => k + "=" + v).join(", "));
  add("repo", spec.environment && (spec.environment.repo || spec.environment.host || spec.environment.working_dir));
  add("sandbox", (t.result && t.result.sandbox) || (spec.sandbox && spec.sandbox.network ? "asks network " + spec.sandbox.network : undefined));
  add("created", t.created_at && new Date(t.created_at).toLocaleString());
  add("finished", t.finished_at && new Date(t.finished_at).toLocaleString());
  const res = $("detail-result");
  const result = t.result || null;
  if (result || t.error) {
    res.hidden = false;
    res.classList.toggle("bad", t.state !== "succeeded");
    const parts = [];
    if (t.error) parts.push("error: " + t.error);
    if (result && result.final_text) parts.push(result.final_text);
    if (result && result.usage) parts.push(`turns ${result.turns_used || 0} · tokens in ${result.usage.input_tokens || 0} / out ${result.usage.output_tokens || 0}` +
      (result.cost_usd ? ` · $${result.cost_usd.toFixed(4)}` : ""));
    res.textContent = parts.join("\n\n");
  } else {
    res.hidden = true;
  }
  renderApprovals(t);
  showOutcome(t.id, result);
  if (typeof showRounds === "function") showRounds(t); // rounds.js
  const terminal = TERMINAL.has(t.state);
  $("cancel-button").disabled = terminal;
  $("abort-button").disabled = t.state !== "running";
  $("steer-button").disabled = t.state !== "running";
  $("followup-button").disabled = t.state === "cancelled"; // an ended task reopens as a new round
  applyTaskRole(t); // who.js
}

// renderApprovals shows the calls a waiting task waits to have approved,
// each with its arguments, what asked, and Approve / Deny buttons.
function renderApprovals(t) {
  const box = $("detail-approvals");
  const pending = (t.state === "waiting" && t.waiting_for && t.waiting_for.approvals) || [];
  box.hidden = pending.length === 0;
  box.replaceChildren(...pending.map((p) => {
    const remember = el("input", { type: "checkbox" });
    return el("div", { class: "approval", "data-call": p.call_id },
      el("div", { class: "what", text: `${p.tool} waits for approval · ${p.rule}` }),
      el("pre", { class: "args", text: p.summary || pretty(p.arguments) }),
      el("div", { class: "muted", text: (p.reason || "") + (p.expires_at ? ` · denied if unanswered by ${new Date(p.expires_at).toLocaleString()}` : "") }),
      can(taskTenant(t), "approver") ? el("div", { class: "buttons" },
        el("button", { type: "button", class: "approve", onclick: () => decide(t.id, p.call_id, "approve", remember.checked) }, "Approve"),
        el("button", { type: "button", class: "danger deny", onclick: () => decide(t.id, p.call_id, "deny", remember.checked) }, "Deny"),
        el("label", { class: "check", title: "Apply this answer to the task's later calls of the same tool that the same rule asks about" },
          remember, " for the rest of the task")) :
        el("div", { class: "muted not-yours", text: `an approver of ${taskTenant(t)} answers this` }));
  }));
}

async function decide(id, callID, decision, remember) {
  const reason = decision === "deny" ? (window.prompt("Reason told to the model (optional)") || "") : "";
  try {
    await api("POST", `/v1/tasks/${id}/approvals/${encodeURIComponent(callID)}`, { decision, reason, remember });
    toast(`${decision === "approve" ? "approved" : "denied"}: the task resumes`);
    await refresh();
    loadTask(id, false);
  } catch (err) {
    toast(decision + ": " + err.message, true);
  }
}

async function loadTree(id) {
  try {
    const tree = await api("GET", "/v1/tasks/" + id + "/tree");
    if (id !== ui.selected) return;
    const byParent = new Map();
    for (const t of tree.tasks) {
      const p = t.parent_id || "";
      if (!byParent.has(p)) byParent.set(p, []);
      byParent.get(p).push(t);
    }
    const build = (parent) => {
      const kids = byParent.get(parent) || [];
      if (!kids.length) return null;
      return el("ul", {}, ...kids.map((t) => el("li", { "data-id": t.id },
        el("a", { "aria-current": String(t.id === id), onclick: () => select(t.id), title: t.id },
          el("span", { class: "dot", "data-state": t.state }), firstLine(specOf(t).prompt, 90) || shortID(t.id),
          el("span", { class: "muted", text: " " + t.state })),
        build(t.id))));
    };
    const root = build("");
    const ul = $("tree");
    ul.replaceChildren(...(root ? root.children : []));
  } catch (err) {
    toast("tree: " + err.message, true);
  }
}

// ---- live events of the selected task ----

function closeStream() {
  ui.streamGen++;
  if (ui.stream) ui.stream.close();
  ui.stream = null;
}

// openStream follows the selected task's events from the start, or after
// the stream sequence after (a reopened stream continues where it was).
async function openStream(id, after = 0, failures = 0) {
  const gen = ui.streamGen;
  let url;
  try {
    url = await streamURL("/v1/tasks/" + id + "/events" + (after ? "?from=" + (after + 1) : ""));
  } catch (err) {
    if (gen === ui.streamGen) append(el("div", { class: "ev bad", "data-kind": "stream-error", text: "event stream: " + err.message }));
    return;
  }
  if (gen !== ui.streamGen) return; // another task was selected meanwhile
  const es = new EventSource(url);
  ui.stream = es;
  let last = after, got = false;
  const seen = (m) => { got = true; last = Number(m.lastEventId) || last; };
  es.onmessage = (m) => { seen(m); onEvent(id, "message", m); };
  for (const kind of EVENT_KINDS) es.addEventListener(kind, (m) => { seen(m); onEvent(id, kind, m); });
  es.addEventListener("end", (m) => {
    let d = {};
    try { d = JSON.parse(m.data); } catch { /* keep {} */ }
    append(el("div", { class: "ev marker", "data-kind": "end", text: "stream ended: task " + (d.state || "finished") + (d.error ? " (" + d.error + ")" : "") }));
    es.close();
    if (ui.stream === es) ui.stream = null;
    loadTask(id, true);
  });
  es.onerror = () => {
    if (ui.stream !== es) return;
    // With a ticket, the browser's own reconnection presents a spent one
    // and is refused: reopen with a new ticket where the stream was.
    if (ui.token && failures + (got ? 0 : 1) <= STREAM_RETRIES) {
      es.close();
      ui.stream = null;
      setTimeout(() => { if (gen === ui.streamGen) openStream(id, last, got ? 0 : failures + 1); }, 1000);
      return;
    }
    if (es.readyState === EventSource.CLOSED) {
      // A 401/403 or a vanished task: the browser gives up; say so.
      append(el("div", { class: "ev bad", "data-kind": "stream-error", text: "event stream closed; reload to retry" }));
      api("GET", "/v1/tasks/" + id).catch(() => {});
    }
  };
}

const EVENT_KINDS = ["SESSION_START", "SESSION_END", "USER_INPUT", "ASSISTANT_TEXT_START", "ASSISTANT_TEXT_DELTA",
  "ASSISTANT_TEXT_END", "TOOL_CALL_START", "TOOL_CALL_OUTPUT_DELTA", "TOOL_CALL_END", "STEERING_INJECTED", "TURN_LIMIT",
  "LOOP_DETECTION", "ERROR", "WARNING", "INPUT_DONE", "PARKED", "APPROVAL_REQUESTED", "PERMISSION_DENIED",
  "CHECK_END", "DELIVERY", "COMPACTION_END"];

function append(node) {
  const box = $("events");
  box.append(node);
  if ($("follow").checked && ui.activeTab === "events") node.scrollIntoView({ block: "end" });
}

function block(cls, kind, who, time, ...body) {
  return el("div", { class: "ev " + cls, "data-kind": kind },
    el("div", { class: "who" }, el("span", { text: who }), el("span", { class: "t", text: clock(time) })), ...body);
}

function onEvent(taskID, kind, m) {
  if (taskID !== ui.selected) return;
  let env;
  try { env = JSON.parse(m.data); } catch { return; }
  const d = env.data || {};
  kind = env.kind || kind;
  timelineEvent(taskID, { ...env, kind }); // timeline.js
  switch (kind) {
    case "USER_INPUT":
      append(block("user", kind, "user", env.time, el("div", { class: "text", text: d.text || "" })));
      break;
    case "ASSISTANT_TEXT_START":
      ui.assistant = block("assistant", kind, "assistant", env.time, el("div", { class: "text" }));
      append(ui.assistant);
      break;
    case "ASSISTANT_TEXT_DELTA":
      if (!ui.assistant) onEvent(taskID, "ASSISTANT_TEXT_START", { data: JSON.stringify({ kind: "ASSISTANT_TEXT_START", time: env.time }) });
      ui.assistant.querySelector(".text").textContent += d.text || "";
      break;
    case "ASSISTANT_TEXT_END": {
      if (!ui.assistant) onEvent(taskID, "ASSISTANT_TEXT_START", { data: JSON.stringify({ kind: "ASSISTANT_TEXT_START", time: env.time }) });
      const a = ui.assistant;
      a.dataset.kind = kind;
      if (d.text !== undefined) a.querySelector(".text").textContent = d.text;
      if (d.reasoning) a.insertBefore(el("div", { class: "reasoning", text: d.reasoning }), a.querySelector(".text"));
      if (!d.text && !d.reasoning && !a.querySelector(".text").textContent) a.remove();
      ui.assistant = null;
      break;
    }
    case "TOOL_CALL_START":
      toolStart(env, d);
      break;
    case "TOOL_CALL_OUTPUT_DELTA": {
      const c = ui.calls.get(d.call_id) || toolStart(env, d);
      c.out.textContent += d.output || "";
      c.summary.textContent = "output (streaming…)";
      break;
    }
    case "TOOL_CALL_END":
      toolEnd(env, d);
      break;
    case "STEERING_INJECTED":
      append(block("steer", kind, "steering", env.time, el("div", { class: "text", text: d.text || "" })));
      break;
    case "TURN_LIMIT":
      append(block("notice", kind, "limit reached", env.time, el("div", { class: "text", text: `turn limit: ${d.turns || "?"} turns` + (d.round ? `, round ${d.round}` : "") })));
      break;
    case "LOOP_DETECTION":
      append(block("notice", kind, "loop detected", env.time, el("div", { class: "text", text: d.text || "the session repeats itself; a warning was injected" })));
      break;
    case "WARNING":
      append(block("notice", kind, "warning", env.time, el("div", { class: "text", text: (d.text || "") + (d.context_percent ? ` (context ${d.context_percent}%)` : "") })));
      break;
    case "ERROR":
      append(block("bad", kind, "error" + (d.error_kind ? " · " + d.error_kind : ""), env.time, el("div", { class: "text", text: d.error || d.text || "" })));
      break;
    case "INPUT_DONE":
      append(el("div", { class: "ev marker", "data-kind": kind, text: `input done · ${d.stop || d.state || ""}` + (d.turns ? ` · ${d.turns} turns` : "") }));
      break;
    case "COMPACTION_END": {
      const c = d.context || {};
      const how = (c.strategies || []).join(" + ") || "nothing to compact";
      append(el("div", { class: "ev marker", "data-kind": kind,
        text: `context compacted (${c.reason || "?"}) · ${how} · ~${c.tokens_before || "?"} → ~${c.tokens_after || "?"} tokens` + (c.error ? ` · ${c.error}` : "") }));
      break;
    }
    case "PARKED":
      for (const c of ui.calls.values()) {
        if (c.box.dataset.kind === "TOOL_CALL_START") c.summary.textContent = "output (parked: the call runs again on resume)";
      }
      append(el("div", { class: "ev marker", "data-kind": kind, text: "parked: waiting for subagents or an approval (no slot held)" }));
      scheduleRefresh();
      break;
    case "APPROVAL_REQUESTED": {
      const p = d.permission || {};
      append(block("bad", kind, "approval requested", env.time,
        el("div", { class: "text", text: `${d.tool_name} · ${p.rule || ""}\n${p.summary || ""}` })));
      scheduleRefresh();
      break;
    }
    case "PERMISSION_DENIED": {
      const p = d.permission || {};
      append(block("bad", kind, "permission denied", env.time,
        el("div", { class: "text", text: `${d.tool_name} · ${p.rule || ""}: ${p.reason || ""}\n${p.summary || ""}` })));
      break;
    }
    case "RATE_LIMITED":
      append(block("notice", kind, "rate limited", env.time, el("div", { class: "text", text: d.text || "" })));
      break;
    case "MODEL_FALLBACK":
      append(block("notice", kind, "fallback model", env.time, el("div", { class: "text", text: d.text || "" })));
      break;
    case "BUDGET_HELD":
      append(block("notice", kind, "budget spent", env.time, el("div", { class: "text",
        text: `${d.tenant ? d.tenant + " " : ""}${d.label}: $${(d.spent_usd || 0).toFixed(2)} of $${(d.limit_usd || 0).toFixed(2)} spent; held until the budget is raised` })));
      scheduleRefresh();
      break;
    case "SESSION_START":
      append(el("div", { class: "ev marker", "data-kind": kind, text: "session started " + clock(env.time) }));
      break;
    case "SESSION_END": {
      const r = d.result || {};
      append(block(d.state === "succeeded" ? "end" : "bad", kind, "task " + (d.state || "ended"), env.time,
        el("div", { class: "text", text: [d.reason, r.final_text].filter(Boolean).join("\n") })));
      scheduleRefresh();
      break;
    }
    case "CHECK_END":
      append(block(d.passed ? "marker" : "bad", kind, "check", env.time, el("div", { class: "text", text: checkText(d) })));
      break;
    case "DELIVERY":
      append(block(d.error ? "bad" : "marker", kind, "delivery", env.time, el("div", { class: "text" }, ...deliveryItems(d))));
      break;
    default:
      append(block("marker", kind, kind.toLowerCase(), env.time, el("pre", { text: pretty(d) })));
  }
}

// ---- checks and delivery (fleet/checks, fleet/delivery) ----

function checkText(r) {
  const status = r.timed_out ? "timed out" : r.passed ? "passed" : "failed (exit " + r.exit_code + ")";
  const when = r.phase === "after" && r.round > 0 ? "after repair " + r.round : r.phase;
  return `${r.name} ${when}: ${status} in ${r.duration_ms} ms · ${r.command}`;
}

function checkItem(taskID, r) {
  const li = el("li", { class: r.passed ? "pass" : "fail", text: checkText(r) + " " });
  if (r.output) li.append(el("a", { href: "/v1/tasks/" + taskID + "/artifacts/check?name=" + encodeURIComponent(r.output), target: "_blank", text: "output" }));
  return li;
}

function deliveryItems(d) {
  const items = [el("span", { text: "branch " + d.branch + (d.commit ? " at " + d.commit.slice(0, 12) : "") + (d.pushed ? " pushed" : "") })];
  if (d.request_url) items.push(" · ", el("a", { href: d.request_url, target: "_blank", rel: "noopener", text: "pull request #" + d.request_number }));
  if (d.skipped) items.push(el("span", { text: " · not delivered: " + d.skipped }));
  if (d.error) items.push(el("span", { class: "fail", text: " · failed: " + d.error }));
  return items;
}

// showOutcome lists a result's check runs (with links to their outputs)
// and its delivery (with a link to the pull request).
function showOutcome(taskID, result) {
  const box = $("detail-outcome");
  box.replaceChildren();
  const c = result && result.checks;
  const d = result && result.delivery;
  box.hidden = !c && !d;
  if (c) {
    box.append(el("div", { text: "checks: " + (c.verdict || "not finished") + " · " + c.repair_rounds + " repair round(s)" }),
      el("ul", {}, ...(c.runs || []).map((r) => checkItem(taskID, r))));
  }
  if (d) box.append(el("div", {}, "delivery: ", ...deliveryItems(d)));
}

function toolStart(env, d) {
  const out = el("pre", { class: "out" });
  const summary = el("summary", { text: "output (running…)" });
  const details = el("details", {}, summary, out);
  const box = block("tool", "TOOL_CALL_START", "tool · " + (d.tool_name || "?"), env.time,
    el("pre", { class: "args", text: pretty(d.arguments) }), details);
  box.dataset.callId = d.call_id || "";
  append(box);
  const c = { out, summary, box, details };
  if (d.call_id) ui.calls.set(d.call_id, c);
  return c;
}

function toolEnd(env, d) {
  const c = ui.calls.get(d.call_id) || toolStart(env, d);
  c.box.dataset.kind = "TOOL_CALL_END";
  c.box.classList.toggle("error", !!d.is_error);
  if (d.truncated && d.ref) {
    // A large output: the event carries a preview, the store the full text.
    c.out.textContent = d.preview || "";
    c.summary.textContent = `output (${d.size} bytes, preview)`;
    c.details.append(el("button", { type: "button", text: "load the full output", onclick: async (e) => {
      e.target.disabled = true;
      try {
        const full = await api("GET", `/v1/sessions/${env.session_id}/tool_outputs/${encodeURIComponent(d.call_id)}`);
        c.out.textContent = full.output;
        c.summary.textContent = `output (${full.size} bytes)`;
        e.target.remove();
      } catch (err) { toast(err.message, true); e.target.disabled = false; }
    } }));
    return;
  }
  if (d.output !== undefined) c.out.textContent = d.output;
  const lines = c.out.textContent ? c.out.textContent.split("\n").length : 0;
  c.summary.textContent = (d.is_error ? "error output" : "output") + ` (${lines} line${lines === 1 ? "" : "s"})`;
  if (d.is_error) c.details.open = true;
}

// ---- stored turns and the diff ----

function showTab(name) {
  ui.activeTab = name;
  for (const b of document.querySelectorAll(".tab")) b.setAttribute("aria-selected", String(b.dataset.tab === name));
  for (const p of document.querySelectorAll("[data-tab-panel]")) p.hidden = p.dataset.tabPanel !== name;
  if (name === "turns") loadTurns(ui.selected);
  if (name === "diff") loadDiff(ui.selected);
}

async function loadTurns(id) {
  const box = $("turns");
  if (!id) return;
  try {
    const { sessions } = await api("GET", "/v1/tasks/" + id + "/sessions");
    const nodes = [];
    if (!sessions.length) nodes.push(el("p", { class: "muted", text: "No session yet: the task has not started." }));
    for (const s of sessions) {
      nodes.push(el("div", { class: "ev marker", text: `session …${shortID(s.id)} · ${s.profile}${s.model ? " / " + s.model : ""} · ${s.state} · tokens in ${s.usage.input_tokens || 0} / out ${s.usage.output_tokens || 0}` }));
      let after = 0;
      for (;;) {
        const page = await api("GET", `/v1/sessions/${s.id}/turns?after=${after}`);
        for (const turn of page.turns) nodes.push(renderTurn(turn));
        if (!page.next_after) break;
        after = page.next_after;
      }
    }
    if (id === ui.selected) box.replaceChildren(...nodes);
  } catch (err) {
    box.replaceChildren(el("p", { class: "muted", text: "turns: " + err.message }));
  }
}

function renderTurn(turn) {
  const p = turn.payload || {};
  const kind = p.kind || turn.kind;
  switch (kind) {
    case "user":
      return block("user", "turn-user", "user · turn " + turn.seq, p.time, el("div", { class: "text", text: p.text || "" }));
    case "steering":
      return block("steer", "turn-steering", "steering · turn " + turn.seq, p.time, el("div", { class: "text", text: p.text || "" }));
    case "system":
      return block("notice", "turn-system", "system" + (p.source ? " · " + p.source : ""), p.time, el("div", { class: "text", text: p.text || "" }));
    case "assistant": {
      const body = [];
      if (p.reasoning) body.push(el("div", { class: "reasoning", text: p.reasoning }));
      if (p.text) body.push(el("div", { class: "text", text: p.text }));
      for (const c of p.tool_calls || []) body.push(el("div", { class: "mono", text: "→ " + c.name }), el("pre", { text: pretty(c.arguments) }));
      return block("assistant", "turn-assistant", "assistant · turn " + turn.seq, p.time, ...body);
    }
    case "tool_results":
      return block("tool", "turn-tool_results", "tool results · turn " + turn.seq, p.time,
        ...(p.results || []).map((r) => el("details", {}, el("summary", { text: (r.is_error ? "error · " : "") + (r.name || r.tool_call_id) }), el("pre", { text: r.content || "" }))));
    default:
      return block("marker", "turn-" + kind, kind + " · turn " + turn.seq, p.time, el("pre", { text: pretty(p) }));
  }
}

async function loadDiff(id) {
  const pre = $("diff");
  if (!id) return;
  try {
    const { artifacts } = await api("GET", "/v1/tasks/" + id + "/artifacts");
    if (!artifacts.some((a) => a.kind === "diff")) {
      pre.textContent = "No diff: the task has not finished, changed nothing, or its workspace is not a git checkout.";
      return;
    }
    const headers = ui.token ? { Authorization: "Bearer " + ui.token } : {};
    const resp = await fetch("/v1/tasks/" + id + "/artifacts/diff", { headers });
    pre.textContent = await resp.text();
  } catch (err) {
    pre.textContent = "diff: " + err.message;
  }
}

// ---- actions ----

async function submitTask(e) {
  e.preventDefault();
  const spec = { prompt: $("submit-prompt").value.trim() };
  if (!spec.prompt) return;
  const profile = $("submit-profile").value;
  if (profile) spec.profile = profile;
  const repo = $("submit-repo").value.trim();
  if (repo) spec.environment = { repo };
  const labels = {};
  for (const part of $("submit-labels").value.split(",")) {
    const [k, ...v] = part.split("=");
    if (k.trim()) labels[k.trim()] = v.join("=").trim();
  }
  if (Object.keys(labels).length) spec.labels = labels;
  $("submit-button").disabled = true;
  try {
    const res = await api("POST", "/v1/tasks", spec);
    toast("submitted …" + shortID(res.task.id) + (res.existing ? " (existing task: same idempotency key)" : ""));
    $("submit-prompt").value = "";
    await refresh();
    select(res.task.id);
  } catch (err) {
    toast("submit: " + err.message, true);
  } finally {
    $("submit-button").disabled = false;
  }
}

async function control(e) {
  e.preventDefault();
  const op = e.submitter ? e.submitter.dataset.op : "steer";
  const message = $("control-message").value.trim();
  if (!message) { toast("write the message first", true); return; }
  try {
    const res = await api("POST", `/v1/tasks/${ui.selected}/${op}`, { message });
    $("control-message").value = "";
    toast(op === "steer" ? "steering sent: the session reads it before its next model call"
      : res && res.reopened ? "the task is reopened: round " + res.round : "follow-up queued");
  } catch (err) {
    toast(op + ": " + err.message, true);
  }
}

async function cancel(reason) {
  const id = ui.selected;
  try {
    const res = await api("POST", `/v1/tasks/${id}/cancel`, { reason });
    toast(`cancelled ${res.cancelled.length} task(s), aborted ${res.aborted} running session(s)`);
    await refresh();
    loadTask(id, true);
  } catch (err) {
    toast("cancel: " + err.message, true);
  }
}

// ---- fleet-wide stream and start-up ----

const REFRESH_KINDS = new Set(["SESSION_START", "SESSION_END", "INPUT_DONE", "PARKED", "ERROR", "TOOL_CALL_END", "APPROVAL_REQUESTED"]);

async function openFleetStream(failures = 0) {
  if (ui.fleet) ui.fleet.close();
  ui.fleet = null;
  const live = (v) => { $("conn").dataset.live = String(v); $("conn").textContent = v ? "live" : "reconnecting"; };
  let url;
  try {
    url = await streamURL("/v1/events?from=new");
  } catch {
    live(false);
    if (failures < STREAM_RETRIES) setTimeout(() => openFleetStream(failures + 1), 2000);
    return;
  }
  if (ui.fleet) return; // restarted meanwhile
  const es = new EventSource(url);
  ui.fleet = es;
  es.onopen = () => { live(true); failures = 0; };
  es.onerror = () => {
    live(false);
    if (ui.token && ui.fleet === es) { // the browser would retry with a spent ticket
      es.close();
      ui.fleet = null;
      if (failures < STREAM_RETRIES) setTimeout(() => { if (!ui.fleet) { scheduleRefresh(); openFleetStream(failures + 1); } }, 2000);
    }
  };
  for (const kind of REFRESH_KINDS) es.addEventListener(kind, scheduleRefresh);
}

function restart() {
  loadWho(); // who.js
  openFleetStream();
  refresh();
  ui.selected = ""; // fromHash reopens the selected task's stream with the token
  fromHash();
}

function start() {
  initToken();
  initWho(); // who.js
  $("submit-form").addEventListener("submit", submitTask);
  $("control-form").addEventListener("submit", control);
  $("cancel-button").addEventListener("click", () => cancel("cancelled from the dashboard"));
  $("abort-button").addEventListener("click", () => cancel("aborted from the dashboard"));
  $("filter-text").addEventListener("input", renderList);
  $("usage-box").addEventListener("toggle", refreshUsage);
  $("usage-by").addEventListener("change", refreshUsage);
  $("usage-key").addEventListener("change", refreshUsage);
  $("filter-roots").addEventListener("change", renderList);
  for (const b of document.querySelectorAll(".tab")) b.addEventListener("click", () => showTab(b.dataset.tab));
  window.addEventListener("hashchange", fromHash);
  openFleetStream();
  refresh();
  fromHash();
  setInterval(refresh, POLL_MS);
}

document.addEventListener("DOMContentLoaded", start);
