package queue

import (
	"context"

	"github.com/agentfleet/agentfleet/internal/tracing"
)

// Every task message carries the trace context of the publisher's ctx (a
// W3C "Traceparent" header, package internal/tracing) when ctx holds a
// span, so a task's trace goes from the submission through the queue to
// the worker, and from a worker to its children and back to a woken
// parent.

// TraceContext returns ctx with the trace context the delivery's message
// carries as its remote parent, or ctx as is when it carries none.
func (d *Delivery) TraceContext(ctx context.Context) context.Context {
	if d.msg == nil {
		return ctx
	}
	return tracing.Extract(ctx, d.msg.Headers())
}
