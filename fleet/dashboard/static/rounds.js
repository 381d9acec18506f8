// A task's rounds and its pull request (docs/api.md "Rounds"):
//   GET /v1/tasks/{id}/rounds   the first run and each follow-up, with
//                               what triggered it, and the pull request
// Shown under the task's outcome whenever the detail is drawn. It uses
// app.js's api, el and $.
"use strict";

const roundsShown = { id: "", key: "" };

// roundTrigger says in words what started a round.
function roundTrigger(r) {
  switch (r.trigger) {
    case "schedule": return "schedule " + (r.detail || "");
    case "forge": {
      const cause = r.cause === "ci" ? "CI repair" : r.cause === "label" ? "issue labelled" : r.cause || "event";
      return "forge: " + cause + (r.detail ? " (" + r.detail + ")" : "");
    }
    default: return (r.round === 1 ? "submitted" : "follow-up") + " through the API" + (r.by ? " by " + r.by : "");
  }
}

async function showRounds(t) {
  const box = $("detail-rounds");
  const key = t.id + "|" + t.state + "|" + (t.finished_at || "");
  if (roundsShown.id === t.id && roundsShown.key === key) return;
  roundsShown.id = t.id;
  roundsShown.key = key;
  let list;
  try {
    list = await api("GET", "/v1/tasks/" + t.id + "/rounds");
  } catch (err) {
    box.hidden = true;
    return;
  }
  if (ui.selected !== t.id) return;
  const items = (list.rounds || []).map((r) => el("li", { "data-round": r.round, "data-trigger": r.trigger, "data-cause": r.cause || "" },
    el("b", { text: "round " + r.round }), " · " + roundTrigger(r) + " · " + new Date(r.at).toLocaleString()));
  const parts = [el("div", { text: (list.rounds || []).length + " round(s)" }), el("ol", { id: "rounds-list" }, ...items)];
  const pr = list.pull_request;
  if (pr) {
    const label = "pull request" + (pr.number ? " #" + pr.number : "");
    parts.push(el("div", { id: "rounds-pr", "data-state": pr.state }, pr.url ? el("a", { href: pr.url, target: "_blank", rel: "noopener", text: label }) : label,
      " · ", el("span", { class: "state state-" + pr.state, text: pr.state })));
  }
  box.replaceChildren(...parts);
  box.hidden = false;
}
