package queue

import (
	"context"

	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Batch publishing: SendBatch publishes asynchronously, batchWindow
// messages at a time, and then waits for all of their acknowledgements
// together, so a batch costs a round trip per window instead of one per
// message. It has its own JetStream context (batchJS), whose pending
// acknowledgements mix neither with Send nor with events.
const (
	batchWindow     = 1000
	batchAckTimeout = 30 * time.Second // an acknowledgement not received by then fails its message
	batchMaxPending = 16 * batchWindow // over all concurrent SendBatch calls; beyond it a publish waits
)

// Outgoing is one message of SendBatch.
type Outgoing struct {
	To    Target
	Msg   TaskMessage
	MsgID string // the Nats-Msg-Id, as for Send
}

// SendResult is the outcome of one message of SendBatch: where it landed,
// or why it did not.
type SendResult struct {
	EnqueueResult
	Err error
}

// SendBatch publishes msgs as Send would, each with its message id, and
// returns one result per message in their order once the stream has
// acknowledged every one (or ctx ended, or an acknowledgement did not come
// within 30 s). A failed message does not stop the others; publishing a
// failed one again with its message id stores it at most once.
func (c *Client) SendBatch(ctx context.Context, msgs []Outgoing) []SendResult {
	out := make([]SendResult, len(msgs))
	js, err := c.batchJetStream()
	if err != nil {
		for i := range out {
			out[i].Err = err
		}
		return out
	}
	for start := 0; start < len(msgs); start += batchWindow {
		end := min(start+batchWindow, len(msgs))
		c.sendWindow(ctx, js, msgs[start:end], out[start:end])
	}
	return out
}

// sendWindow publishes one window of messages and waits for their
// acknowledgements.
func (c *Client) sendWindow(ctx context.Context, js jetstream.JetStream, msgs []Outgoing, out []SendResult) {
	futs := make([]jetstream.PubAckFuture, len(msgs))
	for i, o := range msgs {
		m, opts, err := c.taskMsg(ctx, o.To, o.Msg, o.MsgID)
		if err == nil {
			futs[i], err = js.PublishMsgAsync(m, append(opts, jetstream.WithStallWait(batchAckTimeout))...)
		}
		if err != nil {
			out[i].Err = fmt.Errorf("queue: enqueue task %s to %s: %w", o.Msg.TaskID, o.To, err)
		}
	}
	for i, f := range futs {
		if f == nil {
			continue
		}
		select {
		case ack := <-f.Ok():
			out[i].EnqueueResult = c.acked(ack)
			c.hint(msgs[i].To, f.Msg().Subject)
		case err := <-f.Err():
			if inProcess(err) { // publish again, waiting for the other publish of its id (publish)
				var ack *jetstream.PubAck
				if ack, err = c.publish(ctx, f.Msg()); err == nil {
					out[i].EnqueueResult = c.acked(ack)
					c.hint(msgs[i].To, f.Msg().Subject)
					continue
				}
			}
			out[i].Err = fmt.Errorf("queue: enqueue task %s to %s: %w", msgs[i].Msg.TaskID, msgs[i].To, err)
		case <-ctx.Done():
			out[i].Err = fmt.Errorf("queue: enqueue task %s to %s: waiting for the acknowledgement: %w", msgs[i].Msg.TaskID, msgs[i].To, ctx.Err())
		}
	}
}

// batchJetStream returns the JetStream context of SendBatch, made on first use.
func (c *Client) batchJetStream() (jetstream.JetStream, error) {
	c.batchOnce.Do(func() {
		c.batchJS, c.batchErr = jetstream.New(c.nc,
			jetstream.WithPublishAsyncMaxPending(batchMaxPending),
			jetstream.WithPublishAsyncTimeout(batchAckTimeout))
		if c.batchErr != nil {
			c.batchErr = fmt.Errorf("queue: JetStream context for batches: %w", c.batchErr)
		}
	})
	return c.batchJS, c.batchErr
}

// batchState is the lazily made JetStream context of SendBatch.
type batchState struct {
	batchOnce sync.Once
	batchJS   jetstream.JetStream
	batchErr  error
}
