package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/agentfleet/agentfleet/tools/patch"
)

//go:embed apply_patch.md
var applyPatchDescription string

// ApplyPatchParams are the arguments of the apply_patch tool.
type ApplyPatchParams struct {
	Patch string `json:"patch"`
}

const applyPatchSchema = `{
  "type": "object",
  "properties": {
    "patch": {"type": "string", "minLength": 1, "description": "The whole patch, from *** Begin Patch to *** End Patch."}
  },
  "required": ["patch"],
  "additionalProperties": false
}`

// ApplyPatch returns the core apply_patch tool.
func ApplyPatch() Tool {
	return Typed(coreTool("apply_patch", applyPatchDescription, applyPatchSchema, true, PatchPaths("patch")), func(ctx context.Context, call Call, p ApplyPatchParams) (Output, error) {
		return RunApplyPatch(ctx, call, p.Patch)
	})
}

// RunApplyPatch parses a v4a patch and applies it through call.Env. A patch
// that does not parse changes nothing; a failure part way leaves the earlier
// operations applied and says which.
func RunApplyPatch(ctx context.Context, call Call, text string) (Output, error) {
	p, err := parsePatch(text)
	if err != nil {
		return Output{}, err
	}
	if err := checkPatchFresh(ctx, call, p); err != nil {
		return Output{}, err
	}
	changes, err := patch.Apply(ctx, call.Env, p)
	notePatched(ctx, call, changes)
	if err == nil {
		return Output{Text: "Success. Updated the following files:\n" + patch.Summary(changes)}, nil
	}
	var ae *patch.ApplyError
	if !errors.As(err, &ae) {
		return Output{}, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Failed to apply the patch at %s: %v\n", ae.Path, ae.Err)
	if len(ae.Applied) == 0 {
		b.WriteString("Nothing was changed.")
	} else {
		b.WriteString("These operations before it were applied and remain in place:\n" + strings.TrimRight(patch.Summary(ae.Applied), "\n") +
			"\nDo not repeat them; send a patch with only the remaining changes.")
	}
	return Output{Text: b.String(), IsError: true}, nil
}

// checkPatchFresh refuses the whole patch, before any change, when a file
// it adds, updates or deletes changed since the session last read it, or
// when it adds over an existing file the session never read. A file never
// read may be updated or deleted: the patch's context lines must match
// what it contains now.
func checkPatchFresh(ctx context.Context, call Call, p *patch.Patch) error {
	for _, op := range p.Files {
		// An add over an existing file overwrites it, as write_file does.
		if err := call.Reads.checkFresh(ctx, call.Env, op.Path, nil, op.Op == patch.OpAdd); err != nil {
			return err
		}
	}
	return nil
}

// notePatched records the files the patch wrote as the session now knows
// them, and forgets those it deleted or moved away.
func notePatched(ctx context.Context, call Call, changes []patch.Change) {
	if call.Reads == nil {
		return
	}
	for _, c := range changes {
		if c.Op == patch.OpDelete || (c.MoveTo != "" && c.MoveTo != c.Path) {
			call.Reads.forget(call.Env, c.Path)
		}
		if c.Op == patch.OpDelete {
			continue
		}
		dst := c.Path
		if c.MoveTo != "" {
			dst = c.MoveTo
		}
		if data, err := call.Env.ReadFile(ctx, dst); err == nil {
			call.Reads.noteWritten(ctx, call.Env, dst, data)
		}
	}
}
