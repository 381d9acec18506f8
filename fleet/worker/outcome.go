package worker

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/store"
)

// settleOutcome maps how the session returned to the task's next state and
// says how to settle the delivery.
func (r *run) settleOutcome(ctx context.Context, out agent.Outcome, err error) settlement {
	stop := r.stopReason()
	switch {
	case ctx.Err() != nil:
		return abandon() // halted: write nothing more
	case errors.Is(err, agent.ErrParked):
		return r.park(ctx)
	case stop == stopShutdown:
		return r.giveBack(ctx, 0)
	case stop == stopLost:
		return ack() // the new owner has its own message
	case stop == stopCancelled:
		return r.finish(ctx, store.TaskCancelled, fleet.ReasonCancelled, r.result(out, false, "cancelled"))
	case stop == stopAborted:
		return r.finish(ctx, store.TaskCancelled, fleet.ReasonAborted, r.result(out, false, "aborted over control"))
	case stop == stopBudget:
		return r.budgetStop(ctx, out)
	case stop != "": // a limit
		return r.finish(ctx, store.TaskFailed, stop, r.result(out, false, stop))
	case err != nil:
		return r.sessionError(ctx, out, err)
	case out.Stop == agent.StopCompleted || out.Stop == agent.StopAwaitingInput:
		return r.finishAnswered(ctx, out)
	case out.Stop == agent.StopResultSchema:
		return r.resultSchemaFailed(ctx, out)
	case out.Stop == agent.StopNoProgress:
		return r.finish(ctx, store.TaskFailed, fleet.ReasonNoProgress, r.result(out, false, string(out.Stop)))
	default: // turn or round limit, loop detection ended the input
		return r.finish(ctx, store.TaskFailed, fleet.ReasonTurnLimit, r.result(out, false, string(out.Stop)))
	}
}

// sessionError handles a model or store error: retryable ones hand the
// task back (with the provider's delay for a model); the rest fail it. A
// store error is never the model's: a temporary one (the store was still
// away when a drain ended the wait) hands the task back, a permanent one
// fails it as store_error.
func (r *run) sessionError(ctx context.Context, out agent.Outcome, err error) settlement {
	switch {
	case store.IsRetryable(err):
		r.log.Info("the store did not answer; handing the task back", "err", err)
		return r.giveBack(ctx, r.w.backoff(r.d.NumDelivered))
	case store.KnownError(err):
		r.log.Warn("the store refused the session's history", "err", err)
		return r.finish(ctx, store.TaskFailed, fleet.ReasonStoreError, r.result(out, false, err.Error()))
	}
	if ok, delay := isRetryable(err); ok {
		if delay <= 0 {
			delay = r.w.backoff(r.d.NumDelivered)
		}
		r.log.Info("retryable model error; handing the task back", "err", err, "delay", delay)
		r.w.metrics.retries.Inc()
		return r.giveBack(ctx, delay)
	}
	r.log.Warn("session failed", "err", err)
	return r.finish(ctx, store.TaskFailed, fleet.ReasonModelError, r.result(out, false, err.Error()))
}

// result builds the task result from the session's history and totals.
func (r *run) result(out agent.Outcome, success bool, errText string) fleet.TaskResult {
	res := fleet.TaskResult{Success: success, Error: errText, Sandbox: r.sandbox, Structured: out.Structured}
	if r.sess != nil {
		h := r.sess.History()
		for _, turn := range slices.Backward(h) {
			if turn.Kind == agent.TurnAssistant {
				res.FinalText = turn.Text
				break
			}
		}
		res.TurnsUsed = assistantTurns(h)
	}
	if res.FinalText == "" || len(out.Text) > len(res.FinalText) && strings.HasSuffix(out.Text, res.FinalText) {
		res.FinalText = out.Text // empty history, or an answer continued past the output limit
	}
	if r.rec != nil {
		res.Usage, res.CostUSD = r.rec.totals()
	}
	if r.checks != nil {
		res.Checks = r.checks.Report()
	}
	return res
}

// assistantTurns counts the model's turns in a history.
func assistantTurns(h []agent.Turn) int {
	n := 0
	for _, t := range h {
		if t.Kind == agent.TurnAssistant {
			n++
		}
	}
	return n
}

