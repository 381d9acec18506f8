// Package settings maps a task spec's session settings (fleet.Session),
// within an operator's fleet.Policy, onto what a worker builds for the
// task: the agent.SessionConfig, the environment's policy and command
// timeout cap, the profile's extra tools (web_fetch) and request options,
// and the model client's extra headers. It decides nothing about whether
// a spec is allowed (fleet.Policy.Check does) and builds nothing itself;
// fleet/worker calls it while preparing a session, so that the worker
// package stays about running tasks.
package settings
