package tracing

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// TestKeepFailedTraces: with a ratio of 0 no trace is sampled, yet the
// spans of a trace in which a span failed are exported, and those of a
// trace that ended well are not.
func TestKeepFailedTraces(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := NewProvider(exp, Options{Service: "test", SampleRatio: 0})
	tr := tp.Tracer("t")
	ctx := context.Background()

	okCtx, ok := tr.Start(ctx, "ok-root")
	_, okChild := tr.Start(okCtx, "ok-child")
	okChild.End()
	ok.End()

	badCtx, bad := tr.Start(ctx, "bad-root")
	_, before := tr.Start(badCtx, "before")
	before.End()
	_, failing := tr.Start(badCtx, "failing")
	Fail(failing, errors.New("boom"))
	failing.End()
	_, after := tr.Start(badCtx, "after")
	after.End()
	bad.End()
	if err := tp.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range exp.GetSpans() {
		names = append(names, s.Name)
		if s.SpanContext.TraceID() != bad.SpanContext().TraceID() {
			t.Errorf("span %q of the trace that ended well was exported", s.Name)
		}
	}
	if got := strings.Join(names, ","); got != "before,failing,after,bad-root" {
		t.Errorf("exported %q, want the failed trace's four spans in order of their ends", got)
	}
}

// TestRatioOneSamplesEverything: the default ratio exports every span
// through the batch processor, and a child of a remote sampled parent
// is sampled whatever the ratio.
func TestRatioOneSamplesEverything(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := NewProvider(exp, Options{SampleRatio: 1})
	_, s := tp.Tracer("t").Start(context.Background(), "one")
	s.End()

	none := tracetest.NewInMemoryExporter()
	tp0 := NewProvider(none, Options{SampleRatio: 0})
	remote := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2},
		TraceFlags: trace.FlagsSampled, Remote: true})
	_, c := tp0.Tracer("t").Start(trace.ContextWithRemoteSpanContext(context.Background(), remote), "child")
	c.End()
	for _, p := range []interface {
		ForceFlush(ctx context.Context) error
	}{tp, tp0} {
		if err := p.ForceFlush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(exp.GetSpans()); n != 1 {
		t.Errorf("ratio 1 exported %d spans, want 1", n)
	}
	if got := none.GetSpans(); len(got) != 1 || got[0].Parent.SpanID() != remote.SpanID() {
		t.Errorf("the child of a sampled remote parent: exported %v, want it under the remote span", got)
	}
}

// TestHeadersCarryTheTraceContext: Inject then Extract through a NATS- or
// HTTP-shaped header map gives the same trace and parent span; a context
// without a span injects nothing.
func TestHeadersCarryTheTraceContext(t *testing.T) {
	setPropagator(t)
	tp := NewProvider(tracetest.NewInMemoryExporter(), Options{SampleRatio: 1})
	ctx, span := tp.Tracer("t").Start(context.Background(), "publish")
	defer span.End()
	h := map[string][]string{}
	Inject(ctx, h)
	if len(h["Traceparent"]) != 1 {
		t.Fatalf("headers %v: no Traceparent", h)
	}
	got := trace.SpanContextFromContext(Extract(context.Background(), h))
	if got.TraceID() != span.SpanContext().TraceID() || got.SpanID() != span.SpanContext().SpanID() || !got.IsRemote() {
		t.Errorf("extracted %v, want the remote %v", got, span.SpanContext())
	}
	empty := map[string][]string{}
	Inject(context.Background(), empty)
	if len(empty) != 0 {
		t.Errorf("a context without a span injected %v", empty)
	}
}

// TestLogHandlerAddsIDs: a record logged with a span's context carries
// its trace and span ids; one without carries neither.
func TestLogHandlerAddsIDs(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(LogHandler(slog.NewTextHandler(&buf, nil))).With("k", "v")
	tp := NewProvider(tracetest.NewInMemoryExporter(), Options{SampleRatio: 1})
	ctx, span := tp.Tracer("t").Start(context.Background(), "s")
	log.InfoContext(ctx, "inside")
	log.Info("outside")
	span.End()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := "trace_id=" + span.SpanContext().TraceID().String() + " span_id=" + span.SpanContext().SpanID().String()
	if len(lines) != 2 || !strings.Contains(lines[0], want) || !strings.Contains(lines[0], "k=v") || strings.Contains(lines[1], "trace_id") {
		t.Errorf("log:\n%s\nwant the first line with %q and the second without ids", buf.String(), want)
	}
}

// TestSetupOffInstallsNothing: without an OTLP endpoint Setup leaves the
// no-op provider (spans do not record); a bad protocol or ratio is
// refused with what to do.
func TestSetupOffInstallsNothing(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	stop, err := Setup(context.Background(), Options{SampleRatio: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stop(context.Background()) }()
	if _, s := Tracer().Start(context.Background(), "x"); s.IsRecording() {
		t.Error("a span records with tracing off")
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	if _, err := Setup(context.Background(), Options{SampleRatio: 1}); err == nil || !strings.Contains(err.Error(), "http/protobuf") {
		t.Errorf("grpc: err %v, want one naming http/protobuf", err)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "")
	if _, err := Setup(context.Background(), Options{SampleRatio: 2}); err == nil || !strings.Contains(err.Error(), "from 0 to 1") {
		t.Errorf("ratio 2: err %v, want one naming the range", err)
	}
	t.Setenv("OTEL_SDK_DISABLED", "true")
	if Enabled() {
		t.Error("OTEL_SDK_DISABLED=true leaves tracing on")
	}
}

func setPropagator(t *testing.T) {
	t.Helper()
	if _, err := Setup(context.Background(), Options{SampleRatio: 1}); err != nil { // sets the propagator; no endpoint in tests
		t.Fatal(err)
	}
}
