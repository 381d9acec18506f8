package checks_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/store"
)

type step = fleettest.Step

// stateCheck passes once state.txt says ok; it prints the file otherwise.
var stateCheck = fleet.Check{Name: "state", Command: `grep -qx ok state.txt || { echo "state is: $(cat state.txt 2>&1)"; exit 1; }`}

func startFleet(t *testing.T) *fleettest.Fleet {
	return fleettest.Start(t, fleettest.Options{Workers: 1, SQLite: true})
}

// TestCheckFailsThenRepairPasses: the first answer leaves the check
// failing; its output goes back to the agent, which repairs the workspace
// and answers again; the checks pass and the task succeeds, "fixed"
// because the checks failed before the agent started as well.
func TestCheckFailsThenRepairPasses(t *testing.T) {
	f := startFleet(t)
	spec := fleettest.Spec("repair",
		step{Calls: []fleettest.Call{fleettest.Shell("echo bad > state.txt")}},
		step{Text: "done"},
		step{Calls: []fleettest.Call{fleettest.Shell("echo ok > state.txt")}},
		step{Text: "fixed after: {{last_user}}"},
	)
	spec.Checks = []fleet.Check{stateCheck}
	spec.ChecksBefore = true
	id := f.Submit(spec)
	task := f.WaitDone(id)
	if task.State != store.TaskSucceeded {
		t.Fatalf("state %s (%s): %s", task.State, task.Error, task.Result)
	}
	res := fleettest.Result(t, task)
	for _, want := range []string{`Check "state" failed (exit status 1)`, "state is: bad", "repair round 1 of 2"} {
		if !strings.Contains(res.FinalText, want) {
			t.Errorf("the repair input the agent saw lacks %q:\n%s", want, res.FinalText)
		}
	}
	rep := res.Checks
	if rep == nil || rep.Verdict != fleet.VerdictFixed || rep.RepairRounds != 1 {
		t.Fatalf("checks report %+v, want verdict fixed after 1 repair round", rep)
	}
	want := []struct {
		phase  string
		round  int
		passed bool
	}{{fleet.CheckBefore, 0, false}, {fleet.CheckAfter, 0, false}, {fleet.CheckAfter, 1, true}}
	if len(rep.Runs) != len(want) {
		t.Fatalf("runs %+v, want %d", rep.Runs, len(want))
	}
	for i, w := range want {
		r := rep.Runs[i]
		if r.Phase != w.phase || r.Round != w.round || r.Passed != w.passed || r.Command != stateCheck.Command || r.Output == "" {
			t.Errorf("run %d = %+v, want phase %s round %d passed %v with an output", i, r, w.phase, w.round, w.passed)
		}
	}
	out, err := f.Store.GetArtifact(context.Background(), store.GetArtifactParams{TaskID: id, Kind: "check", Name: rep.Runs[1].Output})
	if err != nil || !strings.Contains(string(out.Content), "state is: bad") {
		t.Errorf("output artifact %q = %q, %v", rep.Runs[1].Output, out.Content, err)
	}
	has, err := f.Queue.HasEvent(context.Background(), task.RootID.String(), id.String(), "CHECK_END")
	if err != nil || !has {
		t.Errorf("no CHECK_END event (%v)", err)
	}
}

// TestCheckNeverPasses: the check fails after every answer; after the
// default 2 repair rounds the task fails with checks_failed.
func TestCheckNeverPasses(t *testing.T) {
	f := startFleet(t)
	spec := fleettest.Spec("never", step{Text: "one"}, step{Text: "two"}, step{Text: "three"}, step{Text: "four"})
	spec.Checks = []fleet.Check{{Name: "lint", Command: "echo lint says no; exit 3"}}
	task := f.WaitDone(f.Submit(spec))
	if task.State != store.TaskFailed || task.Error != fleet.ReasonChecksFailed {
		t.Fatalf("state %s (%s), want failed with %s", task.State, task.Error, fleet.ReasonChecksFailed)
	}
	res := fleettest.Result(t, task)
	if res.FinalText != "three" || !strings.Contains(res.Error, `["lint"]`) {
		t.Errorf("final text %q error %q: want the third answer, the failing check named", res.FinalText, res.Error)
	}
	rep := res.Checks
	if rep == nil || rep.Verdict != fleet.VerdictFailed || rep.RepairRounds != fleet.DefaultRepairRounds || len(rep.Runs) != 3 {
		t.Fatalf("checks report %+v, want failed after %d rounds, 3 runs", rep, fleet.DefaultRepairRounds)
	}
	for _, r := range rep.Runs {
		if r.ExitCode != 3 || r.Passed {
			t.Errorf("run %+v, want exit status 3", r)
		}
	}
}

// TestCheckTimesOut: a check that hangs is killed at its timeout and counts
// as failed.
func TestCheckTimesOut(t *testing.T) {
	f := startFleet(t)
	spec := fleettest.Spec("hang", step{Text: "done"})
	zero := 0
	spec.Checks = []fleet.Check{{Name: "hang", Command: "echo started; sleep 600", Timeout: fleet.Duration(time.Second)}}
	spec.MaxRepairRounds = &zero
	task := f.WaitDone(f.Submit(spec))
	if task.State != store.TaskFailed || task.Error != fleet.ReasonChecksFailed {
		t.Fatalf("state %s (%s), want failed with %s", task.State, task.Error, fleet.ReasonChecksFailed)
	}
	rep := fleettest.Result(t, task).Checks
	if rep == nil || len(rep.Runs) != 1 || !rep.Runs[0].TimedOut || rep.Runs[0].Passed {
		t.Fatalf("checks report %+v, want one timed-out run", rep)
	}
	out, err := f.Store.GetArtifact(context.Background(), store.GetArtifactParams{TaskID: task.ID, Kind: "check", Name: rep.Runs[0].Output})
	if err != nil || !strings.Contains(string(out.Content), "started") || !strings.Contains(string(out.Content), "timed out after 1s") {
		t.Errorf("output %q, %v: want the output so far and the timeout", out.Content, err)
	}
}

// TestDrainStopsRunningCheck: a worker that drains while a long check
// runs kills it once the drain's grace is over and hands the task back,
// rather than waiting for the check's timeout.
func TestDrainStopsRunningCheck(t *testing.T) {
	f := startFleet(t)
	spec := fleettest.Spec("slow check", step{Text: "done"})
	spec.Checks = []fleet.Check{{Name: "slow", Command: "touch started; sleep 600", Timeout: fleet.Duration(time.Hour)}}
	id := f.Submit(spec)
	w := f.Workers()[0]
	started := filepath.Join(w.Config().WorkspaceRoot, id.String(), "started")
	testenv.Eventually(t, fleettest.Wait, "the check to start", func() bool {
		_, err := os.Stat(started)
		return err == nil
	})
	w.Stop(t) // fails the test if the drain waits for the check
	if task := f.Task(id); task.State != store.TaskQueued {
		t.Fatalf("after the drain the task is %s (%s), want queued (handed back)", task.State, task.Error)
	}
}
