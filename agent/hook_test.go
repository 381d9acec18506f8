package agent_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/llm"
)

// recordingHook blocks calls to "fail", appends a note to every other
// result, and warns at session_start; it records the points it saw.
type recordingHook struct {
	mu   sync.Mutex
	seen []agent.HookPoint
}

func (h *recordingHook) RunHook(_ context.Context, ev agent.HookEvent) agent.HookResult {
	h.mu.Lock()
	h.seen = append(h.seen, ev.Point)
	h.mu.Unlock()
	switch {
	case ev.Point == agent.HookSessionStart:
		return agent.HookResult{Warnings: []string{"a hook warned"}}
	case ev.Point == agent.HookPreToolUse && ev.ToolName == "fail":
		return agent.HookResult{Block: true, Reason: "fail is not allowed here"}
	case ev.Point == agent.HookPostToolUse:
		return agent.HookResult{Append: "formatter: ok (" + ev.Output + ")"}
	}
	return agent.HookResult{}
}

func TestHooksBlockAppendAndWarn(t *testing.T) {
	h := &recordingHook{}
	b := setup(t, agent.Config{Hooks: []agent.Hook{h}}, newFakeClient(
		step{calls: []llm.ToolCall{call("c1", "fail", map[string]string{}), call("c2", "echo", map[string]string{"text": "ping"})}},
		step{text: "done"}))
	if _, err := b.s.Submit(ctx30(t), "go"); err != nil {
		t.Fatal(err)
	}
	res := b.s.History()[2].Results
	if !res[0].IsError || res[0].Content != "Tool call blocked by a hook: fail is not allowed here" {
		t.Fatalf("blocked result = %+v", res[0])
	}
	if res[1].IsError || res[1].Content != "ping\n\nformatter: ok (ping)" {
		t.Fatalf("appended result = %+v", res[1])
	}
	evs := b.waitEvent(t, agent.EventInputDone)
	if i := slices.IndexFunc(evs, func(e agent.Event) bool { return e.Kind == agent.EventWarning }); i != 1 || evs[i].Text != "a hook warned" {
		t.Fatalf("events = %v, want the hook's WARNING right after SESSION_START", kinds(evs))
	}
	b.s.Abort()
	h.mu.Lock()
	defer h.mu.Unlock()
	want := []agent.HookPoint{agent.HookSessionStart, agent.HookUserPromptSubmit, agent.HookPreToolUse,
		agent.HookPreToolUse, agent.HookPostToolUse, agent.HookSessionStop}
	if !slices.Equal(h.seen, want) {
		t.Fatalf("hook points = %v, want %v", h.seen, want)
	}
}
