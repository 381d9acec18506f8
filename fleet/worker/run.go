package worker

import (
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/approval"
	"github.com/agentfleet/agentfleet/fleet/checks"
	"github.com/agentfleet/agentfleet/fleet/extensions"
	"github.com/agentfleet/agentfleet/fleet/worker/internal/eventpump"
	"github.com/agentfleet/agentfleet/fleet/worker/internal/spawn"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// Why a run's session was stopped from outside its loop.
const (
	stopShutdown  = "shutdown"  // the worker drains: hand the task back
	stopAborted   = "aborted"   // a control abort: the task ends cancelled
	stopCancelled = "cancelled" // the store says the task was cancelled
	stopLost      = "lost"      // another worker owns the task now
	stopWallTime  = "limit_wall_time"
	stopTokens    = "limit_max_tokens"
	stopCost      = "limit_max_cost"
)

// run is one claimed task whose session runs on this worker. The handler
// goroutine owns it; abort and the control handler may be called from any
// goroutine.
type run struct {
	w    *Worker
	d    *queue.Delivery
	task store.Task // as claimed
	spec fleet.TaskSpec
	log  *slog.Logger

	env     execenv.Environment
	ws      *workspace // nil for SSH
	sess    *agent.Session
	spawner *spawn.Spawner
	pump    *eventpump.Pump
	rec     *turnRecorder
	row     store.Session   // the session row read or created by prepare
	checks  *checks.Runner  // nil when the spec lists no checks (checks.go)
	sandbox string          // the sandbox a local task's commands run in (TaskResult.Sandbox)
	redact  *agent.Redactor // the secrets this worker knows (redact.go), set by prepare
	image   *taskImage      // the environment image held while the task runs (image.go)

	approvals *approval.Parker    // the session's approver: calls waiting for a person
	ext       *extensions.Session // MCP servers, hooks, skills; closed with env

	mu       sync.Mutex // guards stop, aborting and sess once set
	stop     string     // why abort was called; "" while not aborted
	aborting bool
}

func newRun(w *Worker, d *queue.Delivery, task store.Task, spec fleet.TaskSpec) *run {
	return &run{w: w, d: d, task: task, spec: spec,
		log: w.log.With("task_id", task.ID, "root_task_id", task.RootID, "delivery", d.NumDelivered)}
}

// abort stops the session for reason (the first reason wins). It returns
// at once; the handler sees the reason when the session returns.
func (r *run) abort(reason string) {
	r.mu.Lock()
	if r.stop == "" {
		r.stop = reason
	}
	sess, already := r.sess, r.aborting
	r.aborting = r.aborting || sess != nil
	r.mu.Unlock()
	if sess != nil && !already {
		go sess.Abort()
	}
}

// stopReason is why the session was aborted, "" if it was not.
func (r *run) stopReason() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stop
}

// isRetryable reports model errors worth another delivery, and the delay
// the provider asked for (0 when it did not say).
func isRetryable(err error) (bool, time.Duration) {
	var le *llm.Error
	if !errors.As(err, &le) {
		return false, 0
	}
	switch le.Kind {
	case llm.ErrRateLimited, llm.ErrOverloaded, llm.ErrServer, llm.ErrTransport, llm.ErrStreamInterrupted:
		return true, le.RetryAfter
	}
	return false, 0
}

// notify reports a host event (a rate-limit wait, a fallback model) to the
// run's session, once it has one (see models.WithNotifier).
func (r *run) notify(kind agent.EventKind, text string) {
	if sess := r.session(); sess != nil {
		sess.Notify(kind, text)
	}
}

// session is the run's session, nil before prepare has built it.
func (r *run) session() *agent.Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sess
}
