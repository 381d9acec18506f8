package checks

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/internal/tracing"
)

// startCheck starts the span of one check run (package internal/tracing):
// its name, phase and round; never its command's output.
func startCheck(ctx context.Context, c fleet.Check, phase string, round int) (context.Context, trace.Span) {
	if !tracing.On() {
		return ctx, tracing.Off()
	}
	//nolint:spancheck // the caller ends the span
	return tracing.Tracer().Start(ctx, tracing.SpanCheck, trace.WithAttributes(
		attribute.String("agentfleet.check.name", c.Name), attribute.String("agentfleet.check.phase", phase),
		attribute.Int("agentfleet.check.round", round)))
}

// endCheck records a check's exit code and verdict and ends its span. A
// failed check is the agent's to repair, not a failure of the trace, so
// its status stays unset unless the check could not run.
func endCheck(span trace.Span, run fleet.CheckRun) {
	if span.IsRecording() {
		span.SetAttributes(attribute.Int("agentfleet.check.exit_code", run.ExitCode),
			attribute.Bool("agentfleet.check.passed", run.Passed), attribute.Bool("agentfleet.check.timed_out", run.TimedOut))
		if run.ExitCode == -1 && !run.TimedOut {
			span.SetStatus(codes.Error, "the check could not run")
		}
	}
	span.End()
}
