package tracing

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Options configure Setup.
type Options struct {
	// Service is the service.name of the process's spans ("dispatcher",
	// "worker"); OTEL_SERVICE_NAME overrides it.
	Service string
	// Instance is the service.instance.id (a worker's id), so that the
	// spans of two workers show as two processes; "" for none.
	Instance string
	// SampleRatio is the fraction of new traces kept, from 0 to 1
	// (tracing.sample_ratio, default 1: every trace). Spans of a trace
	// with a failed span are kept whatever the ratio, so 0 keeps only
	// failed tasks.
	SampleRatio float64
	// RecordToolIO lets tool spans carry their arguments and output,
	// redacted (tracing.record_tool_io); off by default.
	RecordToolIO bool
}

// Shutdown flushes the spans not yet exported and stops the exporter.
type Shutdown func(context.Context) error

// Enabled reports whether the environment configures an OTLP trace
// exporter and does not turn tracing off.
func Enabled() bool {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") || os.Getenv("OTEL_TRACES_EXPORTER") == "none" {
		return false
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

// Setup installs the SDK as the global tracer provider and the W3C trace
// context as the global propagator when Enabled, and returns the function
// that flushes and stops it. When tracing is off it installs nothing (the
// no-op provider stays) and returns a Shutdown that does nothing.
func Setup(ctx context.Context, opts Options) (Shutdown, error) {
	otel.SetTextMapPropagator(propagation.TraceContext{})
	setRecordToolIO(opts.RecordToolIO)
	if !Enabled() {
		return func(context.Context) error { return nil }, nil
	}
	if opts.SampleRatio < 0 || opts.SampleRatio > 1 {
		return nil, fmt.Errorf("tracing: sample ratio %v is out of range; give a fraction of traces to keep, from 0 to 1", opts.SampleRatio)
	}
	if p := protocol(); p != "" && p != "http/protobuf" {
		return nil, fmt.Errorf("tracing: OTEL_EXPORTER_OTLP_PROTOCOL=%q is not supported; use http/protobuf (every collector accepts OTLP/HTTP, by default on port 4318)", p)
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP/HTTP exporter: %w", err)
	}
	tp := NewProvider(exp, opts)
	otel.SetTracerProvider(tp)
	return func(ctx context.Context) error {
		return errors.Join(tp.ForceFlush(ctx), tp.Shutdown(ctx))
	}, nil
}

// NewProvider is the tracer provider Setup installs, exporting to exp:
// the sampler and failure keeping of the package doc, the batch exporter,
// and the process's resource. Tests pass an in-memory exporter.
func NewProvider(exp sdktrace.SpanExporter, opts Options) *sdktrace.TracerProvider {
	service := opts.Service
	if service == "" {
		service = "agentfleet"
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", service)}
	if opts.Instance != "" {
		attrs = append(attrs, attribute.String("service.instance.id", opts.Instance))
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attrs...))
	if err != nil {
		res = resource.Default()
	}
	if env, err := resource.New(context.Background(), resource.WithFromEnv()); err == nil {
		if m, err := resource.Merge(res, env); err == nil {
			res = m
		}
	}
	batch := sdktrace.NewBatchSpanProcessor(exp)
	return sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithSampler(newSampler(opts.SampleRatio)),
		sdktrace.WithSpanProcessor(newKeepFailed(batch, exp)),
	)
}

// protocol is the configured OTLP protocol for traces, "" when unset.
func protocol() string {
	if p := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"); p != "" {
		return p
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
}
