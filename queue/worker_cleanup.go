package queue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DrainWorker takes every task message still stored for workerID (children pinned to a worker
// that is gone for good), acknowledges them, and deletes the worker's consumer, so nothing is
// left behind on its subject. The fleet calls it once it has declared the worker dead, and fails
// or re-plans the returned tasks. A message whose body is corrupt is returned with only TaskID
// (from its header) set. Calling it for a live worker steals that worker's work.
//
// It stops when the stream holds no message on the worker's subject, not when a pull comes back
// empty: the server counts a new message into a consumer shortly after storing it, and a
// message delivered to the worker before it died comes back only after AckWait. Until ctx ends
// it waits for such messages.
func (c *Client) DrainWorker(ctx context.Context, workerID string) ([]TaskMessage, error) {
	if err := checkToken("worker id", workerID); err != nil {
		return nil, err
	}
	subject := c.subj.Worker(workerID)
	cfg := c.consumerConfig(workerConsumer(workerID), subject)
	cfg.InactiveThreshold = c.cfg.WorkerInactiveThreshold
	cons, err := c.js.CreateOrUpdateConsumer(ctx, c.cfg.TasksStream, cfg)
	if err != nil {
		return nil, fmt.Errorf("queue: drain worker %s: %w", workerID, err)
	}
	var out []TaskMessage
	if err := c.drain(ctx, cons, subject, &out); err != nil {
		return out, fmt.Errorf("queue: drain worker %s: %w", workerID, err)
	}
	err = c.js.DeleteConsumer(ctx, c.cfg.TasksStream, workerConsumer(workerID))
	if err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return out, fmt.Errorf("queue: drain worker %s: delete consumer: %w", workerID, err)
	}
	return out, nil
}

// drainWait bounds one waiting pull of DrainWorker.
const drainWait = time.Second

// drain acknowledges and appends to out every message of cons until the stream holds none on
// subject: batches without waiting while messages come, then, while the stream still holds
// some, one waiting pull at a time.
func (c *Client) drain(ctx context.Context, cons jetstream.Consumer, subject string, out *[]TaskMessage) error {
	for {
		n, err := drainBatch(ctx, cons, 100, 0, out)
		if err != nil {
			return err
		}
		if n > 0 {
			continue
		}
		left, err := c.storedOn(ctx, subject)
		if err != nil || left == 0 {
			return err
		}
		if _, err := drainBatch(ctx, cons, 1, drainWait, out); err != nil {
			return err
		}
	}
}

// drainBatch pulls up to n messages, waiting up to wait (0: not at all), acknowledges each and
// appends it to out. It returns how many came.
func drainBatch(ctx context.Context, cons jetstream.Consumer, n int, wait time.Duration, out *[]TaskMessage) (int, error) {
	var msgs []jetstream.Msg
	_, err := fetchBatch(ctx, cons, n, wait, func(m jetstream.Msg) { msgs = append(msgs, m) })
	if err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, nats.ErrTimeout) &&
		!errors.Is(err, context.DeadlineExceeded) {
		return 0, err // a deadline of ctx itself ends the drain at the next stream read
	}
	for _, msg := range msgs {
		m, err := decodeTaskMessage(msg.Data())
		if err != nil {
			m = TaskMessage{TaskID: msg.Headers().Get(HeaderTaskID)}
		}
		if err := msg.DoubleAck(ctx); err != nil {
			return 0, fmt.Errorf("ack: %w", err)
		}
		*out = append(*out, m)
	}
	return len(msgs), nil
}

// storedOn reports how many messages the tasks stream holds on subject.
func (c *Client) storedOn(ctx context.Context, subject string) (uint64, error) {
	s, err := c.js.Stream(ctx, c.cfg.TasksStream)
	if err != nil {
		return 0, err
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		return 0, err
	}
	return info.State.Subjects[subject], nil
}
