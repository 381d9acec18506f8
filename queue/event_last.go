package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// LastEvent returns the last event stored for a task (any kind), with its
// place in EVENTS: a session resumed on another worker continues its
// gapless Seq, and a stream of a finished task knows when it has replayed
// everything. ok is false when EVENTS holds no event of the task. Task ids
// are unique across tenants, so the tenant is not asked for; an event
// stored under the subject layout before tenants is found too (see
// docs/architecture.md, Subjects).
func (c *Client) LastEvent(ctx context.Context, rootTaskID, taskID string) (ev ReceivedEvent, ok bool, err error) {
	ev, _, ok, err = c.lastEvent(ctx, rootTaskID, taskID, "*")
	return ev, ok, err
}

// lastEvent returns the last event of kind ("*" for any) of a task and the
// subject filter of the task's events in the layout it was found under.
func (c *Client) lastEvent(ctx context.Context, rootTaskID, taskID, kind string) (ev ReceivedEvent, filter string, ok bool, err error) {
	if err := checkToken("root task id", rootTaskID); err != nil {
		return ReceivedEvent{}, "", false, err
	}
	if err := checkToken("task id", taskID); err != nil {
		return ReceivedEvent{}, "", false, err
	}
	if kind != "*" {
		if err := checkToken("event kind", kind); err != nil {
			return ReceivedEvent{}, "", false, err
		}
	}
	s, err := c.js.Stream(ctx, c.cfg.EventsStream)
	if err != nil {
		return ReceivedEvent{}, "", false, fmt.Errorf("queue: stream %s: %w", c.cfg.EventsStream, err)
	}
	for _, layout := range []func(kind string) string{
		func(k string) string { return c.subj.Event("*", rootTaskID, taskID, k) },
		func(k string) string { return c.subj.legacyEvent(rootTaskID, taskID, k) },
	} {
		raw, err := s.GetLastMsgForSubject(ctx, layout(kind))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return ReceivedEvent{}, "", false, fmt.Errorf("queue: last event of task %s: %w", taskID, err)
		}
		if err := json.Unmarshal(raw.Data, &ev.Event); err != nil {
			return ReceivedEvent{}, "", false, fmt.Errorf("%w at stream seq %d: %v", ErrBadEvent, raw.Sequence, err)
		}
		ev.StreamSeq, ev.Subject = raw.Sequence, raw.Subject
		return ev, layout("*"), true, nil
	}
	return ReceivedEvent{}, "", false, nil
}

// seqSkew widens LastSeq's scan for clock differences between the
// publishing worker (which stamps Event.Time) and the server.
const seqSkew = 5 * time.Second

// LastSeq returns the highest Seq stored for a task, 0 when EVENTS holds
// none: where a resumed session's events continue. Events are stored in
// Seq order except after a failed publish, which EventPublisher makes
// again and which then lands after the events that followed it; those were
// stored after it was created. So LastSeq reads the last stored event, then
// every event of the task stored since that one's Time (less seqSkew), and
// keeps the highest Seq: one message to read when nothing failed.
func (c *Client) LastSeq(ctx context.Context, rootTaskID, taskID string) (uint64, error) {
	last, filter, ok, err := c.lastEvent(ctx, rootTaskID, taskID, "*")
	if err != nil || !ok {
		return 0, err
	}
	since := last.Time.Add(-seqSkew)
	cons, err := c.js.OrderedConsumer(ctx, c.cfg.EventsStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{filter},
		DeliverPolicy:  jetstream.DeliverByStartTimePolicy, OptStartTime: &since})
	if err != nil {
		return 0, fmt.Errorf("queue: reading the recent events of task %s: %w", taskID, err)
	}
	highest := last.Seq
	for {
		n, err := fetchSeqs(ctx, cons, &highest)
		if err != nil {
			return 0, fmt.Errorf("queue: reading the recent events of task %s: %w", taskID, err)
		}
		if n == 0 {
			return highest, nil
		}
	}
}

// noResponderWait bounds how long fetchSeqs asks again a consumer that no
// node answers for yet.
const noResponderWait = 10 * time.Second

// fetchSeqs reads one batch of cons, raising highest to the largest Seq in
// it, and returns how many messages it read. On a cluster the node the
// client is connected to may not know a consumer just made (on the
// stream's leader) yet, and a fetch finds no responders: it is asked
// again, with a short backoff, for up to noResponderWait, as Serve does.
func fetchSeqs(ctx context.Context, cons jetstream.Consumer, highest *uint64) (int, error) {
	delay, deadline := 20*time.Millisecond, time.Now().Add(noResponderWait)
	for {
		n, err := fetchSeqsOnce(cons, highest)
		if !errors.Is(err, nats.ErrNoResponders) || time.Now().After(deadline) {
			return n, err
		}
		select {
		case <-ctx.Done():
			return n, err
		case <-time.After(delay):
		}
		delay = min(2*delay, time.Second)
	}
}

func fetchSeqsOnce(cons jetstream.Consumer, highest *uint64) (int, error) {
	batch, err := cons.FetchNoWait(256)
	if err != nil {
		return 0, err
	}
	n := 0
	for m := range batch.Messages() {
		n++
		var ev Event
		if json.Unmarshal(m.Data(), &ev) == nil && ev.Seq > *highest {
			*highest = ev.Seq
		}
	}
	return n, batch.Error()
}

// HasEvent reports whether EVENTS holds an event of kind for a task (in
// either subject layout, as LastEvent).
func (c *Client) HasEvent(ctx context.Context, rootTaskID, taskID, kind string) (bool, error) {
	if err := checkToken("event kind", kind); err != nil {
		return false, err
	}
	_, _, ok, err := c.lastEvent(ctx, rootTaskID, taskID, kind)
	if err != nil {
		return false, fmt.Errorf("queue: %s event of task %s: %w", kind, taskID, err)
	}
	return ok, nil
}
