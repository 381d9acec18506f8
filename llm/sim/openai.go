package sim

import (
	"encoding/json"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/agentfleet/agentfleet/llm"
)

// openAIDialect speaks the OpenAI Responses API (POST /v1/responses).
type openAIDialect struct{}

func init() { registerDialect(openAIDialect{}) }

var idCounter atomic.Int64

// newID returns a unique id with a provider-style prefix.
func newID(prefix string) string {
	n := strconv.FormatInt(idCounter.Add(1), 10)
	if len(n) < 6 {
		n = "000000"[len(n):] + n
	}
	return prefix + "_llmtest" + n
}

func (openAIDialect) Name() string               { return "openai" }
func (openAIDialect) Match(r *http.Request) bool { return hasSuffixPath(r, "/responses") }
func (openAIDialect) Head(_ *http.Request, body []byte) (string, bool) {
	h := head(body)
	return h.Model, h.Stream
}

type obj = map[string]any

// openAIOutput builds the Responses API output items of a reply.
func openAIOutput(rep Reply) []obj {
	var out []obj
	if rep.Reasoning != "" || rep.ReasoningSignature != "" {
		item := obj{"id": newID("rs"), "type": "reasoning", "summary": []obj{}}
		if rep.Reasoning != "" {
			item["summary"] = []obj{{"type": "summary_text", "text": rep.Reasoning}}
		}
		if rep.ReasoningSignature != "" {
			item["encrypted_content"] = rep.ReasoningSignature
		}
		out = append(out, item)
	}
	servers, computer := openAIServerItems(rep)
	out = append(out, servers...)
	if rep.Text != "" {
		out = append(out, obj{"id": newID("msg"), "type": "message", "status": "completed", "role": "assistant",
			"content": []obj{{"type": "output_text", "text": rep.Text, "annotations": []any{}}}})
	}
	for _, tc := range rep.ToolCalls {
		out = append(out, obj{"id": newID("fc"), "type": "function_call", "status": "completed",
			"call_id": orID(tc.ID, "call"), "name": tc.Name, "arguments": tc.Arguments})
	}
	return append(out, computer...)
}

func orID(id, prefix string) string {
	if id != "" {
		return id
	}
	return newID(prefix)
}

func openAIUsage(u llm.Usage) obj {
	return obj{
		"input_tokens":          u.InputTokens,
		"input_tokens_details":  obj{"cached_tokens": u.CacheReadTokens},
		"output_tokens":         u.OutputTokens,
		"output_tokens_details": obj{"reasoning_tokens": u.ReasoningTokens},
		"total_tokens":          u.InputTokens + u.OutputTokens,
	}
}

// openAIResponse is the response object; status "incomplete" when the reply
// finishes for max_output_tokens or content_filter.
func openAIResponse(rep Reply, model, status string, output []obj, withUsage bool) obj {
	resp := obj{"id": orID(rep.ID, "resp"), "object": "response", "created_at": 1700000000,
		"status": status, "model": model, "output": output, "error": nil, "incomplete_details": nil}
	if status != "in_progress" && rep.FinishReason != "" && rep.FinishReason != "completed" {
		resp["status"] = "incomplete"
		resp["incomplete_details"] = obj{"reason": rep.FinishReason}
	}
	if withUsage {
		resp["usage"] = openAIUsage(rep.Usage)
	} else {
		resp["usage"] = nil
	}
	return resp
}

func (openAIDialect) WriteWhole(w http.ResponseWriter, rep Reply, model string) {
	writeJSON(w, http.StatusOK, openAIResponse(rep, model, "completed", openAIOutput(rep), true))
}

func (openAIDialect) WriteStream(sw *StreamWriter, rep Reply, model string) {
	seq := 0
	send := func(typ string, fields obj) bool {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		return sw.JSON(typ, fields)
	}
	if rep.ID == "" {
		rep.ID = newID("resp")
	}
	if !send("response.created", obj{"response": openAIResponse(rep, model, "in_progress", []obj{}, false)}) ||
		!send("response.in_progress", obj{"response": openAIResponse(rep, model, "in_progress", []obj{}, false)}) {
		return
	}
	output := openAIOutput(rep)
	for i, item := range output {
		if !openAIStreamItem(sw, send, i, item) {
			return
		}
	}
	typ := "response.completed"
	if rep.FinishReason != "" && rep.FinishReason != "completed" {
		typ = "response.incomplete"
	}
	send(typ, obj{"response": openAIResponse(rep, model, "completed", output, true)})
}

