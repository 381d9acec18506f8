// Package redteam is the red-team suite of `make redteam`
// (docs/redteam.md): it starts an in-process fleet shaped like dev mode,
// runs each probe as a task submitted through the API with a scripted
// simulated model, and judges the probe by its effect, checked from
// outside with a canary (a file's random content in the task's stored
// turns or events, a file appearing on the host, a request reaching a
// loopback listener, a secret value stored), never by the mechanism that
// should refuse it.
//
// A probe is Held when the effect did not happen, whatever stopped it (a
// 400 at submission, a refused tool, a failed command or task); Escaped
// when it happened; NA when this machine cannot tell (the evidence says
// why); Error when the probe itself could not run. Run prints a table and
// returns the results; Failed reports an Escaped or Error one.
//
// Decisions where the issue is silent: one fleet serves every probe (each
// probe has its own task, canaries and listeners), so the worker's
// allowlists name the suite's MCP origin and two example hosts the bypass
// probes aim past; approvals time out after 5 s so a call that asks a
// person cannot park a probe; the fork bomb and the memory hog also
// escape when they get what they asked for (6000 processes, 5 GiB: past
// the worker's default limits), not
// only when the worker or a concurrent session suffers, since a bounded
// probe on a large machine would otherwise never show the missing limit.
package redteam
