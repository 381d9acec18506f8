// Package eventpump publishes a task session's events on the fleet's event
// subjects: <prefix>.events.<tenant>.<root>.<task>.<kind> (the tenant of
// the task's spec), each envelope carrying the tenant, the root and parent
// task ids and a Seq that is gapless per session
// across runs (a resumed session continues after the last event stored in
// EVENTS). Runs of text deltas are merged first (fleet/internal/coalesce).
//
// Before a TOOL_CALL_END is published its full output is stored
// (store.PutToolOutput), so the reference in a large event resolves. The
// SESSION_END of a task is published by the worker once the task has its
// final state (PublishEnd), confirmed by the stream before the task's
// message is acknowledged; a redelivered message of an ended task whose
// SESSION_END never got stored publishes it then (EnsureSessionEnd).
package eventpump

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"sync"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/internal/coalesce"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// Sink is where a worker's pumps publish and store, shared by its runs.
type Sink struct {
	Queue     *queue.Client         // reads the last event of a session
	Publisher *queue.EventPublisher // publishes the envelopes
	Store     store.Store           // keeps full tool outputs
	Merge     coalesce.Config       // how text deltas are merged
	// GiveUp is closed when the worker stops waiting for confirmations (a
	// drain's grace ran out, or it halts).
	GiveUp <-chan struct{}
	// Published is called after each publish (a metric); nil means nothing.
	Published func()
}

// Pump forwards one run's session events. One goroutine owns the
// subscription until Wait returns; Publish may be called from others.
type Pump struct {
	sink Sink
	task store.Task
	// tenant is the task's, read from its spec once.
	tenant string
	log    *slog.Logger
	sub    *agent.Subscription
	seen   func(agent.Event)
	// head is every run's envelope but ID, Kind, Seq and Data: the
	// task's ids as strings, made once rather than per event.
	head queue.Event
	mu   sync.Mutex // guards seq
	seq  uint64
	done chan struct{}
}

// Start starts the pump of a run of task t, reading sub until it closes
// (the session closed). seen, if not nil, is called with every event
// before it is published, from the pump's goroutine (metrics). The first
// claim of a task has no events before it, so only later runs read the
// last one from EVENTS. Once ctx has ended (the worker halted) the pump
// drains the subscription without storing or publishing anything.
func Start(ctx context.Context, sink Sink, t store.Task, sub *agent.Subscription, log *slog.Logger, seen func(agent.Event)) (*Pump, error) {
	p := &Pump{sink: sink, task: t, tenant: fleet.SessionTenant(t), log: log, sub: sub, seen: seen, done: make(chan struct{})}
	p.head = envelope(t, p.tenant, 0, "", nil)
	if t.Attempts > 1 {
		last, err := sink.Queue.LastSeq(ctx, t.RootID.String(), t.ID.String())
		if err != nil {
			sub.Close()
			return nil, fmt.Errorf("reading the last event of the session: %w", err)
		}
		p.seq = last
	}
	go p.loop(ctx) //nolint:gosec // G118: the pump drains the subscription to its end whatever ctx (see Start)
	return p, nil
}

// Wait returns once every event of the session has been handed to the
// publisher (the session must be closed first).
func (p *Pump) Wait() { <-p.done }

func (p *Pump) loop(ctx context.Context) {
	defer close(p.done)
	for ev := range coalesce.Events(context.Background(), p.sub, p.sink.Merge) {
		if ev.Kind == agent.EventSessionEnd || ctx.Err() != nil {
			continue
		}
		if p.seen != nil {
			p.seen(ev)
		}
		if ev.Kind == agent.EventToolCallEnd {
			p.storeOutput(ctx, ev)
		}
		data, err := json.Marshal(ev)
		if err != nil {
			continue
		}
		_ = p.Publish(ctx, string(ev.Kind), data, false)
	}
}

// storeOutput keeps a tool call's full output; a failure is logged (the
// event's reference then does not resolve, the session goes on).
func (p *Pump) storeOutput(ctx context.Context, ev agent.Event) {
	_, err := p.sink.Store.PutToolOutput(ctx, store.PutToolOutputParams{SessionID: p.task.ID,
		CallID: ev.CallID, Tool: ev.ToolName, Output: ev.Output, IsError: ev.IsError})
	if err != nil {
		p.log.Warn("storing a tool output", "call_id", ev.CallID, "err", err)
	}
}

