package llmtest

import (
	"encoding/json"
	"net/http"

	"github.com/agentfleet/agentfleet/llm"
)

// anthropicDialect speaks the Anthropic Messages API (POST /v1/messages).
type anthropicDialect struct{}

func init() { registerDialect(anthropicDialect{}) }

// anthropicSignature stands in for a thinking signature when the reply sets
// reasoning without one; the real API signs every thinking block.
const anthropicSignature = "llmtest-thinking-signature"

func (anthropicDialect) Name() string               { return "anthropic" }
func (anthropicDialect) Match(r *http.Request) bool { return hasSuffixPath(r, "/v1/messages") }
func (anthropicDialect) Head(_ *http.Request, body []byte) (string, bool) {
	h := head(body)
	return h.Model, h.Stream
}

// anthropicBlocks builds the content blocks of a reply: thinking, text, then
// one tool_use per call.
func anthropicBlocks(rep Reply) []obj {
	var blocks []obj
	if rep.Reasoning != "" || rep.ReasoningSignature != "" {
		blocks = append(blocks, obj{"type": "thinking", "thinking": rep.Reasoning, "signature": orString(rep.ReasoningSignature, anthropicSignature)})
	}
	if rep.Text != "" {
		blocks = append(blocks, obj{"type": "text", "text": rep.Text})
	}
	for _, tc := range rep.ToolCalls {
		blocks = append(blocks, obj{"type": "tool_use", "id": orID(tc.ID, "toolu"), "name": tc.Name, "input": anthropicInput(tc.Arguments)})
	}
	return blocks
}

// anthropicInput is the arguments as a JSON value; text that is not JSON is
// sent as a string so a client sees a non-object input.
func anthropicInput(args string) any {
	if args == "" {
		return obj{}
	}
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	return args
}

