package forge

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentfleet/agentfleet/internal/tracing"
)

// startSpan starts the span of one forge API call (package
// internal/tracing): the forge kind, method and path without its query;
// never the token or the bodies.
func (c *rest) startSpan(ctx context.Context, method, path string) (context.Context, trace.Span) {
	if !tracing.On() {
		return ctx, tracing.Off()
	}
	//nolint:spancheck // the caller ends the span
	return tracing.Tracer().Start(ctx, "forge "+method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("agentfleet.forge.kind", c.kind), attribute.String("http.request.method", method),
		attribute.String("url.path", pathOnly(path))))
}
