// Bulk actions by filter (docs/api.md "Bulk actions by filter"):
//   POST /v1/tasks/bulk with dry_run  the count and a sample, shown first
//   POST /v1/tasks/bulk               the action, once confirmed with the count
//   GET  /v1/bulk/{id}                its progress, polled until it ends
// pause and resume may be confirmed with no task queued now: a pause
// holds the filter's later tasks too.
// It uses app.js's api, el, $, toast, stateBadge and shortID.
"use strict";

const bulk = { preview: null, request: null };

function bulkRequest() {
  const filter = {};
  const labels = {};
  for (const part of $("bulk-labels").value.split(",")) {
    const [k, ...v] = part.split("=");
    if (k.trim()) labels[k.trim()] = v.join("=").trim();
  }
  if (Object.keys(labels).length) filter.labels = labels;
  const states = $("bulk-states").value.split(",").map((s) => s.trim()).filter(Boolean);
  if (states.length) filter.states = states;
  if ($("bulk-error").value.trim()) filter.error = $("bulk-error").value.trim();
  if ($("bulk-tenant").value.trim()) filter.tenant = $("bulk-tenant").value.trim();
  const req = { action: $("bulk-action").value, filter };
  if (req.action === "set_priority") req.priority = Number($("bulk-priority").value);
  return req;
}

// bulkStanding: pause and resume act on tasks submitted later too, so
// they may be confirmed with nothing queued now.
function bulkStanding(action) {
  return action === "pause" || action === "resume";
}

// bulkOutcome is a finished job in words.
function bulkOutcome(job) {
  switch (job.action) {
    case "retry": return `${job.created} new attempts, ${job.existing} already retried`;
    case "cancel": return `${job.cancelled} cancelled`;
    case "pause": return `${job.paused || 0} held, later tasks of the filter too`;
    case "resume": return `${job.resumed || 0} start again`;
    case "set_priority": return `${job.moved || 0} moved to another priority level`;
  }
  return "";
}

function bulkReset() {
  bulk.preview = null;
  $("bulk-confirm").hidden = true;
  $("bulk-sample").replaceChildren();
  $("bulk-status").textContent = "";
}

async function bulkPreview(e) {
  e.preventDefault();
  bulkReset();
  const req = bulkRequest();
  try {
    const p = await api("POST", "/v1/tasks/bulk", { ...req, dry_run: true });
    bulk.preview = p;
    bulk.request = req;
    $("bulk-status").textContent = `${p.matched} task${p.matched === 1 ? "" : "s"} match`;
    $("bulk-status").dataset.matched = String(p.matched);
    $("bulk-sample").replaceChildren(...p.sample.map((t) =>
      el("li", {}, stateBadge(t.state), " ", el("code", {}, shortID(t.id)), " ", t.error || "")));
    const button = $("bulk-confirm");
    const n = `${p.matched} task${p.matched === 1 ? "" : "s"}`;
    button.textContent = req.action === "pause" ? `pause ${n} and later ones`
      : req.action === "set_priority" ? `set priority ${req.priority} on ${n}` : `${req.action} ${n}`;
    button.hidden = p.matched === 0 && !bulkStanding(req.action);
  } catch (err) {
    $("bulk-status").textContent = err.message;
    toast("bulk preview: " + err.message, true);
  }
}

async function bulkRun() {
  if (!bulk.preview) return;
  $("bulk-confirm").hidden = true;
  try {
    let job = await api("POST", "/v1/tasks/bulk", bulk.request);
    while (job.state === "running") {
      $("bulk-status").textContent = `${job.done} of ${job.matched} done`;
      await new Promise((r) => setTimeout(r, 500));
      job = await api("GET", "/v1/bulk/" + job.id);
    }
    const what = bulkOutcome(job);
    const stopped = job.error ? ` (${job.error})` : "";
    $("bulk-status").textContent = `${job.action} ${job.state}: ${what}, ${job.skipped} skipped, ${job.failed} failed${stopped}`;
    $("bulk-status").dataset.state = job.state;
    if (typeof scheduleRefresh === "function") scheduleRefresh();
  } catch (err) {
    $("bulk-status").textContent = err.message;
    toast("bulk action: " + err.message, true);
  }
  bulk.preview = null;
}

document.addEventListener("DOMContentLoaded", () => {
  $("bulk-form").addEventListener("submit", bulkPreview);
  $("bulk-confirm").addEventListener("click", bulkRun);
  for (const id of ["bulk-action", "bulk-labels", "bulk-states", "bulk-error", "bulk-tenant", "bulk-priority"]) $(id).addEventListener("input", bulkReset);
  $("bulk-action").addEventListener("input", () => { $("bulk-priority-label").hidden = $("bulk-action").value !== "set_priority"; });
});
