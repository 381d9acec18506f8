package worker_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/store"
)

// attemptsOrigin makes a bare repository whose main branch holds README.
func attemptsOrigin(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	bare := filepath.Join(root, "origin.git")
	seed := filepath.Join(root, "seed")
	gitOut(t, root, "init", "--quiet", "--bare", bare)
	gitOut(t, bare, "symbolic-ref", "HEAD", "refs/heads/main")
	gitOut(t, root, "init", "--quiet", seed)
	if err := os.WriteFile(filepath.Join(seed, "README"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitOut(t, seed, "add", "README")
	gitOut(t, seed, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "--quiet", "-m", "first")
	gitOut(t, seed, "push", "--quiet", bare, "HEAD:refs/heads/main")
	return bare
}

// attemptsSpec is a best-of-3 task on three models: attempt 2 (model-b)
// writes the answer its check wants and ends; attempts 1 and 3 write a
// wrong answer and are then held at gates the test never opens.
func attemptsSpec(repo string, pick fleet.AttemptPick) fleet.TaskSpec {
	held := func(model string) fleettest.Step {
		return fleettest.Step{Models: map[string]fleettest.Step{model: {Gate: "held-" + model}}}
	}
	write := fleettest.Step{Models: map[string]fleettest.Step{
		"model-a": {Calls: []fleettest.Call{fleettest.Shell("echo wrong-a > answer.txt")}},
		"model-b": {Calls: []fleettest.Call{fleettest.Shell("echo right > answer.txt")}},
		"model-c": {Calls: []fleettest.Call{fleettest.Shell("echo wrong-c > answer.txt")}},
	}}
	answer := held("model-a")
	answer.Models["model-c"] = held("model-c").Models["model-c"]
	answer.Models["model-b"] = fleettest.Step{Text: "attempt two answers"}
	spec := fleettest.Spec("answer in answer.txt", write, answer)
	spec.Environment = fleet.Environment{Repo: repo}
	spec.Checks = []fleet.Check{{Name: "right", Command: "grep -qx right answer.txt"}}
	spec.Delivery = &fleet.Delivery{}
	spec.Attempts = 3
	spec.AttemptModels = []string{"model-a", "model-b", "model-c"}
	spec.AttemptPick = pick
	return spec
}

// TestBestOfNFirstPassWins: of three attempts, attempt 2 passes its checks
// first; it wins while the others still run, they end cancelled as lost,
// all three are children of the task, and the delivered branch holds
// attempt 2's change. On SQLite and on Postgres.
func TestBestOfNFirstPassWins(t *testing.T) {
	needGit(t)
	for _, lite := range []bool{true, false} {
		name := map[bool]string{true: "sqlite", false: "postgres"}[lite]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			bare := attemptsOrigin(t)
			f := fleettest.Start(t, fleettest.Options{Workers: 2, Slots: 3, SQLite: lite})
			id := f.Submit(attemptsSpec(bare, ""))
			task := f.WaitDone(id)
			res := fleettest.Result(t, task)
			if task.State != store.TaskSucceeded {
				t.Fatalf("state %s (%s): %s", task.State, task.Error, res.Error)
			}
			kids, err := f.Store.Children(context.Background(), store.ChildrenParams{ParentID: id})
			if err != nil || len(kids.Children) != 3 {
				t.Fatalf("children %+v, %v", kids.Children, err)
			}
			a := res.Attempts
			if a == nil || a.Pick != fleet.AttemptPickFirst || a.Attempt != 2 || len(a.Tried) != 3 {
				t.Fatalf("attempts %+v", a)
			}
			for _, k := range kids.Children {
				k = f.WaitDone(k.ID)
				spec, err := fleet.DecodeSpec(k.Spec)
				if err != nil || k.RootID != id || spec.Delivery != nil {
					t.Fatalf("attempt %s: root %s, delivery %+v, %v", k.ID, k.RootID, spec.Delivery, err)
				}
				switch want := map[bool]store.TaskState{true: store.TaskSucceeded, false: store.TaskCancelled}[spec.Attempt == 2]; {
				case k.State != want:
					t.Errorf("attempt %d (%s) ended %s (%s), want %s", spec.Attempt, spec.Model, k.State, k.Error, want)
				case k.State == store.TaskCancelled && k.Error != fleet.ReasonAttemptLost:
					t.Errorf("attempt %d cancelled with %q, want %q", spec.Attempt, k.Error, fleet.ReasonAttemptLost)
				case spec.Attempt == 2 && (k.ID != a.Winner || spec.Model != "model-b"):
					t.Errorf("attempt 2 is %s on %s; the winner is %s", k.ID, spec.Model, a.Winner)
				}
			}
			if res.FinalText != "attempt two answers" || res.Checks == nil || res.Checks.Verdict != fleet.VerdictPassed {
				t.Errorf("result %q, checks %+v", res.FinalText, res.Checks)
			}
			d := res.Delivery
			if d == nil || !d.Pushed || d.Branch != "agentfleet/"+id.String() {
				t.Fatalf("delivery %+v", d)
			}
			if got := strings.TrimSpace(gitOut(t, bare, "show", d.Branch+":answer.txt")); got != "right" {
				t.Errorf("the delivered answer.txt is %q, want attempt 2's", got)
			}
			if has, err := f.Queue.HasEvent(context.Background(), id.String(), id.String(), fleet.KindDelivery); err != nil || !has {
				t.Errorf("no DELIVERY event of the task (%v)", err)
			}
			diff, err := f.Store.GetArtifact(context.Background(), store.GetArtifactParams{TaskID: id, Kind: "diff"})
			if err != nil || !strings.Contains(string(diff.Content), "+right") {
				t.Errorf("the task's diff %q, %v", diff.Content, err)
			}
		})
	}
}

