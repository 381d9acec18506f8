package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/internal/testenv"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/anthropic"
	"github.com/agentfleet/agentfleet/llm/llmtest"
	"github.com/agentfleet/agentfleet/llm/sim"
	"github.com/agentfleet/agentfleet/llm/sim/simtest"
)

// The Messages API recordings: no request field is ignored; the adapter must
// build exactly what was recorded (tool_choice's disable_parallel_tool_use
// included).
func init() {
	cassetteDialects["TestAnthropic"] = cassetteDialect{
		newClient: func(baseURL string) llm.Client {
			c, err := anthropic.New(anthropic.Config{BaseURL: baseURL, APIKey: "sk-ant-cassette"})
			if err != nil {
				panic(err)
			}
			return c
		},
		requestFromRecording: anthropicRequest,
		expected:             anthropicExpected,
	}
}

// anthropicRequest decodes a recorded Messages API body: system blocks
// become system messages, thinking.budget_tokens the thinking_budget option,
// tool_result blocks a tool message before the rest of their user turn.
func anthropicRequest(t *testing.T, body []byte) llm.Request {
	t.Helper()
	v := decodeJSON(t, body)
	req := llm.Request{Model: jstr(v, "model"), MaxOutputTokens: jint(v, "max_tokens")}
	for _, s := range jarr(v, "system") {
		req.Messages = append(req.Messages, llm.SystemMessage(jstr(s, "text")))
	}
	// The recordings were made without cache marks, which the adapter
	// sends by default: a recording without them turns them off.
	req.ProviderOptions = llm.ProviderOptions{"anthropic": {"prompt_cache": bytes.Contains(body, []byte(`"cache_control"`))}}
	if jstr(v, "thinking", "type") == "enabled" {
		req.ProviderOptions["anthropic"]["thinking_budget"] = jint(v, "thinking", "budget_tokens")
	}
	if temp, ok := jpath(v, "temperature").(float64); ok {
		req.Temperature = &temp
	}
	for _, tool := range jarr(v, "tools") {
		schema, _ := json.Marshal(jpath(tool, "input_schema"))
		req.Tools = append(req.Tools, llm.ToolDefinition{Name: jstr(tool, "name"), Description: jstr(tool, "description"), Parameters: schema})
	}
	modes := map[string]llm.ToolChoiceMode{"auto": llm.ToolChoiceAuto, "any": llm.ToolChoiceRequired, "none": llm.ToolChoiceNone, "tool": llm.ToolChoiceNamed}
	req.ToolChoice = llm.ToolChoice{Mode: modes[jstr(v, "tool_choice", "type")], Name: jstr(v, "tool_choice", "name")}
	for _, m := range jarr(v, "messages") {
		req.Messages = append(req.Messages, anthropicMessages(t, jstr(m, "role"), jarr(m, "content"))...)
	}
	return req
}

func anthropicMessages(t *testing.T, role string, blocks []any) []llm.Message {
	t.Helper()
	msg := llm.Message{Role: llm.RoleUser}
	if role == "assistant" {
		msg.Role = llm.RoleAssistant
	}
	results := llm.Message{Role: llm.RoleTool}
	for _, b := range blocks {
		switch typ := jstr(b, "type"); typ {
		case "text":
			msg.Content = append(msg.Content, llm.ContentPart{Kind: llm.KindText, Text: jstr(b, "text")})
		case "thinking":
			msg.Content = append(msg.Content, llm.ContentPart{Kind: llm.KindReasoning,
				Reasoning: &llm.Reasoning{Text: jstr(b, "thinking"), Signature: jstr(b, "signature")}})
		case "redacted_thinking":
			msg.Content = append(msg.Content, llm.ContentPart{Kind: llm.KindReasoning,
				Reasoning: &llm.Reasoning{Redacted: true, Data: jstr(b, "data")}})
		case "tool_use":
			args, _ := json.Marshal(jpath(b, "input"))
			msg.Content = append(msg.Content, llm.ContentPart{Kind: llm.KindToolCall,
				ToolCall: &llm.ToolCall{ID: jstr(b, "id"), Name: jstr(b, "name"), Arguments: args}})
		case "tool_result":
			var text strings.Builder
			for _, c := range jarr(b, "content") {
				text.WriteString(jstr(c, "text"))
			}
			isErr, _ := jpath(b, "is_error").(bool)
			results.Content = append(results.Content, llm.ContentPart{Kind: llm.KindToolResult,
				ToolResult: &llm.ToolResult{ToolCallID: jstr(b, "tool_use_id"), Content: text.String(), IsError: isErr}})
		default:
			t.Fatalf("recorded content block type %q is not modelled", typ)
		}
	}
	var out []llm.Message
	for _, m := range []llm.Message{results, msg} {
		if len(m.Content) > 0 {
			out = append(out, m)
		}
	}
	return out
}