// Publish sends one envelope with the next seq. It waits for room in the
// publisher's queue; a confirmed one also for the stream to store it.
func (p *Pump) Publish(ctx context.Context, kind string, data json.RawMessage, confirmed bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	ev := p.head
	ev.ID, ev.Kind, ev.Seq, ev.Data = eventID(ev.SessionID, p.seq), kind, p.seq, data
	err := p.sink.publish(ctx, ev, confirmed)
	if err != nil {
		p.log.Warn("publishing an event", "kind", kind, "seq", p.seq, "err", err)
	}
	return err
}

// PublishValue publishes an event of the run's own (a check run, a
// delivery) with v as its data.
func (p *Pump) PublishValue(ctx context.Context, kind string, v any) {
	if data, err := json.Marshal(v); err == nil {
		_ = p.Publish(ctx, kind, data, false)
	}
}

// PublishEnd publishes the SESSION_END of a task that reached its final
// state and waits until the stream has stored it, or the sink gives up:
// the task's message is acknowledged only after. Call it after Wait. A
// nil pump (no session started) publishes nothing.
func (p *Pump) PublishEnd(ctx context.Context, t store.Task, res fleet.TaskResult) error {
	if p == nil {
		return nil
	}
	ctx, cancel := p.sink.untilGiveUp(ctx)
	defer cancel()
	return p.Publish(ctx, fleet.KindSessionEnd, sessionEndData(t, res), true)
}

// Envelope is the queue event of a task's session, under the tenant of
// the task's spec (queue.DefaultTenant for a spec that names none).
func Envelope(t store.Task, seq uint64, kind string, data json.RawMessage) queue.Event {
	return envelope(t, fleet.SessionTenant(t), seq, kind, data)
}

func envelope(t store.Task, tenant string, seq uint64, kind string, data json.RawMessage) queue.Event {
	id := t.ID.String()
	ev := queue.Event{ID: eventID(id, seq), Kind: kind, Tenant: tenant, SessionID: id,
		TaskID: id, RootTaskID: t.RootID.String(), Seq: seq, Data: data}
	if t.ParentID != uuid.Nil {
		ev.ParentTaskID = t.ParentID.String()
	}
	return ev
}

// eventID is the id of a session's event seq: <session>-<seq>.
func eventID(session string, seq uint64) string {
	return session + "-" + strconv.FormatUint(seq, 10)
}

func sessionEndData(t store.Task, res fleet.TaskResult) json.RawMessage {
	data, _ := json.Marshal(fleet.SessionEndData{State: t.State, Reason: t.Error, Result: res})
	return data
}

// EnsureSessionEnd publishes the SESSION_END of an ended task whose run
// did not get it stored (its worker died between the final transition and
// the publish, or NATS never confirmed it), after the task's last event. A
// task that never ran had no session, so it gets none.
func (s Sink) EnsureSessionEnd(ctx context.Context, t store.Task) error {
	if t.Attempts == 0 {
		return nil
	}
	has, err := s.Queue.HasEvent(ctx, t.RootID.String(), t.ID.String(), fleet.KindSessionEnd)
	if err != nil || has {
		return err
	}
	res, _ := fleet.DecodeResult(t.Result)
	return s.PublishAfterLast(ctx, t, fleet.KindSessionEnd, sessionEndData(t, res))
}

// PublishAfterLast publishes one confirmed event of a task that has no
// pump running, after the last event stored for it.
func (s Sink) PublishAfterLast(ctx context.Context, t store.Task, kind string, data json.RawMessage) error {
	last, err := s.Queue.LastSeq(ctx, t.RootID.String(), t.ID.String())
	if err != nil {
		return err
	}
	ctx, cancel := s.untilGiveUp(ctx)
	defer cancel()
	return s.publish(ctx, Envelope(t, last+1, kind, data), true)
}

func (s Sink) publish(ctx context.Context, ev queue.Event, confirmed bool) error {
	var err error
	if confirmed {
		err = s.Publisher.PublishConfirmed(ctx, ev)
	} else {
		err = s.Publisher.Publish(ctx, ev)
	}
	if s.Published != nil {
		s.Published()
	}
	return err
}

// untilGiveUp derives a context that also ends when the sink gives up.
func (s Sink) untilGiveUp(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-s.GiveUp:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
