package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// DrainWorker takes every task message still stored for workerID (children pinned to a worker
// that is gone for good), acknowledges them, and deletes the worker's consumer, so nothing is
// left behind on its subject. The fleet calls it once it has declared the worker dead, and fails
// or re-plans the returned tasks. A message whose body is corrupt is returned with only TaskID
// (from its header) set. Calling it for a live worker steals that worker's work.
func (c *Client) DrainWorker(ctx context.Context, workerID string) ([]TaskMessage, error) {
	if err := checkToken("worker id", workerID); err != nil {
		return nil, err
	}
	cfg := c.consumerConfig(workerConsumer(workerID), c.subj.Worker(workerID))
	cfg.InactiveThreshold = c.cfg.WorkerInactiveThreshold
	cons, err := c.js.CreateOrUpdateConsumer(ctx, c.cfg.TasksStream, cfg)
	if err != nil {
		return nil, fmt.Errorf("queue: drain worker %s: %w", workerID, err)
	}
	var out []TaskMessage
	for {
		batch, err := cons.FetchNoWait(100)
		if err != nil {
			return out, fmt.Errorf("queue: drain worker %s: %w", workerID, err)
		}
		n := 0
		for msg := range batch.Messages() {
			n++
			m, err := decodeTaskMessage(msg.Data())
			if err != nil {
				m = TaskMessage{TaskID: msg.Headers().Get(HeaderTaskID)}
			}
			if err := msg.DoubleAck(ctx); err != nil {
				return out, fmt.Errorf("queue: drain worker %s: ack: %w", workerID, err)
			}
			out = append(out, m)
		}
		if err := batch.Error(); err != nil {
			return out, fmt.Errorf("queue: drain worker %s: %w", workerID, err)
		}
		if n == 0 {
			break
		}
	}
	err = c.js.DeleteConsumer(ctx, c.cfg.TasksStream, workerConsumer(workerID))
	if err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return out, fmt.Errorf("queue: drain worker %s: delete consumer: %w", workerID, err)
	}
	return out, nil
}
