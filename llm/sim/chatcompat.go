package sim

import (
	"encoding/json"
	"net/http"

	"github.com/agentfleet/agentfleet/llm"
)

// chatCompatDialect speaks OpenAI Chat Completions (POST
// /v1/chat/completions), as OpenAI and the compatible servers (Ollama, vLLM,
// llama.cpp, OpenRouter, Groq) answer it. Reasoning is sent as
// reasoning_content, the llama.cpp and vLLM field.
type chatCompatDialect struct{}

func init() { registerDialect(chatCompatDialect{}) }

func (chatCompatDialect) Name() string               { return "chatcompat" }
func (chatCompatDialect) Match(r *http.Request) bool { return hasSuffixPath(r, "/chat/completions") }
func (chatCompatDialect) Head(_ *http.Request, body []byte) (string, bool) {
	h := head(body)
	return h.Model, h.Stream
}

func chatFinish(rep Reply) string {
	switch {
	case rep.FinishReason != "":
		return rep.FinishReason
	case len(rep.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func chatUsage(u llm.Usage) obj {
	return obj{
		"prompt_tokens":             u.InputTokens,
		"completion_tokens":         u.OutputTokens,
		"total_tokens":              u.InputTokens + u.OutputTokens,
		"prompt_tokens_details":     obj{"cached_tokens": u.CacheReadTokens},
		"completion_tokens_details": obj{"reasoning_tokens": u.ReasoningTokens},
	}
}

func (chatCompatDialect) WriteWhole(w http.ResponseWriter, rep Reply, model string) {
	msg := obj{"role": "assistant", "content": nil}
	if rep.Text != "" {
		msg["content"] = rep.Text
	}
	if rep.Reasoning != "" {
		msg["reasoning_content"] = rep.Reasoning
	}
	var calls []obj
	for _, tc := range rep.ToolCalls {
		calls = append(calls, obj{"id": orID(tc.ID, "call"), "type": "function",
			"function": obj{"name": tc.Name, "arguments": tc.Arguments}})
	}
	if calls != nil {
		msg["tool_calls"] = calls
	}
	writeJSON(w, http.StatusOK, obj{"id": orID(rep.ID, "chatcmpl"), "object": "chat.completion", "created": 1700000000,
		"model": model, "usage": chatUsage(rep.Usage),
		"choices": []obj{{"index": 0, "message": msg, "finish_reason": chatFinish(rep)}}})
}

func (chatCompatDialect) WriteStream(sw *StreamWriter, rep Reply, model string) {
	id := orID(rep.ID, "chatcmpl")
	chunk := func(delta obj, finish any) bool {
		return sw.JSON("", obj{"id": id, "object": "chat.completion.chunk", "created": 1700000000, "model": model,
			"choices": []obj{{"index": 0, "delta": delta, "finish_reason": finish}}})
	}
	if !chunk(obj{"role": "assistant", "content": ""}, nil) {
		return
	}
	for _, c := range sw.Chunks(rep.Reasoning) {
		if !chunk(obj{"reasoning_content": c}, nil) {
			return
		}
	}
	for _, c := range sw.Chunks(rep.Text) {
		if !chunk(obj{"content": c}, nil) {
			return
		}
	}
	for i, tc := range rep.ToolCalls {
		first := obj{"index": i, "id": orID(tc.ID, "call"), "type": "function", "function": obj{"name": tc.Name, "arguments": ""}}
		if !chunk(obj{"tool_calls": []obj{first}}, nil) {
			return
		}
		for _, c := range sw.Chunks(tc.Arguments) {
			if !chunk(obj{"tool_calls": []obj{{"index": i, "function": obj{"arguments": c}}}}, nil) {
				return
			}
		}
	}
	if !chunk(obj{}, chatFinish(rep)) {
		return
	}
	if !sw.JSON("", obj{"id": id, "object": "chat.completion.chunk", "created": 1700000000, "model": model,
		"choices": []obj{}, "usage": chatUsage(rep.Usage)}) {
		return
	}
	sw.Data("[DONE]")
}

func (chatCompatDialect) WriteError(w http.ResponseWriter, f Failure) { writeOpenAIError(w, f) }

// StreamError is the error chunk OpenRouter and vLLM send mid-stream: a
// data-only event holding an error object.
func (chatCompatDialect) StreamError(f Failure) (string, string) {
	e := openAIErrorFor(f)
	b, _ := json.Marshal(obj{"error": obj{"message": e.message, "type": e.typ, "code": e.code}})
	return "", string(b)
}
