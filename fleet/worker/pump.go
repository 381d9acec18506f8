package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet"
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
	seq   uint64
	start map[string]time.Time // tool call id -> TOOL_CALL_START time, for metrics
	done  chan struct{}
}

// newEventPump starts the pump of a run. The first claim of a task has no
// events before it, so only later runs read the last one from EVENTS.
func newEventPump(ctx context.Context, r *run, sess *agent.Session) (*eventPump, error) {
	p := &eventPump{r: r, sub: sess.Subscribe(), start: map[string]time.Time{}, done: make(chan struct{})}
	if r.task.Attempts > 1 {
		last, ok, err := r.w.q.LastEvent(ctx, r.task.RootID.String(), r.task.ID.String())
		if err != nil {
			p.sub.Close()
			return nil, fmt.Errorf("reading the last event of the session: %w", err)
		}
		if ok {
			p.seq = last.Seq
		}
	}
	go p.loop(ctx)
	return p, nil
}

// wait returns once every event of the session has been handed to the
// publisher (the session must be closed first).
func (p *eventPump) wait() { <-p.done }

// loop forwards the session's events until its subscription closes (the
// session closed). Once ctx has ended (the worker halted) it drains the
// subscription without storing or publishing anything.
func (p *eventPump) loop(ctx context.Context) {
	defer close(p.done)
	for ev := range p.sub.All(context.Background()) {
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

// publish sends one envelope with the next seq.
func (p *eventPump) publish(ctx context.Context, kind string, data json.RawMessage, confirmed bool) {
	r := p.r
	p.seq++
	ev := queue.Event{ID: fmt.Sprintf("%s-%d", r.task.ID, p.seq), Kind: kind, SessionID: r.task.ID.String(),
		TaskID: r.task.ID.String(), RootTaskID: r.task.RootID.String(), Seq: p.seq, Data: data}
	if r.task.ParentID != uuid.Nil {
		ev.ParentTaskID = r.task.ParentID.String()
	}
	var err error
	if confirmed {
		err = r.w.pub.PublishConfirmed(ctx, ev)
	} else {
		err = r.w.pub.Publish(ctx, ev)
	}
	if err != nil && !errors.Is(err, queue.ErrEventDropped) {
		r.log.Warn("publishing an event", "kind", kind, "seq", p.seq, "err", err)
	}
	r.w.metrics.events.Inc()
}

// publishEnd publishes the confirmed SESSION_END of a task that reached its
// final state. Call it after wait.
func (p *eventPump) publishEnd(ctx context.Context, t store.Task, res fleet.TaskResult) {
	if p == nil || ctx.Err() != nil {
		return
	}
	data, _ := json.Marshal(fleet.SessionEndData{State: t.State, Reason: t.Error, Result: res})
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	p.publish(ctx, fleet.KindSessionEnd, data, true)
}
