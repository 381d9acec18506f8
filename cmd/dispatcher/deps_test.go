package main

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// unwanted are the packages (and everything under them) the production
// dispatcher must not link: the worker, the simulated model, dev mode, the
// benchmark and test support. cmd/agentfleet-dev carries the first four.
var unwanted = []string{
	"github.com/agentfleet/agentfleet/fleet/worker",
	"github.com/agentfleet/agentfleet/llm/sim",
	"github.com/agentfleet/agentfleet/fleet/dev",
	"github.com/agentfleet/agentfleet/fleet/bench",
	"net/http/httptest",
	"testing",
}

// TestDispatcherLinksNoWorkerNorSimulator lists the packages this binary
// links, as `go list -deps` does, on each operating system it is built
// for, and fails naming any package of unwanted.
func TestDispatcherLinksNoWorkerNorSimulator(t *testing.T) {
	for _, goos := range []string{"linux", "darwin", "windows"} {
		cmd := exec.Command("go", "list", "-deps", ".")
		cmd.Env = append(os.Environ(), "GOOS="+goos)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOOS=%s go list -deps ./cmd/dispatcher: %v\n%s", goos, err, stderrOf(err))
		}
		deps := strings.Fields(string(out))
		if len(deps) < 50 {
			t.Fatalf("GOOS=%s: go list -deps listed %d packages, too few to be this binary's: %q", goos, len(deps), deps)
		}
		for _, dep := range deps {
			for _, u := range unwanted {
				if dep == u || strings.HasPrefix(dep, u+"/") {
					t.Errorf("GOOS=%s: the dispatcher links %s; it belongs in cmd/agentfleet-dev or a test", goos, dep)
				}
			}
		}
	}
}

func stderrOf(err error) string {
	ee := &exec.ExitError{}
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}
