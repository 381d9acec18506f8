package taskops

import (
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// Target is where a task's messages go: its worker's own subject when it
// runs in a local workspace that is not shared (t.WorkerID, the worker
// that holds its files), else its queue.
func Target(t store.Task, spec fleet.TaskSpec) queue.Target {
	if Pinned(spec) && t.WorkerID != "" {
		return queue.ToWorker(t.WorkerID)
	}
	q := t.Queue
	if q == "" {
		q = spec.Queue
	}
	return queue.ToQueue(q)
}

// Pinned reports whether a task must run on the worker holding its files.
func Pinned(spec fleet.TaskSpec) bool {
	return (spec.Environment.Kind == "" || spec.Environment.Kind == fleet.EnvLocal) && !spec.Environment.Shared
}
