// Package golden compares a test's output with a file kept under testdata/
// and, when the test binary runs with -update, rewrites that file first, so
// an intended change is one run and a reviewed diff.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// Check fails tb unless got equals the content of the file at path. With
// -update it writes got there first (creating the directory).
func Check(tb testing.TB, path string, got []byte) {
	tb.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run the test with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		tb.Fatalf("output differs from %s (run with -update if the change is intended, and review the diff):\n%s", path, got)
	}
}
