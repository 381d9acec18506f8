package tracing

import (
	"context"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Tracer is the tracer of the fleet's packages, from the global provider
// (the no-op one until Setup installs the SDK).
func Tracer() trace.Tracer { return otel.Tracer("github.com/agentfleet/agentfleet") }

// unset is the global tracer provider before anyone sets one.
var unset = otel.GetTracerProvider()

// noSpan is the API's non-recording span without a span context.
var noSpan = trace.SpanFromContext(context.Background())

// On reports whether a tracer provider is installed (Setup, or a test's
// otel.SetTracerProvider). Instrumented code starts its spans with
//
//	if !tracing.On() {
//		return ctx, tracing.Off()
//	}
//
// so that with tracing off a span costs no allocation at all: neither
// its name, nor its attributes, nor a context.
func On() bool { return otel.GetTracerProvider() != unset }

// Off is the span of code that runs with tracing off: it records nothing
// and ends without effect.
func Off() trace.Span { return noSpan }

// The span names of a task's trace (docs/operations.md "Tracing" lists
// each with its attributes).
const (
	SpanSubmit     = "task.submit"      // dispatcher: POST /v1/tasks, one per request
	SpanQueueWait  = "task.queue_wait"  // worker: from publish to claim
	SpanClaim      = "task.claim"       // worker: one delivery, claim to settlement
	SpanSession    = "task.session"     // worker: one round of the agent session
	SpanTurn       = "agent.turn"       // agent: one turn
	SpanCompaction = "agent.compaction" // agent: one compaction of the context
	SpanApproval   = "agent.approval"   // agent: waiting for a tool call's approval
	SpanCheck      = "task.check"       // worker: one check command
	SpanDelivery   = "task.delivery"    // worker: delivering the task's result
)

// Attribute keys of the fleet's own (the GenAI ones follow the OpenTelemetry
// semantic conventions and are spelled where they are set).
const (
	AttrTaskID   = "agentfleet.task.id"
	AttrRootID   = "agentfleet.task.root_id"
	AttrParentID = "agentfleet.task.parent_id"
	AttrMsgType  = "agentfleet.message.type"
	AttrAttempt  = "agentfleet.task.attempt"
	AttrWorker   = "agentfleet.worker.id"
	AttrOutcome  = "agentfleet.task.outcome"
)

// Fail marks span failed with err's message (nil err: nothing).
func Fail(span trace.Span, err error) {
	if err == nil {
		return
	}
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
}

// Inject writes ctx's trace context into h, the headers of a NATS or
// HTTP message (nats.Header and http.Header are both map[string][]string).
func Inject(ctx context.Context, h map[string][]string) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(h))
}

// TraceParent is the W3C traceparent of ctx's span ("" when ctx holds
// none, or tracing is off): what a task stores to continue its trace
// later.
func TraceParent(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return ""
	}
	h := map[string][]string{}
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(h))
	if v := h["Traceparent"]; len(v) == 1 {
		return v[0]
	}
	return ""
}

// InjectStored writes traceparent, a stored TraceParent, into h when
// Inject wrote none (the publisher's context holds no span).
func InjectStored(traceparent string, h map[string][]string) {
	if traceparent == "" || len(h["Traceparent"]) > 0 {
		return
	}
	h["Traceparent"] = []string{traceparent}
}

// Extract returns ctx with the trace context of headers h as its remote
// parent, or ctx as is when h carries none (no "Traceparent" key, as
// Inject and http.Header spell it).
func Extract(ctx context.Context, h map[string][]string) context.Context {
	if len(h["Traceparent"]) == 0 {
		return ctx
	}
	return otel.GetTextMapPropagator().Extract(ctx, propagation.HeaderCarrier(h))
}

var recordToolIO atomic.Bool

func setRecordToolIO(on bool) { recordToolIO.Store(on) }

// RecordToolIO reports whether the operator lets tool spans carry their
// (redacted) arguments and output (Options.RecordToolIO).
func RecordToolIO() bool { return recordToolIO.Load() }
