package tools

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

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
	path := filepath.Join("testdata", "core_definitions.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestCoreDefinitionsGolden -update to create it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("core tool definitions changed; run with -update and review the diff in %s", path)
	}
}
