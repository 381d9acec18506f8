// Cron schedules (docs/api.md "Schedules"):
//   GET    /v1/schedules               listed when the box opens and after each action
//   POST   /v1/schedules/{id}/pause    pause, /resume resume from its next tick
//   DELETE /v1/schedules/{id}          delete (the tasks it submitted stay)
// It uses app.js's api, el, $ and toast.
"use strict";

async function loadSchedules() {
  let list;
  try {
    list = await api("GET", "/v1/schedules");
  } catch (err) {
    toast("schedules: " + err.message, true);
    return;
  }
  const rows = (list.schedules || []).map((s) => {
    const act = (label, method, path, done) => el("button", { type: "button", "data-act": label, onclick: async () => {
      try {
        await api(method, path, method === "POST" ? {} : undefined);
        toast(done);
      } catch (err) {
        toast(label + ": " + err.message, true);
      }
      loadSchedules();
    } }, label);
    const base = "/v1/schedules/" + s.id;
    return el("tr", { "data-id": s.id, "data-paused": s.paused ? "true" : "false" },
      el("td", { text: s.name || s.id.slice(0, 8) }),
      el("td", {}, el("code", { text: s.cron })),
      el("td", { text: s.paused ? "paused" : new Date(s.next_fire_at).toLocaleString() }),
      el("td", { text: s.last_fire_at ? new Date(s.last_fire_at).toLocaleString() : "never" }),
      el("td", {}, s.paused ? act("resume", "POST", base + "/resume", "schedule resumed") : act("pause", "POST", base + "/pause", "schedule paused"),
        " ", act("delete", "DELETE", base, "schedule deleted")));
  });
  $("schedule-rows").replaceChildren(...rows);
  $("schedule-empty").hidden = rows.length > 0;
}

document.addEventListener("DOMContentLoaded", () => {
  $("schedules-box").addEventListener("toggle", () => { if ($("schedules-box").open) loadSchedules(); });
});
