// Package checks runs the checks a task spec lists (fleet.Verification)
// and drives the repair loop: after the agent's final answer every check
// runs in the task's workspace through the task's execution environment
// (so a sandboxed environment sandboxes the checks too); when one fails,
// its output, truncated as the shell tool's output is, goes back to the
// agent as a new input naming the check, up to the spec's repair rounds.
//
// Every run is recorded as a fleet.CheckRun: the command, exit status,
// duration and the name of the artifact (kind "check") holding its full
// output. Artifact names are "before.<check>" and "round<N>.<check>", so a
// redelivered task that runs a round again overwrites that round's
// outputs rather than adding to them. With Runner.Redact set (the worker's
// secrets), the output is redacted before it is stored or shown.
//
// Repair inputs start with RepairMarker; CountRepairs counts them in a
// session's history, so a task resumed on another worker keeps its bound
// on repair rounds. The verdict compares the runs before the agent started
// (when the spec asks for them) with the last runs: "fixed" (failing
// before, passing now), "already_passing", "passed" (not run before) or
// "failed".
//
// The worker calls Runner.Before before a new session's first input and
// Runner.Verify after each completed answer; the package knows nothing of
// queues or settling.
package checks