// TestBestOfNAllFail: when every attempt fails its checks, the task fails
// with attempts_failed naming each attempt's reason, and delivers nothing.
func TestBestOfNAllFail(t *testing.T) {
	t.Parallel()
	needGit(t)
	bare := attemptsOrigin(t)
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Slots: 4, SQLite: true})
	spec := fleettest.Spec("never right",
		fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("echo wrong > answer.txt")}},
		fleettest.Step{Text: "tried"})
	spec.Environment = fleet.Environment{Repo: bare}
	zero := 0
	spec.Checks = []fleet.Check{{Name: "right", Command: "grep -qx right answer.txt"}}
	spec.MaxRepairRounds = &zero
	spec.Delivery = &fleet.Delivery{}
	spec.Attempts = 2
	id := f.Submit(spec)
	task := f.WaitDone(id)
	res := fleettest.Result(t, task)
	if task.State != store.TaskFailed || task.Error != fleet.ReasonAttemptsFailed {
		t.Fatalf("state %s (%s): %s", task.State, task.Error, res.Error)
	}
	want := "every attempt failed (attempt 1: checks_failed; attempt 2: checks_failed)"
	if res.Error != want || res.Attempts == nil || len(res.Attempts.Tried) != 2 {
		t.Errorf("error %q, attempts %+v; want %q", res.Error, res.Attempts, want)
	}
	if out := gitOut(t, bare, "branch", "--list", "agentfleet/*"); strings.TrimSpace(out) != "" {
		t.Errorf("branches pushed: %s", out)
	}
}

// TestBestOfNCheapestWaitsForAll: with attempt_pick cheapest the task
// waits for every attempt and keeps the cheapest that passed.
func TestBestOfNCheapestWaitsForAll(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Slots: 4, SQLite: true})
	spec := fleettest.Spec("answer", fleettest.Step{Text: "an answer"})
	spec.Attempts = 2
	spec.AttemptPick = fleet.AttemptPickCheapest
	id := f.Submit(spec)
	task := f.WaitDone(id)
	res := fleettest.Result(t, task)
	if task.State != store.TaskSucceeded || res.Attempts == nil || res.Attempts.Pick != fleet.AttemptPickCheapest {
		t.Fatalf("state %s (%s), attempts %+v", task.State, task.Error, res.Attempts)
	}
	for _, a := range res.Attempts.Tried {
		if a.State != string(store.TaskSucceeded) {
			t.Errorf("attempt %d ended %s; cheapest lets every attempt finish", a.Attempt, a.State)
		}
	}
}

// TestBestOfNRefusesModelOutsideAllowed: an attempt model the worker does
// not allow fails the task as not_allowed before any attempt exists.
func TestBestOfNRefusesModelOutsideAllowed(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, SQLite: true, Worker: func(_ int, c *worker.Config) {
		c.AllowedModels = []string{"claude-test", "model-a"}
	}})
	spec := fleettest.Spec("answer", fleettest.Step{Text: "an answer"})
	spec.Attempts, spec.AttemptModels = 2, []string{"model-a", "model-x"}
	id := f.Submit(spec)
	task := f.WaitDone(id)
	res := fleettest.Result(t, task)
	if task.State != store.TaskFailed || task.Error != fleet.ReasonNotAllowed || !strings.Contains(res.Error, `attempt 2's model "model-x"`) {
		t.Fatalf("state %s (%s): %s", task.State, task.Error, res.Error)
	}
	if kids := children(t, f, id); len(kids) != 0 {
		t.Errorf("%d attempts were created", len(kids))
	}
}
