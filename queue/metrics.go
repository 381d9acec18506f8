package queue

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
)

// Metrics are monotonic counters shared by everything one Client made. The fleet exports them
// as Prometheus counters (for example with prometheus.NewCounterFunc reading a field). All fields
// are safe to read at any time.
type Metrics struct {
	// Enqueued counts task messages stored; EnqueueDuplicates those dropped as duplicates.
	Enqueued          atomic.Uint64
	EnqueueDuplicates atomic.Uint64
	// Pulled counts deliveries handed to callers; Redelivered those with a delivery count > 1.
	Pulled      atomic.Uint64
	Redelivered atomic.Uint64
	// BadMessages counts deliveries whose body could not be decoded.
	BadMessages atomic.Uint64
	// Acked, Naked, Termed and Abandoned count how deliveries were settled.
	Acked     atomic.Uint64
	Naked     atomic.Uint64
	Termed    atomic.Uint64
	Abandoned atomic.Uint64
	// HeartbeatErrors counts InProgress signals that could not be sent.
	HeartbeatErrors atomic.Uint64
	// DeadLetters counts dead letters handed to a handler successfully.
	DeadLetters atomic.Uint64
	// EventsPublished counts events the EVENTS stream acknowledged; EventsFailed the publishes
	// NATS refused or never acknowledged (each is published again until stored); EventsLarge
	// events whose data was replaced by a preview and a reference.
	EventsPublished atomic.Uint64
	EventsFailed    atomic.Uint64
	EventsLarge     atomic.Uint64
}

// Lag is the backlog of one queue consumer, the dispatcher's queue-lag metric (and what KEDA
// scales workers on).
type Lag struct {
	// Pending is the number of messages not yet delivered.
	Pending uint64
	// AckPending is the number delivered and not yet settled (running tasks).
	AckPending int
	// Waiting is the number of pull requests waiting for messages (idle slots).
	Waiting int
	// Delivered counts the consumer's deliveries since it was created, redeliveries included.
	Delivered uint64
}

// Total is Pending + AckPending: work that has not finished.
func (l Lag) Total() uint64 { return l.Pending + uint64(l.AckPending) }

// QueueLag reads the backlog of a shared queue over all its subjects: its priority levels and
// its concurrency keys (priority.go, fairness.go). Pending counts the messages stored on them
// less those delivered and not settled, which the consumers report (AckPending, Waiting and
// Delivered are their sums), so a key whose consumer no worker has made yet is counted too.
// Level 0's consumer exists once a Puller served the queue; before that QueueLag
// reports an error wrapping jetstream.ErrConsumerNotFound.
func (c *Client) QueueLag(ctx context.Context, queue string) (Lag, error) {
	if err := CheckQueueName(queue); err != nil {
		return Lag{}, err
	}
	if _, err := c.consumerLag(ctx, queueConsumer(queue)); err != nil {
		return Lag{}, err
	}
	stored, err := c.storedOnQueue(ctx, queue)
	if err != nil {
		return Lag{}, err
	}
	var sum Lag
	under := c.subj.Tasks(queue) + "."
	st, err := c.js.Stream(ctx, c.cfg.TasksStream)
	if err != nil {
		return Lag{}, fmt.Errorf("queue: stream %s: %w", c.cfg.TasksStream, err)
	}
	lister := st.ListConsumers(ctx)
	for info := range lister.Info() {
		f := info.Config.FilterSubject
		if c.subj.isGate(queue, f) || f != c.subj.Tasks(queue) && !strings.HasPrefix(f, under) {
			continue // a gate's tokens are no tasks
		}
		sum.AckPending += info.NumAckPending
		sum.Waiting += info.NumWaiting
		sum.Delivered += info.Delivered.Consumer
	}
	if err := lister.Err(); err != nil {
		return Lag{}, fmt.Errorf("queue: consumers of %s: %w", c.cfg.TasksStream, err)
	}
	if stored > uint64(sum.AckPending) {
		sum.Pending = stored - uint64(sum.AckPending)
	}
	return sum, nil
}

// storedOnQueue counts the messages TASKS holds for a queue: on <prefix>.tasks.<queue> and
// under it, less its gates' tokens (gate.go), which are no tasks.
func (c *Client) storedOnQueue(ctx context.Context, queue string) (uint64, error) {
	var n uint64
	for _, filter := range []string{c.subj.Tasks(queue), c.subj.Tasks(queue) + ".>"} {
		counts, err := c.storedOn(ctx, filter)
		if err != nil {
			return 0, err
		}
		for subj, m := range counts {
			if !c.subj.isGate(queue, subj) {
				n += m
			}
		}
	}
	return n, nil
}

// LevelLag reads the backlog of the unkeyed subject of priority level 1, 0
// or -1 of a shared queue (the levels with a fixed consumer: priority.go).
func (c *Client) LevelLag(ctx context.Context, queue string, prio int) (Lag, error) {
	if err := CheckQueueName(queue); err != nil {
		return Lag{}, err
	}
	if !slices.Contains(fixedLevels, prio) {
		return Lag{}, fmt.Errorf("queue: level %d has no fixed consumer: read QueueLag", prio)
	}
	return c.consumerLag(ctx, fixedConsumer(queue, prio))
}

// WorkerLag reads the backlog of one worker's own consumer.
func (c *Client) WorkerLag(ctx context.Context, workerID string) (Lag, error) {
	if err := checkToken("worker id", workerID); err != nil {
		return Lag{}, err
	}
	return c.consumerLag(ctx, workerConsumer(workerID))
}

func (c *Client) consumerLag(ctx context.Context, name string) (Lag, error) {
	cons, err := c.js.Consumer(ctx, c.cfg.TasksStream, name)
	if err != nil {
		return Lag{}, fmt.Errorf("queue: consumer %s on %s: %w", name, c.cfg.TasksStream, err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return Lag{}, fmt.Errorf("queue: consumer %s info: %w", name, err)
	}
	return Lag{Pending: info.NumPending, AckPending: info.NumAckPending, Waiting: info.NumWaiting,
		Delivered: info.Delivered.Consumer}, nil
}
