package agent_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/tools"
)

// In a mixed round, consecutive read-only calls run concurrently, the
// mutating call runs after them and before the ones that follow it, and
// results come back in call order.
func TestMixedRoundRunsReadOnlyRunsConcurrently(t *testing.T) {
	var mu sync.Mutex
	var log []string
	note := func(s string) {
		mu.Lock()
		log = append(log, s)
		mu.Unlock()
	}
	started, gate := make(chan string, 4), make(chan struct{})
	look := tools.Tool{Name: "look", Parameters: json.RawMessage(`{"type":"object"}`),
		Run: func(ctx context.Context, c tools.Call) (tools.Output, error) {
			note("start " + c.ID)
			started <- c.ID
			select {
			case <-gate:
			case <-ctx.Done():
				return tools.Output{}, ctx.Err()
			}
			note("end " + c.ID)
			return tools.Output{Text: "saw " + c.ID}, nil
		}}
	change := tools.Tool{Name: "change", Mutates: true, Parameters: json.RawMessage(`{"type":"object"}`),
		Run: func(_ context.Context, c tools.Call) (tools.Output, error) {
			note("change " + c.ID)
			return tools.Output{Text: "changed"}, nil
		}}
	ids := []string{"a", "b", "m", "c", "d"}
	var calls []llm.ToolCall
	for _, id := range ids {
		name := "look"
		if id == "m" {
			name = "change"
		}
		calls = append(calls, llm.ToolCall{ID: id, Name: name, Arguments: []byte(`{}`)})
	}
	reg := tools.NewRegistry(look, change)
	b := setup(t, agent.Config{Profile: &testProfile{reg: reg, parallel: true, window: 1 << 20}},
		newFakeClient(step{calls: calls}, step{text: "ok"}))
	done := make(chan error, 1)
	go func() { _, err := b.s.Submit(context.Background(), "mixed"); done <- err }()

	// a and b both start while neither can finish: they run together.
	deadline := time.After(10 * time.Second)
	for range 2 {
		select {
		case <-started:
		case <-deadline:
			t.Fatal("the two read-only calls before the mutating one did not run concurrently")
		}
	}
	close(gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	at := func(s string) int { return slices.Index(log, s) }
	if at("change m") < at("end a") || at("change m") < at("end b") {
		t.Fatalf("the mutating call ran before the read-only calls before it ended: %v", log)
	}
	if at("start c") < at("change m") || at("start d") < at("change m") {
		t.Fatalf("a read-only call after the mutating one started before it: %v", log)
	}
	var got []string
	for _, r := range b.s.History()[2].Results {
		got = append(got, r.ToolCallID)
	}
	if !slices.Equal(got, ids) {
		t.Fatalf("results in order %v, want call order %v", got, ids)
	}
}
