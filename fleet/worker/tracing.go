package worker

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/internal/tracing"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// A delivery continues the trace its message carries (package
// internal/tracing): a task.queue_wait span from the message's publish
// to its claim, then a task.claim span over the claim and the whole run,
// with the session (task.session), its agent spans, the checks and the
// delivery inside. A resume or input is a new round of the same trace:
// its claim span links to the span that published the message.

// startClaim starts the spans of delivery d.
func (w *Worker) startClaim(ctx context.Context, d *queue.Delivery) (context.Context, trace.Span) {
	ctx = d.TraceContext(ctx) // passed on to children even when this worker does not trace
	if !tracing.On() {
		return ctx, tracing.Off()
	}
	tr := tracing.Tracer()
	attrs := []attribute.KeyValue{attribute.String(tracing.AttrTaskID, d.TaskID),
		attribute.String(tracing.AttrMsgType, string(d.Message.Type)), attribute.String(tracing.AttrWorker, w.cfg.ID),
		attribute.Int64("agentfleet.delivery.count", int64(d.NumDelivered))}
	now := time.Now()
	if !d.Published.IsZero() && d.NumDelivered == 1 {
		_, wait := tr.Start(ctx, tracing.SpanQueueWait, trace.WithTimestamp(d.Published), trace.WithAttributes(attrs...))
		wait.End(trace.WithTimestamp(now))
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(attrs...)}
	if from := trace.SpanContextFromContext(ctx); from.IsValid() && d.Message.Type != queue.MsgStart {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: from,
			Attributes: []attribute.KeyValue{attribute.String("agentfleet.link", "round")}}))
	}
	//nolint:spancheck // the caller ends the span
	return tr.Start(ctx, tracing.SpanClaim, opts...)
}

// endClaim records how the delivery was settled and ends its span.
func endClaim(span trace.Span, s settlement) {
	if span.IsRecording() {
		span.SetAttributes(attribute.String("agentfleet.delivery.settle", settleNames[s.op]))
		if s.reason != "" {
			span.SetAttributes(attribute.String("agentfleet.delivery.reason", s.reason))
		}
	}
	span.End()
}

var settleNames = map[settleOp]string{opAck: "ack", opNak: "nak", opTerm: "term", opAbandon: "abandon"}

// runSessionTraced runs the session inside its task.session span.
func (r *run) runSessionTraced(ctx context.Context) (agent.Outcome, error) {
	if !tracing.On() {
		return r.runSession(ctx)
	}
	ctx, span := tracing.Tracer().Start(ctx, tracing.SpanSession, trace.WithAttributes(
		attribute.String(tracing.AttrTaskID, r.task.ID.String()), attribute.String(tracing.AttrRootID, r.task.RootID.String()),
		attribute.String(tracing.AttrParentID, r.task.ParentID.String()), attribute.Int(tracing.AttrAttempt, r.task.Attempts),
		attribute.String("agentfleet.profile", r.spec.Profile), attribute.String("gen_ai.request.model", r.spec.Model)))
	defer span.End()
	out, err := r.runSession(ctx)
	if span.IsRecording() {
		span.SetAttributes(attribute.String("agentfleet.session.stop", string(out.Stop)),
			attribute.Int("gen_ai.usage.input_tokens", out.Usage.InputTokens),
			attribute.Int("gen_ai.usage.output_tokens", out.Usage.OutputTokens),
			attribute.Int("gen_ai.usage.cache_read.input_tokens", out.Usage.CacheReadTokens))
	}
	if err != nil && !errors.Is(err, agent.ErrParked) {
		tracing.Fail(span, err)
	}
	return out, err
}

// traceEnd records a task's end on the span of ctx (its claim): a failed
// task's trace is marked so it is kept whatever the sample ratio.
func traceEnd(ctx context.Context, to store.TaskState, reason string, res fleet.TaskResult) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.String(tracing.AttrOutcome, string(to)))
	span.SetAttributes(attribute.Float64("agentfleet.cost_usd", res.CostUSD),
		attribute.Int("gen_ai.usage.input_tokens", res.Usage.InputTokens),
		attribute.Int("gen_ai.usage.output_tokens", res.Usage.OutputTokens),
		attribute.Int("gen_ai.usage.cache_read.input_tokens", res.Usage.CacheReadTokens))
	if to == store.TaskFailed {
		span.SetStatus(codes.Error, reason)
	}
}

// traceDelivery starts the span of the delivery of a task's changes.
func traceDelivery(ctx context.Context) (context.Context, trace.Span) {
	if !tracing.On() {
		return ctx, tracing.Off()
	}
	//nolint:spancheck // the caller ends the span
	return tracing.Tracer().Start(ctx, tracing.SpanDelivery)
}

// endDelivery records the delivery's result and ends its span.
func endDelivery(span trace.Span, res fleet.DeliveryResult) {
	if res.Error != "" {
		span.SetStatus(codes.Error, res.Error)
	} else if res.RequestURL != "" {
		span.SetAttributes(attribute.String("agentfleet.delivery.request_url", res.RequestURL))
	}
	span.End()
}
