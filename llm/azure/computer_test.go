package azure_test

import (
	"context"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/llmtest"
	"github.com/agentfleet/agentfleet/llm/sim"
)

// Azure's Responses route names computer calls by the request's
// computer tool, as the OpenAI client does, whole and streamed.
func TestComputerCallsNamed(t *testing.T) {
	srv := sim.NewServer()
	t.Cleanup(srv.Close)
	policy, _ := llmtest.FastRetry(1)
	c := target("responses").New(t, srv.URL(), policy)
	req := llm.Request{Model: "computer-use-preview", Messages: []llm.Message{llm.UserMessage("look")},
		Tools: []llm.ToolDefinition{{Name: "screen", Provider: &llm.ProviderTool{Provider: "openai", Type: "computer_use_preview",
			Params: map[string]any{"display_width": 800, "display_height": 600, "environment": "linux"}}}}}
	for _, stream := range []bool{false, true} {
		srv.Enqueue(sim.Reply{ComputerCalls: []sim.ComputerCallReply{{ID: "call_1", Action: `{"type":"screenshot"}`}}})
		_, resp, err := llmtest.Call(context.Background(), c, req, stream)
		if err != nil {
			t.Fatal(err)
		}
		if calls := resp.ToolCalls(); len(calls) != 1 || calls[0].Name != "screen" || calls[0].ID != "call_1" {
			t.Fatalf("stream %v: calls %+v", stream, calls)
		}
	}
}
