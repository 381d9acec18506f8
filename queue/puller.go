package queue

import (
	"context"
	"errors"
	"fmt"
	"sync"
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
	// Keys are the operator's settings per concurrency key (fairness.go); a key not named
	// takes DefaultKey (zero: no maximum, weight 1). Every worker must have the same: a
	// worker tops a key's gate up to its own maximum and retires the tokens over it (gate.go).
	Keys       map[string]KeyLimit
	DefaultKey KeyLimit
	// Gate, when set, is asked before every pull of Serve and holds the pull until it returns
	// nil, so a worker can stop taking work it could not start (its store is away, say). It
	// must return ctx's error once ctx ends.
	Gate func(ctx context.Context) error
	// QueueGate, when set, is asked before every pull of a shared queue's loop, as Gate is, and
	// holds that loop only: a paused queue (fleet/internal/holds) is not pulled.
	QueueGate func(ctx context.Context, queue string) error
}

// source is one consumer a Puller pulls from.
type source struct {
	name  string // queue name, or "worker"
	prio  int    // its priority level (0 for the worker's)
	front bool   // a key's front lane (fairness.go)
	gate  *gate  // the gate of its key when the key has a maximum (gate.go), or nil
	cfg   jetstream.ConsumerConfig
	cons  atomic.Pointer[jetstream.Consumer]
}

// Puller pulls task messages from the durable consumers of some queues and, optionally, one
// worker's own subject: in batches sized to the free slots with Serve, or one at a time with
// Claim and Pull. It is safe for concurrent use. A Puller holds no goroutine outside these
// calls and needs no Close.
type Puller struct {
	c       *Client
	gate    func(ctx context.Context) error // nil: always open
	qgate   func(ctx context.Context, queue string) error
	sources []*source   // the worker source first, then each queue's fixed levels, highest first
	groups  [][]*source // the worker source alone, then each queue's fixed levels, highest first
	next    atomic.Uint64

	keys       map[string]KeyLimit
	defaultKey KeyLimit

	pullMu    sync.Mutex         // guards pullKeyed
	pullKeyed map[string]*source // Pull's key sources by subject (pull_keys.go)

	gates gates // of the keys with a maximum (gate.go)
}

// queueOf is the queue of a group: "" for the worker's subject.
func (p *Puller) queueOf(g []*source) string {
	if g[0].name == workerToken {
		return ""
	}
	return g[0].name
}

