package dispatcher

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/internal/tracing"
	"github.com/agentfleet/agentfleet/queue"
)

const testTraceUI = "https://jaeger.example/trace/{trace_id}"

// TestBatchTracesEachTask: with tracing on, each task of a batch gets a
// trace of its own (one task tree, one trace), linked to the batch's
// span; its start message carries that trace, and GET
// /v1/tasks/{id}/trace answers it with its link in the tracing UI. Not a
// parallel test: it sets the global tracer provider.
func TestBatchTracesEachTask(t *testing.T) {
	b := setupAPI(t, sqliteStore)
	ctx := context.Background()
	off := b.submit(t, "submitted with tracing off")

	exp := tracetest.NewInMemoryExporter()
	tp := tracing.NewProvider(exp, tracing.Options{SampleRatio: 1})
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	defer func() {
		otel.SetTracerProvider(noop.NewTracerProvider())
		_ = tp.Shutdown(ctx)
	}()
	c := b.clientWith(t, APIOptions{Token: testToken, TraceUIURL: testTraceUI})
	br, err := c.SubmitBatch(ctx, []fleet.TaskSpec{validSpec("a"), validSpec("b"), validSpec("c")})
	if err != nil {
		t.Fatal(err)
	}
	if err := tp.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	var batchTrace string
	submits := map[string]string{} // task id -> trace id of its submission span
	for _, s := range exp.GetSpans() {
		if s.Name != tracing.SpanSubmit {
			continue
		}
		for _, a := range s.Attributes {
			switch string(a.Key) {
			case tracing.AttrTaskID:
				submits[a.Value.AsString()] = s.SpanContext.TraceID().String()
				if len(s.Links) != 1 {
					t.Errorf("task %s's submission span has %d links, want one to the batch's", a.Value.AsString(), len(s.Links))
				}
			case "agentfleet.task.ids":
				batchTrace = s.SpanContext.TraceID().String()
			}
		}
	}
	headers := startHeaders(t, b)
	seen := map[string]bool{batchTrace: true}
	for _, task := range br.Tasks {
		tv, err := c.Trace(ctx, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		if tv.TraceID == "" || seen[tv.TraceID] || !tv.Sampled || tv.TraceID != submits[task.ID.String()] {
			t.Errorf("task %s: trace %+v, want a sampled trace of its own, its submission span's (%s)", task.ID, tv, submits[task.ID.String()])
		}
		seen[tv.TraceID] = true
		if want := "https://jaeger.example/trace/" + tv.TraceID; tv.URL != want {
			t.Errorf("task %s: link %q, want %q", task.ID, tv.URL, want)
		}
		if got, _ := tracing.TraceIDOf(headers[task.ID.String()]); got != tv.TraceID {
			t.Errorf("task %s's start message carries traceparent %q, want its trace %s", task.ID, headers[task.ID.String()], tv.TraceID)
		}
	}
	if tv, err := c.Trace(ctx, off); err != nil || tv.TraceID != "" || tv.URL != "" || tv.Sampled {
		t.Errorf("a task submitted with tracing off: %+v (%v), want no trace", tv, err)
	}
}

// startHeaders reads the Traceparent header of each start message on
// the TASKS stream, by task id.
func startHeaders(t *testing.T, b *apiBundle) map[string]string {
	t.Helper()
	s, err := b.js.Stream(context.Background(), b.q.Config().TasksStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		m, err := s.GetMsg(context.Background(), seq)
		if err != nil {
			t.Fatal(err)
		}
		out[m.Header.Get(queue.HeaderTaskID)] = m.Header.Get("Traceparent")
	}
	return out
}
