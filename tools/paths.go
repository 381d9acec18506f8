package tools

import (
	"encoding/json"
	"fmt"

	"github.com/agentfleet/agentfleet/tools/patch"
)

// ArgPaths returns a Tool.Paths that reads the named arguments, each a
// path or a list of paths; an absent, null or empty one names nothing. An
// argument of another type is an error (the tool's schema and its Paths
// disagree).
func ArgPaths(fields ...string) func(json.RawMessage) ([]string, error) {
	return func(args json.RawMessage) ([]string, error) {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(args, &m); err != nil {
			return nil, fmt.Errorf("the arguments are not a JSON object: %w", err)
		}
		var paths []string
		for _, f := range fields {
			raw, ok := m[f]
			if !ok || string(raw) == "null" {
				continue
			}
			var one string
			if json.Unmarshal(raw, &one) == nil {
				if one != "" {
					paths = append(paths, one)
				}
				continue
			}
			var many []string
			if err := json.Unmarshal(raw, &many); err != nil {
				return nil, fmt.Errorf("argument %q is neither a path nor a list of paths", f)
			}
			for _, p := range many {
				if p != "" {
					paths = append(paths, p)
				}
			}
		}
		return paths, nil
	}
}

// PatchPaths returns a Tool.Paths for a tool whose argument field is a
// v4a patch (see package patch): every path the patch adds, updates,
// deletes or moves to. A patch that does not parse is the error the tool
// itself would give, since it would change nothing.
func PatchPaths(field string) func(json.RawMessage) ([]string, error) {
	return func(args json.RawMessage) ([]string, error) {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(args, &m); err != nil {
			return nil, fmt.Errorf("the arguments are not a JSON object: %w", err)
		}
		var text string
		if err := json.Unmarshal(m[field], &text); err != nil {
			return nil, fmt.Errorf("argument %q must be the patch as a string", field)
		}
		p, err := parsePatch(text)
		if err != nil {
			return nil, err
		}
		var paths []string
		for _, op := range p.Files {
			paths = append(paths, op.Path)
			if op.MoveTo != "" {
				paths = append(paths, op.MoveTo)
			}
		}
		return paths, nil
	}
}

// NoPaths is the Tool.Paths of a tool that touches no file of the task
// (web_fetch, read_tool_output).
func NoPaths(json.RawMessage) ([]string, error) { return nil, nil }

// parsePatch parses a patch for apply_patch, with the error the model sees.
func parsePatch(text string) (*patch.Patch, error) {
	p, err := patch.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%v. Nothing was changed; fix the patch and send it again", err)
	}
	return p, nil
}
