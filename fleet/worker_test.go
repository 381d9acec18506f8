package fleet_test

import (
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/store"
)

func TestWorkerRunsATask(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1})
	id := f.Submit(fleettest.Spec("hello",
		fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("echo from-the-shell > out.txt && cat out.txt")}},
		fleettest.Step{Text: "finished: {{results}}"}))
	task := f.WaitDone(id)
	if task.State != store.TaskSucceeded {
		t.Fatalf("state %s, error %q, result %s", task.State, task.Error, task.Result)
	}
	res := fleettest.Result(t, task)
	if !res.Success || res.TurnsUsed != 2 || !strings.Contains(res.FinalText, "from-the-shell") {
		t.Fatalf("result %+v", res)
	}
}