// NewPuller creates or updates the durable consumers behind pc and returns a Puller over them.
// Every worker serving a queue shares that queue's consumer (work-queue streams allow one
// consumer per subject); a worker's own consumer is deleted by the server after
// Config.WorkerInactiveThreshold without pulls, and made again by the worker's next pull (or the
// next NewPuller with the same id), which then receives the messages still stored for it. So is
// any other consumer of the Puller's that the server or an operator removed (fetchRaw).
func (c *Client) NewPuller(ctx context.Context, pc PullerConfig) (*Puller, error) {
	if len(pc.Queues) == 0 && pc.WorkerID == "" {
		return nil, errors.New("queue: PullerConfig needs at least one of Queues or WorkerID")
	}
	p := &Puller{c: c, gate: pc.Gate, qgate: pc.QueueGate, keys: pc.Keys, defaultKey: pc.DefaultKey}
	for key, l := range pc.Keys {
		if err := CheckConcurrencyKey(key); err != nil {
			return nil, err
		}
		if err := l.check(fmt.Sprintf("concurrency key %q", key)); err != nil {
			return nil, err
		}
	}
	if err := pc.DefaultKey.check("the default concurrency key"); err != nil {
		return nil, err
	}
	if pc.WorkerID != "" {
		if err := checkToken("PullerConfig.WorkerID", pc.WorkerID); err != nil {
			return nil, err
		}
		cfg := c.consumerConfig(workerConsumer(pc.WorkerID), c.subj.Worker(pc.WorkerID))
		cfg.InactiveThreshold = c.cfg.WorkerInactiveThreshold
		p.sources = append(p.sources, &source{name: workerToken, cfg: cfg})
		p.groups = append(p.groups, p.sources)
	}
	seen := map[string]bool{}
	for _, q := range pc.Queues {
		if err := CheckQueueName(q); err != nil {
			return nil, err
		}
		if seen[q] {
			return nil, fmt.Errorf("queue: PullerConfig.Queues lists %q twice", q)
		}
		seen[q] = true
		var levels []*source
		for _, prio := range fixedLevels {
			levels = append(levels, &source{name: q, prio: prio, cfg: c.consumerConfig(fixedConsumer(q, prio), c.subj.TasksLevel(q, prio))})
		}
		p.sources = append(p.sources, levels...)
		p.groups = append(p.groups, levels)
	}
	for _, s := range p.sources {
		err := retryWhileForming(ctx, func(ctx context.Context) error {
			_, err := p.ensure(ctx, s)
			return err
		})
		if err != nil {
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
// With one source Pull keeps one pull request of Config.PullWait open. With several (a queue
// has three fixed priority levels and those made on demand) it first asks each source for a
// message without waiting (the worker's own subject first, then every queue's subjects that
// hold messages, highest level first: keyedNow), then waits
// Config.PollInterval on one source at a time, in turn. The preference covers messages the
// server has already counted for a consumer: it counts a new message shortly after
// acknowledging its publish, so one published a moment ago may come after older shared work.
//
// A pull request cannot be withdrawn: when ctx ends just as the server delivers, that message
// stays unacknowledged and is redelivered after AckWait.
func (p *Puller) Pull(ctx context.Context) (*Delivery, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(p.sources) == 1 {
			d, err := p.fetchOne(ctx, p.sources[0], p.c.cfg.PullWait)
			if d != nil || err != nil {
				return d, err
			}
			continue
		}
		if w := p.sources[0]; w.name == workerToken {
			if d, err := p.fetchOne(ctx, w, 0); d != nil || err != nil {
				return d, err
			}
		}
		keyed, err := p.keyedNow(ctx)
		if err != nil {
			return nil, err
		}
		for _, s := range keyed {
			if d, err := p.fetchOne(ctx, s, 0); d != nil || err != nil {
				return d, err
			}
		}
		s := p.sources[p.next.Add(1)%uint64(len(p.sources))]
		if d, err := p.fetchOne(ctx, s, p.c.cfg.PollInterval); d != nil || err != nil {
			return d, err
		}
	}
}

// fetch asks one source for up to n messages, waiting up to wait (0: not at all), and calls
// each with every message, as a Delivery whose heartbeats have started, as it arrives. It
// returns how many came; none in time is not an error. A source of a key with a maximum asks
// for no more messages than it got tokens of the key's gate (gate.go), each Delivery holding
// one, and hands back those left over; with no token it does not ask, and waits as long as an
// empty pull would.
func (p *Puller) fetch(ctx context.Context, s *source, n int, wait time.Duration, each func(*Delivery)) (int, error) {
	got, _, err := p.fetchFrom(ctx, s, n, wait, each)
	return got, err
}

// fetchFrom is fetch that also reports full: s is a source of a key with a maximum whose
// gate had no token left.
func (p *Puller) fetchFrom(ctx context.Context, s *source, n int, wait time.Duration, each func(*Delivery)) (got int, full bool, err error) {
	if s.gate == nil {
		got, err = p.fetchRaw(ctx, s, n, wait, func(msg jetstream.Msg) { each(newDelivery(p.c, s.name, msg, nil)) })
		return got, false, err
	}
	// Tokens are taken whatever ctx, so that every token the server hands out
	// is either used or handed back: one dropped by a pull that ctx cut off
	// would be held until AckWait, the key short of it meanwhile.
	tokens, err := p.takeTokens(context.WithoutCancel(ctx), s.gate, n)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil || len(tokens) == 0 {
		p.c.handBack(tokens)
		if err == nil && wait > 0 {
			pause(ctx, wait)
		}
		return 0, err == nil, err
	}
	used := 0
	got, err = p.fetchRaw(ctx, s, len(tokens), wait, func(msg jetstream.Msg) {
		each(newDelivery(p.c, s.name, msg, tokens[used]))
		used++
	})
	p.c.handBack(tokens[used:])
	return got, false, err
}

// fetchRaw asks one source for up to n messages, waiting up to wait (0: not at all), and calls
// each with every message as it arrives, making the source's consumer again when the server
// has removed it.
func (p *Puller) fetchRaw(ctx context.Context, s *source, n int, wait time.Duration, each func(jetstream.Msg)) (int, error) {
	got, err := fetchBatch(ctx, *s.cons.Load(), n, wait, each)
	if consumerGone(err) {
		cons, err := p.ensure(ctx, s)
		if err != nil {
			return got, err
		}
		more, err := fetchBatch(ctx, cons, n-got, wait, each)
		return got + more, p.pullErr(ctx, s, err)
	}
	return got, p.pullErr(ctx, s, err)
}

// consumerGone reports a pull that found its consumer gone: deleted by an operator, or by the
// server after its inactivity threshold (a worker whose every slot was busy pulls nothing, and
// neither its own consumer nor an idle key's sees an acknowledgement meanwhile). A pull pending
// when the consumer went gets ErrConsumerDeleted; a later one finds no responders, the answer
// to a request nobody subscribes to, which is also what a pull gets while a new consumer's
// leader is being elected, where making it again is an update that changes nothing.
func consumerGone(err error) bool {
	return errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrConsumerDeleted) ||
		errors.Is(err, nats.ErrNoResponders)
}

// pullErr maps a pull request's error: nil when it merely ended without (more) messages.
func (p *Puller) pullErr(ctx context.Context, s *source, err error) error {
	if err = emptyPullErr(ctx, err); err != nil {
		return fmt.Errorf("queue: pull from %s: %w", s.cfg.FilterSubject, err)
	}
	return nil
}

// emptyPullErr is nil when a pull request merely ended without (more) messages, ctx's error
// when ctx ended, else err.
func emptyPullErr(ctx context.Context, err error) error {
	switch {
	case err == nil, errors.Is(err, nats.ErrTimeout), errors.Is(err, jetstream.ErrNoMessages):
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, context.DeadlineExceeded):
		return nil // the pull's own deadline
	}
	return err
}

// fetchOne asks one source for one message, waiting up to wait (0: not at all). It returns
// (nil, nil) when no message came in time.
func (p *Puller) fetchOne(ctx context.Context, s *source, wait time.Duration) (*Delivery, error) {
	var d *Delivery
	_, err := p.fetch(ctx, s, 1, wait, func(got *Delivery) { d = got })
	if err != nil && d != nil {
		return d, nil // the message came; the error is for the next pull to meet
	}
	return d, err
}

// minPullWait is the shortest pull request worth sending.
const minPullWait = 10 * time.Millisecond
