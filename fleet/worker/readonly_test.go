package worker_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/agent/permission"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker/internal/spawn"
)

// TestReadOnlyChildCannotWrite: a child spawned with read_only in a git
// workspace shares the parent's tree (no worktree), reads its files, and
// every write it tries (shell, write_file, edit_file) is refused by the
// permission layer: nothing it tried is on disk.
func TestReadOnlyChildCannotWrite(t *testing.T) {
	t.Parallel()
	needGit(t)
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Slots: 4})
	child := fleettest.Prompt("read-only reviewer",
		fleettest.Step{Calls: []fleettest.Call{
			{Name: "read_file", Args: map[string]any{"file_path": "a.txt"}},
			fleettest.Shell("echo from-child > shell.txt"),
			{Name: "write_file", Args: map[string]any{"file_path": "written.txt", "content": "from-child\n"}},
			{Name: "edit_file", Args: map[string]any{"file_path": "a.txt", "old_string": "a", "new_string": "edited"}},
		}},
		fleettest.Step{Text: "reviewer saw {{results}}"})
	spec := sharedSpec(t, "read-only child", gitRepoStep,
		fleettest.Step{Calls: []fleettest.Call{{Name: "spawn_agent", Args: map[string]any{"task": child, "read_only": true}}}},
		fleettest.Step{Calls: []fleettest.Call{waitFor(0)}},
		fleettest.Step{Text: "{{results}}"})
	dir := spec.Environment.WorkingDir
	id := f.Submit(spec)
	res := succeeded(t, f.WaitDone(id))

	kids := children(t, f, id)
	if len(kids) != 1 {
		t.Fatalf("children %v", kids)
	}
	cs, err := fleet.DecodeSpec(kids[0].Spec)
	if err != nil || cs.Permissions == nil || cs.Permissions.Mode != permission.ModePlan || !spawn.ReadOnly(cs) {
		t.Fatalf("the child's permissions %+v, %v; want mode plan", cs.Permissions, err)
	}
	if cs.Environment.WorkingDir != dir {
		t.Errorf("the read-only child works in %s, want the parent's tree %s", cs.Environment.WorkingDir, dir)
	}
	if n := strings.Count(res.FinalText, "plan mode, which is read-only"); n != 3 {
		t.Errorf("want the shell, write_file and edit_file calls refused, %d refusals:\n%s", n, res.FinalText)
	}
	if !strings.Contains(res.FinalText, "reviewer saw 1 | a") {
		t.Errorf("the child did not read a.txt:\n%s", res.FinalText)
	}
	for _, name := range []string{"shell.txt", "written.txt"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s exists: the read-only child wrote (%v)", name, err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(got) != "a\n" {
		t.Errorf("a.txt is %q: the read-only child edited it", got)
	}
	if _, err := os.Stat(filepath.Join(dir, spawn.WorktreesDir)); !os.IsNotExist(err) {
		t.Errorf("a worktree was made for a read-only child: %v", err)
	}
}
