package tools

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/agentfleet/agentfleet/internal/golden"
)

// TestCoreDefinitionsGolden pins what the model sees of the core tools;
// run with -update after an intended change and review the diff.
func TestCoreDefinitionsGolden(t *testing.T) {
	var buf bytes.Buffer
	for _, d := range Core().Definitions() {
		var params any
		if err := json.Unmarshal(d.Parameters, &params); err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		out, err := json.MarshalIndent(map[string]any{"name": d.Name, "description": d.Description, "parameters": params}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(out)
		buf.WriteByte('\n')
	}
	golden.Check(t, filepath.Join("testdata", "core_definitions.golden"), buf.Bytes())
}
