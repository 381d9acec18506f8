package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
)

const providerName = "gemini"

// assembler builds a Response from one whole answer or from the chunks of a
// stream (each a GenerateContentResponse), producing stream events as parts
// open, grow and close. Neighbouring text chunks of the same kind merge into
// one part until a thoughtSignature seals it. Not safe for concurrent use.
type assembler struct {
	resp       llm.Response
	parts      []llm.ContentPart
	open       int             // index in parts of the text or reasoning part still growing, -1 if none
	openText   strings.Builder // its text so far
	calls      int             // function calls seen, for synthesized ids
	candidates bool            // some chunk had a candidate
	finish     string          // finishReason, once sent
	usage      wireUsage
	metadata   map[string]json.RawMessage // a candidate's groundingMetadata, urlContextMetadata: the last seen
	out        []llm.StreamEvent          // events of the last chunk, reused
}

func newAssembler() *assembler {
	return &assembler{resp: llm.Response{Provider: providerName}, open: -1}
}

// add folds one chunk in. The events it produced are in a.out until the
// next call.
func (a *assembler) add(w *wireResponse) error {
	a.out = a.out[:0]
	if w.Error != nil {
		return statusError(w.Error.Code, *w.Error)
	}
	if a.resp.ID == "" {
		a.resp.ID = w.ResponseID
	}
	if w.ModelVersion != "" {
		a.resp.Model = w.ModelVersion
	}
	if w.UsageMetadata != nil {
		a.usage = *w.UsageMetadata // cumulative in every chunk
	}
	if len(w.Candidates) == 0 {
		if fb := w.PromptFeedback; fb != nil && fb.BlockReason != "" {
			return noCandidates(fb)
		}
		return nil
	}
	a.candidates = true
	c := &w.Candidates[0]
	for i := range c.Content.Parts {
		a.addPart(&c.Content.Parts[i])
	}
	if c.FinishReason != "" {
		a.finish = c.FinishReason
	}
	a.keepMetadata("groundingMetadata", c.GroundingMetadata)
	a.keepMetadata("urlContextMetadata", c.URLContextMetadata)
	return nil
}

func (a *assembler) addPart(p *wirePartIn) {
	if p.FunctionCall != nil {
		a.addCall(p.FunctionCall, p.ThoughtSignature)
		return
	}
	if len(p.ExecutableCode) > 0 || len(p.CodeExecutionResult) > 0 {
		a.addServerPart(p)
		return
	}
	if p.Text == "" && p.ThoughtSignature == "" {
		return
	}
	kind := llm.KindText
	if p.Thought {
		kind = llm.KindReasoning
	}
	if a.open < 0 || a.parts[a.open].Kind != kind {
		a.startPart(kind)
	}
	if p.Text != "" {
		a.openText.WriteString(p.Text)
		ev := llm.EventTextDelta
		if kind == llm.KindReasoning {
			ev = llm.EventReasoningDelta
		}
		a.emit(llm.StreamEvent{Kind: ev, Delta: p.Text})
	}
	if p.ThoughtSignature != "" {
		// A signature belongs to the part it arrives on; in a stream it
		// often comes on a final empty chunk, which seals the merged part.
		part := &a.parts[a.open]
		part.Provider = providerName
		if kind == llm.KindReasoning {
			part.Reasoning.Signature = p.ThoughtSignature
		} else {
			part.Signature = p.ThoughtSignature
		}
		a.closePart()
	}
}

func (a *assembler) startPart(kind llm.ContentKind) {
	a.closePart()
	part := llm.ContentPart{Kind: kind}
	ev := llm.EventTextStart
	if kind == llm.KindReasoning {
		part.Reasoning, ev = &llm.Reasoning{}, llm.EventReasoningStart
	}
	a.parts = append(a.parts, part)
	a.open = len(a.parts) - 1
	a.emit(llm.StreamEvent{Kind: ev})
}

