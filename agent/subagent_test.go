package agent_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/llm"
)

// routeClient answers by the first user message, so parent and child
// sessions sharing one client get their own scripts.
func routeClient(parent, child []step) *fakeClient {
	var mu sync.Mutex
	pick := func(req llm.Request) (*llm.Response, error) {
		mu.Lock()
		defer mu.Unlock()
		q := &parent
		for _, m := range req.Messages {
			if m.Role == llm.RoleUser {
				if strings.HasPrefix(m.Text(), "CHILD:") {
					q = &child
				}
				break
			}
		}
		st := step{text: "done"}
		if len(*q) > 0 {
			st, *q = (*q)[0], (*q)[1:]
		}
		if st.fn != nil {
			return st.fn(req)
		}
		return response(st.text, st.usage, st.calls...), nil
	}
	return newFakeClient(step{fn: pick}, step{fn: pick}, step{fn: pick}, step{fn: pick}, step{fn: pick}, step{fn: pick}, step{fn: pick})
}

func TestSubagentSpawnWaitSharesEnvironment(t *testing.T) {
	var childID string
	parent := []step{
		{calls: []llm.ToolCall{call("s", "spawn_agent", map[string]string{"task": "CHILD: echo from child"})}},
		{fn: func(req llm.Request) (*llm.Response, error) {
			var st agent.SubagentStatus
			msgs := req.Messages
			_ = json.Unmarshal([]byte(msgs[len(msgs)-1].Content[0].ToolResult.Content), &st)
			childID = st.AgentID
			return response("", llm.Usage{}, call("w", "wait", map[string]string{"agent_id": st.AgentID})), nil
		}},
		{text: "the child finished"},
	}
	child := []step{
		{calls: []llm.ToolCall{call("e", "echo", map[string]string{"text": "child was here"})}},
		{text: "child output"},
	}
	var children []*agent.Session
	b := setup(t, agent.Config{OnSubagent: func(c *agent.Session) { children = append(children, c) }}, routeClient(parent, child))
	out, err := b.s.Submit(ctx30(t), "delegate")
	if err != nil || out.Text != "the child finished" {
		t.Fatalf("%+v %v", out, err)
	}
	if len(children) != 1 || childID != "agent-1" || children[0].Depth() != 1 {
		t.Fatalf("children = %v, id %q", children, childID)
	}
	if children[0].Env() != b.s.Env() {
		t.Fatal("child does not share the parent's environment")
	}
	if n := len(children[0].History()); n != 4 {
		t.Fatalf("child history has %d turns, want 4", n)
	}
	if n := len(b.s.History()); n != 6 {
		t.Fatalf("parent history has %d turns, want 6 (independent histories)", n)
	}
	var res agent.SubagentResult
	if err := json.Unmarshal([]byte(b.s.History()[4].Results[0].Content), &res); err != nil {
		t.Fatal(err)
	}
	if res.Output != "child output" || !res.Success || res.TurnsUsed != 2 || res.Status != agent.SubagentCompleted {
		t.Fatalf("wait result = %+v", res)
	}
}

func TestSubagentDepthLimit(t *testing.T) {
	client := newFakeClient(step{calls: []llm.ToolCall{call("s", "spawn_agent", map[string]string{"task": "deeper"})}}, step{text: "did it myself"})
	b := setup(t, agent.Config{Depth: 1}, client)
	if _, err := b.s.Submit(ctx30(t), "go"); err != nil {
		t.Fatal(err)
	}
	r := b.s.History()[2].Results[0]
	if !r.IsError || !strings.Contains(r.Content, `Unknown tool: "spawn_agent"`) {
		t.Fatalf("result = %+v", r)
	}
	for _, name := range []string{"spawn_agent", "send_input", "wait", "close_agent"} {
		if _, ok := b.s.Registry().Get(name); ok {
			t.Errorf("%s is registered on a session that may not spawn", name)
		}
	}
}

func TestSubagentSendInputAndClose(t *testing.T) {
	var id string
	parent := []step{
		{calls: []llm.ToolCall{call("s", "spawn_agent", map[string]string{"task": "CHILD: first"})}},
		{fn: func(req llm.Request) (*llm.Response, error) {
			var st agent.SubagentStatus
			msgs := req.Messages
			_ = json.Unmarshal([]byte(msgs[len(msgs)-1].Content[0].ToolResult.Content), &st)
			id = st.AgentID
			return response("", llm.Usage{}, call("w", "wait", map[string]string{"agent_id": id})), nil
		}},
		{fn: func(llm.Request) (*llm.Response, error) {
			return response("", llm.Usage{}, call("i", "send_input", map[string]string{"agent_id": id, "message": "second"})), nil
		}},
		{fn: func(llm.Request) (*llm.Response, error) {
			return response("", llm.Usage{}, call("w2", "wait", map[string]string{"agent_id": id})), nil
		}},
		{fn: func(llm.Request) (*llm.Response, error) {
			return response("", llm.Usage{}, call("c", "close_agent", map[string]string{"agent_id": id})), nil
		}},
		{text: "all closed"},
	}
	child := []step{{text: "first answer"}, {text: "second answer"}}
	b := setup(t, agent.Config{}, routeClient(parent, child))
	if _, err := b.s.Submit(ctx30(t), "go"); err != nil {
		t.Fatal(err)
	}
	h := b.s.History()
	var res agent.SubagentResult
	_ = json.Unmarshal([]byte(h[8].Results[0].Content), &res)
	if res.Output != "second answer" {
		t.Fatalf("second wait = %+v", res)
	}
	if !strings.Contains(h[10].Results[0].Content, `"closed"`) {
		t.Fatalf("close result = %q", h[10].Results[0].Content)
	}
}
