package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
)

// DefaultResultRepairs is Config.ResultRepairs when 0: how many times an
// answer that does not match Config.ResultSchema goes back to the model.
const DefaultResultRepairs = 2

// StopResultSchema: the final answer still did not match
// Config.ResultSchema after the repairs (Outcome.Violations says why).
const StopResultSchema StopReason = "result_schema"

// sourceResultSchema marks the steering turn that asks for a repair.
const sourceResultSchema = "result_schema"

// maxViolationsShown bounds the violations one repair note lists.
const maxViolationsShown = 20

// checkResult validates a final answer (a response without tool calls)
// against Config.ResultSchema. Without a schema it returns stop "", and
// the caller decides as for free text. A valid answer sets
// out.Structured and returns StopCompleted. An invalid one appends a
// steering turn listing the violations and returns again true while
// repairs are left (counted in the history since the input's user turn,
// so a resumed session counts the same), else sets out.Violations and
// returns StopResultSchema.
func (s *Session) checkResult(ctx context.Context, out *Outcome) (stop StopReason, again bool, err error) {
	f := s.cfg.ResultSchema
	if f == nil {
		return "", false, nil
	}
	out.Structured, out.Violations = nil, nil
	value, err := ParseResult(f, out.Text)
	var se *llm.SchemaError
	switch {
	case err == nil:
		out.Structured = value
		return StopCompleted, false, nil
	case !errors.As(err, &se):
		return "", false, err // the schema does not compile: Validate refused it
	}
	limit := s.cfg.ResultRepairs
	if limit == 0 {
		limit = DefaultResultRepairs
	}
	done := resultRepairs(s.view())
	if done >= limit {
		out.Violations = se.Violations
		s.emit(Event{Kind: EventWarning, Text: fmt.Sprintf("Stopped: the final answer does not match the result schema after %d repairs: %s",
			done, strings.Join(se.Violations, "; "))})
		return StopResultSchema, false, nil
	}
	note := repairNote(se, done+1, limit)
	if err := s.appendTurn(ctx, Turn{Kind: TurnSteering, Text: note, Source: sourceResultSchema}); err != nil {
		return "", false, err
	}
	s.emit(Event{Kind: EventWarning, Text: note})
	return "", true, nil
}

// ParseResult returns a final answer as compact JSON when it is valid
// against f, else the *llm.SchemaError listing what is wrong. The answer
// may be wrapped in one Markdown code fence (```json ... ```), as models
// often do; any other text around the JSON is a violation.
func ParseResult(f *llm.ResponseFormat, answer string) (json.RawMessage, error) {
	body := unfence(answer)
	if err := f.Validate(body); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(body)); err != nil {
		return nil, &llm.SchemaError{Format: f.Name, Answer: answer, Violations: []string{"the answer is not JSON: " + err.Error()}}
	}
	return buf.Bytes(), nil
}

// unfence strips one surrounding Markdown code fence and the space
// around it.
func unfence(text string) string {
	t := strings.TrimSpace(text)
	if len(t) < 6 || !strings.HasPrefix(t, "```") || !strings.HasSuffix(t, "```") {
		return t
	}
	nl := strings.IndexByte(t, '\n')
	if nl < 0 {
		return t
	}
	return strings.TrimSpace(t[nl+1 : len(t)-3])
}

// resultRepairs counts the repair notes since the input's last user turn.
func resultRepairs(h []Turn) int {
	n := 0
	for i := len(h) - 1; i >= 0 && h[i].Kind != TurnUser; i-- {
		if h[i].Kind == TurnSteering && h[i].Source == sourceResultSchema {
			n++
		}
	}
	return n
}

// repairNote tells the model exactly what failed and what to send.
func repairNote(se *llm.SchemaError, n, limit int) string {
	v := se.Violations
	more := ""
	if len(v) > maxViolationsShown {
		more = fmt.Sprintf("\n- ... and %d more", len(v)-maxViolationsShown)
		v = v[:maxViolationsShown]
	}
	return fmt.Sprintf("Your final answer does not match the result schema (repair %d of %d):\n- %s%s\n"+
		"Answer again with only one JSON object valid against the schema in your instructions: no other text, no code fence. "+
		"Use tools first if you need to.", n, limit, strings.Join(v, "\n- "), more)
}

// withResultSchema adds the result schema to a system prompt, so the model
// knows from the start what form its final answer takes.
func (s *Session) withResultSchema(prompt string) string {
	f := s.cfg.ResultSchema
	if f == nil {
		return prompt
	}
	var schema bytes.Buffer
	if json.Indent(&schema, f.Schema, "", "  ") != nil {
		schema.Write(f.Schema)
	}
	desc := ""
	if f.Description != "" {
		desc = "\n" + f.Description
	}
	return prompt + "\n\n# Final answer format\n" +
		"Work with your tools as usual. Your final answer (the reply in which you call no tool) must be exactly one JSON object " +
		"valid against this JSON Schema, with no other text:" + desc + "\n```json\n" + schema.String() + "\n```"
}

// recheckResult is Continue's answer for a history that ends outside an
// input: StopCompleted, as without a schema, unless Config.ResultSchema
// is set and the history ends with a final answer. That answer is then
// validated as the loop would have (a run that ended after recording it
// may not have): valid, it is the outcome's Structured; invalid with
// repairs left, the repair note is appended and again is true (the caller
// continues the input); else the outcome stops with StopResultSchema.
func (s *Session) recheckResult(ctx context.Context) (out Outcome, again bool, err error) {
	out = Outcome{Stop: StopCompleted}
	h := withoutTrailingCompactions(s.view())
	if s.cfg.ResultSchema != nil && len(h) > 0 {
		if last := h[len(h)-1]; last.Kind == TurnAssistant && len(last.ToolCalls) == 0 {
			out.Text = last.Text
			var stop StopReason
			stop, again, err = s.checkResult(ctx, &out)
			if stop != "" {
				out.Stop = stop
			}
		}
	}
	out.State = s.State()
	return out, again, err
}
