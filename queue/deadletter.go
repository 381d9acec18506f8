package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Advisory subject prefixes; the stream and consumer names follow.
const (
	advisoryMaxDeliveries = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES"
	advisoryTerminated    = "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED"
)

// deadLetterConsumer is the durable consumer every dead-letter watcher shares.
const deadLetterConsumer = "deadletters"

// DeadLetterReason says why a task message died.
type DeadLetterReason string

// The dead-letter reasons.
const (
	// DeadMaxDeliveries: the message was delivered MaxDeliver times without an ack.
	DeadMaxDeliveries DeadLetterReason = "max_deliveries"
	// DeadTerminated: a worker (or the server) terminated the message.
	DeadTerminated DeadLetterReason = "terminated"
)

// DeadLetter is a task message that will never be delivered again.
type DeadLetter struct {
	Reason DeadLetterReason
	// TaskID is the task the message was for; empty only when it cannot be known (a message
	// terminated by something other than Delivery.Term, and already removed).
	TaskID string
	// Message is the decoded body when it was still in the stream and valid, else nil.
	Message *TaskMessage
	// Raw is the body when it was still in the stream (max deliveries), else nil.
	Raw []byte
	// StreamSeq is the message's sequence in TASKS.
	StreamSeq uint64
	// Deliveries is how many times it was delivered.
	Deliveries uint64
	// Consumer is the consumer that gave up on it (queue-<name>, band-high-<name>,
	// band-low-<name>, key-<hash> or worker-<id>).
	Consumer string
	// TermReason is the reason given to Term (DeadTerminated only), without the task id.
	TermReason string
	// Time is when the server gave up.
	Time time.Time
}

// DeadLetterHandler records a dead letter, typically by moving the task to failed with the
// reason dead_letter. It must be idempotent: a dead letter is handled at least once, and a task
// a worker already failed before terming it shows up here too. A returned error retries the dead
// letter after Config.DeadLetterRetryDelay.
type DeadLetterHandler func(ctx context.Context, dl DeadLetter) error

// advisory is the JSON of both advisories we capture.
type advisory struct {
	Type       string    `json:"type"`
	Time       time.Time `json:"timestamp"`
	Stream     string    `json:"stream"`
	Consumer   string    `json:"consumer"`
	StreamSeq  uint64    `json:"stream_seq"`
	Deliveries uint64    `json:"deliveries"`
	Reason     string    `json:"reason"`
}

// DeadLetterWatcher runs a DeadLetterHandler until Stop.
type DeadLetterWatcher struct {
	cc     jetstream.ConsumeContext
	cancel context.CancelFunc
}

// WatchDeadLetters hands every dead task message to h. The server's max-delivery and
// termination advisories for TASKS are captured by the dead-letter stream, so none is lost
// while no watcher runs; every watcher (one per dispatcher) shares one durable consumer, so
// each dead letter goes to one of them. After h succeeds for a max-delivery dead letter, the
// message (which a work-queue stream keeps after the consumer gives up on it) is deleted from
// TASKS.
func (c *Client) WatchDeadLetters(ctx context.Context, h DeadLetterHandler) (*DeadLetterWatcher, error) {
	cons, err := c.js.CreateOrUpdateConsumer(ctx, c.cfg.DeadLetterStream, jetstream.ConsumerConfig{
		Durable:     deadLetterConsumer,
		Description: "agentfleet dead-letter watchers",
		AckPolicy:   jetstream.AckExplicitPolicy,
		AckWait:     c.cfg.AckWait,
		Replicas:    c.cfg.Replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("queue: dead-letter consumer on %s: %w", c.cfg.DeadLetterStream, err)
	}
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	cc, err := cons.Consume(func(m jetstream.Msg) { c.handleAdvisory(hctx, h, m) })
	if err != nil {
		cancel()
		return nil, fmt.Errorf("queue: consume dead letters: %w", err)
	}
	return &DeadLetterWatcher{cc: cc, cancel: cancel}, nil
}

// Stop ends the watcher and waits until the handler is not running. Safe to call twice.
func (w *DeadLetterWatcher) Stop() {
	w.cancel()
	w.cc.Stop()
	<-w.cc.Closed()
}

func (c *Client) handleAdvisory(ctx context.Context, h DeadLetterHandler, m jetstream.Msg) {
	dl, err := c.deadLetterFrom(ctx, m)
	if err != nil {
		_ = m.Term() // not an advisory we understand; retrying cannot help
		return
	}
	if err := h(ctx, dl); err != nil {
		_ = m.NakWithDelay(c.cfg.DeadLetterRetryDelay)
		return
	}
	if dl.Reason == DeadMaxDeliveries {
		err := c.tasks.DeleteMsg(ctx, dl.StreamSeq)
		if err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
			_ = m.NakWithDelay(c.cfg.DeadLetterRetryDelay)
			return
		}
	}
	c.metrics.DeadLetters.Add(1)
	_ = m.Ack()
}

func (c *Client) deadLetterFrom(ctx context.Context, m jetstream.Msg) (DeadLetter, error) {
	var a advisory
	if err := json.Unmarshal(m.Data(), &a); err != nil {
		return DeadLetter{}, err
	}
	dl := DeadLetter{
		StreamSeq:  a.StreamSeq,
		Deliveries: a.Deliveries,
		Consumer:   a.Consumer,
		Time:       a.Time,
	}
	switch {
	case strings.HasPrefix(m.Subject(), advisoryMaxDeliveries+"."):
		dl.Reason = DeadMaxDeliveries
	case strings.HasPrefix(m.Subject(), advisoryTerminated+"."):
		dl.Reason = DeadTerminated
		dl.TaskID, dl.TermReason = decodeTermReason(a.Reason)
	default:
		return DeadLetter{}, fmt.Errorf("unexpected advisory subject %s", m.Subject())
	}
	c.attachStored(ctx, &dl)
	return dl, nil
}

// attachStored adds the body and task id of the message if TASKS still holds it.
func (c *Client) attachStored(ctx context.Context, dl *DeadLetter) {
	raw, err := c.tasks.GetMsg(ctx, dl.StreamSeq)
	if err != nil {
		return
	}
	dl.Raw = raw.Data
	if dl.TaskID == "" {
		dl.TaskID = raw.Header.Get(HeaderTaskID)
	}
	if msg, err := decodeTaskMessage(raw.Data); err == nil {
		dl.Message = &msg
		if dl.TaskID == "" {
			dl.TaskID = msg.TaskID
		}
	}
}

// termTaskPrefix starts the reason Delivery.Term sends, so the termination advisory (which
// carries no headers, and whose message a work-queue stream has already removed) names the task.
const termTaskPrefix = "agentfleet-task "

func encodeTermReason(taskID, reason string) string {
	if taskID == "" {
		return reason
	}
	return termTaskPrefix + taskID + ": " + reason
}

func decodeTermReason(s string) (taskID, reason string) {
	rest, ok := strings.CutPrefix(s, termTaskPrefix)
	if !ok {
		return "", s
	}
	id, reason, ok := strings.Cut(rest, ": ")
	if !ok || !isToken(id) {
		return "", s
	}
	return id, reason
}
