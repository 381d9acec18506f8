package openai_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/internal/golden"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/llmtest"
	"github.com/agentfleet/agentfleet/llm/openai"
	"github.com/agentfleet/agentfleet/llm/sim"
)

// computerTool is the computer use definition a profile offers, named
// "computer" for the tool registered to run it.
func computerTool() llm.ToolDefinition {
	return llm.ToolDefinition{Name: "computer", Provider: &llm.ProviderTool{Provider: "openai", Type: openai.ComputerUseType,
		Params: map[string]any{"display_width": 1024, "display_height": 768, "environment": "browser"}}}
}

var png = []byte("\x89PNG-screen")

func computerRequest() llm.Request {
	return llm.Request{Model: "computer-use-preview", Tools: []llm.ToolDefinition{computerTool()},
		Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.ContentPart{
			{Kind: llm.KindText, Text: "Open the pricing page."},
			{Kind: llm.KindImage, Image: &llm.Image{MediaType: "image/png", Data: png}}}}}}
}

var check = sim.SafetyCheck{ID: "cs_1", Code: "malicious_instructions", Message: "The page asks to ignore instructions."}

// A computer_call comes back as a call of the computer tool, named as the
// request names it, with its action and pending checks as arguments, and
// goes back as the computer_call item with a computer_call_output that
// carries the screenshot and the acknowledged check; whole and streamed,
// through the simulated provider, which refuses an output that leaves a
// raised check unacknowledged.
func TestComputerUseRoundThroughSim(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv, c := setup(t)
		srv.Enqueue(sim.Reply{ComputerCalls: []sim.ComputerCallReply{{ID: "call_cu1", Action: `{"type":"click","x":10,"y":20,"button":"left"}`,
			SafetyChecks: []sim.SafetyCheck{check}}}}, sim.Text("Done."))
		req := computerRequest()
		events, first, err := llmtest.Call(context.Background(), c, req, stream)
		if stream && err == nil && (events[0].Kind != llm.EventToolCallStart || events[0].ToolCall.Name != "computer") {
			t.Fatalf("first event %+v, want the computer call's start", events[0])
		}
		if err != nil {
			t.Fatal(err)
		}
		calls := first.ToolCalls()
		if len(calls) != 1 || calls[0].Name != "computer" || calls[0].ID != "call_cu1" || first.FinishReason.Reason != llm.FinishToolCalls {
			t.Fatalf("stream %v: calls %+v finish %+v", stream, calls, first.FinishReason)
		}
		var args openai.ComputerArguments
		if err := json.Unmarshal(calls[0].Arguments, &args); err != nil || !strings.Contains(string(args.Action), `"type":"click"`) ||
			len(args.PendingSafetyChecks) != 1 || args.PendingSafetyChecks[0].ID != "cs_1" {
			t.Fatalf("arguments %s (%v)", calls[0].Arguments, err)
		}
		cons := srv.Requests()[0].Constraints
		if len(cons.ProviderTools) != 1 || cons.ProviderTools[0] != openai.ComputerUseType {
			t.Fatalf("the sim saw provider tools %v", cons.ProviderTools)
		}

		// Unacknowledged: refused here, with what to do.
		shot := llm.Image{MediaType: "image/png", Data: []byte("\x89PNG-after")}
		req.Messages = append(req.Messages, first.Message, llm.ToolResultMessage(llm.ToolResult{ToolCallID: "call_cu1", Name: "computer", Content: "clicked", Images: []llm.Image{shot}}))
		if _, err := c.Complete(context.Background(), req); err == nil || !strings.Contains(err.Error(), "does not acknowledge") ||
			!strings.Contains(err.Error(), "cs_1") {
			t.Fatalf("an unacknowledged check: %v", err)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Fatalf("%d requests reached the provider; the refused one must not", n)
		}

		// Acknowledged: answered.
		req.Messages[len(req.Messages)-1] = llm.ToolResultMessage(llm.ToolResult{ToolCallID: "call_cu1", Name: "computer",
			Content: `{"acknowledged_safety_checks":["cs_1"]}`, Images: []llm.Image{shot}})
		second, err := c.Complete(context.Background(), req)
		if err != nil || second.Text() != "Done." {
			t.Fatalf("after the screenshot: %v %+v", err, second)
		}
		var sent struct {
			Truncation string            `json:"truncation"`
			Input      []json.RawMessage `json:"input"`
		}
		if err := json.Unmarshal(srv.Requests()[1].Body, &sent); err != nil {
			t.Fatal(err)
		}
		if sent.Truncation != "auto" || len(sent.Input) != 3 {
			t.Fatalf("truncation %q, %d input items", sent.Truncation, len(sent.Input))
		}
		if s := string(sent.Input[1]); !strings.Contains(s, `"type":"computer_call"`) || !strings.Contains(s, `"call_id":"call_cu1"`) ||
			!strings.Contains(s, `"id":"cu_`) || !strings.Contains(s, `"pending_safety_checks":[{"id":"cs_1"`) {
			t.Errorf("the call sent back: %s", s)
		}
		if s := string(sent.Input[2]); !strings.Contains(s, `"type":"computer_call_output"`) ||
			!strings.Contains(s, `"output":{"type":"computer_screenshot","image_url":"data:image/png;base64,`) ||
			!strings.Contains(s, `"acknowledged_safety_checks":[{"id":"cs_1","code":"malicious_instructions"`) {
			t.Errorf("the output sent: %s", s)
		}
	}
}

