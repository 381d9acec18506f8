// Package spawn is the fleet's agent.Spawner: how a session on a worker
// starts, waits for, steers and closes its subagents.
//
// Its contract:
//
//   - Every subagent is a child task in the store, which any worker may run
//     (or the parent's worker, when it works in the parent's local
//     workspace: the files are there). Its agent id is the child task id.
//   - Spawn is idempotent per spawn_agent call id: a resumed parent that
//     runs the call again gets the same child, and a child is enqueued only
//     while it is queued.
//   - Wait returns the result of a child that has ended; for one still
//     active it parks the parent (agent.ErrParked) and remembers the child
//     (Spawner.Awaited), so the worker wakes the parent at its end.
//   - SendInput steers a running child over its control subject, stores the
//     input (StoreInput) for a queued or parked one, and reopens an ended
//     one (Fleet.Reopen): the input is stored, the task goes back to queued
//     and a message runs it again. A cancelled child takes no input.
//   - Close cancels the child and its whole subtree with
//     the completer's CancelTree (fleet/internal/taskops), the one rule
//     the API's cancel applies too.
//
// A Spawner is built per run of the parent from a Fleet (the worker's
// store, queue and id) and a Parent (the task, its spec, its working
// directory, its session's settings). What it knows lives in the store, so
// a resumed parent gets a fresh one. The errors it returns are read by the
// model: they say what to do next.
package spawn