// closePart stores the open part's text and emits its end event.
func (a *assembler) closePart() {
	if a.open < 0 {
		return
	}
	part := &a.parts[a.open]
	if part.Kind == llm.KindReasoning {
		part.Reasoning.Text = a.openText.String()
		a.emit(llm.StreamEvent{Kind: llm.EventReasoningEnd})
	} else {
		part.Text = a.openText.String()
		a.emit(llm.StreamEvent{Kind: llm.EventTextEnd})
	}
	a.open = -1
	a.openText.Reset()
}

// addCall adds a function call. Gemini sends each call whole, so it opens
// and closes at once. Models before Gemini 3 send no id: see syntheticID.
func (a *assembler) addCall(fc *wireFunctionCall, signature string) {
	a.closePart()
	id := fc.ID
	if id == "" {
		id = a.syntheticID()
	}
	a.calls++
	call := newToolCall(id, fc.Name, fc.Args)
	call.Signature = signature
	a.parts = append(a.parts, llm.ContentPart{Kind: llm.KindToolCall, ToolCall: call})
	a.emit(llm.StreamEvent{Kind: llm.EventToolCallStart, ToolCall: &llm.ToolCall{ID: id, Name: fc.Name}})
	a.emit(llm.StreamEvent{Kind: llm.EventToolCallDelta, Delta: string(call.Arguments)})
	a.emit(llm.StreamEvent{Kind: llm.EventToolCallEnd, ToolCall: call})
}

// syntheticID names a call the API left without an id: "call_" + the
// response id + "_" + the call's position in the response (0-based). It is
// the same every time the same response is decoded, and unique across a
// conversation because response ids are.
func (a *assembler) syntheticID() string {
	return "call_" + a.resp.ID + "_" + strconv.Itoa(a.calls)
}

func (a *assembler) emit(ev llm.StreamEvent) { a.out = append(a.out, ev) }

// result closes the open part and returns the response. It fails when no
// chunk carried a candidate.
func (a *assembler) result(fb *wirePromptFeedback) (*llm.Response, error) {
	a.out = a.out[:0]
	if !a.candidates {
		return nil, noCandidates(fb)
	}
	a.closePart()
	resp := a.resp
	resp.Message = llm.Message{Role: llm.RoleAssistant, Content: append(a.parts, a.metadataParts()...)}
	resp.FinishReason = finishReason(a.finish, a.calls > 0)
	resp.Usage = convertUsage(a.usage)
	return &resp, nil
}

func noCandidates(fb *wirePromptFeedback) *llm.Error {
	msg := "the response has no candidates"
	if fb != nil && fb.BlockReason != "" {
		msg += fmt.Sprintf(": the prompt was blocked (promptFeedback.blockReason %s)", fb.BlockReason)
		if fb.BlockReasonMessage != "" {
			msg += ": " + fb.BlockReasonMessage
		}
	}
	return &llm.Error{Kind: llm.ErrInvalidResponse, Provider: providerName, Code: blockReason(fb), Message: msg}
}

func blockReason(fb *wirePromptFeedback) string {
	if fb == nil {
		return ""
	}
	return fb.BlockReason
}

// parseResponse decodes a whole generateContent answer.
func parseResponse(body []byte) (*llm.Response, error) {
	var w wireResponse
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, invalidResponse(fmt.Sprintf("response body is not a GenerateContentResponse: %v", err), err)
	}
	a := newAssembler()
	if err := a.add(&w); err != nil {
		return nil, err
	}
	return a.result(w.PromptFeedback)
}

// newToolCall builds a call whose arguments are a JSON object; anything else
// is kept as sent with ArgumentsError saying why it cannot be used.
func newToolCall(id, name string, args json.RawMessage) *llm.ToolCall {
	c := &llm.ToolCall{ID: id, Name: name, Arguments: args}
	trimmed := bytes.TrimSpace(args)
	switch {
	case len(trimmed) == 0 || string(trimmed) == "null":
		c.Arguments = emptyObject
	case !json.Valid(trimmed):
		c.ArgumentsError = "arguments are not valid JSON"
	case trimmed[0] != '{':
		c.ArgumentsError = "arguments are not a JSON object"
	}
	return c
}

