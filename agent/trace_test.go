package agent_test

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/internal/tracing"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/tools"
)

// traced installs an SDK tracer provider exporting to memory as the
// global one until the test ends. Tests using it must not run in
// parallel with each other.
func traced(tb testing.TB) *tracetest.InMemoryExporter {
	tb.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	otel.SetTracerProvider(tp)
	tb.Cleanup(func() {
		otel.SetTracerProvider(noop.NewTracerProvider())
		_ = tp.Shutdown(context.Background())
	})
	return exp
}

// TestSessionSpans: one input of one tool round gives two turns, each
// with its model call (GenAI attributes, token counts) and the first with
// the tool call (name, output size, no arguments or output), all under
// the caller's span.
func TestSessionSpans(t *testing.T) {
	exp := traced(t)
	s, err := agent.New(agent.Config{Client: &pingPong{}, Profile: &testProfile{reg: tools.NewRegistry(echoTool(false)), window: 1 << 20},
		Env: dirEnv{dir: t.TempDir()}, ID: "traced"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	ctx, root := otel.Tracer("test").Start(context.Background(), "session")
	if out, err := s.Submit(ctx, "echo hi"); err != nil || out.Rounds != 1 {
		t.Fatalf("%+v %v", out, err)
	}
	root.End()

	spans := exp.GetSpans()
	byID := map[string]tracetest.SpanStub{}
	count := map[string]int{}
	for _, sp := range spans {
		byID[sp.SpanContext.SpanID().String()] = sp
		count[sp.Name]++
	}
	if count["agent.turn"] != 2 || count["chat test-model"] != 2 || count["execute_tool echo"] != 1 {
		t.Fatalf("spans %v, want 2 turns, 2 model calls, 1 tool call", count)
	}
	for _, sp := range spans {
		parent := byID[sp.Parent.SpanID().String()]
		switch sp.Name {
		case "agent.turn":
			if sp.Parent.SpanID() != root.SpanContext().SpanID() {
				t.Errorf("a turn is under %q, want the caller's span", parent.Name)
			}
		case "chat test-model", "execute_tool echo":
			if parent.Name != "agent.turn" {
				t.Errorf("%s is under %q, want a turn", sp.Name, parent.Name)
			}
		}
		attrs := map[string]any{}
		for _, a := range sp.Attributes {
			attrs[string(a.Key)] = a.Value.AsInterface()
		}
		switch sp.Name {
		case "chat test-model":
			if attrs["gen_ai.system"] != "test" || attrs["gen_ai.request.model"] != "test-model" || attrs["gen_ai.usage.input_tokens"] == nil {
				t.Errorf("model call attributes %v", attrs)
			}
		case "execute_tool echo":
			if attrs["gen_ai.tool.name"] != "echo" || attrs["agentfleet.tool.output_bytes"] == nil {
				t.Errorf("tool call attributes %v", attrs)
			}
			if _, ok := attrs["gen_ai.tool.call.arguments"]; ok {
				t.Errorf("the tool span carries its arguments with recording off: %v", attrs)
			}
		}
	}
}

// TestModelSpanCarriesCost: with Config.Price, each model call's span
// carries what it cost, priced from the model that answered and its usage.
func TestModelSpanCarriesCost(t *testing.T) {
	exp := traced(t)
	var priced []string
	s, err := agent.New(agent.Config{Client: &pingPong{}, Profile: &testProfile{reg: tools.NewRegistry(echoTool(false)), window: 1 << 20},
		Env: dirEnv{dir: t.TempDir()}, ID: "priced",
		Price: func(model string, u llm.Usage) float64 {
			priced = append(priced, model)
			return float64(u.InputTokens+u.OutputTokens) / 1000
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	if _, err := s.Submit(context.Background(), "echo hi"); err != nil {
		t.Fatal(err)
	}
	calls := 0
	for _, sp := range exp.GetSpans() {
		if sp.Name != "chat test-model" {
			continue
		}
		calls++
		attrs := map[string]any{}
		for _, a := range sp.Attributes {
			attrs[string(a.Key)] = a.Value.AsInterface()
		}
		in, _ := attrs["gen_ai.usage.input_tokens"].(int64)
		out, _ := attrs["gen_ai.usage.output_tokens"].(int64)
		if cost, ok := attrs["agentfleet.usage.cost_usd"].(float64); !ok || cost != float64(in+out)/1000 {
			t.Errorf("model call cost %v, want %v (attributes %v)", attrs["agentfleet.usage.cost_usd"], float64(in+out)/1000, attrs)
		}
	}
	if calls != 2 || len(priced) != 2 || priced[0] == "" {
		t.Fatalf("%d model spans, priced %q; want 2 each, with a model", calls, priced)
	}
}

// BenchmarkLoopRoundTraced is BenchmarkLoopRound (history=10) with a
// recording tracer, against which the no-op one of BenchmarkLoopRound is
// compared (docs/operations.md "Tracing").
func BenchmarkLoopRoundTraced(b *testing.B) {
	traced(b)
	profile := &testProfile{reg: tools.NewRegistry(echoTool(false)), window: 1 << 30}
	hist := syntheticHistory(10)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		s, err := agent.New(agent.Config{Client: &pingPong{}, Profile: profile, Env: dirEnv{dir: b.TempDir()}, History: hist, ID: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Submit(context.Background(), "warm up"); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if out, err := s.Submit(context.Background(), "echo hi"); err != nil || out.Rounds != 1 {
			b.Fatalf("%+v %v", out, err)
		}
		b.StopTimer()
		_ = s.Close()
		b.StartTimer()
	}
}

// TestToolSpanRecordsRedactedIO: with tracing.record_tool_io on, a tool
// span carries its arguments and output, with the session's secrets
// replaced before they reach the span.
func TestToolSpanRecordsRedactedIO(t *testing.T) {
	exp := traced(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "") // Setup only sets the flag
	if _, err := tracing.Setup(context.Background(), tracing.Options{RecordToolIO: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = tracing.Setup(context.Background(), tracing.Options{}) })
	const secret = "tok-9f8e7d6c5b4a"
	client := newFakeClient(step{calls: []llm.ToolCall{call("c1", "echo", map[string]string{"text": "key " + secret})}})
	s, err := agent.New(agent.Config{Client: client, Profile: &testProfile{reg: tools.NewRegistry(echoTool(false)), window: 1 << 20},
		Env: dirEnv{dir: t.TempDir()}, ID: "traced-io", Redactor: agent.NewRedactor(map[string]string{"API_TOKEN": secret})})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	if _, err := s.Submit(context.Background(), "echo the key"); err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, sp := range exp.GetSpans() {
		if sp.Name != "execute_tool echo" {
			continue
		}
		found = true
		attrs := map[string]string{}
		for _, a := range sp.Attributes {
			attrs[string(a.Key)] = a.Value.AsString()
		}
		args, out := attrs["gen_ai.tool.call.arguments"], attrs["gen_ai.tool.call.result"]
		if !strings.Contains(args, "[redacted:API_TOKEN]") || !strings.Contains(out, "[redacted:API_TOKEN]") {
			t.Errorf("recorded arguments %q and output %q, want both with the secret's mark", args, out)
		}
		for k, v := range attrs {
			if strings.Contains(v, secret) {
				t.Errorf("span attribute %s carries the secret: %q", k, v)
			}
		}
	}
	if !found {
		t.Fatal("no execute_tool span was recorded")
	}
}
