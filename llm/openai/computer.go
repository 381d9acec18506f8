package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
)

// Computer use. The Responses API's computer_use_preview tool is a
// client-run provider tool: the model answers with computer_call items
// (an action and pending safety checks) that our side must carry out,
// then send back a computer_call_output with a screenshot of the screen
// after it. The adapter maps both onto the ordinary tool round:
//
//   - A ToolDefinition with ProviderTool{Type: "computer_use_preview"}
//     goes as {type, display_width, display_height, environment}, all
//     three required and checked here; truncation "auto" is sent with it,
//     which the API asks of computer use requests.
//   - A computer_call item becomes a ToolCall named by that definition's
//     Name (the type when it has none), ID the call_id, ItemID the item
//     id, Arguments {"action": {...}, "pending_safety_checks": [...]};
//     the item's JSON stays on ContentPart.Raw. The loop routes it to the
//     tool registered under that name, like any call.
//   - The call goes back in the next request as the computer_call item,
//     and its ToolResult as a computer_call_output: the result's first
//     image is the screenshot (output {type: computer_screenshot,
//     image_url}). A result without an image (a failed or refused
//     action) sends the latest screenshot of the conversation instead,
//     the screen being unchanged, with the result's text as a user
//     message after it; when the conversation has none, BuildRequest
//     refuses the request.
//   - Pending safety checks are never acknowledged by the adapter: a
//     person must review them. The computer tool acknowledges them by
//     answering with a JSON object as its result's text,
//     {"acknowledged_safety_checks": ["cs_...", ...]} (ids, or objects
//     with an id), sent as the output's acknowledged_safety_checks with
//     the codes and messages the call raised. A result that leaves a
//     raised check unacknowledged, or names a check the call did not
//     raise, is refused by BuildRequest with an error saying so, rather
//     than sent for the API to refuse.

// ComputerUseType is the Responses API's computer use tool type.
const ComputerUseType = "computer_use_preview"

// computerEnvironments are the environment values the API accepts.
var computerEnvironments = []string{"browser", "mac", "windows", "ubuntu", "linux"}

