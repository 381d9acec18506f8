package dispatcher

import (
	"context"
	"encoding/json"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/internal/tracing"
	"github.com/agentfleet/agentfleet/queue"
)

// traceHTTP continues the caller's W3C trace context (its traceparent
// header) in every request's context, so a submission made inside a
// caller's trace joins it; the submission's own span is made in Submit.
// With tracing off (no traceparent, the no-op provider) it costs one map
// lookup.
func traceHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := r.Header["Traceparent"]; ok {
			r = r.WithContext(tracing.Extract(r.Context(), r.Header))
		}
		next.ServeHTTP(w, r)
	})
}

// startSubmit starts the span of one submission (a task or a batch); the
// start messages publish within it, so every submitted task's trace
// begins here.
func startSubmit(ctx context.Context, n int) (context.Context, trace.Span) {
	if !tracing.On() {
		return ctx, tracing.Off()
	}
	//nolint:spancheck // the caller ends the span
	return tracing.Tracer().Start(ctx, tracing.SpanSubmit, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.Int("agentfleet.submit.tasks", n)))
}

// traceSubmitted records the submitted tasks on the submission's span.
func traceSubmitted(span trace.Span, subs []Submission) {
	if !span.IsRecording() {
		return
	}
	ids := make([]string, len(subs))
	for i, s := range subs {
		ids[i] = s.Task.ID.String()
	}
	if len(ids) == 1 {
		span.SetAttributes(attribute.String(tracing.AttrTaskID, ids[0]))
		return
	}
	span.SetAttributes(attribute.StringSlice("agentfleet.task.ids", ids))
}

// traceOf answers GET /v1/tasks/{id}/trace: the trace the task's spec
// recorded it began in (fleet.TaskSpec.TraceParent), and its link in the
// operator's tracing UI (APIOptions.TraceUIURL).
func (a *handlers) traceOf(w http.ResponseWriter, r *http.Request) {
	t, ok := a.loadTask(w, r)
	if !ok {
		return
	}
	var spec struct {
		TraceParent string `json:"traceparent"`
	}
	_ = json.Unmarshal(t.Spec, &spec) // a spec the store holds is valid JSON; without the field there is no trace
	var v api.TraceView
	v.TraceID, v.Sampled = tracing.TraceIDOf(spec.TraceParent)
	v.URL = tracing.UIURL(a.opts.TraceUIURL, v.TraceID)
	writeJSON(w, http.StatusOK, v)
}

// taskTraces are the traces of the tasks of one batch submission. A
// single task's trace is the submission's (its span is the task's
// root). In a batch of more than one, each task gets a trace of its own,
// so that one task tree is one trace whatever the batch it came in: a
// task.submit root span per task, linked to the batch's span, which
// keeps the batch's own trace. With tracing off there is nothing to do.
type taskTraces struct {
	spans   []trace.Span
	parents []string
}

func startTaskTraces(ctx context.Context, n int) taskTraces {
	if n <= 1 || !trace.SpanFromContext(ctx).IsRecording() {
		return taskTraces{}
	}
	tt := taskTraces{spans: make([]trace.Span, n), parents: make([]string, n)}
	link := trace.LinkFromContext(ctx)
	for i := range n {
		tctx, span := tracing.Tracer().Start(ctx, tracing.SpanSubmit, trace.WithNewRoot(),
			trace.WithSpanKind(trace.SpanKindServer), trace.WithLinks(link))
		tt.spans[i], tt.parents[i] = span, tracing.TraceParent(tctx)
	}
	return tt
}

// parent is the traceparent task i's spec keeps.
func (tt taskTraces) parent(ctx context.Context, i int) string {
	if tt.parents == nil {
		return tracing.TraceParent(ctx)
	}
	return tt.parents[i]
}

// stored records each stored task's id on its span.
func (tt taskTraces) stored(subs []Submission) {
	for i, s := range subs {
		if i < len(tt.spans) {
			tt.spans[i].SetAttributes(attribute.String(tracing.AttrTaskID, s.Task.ID.String()))
		}
	}
}

// start is task i's start message carrying the task's own trace (in a
// batch with a trace per task), which the queue writes in its
// Traceparent header when the publishing context holds no span.
func (tt taskTraces) start(i int, m queue.Outgoing) queue.Outgoing {
	if i < len(tt.parents) {
		m.Msg.TraceParent = tt.parents[i]
	}
	return m
}

// enqueueContext is ctx for publishing the batch's start messages: in a
// batch with traces of its own per task, without the batch's span, so
// that each message carries its task's trace (start) rather than the
// batch's.
func (tt taskTraces) enqueueContext(ctx context.Context) context.Context {
	if tt.spans == nil {
		return ctx
	}
	return trace.ContextWithSpanContext(ctx, trace.SpanContext{})
}

// endTaskTraces ends the tasks' spans, failed with err.
func endTaskTraces(tt taskTraces, err error) {
	for _, s := range tt.spans {
		tracing.Fail(s, err)
		s.End()
	}
}
