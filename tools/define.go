package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Typed returns t with a Run that decodes the call's arguments into P and
// calls run. Use it to build tools, including provider-shaped variants of
// the core tools: give t the name, description and schema the provider's
// model expects, and map P onto the core executor (RunShell, RunGrep, ...).
// When t.Limits is zero, it gets the defaults of t.Name.
func Typed[P any](t Tool, run func(ctx context.Context, call Call, p P) (Output, error)) Tool {
	t.Run = func(ctx context.Context, call Call) (Output, error) {
		var p P
		if len(bytes.TrimSpace(call.Args)) > 0 {
			if err := json.Unmarshal(call.Args, &p); err != nil {
				return Output{}, fmt.Errorf("the arguments do not fit the tool's parameters: %w", err)
			}
		}
		return run(ctx, call, p)
	}
	return t
}

// coreTool declares a core tool without its executor: the description
// (embedded markdown), the schema, whether it mutates, the paths of a call
// (see Tool.Paths; nil for the shell, whose command the permission layer
// reads instead) and its default limits.
func coreTool(name, description, schema string, mutates bool, paths func(json.RawMessage) ([]string, error)) Tool {
	return Tool{
		Name:        name,
		Description: strings.TrimSpace(description),
		Parameters:  json.RawMessage(schema),
		Mutates:     mutates,
		Paths:       paths,
		Limits:      DefaultLimits(name),
	}
}
