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
	changes, err := patch.Apply(ctx, call.Env, p)
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