// SafetyCheck is one safety check the API raised on a computer call.
type SafetyCheck struct {
	ID      string `json:"id"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// ComputerArguments is the Arguments of a computer call's ToolCall.
type ComputerArguments struct {
	// Action is the action to carry out as the API sent it: {"type":
	// "click", "x", "y", "button"}, {"type": "type", "text"},
	// {"type": "screenshot"}, ...
	Action json.RawMessage `json:"action"`
	// PendingSafetyChecks must be acknowledged (see the package doc)
	// before the call's result can go back.
	PendingSafetyChecks []SafetyCheck `json:"pending_safety_checks"`
}

// wireComputerCall is a computer_call item, in the output and, sent
// back, in the input.
type wireComputerCall struct {
	Type                string          `json:"type"` // computer_call
	ID                  string          `json:"id,omitempty"`
	CallID              string          `json:"call_id"`
	Action              json.RawMessage `json:"action"`
	PendingSafetyChecks []SafetyCheck   `json:"pending_safety_checks"`
	Status              string          `json:"status,omitempty"`
}

type wireComputerOutput struct {
	Type                     string         `json:"type"` // computer_call_output
	CallID                   string         `json:"call_id"`
	Output                   wireScreenshot `json:"output"`
	AcknowledgedSafetyChecks []SafetyCheck  `json:"acknowledged_safety_checks,omitempty"`
}

type wireScreenshot struct {
	Type     string `json:"type"` // computer_screenshot
	ImageURL string `json:"image_url"`
}

// checkComputerTool reports what a computer_use_preview definition lacks.
func checkComputerTool(d llm.ToolDefinition) error {
	p := d.Provider.Params
	for _, k := range []string{"display_width", "display_height"} {
		if n, ok := p[k].(float64); ok && n > 0 && n == float64(int(n)) {
			continue
		}
		if n, ok := p[k].(int); ok && n > 0 {
			continue
		}
		return invalidRequest(fmt.Sprintf("the %s tool %q needs params.%s, the screen's size in pixels (a positive integer); got %v", ComputerUseType, d.Name, k, p[k]))
	}
	env, _ := p["environment"].(string)
	if !slices.Contains(computerEnvironments, env) {
		return invalidRequest(fmt.Sprintf("the %s tool %q needs params.environment, one of %s; got %v", ComputerUseType, d.Name, strings.Join(computerEnvironments, ", "), p["environment"]))
	}
	return nil
}

func invalidRequest(msg string) *llm.Error {
	return &llm.Error{Kind: llm.ErrInvalidRequest, Provider: ProviderName, Message: msg}
}

// computerToolName returns the name the request's computer tool's calls
// carry, "" when it offers none.
func computerToolName(defs []llm.ToolDefinition) string {
	for _, d := range defs {
		if d.Provider != nil && d.Provider.Type == ComputerUseType {
			if d.Name != "" {
				return d.Name
			}
			return ComputerUseType
		}
	}
	return ""
}

// ComputerToolName returns the name the request's computer calls carry:
// the computer_use_preview definition's Name (ToolsFor's merge), else the
// type; "" when the request offers no computer tool.
func ComputerToolName(req llm.Request) string {
	defs, err := llm.ToolsFor(req, ProviderName)
	if err != nil {
		return ""
	}
	return computerToolName(defs)
}

// computerPart converts a computer_call output item.
func computerPart(raw json.RawMessage) (llm.ContentPart, *llm.Error) {
	var it wireComputerCall
	if err := json.Unmarshal(raw, &it); err != nil {
		return llm.ContentPart{}, invalidResponse("a computer_call item is not valid: "+err.Error(), raw)
	}
	if it.CallID == "" || !isJSONObject(it.Action) {
		return llm.ContentPart{}, invalidResponse("a computer_call item lacks its call_id or action object", raw)
	}
	if it.PendingSafetyChecks == nil {
		it.PendingSafetyChecks = []SafetyCheck{}
	}
	args, err := json.Marshal(ComputerArguments{Action: it.Action, PendingSafetyChecks: it.PendingSafetyChecks})
	if err != nil {
		return llm.ContentPart{}, invalidResponse("re-encoding a computer_call: "+err.Error(), raw)
	}
	call := &llm.ToolCall{ID: it.CallID, Name: ComputerUseType, Arguments: args, ItemID: it.ID}
	return llm.ContentPart{Kind: llm.KindToolCall, ToolCall: call, Provider: ProviderName, Raw: append(json.RawMessage(nil), raw...)}, nil
}

func isJSONObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// NameComputerCalls renames the computer calls in resp (named by their
// type when parsed) to name, the computer tool's name in the request.
func NameComputerCalls(resp *llm.Response, name string) {
	if resp == nil || name == "" || name == ComputerUseType {
		return
	}
	for _, p := range resp.Message.Content {
		if isComputerCall(p, "") {
			p.ToolCall.Name = name
		}
	}
}

// isComputerCall reports whether an assistant part is a computer call:
// one this adapter parsed (its Raw a computer_call item), or a call of the
// request's computer tool (name).
func isComputerCall(p llm.ContentPart, name string) bool {
	if p.Kind != llm.KindToolCall || p.ToolCall == nil {
		return false
	}
	if name != "" && p.ToolCall.Name == name {
		return true
	}
	if p.Provider != ProviderName || len(p.Raw) == 0 {
		return false
	}
	var head struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(p.Raw, &head) == nil && head.Type == "computer_call"
}

// computerInput tracks, while the input is built, the computer calls met
// so far (their pending checks, by call id) and the latest screenshot.
type computerInput struct {
	name    string
	pending map[string][]SafetyCheck
	shot    string
}

// call returns the computer_call item for an assistant's computer call.
func (c *computerInput) call(tc *llm.ToolCall) (wireComputerCall, error) {
	var args ComputerArguments
	if err := json.Unmarshal(tc.Arguments, &args); err != nil || !isJSONObject(args.Action) {
		return wireComputerCall{}, invalidRequest(fmt.Sprintf("computer call %s: its arguments are not {\"action\": {...}, \"pending_safety_checks\": [...]}", tc.ID))
	}
	if args.PendingSafetyChecks == nil {
		args.PendingSafetyChecks = []SafetyCheck{}
	}
	if c.pending == nil {
		c.pending = map[string][]SafetyCheck{}
	}
	c.pending[tc.ID] = args.PendingSafetyChecks
	return wireComputerCall{Type: "computer_call", ID: tc.ItemID, CallID: tc.ID, Action: args.Action,
		PendingSafetyChecks: args.PendingSafetyChecks, Status: "completed"}, nil
}

// output returns the items answering a computer call with tr: the
// computer_call_output, and a user message with the text of a result
// that carries no screenshot.
func (c *computerInput) output(tr *llm.ToolResult) ([]any, error) {
	acked, err := acknowledged(tr, c.pending[tr.ToolCallID])
	if err != nil {
		return nil, err
	}
	out := wireComputerOutput{Type: "computer_call_output", CallID: tr.ToolCallID,
		Output: wireScreenshot{Type: "computer_screenshot"}, AcknowledgedSafetyChecks: acked}
	if len(tr.Images) > 0 {
		c.shot = tr.Images[0].URLOrData()
		out.Output.ImageURL = c.shot
		return []any{out}, nil
	}
	if c.shot == "" {
		return nil, invalidRequest(fmt.Sprintf("computer call %s's result has no screenshot, and the conversation has none to send instead: the computer tool must answer with an image of the screen", tr.ToolCallID))
	}
	out.Output.ImageURL = c.shot
	text := tr.Content
	if text == "" || len(acked) > 0 {
		text = "(no screenshot: the screen is as before)"
	}
	note := wireMessage{Role: "user", Content: []wireContent{{Type: "input_text", Text: "Computer call " + tr.ToolCallID + ": " + text}}}
	return []any{out, note}, nil
}

// seen notes a user image as the latest screenshot.
func (c *computerInput) seen(img *llm.Image) {
	if img != nil {
		c.shot = img.URLOrData()
	}
}

// acknowledged reads the safety checks a computer call's result
// acknowledges (see the package doc) and returns them as the call raised
// them; every raised check must be among them.
func acknowledged(tr *llm.ToolResult, raised []SafetyCheck) ([]SafetyCheck, error) {
	ids := ackIDs(tr.Content)
	var out []SafetyCheck
	for _, id := range ids {
		i := slices.IndexFunc(raised, func(s SafetyCheck) bool { return s.ID == id })
		if i < 0 {
			return nil, invalidRequest(fmt.Sprintf("computer call %s's result acknowledges safety check %q, which the call did not raise", tr.ToolCallID, id))
		}
		out = append(out, raised[i])
	}
	for _, s := range raised {
		if !slices.Contains(ids, s.ID) {
			return nil, invalidRequest(fmt.Sprintf("computer call %s raised safety check %s (%s: %s), which its result does not acknowledge: "+
				"a person must review it; to go on, the computer tool answers {\"acknowledged_safety_checks\": [%q]} with its screenshot",
				tr.ToolCallID, s.ID, s.Code, s.Message, s.ID))
		}
	}
	return out, nil
}

// ackIDs reads {"acknowledged_safety_checks": [ids or {id}]} from a
// result's text; any other text acknowledges nothing.
func ackIDs(content string) []string {
	if !strings.Contains(content, "acknowledged_safety_checks") {
		return nil
	}
	var doc struct {
		Checks []json.RawMessage `json:"acknowledged_safety_checks"`
	}
	if json.Unmarshal([]byte(content), &doc) != nil {
		return nil
	}
	var ids []string
	for _, raw := range doc.Checks {
		var id string
		if json.Unmarshal(raw, &id) != nil {
			var s SafetyCheck
			_ = json.Unmarshal(raw, &s)
			id = s.ID
		}
		if id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

// NameComputerStream renames the computer calls in a stream's tool call
// events and final response to name, as NameComputerCalls does.
func NameComputerStream(events iter.Seq2[llm.StreamEvent, error], name string) iter.Seq2[llm.StreamEvent, error] {
	if name == "" || name == ComputerUseType {
		return events
	}
	return func(yield func(llm.StreamEvent, error) bool) {
		for ev, err := range events {
			if tc := ev.ToolCall; tc != nil && tc.Name == ComputerUseType &&
				(ev.Kind == llm.EventToolCallStart || ev.Kind == llm.EventToolCallEnd) {
				renamed := *tc
				renamed.Name = name
				ev.ToolCall = &renamed
			}
			if ev.Kind == llm.EventFinish {
				NameComputerCalls(ev.Response, name)
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}
