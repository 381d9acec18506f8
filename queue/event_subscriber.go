package queue

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// EventFilter selects the events of a subscription. Empty fields match everything: RootTaskID
// alone selects a whole task tree, TaskID one task.
type EventFilter struct {
	// Tenants limits the subscription to these tenants' events; empty means every tenant's
	// (a component that serves all of them, such as the dispatcher for an admin). A caller
	// acting for a principal passes the principal's tenants, so another tenant's events are
	// never read, whatever the task ids asked for.
	Tenants    []string
	RootTaskID string
	TaskID     string
	// Kind keeps one kind of event ("SESSION_END"); "" keeps all.
	Kind string
}

// subjects returns the filter subjects: one per tenant, or one with a
// wildcard tenant.
func (f EventFilter) subjects(s Subjects) ([]string, error) {
	root, task, kind := "*", "*", "*"
	for _, v := range []struct {
		field string
		val   string
		dst   *string
	}{{"EventFilter.RootTaskID", f.RootTaskID, &root}, {"EventFilter.TaskID", f.TaskID, &task}, {"EventFilter.Kind", f.Kind, &kind}} {
		if v.val == "" {
			continue
		}
		if err := checkToken(v.field, v.val); err != nil {
			return nil, err
		}
		*v.dst = v.val
	}
	if len(f.Tenants) == 0 {
		return []string{s.Event("*", root, task, kind)}, nil
	}
	out := make([]string, 0, len(f.Tenants))
	for _, t := range f.Tenants {
		if err := checkToken("EventFilter.Tenants entry", t); err != nil {
			return nil, err
		}
		if sub := s.Event(t, root, task, kind); !slices.Contains(out, sub) {
			out = append(out, sub)
		}
	}
	return out, nil
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
	// Raw is the message's data as stored: the event's JSON, on one line
	// when EventPublisher wrote it (compact). Set by Next and NextRaw.
	Raw []byte
}

// EventSubscription yields events in stream order from an ordered consumer (which the server
// forgets when the subscription stops). Next is for one goroutine at a time; Stop may be called
// from any goroutine, and twice.
type EventSubscription struct {
	it jetstream.MessagesContext
}

// SubscribeEvents follows the events matching f, starting at from. Events stored under the
// subject layout before tenants (<prefix>.events.<root>.<task>.<kind>) match no filter.
func (c *Client) SubscribeEvents(ctx context.Context, f EventFilter, from StartPosition) (*EventSubscription, error) {
	subjects, err := f.subjects(c.subj)
	if err != nil {
		return nil, err
	}
	if from.policy == jetstream.DeliverByStartSequencePolicy && from.seq == 0 {
		return nil, errors.New("queue: FromSeq needs a sequence >= 1")
	}
	cons, err := c.js.OrderedConsumer(ctx, c.cfg.EventsStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: subjects,
		DeliverPolicy:  from.policy,
		OptStartSeq:    from.seq,
	})
	if err != nil {
		return nil, fmt.Errorf("queue: subscribe to %s: %w", strings.Join(subjects, ", "), err)
	}
	it, err := cons.Messages()
	if err != nil {
		return nil, fmt.Errorf("queue: subscribe to %s: %w", strings.Join(subjects, ", "), err)
	}
	return &EventSubscription{it: it}, nil
}

// Next waits for the next event. A message that is not an Event yields an error wrapping
// ErrBadEvent (with its StreamSeq set); the subscription goes on. After Stop, Next returns
// ErrClosed.
func (s *EventSubscription) Next(ctx context.Context) (ReceivedEvent, error) {
	msg, err := s.next(ctx)
	if err != nil {
		return ReceivedEvent{}, err
	}
	re := received(msg)
	if err := json.Unmarshal(re.Raw, &re.Event); err != nil {
		return re, fmt.Errorf("%w at stream seq %d: %v", ErrBadEvent, re.StreamSeq, err)
	}
	return re, nil
}

// NextRaw is Next for a relay that passes events on as stored (ReceivedEvent.Raw): it checks
// that the message is a JSON object and takes Kind from the subject's last token, but decodes
// nothing else, so only Kind of ReceivedEvent.Event is set. Decoding each event only to encode
// it again was most of what a dispatcher's event stream cost.
func (s *EventSubscription) NextRaw(ctx context.Context) (ReceivedEvent, error) {
	msg, err := s.next(ctx)
	if err != nil {
		return ReceivedEvent{}, err
	}
	re := received(msg)
	if i := strings.LastIndexByte(re.Subject, '.'); i >= 0 {
		re.Kind = re.Subject[i+1:]
	}
	if t := bytes.TrimLeft(re.Raw, " \t\r\n"); len(t) == 0 || t[0] != '{' || !json.Valid(t) || re.Kind == "" {
		return re, fmt.Errorf("%w at stream seq %d: not a JSON object on an event subject", ErrBadEvent, re.StreamSeq)
	}
	return re, nil
}

func (s *EventSubscription) next(ctx context.Context) (jetstream.Msg, error) {
	msg, err := s.it.Next(jetstream.NextContext(ctx))
	if err != nil {
		if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
			return nil, ErrClosed
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("queue: next event: %w", err)
	}
	return msg, nil
}

func received(msg jetstream.Msg) ReceivedEvent {
	re := ReceivedEvent{Subject: msg.Subject(), Raw: msg.Data()}
	if md, err := msg.Metadata(); err == nil {
		re.StreamSeq = md.Sequence.Stream
	}
	return re
}

// Stop ends the subscription.
func (s *EventSubscription) Stop() { s.it.Stop() }
