// search.js: the task list's text search. A query in the search box
// (Enter, or the Search button) is sent as GET /v1/tasks?q= with the
// state filter, so the server searches every task's prompt, final answer
// and failure reason in the caller's tenants, not only the tasks loaded;
// the list then shows the matches, newest first, until the box is
// cleared. The box beside it still filters the loaded list as you type.
"use strict";

const taskSearch = { q: "" };

// searchParams adds the search to the list request's parameters q.
function searchParams(q) {
  if (taskSearch.q) q.set("q", taskSearch.q);
}

// searchShown marks the list with the search it shows (for tests and
// styles) once a list request made with query q has answered.
function searchShown(q) {
  $("task-list").dataset.query = q;
}

function setSearch(q) {
  taskSearch.q = q;
  const status = $("search-status");
  status.hidden = !q;
  status.textContent = q ? `matching “${q}” in prompts, answers and failures` : "";
  refresh();
}

document.addEventListener("DOMContentLoaded", () => {
  $("search-form").addEventListener("submit", (e) => {
    e.preventDefault();
    setSearch($("search-q").value.trim());
  });
  // The clear button of a type=search box, or an emptied box.
  $("search-q").addEventListener("search", () => {
    if (!$("search-q").value.trim() && taskSearch.q) setSearch("");
  });
});
