package queue

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// OrphanedWorkers returns the ids of workers whose own subject holds messages while their
// consumer is gone. The server deletes a worker's consumer after Config.WorkerInactiveThreshold
// without pulls, and a running worker pulls all the time, so these workers have been gone at
// least that long: their pinned work (children, resumes of parked parents) waits for nobody.
func (c *Client) OrphanedWorkers(ctx context.Context) ([]string, error) {
	stored, err := c.storedOn(ctx, c.subj.Worker("*"))
	if err != nil {
		return nil, err
	}
	prefix := c.subj.Worker("")
	var ids []string
	for subject, n := range stored {
		id := strings.TrimPrefix(subject, prefix)
		if n == 0 || !isToken(id) {
			continue
		}
		_, err := c.js.Consumer(ctx, c.cfg.TasksStream, workerConsumer(id))
		switch {
		case errors.Is(err, jetstream.ErrConsumerNotFound):
			ids = append(ids, id)
		case err != nil:
			return ids, fmt.Errorf("queue: consumer of worker %s: %w", id, err)
		}
	}
	return ids, nil
}

// MoveWorkerMessages moves every message stored for workerID (a worker gone for good, see
// OrphanedWorkers) to the target route names for it, and deletes the worker's consumer. Each
// message is published unchanged (a corrupt body stays corrupt, for its worker to fail) with a
// message id naming its place in the stream, then acknowledged: a move cut short is redone by
// the next call, and the server drops the repeat. route gets the decoded message, or only the
// TaskID of its header when the body is corrupt; an error from route stops the move, leaving that
// message for the next call. Calling it for a live worker steals that
// worker's work.
//
// It stops when the stream holds no message on the worker's subject, not when a pull comes back
// empty: the server counts a new message into a consumer shortly after storing it, and a
// message delivered to the worker before it died comes back only after AckWait. Until ctx ends
// it waits for such messages. It returns how many messages it moved.
func (c *Client) MoveWorkerMessages(ctx context.Context, workerID string, route func(TaskMessage) (Target, error)) (int, error) {
	if err := checkToken("worker id", workerID); err != nil {
		return 0, err
	}
	subject := c.subj.Worker(workerID)
	cfg := c.consumerConfig(workerConsumer(workerID), subject)
	cfg.InactiveThreshold = c.cfg.WorkerInactiveThreshold
	cons, err := c.js.CreateOrUpdateConsumer(ctx, c.cfg.TasksStream, cfg)
	if err != nil {
		return 0, fmt.Errorf("queue: move work of worker %s: %w", workerID, err)
	}
	moved := 0
	move := func(msg jetstream.Msg) error {
		if err := c.republish(ctx, workerID, msg, route); err != nil {
			return err
		}
		moved++
		return nil
	}
	if err := c.drain(ctx, cons, subject, move); err != nil {
		return moved, fmt.Errorf("queue: move work of worker %s: %w", workerID, err)
	}
	err = c.js.DeleteConsumer(ctx, c.cfg.TasksStream, workerConsumer(workerID))
	if err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return moved, fmt.Errorf("queue: move work of worker %s: delete consumer: %w", workerID, err)
	}
	return moved, nil
}

// republish publishes msg, unchanged, to the target route names for it, with the message id
// "moved:<worker>:<stream seq>".
func (c *Client) republish(ctx context.Context, workerID string, msg jetstream.Msg, route func(TaskMessage) (Target, error)) error {
	m, err := decodeTaskMessage(msg.Data())
	if err != nil {
		m = TaskMessage{TaskID: msg.Headers().Get(HeaderTaskID)}
	}
	to, err := route(m)
	if err != nil {
		return fmt.Errorf("route of task %s: %w", m.TaskID, err)
	}
	subject, err := to.subject(c.subj)
	if err != nil {
		return fmt.Errorf("route of task %s: %w", m.TaskID, err)
	}
	meta, err := msg.Metadata()
	if err != nil {
		return err
	}
	out := nats.NewMsg(subject)
	out.Data = msg.Data()
	maps.Copy(out.Header, msg.Headers())
	id := "moved:" + workerID + ":" + strconv.FormatUint(meta.Sequence.Stream, 10)
	if _, err := c.publish(ctx, out, jetstream.WithMsgID(id)); err != nil {
		return fmt.Errorf("move task %s to %s: %w", m.TaskID, to, err)
	}
	return nil
}

// drainWait bounds one waiting pull of a drain.
const drainWait = time.Second

// drain hands every message of cons to handle and acknowledges it once handle returned nil,
// until the stream holds none on subject: batches without waiting while messages come, then,
// while the stream still holds some, one waiting pull at a time.
func (c *Client) drain(ctx context.Context, cons jetstream.Consumer, subject string, handle func(jetstream.Msg) error) error {
	for {
		n, err := drainBatch(ctx, cons, 100, 0, handle)
		if err != nil {
			return err
		}
		if n > 0 {
			continue
		}
		stored, err := c.storedOn(ctx, subject)
		if err != nil || stored[subject] == 0 {
			return err
		}
		if _, err := drainBatch(ctx, cons, 1, drainWait, handle); err != nil {
			return err
		}
	}
}

// drainBatch pulls up to n messages, waiting up to wait (0: not at all), hands each to handle
// and acknowledges it. It returns how many came.
func drainBatch(ctx context.Context, cons jetstream.Consumer, n int, wait time.Duration, handle func(jetstream.Msg) error) (int, error) {
	var msgs []jetstream.Msg
	_, err := fetchBatch(ctx, cons, n, wait, func(m jetstream.Msg) { msgs = append(msgs, m) })
	if err := emptyPullErr(ctx, err); err != nil {
		return 0, err
	}
	for _, msg := range msgs {
		if err := handle(msg); err != nil {
			return 0, err // unacknowledged: back after AckWait, for the next drain
		}
		if err := msg.DoubleAck(ctx); err != nil {
			return 0, fmt.Errorf("ack: %w", err)
		}
	}
	return len(msgs), nil
}

// storedOn reports how many messages the tasks stream holds on each subject matching filter.
func (c *Client) storedOn(ctx context.Context, filter string) (map[string]uint64, error) {
	s, err := c.js.Stream(ctx, c.cfg.TasksStream)
	if err != nil {
		return nil, fmt.Errorf("queue: stream %s: %w", c.cfg.TasksStream, err)
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		return nil, fmt.Errorf("queue: stream %s info: %w", c.cfg.TasksStream, err)
	}
	return info.State.Subjects, nil
}
