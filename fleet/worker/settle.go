package worker

import (
	"context"
	"errors"
	"time"

	"github.com/agentfleet/agentfleet/queue"
)

// settleOp is what becomes of a delivery.
type settleOp int

const (
	opAck     settleOp = iota // done with it: the task is final, parked or someone else's
	opNak                     // hand it back for redelivery after a delay
	opTerm                    // never deliver it again (a permanent failure)
	opAbandon                 // leave it: the server redelivers it after AckWait
)

// settlement is what the code handling a delivery decided to do with it.
// Handlers return one; apply, the one place that talks to the delivery,
// carries it out. So the executor decides and the settler acts, and a
// decision cannot be applied twice or forgotten.
type settlement struct {
	op     settleOp
	delay  time.Duration // opNak
	reason string        // opTerm
}

func ack() settlement                    { return settlement{op: opAck} }
func nak(delay time.Duration) settlement { return settlement{op: opNak, delay: delay} }
func term(reason string) settlement      { return settlement{op: opTerm, reason: reason} }
func abandon() settlement                { return settlement{op: opAbandon} }

// settleTimeout bounds one settle: an ack waits for the server's
// confirmation, a nak or a term for the flush that sends it.
const settleTimeout = 10 * time.Second

// apply settles d as s says. A worker that has halted (ctx ended) settles
// nothing: it abandons the delivery, as a killed process would leave it.
func (w *Worker) apply(ctx context.Context, d *queue.Delivery, s settlement) {
	if ctx.Err() != nil || s.op == opAbandon {
		d.Abandon()
		return
	}
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	var err error
	switch s.op {
	case opAck:
		err = d.Ack(ctx)
	case opNak:
		w.metrics.naks.Inc()
		err = d.Nak(ctx, s.delay)
	case opTerm:
		err = d.Term(ctx, s.reason)
	}
	if err != nil && !errors.Is(err, queue.ErrSettled) {
		w.log.Warn("settling delivery", "task_id", d.TaskID, "err", err)
	}
}
