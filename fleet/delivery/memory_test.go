package delivery_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
)

// TestDeliverLeavesOutAgentNotes: the notes file a session writes
// (MEMORY.md, context.repo_memory and memory_flush) is never delivered,
// whether or not the workspace's .git/info/exclude names it, and a
// MEMORY.md the repository itself tracks is delivered as its HEAD had it.
func TestDeliverLeavesOutAgentNotes(t *testing.T) {
	ctx := context.Background()
	t.Run("untracked", func(t *testing.T) {
		bare := newOrigin(t)
		dir := workspace(t, bare, map[string]string{"README": "changed\n", "MEMORY.md": "the agent's notes\n"})
		// A subagent working in a subdirectory keeps its notes there.
		if err := os.MkdirAll(filepath.Join(dir, "pkg"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "pkg", "MEMORY.md"), []byte("a subagent's notes\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		// repomemory.Seed names it in the workspace's exclude file, which
		// the delivery stage never reads.
		if err := os.WriteFile(filepath.Join(dir, ".git", "info", "exclude"), []byte("MEMORY.md\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		st, id := taskStore(t)
		res := deliverOnce(ctx, request(dir, bare, id, fleet.Delivery{}, creds{}, st))
		if res.Error != "" || !res.Pushed {
			t.Fatalf("delivery %+v", res)
		}
		files := git(t, bare, "ls-tree", "-r", "--name-only", res.Branch)
		if strings.Contains(files, "MEMORY.md") {
			t.Fatalf("the delivered branch holds the agent's notes:\n%s", files)
		}
		if got := git(t, bare, "show", res.Branch+":README"); got != "changed" {
			t.Errorf("pushed README = %q", got)
		}
	})
	t.Run("tracked by the repository", func(t *testing.T) {
		bare := newOrigin(t)
		seed := workspace(t, bare, map[string]string{"MEMORY.md": "the project's own\n"})
		git(t, seed, "add", "MEMORY.md")
		git(t, seed, "commit", "--quiet", "-m", "memory")
		git(t, seed, "push", "--quiet", "origin", "HEAD:main")
		dir := workspace(t, bare, map[string]string{"README": "changed\n", "MEMORY.md": "the project's own\nthe agent's notes\n"})
		st, id := taskStore(t)
		res := deliverOnce(ctx, request(dir, bare, id, fleet.Delivery{}, creds{}, st))
		if res.Error != "" || !res.Pushed {
			t.Fatalf("delivery %+v", res)
		}
		if got := git(t, bare, "show", res.Branch+":MEMORY.md"); got != "the project's own" {
			t.Errorf("delivered MEMORY.md = %q, want the repository's own, without the agent's notes", got)
		}
	})
}