// finish ends the run through the completer (the final state, with the
// diff artifact first and the held turns in the same write), publishes
// SESSION_END, wakes the parent, applies the child policy, and acks once
// SESSION_END is stored.
func (r *run) finish(ctx context.Context, to store.TaskState, reason string, res fleet.TaskResult) settlement {
	w := r.w
	r.saveRepoMemory(ctx)
	if err := r.pushResult(ctx, to); err != nil { // gitstore.go: before the end wakes the parent
		r.log.Warn("handing the task back", "err", err)
		return nak(w.backoff(r.d.NumDelivered))
	}
	r.writeDiff(ctx)
	e := taskops.End{ID: r.task.ID, To: to, Reason: reason, Result: res, WorkerID: w.cfg.ID,
		NoChildren: !r.mayHaveChildren(), Reopen: r.reopenForLateInput,
		Announce: func(ctx context.Context, t store.Task) error { return r.pump.PublishEnd(ctx, t, res) }}
	if r.rec != nil {
		e.Append = r.rec.pendingAppend()
	}
	traceEnd(ctx, to, reason, res)    // tracing.go
	defer w.endings.hold(r.task.ID)() // until the workspace is removed (ending.go)
	ended, err := w.ends.End(ctx, e)
	if err != nil {
		r.log.Warn("writing the final state; handing back", "err", err)
		return nak(w.backoff(r.d.NumDelivered))
	}
	if ended.TurnsWritten {
		r.rec.written()
	} else if !ended.Moved {
		// Cancelled meanwhile, or taken over: the run's last turns are
		// recorded all the same.
		r.flushTurns(ctx)
	}
	if !ended.Task.State.Terminal() {
		return ack()
	}
	if hook := w.afterEnd.Load(); hook != nil {
		(*hook)(r.task.ID)
	}
	if !ended.Reopened {
		r.cleanupWorkspace(ended.Task.State == store.TaskSucceeded)
	}
	if ended.AnnounceErr != nil {
		// Settled only once SESSION_END is stored: the redelivery of an
		// ended task publishes it (claimFailed, eventpump.Sink.EnsureSessionEnd).
		return nak(w.backoff(r.d.NumDelivered))
	}
	return ack()
}

// reopenForLateInput reopens a child task that succeeded or failed with
// input its run did not deliver (stored by its parent's send_input while
// the run was ending) and reports whether it did; the next run answers that
// input, and only its end wakes the parent, as when send_input reopens an
// ended child. A root task never has stored input; a cancelled one takes
// none.
func (r *run) reopenForLateInput(ctx context.Context, t store.Task) bool {
	if r.task.ParentID == uuid.Nil || t.State == store.TaskCancelled {
		return false
	}
	in, err := r.loadInputs(ctx)
	if err != nil || in.last == "" {
		return false
	}
	if err := r.w.spawnFleet().Reopen(ctx, t, in.last); err != nil {
		r.log.Warn("reopening for input that came while the run ended", "err", err)
		return false
	}
	return true
}

// flushTurns writes the turns the recorder holds back (see turnRecorder).
// Failing is not fatal: a later run submits the prompt again, or asks the
// model again for the answer.
func (r *run) flushTurns(ctx context.Context) {
	if r.rec == nil {
		return
	}
	if err := r.rec.flush(ctx); err != nil {
		r.log.Warn("recording held turns", "err", err)
	}
}

// mayHaveChildren reports whether the task may have spawned children: only
// its own session spawns them, so a first run whose spawner created none
// has none.
func (r *run) mayHaveChildren() bool {
	return r.task.Attempts > 1 || r.spawner == nil || r.spawner.Created() > 0
}

// fail ends the task as failed before its session ran.
func (r *run) fail(ctx context.Context, reason, detail string) settlement {
	if _, err := r.w.ends.End(ctx, taskops.Failed(r.task.ID, r.w.cfg.ID, reason, fleet.TaskResult{Error: detail})); err != nil {
		r.log.Warn("failing task", "err", err)
	}
	return term(reason + ": " + detail)
}

// giveBack returns a running task to queued and hands its message back, so
// this or another worker resumes it from its recorded turns after delay.
func (r *run) giveBack(ctx context.Context, delay time.Duration) settlement {
	r.flushTurns(ctx)
	_, err := r.w.st.TransitionTask(ctx, store.TransitionTaskParams{ID: r.task.ID, From: store.TaskRunning,
		To: store.TaskQueued, WorkerID: r.w.cfg.ID})
	if err != nil && !errors.Is(err, store.ErrConflict) {
		r.log.Warn("handing the task back", "err", err)
	}
	return nak(delay)
}

// finishAnswered ends a task whose session completed an answer: failed
// with checks_failed when its checks did not pass, failed with
// delivery_failed when its delivery did not complete, else succeeded.
// The delivery runs after the checks passed (or regardless, when the spec
// says so), once the workspace's diff is stored.
func (r *run) finishAnswered(ctx context.Context, out agent.Outcome) settlement {
	passed := r.checks == nil || r.checks.Passed()
	res := r.result(out, passed, "")
	temporary := false
	if d := r.spec.Delivery; d != nil {
		if passed || d.EvenIfChecksFail {
			r.writeDiff(ctx) // before the delivery commits the changes
			res.Delivery, temporary = r.deliver(ctx, res.FinalText)
		} else {
			res.Delivery = &fleet.DeliveryResult{Branch: d.BranchName(r.task.ID), Skipped: "the checks failed"}
		}
	}
	switch {
	case !passed:
		res.Error = r.checks.Failure()
		return r.finish(ctx, store.TaskFailed, fleet.ReasonChecksFailed, res)
	case temporary && int(r.d.NumDelivered) < r.w.q.Config().MaxDeliver:
		// Delivering again is safe (package delivery); the next run checks
		// the answer again and delivers what this one could not.
		r.log.Info("a temporary delivery error; handing the task back", "err", res.Delivery.Error)
		return r.giveBack(ctx, r.w.backoff(r.d.NumDelivered))
	case res.Delivery != nil && res.Delivery.Error != "":
		res.Success, res.Error = false, "delivery: "+res.Delivery.Error
		return r.finish(ctx, store.TaskFailed, fleet.ReasonDelivery, res)
	}
	return r.finish(ctx, store.TaskSucceeded, "", res)
}
