package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/agentfleet/agentfleet/tools"
)

// readToolOutputDescription is in our own words.
const readToolOutputDescription = "Read again the output of an earlier tool call whose result was removed from the " +
	"conversation to save context room. Give the call_id named in the placeholder; offset and limit select a " +
	"range of characters when the output is long."

var readToolOutputSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"call_id":{"type":"string","minLength":1,"description":"The id of the earlier tool call."},` +
	`"offset":{"type":"integer","minimum":0,"description":"First character to return (default 0)."},` +
	`"limit":{"type":"integer","minimum":1,"description":"How many characters to return (default 8000)."}},` +
	`"required":["call_id"],"additionalProperties":false}`)

// readToolOutputDefaultLimit is the default number of characters returned.
const readToolOutputDefaultLimit = 8000

type readToolOutputParams struct {
	CallID string `json:"call_id"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

// registerReadToolOutput adds read_tool_output once the session has
// compacted: it reads a pruned result back from the recorded history (the
// store's copy, loaded on resume). Registering it only then keeps the tool
// list of sessions that never compact unchanged.
func (s *Session) registerReadToolOutput() {
	if s.cw.readTool {
		return
	}
	s.cw.readTool = true
	s.registry.Register(tools.Typed(tools.Tool{
		Name: "read_tool_output", Description: readToolOutputDescription, Parameters: readToolOutputSchema,
		Paths:  tools.NoPaths, // it reads the history, no file
		Limits: tools.Limits{MaxChars: -1, MaxLines: -1},
	}, s.runReadToolOutput))
}

func (s *Session) runReadToolOutput(_ context.Context, _ tools.Call, p readToolOutputParams) (tools.Output, error) {
	content, ok := s.recordedOutput(p.CallID)
	if !ok {
		return tools.Output{}, fmt.Errorf("no recorded tool call has the id %q; copy the id from the placeholder", p.CallID)
	}
	limit := p.Limit
	if limit <= 0 {
		limit = readToolOutputDefaultLimit
	}
	if p.Offset >= len(content) && len(content) > 0 {
		return tools.Output{}, fmt.Errorf("offset %d is past the end of the output (%d characters)", p.Offset, len(content))
	}
	end := min(p.Offset+limit, len(content))
	text := content[p.Offset:end]
	if end < len(content) {
		text += fmt.Sprintf("\n[characters %d to %d of %d; call again with offset %d for more]", p.Offset, end, len(content), end)
	}
	return tools.Output{Text: text}, nil
}

// recordedOutput finds the recorded result of a call.
func (s *Session) recordedOutput(callID string) (string, bool) {
	h := s.view()
	for _, v := range slices.Backward(h) {
		for _, r := range v.Results {
			if r.ToolCallID == callID {
				return r.Content, true
			}
		}
	}
	return "", false
}
