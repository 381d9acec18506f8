package worker_test

import (
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/store"
)

// TestRepoMemoryAcrossTasks: with context.repo_memory, the notes a task
// leaves in MEMORY.md reach the next task on the same repository, kept out
// of its diff; without it, a task on that repository sees none.
func TestRepoMemoryAcrossTasks(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t)
	f := fleettest.Start(t, fleettest.Options{Workers: 1})
	onRepo := func(spec fleet.TaskSpec, memory bool) fleet.TaskSpec {
		spec.Environment = fleet.Environment{Repo: repo}
		spec.Context.RepoMemory = memory
		return spec
	}
	first := f.Submit(onRepo(fleettest.Spec("learn",
		fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("echo 'run make gen before the tests' >> MEMORY.md")}},
		fleettest.Step{Text: "learned"}), true))
	succeeded(t, f.WaitDone(first))

	read := []fleettest.Step{
		{Calls: []fleettest.Call{fleettest.Shell("cat MEMORY.md 2>&1; git status --porcelain")}},
		{Text: "saw: {{results}}"},
	}
	second := f.Submit(onRepo(fleettest.Spec("recall", read...), true))
	res := succeeded(t, f.WaitDone(second))
	if !strings.Contains(res.FinalText, "run make gen before the tests") || strings.Contains(res.FinalText, "?? MEMORY.md") {
		t.Fatalf("the second task saw %q: want the notes, not in git status", res.FinalText)
	}
	third := f.Submit(onRepo(fleettest.Spec("without", read...), false))
	res = succeeded(t, f.WaitDone(third))
	if strings.Contains(res.FinalText, "make gen") {
		t.Fatalf("a task without repo_memory saw the notes: %q", res.FinalText)
	}
	if _, err := f.Store.GetArtifact(waitCtx(t), store.GetArtifactParams{TaskID: third, Kind: "memory", Name: strings.TrimSuffix(repo, "/")}); err == nil {
		t.Fatal("a task without repo_memory stored notes")
	}
}
