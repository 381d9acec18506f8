package dispatcher

import (
	"context"
	"encoding/json"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/internal/tracing"
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
