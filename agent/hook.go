package agent

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/tools"
)

// HookPoint names a point of a session's life where hooks run.
type HookPoint string

const (
	HookSessionStart     HookPoint = "session_start"      // after SESSION_START
	HookSessionStop      HookPoint = "session_stop"       // before SESSION_END
	HookUserPromptSubmit HookPoint = "user_prompt_submit" // after USER_INPUT
	HookPreToolUse       HookPoint = "pre_tool_use"       // before a tool runs; may block it
	HookPostToolUse      HookPoint = "post_tool_use"      // after a tool ran; may add to its result
)

// HookPoints lists every HookPoint.
var HookPoints = []HookPoint{HookSessionStart, HookSessionStop, HookUserPromptSubmit, HookPreToolUse, HookPostToolUse}

// HookEvent is what a hook is told; its JSON form is what package
// agent/hooks hands to shell and HTTP hooks.
type HookEvent struct {
	Point     HookPoint       `json:"event"`
	SessionID string          `json:"session_id"`
	Prompt    string          `json:"prompt,omitempty"`     // user_prompt_submit
	ToolName  string          `json:"tool_name,omitempty"`  // pre/post_tool_use
	CallID    string          `json:"call_id,omitempty"`    // pre/post_tool_use
	Arguments json.RawMessage `json:"tool_input,omitempty"` // pre/post_tool_use
	Output    string          `json:"tool_output,omitempty"`
	IsError   bool            `json:"is_error,omitempty"` // post_tool_use
}

// HookResult is what a hook decided. Block (with Reason, which the model
// sees) counts at pre_tool_use only; Append, at post_tool_use only, is added
// to the result the model sees. Each of Warnings becomes a WARNING event.
type HookResult struct {
	Block    bool
	Reason   string
	Append   string
	Warnings []string
}

// Hook runs at every HookPoint of a session (Config.Hooks); it filters the
// points and tools it cares about itself. RunHook is called from the loop
// owner, or concurrently for the calls of a parallel round, and must honour
// ctx.
type Hook interface {
	RunHook(ctx context.Context, ev HookEvent) HookResult
}

// HookFunc adapts a function to Hook.
type HookFunc func(ctx context.Context, ev HookEvent) HookResult

// RunHook calls f.
func (f HookFunc) RunHook(ctx context.Context, ev HookEvent) HookResult { return f(ctx, ev) }

// runHooks runs the session's hooks in order, emits their warnings and
// merges their results: the first block wins and ends the run.
func (s *Session) runHooks(ctx context.Context, ev HookEvent) HookResult {
	var out HookResult
	if len(s.cfg.Hooks) == 0 {
		return out
	}
	ev.SessionID = s.id
	var appends []string
	for _, h := range s.cfg.Hooks {
		r := h.RunHook(ctx, ev)
		for _, w := range r.Warnings {
			s.emit(Event{Kind: EventWarning, Text: w, ToolName: ev.ToolName, CallID: ev.CallID})
		}
		if r.Append != "" {
			appends = append(appends, r.Append)
		}
		if r.Block && ev.Point == HookPreToolUse {
			out.Block, out.Reason = true, r.Reason
			break
		}
	}
	out.Append = strings.Join(appends, "\n")
	return out
}

// preToolHooks runs pre_tool_use hooks; a blocked call gets an error
// result naming the reason and is not run.
func (s *Session) preToolHooks(ctx context.Context, call llm.ToolCall) (tools.Result, bool) {
	r := s.runHooks(ctx, HookEvent{Point: HookPreToolUse, ToolName: call.Name, CallID: call.ID, Arguments: call.Arguments})
	if !r.Block {
		return tools.Result{}, false
	}
	reason := strings.TrimSpace(r.Reason)
	if reason == "" {
		reason = "no reason given"
	}
	text := "Tool call blocked by a hook: " + reason
	return tools.Result{CallID: call.ID, Name: call.Name, Content: text, Full: text, IsError: true}, true
}

// postToolHooks runs post_tool_use hooks and appends what they said to the
// result.
func (s *Session) postToolHooks(ctx context.Context, call llm.ToolCall, res tools.Result) tools.Result {
	r := s.runHooks(ctx, HookEvent{Point: HookPostToolUse, ToolName: call.Name, CallID: call.ID,
		Arguments: call.Arguments, Output: res.Full, IsError: res.IsError})
	if r.Append != "" {
		res.Content += "\n\n" + r.Append
		res.Full += "\n\n" + r.Append
	}
	return res
}
