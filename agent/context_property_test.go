package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/agent/compact"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/tools"
)

// wellFormed checks a request as a provider would: every tool result
// answers a call made earlier in the request, and every call of an
// assistant message is answered before the next assistant message.
func wellFormed(req llm.Request) error {
	calls := map[string]bool{}
	open := map[string]bool{}
	for i, m := range req.Messages {
		for _, p := range m.Content {
			switch {
			case p.Kind == llm.KindToolCall:
				calls[p.ToolCall.ID], open[p.ToolCall.ID] = true, true
			case p.Kind == llm.KindToolResult:
				if !calls[p.ToolResult.ToolCallID] {
					return fmt.Errorf("message %d: result for %s without its call", i, p.ToolResult.ToolCallID)
				}
				delete(open, p.ToolResult.ToolCallID)
			}
		}
		if m.Role == llm.RoleAssistant && i > 0 && len(open) > 0 && len(m.ToolCalls()) > 0 {
			for id := range open {
				if !strings.Contains(fmt.Sprint(m.ToolCalls()), id) {
					return fmt.Errorf("message %d: call %s was never answered", i, id)
				}
			}
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("calls without results at the end: %v", open)
	}
	return nil
}

// emitTool returns size characters.
func emitTool() tools.Tool {
	return tools.Typed(tools.Tool{Name: "emit", Description: "emit size characters",
		Parameters: json.RawMessage(`{"type":"object","properties":{"size":{"type":"integer"},"n":{"type":"integer"}}}`)},
		func(_ context.Context, _ tools.Call, p struct{ Size, N int }) (tools.Output, error) {
			return tools.Output{Text: strings.Repeat(fmt.Sprintf("%d ", p.N%10), p.Size/2)}, nil
		})
}

func TestCompactionPropertiesOverRandomSessions(t *testing.T) {
	for seed := range uint64(12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			rounds := 20 + r.IntN(60)
			var mu sync.Mutex
			done, failed := 0, ""
			answer := func(req llm.Request) (*llm.Response, error) {
				mu.Lock()
				defer mu.Unlock()
				if strings.HasPrefix(req.Messages[0].Text(), compact.SummaryMarker) {
					if r.IntN(4) == 0 {
						return nil, &llm.Error{Kind: llm.ErrServer, Provider: "test"}
					}
					return response("notes", llm.Usage{}), nil
				}
				if err := wellFormed(req); err != nil && failed == "" {
					failed = err.Error()
				}
				usage := llm.Usage{InputTokens: compact.RequestChars(req) * (3 + r.IntN(3)) / 16}
				if done >= rounds {
					return response("finished", usage), nil
				}
				done++
				var calls []llm.ToolCall
				for i := range 1 + r.IntN(3) {
					calls = append(calls, call(fmt.Sprintf("c%d_%d", done, i), "emit", map[string]int{"size": r.IntN(12000), "n": done*10 + i}))
				}
				return response("", usage, calls...), nil
			}
			steps := make([]step, 2000)
			for i := range steps {
				steps[i] = step{fn: answer}
			}
			rec := agent.NewMemoryRecorder()
			profile := &testProfile{reg: tools.NewRegistry(emitTool()), window: 16_000, parallel: r.IntN(2) == 0}
			b := setup(t, agent.Config{Profile: profile, Recorder: rec, Session: agent.SessionConfig{DisableLoopDetection: true}}, newFakeClient(steps...))
			var snapshots [][]agent.Turn
			for i := range 3 {
				if _, err := b.s.Submit(ctx30(t), fmt.Sprintf("input %d", i)); err != nil {
					t.Fatal(err)
				}
				h, _ := rec.Load(context.Background(), b.s.ID())
				snapshots = append(snapshots, h)
				mu.Lock()
				rounds += 5
				mu.Unlock()
			}
			if failed != "" {
				t.Fatalf("a request was not well-formed: %s", failed)
			}
			final := b.s.History()
			stored, _ := rec.Load(context.Background(), b.s.ID())
			if len(stored) != len(final) {
				t.Fatalf("the store has %d turns, the session %d", len(stored), len(final))
			}
			for _, snap := range snapshots {
				for i := range snap {
					x, _ := json.Marshal(snap[i])
					y, _ := json.Marshal(stored[i])
					if string(x) != string(y) {
						t.Fatalf("turn %d changed in the store after it was written", i)
					}
				}
			}
			compactions := 0
			for _, turn := range final {
				if turn.Kind == agent.TurnCompaction {
					compactions++
				}
			}
			if compactions == 0 {
				t.Fatal("no compaction: the test does not test compaction")
			}
		})
	}
}
