// Package hooks runs the operator's and a task's lifecycle hooks: shell
// commands or HTTP calls at the points of a session's life that
// agent.HookPoint names. A Runner implements agent.Hook.
//
// # Shell hooks
//
// A shell hook runs with bash in the session's execution environment (the
// task's workspace, under the same environment policy and confinement as
// the model's own commands), with the event as JSON on its standard input
// and in AGENTFLEET_HOOK_EVENT; AGENTFLEET_HOOK names the point and
// AGENTFLEET_TOOL_NAME the tool. At pre_tool_use, exit status 2 blocks the
// call and the hook's standard error is the reason the model reads. At
// post_tool_use, whatever the hook printed (standard output, then standard
// error) is appended to the result the model sees, so a formatter or a
// linter can report; at most MaxAppend bytes per hook.
//
// # HTTP hooks
//
// An http hook POSTs the event JSON to a URL on the operator's allowlist
// (checked when the hook is configured, again before each call and on
// every redirect). The allowlist is parsed (Allowlist): scheme, host and
// port must match an entry, so user info or a look-alike host does not
// pass. Requests go through the outbound guard (internal/outbound): an
// internal address is refused after resolution unless the operator names
// it (Options.AllowPrivate). A 2xx
// answer may be empty (no opinion) or a JSON object: {"decision":"block",
// "reason":"..."} blocks a pre_tool_use call; "output" is appended at
// post_tool_use.
//
// # Failures
//
// Each run is bounded by the hook's Timeout (default 30 s). A hook that
// times out, exits with another non-zero status, cannot be reached, answers
// a non-2xx status or something that is not a decision has failed: by
// default it does not block, and the session emits a WARNING event naming
// the hook and what happened; a pre_tool_use hook with BlockOnFailure
// blocks the call instead (and warns too).
//
// # Order
//
// Hooks run in configuration order (the operator's first, then the
// task's); the first that blocks ends the run for that call. Tool filters
// are globs over the tool's name as the model calls it (path.Match).
package hooks
