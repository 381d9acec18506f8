//go:build linux

package delivery_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/internal/testenv"
)

// A root worker's task workspaces belong to the task's uid (see
// execenv/sandbox, "Users"); the worker's own git commands read them
// through an explicit git directory, which git's "dubious ownership"
// check does not refuse.
func TestDeliverAWorkspaceOwnedByAnotherUid(t *testing.T) {
	testenv.SkipUnlessRoot(t, "only root can give the workspace to another uid")
	bare := newOrigin(t)
	dir := workspace(t, bare, map[string]string{"README": "hello, world\n"})
	err := filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, 200321, 200321)
	})
	if err != nil {
		t.Fatal(err)
	}
	st, id := taskStore(t)
	res := deliverOnce(context.Background(), request(dir, bare, id, fleet.Delivery{}, creds{}, st))
	if res.Error != "" || !res.Pushed {
		t.Fatalf("delivery of a workspace owned by another uid: %+v", res)
	}
}
