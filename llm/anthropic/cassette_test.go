package anthropic_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/anthropic"
	"github.com/agentfleet/agentfleet/llm/llmtest"
)

// cassetteRoot finds ../shared/conformance/llm-cassettes from the module root.
func cassetteRoot(t testing.TB) string {
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
	root := filepath.Join(dir, "..", "shared", "conformance", "llm-cassettes")
	if _, err := os.Stat(root); err != nil {
		if os.Getenv("AGENTFLEET_REQUIRE_INTEGRATION") == "1" {
			t.Fatalf("conformance cassettes missing at %s", root)
		}
		t.Skipf("conformance cassettes not found at %s (they live next to the repository in ../shared)", root)
	}
	return root
}

// TestCassettes replays every recorded Anthropic exchange: the response the
// API sent must parse to what the recording holds, and the request we build
// for the same conversation must equal the recorded one field by field.
func TestCassettes(t *testing.T) {
	root := cassetteRoot(t)
	files, _ := filepath.Glob(filepath.Join(root, "TestAnthropic*", "*", "*.yaml"))
	if len(files) == 0 {
		t.Fatalf("no Anthropic cassettes under %s", root)
	}
	for _, path := range files {
		name, _ := filepath.Rel(root, strings.TrimSuffix(path, ".yaml"))
		t.Run(filepath.ToSlash(name), func(t *testing.T) {
			c, err := llmtest.LoadCassette(path)
			if err != nil {
				t.Fatal(err)
			}
			var prev *llm.Response
			for _, in := range c.Interactions {
				prev = replay(t, in, prev)
			}
		})
	}
}

// replay checks one interaction and returns the response it parsed. The
// assistant turn of the recorded request is also rebuilt from prev, the
// response we parsed for the previous interaction, so the round trip of
// thinking signatures is checked on our own output.
func replay(t *testing.T, in llmtest.Interaction, prev *llm.Response) *llm.Response {
	t.Helper()
	srv, c := setup(t)
	req, stream, err := requestFromRecording([]byte(in.Request.Body))
	if err != nil {
		t.Fatal(err)
	}
	if prev != nil {
		for i, m := range req.Messages {
			if m.Role == llm.RoleAssistant {
				req.Messages[i] = prev.Message
			}
		}
	}
	srv.Enqueue(in.RawReply())
	var resp *llm.Response
	if stream {
		_, resp, err = llmtest.Collect(c.Stream(testContext(t), req))
	} else {
		resp, err = c.Complete(testContext(t), req)
	}
	if err != nil {
		t.Fatalf("interaction %d: %v", in.ID, err)
	}
	assertSameJSON(t, fmt.Sprintf("interaction %d request", in.ID), srv.Requests()[0].Body, []byte(in.Request.Body))
	want, err := expected(in.Response.Body, stream)
	if err != nil {
		t.Fatal(err)
	}
	if got := summarize(resp); !reflect.DeepEqual(got, want) {
		t.Errorf("interaction %d response\n got: %+v\nwant: %+v", in.ID, got, want)
	}
	return resp
}

