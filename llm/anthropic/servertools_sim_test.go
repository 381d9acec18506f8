package anthropic_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/llmtest"
	"github.com/agentfleet/agentfleet/llm/sim"
)

// Web search through the simulated provider: the server_tool_use block
// and its web_search_tool_result are content, never calls, whole and
// streamed, and go back byte for byte in the next request.
func TestWebSearchThroughSim(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv, c := setup(t)
		srv.Enqueue(sim.Reply{ServerTools: []sim.ServerToolReply{{Tool: "web_search", Query: "Go 1.26 release notes",
			Sources: []sim.Source{{URL: "https://go.dev/doc/go1.26", Title: "Go 1.26 Release Notes"}}}}, Text: "Go 1.26 adds new(expr)."},
			sim.Text("You are welcome."))
		req := llm.Request{Model: "claude-sonnet-4-5", MaxOutputTokens: 1024, Messages: []llm.Message{llm.UserMessage("what changed in Go 1.26?")},
			Tools: []llm.ToolDefinition{{Name: "web_search", Provider: &llm.ProviderTool{Provider: "anthropic", Type: "web_search_20250305",
				Params: map[string]any{"max_uses": 2}}}}}
		events, resp, err := llmtest.Call(context.Background(), c, req, stream)
		for _, e := range events { // none when whole
			if e.Kind == llm.EventToolCallStart {
				t.Fatalf("a server tool block emitted %s", e.Kind)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.ToolCalls()) != 0 || resp.FinishReason.Reason != llm.FinishStop || resp.Text() != "Go 1.26 adds new(expr)." {
			t.Fatalf("stream %v: calls %v finish %+v text %q", stream, resp.ToolCalls(), resp.FinishReason, resp.Text())
		}
		use, result := resp.Message.Content[0], resp.Message.Content[1]
		if use.Kind != llm.KindServerTool || use.ServerTool.Type != "server_tool_use" || !strings.Contains(string(use.ServerTool.Input), "Go 1.26 release notes") ||
			result.ServerTool.Type != "web_search_tool_result" || result.ServerTool.ID != use.ServerTool.ID {
			t.Fatalf("stream %v: parts %+v %+v", stream, use.ServerTool, result.ServerTool)
		}
		if got := srv.Requests()[0].Constraints.ProviderTools; len(got) != 1 || got[0] != "web_search_20250305" {
			t.Fatalf("the sim saw provider tools %v", got)
		}
		req.Messages = append(req.Messages, resp.Message, llm.UserMessage("thanks"))
		if _, err := c.Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		var sent struct {
			Messages []struct {
				Content []json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(srv.Requests()[1].Body, &sent); err != nil {
			t.Fatal(err)
		}
		if got := sent.Messages[1].Content; len(got) != 3 || !strings.Contains(string(got[0]), `"type":"server_tool_use"`) ||
			!strings.Contains(string(got[1]), `"encrypted_content":"llmtest-encrypted"`) {
			t.Errorf("stream %v: the assistant turn sent back: %s", stream, got)
		}
	}
}
