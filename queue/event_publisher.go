package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// eventAckTimeout bounds the wait for the stream's acknowledgement of one publish; one not
// acknowledged in time is published again.
const eventAckTimeout = 10 * time.Second

// Backoff between the publishes of an event the stream has not stored: a leader election
// takes a few seconds, a lost quorum as long as it lasts.
const (
	firstRepublishDelay = 100 * time.Millisecond
	maxRepublishDelay   = 5 * time.Second
)

// EventPublisher publishes session events without making the session wait for each
// acknowledgement: Publish puts the event on a bounded queue that one goroutine publishes
// asynchronously, in order, and another confirms. No event is dropped. An event the stream does
// not acknowledge (its leader died, it lost quorum, the connection broke) is published again,
// with the same message id so the stream stores it once, until the stream has it; meanwhile the
// queue fills and Publish waits for room, which slows the session down instead of losing its
// events. Terminal events (Config.TerminalKinds, or PublishConfirmed) also wait for the stream's
// acknowledgement. A republished event lands after later ones in the stream: consumers order a
// session's events by Seq. Safe for concurrent use; Close it before closing the connection.
type EventPublisher struct {
	c        *Client
	js       jetstream.JetStream
	terminal map[string]bool

	mu      sync.RWMutex // guards closed and sends on queue against close(queue)
	closed  bool
	queue   chan *pubItem   // written by Publish, read by the send goroutine
	acks    chan pendingAck // written by the send goroutine, read by the ack goroutine
	done    chan struct{}   // closed when both goroutines have ended
	abandon chan struct{}   // closed when Close's ctx ends: stop republishing
	stopCtx context.Context // cancelled with abandon: ends a republish in flight
	stop    context.CancelFunc
	once    sync.Once
}

type pubItem struct {
	msg    *nats.Msg
	id     string
	result chan error // nil unless the publisher waits for the acknowledgement
}

type pendingAck struct {
	fut jetstream.PubAckFuture
	it  *pubItem
}

// NewEventPublisher starts a publisher. It uses its own JetStream context on the Client's
// connection, so its asynchronous acknowledgements do not mix with task publishing.
func (c *Client) NewEventPublisher() (*EventPublisher, error) {
	js, err := jetstream.New(c.nc,
		jetstream.WithPublishAsyncMaxPending(c.cfg.EventBuffer),
		jetstream.WithPublishAsyncTimeout(eventAckTimeout))
	if err != nil {
		return nil, fmt.Errorf("queue: JetStream context for events: %w", err)
	}
	p := &EventPublisher{
		c:        c,
		js:       js,
		terminal: map[string]bool{},
		queue:    make(chan *pubItem, c.cfg.EventBuffer),
		acks:     make(chan pendingAck, c.cfg.EventBuffer),
		done:     make(chan struct{}),
		abandon:  make(chan struct{}),
	}
	p.stopCtx, p.stop = context.WithCancel(context.Background())
	for _, k := range c.cfg.TerminalKinds {
		p.terminal[k] = true
	}
	ackDone := make(chan struct{})
	go p.send()
	go p.confirm(ackDone)
	go func() { <-ackDone; close(p.done) }()
	return p, nil
}

// Publish queues ev for publishing on <prefix>.events.<tenant>.<root>.<task>.<kind>. It fills V
// and Time when zero, Tenant with DefaultTenant and RootTaskID with TaskID when empty (a root task), validates the ids and kind, and
// replaces data larger than Config.EventPayloadLimit with a LargePayload. It waits for room in
// the queue (or for ctx to end); for a terminal kind it also waits until the stream has stored
// the event.
func (p *EventPublisher) Publish(ctx context.Context, ev Event) error {
	return p.publish(ctx, ev, p.terminal[ev.Kind])
}

// PublishConfirmed publishes ev like a terminal event: it waits for the stream's
// acknowledgement whatever the kind.
func (p *EventPublisher) PublishConfirmed(ctx context.Context, ev Event) error {
	return p.publish(ctx, ev, true)
}

func (p *EventPublisher) publish(ctx context.Context, ev Event, confirmed bool) error {
	it, err := p.item(ev)
	if err != nil {
		return err
	}
	if confirmed {
		it.result = make(chan error, 1)
	}
	if err := p.put(ctx, it); err != nil {
		return err
	}
	if !confirmed {
		return nil
	}
	select {
	case err := <-it.result:
		return err
	case <-ctx.Done():
		return fmt.Errorf("queue: waiting for the acknowledgement of event %s: %w", ev.ID, ctx.Err())
	}
}

