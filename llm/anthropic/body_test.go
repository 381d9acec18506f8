package anthropic

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
)

// TestRequestBodyMatchesMarshal: the spliced body is byte for byte
// json.Marshal of the request, with and without tools, with an empty and a
// full tail, and with the tools from the cache on the second encoding.
func TestRequestBodyMatchesMarshal(t *testing.T) {
	temp := 0.5
	tools := []llm.ToolDefinition{
		{Name: "read_file", Description: "Read a file <b>&</b>.", Parameters: json.RawMessage(`{"type": "object",
			"properties": {"path": {"type": "string"}}}`)},
		{Name: "noop"},
	}
	reqs := map[string]llm.Request{
		"bare": {Model: "m", Messages: []llm.Message{llm.UserMessage("hi")}},
		"full": {Model: "m", Temperature: &temp, MaxOutputTokens: 10, ReasoningEffort: "low", Tools: tools,
			ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceNamed, Name: "noop"},
			Messages:   []llm.Message{llm.SystemMessage("sys <x>"), llm.UserMessage("hi\u2028")}},
		"tools only": {Model: "m", Tools: tools, ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceNone},
			Messages: []llm.Message{llm.UserMessage("hi")}},
	}
	cache := &toolsCache{}
	for name, req := range reqs {
		for _, stream := range []bool{false, true} {
			w, err := buildRequest(req, stream)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(w)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // the second time the tools come from the cache
				got, err := requestBody(w, req.Tools, cache)
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != string(want) {
					t.Errorf("%s (stream %v):\n got %s\nwant %s", name, stream, got, want)
				}
			}
		}
	}
}

// TestToolsCacheSeesChangedSchema: a schema changed in place after it was
// encoded is encoded anew, not served from the cache.
func TestToolsCacheSeesChangedSchema(t *testing.T) {
	params := []byte(`{"type":"object","properties":{"a":{"type":"string"}}}`)
	defs := []llm.ToolDefinition{{Name: "t", Parameters: params}}
	cache := &toolsCache{}
	first, err := cache.encoded(defs, convertTools(defs))
	if err != nil {
		t.Fatal(err)
	}
	copy(params[len(`{"type":"object","properties":{"`):], "b")
	second, err := cache.encoded(defs, convertTools(defs))
	if err != nil {
		t.Fatal(err)
	}
	if string(first) == string(second) {
		t.Fatalf("the cache served %s for a changed schema", second)
	}
	if want, _ := json.Marshal(convertTools(defs)); string(second) != string(want) {
		t.Fatalf("got %s, want %s", second, want)
	}
}

// TestToolsCacheRejectsInvalidSchema: a schema that is not JSON is an
// error every time, never cached.
func TestToolsCacheRejectsInvalidSchema(t *testing.T) {
	defs := []llm.ToolDefinition{{Name: "t", Parameters: json.RawMessage(`{"type":`)}}
	cache := &toolsCache{}
	for range 2 {
		if _, err := cache.encoded(defs, convertTools(defs)); err == nil {
			t.Fatal("an invalid schema encoded without error")
		}
	}
}

// TestToolsCacheConcurrent: goroutines encoding requests with different tool
// sets through one cache each get their own tools (run with -race).
func TestToolsCacheConcurrent(t *testing.T) {
	cache := &toolsCache{}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			defs := []llm.ToolDefinition{{Name: fmt.Sprintf("tool_%d", g%3), Parameters: json.RawMessage(`{"type":"object"}`)}}
			req := llm.Request{Model: "m", Tools: defs, Messages: []llm.Message{llm.UserMessage("hi")}}
			for range 50 {
				w, err := buildRequest(req, true)
				if err != nil {
					t.Error(err)
					return
				}
				want, _ := json.Marshal(w)
				got, err := requestBody(w, req.Tools, cache)
				if err != nil || string(got) != string(want) {
					t.Errorf("goroutine %d: got %s, %v; want %s", g, got, err, want)
					return
				}
			}
		})
	}
	wg.Wait()
}