// openAIStreamItem writes the added, delta, done events of one output item.
func openAIStreamItem(sw *StreamWriter, send func(string, obj) bool, index int, item obj) bool {
	id := item["id"]
	added := obj{}
	maps.Copy(added, item)
	switch item["type"] {
	case "message":
		added["content"], added["status"] = []obj{}, "in_progress"
	case "function_call":
		added["arguments"], added["status"] = "", "in_progress"
	case "reasoning":
		added["summary"] = []obj{}
	case "web_search_call":
		added["status"] = "in_progress"
		delete(added, "action")
	case "computer_call":
		added["status"] = "in_progress"
	}
	if !send("response.output_item.added", obj{"output_index": index, "item": added}) {
		return false
	}
	ok := true
	switch item["type"] {
	case "web_search_call":
		for _, ev := range []string{"in_progress", "searching", "completed"} {
			ok = ok && send("response.web_search_call."+ev, obj{"item_id": id, "output_index": index})
		}
	case "message":
		text := item["content"].([]obj)[0]["text"].(string)
		ok = send("response.content_part.added", obj{"item_id": id, "output_index": index, "content_index": 0,
			"part": obj{"type": "output_text", "text": "", "annotations": []any{}}}) &&
			sendDeltas(sw, text, func(d string) bool {
				return send("response.output_text.delta", obj{"item_id": id, "output_index": index, "content_index": 0, "delta": d})
			}) &&
			send("response.output_text.done", obj{"item_id": id, "output_index": index, "content_index": 0, "text": text}) &&
			send("response.content_part.done", obj{"item_id": id, "output_index": index, "content_index": 0,
				"part": obj{"type": "output_text", "text": text, "annotations": []any{}}})
	case "function_call":
		args := item["arguments"].(string)
		ok = sendDeltas(sw, args, func(d string) bool {
			return send("response.function_call_arguments.delta", obj{"item_id": id, "output_index": index, "delta": d})
		}) && send("response.function_call_arguments.done", obj{"item_id": id, "output_index": index, "arguments": args})
	case "reasoning":
		for si, part := range item["summary"].([]obj) {
			text := part["text"].(string)
			ok = ok && send("response.reasoning_summary_part.added", obj{"item_id": id, "output_index": index, "summary_index": si,
				"part": obj{"type": "summary_text", "text": ""}}) &&
				sendDeltas(sw, text, func(d string) bool {
					return send("response.reasoning_summary_text.delta", obj{"item_id": id, "output_index": index, "summary_index": si, "delta": d})
				}) &&
				send("response.reasoning_summary_text.done", obj{"item_id": id, "output_index": index, "summary_index": si, "text": text}) &&
				send("response.reasoning_summary_part.done", obj{"item_id": id, "output_index": index, "summary_index": si,
					"part": obj{"type": "summary_text", "text": text}})
		}
	}
	return ok && send("response.output_item.done", obj{"output_index": index, "item": item})
}

// sendDeltas sends text in the reply's chunk size, stopping on false.
func sendDeltas(sw *StreamWriter, text string, send func(string) bool) bool {
	for _, c := range sw.Chunks(text) {
		if !send(c) {
			return false
		}
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	if w.Header().Get("x-request-id") == "" {
		w.Header().Set("x-request-id", newID("req"))
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (openAIDialect) WriteError(w http.ResponseWriter, f Failure) { writeOpenAIError(w, f) }

func (openAIDialect) StreamError(f Failure) (string, string) {
	e := openAIErrorFor(f)
	b, _ := json.Marshal(obj{"type": "error", "code": e.code, "message": e.message, "param": nil, "sequence_number": 0})
	return "error", string(b)
}

// openAIError is how OpenAI (and the compatible servers copying it) report a
// failure kind: status, error type, code and usual message.
type openAIError struct {
	status  int
	typ     string
	code    any // string or nil
	message string
}

var openAIErrors = map[llm.ErrorKind]openAIError{
	llm.ErrAuthentication: {401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided: sk-llmte***test. You can find your API key at https://platform.openai.com/account/api-keys."},
	llm.ErrPermission:     {403, "invalid_request_error", "unsupported_country_region_territory", "Country, region, or territory not supported"},
	llm.ErrQuota:          {429, "insufficient_quota", "insufficient_quota", "You exceeded your current quota, please check your plan and billing details."},
	llm.ErrRateLimited:    {429, "requests", "rate_limit_exceeded", "Rate limit reached for gpt-5 in organization org-llmtest on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 120ms."},
	llm.ErrOverloaded:     {503, "server_error", nil, "The server is overloaded or not ready yet."},
	llm.ErrContextLength:  {400, "invalid_request_error", "context_length_exceeded", "Your input exceeds the context window of this model. Please adjust your input and try again."},
	llm.ErrInvalidRequest: {400, "invalid_request_error", "invalid_value", "Invalid value: 'bogus'. Supported values are: 'auto', 'none' and 'required'."},
	llm.ErrServer:         {500, "server_error", nil, "The server had an error while processing your request. Sorry about that!"},
}

func openAIErrorFor(f Failure) openAIError {
	e, ok := openAIErrors[f.Kind]
	if !ok {
		e = openAIErrors[llm.ErrServer]
	}
	if f.Status != 0 {
		e.status = f.Status
	}
	if f.Message != "" {
		e.message = f.Message
	}
	return e
}

func writeOpenAIError(w http.ResponseWriter, f Failure) {
	e := openAIErrorFor(f)
	setFailureHeaders(w.Header(), f)
	param := any(nil)
	if strings.HasPrefix(e.typ, "invalid_request") && e.status == 400 {
		param = "input"
	}
	writeJSON(w, e.status, obj{"error": obj{"message": e.message, "type": e.typ, "param": param, "code": e.code}})
}
