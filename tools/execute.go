package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/llm"
)

// execute is a minimal pipeline (lookup, run) that the full pipeline with
// schema validation and truncation replaces.
func (r *Registry) execute(ctx context.Context, call llm.ToolCall, env execenv.Environment, opts ExecOptions) Result {
	res := Result{CallID: call.ID, Name: call.Name}
	t, ok := r.Get(call.Name)
	if !ok {
		res.IsError = true
		res.Content = fmt.Sprintf("Unknown tool: %s. Available tools: %s", call.Name, strings.Join(r.Names(), ", "))
		res.Full = res.Content
		return res
	}
	out, err := t.Run(ctx, Call{ID: call.ID, Name: call.Name, Args: call.Arguments, Env: env, Settings: opts.Settings, OnOutput: opts.OnOutput})
	if err != nil {
		out = Output{Text: fmt.Sprintf("Tool error (%s): %v", call.Name, err), IsError: true}
	}
	res.Content, res.Full, res.Images, res.IsError = out.Text, out.Text, out.Images, out.IsError
	return res
}
