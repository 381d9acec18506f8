package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/pricing"
)

// DefaultMaxOutputTokens is max_output_tokens for a model the table knows
// when neither the session (SessionConfig.MaxOutputTokens) nor the
// operator (Config.DefaultMaxOutputTokens) sets one; lowered to the
// model's maximum.
const DefaultMaxOutputTokens = 32_000

// outputLimit is the max_output_tokens of a request to model: the
// session's setting, else the operator's default, never above the model's
// own maximum. When neither is set it is DefaultMaxOutputTokens (within
// the maximum) for a model pricing.MaxOutputTokens knows, and 0 (the
// adapter's or server's default) for one it does not: a local server
// whose context is small refuses a request whose prompt and output limit
// together exceed it.
func (s *Session) outputLimit(model string) int {
	n := s.cfg.Session.MaxOutputTokens
	if n == 0 {
		n = s.cfg.DefaultMaxOutputTokens
	}
	most, known := pricing.MaxOutputTokens(model)
	if n == 0 && known {
		n = DefaultMaxOutputTokens
	}
	if known && n > most {
		n = most
	}
	return n
}

// retryCutCall sends req again, once, with the model's maximum output when
// resp is a tool call cut by the output limit and the model allows more
// than req asked for. The returned response carries the usage of both
// calls, so the cut one is paid for. Otherwise resp is returned as is, and
// the cut call is answered by cutResult when the round runs.
func (s *Session) retryCutCall(ctx context.Context, req llm.Request, resp *llm.Response) (*llm.Response, error) {
	if s.cw.flushing || cutCallID(resp.FinishReason.Reason, resp.ToolCalls()) == "" {
		return resp, nil
	}
	most, ok := pricing.MaxOutputTokens(req.Model)
	if !ok || most <= req.MaxOutputTokens {
		return resp, nil
	}
	s.emit(Event{Kind: EventWarning, Text: fmt.Sprintf(
		"The model's output hit the limit of %d tokens in the middle of a tool call; asking again once with %d.", req.MaxOutputTokens, most)})
	req.MaxOutputTokens = most
	again, err := s.callFitting(ctx, req)
	if err != nil {
		return nil, err
	}
	again.Usage = resp.Usage.Add(again.Usage)
	return again, nil
}

// cutCallID returns the id of the tool call an answer that finished for
// its output limit was writing when it was cut: the last call, when its
// arguments are not a whole JSON object. "" means none was cut.
func cutCallID(finish llm.FinishKind, calls []llm.ToolCall) string {
	if finish != llm.FinishLength || len(calls) == 0 {
		return ""
	}
	last := calls[len(calls)-1]
	if last.ArgumentsError != "" || !json.Valid(last.Arguments) {
		return last.ID
	}
	return ""
}

// cutResult is what the model is told instead of running a call its own
// output limit cut: plainly why, and how to split the work.
func cutResult(call llm.ToolCall, outputTokens int) llm.ToolResult {
	limit := "the output-token limit"
	if outputTokens > 0 {
		limit = fmt.Sprintf("the output-token limit (%d tokens)", outputTokens)
	}
	return llm.ToolResult{ToolCallID: call.ID, Name: call.Name, IsError: true, Content: fmt.Sprintf(
		"Your answer hit %s while you were still writing the arguments of this %s call, so the call was cut off and did not run; nothing was changed. "+
			"One answer cannot hold that much. Split the work into smaller calls: write a large file in parts (create it with the first part, then add the rest with further edits), "+
			"send several smaller patches or edits instead of one large one, and keep each call's arguments short.", limit, call.Name)}
}

// markCut notes, before a round runs, which call of the last answer its
// output limit cut (s.cut), so executeOne answers it with cutResult. It
// reads the recorded turn, so a resumed session answers the same way.
func (s *Session) markCut() {
	s.cut = cutMark{}
	h := s.view()
	for _, v := range slices.Backward(h) {
		if v.Kind == TurnAssistant {
			s.cut = cutMark{id: cutCallID(v.Finish, v.ToolCalls), tokens: v.Usage.OutputTokens}
			return
		}
	}
}

// cutMark names the call of the running round that the output limit cut.
type cutMark struct {
	id     string
	tokens int // output tokens of the cut answer
}
