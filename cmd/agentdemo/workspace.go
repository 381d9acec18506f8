package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The fix task: Average divides by one too many.
const (
	goMod   = "module example.com/stats\n\ngo 1.22\n"
	statsGo = `package stats

// Average returns the arithmetic mean of xs, or 0 for no values.
func Average(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs)+1)
}
`
	statsTestGo = `package stats

import "testing"

func TestAverage(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{4}, 4},
		{[]float64{1, 2, 3, 4}, 2.5},
	}
	for _, tt := range tests {
		if got := Average(tt.in); got != tt.want {
			t.Errorf("Average(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
`
	buggyLine = "\treturn sum / float64(len(xs)+1)"
	fixedLine = "\treturn sum / float64(len(xs))"
)

// newWorkspace writes the task into a fresh temporary directory.
func newWorkspace() (string, error) {
	dir, err := os.MkdirTemp("", "agentdemo-")
	if err != nil {
		return "", err
	}
	files := map[string]string{"go.mod": goMod, "stats.go": statsGo, "stats_test.go": statsTestGo}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// verify runs the tests once more, outside the agent, and says how it went.
func verify(dir string) error {
	cmd := exec.Command("go", "test", "./...")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("the tests still fail after the session:\n%s", strings.TrimSpace(string(out)))
	}
	fmt.Println("verified: go test passes in the workspace")
	return nil
}
