package queue_test

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentfleet/agentfleet/queue"
)

// TestMessagesCarryTheTraceContext: a message published inside a span
// carries its trace context in the Traceparent header and the delivery
// continues it; one published outside any span carries the stored
// TraceParent instead, in the header and not in the body; one with
// neither carries none.
func TestMessagesCarryTheTraceContext(t *testing.T) {
	otel.SetTextMapPropagator(propagation.TraceContext{})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewInMemoryExporter()))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	b := setup(t, queue.Config{})
	p, err := b.client.NewPuller(b.ctx, queue.PullerConfig{Queues: []string{"default"}})
	if err != nil {
		t.Fatal(err)
	}

	ctx, span := tp.Tracer("test").Start(b.ctx, "publish")
	if _, err := b.client.Send(ctx, queue.ToQueue("default"), startMsg("live"), ""); err != nil {
		t.Fatal(err)
	}
	span.End()
	got := trace.SpanContextFromContext(acked(t, b, pull(t, p)).TraceContext(context.Background()))
	if got.TraceID() != span.SpanContext().TraceID() || got.SpanID() != span.SpanContext().SpanID() || !got.IsRemote() {
		t.Errorf("delivered context %v, want the publisher's span %v", got, span.SpanContext())
	}

	stored := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	msg := startMsg("stored")
	msg.TraceParent = stored
	if _, err := b.client.Send(b.ctx, queue.ToQueue("default"), msg, ""); err != nil {
		t.Fatal(err)
	}
	d := acked(t, b, pull(t, p))
	if sc := trace.SpanContextFromContext(d.TraceContext(context.Background())); sc.TraceID().String() != "0af7651916cd43dd8448eb211c80319c" ||
		sc.SpanID().String() != "b7ad6b7169203331" {
		t.Errorf("delivered context %v, want the stored traceparent", sc)
	}
	if strings.Contains(string(d.Raw), "0af765") {
		t.Errorf("the body carries the trace context: %s", d.Raw)
	}

	if _, err := b.client.Send(b.ctx, queue.ToQueue("default"), startMsg("none"), ""); err != nil {
		t.Fatal(err)
	}
	if sc := trace.SpanContextFromContext(acked(t, b, pull(t, p)).TraceContext(context.Background())); sc.IsValid() {
		t.Errorf("a message published outside any trace delivered %v", sc)
	}
}

// acked acks d and returns it.
func acked(t *testing.T, b *bundle, d *queue.Delivery) *queue.Delivery {
	t.Helper()
	if err := d.Ack(b.ctx); err != nil {
		t.Fatal(err)
	}
	return d
}
