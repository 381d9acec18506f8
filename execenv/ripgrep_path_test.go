package execenv_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentfleet/agentfleet/execenv"
)

// TestRipgrepLookupFollowsPATH: the cached lookup of rg answers per value
// of PATH, so a Local built after PATH changed sees the new answer, and
// NoRipgrep still wins.
func TestRipgrepLookupFollowsPATH(t *testing.T) {
	withRg := t.TempDir()
	if err := os.WriteFile(filepath.Join(withRg, "rg"), []byte("#!/bin/sh\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	withoutRg := t.TempDir()
	for i, tc := range []struct {
		path      string
		noRipgrep bool
		want      bool
	}{
		{withRg, false, true},
		{withRg, false, true}, // cached
		{withoutRg, false, false},
		{withRg, true, false},
		{withRg, false, true},
	} {
		t.Setenv("PATH", tc.path)
		env := newLocal(t, execenv.LocalConfig{WorkingDir: t.TempDir(), NoRipgrep: tc.noRipgrep})
		if got := env.UsesRipgrep(); got != tc.want {
			t.Errorf("case %d: PATH=%s NoRipgrep=%v: UsesRipgrep() = %v, want %v", i, tc.path, tc.noRipgrep, got, tc.want)
		}
	}
}

// BenchmarkNewLocal is the cost of building a Local per task.
func BenchmarkNewLocal(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		if _, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: dir}); err != nil {
			b.Fatal(err)
		}
	}
}