func orString(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// anthropicStopReason is the reply's stop_reason: its own word, else
// tool_use when it calls tools, else end_turn.
func anthropicStopReason(rep Reply) string {
	switch {
	case rep.FinishReason != "":
		return rep.FinishReason
	case len(rep.ToolCalls) > 0:
		return "tool_use"
	}
	return "end_turn"
}

// anthropicUsage renders usage the way the API counts it: input_tokens
// excludes cache reads and writes.
func anthropicUsage(u llm.Usage) obj {
	return obj{
		"input_tokens":                max(u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens, 0),
		"cache_creation_input_tokens": u.CacheWriteTokens,
		"cache_read_input_tokens":     u.CacheReadTokens,
		"output_tokens":               u.OutputTokens,
	}
}

func anthropicMessage(rep Reply, model string, content []obj, stopReason any, usage obj) obj {
	return obj{"id": orID(rep.ID, "msg"), "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": stopReason, "stop_sequence": nil, "usage": usage}
}

func (anthropicDialect) WriteWhole(w http.ResponseWriter, rep Reply, model string) {
	writeAnthropicJSON(w, http.StatusOK, anthropicMessage(rep, model, anthropicBlocks(rep), anthropicStopReason(rep), anthropicUsage(rep.Usage)))
}

// WriteStream writes message_start, each block as start, deltas and stop (a
// ping after the first start, as the API does), message_delta and
// message_stop.
func (anthropicDialect) WriteStream(sw *StreamWriter, rep Reply, model string) {
	if rep.ID == "" {
		rep.ID = newID("msg")
	}
	startUsage := anthropicUsage(llm.Usage{InputTokens: rep.Usage.InputTokens, CacheReadTokens: rep.Usage.CacheReadTokens,
		CacheWriteTokens: rep.Usage.CacheWriteTokens, OutputTokens: 1})
	if !sw.JSON("message_start", obj{"type": "message_start", "message": anthropicMessage(rep, model, []obj{}, nil, startUsage)}) {
		return
	}
	for i, b := range anthropicBlocks(rep) {
		if !anthropicStreamBlock(sw, i, b) {
			return
		}
	}
	usage := anthropicUsage(rep.Usage)
	_ = sw.JSON("message_delta", obj{"type": "message_delta", "delta": obj{"stop_reason": anthropicStopReason(rep), "stop_sequence": nil}, "usage": usage}) &&
		sw.JSON("message_stop", obj{"type": "message_stop"})
}

func anthropicStreamBlock(sw *StreamWriter, index int, b obj) bool {
	delta := func(d obj) bool {
		return sw.JSON("content_block_delta", obj{"type": "content_block_delta", "index": index, "delta": d})
	}
	start := obj{}
	for k, v := range b {
		start[k] = v
	}
	ok := true
	switch b["type"] {
	case "text":
		start["text"] = ""
		ok = sw.JSON("content_block_start", obj{"type": "content_block_start", "index": index, "content_block": start}) &&
			(index > 0 || sw.JSON("ping", obj{"type": "ping"})) &&
			sendDeltas(sw, b["text"].(string), func(s string) bool { return delta(obj{"type": "text_delta", "text": s}) })
	case "thinking":
		start["thinking"], start["signature"] = "", ""
		ok = sw.JSON("content_block_start", obj{"type": "content_block_start", "index": index, "content_block": start}) &&
			(index > 0 || sw.JSON("ping", obj{"type": "ping"})) &&
			sendDeltas(sw, b["thinking"].(string), func(s string) bool { return delta(obj{"type": "thinking_delta", "thinking": s}) }) &&
			delta(obj{"type": "signature_delta", "signature": b["signature"]})
	case "tool_use":
		start["input"] = obj{}
		args := anthropicPartialJSON(b["input"])
		ok = sw.JSON("content_block_start", obj{"type": "content_block_start", "index": index, "content_block": start}) &&
			(index > 0 || sw.JSON("ping", obj{"type": "ping"})) &&
			delta(obj{"type": "input_json_delta", "partial_json": ""}) &&
			sendDeltas(sw, args, func(s string) bool { return delta(obj{"type": "input_json_delta", "partial_json": s}) })
	}
	return ok && sw.JSON("content_block_stop", obj{"type": "content_block_stop", "index": index})
}

// anthropicPartialJSON is the text streamed as input_json_delta: the JSON
// arguments, or the invalid text itself (which the real API never sends, but
// a client must survive).
func anthropicPartialJSON(input any) string {
	switch v := input.(type) {
	case json.RawMessage:
		return string(v)
	case string:
		return v
	}
	return "{}"
}

// anthropicErrors is how the API reports each failure kind: status, error
// type and its usual message. Billing problems arrive as a 400
// invalid_request_error, and an overlong prompt likewise.
var anthropicErrors = map[llm.ErrorKind]struct {
	status  int
	typ     string
	message string
}{
	llm.ErrAuthentication: {401, "authentication_error", "invalid x-api-key"},
	llm.ErrPermission:     {403, "permission_error", "Your API key does not have permission to use the specified resource."},
	llm.ErrQuota:          {400, "invalid_request_error", "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."},
	llm.ErrRateLimited:    {429, "rate_limit_error", "This request would exceed the rate limit for your organization (llmtest) of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits."},
	llm.ErrOverloaded:     {529, "overloaded_error", "Overloaded"},
	llm.ErrContextLength:  {400, "invalid_request_error", "prompt is too long: 208310 tokens > 200000 maximum"},
	llm.ErrInvalidRequest: {400, "invalid_request_error", "messages.1: roles must alternate between \"user\" and \"assistant\", but found multiple \"user\" roles in a row"},
	llm.ErrServer:         {500, "api_error", "Internal server error"},
}

func anthropicErrorFor(f Failure) (status int, body obj) {
	e, ok := anthropicErrors[f.Kind]
	if !ok {
		e = anthropicErrors[llm.ErrServer]
	}
	if f.Status != 0 {
		e.status = f.Status
	}
	return e.status, obj{"type": "error", "error": obj{"type": e.typ, "message": orString(f.Message, e.message)}}
}

func (anthropicDialect) WriteError(w http.ResponseWriter, f Failure) {
	status, body := anthropicErrorFor(f)
	setFailureHeaders(w.Header(), f)
	if status == http.StatusTooManyRequests || status >= 500 {
		w.Header().Set("x-should-retry", "true")
	}
	writeAnthropicJSON(w, status, body)
}

func (anthropicDialect) StreamError(f Failure) (string, string) {
	_, body := anthropicErrorFor(f)
	b, _ := json.Marshal(body)
	return "error", string(b)
}

// writeAnthropicJSON writes v with the request-id header the API sends (and
// echoes it in error bodies as request_id).
func writeAnthropicJSON(w http.ResponseWriter, status int, v obj) {
	id := newID("req")
	if v["type"] == "error" {
		v["request_id"] = id
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("request-id", id)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
