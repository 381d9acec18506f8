// Package tracingtest turns tracing on for one test: it installs the
// fleet's tracer provider (tracing.NewProvider) exporting where the test
// says, as Setup would in a process. It is for tests only; no program
// imports it.
package tracingtest

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/agentfleet/agentfleet/internal/tracing"
)

// Install makes tracing.NewProvider(exp, opts) the global tracer provider
// and the W3C trace context the global propagator, and returns the
// provider (to flush it before reading exp). t's cleanup installs the
// no-op provider, so that the package's other tests run untraced, and
// shuts the provider down. The globals are the process's: a test calling
// Install must not run in parallel with another that traces.
func Install(t testing.TB, exp sdktrace.SpanExporter, opts tracing.Options) *sdktrace.TracerProvider {
	t.Helper()
	tp := tracing.NewProvider(exp, opts)
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() {
		otel.SetTracerProvider(noop.NewTracerProvider())
		_ = tp.Shutdown(context.Background())
	})
	return tp
}
