package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/internal/coalesce"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// eventPump turns a session's agent events into queue envelopes on
// <prefix>.events.<root>.<task>.<kind>, with root and parent ids and a Seq
// that is gapless per session across runs: a resumed session continues
// after the last event stored in EVENTS. Before a TOOL_CALL_END is
// published its full output is stored (PutToolOutput), so the reference in
// a large event resolves. One goroutine owns seq until done is closed.
type eventPump struct {
	r     *run
	sub   *agent.Subscription
	mu    sync.Mutex // guards seq: the run's own events (publishValue) come from its goroutine
	seq   uint64
	start map[string]time.Time // tool call id -> TOOL_CALL_START time, for metrics
	done  chan struct{}
}

// newEventPump starts the pump of a run. The first claim of a task has no
// events before it, so only later runs read the last one from EVENTS.
func newEventPump(ctx context.Context, r *run, sess *agent.Session) (*eventPump, error) {
	p := &eventPump{r: r, sub: sess.Subscribe(), start: map[string]time.Time{}, done: make(chan struct{})}
	if r.task.Attempts > 1 {
		last, err := r.w.q.LastSeq(ctx, r.task.RootID.String(), r.task.ID.String())
		if err != nil {
			p.sub.Close()
			return nil, fmt.Errorf("reading the last event of the session: %w", err)
		}
		p.seq = last
	}
	go p.loop(ctx)
	return p, nil
}

// wait returns once every event of the session has been handed to the
// publisher (the session must be closed first).
func (p *eventPump) wait() { <-p.done }

// loop forwards the session's events until its subscription closes (the
// session closed), with runs of text deltas merged (coalesce.Events). Once
// ctx has ended (the worker halted) it drains the subscription without
// storing or publishing anything.
func (p *eventPump) loop(ctx context.Context) {
	defer close(p.done)
	merge := coalesce.Config{Window: p.r.w.cfg.DeltaWindow, MaxBytes: p.r.w.cfg.DeltaMaxBytes}
	for ev := range coalesce.Events(context.Background(), p.sub, merge) {
		if ev.Kind == agent.EventSessionEnd || ctx.Err() != nil {
			continue
		}
		p.observe(ctx, ev)
		data, err := json.Marshal(ev)
		if err != nil {
			continue
		}
		p.publish(ctx, string(ev.Kind), data, false)
	}
}

// observe stores full tool outputs and feeds the tool metrics.
func (p *eventPump) observe(ctx context.Context, ev agent.Event) {
	w := p.r.w
	switch ev.Kind {
	case agent.EventToolCallStart:
		p.start[ev.CallID] = ev.Time
	case agent.EventPermissionDenied:
		w.metrics.denials.WithLabelValues(ev.ToolName, ev.Permission.Rule).Inc()
	case agent.EventApprovalRequested:
		w.metrics.approvals.Inc()
	case agent.EventToolCallEnd:
		started, ok := p.start[ev.CallID]
		delete(p.start, ev.CallID)
		w.metrics.toolCalls.WithLabelValues(ev.ToolName, fmt.Sprint(ev.IsError)).Inc()
		if ok {
			w.metrics.toolDuration.WithLabelValues(ev.ToolName).Observe(ev.Time.Sub(started).Seconds())
		}
		_, err := w.st.PutToolOutput(ctx, store.PutToolOutputParams{SessionID: p.r.task.ID,
			CallID: ev.CallID, Tool: ev.ToolName, Output: ev.Output, IsError: ev.IsError})
		if err != nil {
			p.r.log.Warn("storing a tool output", "call_id", ev.CallID, "err", err)
		}
	}
}

// publish sends one envelope with the next seq. Publish waits for room in
// the publisher's queue; a confirmed one also for the stream to store it.
func (p *eventPump) publish(ctx context.Context, kind string, data json.RawMessage, confirmed bool) error {
	r := p.r
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	ev := envelope(r.task, p.seq, kind, data)
	var err error
	if confirmed {
		err = r.w.pub.PublishConfirmed(ctx, ev)
	} else {
		err = r.w.pub.Publish(ctx, ev)
	}
	if err != nil {
		r.log.Warn("publishing an event", "kind", kind, "seq", p.seq, "err", err)
	}
	r.w.metrics.events.Inc()
	return err
}

// publishValue publishes an event of the run's own (a check run, a
// delivery) with v as its data.
func (p *eventPump) publishValue(ctx context.Context, kind string, v any) {
	if data, err := json.Marshal(v); err == nil {
		_ = p.publish(ctx, kind, data, false)
	}
}

// envelope is the queue event of a task's session.
func envelope(t store.Task, seq uint64, kind string, data json.RawMessage) queue.Event {
	ev := queue.Event{ID: fmt.Sprintf("%s-%d", t.ID, seq), Kind: kind, SessionID: t.ID.String(),
		TaskID: t.ID.String(), RootTaskID: t.RootID.String(), Seq: seq, Data: data}
	if t.ParentID != uuid.Nil {
		ev.ParentTaskID = t.ParentID.String()
	}
	return ev
}

// publishEnd publishes the SESSION_END of a task that reached its final
// state and waits until the stream has stored it, the worker halts, or a
// drain's grace runs out: the task's message is acked only after (see
// finish). Call it after wait.
func (p *eventPump) publishEnd(ctx context.Context, t store.Task, res fleet.TaskResult) error {
	if p == nil {
		return nil
	}
	ctx, cancel := p.r.w.untilGraceOver(ctx)
	defer cancel()
	return p.publish(ctx, fleet.KindSessionEnd, sessionEndData(t, res), true)
}

func sessionEndData(t store.Task, res fleet.TaskResult) json.RawMessage {
	data, _ := json.Marshal(fleet.SessionEndData{State: t.State, Reason: t.Error, Result: res})
	return data
}

// ensureSessionEnd publishes the SESSION_END of an ended task whose run did
// not get it stored (its worker died between the final transition and the
// publish, or NATS never confirmed it), after the task's last event. A
// redelivered message of an ended task comes here before its ack. A task
// that never ran had no session, so it gets none.
func (w *Worker) ensureSessionEnd(ctx context.Context, t store.Task) error {
	if t.Attempts == 0 {
		return nil
	}
	root, id := t.RootID.String(), t.ID.String()
	has, err := w.q.HasEvent(ctx, root, id, fleet.KindSessionEnd)
	if err != nil || has {
		return err
	}
	last, err := w.q.LastSeq(ctx, root, id)
	if err != nil {
		return err
	}
	res, _ := fleet.DecodeResult(t.Result)
	ctx, cancel := w.untilGraceOver(ctx)
	defer cancel()
	return w.pub.PublishConfirmed(ctx, envelope(t, last+1, fleet.KindSessionEnd, sessionEndData(t, res)))
}

// untilGraceOver derives a context that also ends when a drain's grace runs
// out (or the worker halts).
func (w *Worker) untilGraceOver(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-w.graceOver:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
