// who.js: who the page acts as, and what its role lets it do. Read from
// GET /v1/whoami (the principal of the token or single sign-on session);
// the page shows the name, tenant and role, and hides the controls the
// role may not use in a task's tenant: submit, steer, follow up, cancel
// and abort below submitter, approve and deny below approver. Budgets
// show to a viewer: the API answers its tenants' budgets. The API enforces the roles either way; hiding only spares
// the user buttons that would be refused. A dispatcher without
// /v1/whoami shows everything, as before. With single sign-on (GET
// /auth/ answers) a 401 offers "Log in with single sign-on" and a
// logged-in user gets "Log out".
"use strict";

const ROLES = ["viewer", "submitter", "approver", "admin"];
const DEFAULT_TENANT = "default";

const who = { me: null, sso: false };

// roleIn is the principal's role in tenant: the higher of its grant there
// and its grant in every tenant ("*"); "" when it has neither. Before
// whoami answers (or when it cannot), every role is assumed.
function roleIn(tenant) {
  if (!who.me) return "admin";
  let best = -1;
  for (const g of who.me.grants || []) {
    if (g.tenant === tenant || g.tenant === "*") best = Math.max(best, ROLES.indexOf(g.role));
  }
  return best < 0 ? "" : ROLES[best];
}

function can(tenant, role) {
  const r = roleIn(tenant);
  return r !== "" && ROLES.indexOf(r) >= ROLES.indexOf(role);
}

function homeTenant() {
  return (who.me && who.me.default_tenant) || DEFAULT_TENANT;
}

function taskTenant(t) {
  return (t && t.spec && t.spec.tenant) || DEFAULT_TENANT;
}

async function loadWho() {
  try {
    who.me = await api("GET", "/v1/whoami");
    // grants come as {tenant: role}; the page works on a list
    who.me.grants = Object.entries(who.me.grants || {}).map(([tenant, role]) => ({ tenant, role }));
  } catch (err) {
    who.me = null; // an older dispatcher, or not logged in (the banner says so)
  }
  renderWho();
}

// renderWho shows the principal and hides what its role may not do
// outside a task (submitting, budgets).
function renderWho() {
  const box = $("whoami");
  const me = who.me;
  box.hidden = !me;
  if (me) {
    const tenant = homeTenant();
    $("whoami-name").textContent = me.name || me.id;
    $("whoami-tenant").textContent = tenant;
    $("whoami-role").textContent = roleIn(tenant) || "none";
    box.title = me.id + " · " + (me.grants || []).map((g) => `${g.tenant === "*" ? "every tenant" : g.tenant}: ${g.role}`).join(", ");
    document.body.dataset.role = roleIn(tenant);
  }
  $("logout-button").hidden = !(me && who.sso && String(me.id).startsWith("oidc:"));
  $("submit-box").hidden = !can(homeTenant(), "submitter");
  $("bulk-box").hidden = !can(homeTenant(), "submitter");
  $("budget-section").hidden = !can(homeTenant(), "viewer");
  if (ui.selectedTask) renderDetail(ui.selectedTask); // its controls, by its tenant's role
}

// applyTaskRole hides the selected task's controls its tenant's role may
// not use.
function applyTaskRole(t) {
  const submit = can(taskTenant(t), "submitter");
  for (const id of ["control-message", "steer-button", "followup-button", "cancel-button", "abort-button"]) $(id).hidden = !submit;
}

// offerSSO shows the single sign-on link next to the token form when the
// dispatcher has single sign-on.
async function offerSSO() {
  try {
    const resp = await fetch("/auth/", { headers: { Accept: "application/json" } });
    who.sso = resp.ok && !!(await resp.json()).sso;
  } catch {
    who.sso = false;
  }
  const link = $("sso-login");
  link.hidden = !who.sso;
  link.href = "/auth/login?return=" + encodeURIComponent(location.pathname + location.hash);
  renderWho();
}

async function logout() {
  await fetch("/auth/logout", { method: "POST" });
  location.reload();
}

function initWho() {
  $("logout-button").addEventListener("click", logout);
  offerSSO();
  loadWho();
}
