package execenv_test

import (
	"os/exec"
	"strings"
	"testing"
)

// goroot is the Go installation's root as the go command reports it (the
// tree the search benchmarks and tests read).
func goroot(tb testing.TB) string {
	tb.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		tb.Fatalf("go env GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out))
}
