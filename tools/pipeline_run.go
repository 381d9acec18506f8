package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/llm"
)

// execute is the pipeline behind Execute: lookup, parse, validate, run,
// truncate. Every failure becomes an error Result.
func (r *Registry) execute(ctx context.Context, call llm.ToolCall, env execenv.Environment, opts ExecOptions) Result {
	t, args, err := r.validate(call)
	if err != nil {
		return errorResult(call, err.Error())
	}
	out, full := run(ctx, t, Call{ID: call.ID, Name: call.Name, Args: args, Env: env, Settings: opts.Settings, OnOutput: opts.OnOutput, Reads: opts.Reads})
	limits := t.Limits.Merge(DefaultLimits(t.Name))
	if o, ok := opts.Limits[call.Name]; ok {
		limits = o.Merge(limits)
	}
	content, cut := Truncate(out.Text, limits)
	return Result{CallID: call.ID, Name: call.Name, Content: content, Full: full, Images: out.Images, IsError: out.IsError, Truncated: cut}
}

// validate is the pipeline's lookup and validation (see Validate).
func (r *Registry) validate(call llm.ToolCall) (Tool, json.RawMessage, error) {
	t, ok := r.Get(call.Name)
	if !ok {
		return Tool{}, nil, callError(fmt.Sprintf("Unknown tool: %q. Available tools: %s. Call one of these by its exact name.",
			call.Name, strings.Join(r.Names(), ", ")))
	}
	args, msg := parseArgs(call)
	if msg != "" {
		return Tool{}, nil, callError(toolError(call.Name, msg))
	}
	if err := ValidateArgs(t.Parameters, args); err != nil {
		return Tool{}, nil, callError(toolError(call.Name, "invalid arguments: "+err.Error()+". Fix the arguments to match the tool's parameter schema and call it again."))
	}
	return t, args, nil
}

// callError is a failure of a call as the model sees it: its text is the
// whole result.
type callError string

func (e callError) Error() string { return string(e) }

// parseArgs returns the call's arguments as a JSON object, or a message
// telling the model why they are not one.
func parseArgs(call llm.ToolCall) (json.RawMessage, string) {
	if call.ArgumentsError != "" {
		return nil, "the arguments are not valid JSON (" + call.ArgumentsError + "). Send the arguments as one JSON object."
	}
	args := bytes.TrimSpace(call.Arguments)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		return json.RawMessage("{}"), ""
	}
	var probe any
	if err := json.Unmarshal(args, &probe); err != nil {
		return nil, "the arguments are not valid JSON (" + err.Error() + "). Send the arguments as one JSON object."
	}
	if _, ok := probe.(map[string]any); !ok {
		return nil, fmt.Sprintf("the arguments must be a JSON object, got %s. Send the arguments as one JSON object.", jsonKind(probe))
	}
	return json.RawMessage(args), ""
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}

// run calls the tool, turning a returned error or a panic into an error
// output. full is the untruncated text (with the stack for a panic).
func run(ctx context.Context, t Tool, call Call) (out Output, full string) {
	defer func() {
		if p := recover(); p != nil {
			out = Output{Text: toolError(t.Name, fmt.Sprintf("the tool failed unexpectedly (panic: %v). This is a bug in the tool, not in your call; try another approach.", p)), IsError: true}
			full = out.Text + "\n\n" + string(debug.Stack())
		}
	}()
	if t.Run == nil {
		out = Output{Text: toolError(t.Name, "the tool has no executor"), IsError: true}
		return out, out.Text
	}
	out, err := t.Run(ctx, call)
	if err != nil {
		out = Output{Text: toolError(t.Name, err.Error()), IsError: true}
	}
	return out, out.Text
}

// toolError formats a failure as the model sees it: "Tool error (name): msg".
func toolError(name, msg string) string { return fmt.Sprintf("Tool error (%s): %s", name, msg) }

func errorResult(call llm.ToolCall, text string) Result {
	return Result{CallID: call.ID, Name: call.Name, Content: text, Full: text, IsError: true}
}
