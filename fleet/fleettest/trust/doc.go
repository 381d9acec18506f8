// Package trust holds the suite that proves the fleet's trust boundary
// (issue 29, "Done when") on one running fleet, with nothing of it faked:
// TestTrustBoundary in trust_test.go. The package has no code besides
// this comment; it exists so that the suite has a home of its own.
//
// The fleet: an in-process NATS server whose users get the shipped
// permissions (queue.PermissionsFor, via fleettest's Restricted option:
// the dispatcher, a worker and an observer of tenant team-a), Postgres
// (store/pgtest), the dispatcher's HTTP API and dashboard with single
// sign-on against a real Gitea (internal/giteatest), one in-process
// worker running the simulated model (fleettest.Model), and dev mode's
// HTTP face (fleet/dev.Handler, no token) on the same dispatcher.
//
// The principals: API tokens of tenant team-a's viewer, submitter and
// approver, an admin of every tenant, and team-b's approver (who also
// submits); Gitea users logged in through headless Chromium: team-a's
// viewer and approver (their org teams map to the roles).
//
// What it proves, one subtest per line of the issue:
//   - tenant A's viewer cannot see, list, stream or count tenant B's
//     tasks (404, or absent), and cannot approve;
//   - A's approver can approve A's calls only and is recorded as the
//     approver (the permission record and the audit log), over the API
//     and by the dashboard's button;
//   - a worker's NATS user cannot publish an approval (nor serve the
//     approvals subject), so a forged approval leaves the call pending;
//   - an observer's NATS user receives its tenant's events only and may
//     publish nothing;
//   - dev mode refuses a text/plain or cross-origin POST (also one a real
//     page of another origin sends from Chromium);
//   - a revoked token is refused from the next request on, an expired one
//     from its expiry on;
//   - the dashboard, logged in through Gitea, names the user, tenant and
//     role, and shows the approve button to the approver only.
//
// Without Gitea, Chromium or Postgres the suite skips with a message;
// under AGENTFLEET_REQUIRE_INTEGRATION=1 it fails instead
// (internal/testenv). docs/operations.md ("The trust boundary, proved") points here.
package trust
