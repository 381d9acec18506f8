package gemini_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/internal/golden"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/gemini"
	"github.com/agentfleet/agentfleet/llm/llmtest"
	"github.com/agentfleet/agentfleet/llm/sim"
)

func builtin(typ string) llm.ToolDefinition {
	return llm.ToolDefinition{Provider: &llm.ProviderTool{Provider: "gemini", Type: typ}}
}

// Gemini's built-in tools through the simulated provider: code it ran
// comes back as executableCode and codeExecutionResult parts, searches
// and fetched URLs as the candidate's groundingMetadata and
// urlContextMetadata, all KindServerTool content and none a call, whole
// and streamed. The next request sends the code parts back as they came
// and leaves the metadata out, as the API takes no such part (golden).
func TestBuiltinToolsThroughSim(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv, c := setup(t)
		srv.Enqueue(sim.Reply{Text: "Go 1.26 is out; 2^10 is 1024.", ServerTools: []sim.ServerToolReply{
			{Tool: "google_search", Query: "Go 1.26 release", Sources: []sim.Source{{URL: "https://go.dev/doc/go1.26", Title: "go.dev"}}},
			{Tool: "code_execution", Code: "print(2**10)", Output: "1024\n"},
			{Tool: "url_context", Sources: []sim.Source{{URL: "https://go.dev/blog"}}},
		}}, sim.Text("You are welcome."))
		req := basicRequest()
		req.Tools = []llm.ToolDefinition{builtin("google_search"), builtin("code_execution"), builtin("url_context")}
		_, resp, err := llmtest.Call(testContext(t), c, req, stream)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.ToolCalls()) != 0 || resp.FinishReason.Reason != llm.FinishStop || resp.Text() != "Go 1.26 is out; 2^10 is 1024." {
			t.Fatalf("stream %v: calls %v finish %+v text %q", stream, resp.ToolCalls(), resp.FinishReason, resp.Text())
		}
		var kinds []string
		for _, p := range resp.Message.Content {
			if p.Kind == llm.KindServerTool {
				kinds = append(kinds, p.ServerTool.Type+"/"+p.ServerTool.Name)
			}
		}
		want := "executableCode/code_execution codeExecutionResult/code_execution groundingMetadata/google_search urlContextMetadata/url_context"
		if strings.Join(kinds, " ") != want {
			t.Fatalf("stream %v: server tool parts %v, want %s", stream, kinds, want)
		}
		last := resp.Message.Content[len(resp.Message.Content)-2]
		if !strings.Contains(string(last.ServerTool.Input), `"webSearchQueries":["Go 1.26 release"]`) ||
			!strings.Contains(string(last.ServerTool.Input), `"uri":"https://go.dev/doc/go1.26"`) {
			t.Fatalf("grounding %s", last.ServerTool.Input)
		}
		if got := srv.Requests()[0].Constraints.ProviderTools; strings.Join(got, ",") != "code_execution,google_search,url_context" {
			t.Fatalf("the sim saw provider tools %v", got)
		}

		req.Messages = append(req.Messages, resp.Message, llm.UserMessage("thanks"))
		if _, err := c.Complete(testContext(t), req); err != nil {
			t.Fatal(err)
		}
		body := srv.Requests()[1].Body
		if !stream {
			golden.Check(t, filepath.Join("testdata", "builtin_tools_followup.golden.json"), llmtest.IndentJSON(body))
		}
		var sent struct {
			Contents []struct {
				Parts []map[string]json.RawMessage `json:"parts"`
			} `json:"contents"`
		}
		if err := json.Unmarshal(body, &sent); err != nil {
			t.Fatal(err)
		}
		var fields []string
		for _, p := range sent.Contents[1].Parts {
			for k := range p {
				fields = append(fields, k)
			}
		}
		if strings.Join(fields, " ") != "executableCode codeExecutionResult text" {
			t.Errorf("stream %v: the model turn sent back has parts %v, want the code parts and the text", stream, fields)
		}
	}
}

// Metadata alone (no text, no code) still makes an answer of content.
func TestGroundingOnlyAnswer(t *testing.T) {
	resp, err := gemini.ParseResponse([]byte(`{"candidates":[{"content":{"role":"model","parts":[{"text":"Yes."}]},"finishReason":"STOP",` +
		`"groundingMetadata":{"webSearchQueries":["q"],"groundingChunks":[{"web":{"uri":"https://example.com","title":"ex"}}]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(resp.Message.Content); n != 2 || resp.Message.Content[1].ServerTool.Type != "groundingMetadata" || len(resp.Message.Content[1].Raw) != 0 {
		t.Fatalf("content %+v", resp.Message.Content)
	}
}
