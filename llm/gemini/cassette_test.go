package gemini_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
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

// TestCassettes replays every recorded Gemini exchange: the response must
// parse to what the recording holds, and the request we build for the same
// conversation must equal the recorded one field by field, URL included.
func TestCassettes(t *testing.T) {
	root := cassetteRoot(t)
	files, _ := filepath.Glob(filepath.Join(root, "TestGoogle*", "*", "*.yaml"))
	if len(files) == 0 {
		t.Fatalf("no Gemini cassettes under %s", root)
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
// model turn of the recorded request is rebuilt from prev, our parse of the
// previous response, so signatures round-trip through our own output; only
// the call ids are taken from the recording, where the recording client
// synthesized its own ("1", "2") for models that send none.
func replay(t *testing.T, in llmtest.Interaction, prev *llm.Response) *llm.Response {
	t.Helper()
	srv, c := setup(t)
	req, err := requestFromRecording(in.Request.URL, []byte(in.Request.Body))
	if err != nil {
		t.Fatal(err)
	}
	if prev != nil {
		useOwnModelTurn(req.Messages, prev.Message)
	}
	stream := strings.Contains(in.Request.URL, ":streamGenerateContent")
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
	got := srv.Requests()[0]
	if u, _ := url.Parse(in.Request.URL); u.Path != got.Path || u.RawQuery != got.Query {
		t.Errorf("interaction %d: sent %s?%s, recorded %s", in.ID, got.Path, got.Query, in.Request.URL)
	}
	assertSameJSON(t, fmt.Sprintf("interaction %d request", in.ID), got.Body, []byte(in.Request.Body))
	want, err := expected(in.Response.Body, stream)
	if err != nil {
		t.Fatal(err)
	}
	if got := summarize(resp); !reflect.DeepEqual(got, want) {
		t.Errorf("interaction %d response\n got: %+v\nwant: %+v", in.ID, got, want)
	}
	return resp
}

// useOwnModelTurn replaces the recorded model turn with ours, keeping the
// recorded call ids.
func useOwnModelTurn(msgs []llm.Message, own llm.Message) {
	for i, m := range msgs {
		if m.Role != llm.RoleAssistant {
			continue
		}
		ids := m.ToolCalls()
		content := make([]llm.ContentPart, len(own.Content))
		n := 0
		for j, p := range own.Content {
			if p.Kind == llm.KindToolCall && n < len(ids) {
				tc := *p.ToolCall
				tc.ID = ids[n].ID
				n++
				p.ToolCall = &tc
			}
			content[j] = p
		}
		msgs[i] = llm.Message{Role: llm.RoleAssistant, Content: content}
	}
}

type wirePart struct {
	Text             *string `json:"text"`
	Thought          bool    `json:"thought"`
	ThoughtSignature string  `json:"thoughtSignature"`
	FunctionCall     *struct {
		ID, Name string
		Args     json.RawMessage
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID, Name string
		Response map[string]string
	} `json:"functionResponse"`
}

// requestFromRecording rebuilds the llm.Request a caller would have made for
// a recorded generateContent call (the model is in the URL). Declarations go back to JSON Schema (lower
// case types), as a caller writes them.
func requestFromRecording(rawURL string, body []byte) (llm.Request, error) {
	var w struct {
		Contents []struct {
			Role  string
			Parts []wirePart
		}
		SystemInstruction *struct{ Parts []wirePart }
		Tools             []struct {
			FunctionDeclarations []struct {
				Name, Description string
				Parameters        map[string]any
			}
		}
		ToolConfig *struct {
			FunctionCallingConfig struct{ Mode string }
		}
		GenerationConfig struct {
			MaxOutputTokens int
			ThinkingConfig  *struct {
				IncludeThoughts *bool
				ThinkingBudget  *int
				ThinkingLevel   string
			}
		}
	}
	if err := json.Unmarshal(body, &w); err != nil {
		return llm.Request{}, err
	}
	_, model, _ := strings.Cut(rawURL, "/models/")
	model, _, _ = strings.Cut(model, ":")
	req := llm.Request{Model: model, MaxOutputTokens: w.GenerationConfig.MaxOutputTokens}
	if w.SystemInstruction != nil {
		for _, p := range w.SystemInstruction.Parts {
			req.Messages = append(req.Messages, llm.SystemMessage(*p.Text))
		}
	}
	if tc := w.GenerationConfig.ThinkingConfig; tc != nil {
		opts := map[string]any{}
		if tc.ThinkingBudget != nil {
			opts["thinking_budget"] = *tc.ThinkingBudget
		}
		if tc.IncludeThoughts != nil {
			opts["include_thoughts"] = *tc.IncludeThoughts
		}
		req.ProviderOptions = llm.ProviderOptions{"gemini": opts}
		req.ReasoningEffort = strings.ToLower(tc.ThinkingLevel)
	}
	for _, tool := range w.Tools {
		for _, d := range tool.FunctionDeclarations {
			schema, _ := json.Marshal(lowerTypes(d.Parameters))
			req.Tools = append(req.Tools, llm.ToolDefinition{Name: d.Name, Description: d.Description, Parameters: schema})
		}
	}
	if w.ToolConfig != nil {
		modes := map[string]llm.ToolChoiceMode{"AUTO": llm.ToolChoiceAuto, "ANY": llm.ToolChoiceRequired, "NONE": llm.ToolChoiceNone}
		req.ToolChoice.Mode = modes[w.ToolConfig.FunctionCallingConfig.Mode]
	}
	for _, c := range w.Contents {
		req.Messages = append(req.Messages, messagesFromRecording(c.Role, c.Parts)...)
	}
	return req, nil
}

func lowerTypes(s map[string]any) map[string]any {
	for k, v := range s {
		switch x := v.(type) {
		case string:
			if k == "type" {
				s[k] = strings.ToLower(x)
			}
		case map[string]any:
			if k == "properties" {
				for _, p := range x {
					lowerTypes(p.(map[string]any))
				}
			} else {
				lowerTypes(x)
			}
		}
	}
	return s
}

func messagesFromRecording(role string, parts []wirePart) []llm.Message {
	msg := llm.Message{Role: llm.RoleUser}
	if role == "model" {
		msg.Role = llm.RoleAssistant
	}
	tool := llm.Message{Role: llm.RoleTool}
	for _, p := range parts {
		switch {
		case p.FunctionCall != nil:
			msg.Content = append(msg.Content, llm.ContentPart{Kind: llm.KindToolCall, ToolCall: &llm.ToolCall{
				ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Arguments: p.FunctionCall.Args, Signature: p.ThoughtSignature}})
		case p.FunctionResponse != nil:
			fr := p.FunctionResponse
			content, isErr := fr.Response["result"], false
			if e, ok := fr.Response["error"]; ok {
				content, isErr = e, true
			}
			tool.Content = append(tool.Content, llm.ContentPart{Kind: llm.KindToolResult,
				ToolResult: &llm.ToolResult{ToolCallID: fr.ID, Name: fr.Name, Content: content, IsError: isErr}})
		case p.Thought:
			msg.Content = append(msg.Content, llm.ContentPart{Kind: llm.KindReasoning,
				Reasoning: &llm.Reasoning{Text: *p.Text, Signature: p.ThoughtSignature}})
		case p.Text != nil:
			msg.Content = append(msg.Content, llm.ContentPart{Kind: llm.KindText, Text: *p.Text, Signature: p.ThoughtSignature})
		}
	}
	var out []llm.Message
	for _, m := range []llm.Message{tool, msg} {
		if len(m.Content) > 0 {
			out = append(out, m)
		}
	}
	return out
}

// summary is what a response must carry: text, tool calls with parsed
// arguments and signatures, reasoning, every thoughtSignature in order,
// usage and finish reason.
type summary struct {
	Text       string
	Calls      []call
	Reasoning  string
	Signatures []string
	Usage      llm.Usage
	Finish     llm.FinishReason
}

type call struct {
	ID, Name, Signature string
	Args                any
}

func summarize(r *llm.Response) summary {
	s := summary{Text: r.Text(), Reasoning: r.Reasoning(), Usage: r.Usage, Finish: r.FinishReason}
	for _, p := range r.Message.Content {
		sig := p.Signature
		switch p.Kind {
		case llm.KindToolCall:
			var args any
			_ = json.Unmarshal(p.ToolCall.Arguments, &args)
			s.Calls = append(s.Calls, call{ID: p.ToolCall.ID, Name: p.ToolCall.Name, Signature: p.ToolCall.Signature, Args: args})
			sig = p.ToolCall.Signature
		case llm.KindReasoning:
			sig = p.Reasoning.Signature
		}
		if sig != "" {
			s.Signatures = append(s.Signatures, sig)
		}
	}
	return s
}

// expected reads the recorded body without the adapter: one response, or
// the SSE data lines, each a chunk. Calls without an id get the documented
// synthetic one, call_<responseId>_<n>.
func expected(body string, stream bool) (summary, error) {
	chunks := []string{body}
	if stream {
		chunks = nil
		for _, line := range strings.Split(body, "\n") {
			if data, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "data: "); ok {
				chunks = append(chunks, data)
			}
		}
	}
	var s summary
	var finish string
	for _, c := range chunks {
		var r struct {
			ResponseID string
			Candidates []struct {
				FinishReason string
				Content      struct{ Parts []wirePart }
			}
			UsageMetadata struct {
				PromptTokenCount, CandidatesTokenCount, ThoughtsTokenCount, CachedContentTokenCount int
			}
		}
		if err := json.Unmarshal([]byte(c), &r); err != nil {
			return summary{}, err
		}
		u := r.UsageMetadata
		s.Usage = llm.Usage{InputTokens: u.PromptTokenCount, OutputTokens: u.CandidatesTokenCount + u.ThoughtsTokenCount,
			ReasoningTokens: u.ThoughtsTokenCount, CacheReadTokens: u.CachedContentTokenCount}
		for _, cand := range r.Candidates {
			if cand.FinishReason != "" {
				finish = cand.FinishReason
			}
			for _, p := range cand.Content.Parts {
				if p.ThoughtSignature != "" {
					s.Signatures = append(s.Signatures, p.ThoughtSignature)
				}
				switch {
				case p.FunctionCall != nil:
					id := p.FunctionCall.ID
					if id == "" {
						id = fmt.Sprintf("call_%s_%d", r.ResponseID, len(s.Calls))
					}
					var args any
					if err := json.Unmarshal(p.FunctionCall.Args, &args); err != nil {
						return summary{}, err
					}
					s.Calls = append(s.Calls, call{ID: id, Name: p.FunctionCall.Name, Signature: p.ThoughtSignature, Args: args})
				case p.Thought:
					s.Reasoning += *p.Text
				case p.Text != nil:
					s.Text += *p.Text
				}
			}
		}
	}
	kind := map[string]llm.FinishKind{"STOP": llm.FinishStop, "MAX_TOKENS": llm.FinishLength}[finish]
	if kind == llm.FinishStop && len(s.Calls) > 0 {
		kind = llm.FinishToolCalls
	}
	s.Finish = llm.FinishReason{Reason: kind, Raw: finish}
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
