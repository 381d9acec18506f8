package worker

import (
	"context"

	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/store"
)

// completer is the worker's taskops.Completer: it counts the ends it
// writes and the resumes it enqueues, and announces an end that has no
// run (SESSION_END, unless stored already).
func (w *Worker) completer() *taskops.Completer {
	return &taskops.Completer{Store: w.st, Queue: w.q, Log: w.log, AbortTimeout: w.q.Config().ControlTimeout,
		Ended:    func(s store.TaskState) { w.metrics.tasks.WithLabelValues(string(s)).Inc() },
		Resumed:  w.metrics.resumes.Inc,
		Announce: func(ctx context.Context, t store.Task) error { return w.eventSink().EnsureSessionEnd(ctx, t) }}
}
