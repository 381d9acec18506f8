package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/tools"
)

// rounds returns n scripted answers, each one tool call made by mk(i).
func rounds(n int, mk func(i int) llm.ToolCall) []step {
	steps := make([]step, n)
	for i := range steps {
		steps[i] = step{calls: []llm.ToolCall{mk(i)}}
	}
	return steps
}

func watchdogNotes(h []agent.Turn) int {
	n := 0
	for _, t := range h {
		if t.Kind == agent.TurnSteering && t.Source == "watchdog" {
			n++
		}
	}
	return n
}

func TestProgressWatchdog(t *testing.T) {
	cases := []struct {
		name       string
		cfg        agent.SessionConfig
		call       func(i int) llm.ToolCall
		wantStop   agent.StopReason
		wantRounds int
		wantNotes  int
	}{
		{"the same call with the same result", agent.SessionConfig{DisableLoopDetection: true},
			func(i int) llm.ToolCall { return call(fmt.Sprint(i), "echo", map[string]any{"text": "same"}) },
			agent.StopNoProgress, 13, 1}, // 1 fresh round, told after 8 stalled, stopped after 12
		{"new arguments, the same failure", agent.SessionConfig{NoProgressRounds: 4},
			func(i int) llm.ToolCall { return call(fmt.Sprint(i), "fail", map[string]any{"try": i}) },
			agent.StopNoProgress, 7, 1}, // 1 fresh round, told after 4, stopped after 6
		{"new calls are progress", agent.SessionConfig{NoProgressRounds: 4},
			func(i int) llm.ToolCall {
				return call(fmt.Sprint(i), "echo", map[string]any{"text": fmt.Sprint("file ", i)})
			},
			agent.StopCompleted, 20, 0},
		{"off", agent.SessionConfig{NoProgressRounds: -1, DisableLoopDetection: true},
			func(i int) llm.ToolCall { return call(fmt.Sprint(i), "echo", map[string]any{"text": "same"}) },
			agent.StopCompleted, 20, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, agent.Config{Session: c.cfg}, newFakeClient(rounds(20, c.call)...))
			out, err := b.s.Submit(ctx30(t), "work")
			if err != nil {
				t.Fatal(err)
			}
			if out.Stop != c.wantStop || out.Rounds != c.wantRounds {
				t.Fatalf("stop %s after %d rounds, want %s after %d", out.Stop, out.Rounds, c.wantStop, c.wantRounds)
			}
			if n := watchdogNotes(b.s.History()); n != c.wantNotes {
				t.Fatalf("%d watchdog notes, want %d", n, c.wantNotes)
			}
			if c.wantStop == agent.StopNoProgress && b.s.State() != agent.StateIdle {
				t.Fatalf("state %s after a no-progress stop, want IDLE", b.s.State())
			}
		})
	}
}

// Progress resets the streak: a stall interrupted by a new call starts over.
func TestProgressWatchdogResets(t *testing.T) {
	same := func(id string) step {
		return step{calls: []llm.ToolCall{call(id, "echo", map[string]any{"text": "same"})}}
	}
	var steps []step
	for i := range 3 {
		steps = append(steps, same(fmt.Sprint("a", i)))
	}
	steps = append(steps, step{calls: []llm.ToolCall{call("new", "echo", map[string]any{"text": "new"})}})
	for i := range 3 {
		steps = append(steps, same(fmt.Sprint("b", i)))
	}
	b := setup(t, agent.Config{Session: agent.SessionConfig{NoProgressRounds: 3}}, newFakeClient(append(steps, step{text: "done"})...))
	out, err := b.s.Submit(ctx30(t), "work")
	if err != nil {
		t.Fatal(err)
	}
	// a0 fresh, a1 a2 stalled (2), new resets, b0 b1 b2 stalled (3: told) then done.
	if out.Stop != agent.StopCompleted || watchdogNotes(b.s.History()) != 1 {
		t.Fatalf("stop %s, %d notes", out.Stop, watchdogNotes(b.s.History()))
	}
}

// Waiting on a subagent is not stalling: rounds that wait neither count
// nor reset.
func TestProgressWatchdogIgnoresWaiting(t *testing.T) {
	wait := tools.Tool{Name: "wait", Parameters: json.RawMessage(`{"type":"object"}`),
		Run: func(context.Context, tools.Call) (tools.Output, error) {
			return tools.Output{Text: "agent-1 is still running"}, nil
		}}
	steps := rounds(10, func(i int) llm.ToolCall { return call(fmt.Sprint(i), "wait", map[string]any{}) })
	cfg := agent.Config{Session: agent.SessionConfig{NoProgressRounds: 2, MaxSubagentDepth: -1, DisableLoopDetection: true}}
	b := setup(t, cfg, newFakeClient(append(steps, step{text: "child done"})...), wait)
	out, err := b.s.Submit(ctx30(t), "wait for the child")
	if err != nil {
		t.Fatal(err)
	}
	if out.Stop != agent.StopCompleted || out.Rounds != 10 || watchdogNotes(b.s.History()) != 0 {
		t.Fatalf("stop %s after %d rounds, %d notes", out.Stop, out.Rounds, watchdogNotes(b.s.History()))
	}
}