// anthropicExpected folds a recorded message, or its stream of events by
// block index, into the expectation. Usage counts cache reads and writes
// into the input, as the adapter documents.
func anthropicExpected(t *testing.T, body []byte, streaming bool) cassetteExpectation {
	t.Helper()
	var blocks []map[string]any
	var usage any
	stop := ""
	if !streaming {
		v := decodeJSON(t, body)
		for _, b := range jarr(v, "content") {
			blocks = append(blocks, b.(map[string]any))
		}
		usage, stop = jpath(v, "usage"), jstr(v, "stop_reason")
	}
	partial := map[int]*strings.Builder{}
	for _, ev := range sseData(t, body) {
		if !streaming {
			break
		}
		i := jint(ev, "index")
		switch jstr(ev, "type") {
		case "message_start":
			usage = jpath(ev, "message", "usage")
		case "content_block_start":
			blocks = append(blocks, jpath(ev, "content_block").(map[string]any))
			partial[i] = &strings.Builder{}
		case "content_block_delta":
			b := blocks[i]
			for _, field := range []string{"text", "thinking", "signature"} {
				if s := jstr(ev, "delta", field); s != "" {
					b[field] = jstr(b, field) + s
				}
			}
			partial[i].WriteString(jstr(ev, "delta", "partial_json"))
		case "message_delta":
			stop = jstr(ev, "delta", "stop_reason")
			u := jpath(usage).(map[string]any)
			u["output_tokens"] = jpath(ev, "usage", "output_tokens")
		}
	}
	var want cassetteExpectation
	for i, b := range blocks {
		switch jstr(b, "type") {
		case "text":
			want.Text += jstr(b, "text")
		case "thinking":
			want.Reasoning += jstr(b, "thinking")
			if sig := jstr(b, "signature"); sig != "" {
				want.Signatures = append(want.Signatures, sig)
			}
		case "tool_use":
			var args any = jpath(b, "input")
			if p := partial[i]; p != nil {
				args = parseArgs(t, p.String())
			}
			want.ToolCalls = append(want.ToolCalls, cassetteToolCall{ID: jstr(b, "id"), Name: jstr(b, "name"), Args: args})
		}
	}
	read, write := jint(usage, "cache_read_input_tokens"), jint(usage, "cache_creation_input_tokens")
	want.Usage = llm.Usage{InputTokens: jint(usage, "input_tokens") + read + write, OutputTokens: jint(usage, "output_tokens"),
		CacheReadTokens: read, CacheWriteTokens: write}
	kinds := map[string]llm.FinishKind{"end_turn": llm.FinishStop, "stop_sequence": llm.FinishStop, "tool_use": llm.FinishToolCalls,
		"max_tokens": llm.FinishLength, "refusal": llm.FinishContentFilter, "model_context_window_exceeded": llm.FinishContextLength}
	want.Finish = finishFor(stop, kinds[stop])
	return want
}

// TestAnthropicRoundTrip checks each follow-up request with our own parse
// of the previous response as the assistant turn, so thinking blocks and
// their signatures travel through our output and back, byte for byte.
func TestAnthropicRoundTrip(t *testing.T) { checkRoundTrip(t, "TestAnthropic") }

// checkRoundTrip replays the multi-turn cassettes of one dialect: for every
// interaction after the first, the recorded assistant turn is replaced by the
// response the adapter parsed for the interaction before, and the request
// built must still equal the recording. Call ids are taken from the
// recording, whose client may have synthesized its own.
func checkRoundTrip(t *testing.T, prefix string) {
	root := cassetteRoot(t)
	files, _ := filepath.Glob(filepath.Join(root, prefix+"*", "*", "*.yaml"))
	if len(files) == 0 {
		testenv.SkipOrFatal(t, fmt.Sprintf("no %s cassettes under %s", prefix, root))
	}
	d := cassetteDialects[prefix]
	for _, path := range files {
		c, err := simtest.LoadCassette(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Interactions) < 2 {
			continue
		}
		rel, _ := filepath.Rel(root, strings.TrimSuffix(path, ".yaml"))
		t.Run(filepath.ToSlash(rel), func(t *testing.T) {
			var prev *llm.Response
			for _, in := range c.Interactions {
				prev = replayWithHistory(t, d, in, prev)
			}
		})
	}
}

func replayWithHistory(t *testing.T, d cassetteDialect, in simtest.Interaction, prev *llm.Response) *llm.Response {
	t.Helper()
	srv := sim.NewServer()
	defer srv.Close()
	srv.Enqueue(in.RawReply())
	req := d.requestFromRecording(t, []byte(in.Request.Body))
	if d.modelFromURL != nil {
		req.Model = d.modelFromURL(in.Request.URL)
	}
	if prev != nil {
		for i, m := range req.Messages {
			if m.Role == llm.RoleAssistant {
				req.Messages[i] = withRecordedIDs(prev.Message, m)
			}
		}
	}
	client := d.newClient(srv.URL())
	var resp *llm.Response
	var err error
	if isStreaming(in.Request) {
		_, resp, err = llmtest.Collect(client.Stream(context.Background(), req))
	} else {
		resp, err = client.Complete(context.Background(), req)
	}
	if err != nil {
		t.Fatalf("interaction %d: %v", in.ID, err)
	}
	checkRequest(t, d, in.Request, srv.Requests()[0])
	return resp
}

// withRecordedIDs copies own, giving its tool calls the recorded ids in
// order.
func withRecordedIDs(own, recorded llm.Message) llm.Message {
	ids := recorded.ToolCalls()
	out := llm.Message{Role: own.Role, Content: make([]llm.ContentPart, len(own.Content))}
	n := 0
	for i, p := range own.Content {
		if p.Kind == llm.KindToolCall && n < len(ids) {
			tc := *p.ToolCall
			tc.ID = ids[n].ID
			p.ToolCall = &tc
			n++
		}
		out.Content[i] = p
	}
	return out
}
