package delivery_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
)

// TestDeliverLeavesOutSubagentWorktrees: a subagent's worktree its parent
// never merged (.agentfleet-worktrees, listed only in the workspace's
// info/exclude, which the stage does not read) is not delivered.
func TestDeliverLeavesOutSubagentWorktrees(t *testing.T) {
	bare := newOrigin(t)
	dir := workspace(t, bare, map[string]string{"README": "changed\n"})
	wt := filepath.Join(dir, ".agentfleet-worktrees", "0e0b4477-e030-5170-8fc6-037ea734f032")
	if err := os.MkdirAll(wt, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{".git": "gitdir: /nowhere\n", "half-done.txt": "unmerged work\n"} {
		if err := os.WriteFile(filepath.Join(wt, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st, id := taskStore(t)
	res := deliverOnce(context.Background(), request(dir, bare, id, fleet.Delivery{}, creds{}, st))
	if res.Error != "" || !res.Pushed {
		t.Fatalf("delivery %+v", res)
	}
	if files := git(t, bare, "ls-tree", "-r", "--name-only", res.Branch); strings.Contains(files, "agentfleet-worktrees") {
		t.Fatalf("the delivered branch holds a subagent's worktree:\n%s", files)
	}
}
