package dispatcher

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/internal/testenv"
)

func leaseStore(t *testing.T) *GitStore {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		testenv.SkipOrFatal(t, "git is not installed")
	}
	g, err := NewGitStore(GitStoreConfig{Dir: t.TempDir(), Key: "sixteen bytes or more", WorkerToken: "cred"},
		fleettest.SQLiteStore(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestRemoveBusyRepository: a repository in use (a push or fetch holds
// its shared lock) is not removed; once let go, it is.
func TestRemoveBusyRepository(t *testing.T) {
	t.Parallel()
	g, tree := leaseStore(t), uuid.New()
	l, err := g.open(context.Background(), tree, true)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := g.Remove(tree); ok || !errors.Is(err, ErrRepoBusy) {
		t.Fatalf("removing a repository in use: %v, %v; want ErrRepoBusy", ok, err)
	}
	if _, err := os.Stat(filepath.Join(l.dir, "HEAD")); err != nil {
		t.Fatalf("the repository in use is damaged: %v", err)
	}
	l.release()
	if ok, err := g.Remove(tree); !ok || err != nil {
		t.Fatalf("removing the repository let go: %v, %v", ok, err)
	}
	if left, _ := os.ReadDir(g.cfg.Dir); len(left) != 0 {
		t.Fatalf("the store holds %v after the removal", left)
	}
}

// TestLockAfterRemovalRace: a push that opened a repository's lock file
// just before a removal renamed the repository away does not write into
// the removed one: it sees the lock moved, and makes the repository
// again at its path.
func TestLockAfterRemovalRace(t *testing.T) {
	t.Parallel()
	g, tree := leaseStore(t), uuid.New()
	ctx := context.Background()
	if err := g.create(ctx, tree); err != nil {
		t.Fatal(err)
	}
	raced := false
	g.beforeLock = func(tr uuid.UUID) {
		if tr != tree || raced {
			return
		}
		raced = true
		if ok, err := g.Remove(tree); !ok || err != nil {
			t.Errorf("the racing removal: %v, %v", ok, err)
		}
	}
	l, err := g.open(ctx, tree, true)
	if err != nil {
		t.Fatal(err)
	}
	defer l.release()
	if !raced {
		t.Fatal("the removal did not race the lock")
	}
	if l.dir != filepath.Join(g.cfg.Dir, repoName(tree)) || strings.Contains(l.dir, goneInfix) {
		t.Fatalf("locked %s", l.dir)
	}
	if _, err := os.Stat(filepath.Join(l.dir, "HEAD")); err != nil {
		t.Fatalf("the repository was not made again: %v", err)
	}
	if left, _ := os.ReadDir(g.cfg.Dir); len(left) != 1 {
		t.Fatalf("the store holds %v, want the one repository", left)
	}
}

// TestRepositoryLinkRefused: a link planted where a tree's repository
// should be is not followed.
func TestRepositoryLinkRefused(t *testing.T) {
	t.Parallel()
	g, tree := leaseStore(t), uuid.New()
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(g.cfg.Dir, repoName(tree))); err != nil {
		t.Fatal(err)
	}
	if _, err := g.open(context.Background(), tree, true); err == nil {
		t.Fatal("a link as a tree's repository was opened")
	}
	if ok, err := g.Remove(tree); ok || err == nil {
		t.Fatalf("a link as a tree's repository was removed: %v", err)
	}
	if left, _ := os.ReadDir(elsewhere); len(left) != 0 {
		t.Fatalf("something was written through the link: %v", left)
	}
}