// requestFromRecording rebuilds the llm.Request a caller would have made
// for a recorded Messages API body.
func requestFromRecording(body []byte) (llm.Request, bool, error) {
	var w struct {
		Model     string `json:"model"`
		MaxTokens int    `json:"max_tokens"`
		Stream    bool   `json:"stream"`
		System    []struct {
			Text string `json:"text"`
		} `json:"system"`
		Thinking *struct {
			Budget int `json:"budget_tokens"`
		} `json:"thinking"`
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
		ToolChoice *struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"tool_choice"`
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		return llm.Request{}, false, err
	}
	req := llm.Request{Model: w.Model, MaxOutputTokens: w.MaxTokens}
	for _, s := range w.System {
		req.Messages = append(req.Messages, llm.SystemMessage(s.Text))
	}
	if w.Thinking != nil {
		req.ProviderOptions = llm.ProviderOptions{"anthropic": {"thinking_budget": w.Thinking.Budget}}
	}
	for _, tool := range w.Tools {
		req.Tools = append(req.Tools, llm.ToolDefinition{Name: tool.Name, Description: tool.Description, Parameters: tool.InputSchema})
	}
	if w.ToolChoice != nil {
		modes := map[string]llm.ToolChoiceMode{"auto": llm.ToolChoiceAuto, "any": llm.ToolChoiceRequired, "none": llm.ToolChoiceNone, "tool": llm.ToolChoiceNamed}
		req.ToolChoice = llm.ToolChoice{Mode: modes[w.ToolChoice.Type], Name: w.ToolChoice.Name}
	}
	for _, m := range w.Messages {
		msgs, err := messagesFromRecording(m.Role, m.Content)
		if err != nil {
			return llm.Request{}, false, err
		}
		req.Messages = append(req.Messages, msgs...)
	}
	return req, w.Stream, nil
}

func messagesFromRecording(role string, blocks []json.RawMessage) ([]llm.Message, error) {
	user := llm.Message{Role: llm.RoleUser}
	if role == "assistant" {
		user.Role = llm.RoleAssistant
	}
	tool := llm.Message{Role: llm.RoleTool}
	for _, raw := range blocks {
		var b struct {
			Type, Text, Thinking, Signature, Data, ID, Name string
			ToolUseID                                       string          `json:"tool_use_id"`
			IsError                                         bool            `json:"is_error"`
			Input                                           json.RawMessage `json:"input"`
			Content                                         []struct{ Text string }
		}
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, err
		}
		switch b.Type {
		case "text":
			user.Content = append(user.Content, llm.ContentPart{Kind: llm.KindText, Text: b.Text})
		case "thinking":
			user.Content = append(user.Content, llm.ContentPart{Kind: llm.KindReasoning, Reasoning: &llm.Reasoning{Text: b.Thinking, Signature: b.Signature}})
		case "redacted_thinking":
			user.Content = append(user.Content, llm.ContentPart{Kind: llm.KindReasoning, Reasoning: &llm.Reasoning{Redacted: true, Data: b.Data}})
		case "tool_use":
			user.Content = append(user.Content, llm.ContentPart{Kind: llm.KindToolCall, ToolCall: &llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: b.Input}})
		case "tool_result":
			var text strings.Builder
			for _, c := range b.Content {
				text.WriteString(c.Text)
			}
			tool.Content = append(tool.Content, llm.ContentPart{Kind: llm.KindToolResult,
				ToolResult: &llm.ToolResult{ToolCallID: b.ToolUseID, Content: text.String(), IsError: b.IsError}})
		default:
			return nil, fmt.Errorf("recorded block type %q is not modelled by this test", b.Type)
		}
	}
	var out []llm.Message
	for _, m := range []llm.Message{tool, user} {
		if len(m.Content) > 0 {
			out = append(out, m)
		}
	}
	return out, nil
}

// summary is what a response must carry: text, tool calls with parsed
// arguments, reasoning with signatures, usage and finish reason.
type summary struct {
	Text       string
	Calls      []call
	Reasoning  string
	Signatures []string
	Usage      llm.Usage
	Finish     llm.FinishReason
}

type call struct {
	ID, Name string
	Args     any
}

func summarize(r *llm.Response) summary {
	s := summary{Text: r.Text(), Reasoning: r.Reasoning(), Usage: r.Usage, Finish: r.FinishReason}
	for _, tc := range r.ToolCalls() {
		var args any
		_ = json.Unmarshal(tc.Arguments, &args)
		s.Calls = append(s.Calls, call{ID: tc.ID, Name: tc.Name, Args: args})
	}
	for _, p := range r.Message.Content {
		if p.Kind == llm.KindReasoning {
			s.Signatures = append(s.Signatures, p.Reasoning.Signature)
		}
	}
	return s
}

// expected reads the recorded response body on its own terms, without the
// adapter: the whole message, or the SSE events folded by index.
func expected(body string, stream bool) (summary, error) {
	type block struct {
		Type, Text, Thinking, Signature, ID, Name string
		Input                                     json.RawMessage
		partial                                   strings.Builder
	}
	type usage struct {
		Input       int `json:"input_tokens"`
		Output      int `json:"output_tokens"`
		CacheRead   int `json:"cache_read_input_tokens"`
		CacheCreate int `json:"cache_creation_input_tokens"`
	}
	var blocks []*block
	var u usage
	var stop string
	if !stream {
		var m struct {
			Content    []*block
			StopReason string `json:"stop_reason"`
			Usage      usage
		}
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			return summary{}, err
		}
		blocks, u, stop = m.Content, m.Usage, m.StopReason
	}
	for _, line := range strings.Split(body, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !stream || !ok {
			continue
		}
		var ev struct {
			Type         string
			Index        int
			ContentBlock *block `json:"content_block"`
			Message      *struct{ Usage usage }
			Usage        *usage
			Delta        struct {
				Type, Text, Thinking, Signature string
				PartialJSON                     string `json:"partial_json"`
				StopReason                      string `json:"stop_reason"`
			}
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return summary{}, err
		}
		switch ev.Type {
		case "message_start":
			u = ev.Message.Usage
		case "content_block_start":
			blocks = append(blocks, ev.ContentBlock)
		case "content_block_delta":
			b := blocks[ev.Index]
			b.Text += ev.Delta.Text
			b.Thinking += ev.Delta.Thinking
			b.Signature += ev.Delta.Signature
			b.partial.WriteString(ev.Delta.PartialJSON)
		case "message_delta":
			stop = ev.Delta.StopReason
			u.Output = ev.Usage.Output
		}
	}
	s := summary{Usage: llm.Usage{InputTokens: u.Input + u.CacheRead + u.CacheCreate, OutputTokens: u.Output,
		CacheReadTokens: u.CacheRead, CacheWriteTokens: u.CacheCreate}}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			s.Text += b.Text
		case "thinking":
			s.Reasoning += b.Thinking
			s.Signatures = append(s.Signatures, b.Signature)
		case "tool_use":
			input := b.Input
			if b.partial.Len() > 0 {
				input = json.RawMessage(b.partial.String())
			}
			var args any
			if err := json.Unmarshal(input, &args); err != nil {
				return summary{}, err
			}
			s.Calls = append(s.Calls, call{ID: b.ID, Name: b.Name, Args: args})
		}
	}
	finish := map[string]llm.FinishKind{"end_turn": llm.FinishStop, "tool_use": llm.FinishToolCalls, "max_tokens": llm.FinishLength}
	s.Finish = llm.FinishReason{Reason: finish[stop], Raw: stop}
	return s, nil
}

func assertSameJSON(t *testing.T, what string, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: ours is not JSON: %v", what, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: recorded is not JSON: %v", what, err)
	}
	if !reflect.DeepEqual(g, w) {
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(w)
		t.Errorf("%s differs\n ours: %s\n recorded: %s", what, gb, wb)
	}
}

var _ = anthropic.APIVersion
