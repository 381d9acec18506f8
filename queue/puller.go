package queue

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// PullerConfig names what a worker serves.
type PullerConfig struct {
	// Queues are the shared queues to pull from (at least one unless WorkerID is set).
	Queues []string
	// WorkerID, when set, also pulls the worker's own subject; that work is preferred, since a
	// parent is usually waiting for it.
	WorkerID string
}

// source is one consumer a Puller pulls from.
type source struct {
	name string // queue name, or "worker"
	cfg  jetstream.ConsumerConfig
	cons atomic.Pointer[jetstream.Consumer]
}

// Puller pulls one task message at a time from the durable consumers of some queues and,
// optionally, one worker's own subject. It is safe for concurrent use: each slot-holder may
// call Pull. A Puller holds no goroutine and needs no Close.
type Puller struct {
	c       *Client
	sources []*source // the worker source first
	next    atomic.Uint64
}

// NewPuller creates or updates the durable consumers behind pc and returns a Puller over them.
// Every worker serving a queue shares that queue's consumer (work-queue streams allow one
// consumer per subject); a worker's own consumer is deleted by the server after
// Config.WorkerInactiveThreshold without pulls, and recreated by the next NewPuller with the
// same id, which then receives the messages still stored for it.
func (c *Client) NewPuller(ctx context.Context, pc PullerConfig) (*Puller, error) {
	if len(pc.Queues) == 0 && pc.WorkerID == "" {
		return nil, errors.New("queue: PullerConfig needs at least one of Queues or WorkerID")
	}
	p := &Puller{c: c}
	if pc.WorkerID != "" {
		if err := checkToken("PullerConfig.WorkerID", pc.WorkerID); err != nil {
			return nil, err
		}
		cfg := c.consumerConfig(workerConsumer(pc.WorkerID), c.subj.Worker(pc.WorkerID))
		cfg.InactiveThreshold = c.cfg.WorkerInactiveThreshold
		p.sources = append(p.sources, &source{name: workerToken, cfg: cfg})
	}
	seen := map[string]bool{}
	for _, q := range pc.Queues {
		if err := checkQueueName(q); err != nil {
			return nil, err
		}
		if seen[q] {
			return nil, fmt.Errorf("queue: PullerConfig.Queues lists %q twice", q)
		}
		seen[q] = true
		p.sources = append(p.sources, &source{name: q, cfg: c.consumerConfig(queueConsumer(q), c.subj.Tasks(q))})
	}
	for _, s := range p.sources {
		if _, err := p.ensure(ctx, s); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (c *Client) consumerConfig(name, filter string) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:       name,
		Description:   "agentfleet workers pulling " + filter,
		FilterSubject: filter,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       c.cfg.AckWait,
		MaxDeliver:    c.cfg.MaxDeliver,
		MaxAckPending: c.cfg.MaxAckPending,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		Replicas:      c.cfg.Replicas,
	}
}

func (p *Puller) ensure(ctx context.Context, s *source) (jetstream.Consumer, error) {
	cons, err := p.c.js.CreateOrUpdateConsumer(ctx, p.c.cfg.TasksStream, s.cfg)
	if err != nil {
		return nil, fmt.Errorf("queue: create or update consumer %s (filter %s): %w", s.cfg.Durable, s.cfg.FilterSubject, err)
	}
	s.cons.Store(&cons)
	return cons, nil
}

// Claim acquires a slot, then pulls one message. The slot is released when the delivery is
// settled (Ack, Nak, Term or Abandon), or at once if Claim fails.
func (p *Puller) Claim(ctx context.Context, slots *Slots) (*Delivery, error) {
	release, err := slots.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	d, err := p.Pull(ctx)
	if err != nil {
		release()
		return nil, err
	}
	d.release = release
	return d, nil
}

// Pull waits for one message and returns it as a Delivery whose heartbeats have started. The
// caller must already hold a slot for it. Pull returns ctx's error when ctx ends, and other
// errors (a lost connection, missing permissions) for the caller to log and retry after a pause.
//
// With one source Pull keeps one pull request of Config.PullWait open. With several it first
// asks each source for a message without waiting (the worker's own subject first), then waits
// Config.PollInterval on one source at a time, in turn.
//
// A pull request cannot be withdrawn: when ctx ends just as the server delivers, that message
// stays unacknowledged and is redelivered after AckWait.
func (p *Puller) Pull(ctx context.Context) (*Delivery, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(p.sources) == 1 {
			d, err := p.fetch(ctx, p.sources[0], p.c.cfg.PullWait)
			if d != nil || err != nil {
				return d, err
			}
			continue
		}
		for _, s := range p.sources {
			if d, err := p.fetch(ctx, s, 0); d != nil || err != nil {
				return d, err
			}
		}
		s := p.sources[p.next.Add(1)%uint64(len(p.sources))]
		if d, err := p.fetch(ctx, s, p.c.cfg.PollInterval); d != nil || err != nil {
			return d, err
		}
	}
}

// fetch asks one source for one message, waiting up to wait (0: not at all). It returns
// (nil, nil) when no message came in time.
func (p *Puller) fetch(ctx context.Context, s *source, wait time.Duration) (*Delivery, error) {
	msg, err := p.fetchOnce(ctx, s, wait)
	if errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrConsumerDeleted) {
		// Deleted by an operator or for inactivity: recreate it and try again.
		if _, err := p.ensure(ctx, s); err != nil {
			return nil, err
		}
		msg, err = p.fetchOnce(ctx, s, wait)
	}
	switch {
	case msg != nil:
		return newDelivery(p.c, s.name, msg), nil
	case err == nil, errors.Is(err, nats.ErrTimeout), errors.Is(err, jetstream.ErrNoMessages):
		return nil, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, context.DeadlineExceeded):
		return nil, nil // our own pull deadline
	default:
		return nil, fmt.Errorf("queue: pull from %s: %w", s.cfg.FilterSubject, err)
	}
}

func (p *Puller) fetchOnce(ctx context.Context, s *source, wait time.Duration) (jetstream.Msg, error) {
	cons := *s.cons.Load()
	if wait == 0 {
		batch, err := cons.FetchNoWait(1)
		if err != nil {
			return nil, err
		}
		return firstMsg(batch)
	}
	fctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if dl, _ := fctx.Deadline(); time.Until(dl) < minPullWait {
		// Too little time for a pull request (the client refuses one that has expired).
		<-fctx.Done()
		return nil, nil
	}
	batch, err := cons.Fetch(1, jetstream.FetchContext(fctx))
	if err != nil {
		return nil, err
	}
	return firstMsg(batch)
}

// minPullWait is the shortest pull request worth sending.
const minPullWait = 10 * time.Millisecond

func firstMsg(batch jetstream.MessageBatch) (jetstream.Msg, error) {
	for msg := range batch.Messages() {
		return msg, nil
	}
	return nil, batch.Error()
}
