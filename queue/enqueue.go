package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfleet/agentfleet/internal/tracing"
)

// Target is where a task message goes: a shared queue any worker serving it may pull from, or
// one worker's own subject (for children that must see a local workspace). Build it with
// ToQueue or ToWorker.
type Target struct {
	queue    string
	priority int    // of a shared queue: its level (see ToQueueAt)
	key      string // concurrency key of a shared queue (see ToQueueFor); "" = none
	front    bool   // the key's front lane (see Front)
	workerID string
}

// ToQueue targets priority 0 of the shared queue name
// (<prefix>.tasks.<name>); ToQueueAt targets the level of a priority.
func ToQueue(name string) Target { return Target{queue: name} }

// ToWorker targets one worker's own subject (<prefix>.tasks.worker.<id>).
func ToWorker(workerID string) Target { return Target{workerID: workerID} }

// String names the target for logs: "queue default", "queue default (priority 5) key team-a"
// or "worker w-1".
func (t Target) String() string {
	if t.workerID != "" {
		return "worker " + t.workerID
	}
	out := "queue " + t.queue
	if t.priority != 0 {
		out += fmt.Sprintf(" (priority %d)", t.priority)
	}
	if t.key != "" {
		out += " key " + t.key
	}
	if t.front {
		out += " (front lane)"
	}
	return out
}

func (t Target) subject(s Subjects) (string, error) {
	if t.workerID != "" {
		if err := checkToken("worker id", t.workerID); err != nil {
			return "", err
		}
		return s.Worker(t.workerID), nil
	}
	if err := CheckQueueName(t.queue); err != nil {
		return "", err
	}
	if t.key != "" {
		if err := CheckConcurrencyKey(t.key); err != nil {
			return "", err
		}
		if t.front {
			return s.TasksKey(t.queue, t.priority, frontKey(t.key)), nil
		}
		return s.TasksKey(t.queue, t.priority, t.key), nil
	}
	return s.TasksLevel(t.queue, t.priority), nil
}

// EnqueueResult reports where a message landed.
type EnqueueResult struct {
	// StreamSeq is the message's sequence in TASKS (the original's, for a duplicate).
	StreamSeq uint64
	// Duplicate is true when a message with the same id was already in the duplicate window,
	// so nothing new was enqueued.
	Duplicate bool
}

// Enqueue publishes msg on a shared queue and waits for JetStream to store it. A non-empty
// msgID becomes the Nats-Msg-Id: publishing the same id again within Config.DuplicateWindow
// (a retried submit) stores nothing and reports Duplicate. Use the task's idempotency key or
// "start:<task-id>".
func (c *Client) Enqueue(ctx context.Context, queue string, msg TaskMessage, msgID string) (EnqueueResult, error) {
	return c.Send(ctx, ToQueue(queue), msg, msgID)
}

// EnqueueToWorker publishes msg on one worker's own subject; see Enqueue.
func (c *Client) EnqueueToWorker(ctx context.Context, workerID string, msg TaskMessage, msgID string) (EnqueueResult, error) {
	return c.Send(ctx, ToWorker(workerID), msg, msgID)
}

// Send publishes msg to a target under msgID; Enqueue and EnqueueToWorker call it. The fleet
// builds every task message and its id in one place (the router, fleet/internal/taskops).
func (c *Client) Send(ctx context.Context, to Target, msg TaskMessage, msgID string) (EnqueueResult, error) {
	m, opts, err := c.taskMsg(ctx, to, msg, msgID)
	if err != nil {
		return EnqueueResult{}, err
	}
	ack, err := c.publish(ctx, m, opts...)
	if err != nil {
		return EnqueueResult{}, fmt.Errorf("queue: enqueue task %s to %s: %w", msg.TaskID, to, err)
	}
	c.hint(to, m.Subject)
	return c.acked(ack), nil
}

// publish publishes a task message and waits for the stream to store it. A replicated stream
// answers a publish whose message id another publish has in process (proposed to its peers, not
// yet stored) with error 10158, which says neither that the message is stored nor that it is
// not: publish waits and publishes it again, and the stream then reports a duplicate or stores
// it. Publishes of one id at once are common: every process that records the end of a parked
// parent's children wakes it under the same id, workers move a gone worker's messages together,
// a client retries a submission.
func (c *Client) publish(ctx context.Context, m *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	for delay := inProcessFirstWait; ; delay = min(2*delay, inProcessMaxWait) {
		ack, err := c.js.PublishMsg(ctx, m, opts...)
		if !inProcess(err) {
			return ack, err
		}
		pause(ctx, delay)
		if ctx.Err() != nil {
			return nil, err
		}
	}
}

// The waits of publish between attempts: doubling from the first to the longest.
const (
	inProcessFirstWait = 5 * time.Millisecond
	inProcessMaxWait   = 250 * time.Millisecond
)

// inProcess reports the stream's answer to a publish whose message id another publish has in
// process (error 10158, which nats.go names no constant for).
func inProcess(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == errCodeDuplicateInProcess
}

const errCodeDuplicateInProcess jetstream.ErrorCode = 10158

// taskMsg validates msg and builds its NATS message and publish options;
// the message carries ctx's trace context (trace.go).
func (c *Client) taskMsg(ctx context.Context, to Target, msg TaskMessage, msgID string) (*nats.Msg, []jetstream.PublishOpt, error) {
	subject, err := to.subject(c.subj)
	if err != nil {
		return nil, nil, err
	}
	if err := msg.Validate(); err != nil {
		return nil, nil, err
	}
	if msg.EnqueuedAt.IsZero() {
		msg.EnqueuedAt = time.Now().UTC()
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return nil, nil, fmt.Errorf("queue: encode task message: %w", err)
	}
	m := nats.NewMsg(subject)
	m.Data = body
	m.Header.Set(HeaderTaskID, msg.TaskID)
	m.Header.Set(HeaderMsgType, string(msg.Type))
	tracing.Inject(ctx, m.Header)
	tracing.InjectStored(msg.TraceParent, m.Header)
	var opts []jetstream.PublishOpt
	if msgID != "" {
		opts = append(opts, jetstream.WithMsgID(msgID))
	}
	return m, opts, nil
}

// acked counts a stored message and reports it.
func (c *Client) acked(ack *jetstream.PubAck) EnqueueResult {
	if ack.Duplicate {
		c.metrics.EnqueueDuplicates.Add(1)
	} else {
		c.metrics.Enqueued.Add(1)
	}
	return EnqueueResult{StreamSeq: ack.Sequence, Duplicate: ack.Duplicate}
}
