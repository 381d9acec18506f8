package agent

import (
	"cmp"
	"context"
	"errors"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentfleet/agentfleet/agent/permission"
	"github.com/agentfleet/agentfleet/internal/tracing"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/tools"
)

// The session's spans (package internal/tracing): one per turn, model
// call (the OpenTelemetry GenAI conventions: "chat <model>" with
// gen_ai.* attributes; its cost as agentfleet.usage.cost_usd when
// Config.Price is set, the conventions having no cost attribute), tool
// call ("execute_tool <name>"), compaction and approval wait. They come from the global tracer provider, the no-op one
// unless the process set up tracing, so a library user pays nothing.
// A tool span records the tool's name, duration, error flag, exit code
// (shell tools) and output size, never its arguments or output unless
// tracing.RecordToolIO is on, and then after the session's Redactor.

// maxSpanIO bounds the arguments and output a tool span carries when
// recording them is on.
const maxSpanIO = 4096

// turnSpans ends the span of the previous turn as the next starts.
type turnSpans struct{ span trace.Span }

// next ends the previous turn's span and starts turn n's under ctx.
func (t *turnSpans) next(ctx context.Context, n int) context.Context {
	t.end()
	if !tracing.On() {
		return ctx
	}
	//nolint:spancheck // the caller ends the span
	ctx, t.span = tracing.Tracer().Start(ctx, tracing.SpanTurn, trace.WithAttributes(attribute.Int("agentfleet.turn.round", n)))
	return ctx
}

func (t *turnSpans) end() {
	if t.span != nil {
		t.span.End()
		t.span = nil
	}
}

// startModelSpan starts the span of a model call.
func (s *Session) startModelSpan(ctx context.Context, req llm.Request) (context.Context, trace.Span) {
	if !tracing.On() {
		return ctx, tracing.Off()
	}
	model := req.Model
	if model == "" {
		model = s.profile.Model()
	}
	//nolint:spancheck // the caller ends the span
	return tracing.Tracer().Start(ctx, "chat "+model, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String("gen_ai.operation.name", "chat"),
			attribute.String("gen_ai.system", s.profile.ID()),
			attribute.String("gen_ai.provider.name", s.profile.ID()),
			attribute.String("gen_ai.request.model", model)))
}

// endModelSpan records a model call's usage (or error) and ends its span.
func (s *Session) endModelSpan(span trace.Span, asked string, resp *llm.Response, err error) {
	if !span.IsRecording() {
		return
	}
	defer span.End()
	if err != nil {
		tracing.Fail(span, err)
		return
	}
	if resp == nil || !span.IsRecording() {
		return
	}
	u := resp.Usage
	span.SetAttributes(
		attribute.Int("gen_ai.usage.input_tokens", u.InputTokens),
		attribute.Int("gen_ai.usage.output_tokens", u.OutputTokens),
		attribute.Int("gen_ai.usage.cache_read.input_tokens", u.CacheReadTokens),
		attribute.Int("gen_ai.usage.cache_creation.input_tokens", u.CacheWriteTokens),
		attribute.Int("gen_ai.usage.reasoning_tokens", u.ReasoningTokens))
	if resp.Model != "" {
		span.SetAttributes(attribute.String("gen_ai.response.model", resp.Model))
	}
	if s.cfg.Price != nil {
		model := cmp.Or(resp.Model, asked, s.profile.Model())
		span.SetAttributes(attribute.Float64("agentfleet.usage.cost_usd", s.cfg.Price(model, u)))
	}
}

// executeTraced runs one tool call inside its span.
func (s *Session) executeTraced(ctx context.Context, call llm.ToolCall, opts tools.ExecOptions) tools.Result {
	if !tracing.On() {
		return s.registry.Execute(ctx, call, s.env, opts)
	}
	ctx, span := tracing.Tracer().Start(ctx, "execute_tool "+call.Name, trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("gen_ai.tool.name", call.Name),
		attribute.String("gen_ai.tool.call.id", call.ID)))
	defer span.End()
	res := s.registry.Execute(ctx, call, s.env, opts)
	if !span.IsRecording() {
		return res
	}
	span.SetAttributes(attribute.Bool("agentfleet.tool.is_error", res.IsError),
		attribute.Int("agentfleet.tool.output_bytes", len(res.Full)))
	if code, ok := exitCode(res.Full); ok {
		span.SetAttributes(attribute.Int("agentfleet.tool.exit_code", code))
	}
	if tracing.RecordToolIO() {
		red := s.cfg.Redactor // nil redacts nothing: the operator's secrets are all it knows
		span.SetAttributes(attribute.String("gen_ai.tool.call.arguments", clip(red.Redact(string(call.Arguments)))),
			attribute.String("gen_ai.tool.call.result", clip(red.Redact(res.Full))))
	}
	if res.IsError {
		span.SetAttributes(attribute.String("error.type", "tool_error"))
	}
	return res
}

// exitCode reads the "Exit code: N" line of a shell tool's output.
func exitCode(out string) (int, bool) {
	_, rest, found := strings.Cut(out, "Exit code: ")
	if !found {
		return 0, false
	}
	rest, _, _ = strings.Cut(rest, "\n")
	n, err := strconv.Atoi(strings.TrimSpace(rest))
	return n, err == nil
}

func clip(s string) string {
	if len(s) <= maxSpanIO {
		return s
	}
	return s[:maxSpanIO] + "…"
}

// askTraced waits for a person's answer to req inside an approval span.
func (s *Session) askTraced(ctx context.Context, req permission.Request) (permission.Answer, error) {
	if !tracing.On() {
		return s.ask(ctx, req)
	}
	ctx, span := tracing.Tracer().Start(ctx, tracing.SpanApproval, trace.WithAttributes(
		attribute.String("gen_ai.tool.name", req.Tool), attribute.String("gen_ai.tool.call.id", req.CallID)))
	defer span.End()
	ans, err := s.ask(ctx, req)
	switch {
	case err == nil:
		span.SetAttributes(attribute.Bool("agentfleet.approval.approved", ans.Approved))
	case errors.Is(err, permission.ErrPending):
		span.SetAttributes(attribute.Bool("agentfleet.approval.parked", true))
	default:
		tracing.Fail(span, err)
	}
	return ans, err
}

// startCompactionSpan starts the span of one compaction.
func startCompactionSpan(ctx context.Context, reason string) (context.Context, trace.Span) {
	if !tracing.On() {
		return ctx, tracing.Off()
	}
	//nolint:spancheck // the caller ends the span
	return tracing.Tracer().Start(ctx, tracing.SpanCompaction, trace.WithAttributes(attribute.String("agentfleet.compaction.reason", reason)))
}