// finishReason maps finishReason. Gemini says STOP also when it calls
// functions; that becomes tool_calls.
func finishReason(raw string, calls bool) llm.FinishReason {
	kind := llm.FinishOther
	switch raw {
	case "STOP":
		kind = llm.FinishStop
		if calls {
			kind = llm.FinishToolCalls
		}
	case "MAX_TOKENS":
		kind = llm.FinishLength
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "LANGUAGE":
		kind = llm.FinishContentFilter
	case "MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL":
		kind = llm.FinishError
	}
	return llm.FinishReason{Reason: kind, Raw: raw}
}

// convertUsage: InputTokens is the whole prompt (promptTokenCount already
// includes cached tokens, plus tool-use prompt tokens); OutputTokens counts
// the answer and the thoughts, as both are billed as output.
func convertUsage(u wireUsage) llm.Usage {
	return llm.Usage{
		InputTokens:     u.PromptTokenCount + u.ToolUsePromptTokenCount,
		OutputTokens:    u.CandidatesTokenCount + u.ThoughtsTokenCount,
		ReasoningTokens: u.ThoughtsTokenCount,
		CacheReadTokens: u.CachedContentTokenCount,
	}
}

func invalidResponse(msg string, err error) *llm.Error {
	return &llm.Error{Kind: llm.ErrInvalidResponse, Provider: providerName, Message: msg, Err: err}
}

// addServerPart keeps code the model ran (the code_execution tool) as
// content: a KindServerTool part with the part's JSON on Raw, never a
// call for the loop to run.
func (a *assembler) addServerPart(p *wirePartIn) {
	a.closePart()
	st := &llm.ServerTool{Type: "executableCode", Name: "code_execution", Input: p.ExecutableCode}
	field, body := "executableCode", p.ExecutableCode
	if len(p.ExecutableCode) == 0 {
		st = &llm.ServerTool{Type: "codeExecutionResult", Name: "code_execution", Input: p.CodeExecutionResult}
		field, body = "codeExecutionResult", p.CodeExecutionResult
	}
	raw, err := json.Marshal(map[string]json.RawMessage{field: body})
	if err != nil {
		return
	}
	a.parts = append(a.parts, llm.ContentPart{Kind: llm.KindServerTool, ServerTool: st, Provider: providerName, Raw: raw})
}

// metadataTools names the server tool each candidate metadata field
// reports on.
var metadataTools = map[string]string{"groundingMetadata": "google_search", "urlContextMetadata": "url_context"}

// keepMetadata keeps a candidate's grounding or URL context metadata; a
// stream repeats or completes it in later chunks, so the last one wins.
func (a *assembler) keepMetadata(field string, raw json.RawMessage) {
	if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
		return
	}
	if a.metadata == nil {
		a.metadata = map[string]json.RawMessage{}
	}
	a.metadata[field] = append(json.RawMessage(nil), raw...)
}

// metadataParts returns what google_search and url_context found as
// content at the end of the answer: a KindServerTool part per field
// (Type the field's name, Input its JSON: webSearchQueries and
// groundingChunks, or urlMetadata). Unlike code parts they are not sent
// back: the API takes no such part in a request.
func (a *assembler) metadataParts() []llm.ContentPart {
	var out []llm.ContentPart
	for _, field := range []string{"groundingMetadata", "urlContextMetadata"} {
		if raw, ok := a.metadata[field]; ok {
			out = append(out, llm.ContentPart{Kind: llm.KindServerTool, Provider: providerName,
				ServerTool: &llm.ServerTool{Type: field, Name: metadataTools[field], Input: raw}})
		}
	}
	return out
}