func (p *EventPublisher) item(ev Event) (*pubItem, error) {
	if ev.V == 0 {
		ev.V = EventVersion
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now().UTC()
	}
	if ev.RootTaskID == "" {
		ev.RootTaskID = ev.TaskID
	}
	if ev.Tenant == "" {
		ev.Tenant = DefaultTenant
	}
	if err := ev.validate(); err != nil {
		return nil, err
	}
	if len(ev.Data) > p.c.cfg.EventPayloadLimit && !json.Valid(ev.Data) { // small Data is checked as it is encoded
		return nil, fmt.Errorf("queue: Event.Data of event %s (%s) is not valid JSON", ev.ID, ev.Kind)
	}
	var large bool
	ev.Data, large = shrink(&ev, p.c.cfg.EventPayloadLimit, p.c.cfg.EventPreviewBytes)
	if large {
		p.c.metrics.EventsLarge.Add(1)
	}
	body, err := encodeEvent(&ev)
	if err != nil {
		return nil, err
	}
	msg := nats.NewMsg(p.c.subj.Event(ev.Tenant, ev.RootTaskID, ev.TaskID, ev.Kind))
	msg.Header.Set(jetstream.MsgIDHeader, ev.ID) // the stream stores a republished event once
	msg.Data = body
	return &pubItem{msg: msg, id: ev.ID}, nil
}

// put adds it to the queue, waiting for room.
func (p *EventPublisher) put(ctx context.Context, it *pubItem) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return ErrClosed
	}
	select {
	case p.queue <- it:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("queue: waiting for room to publish event %s: %w", it.id, ctx.Err())
	}
}

// send publishes queued events in order until the queue is closed.
func (p *EventPublisher) send() {
	defer close(p.acks)
	for it := range p.queue {
		if p.abandoned() {
			p.finish(it, fmt.Errorf("queue: event %s not stored, publisher closed", it.id))
			continue
		}
		// Blocking here while too many acknowledgements are outstanding is the
		// back-pressure: the queue fills and Publish waits.
		fut, err := p.js.PublishMsgAsync(it.msg, jetstream.WithStallWait(eventAckTimeout))
		if err != nil {
			// The failure is counted by republish, which publishes the event again.
			p.finish(it, p.republish(it))
			continue
		}
		p.acks <- pendingAck{fut: fut, it: it}
	}
}

// confirm waits for each acknowledgement in publish order, republishing what failed.
func (p *EventPublisher) confirm(done chan<- struct{}) {
	defer close(done)
	for pa := range p.acks {
		select {
		case <-pa.fut.Ok():
			p.finish(pa.it, nil)
		case <-pa.fut.Err(): //nolint:errcheck // dropped: republish tries again and reports its own
			p.finish(pa.it, p.republish(pa.it))
		case <-p.abandon:
			p.finish(pa.it, fmt.Errorf("queue: event %s not confirmed, publisher closed", pa.it.id))
		}
	}
}

// republish publishes it again, synchronously, at once and then with backoff, until the stream
// acknowledges it or the publisher is abandoned (Close's ctx ended). Its message id makes the
// stream drop a copy it already holds (a publish whose acknowledgement was lost).
func (p *EventPublisher) republish(it *pubItem) error {
	var err error
	for delay := firstRepublishDelay; ; delay = min(2*delay, maxRepublishDelay) {
		p.c.metrics.EventsFailed.Add(1)
		ctx, cancel := context.WithTimeout(p.stopCtx, eventAckTimeout)
		_, err = p.js.PublishMsg(ctx, it.msg)
		cancel()
		if err == nil {
			return nil
		}
		t := time.NewTimer(delay)
		select {
		case <-p.abandon:
			t.Stop()
			return fmt.Errorf("queue: event %s not stored, publisher closed: %w", it.id, err)
		case <-t.C:
		}
	}
}

// abandoned reports whether Close gave up on the events in flight.
func (p *EventPublisher) abandoned() bool {
	select {
	case <-p.abandon:
		return true
	default:
		return false
	}
}

func (p *EventPublisher) finish(it *pubItem, err error) {
	if err == nil {
		p.c.metrics.EventsPublished.Add(1)
	}
	if it.result != nil {
		it.result <- err
	}
}

// Close stops accepting events and waits until the stream has stored every queued event, or
// ctx ends: then it stops republishing and waiting for acknowledgements, returns once its
// goroutines have ended (at most the 10 s a stalled publish may wait), with an error: the
// events not yet stored are lost. Safe to call twice.
func (p *EventPublisher) Close(ctx context.Context) error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.queue)
	}
	p.mu.Unlock()
	select {
	case <-p.done:
		p.stop()
		return nil
	case <-ctx.Done():
		p.once.Do(func() { close(p.abandon); p.stop() })
		<-p.done
		return fmt.Errorf("queue: closing the event publisher with events in flight: %w", ctx.Err())
	}
}
