// Package extensions gives a task's session what the operator and the
// task add to the built-in tools: MCP servers (tools/mcp), lifecycle hooks
// (agent/hooks) and skills (tools/skills). The worker calls Start when it
// prepares a session, Configure and Register around agent.New, and Close
// with the task's environment.
//
// # Bounds
//
// Config is the operator's side, squashed into the worker's
// configuration, and an upper bound on a spec's extensions.Extensions: a
// task's HTTP MCP server must be on mcp_http_allowlist, its http hooks on
// hooks_http_allowlist; no_task_mcp_servers and no_task_hooks refuse them
// altogether; a task may not reuse the name of an operator's server. A spec
// beyond the bounds is ErrNotAllowed, which fails the task for good.
//
// # Start-up failures
//
// Servers start concurrently in the task's environment. One that does not
// start is a warning, said as a WARNING event right after SESSION_START
// (a hook that runs first), and the session goes on without its tools; a
// required one fails the start with ErrRequired. A skipped SKILL.md is a
// warning the same way. The operator's hooks run before the task's.
//
// # Configuration files
//
// Viper folds map keys to lower case: secret names in mcp_secrets match in
// any case, and the operator's servers' env names are upper-cased.
package extensions
