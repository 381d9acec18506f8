package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// EventFilter selects the events of a subscription. Empty fields match everything: RootTaskID
// alone selects a whole task tree, TaskID one task.
type EventFilter struct {
	RootTaskID string
	TaskID     string
	// Kind keeps one kind of event ("SESSION_END"); "" keeps all.
	Kind string
}

func (f EventFilter) subject(s Subjects) (string, error) {
	root, task := "*", "*"
	if f.RootTaskID != "" {
		if err := checkToken("EventFilter.RootTaskID", f.RootTaskID); err != nil {
			return "", err
		}
		root = f.RootTaskID
	}
	if f.TaskID != "" {
		if err := checkToken("EventFilter.TaskID", f.TaskID); err != nil {
			return "", err
		}
		task = f.TaskID
	}
	kind := "*"
	if f.Kind != "" {
		if err := checkToken("EventFilter.Kind", f.Kind); err != nil {
			return "", err
		}
		kind = f.Kind
	}
	return s.Event(root, task, kind), nil
}

// StartPosition says where in the EVENTS stream a subscription begins: FromStart, FromSeq or
// NewOnly.
type StartPosition struct {
	policy jetstream.DeliverPolicy
	seq    uint64
}

// FromStart replays every stored event matching the filter, then follows new ones.
func FromStart() StartPosition { return StartPosition{policy: jetstream.DeliverAllPolicy} }

// FromSeq replays from stream sequence seq (a ReceivedEvent.StreamSeq + 1 resumes after it).
func FromSeq(seq uint64) StartPosition {
	return StartPosition{policy: jetstream.DeliverByStartSequencePolicy, seq: seq}
}

// NewOnly follows only events published after the subscription starts.
func NewOnly() StartPosition { return StartPosition{policy: jetstream.DeliverNewPolicy} }

// Replays reports whether a subscription starting at p delivers the event stored at stream
// sequence seq (when it matches the filter). NewOnly replays nothing stored.
func (p StartPosition) Replays(seq uint64) bool {
	switch p.policy {
	case jetstream.DeliverAllPolicy:
		return true
	case jetstream.DeliverByStartSequencePolicy:
		return seq >= p.seq
	}
	return false
}

// ReceivedEvent is an event with its place in the stream.
type ReceivedEvent struct {
	Event
	// StreamSeq is the event's sequence in EVENTS, for resuming with FromSeq.
	StreamSeq uint64
	// Subject is the subject it was published on.
	Subject string
}

// EventSubscription yields events in stream order from an ordered consumer (which the server
// forgets when the subscription stops). Next is for one goroutine at a time; Stop may be called
// from any goroutine, and twice.
type EventSubscription struct {
	it jetstream.MessagesContext
}

// SubscribeEvents follows the events matching f, starting at from.
func (c *Client) SubscribeEvents(ctx context.Context, f EventFilter, from StartPosition) (*EventSubscription, error) {
	subject, err := f.subject(c.subj)
	if err != nil {
		return nil, err
	}
	if from.policy == jetstream.DeliverByStartSequencePolicy && from.seq == 0 {
		return nil, errors.New("queue: FromSeq needs a sequence >= 1")
	}
	cons, err := c.js.OrderedConsumer(ctx, c.cfg.EventsStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{subject},
		DeliverPolicy:  from.policy,
		OptStartSeq:    from.seq,
	})
	if err != nil {
		return nil, fmt.Errorf("queue: subscribe to %s: %w", subject, err)
	}
	it, err := cons.Messages()
	if err != nil {
		return nil, fmt.Errorf("queue: subscribe to %s: %w", subject, err)
	}
	return &EventSubscription{it: it}, nil
}

// Next waits for the next event. A message that is not an Event yields an error wrapping
// ErrBadEvent (with its StreamSeq set); the subscription goes on. After Stop, Next returns
// ErrClosed.
func (s *EventSubscription) Next(ctx context.Context) (ReceivedEvent, error) {
	msg, err := s.it.Next(jetstream.NextContext(ctx))
	if err != nil {
		if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
			return ReceivedEvent{}, ErrClosed
		}
		if ctx.Err() != nil {
			return ReceivedEvent{}, ctx.Err()
		}
		return ReceivedEvent{}, fmt.Errorf("queue: next event: %w", err)
	}
	re := ReceivedEvent{Subject: msg.Subject()}
	if md, err := msg.Metadata(); err == nil {
		re.StreamSeq = md.Sequence.Stream
	}
	if err := json.Unmarshal(msg.Data(), &re.Event); err != nil {
		return re, fmt.Errorf("%w at stream seq %d: %v", ErrBadEvent, re.StreamSeq, err)
	}
	return re, nil
}

// Stop ends the subscription.
func (s *EventSubscription) Stop() { s.it.Stop() }
