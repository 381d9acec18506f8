package tasksandbox_test

import (
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/internal/bytesize"
)

// The dispatcher's default bound of sandbox.limits is the workers'
// default limits, so that a spec the default worker refuses is refused at
// submission instead.
func TestDispatcherDefaultSandboxLimitsAreTheWorkers(t *testing.T) {
	d := fleet.DefaultSandboxLimits
	mem, err := bytesize.Parse(d.Memory)
	if err != nil {
		t.Fatal(err)
	}
	cpu, err := time.ParseDuration(d.CPUTime)
	if err != nil {
		t.Fatal(err)
	}
	if got := (sandbox.Limits{Pids: d.Pids, Memory: mem, CPUs: d.CPUs, CPUTime: cpu}); got != sandbox.DefaultLimits {
		t.Fatalf("fleet.DefaultSandboxLimits %+v, sandbox.DefaultLimits %+v: keep them the same", got, sandbox.DefaultLimits)
	}
}
