package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/tools"
)

// readToolOutputDescription is in our own words.
const readToolOutputDescription = "Read the whole output of an earlier tool call whose result was cut short (truncated) " +
	"or removed from the conversation to save context room. Give the call_id named in the note or placeholder; offset " +
	"and limit select a range of characters when the output is long."

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
// compacted or a tool's output was truncated: it reads a pruned result,
// or the whole output of a truncated one, back from the recorded history
// (the store's copy, loaded on resume). Registering it only then keeps the
// tool list of sessions that need it not unchanged. The loop owner calls it.
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

// MaxKeptOutput bounds the whole outputs of truncated results that one
// turn keeps for read_tool_output (Turn.FullOutputs), in bytes, all its
// results together, so a round of many truncated results stays far under
// the store's cap on a turn; beyond it the head is kept, with a note, and
// later results of the round keep nothing.
const MaxKeptOutput = 1 << 20

// keepFull remembers the whole output of a truncated result until the
// round's turn is recorded (executeOne may run concurrently).
func (s *Session) keepFull(callID, full string) {
	s.fullOut.Store(callID, full)
}

// takeFull returns the kept whole outputs of results, by call id, within
// MaxKeptOutput in all (in call order), and forgets them; nil when none
// was truncated.
func (s *Session) takeFull(results []llm.ToolResult) map[string]string {
	var out map[string]string
	budget := MaxKeptOutput
	for _, r := range results {
		v, ok := s.fullOut.LoadAndDelete(r.ToolCallID)
		if !ok || budget <= 0 {
			continue
		}
		full := v.(string)
		if len(full) > budget {
			full = full[:budget] + fmt.Sprintf("\n[only the first %d bytes of this output were kept]", budget)
		}
		budget -= len(full)
		if out == nil {
			out = map[string]string{}
		}
		out[r.ToolCallID] = full
	}
	return out
}

// truncatedNote is appended to a truncated result: where the rest is.
func truncatedNote(callID string) string {
	return fmt.Sprintf("\n[The whole output is kept: call read_tool_output with call_id %q (and an offset) to read the rest.]", callID)
}

// recordedOutput finds the recorded output of a call: the whole output
// of a truncated result, else the result as the model saw it.
func (s *Session) recordedOutput(callID string) (string, bool) {
	h := s.view()
	for _, v := range slices.Backward(h) {
		if full, ok := v.FullOutputs[callID]; ok {
			return full, true
		}
		for _, r := range v.Results {
			if r.ToolCallID == callID {
				return r.Content, true
			}
		}
	}
	return "", false
}
