package queue

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Delivery is one pulled task message, owned by the caller until it is settled with exactly one
// of Ack, Nak, Term or Abandon. From Pull until then a goroutine sends InProgress heartbeats every
// AckWait/3, so a long session keeps its message; settling stops it. A Delivery that is never
// settled leaks that goroutine and blocks its message until the connection closes.
//
// Settling methods are safe to call concurrently; the first wins and later ones return
// ErrSettled. The exported fields are read-only.
type Delivery struct {
	// Message is the decoded body; valid only when DecodeErr is nil.
	Message TaskMessage
	// DecodeErr wraps ErrBadMessage when the body is not a valid TaskMessage. Such a delivery
	// should be termed with the reason (it would fail the same way on every redelivery).
	DecodeErr error
	// Raw is the message body as stored.
	Raw []byte
	// TaskID is the task the message is for, from its header (so known even for a corrupt body).
	TaskID string
	// Source is the queue the message came from, or "worker" for the worker's own subject.
	Source string
	// Subject is the message's subject.
	Subject string
	// StreamSeq is the message's sequence in TASKS.
	StreamSeq uint64
	// NumDelivered is 1 on the first delivery and counts up with every redelivery.
	NumDelivered uint64
	// Published is when JetStream stored the message.
	Published time.Time

	c       *Client
	msg     jetstream.Msg
	release func()        // frees the caller's slot; nil when Pull was used directly
	token   jetstream.Msg // the gate token of the task's key (gate.go), or nil

	once   sync.Once
	stopHB chan struct{}
	hbDone chan struct{}
}

// newDelivery makes the Delivery of msg, pulled from source src, holding
// token (nil: none), and starts its heartbeats.
func newDelivery(c *Client, src string, msg jetstream.Msg, token jetstream.Msg) *Delivery {
	d := &Delivery{
		Raw:     msg.Data(),
		TaskID:  msg.Headers().Get(HeaderTaskID),
		Source:  src,
		Subject: msg.Subject(),
		c:       c,
		msg:     msg,
		token:   token,
		stopHB:  make(chan struct{}),
		hbDone:  make(chan struct{}),
	}
	if md, err := msg.Metadata(); err == nil {
		d.StreamSeq = md.Sequence.Stream
		d.NumDelivered = md.NumDelivered
		d.Published = md.Timestamp
	}
	d.Message, d.DecodeErr = decodeTaskMessage(d.Raw)
	if d.TaskID == "" {
		d.TaskID = d.Message.TaskID
	}
	c.metrics.Pulled.Add(1)
	if d.NumDelivered > 1 {
		c.metrics.Redelivered.Add(1)
	}
	if d.DecodeErr != nil {
		c.metrics.BadMessages.Add(1)
	}
	go d.heartbeat(c.cfg.AckWait / 3)
	return d
}

// heartbeat tells the server the message, and the token it holds, are still being worked on
// until stopHB closes.
func (d *Delivery) heartbeat(every time.Duration) {
	defer close(d.hbDone)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-d.stopHB:
			return
		case <-t.C:
			if err := d.msg.InProgress(); err != nil {
				d.c.metrics.HeartbeatErrors.Add(1)
			}
			if d.token != nil {
				_ = d.token.InProgress() // a lost one costs the token's AckWait, as the message's
			}
		}
	}
}

// settle runs fn once: it stops the heartbeats, then acknowledges, then hands back the
// token (the key may start another task), then frees the slot.
func (d *Delivery) settle(fn func() error) error {
	err := ErrSettled
	d.once.Do(func() {
		close(d.stopHB)
		<-d.hbDone
		err = fn()
		if d.token != nil {
			d.c.handBack([]jetstream.Msg{d.token})
		}
		if d.release != nil {
			d.release()
		}
	})
	return err
}

// Ack acknowledges the message and waits for the server to confirm (a double ack), so a
// finished task is not redelivered. Use it when the task reached a final state, or was parked.
// If the confirmation fails, the message may be redelivered after AckWait; the store's
// compare-and-set states make that redelivery a no-op.
func (d *Delivery) Ack(ctx context.Context) error {
	return d.settle(func() error {
		if err := d.msg.DoubleAck(ctx); err != nil {
			return fmt.Errorf("queue: ack task %s (seq %d): %w", d.TaskID, d.StreamSeq, err)
		}
		d.c.metrics.Acked.Add(1)
		return nil
	})
}

// Nak hands the message back for redelivery after delay (0: at once), for a retryable failure
// such as a provider rate limit (pass its retry-after). Every redelivery counts towards
// MaxDeliver. Nak returns once the server has received the nak.
func (d *Delivery) Nak(ctx context.Context, delay time.Duration) error {
	return d.settle(func() error {
		var err error
		if delay > 0 {
			err = d.msg.NakWithDelay(delay)
		} else {
			err = d.msg.Nak()
		}
		if err == nil {
			err = d.flush(ctx)
		}
		if err != nil {
			return fmt.Errorf("queue: nak task %s (seq %d): %w", d.TaskID, d.StreamSeq, err)
		}
		d.c.metrics.Naked.Add(1)
		return nil
	})
}

// Term tells the server never to redeliver the message, for a permanent failure (a corrupt
// message, an invalid spec). The server removes it and publishes a termination advisory that
// reaches the dead-letter handler (see WatchDeadLetters) with the task id and reason. Term
// returns once the server has received it.
func (d *Delivery) Term(ctx context.Context, reason string) error {
	return d.settle(func() error {
		err := d.msg.TermWithReason(encodeTermReason(d.TaskID, reason))
		if err == nil {
			err = d.flush(ctx)
		}
		if err != nil {
			return fmt.Errorf("queue: term task %s (seq %d): %w", d.TaskID, d.StreamSeq, err)
		}
		d.c.metrics.Termed.Add(1)
		return nil
	})
}

// flushTimeout bounds the wait for the server to receive a nak or term
// when the caller's ctx has no deadline (nats.go refuses a flush without one).
const flushTimeout = 10 * time.Second

// flush waits until the server has received what was published, within
// ctx's deadline or flushTimeout.
func (d *Delivery) flush(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, flushTimeout)
		defer cancel()
	}
	return d.c.nc.FlushWithContext(ctx)
}

// Abandon stops the heartbeats and frees the slot without settling: the server redelivers the
// message after AckWait (counting a delivery). Use it when the connection is gone, or in tests.
//
// A token the Delivery holds comes back after AckWait too, with the message.
func (d *Delivery) Abandon() {
	abandon := func() error {
		d.token = nil // not handed back: it returns with the message
		return nil
	}
	if d.settle(abandon) == nil {
		d.c.metrics.Abandoned.Add(1)
	}
}
