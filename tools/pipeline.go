package tools

import (
	"context"
	"encoding/json"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/llm"
)

// Result is the outcome of one call through the pipeline: Content is what the
// model sees (truncated), Full is the whole output for events and storage.
type Result struct {
	CallID  string
	Name    string
	Content string
	Full    string
	Images  []llm.Image
	IsError bool
	// Truncated is true when Content is shorter than Full.
	Truncated bool
}

// ToolResult converts r to the llm form sent back to the model.
func (r Result) ToolResult() llm.ToolResult {
	return llm.ToolResult{ToolCallID: r.CallID, Name: r.Name, Content: r.Content, IsError: r.IsError, Images: r.Images}
}

// ExecOptions carry per-session settings into the pipeline.
type ExecOptions struct {
	Settings Settings
	// Limits override truncation per tool name (zero fields keep the tool's own).
	Limits map[string]Limits
	// OnOutput receives streamed output of the call, when the tool streams.
	OnOutput func(chunk string)
	// Reads is the session's record of what it read (NewReads), for the
	// read-before-write check of the file tools; nil turns the check off.
	Reads *Reads
}

// Validate is the pipeline's first two steps, lookup and validation, for
// a caller that must check a call before running it (a permission gate):
// it returns the tool and the call's arguments as a JSON object ("{}" when
// the model sent none), or an error whose text is the result the model
// sees, the same Execute returns for the call (unknown tool, arguments that
// are not a JSON object or fail the schema). Execute validates again.
func (r *Registry) Validate(call llm.ToolCall) (Tool, json.RawMessage, error) {
	return r.validate(call)
}

// Execute runs one model tool call through the pipeline: lookup, validate,
// execute, truncate. Every failure (unknown tool, arguments that are not JSON
// or fail the schema, a tool error, a panic in the tool) becomes a Result with
// IsError set whose Content tells the model what went wrong; Execute never
// returns a Go error.
func (r *Registry) Execute(ctx context.Context, call llm.ToolCall, env execenv.Environment, opts ExecOptions) Result {
	return r.execute(ctx, call, env, opts)
}
