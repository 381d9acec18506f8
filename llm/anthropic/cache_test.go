package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/agentfleet/agentfleet/internal/golden"
	"github.com/agentfleet/agentfleet/llm"
)

// cacheSession is a three-round conversation as the agent sends it: the
// system prompt, the tools, and one more exchange every round.
func cacheSession(rounds int) llm.Request {
	req := llm.Request{Model: "claude-sonnet-4-5",
		Tools: []llm.ToolDefinition{
			{Name: "read_file", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
			{Name: "shell", Description: "Run a command.", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)},
		},
		Messages: []llm.Message{llm.SystemMessage("You are a coding agent."), llm.UserMessage("Fix the test.")},
	}
	for i := 1; i < rounds; i++ {
		id := fmt.Sprintf("toolu_%d", i)
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.RoleAssistant, Content: []llm.ContentPart{{Kind: llm.KindToolCall,
				ToolCall: &llm.ToolCall{ID: id, Name: "shell", Arguments: json.RawMessage(`{"command":"go test"}`)}}}},
			llm.ToolResultMessage(llm.ToolResult{ToolCallID: id, Content: fmt.Sprintf("run %d: FAIL", i)}))
	}
	return req
}

// TestCacheBreakpointsGolden: the request body of rounds 1 to 3, byte for
// byte as sent: marks on the last tool, the system prompt and the two newest user
// messages, moving forward one exchange each round.
func TestCacheBreakpointsGolden(t *testing.T) {
	cache := &toolsCache{}
	for round := 1; round <= 3; round++ {
		req := cacheSession(round)
		w, err := buildRequest(req, true)
		if err != nil {
			t.Fatal(err)
		}
		body, err := requestBody(w, req.Tools, cache)
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("testdata", fmt.Sprintf("cache_round%d.golden.json", round)), body)
		if got, want := bytes.Count(body, []byte(`"cache_control"`)), min(round+2, maxBreakpoints); got != want {
			t.Errorf("round %d: %d cache marks, want %d", round, got, want)
		}
	}
}

// TestCacheBreakpointsWithinLimit: however the conversation looks, no
// request carries more than four marks, and prompt_cache: false sends none.
func TestCacheBreakpointsWithinLimit(t *testing.T) {
	for rounds := 1; rounds <= 30; rounds++ {
		req := cacheSession(rounds)
		req.Messages = append(req.Messages, llm.SystemMessage("a second system block"))
		w, err := buildRequest(req, false)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(w)
		if n := bytes.Count(body, []byte(`"cache_control"`)); n > maxBreakpoints || n < min(rounds+2, maxBreakpoints) {
			t.Fatalf("rounds %d: %d marks", rounds, n)
		}
	}
	req := cacheSession(3)
	req.ProviderOptions = llm.ProviderOptions{"anthropic": {"prompt_cache": false}}
	w, err := buildRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	if body, _ := json.Marshal(w); bytes.Contains(body, []byte("cache_control")) {
		t.Fatalf("prompt_cache false still marks: %s", body)
	}
	req.ProviderOptions = llm.ProviderOptions{"anthropic": {"prompt_cache": "yes"}}
	if _, err := buildRequest(req, false); err == nil {
		t.Fatal("a prompt_cache that is not a bool was accepted")
	}
}
