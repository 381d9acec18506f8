package sim

import (
	"encoding/json"
	"net/http"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/internal/wirejson"
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
	for _, pair := range anthropicServerBlocks(rep) {
		blocks = append(blocks, pair[0], pair[1])
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
	a := anthropicStream{sw: sw, b: make([]byte, 0, 512)}
	startUsage := llm.Usage{InputTokens: rep.Usage.InputTokens, CacheReadTokens: rep.Usage.CacheReadTokens,
		CacheWriteTokens: rep.Usage.CacheWriteTokens, OutputTokens: 1}
	if !a.messageStart(rep.ID, model, startUsage) {
		return
	}
	index := 0
	if rep.Reasoning != "" || rep.ReasoningSignature != "" {
		if !a.thinking(index, rep.Reasoning, orString(rep.ReasoningSignature, anthropicSignature)) {
			return
		}
		index++
	}
	for _, pair := range anthropicServerBlocks(rep) {
		if !a.serverTool(index, pair) {
			return
		}
		index += 2
	}
	if rep.Text != "" {
		if !a.text(index, rep.Text) {
			return
		}
		index++
	}
	for _, tc := range rep.ToolCalls {
		if !a.toolUse(index, orID(tc.ID, "toolu"), tc.Name, orString(tc.Arguments, "{}")) {
			return
		}
		index++
	}
	_ = a.messageDelta(anthropicStopReason(rep), rep.Usage) && a.send("message_stop", `{"type":"message_stop"}`)
}

// anthropicStream writes the events of one streamed reply. Their JSON is
// appended by hand, keys in the sorted order encoding/json gives maps, so
// the bytes are those a map per event gave without building the maps: the
// fleet benchmark streams thousands of replies a second.
type anthropicStream struct {
	sw *StreamWriter
	b  []byte // the event being built, reused
}

// send writes the event whose JSON is a.b, or fixed when not "".
func (a *anthropicStream) send(event, fixed string) bool {
	if fixed != "" {
		return a.sw.Event(event, fixed)
	}
	return a.sw.eventJSON(event, a.b)
}

func (a *anthropicStream) messageStart(id, model string, usage llm.Usage) bool {
	b := append(a.b[:0], `{"message":{"content":[]`...)
	b = wirejson.AppendStringField(b, "id", id)
	b = wirejson.AppendStringField(b, "model", model)
	b = append(b, `,"role":"assistant","stop_reason":null,"stop_sequence":null,"type":"message","usage":`...)
	b = appendAnthropicUsage(b, usage)
	a.b = append(b, `},"type":"message_start"}`...)
	return a.send("message_start", "")
}

func (a *anthropicStream) messageDelta(stopReason string, usage llm.Usage) bool {
	b := append(a.b[:0], `{"delta":{`...)
	b = wirejson.AppendStringField(b, "stop_reason", stopReason)
	b = append(b, `,"stop_sequence":null},"type":"message_delta","usage":`...)
	b = appendAnthropicUsage(b, usage)
	a.b = append(b, '}')
	return a.send("message_delta", "")
}

// appendAnthropicUsage appends usage the way the API counts it: input_tokens
// excludes cache reads and writes.
func appendAnthropicUsage(b []byte, u llm.Usage) []byte {
	b = append(b, '{')
	b = wirejson.AppendInt(b, "cache_creation_input_tokens", u.CacheWriteTokens)
	b = wirejson.AppendInt(b, "cache_read_input_tokens", u.CacheReadTokens)
	b = wirejson.AppendInt(b, "input_tokens", max(u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens, 0))
	b = wirejson.AppendInt(b, "output_tokens", u.OutputTokens)
	return append(b, '}')
}

// blockStart writes content_block_start with block (its JSON), then the
// ping the API sends after the first one.
func (a *anthropicStream) blockStart(index int, block string) bool {
	b := append(a.b[:0], `{"content_block":`...)
	b = append(b, block...)
	b = wirejson.AppendInt(b, "index", index)
	a.b = append(b, `,"type":"content_block_start"}`...)
	return a.send("content_block_start", "") && (index > 0 || a.send("ping", `{"type":"ping"}`))
}

// delta writes one content_block_delta {"<field>": s, "type": typ}.
func (a *anthropicStream) delta(index int, field, s, typ string) bool {
	b := append(a.b[:0], `{"delta":{`...)
	b = wirejson.AppendStringField(b, field, s)
	b = wirejson.AppendStringField(b, "type", typ)
	b = append(b, '}')
	b = wirejson.AppendInt(b, "index", index)
	a.b = append(b, `,"type":"content_block_delta"}`...)
	return a.send("content_block_delta", "")
}

// deltas writes text in the reply's chunks as deltas.
func (a *anthropicStream) deltas(index int, field, text, typ string) bool {
	for _, c := range a.sw.Chunks(text) {
		if !a.delta(index, field, c, typ) {
			return false
		}
	}
	return true
}

func (a *anthropicStream) blockStop(index int) bool {
	b := wirejson.AppendInt(append(a.b[:0], '{'), "index", index)
	a.b = append(b, `,"type":"content_block_stop"}`...)
	return a.send("content_block_stop", "")
}

func (a *anthropicStream) text(index int, text string) bool {
	return a.blockStart(index, `{"text":"","type":"text"}`) &&
		a.deltas(index, "text", text, "text_delta") &&
		a.blockStop(index)
}

func (a *anthropicStream) thinking(index int, text, signature string) bool {
	return a.blockStart(index, `{"signature":"","thinking":"","type":"thinking"}`) &&
		a.deltas(index, "thinking", text, "thinking_delta") &&
		a.delta(index, "signature", signature, "signature_delta") &&
		a.blockStop(index)
}

// toolUse streams a call's arguments as input_json_delta text: the JSON, or
// invalid text as it is (which the real API never sends, but a client must
// survive).
func (a *anthropicStream) toolUse(index int, id, name, args string) bool {
	block := wirejson.AppendStringField([]byte(`{`), "id", id)
	block = append(block, `,"input":{}`...)
	block = wirejson.AppendStringField(block, "name", name)
	block = append(block, `,"type":"tool_use"}`...)
	return a.blockStart(index, string(block)) &&
		a.delta(index, "partial_json", "", "input_json_delta") &&
		a.deltas(index, "partial_json", args, "input_json_delta") &&
		a.blockStop(index)
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