// The request and its follow-up as the Responses API documents them:
// the tool with its display and environment, truncation auto, the
// computer_call echoed and the computer_call_output with its screenshot.
// A result without a screenshot sends the last one with its text as a
// user message.
func TestComputerUseGolden(t *testing.T) {
	resp, err := openai.ParseResponse([]byte(`{"id":"resp_1","model":"computer-use-preview","status":"completed","output":[` +
		`{"type":"computer_call","id":"cu_1","call_id":"call_1","action":{"type":"screenshot"},"pending_safety_checks":[],"status":"completed"},` +
		`{"type":"computer_call","id":"cu_2","call_id":"call_2","action":{"type":"type","text":"hello"},"pending_safety_checks":[],"status":"completed"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	openai.NameComputerCalls(resp, "computer")
	if calls := resp.ToolCalls(); len(calls) != 2 || calls[1].Name != "computer" || calls[1].ItemID != "cu_2" {
		t.Fatalf("calls %+v", calls)
	}
	req := computerRequest()
	req.Messages = append(req.Messages, resp.Message, llm.ToolResultMessage(
		llm.ToolResult{ToolCallID: "call_1", Name: "computer", Images: []llm.Image{{MediaType: "image/png", Data: []byte("shot-1")}}},
		llm.ToolResult{ToolCallID: "call_2", Name: "computer", Content: "typing was denied by policy", IsError: true}))
	body, err := openai.BuildRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "computer_use.golden.json"), llmtest.IndentJSON(body))
	for _, want := range []string{
		`{"display_height":768,"display_width":1024,"environment":"browser","type":"computer_use_preview"}`,
		`"truncation":"auto"`,
		`{"type":"computer_call_output","call_id":"call_2","output":{"type":"computer_screenshot","image_url":"data:image/png;base64,c2hvdC0x"}}`,
		`{"role":"user","content":[{"type":"input_text","text":"Computer call call_2: typing was denied by policy"}]}`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("body lacks %s:\n%s", want, body)
		}
	}
}

// Bad computer use input gets an error naming what is wrong.
func TestComputerUseRefused(t *testing.T) {
	bad := computerTool()
	bad.Provider.Params = map[string]any{"display_width": 1024, "environment": "browser"}
	req := computerRequest()
	req.Tools = []llm.ToolDefinition{bad}
	if _, err := openai.BuildRequest(req, false); err == nil || !strings.Contains(err.Error(), "params.display_height") {
		t.Errorf("no display height: %v", err)
	}
	bad.Provider.Params = map[string]any{"display_width": 1024, "display_height": 768, "environment": "amiga"}
	if _, err := openai.BuildRequest(req, false); err == nil || !strings.Contains(err.Error(), "params.environment") {
		t.Errorf("an unknown environment: %v", err)
	}

	call := llm.ContentPart{Kind: llm.KindToolCall, ToolCall: &llm.ToolCall{ID: "call_1", Name: "computer", ItemID: "cu_1",
		Arguments: json.RawMessage(`{"action":{"type":"screenshot"},"pending_safety_checks":[]}`)}}
	noShot := llm.Request{Model: "computer-use-preview", Tools: []llm.ToolDefinition{computerTool()}, Messages: []llm.Message{
		llm.UserMessage("look"), {Role: llm.RoleAssistant, Content: []llm.ContentPart{call}},
		llm.ToolResultMessage(llm.ToolResult{ToolCallID: "call_1", Content: "no display"})}}
	if _, err := openai.BuildRequest(noShot, false); err == nil || !strings.Contains(err.Error(), "must answer with an image") {
		t.Errorf("no screenshot anywhere: %v", err)
	}
	noShot.Messages[2] = llm.ToolResultMessage(llm.ToolResult{ToolCallID: "call_1", Content: `{"acknowledged_safety_checks":["cs_9"]}`,
		Images: []llm.Image{{MediaType: "image/png", Data: png}}})
	if _, err := openai.BuildRequest(noShot, false); err == nil || !strings.Contains(err.Error(), "did not raise") {
		t.Errorf("acknowledging a check never raised: %v", err)
	}
}

// Web search through the simulated provider: the web_search_call item is
// content, never a call, whole and streamed.
func TestWebSearchThroughSim(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv, c := setup(t)
		srv.Enqueue(sim.Reply{ServerTools: []sim.ServerToolReply{{Tool: "web_search", Query: "Go 1.26 release notes",
			Sources: []sim.Source{{URL: "https://go.dev/doc/go1.26"}}}}, Text: "Go 1.26 adds new(expr)."})
		req := request()
		req.Tools = []llm.ToolDefinition{{Name: "web_search", Provider: &llm.ProviderTool{Provider: "openai", Type: "web_search"}}}
		_, resp, err := llmtest.Call(context.Background(), c, req, stream)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.ToolCalls()) != 0 || resp.FinishReason.Reason != llm.FinishStop || resp.Text() != "Go 1.26 adds new(expr)." {
			t.Fatalf("stream %v: calls %v finish %+v text %q", stream, resp.ToolCalls(), resp.FinishReason, resp.Text())
		}
		p := resp.Message.Content[0]
		if p.Kind != llm.KindServerTool || p.ServerTool.Type != "web_search_call" || !strings.Contains(string(p.ServerTool.Input), "go.dev/doc/go1.26") {
			t.Fatalf("stream %v: part %+v", stream, p)
		}
	}
	// A reply searching when the request offers no search is the
	// script's mistake, not an answer.
	srv, c := setup(t)
	srv.Enqueue(sim.Reply{ServerTools: []sim.ServerToolReply{{Tool: "web_search", Query: "x"}}})
	if _, err := c.Complete(context.Background(), request()); err == nil || !strings.Contains(err.Error(), "does not offer") {
		t.Errorf("an unoffered search: %v", err)
	}
}
