package agent

import (
	"slices"
	"time"

	"github.com/agentfleet/agentfleet/agent/compact"
	"github.com/agentfleet/agentfleet/agent/permission"
	"github.com/agentfleet/agentfleet/llm"
)

// TurnKind discriminates the kinds of turn in a session's history.
type TurnKind string

const (
	TurnUser        TurnKind = "user"
	TurnAssistant   TurnKind = "assistant"
	TurnToolResults TurnKind = "tool_results"
	TurnSystem      TurnKind = "system"
	TurnSteering    TurnKind = "steering"
	// TurnPermission records a denial or a person's answer to an approval
	// (Permission); the model never sees it.
	TurnPermission TurnKind = "permission"
	// TurnCompaction records a compaction: the view later requests are
	// built from (see package compact). The model never sees it.
	TurnCompaction TurnKind = "compaction"
)

// Turn is one entry of a session's history. Kind says which fields matter:
//
//	user, system, steering: Text
//	assistant:              Text, ToolCalls, Reasoning, Usage, ResponseID, Message
//	tool_results:           Results
//	permission:             Permission
//	compaction:             Compaction, Usage (of the summary calls)
//
// Message keeps the assistant's full message including provider raw parts
// (thinking signatures...), so the next request replays it exactly.
// Turns are values: once appended they are never modified.
type Turn struct {
	Index      int            `json:"index"`
	Kind       TurnKind       `json:"kind"`
	Text       string         `json:"text,omitempty"`
	ToolCalls  []llm.ToolCall `json:"tool_calls,omitempty"`
	Reasoning  string         `json:"reasoning,omitempty"`
	Usage      llm.Usage      `json:"usage,omitzero"`
	ResponseID string         `json:"response_id,omitempty"`
	// Model is the model that answered an assistant turn, as the provider
	// named it ("" when it did not): a fallback model shows here.
	Model string `json:"model,omitempty"`
	// Finish is why the model stopped an assistant turn ("length": its
	// output limit cut it).
	Finish  llm.FinishKind   `json:"finish,omitempty"`
	Message *llm.Message     `json:"message,omitempty"`
	Results []llm.ToolResult `json:"results,omitempty"`
	// FullOutputs keeps, by call id, the whole output of each result of a
	// tool_results turn that was truncated (at most MaxKeptOutput bytes),
	// for read_tool_output; the model never sees it otherwise.
	FullOutputs map[string]string `json:"full_outputs,omitempty"`
	// Source says who produced a steering or system turn: "host" or "loop_detection".
	Source string `json:"source,omitempty"`
	// Permission is the record of a permission turn.
	Permission *permission.Record `json:"permission,omitempty"`
	// RequestChars counts the characters of the request an assistant turn
	// answers, so a resumed session calibrates its token estimate as the
	// session it replaces did.
	RequestChars int             `json:"request_chars,omitempty"`
	Compaction   *compact.Record `json:"compaction,omitempty"`
	Time         time.Time       `json:"time"`
}

// appendMessages converts turns to the conversation sent to the model and
// appends them to msgs. Steering turns become user messages; consecutive
// tool-result turns (a round split by parking or resume) merge into one
// message, built afresh so earlier requests sharing msgs are not changed.
func appendMessages(msgs []llm.Message, turns []Turn) []llm.Message {
	for _, t := range turns {
		switch t.Kind {
		case TurnUser, TurnSteering:
			msgs = append(msgs, llm.UserMessage(t.Text))
		case TurnSystem:
			msgs = append(msgs, llm.SystemMessage(t.Text))
		case TurnAssistant:
			if t.Message != nil {
				msgs = append(msgs, *t.Message)
			} else {
				msgs = append(msgs, assistantMessage(t))
			}
		case TurnCompaction: // never sent; the view it records is built by viewMessages
		case TurnToolResults:
			m := llm.ToolResultMessage(t.Results...)
			if n := len(msgs); n > 0 && msgs[n-1].Role == llm.RoleTool {
				msgs[n-1].Content = append(append([]llm.ContentPart(nil), msgs[n-1].Content...), m.Content...)
				continue
			}
			msgs = append(msgs, m)
		}
	}
	return msgs
}

// assistantMessage rebuilds a message from a turn recorded without one.
func assistantMessage(t Turn) llm.Message {
	m := llm.Message{Role: llm.RoleAssistant}
	if t.Reasoning != "" {
		m.Content = append(m.Content, llm.ContentPart{Kind: llm.KindReasoning, Reasoning: &llm.Reasoning{Text: t.Reasoning}})
	}
	if t.Text != "" {
		m.Content = append(m.Content, llm.ContentPart{Kind: llm.KindText, Text: t.Text})
	}
	for i := range t.ToolCalls {
		m.Content = append(m.Content, llm.ContentPart{Kind: llm.KindToolCall, ToolCall: &t.ToolCalls[i]})
	}
	return m
}

// pendingCalls returns the tool calls of the last assistant turn that have
// no recorded result: the calls to (re-)run when resuming.
func pendingCalls(history []Turn) []llm.ToolCall {
	last := -1
	for i, h := range slices.Backward(history) {
		if h.Kind == TurnAssistant {
			last = i
			break
		}
	}
	if last < 0 {
		return nil
	}
	done := map[string]bool{}
	for _, t := range history[last+1:] {
		for _, r := range t.Results {
			done[r.ToolCallID] = true
		}
	}
	var pending []llm.ToolCall
	for _, c := range history[last].ToolCalls {
		if !done[c.ID] {
			pending = append(pending, c)
		}
	}
	return pending
}

// countAssistantTurns is the session's turn count for MaxTurns.
func countAssistantTurns(history []Turn) int {
	n := 0
	for _, t := range history {
		if t.Kind == TurnAssistant {
			n++
		}
	}
	return n
}
