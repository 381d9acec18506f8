package dispatcher

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/internal/beneath"
	"github.com/agentfleet/agentfleet/store"
)

// The lease of a tree's repository in the fleet git store: it is made by
// the tree's first push and released (removed) once nothing can need it
// again. Decisions where the issue is silent:
//
//   - A tree's pull request concluded (merged or closed, its outcome
//     recorded by concludePull) and no task of the tree live (queued,
//     running, waiting): the repository is removed at once. A concluded
//     task takes no more follow-ups (Reopen answers ErrTaskConcluded), so
//     nothing reads the repository again. With a task still live, the
//     sweep removes it once none is.
//   - Every other tree (no pull request, or a webhook that never came):
//     the sweep (Run, every hour and once at start) removes the
//     repository once no task of the tree is live and the last one ended
//     more than git_store.keep_after_end ago (default DefaultGitStoreKeep,
//     7 days: a follow-up within a week still finds its files; negative
//     keeps every repository). A repository whose tree is not in the
//     store goes once it was last pushed to (its directory's time) that
//     long ago.
//   - A follow-up after the release still runs: the worker finds no refs
//     for the tree (GET refs answers none) and starts the task from its
//     delivered branch or a fresh clone of its ref, as for a task that
//     never used the store. A reopened subagent that starts from its
//     parent's snapshot (environment.store_base) cannot: its start fails
//     with a message naming the store. A task that becomes live just as
//     its tree's repository is removed (the liveness is read before the
//     removal) is in the same case.
//   - Races: every use of a repository (refs, push, fetch) holds a shared
//     lock of it (flock of <tree>.git/agentfleet.lock); a removal takes
//     the exclusive lock without waiting (a repository in use is not
//     removed: the next sweep looks again), renames the repository aside
//     and deletes it after. A user that locked a repository checks that
//     it is still in place, so one locked while it was renamed away is
//     let go. A push that comes after the removal (a tree token lives
//     git_store.token_ttl, and a child of a concluded tree may still be
//     followed up through the API) makes the repository again, empty but
//     for what it pushes: the store is a cache of workspaces, and the
//     sweep removes it again later. The lock is a file lock, so
//     dispatchers sharing git_store.dir on one volume respect each other's
//     (where flock(2) is not available the lock is only the rename).
//   - Tree tokens are signed, not stored: a release has none to revoke.
//
// A repository's path is derived from the tree's id only and opened
// beneath git_store.dir with no link followed (internal/beneath).

// DefaultGitStoreKeep is how long a tree's repository is kept after its
// last task ended, by default.
const DefaultGitStoreKeep = 7 * 24 * time.Hour

// gitStorePruneEvery is the time between sweeps of the store.
const gitStorePruneEvery = time.Hour

// Names in git_store.dir besides the repositories: one being made, one
// being removed.
const (
	initInfix = ".init-"
	goneInfix = ".gone-"
	lockName  = "agentfleet.lock"
)

// errLockBusy is what tryLock answers for a lock another holds.
var errLockBusy = errors.New("the repository is in use")

// repoName is tree's repository, relative to git_store.dir.
func repoName(tree uuid.UUID) string { return tree.String() + ".git" }

// lazyGitStore is the dispatcher's one GitStore, made on first use.
type lazyGitStore struct {
	once sync.Once
	g    *GitStore
	err  error
}

// fleetGitStore returns the dispatcher's git store; nil and no error when
// none is configured.
func (d *Dispatcher) fleetGitStore() (*GitStore, error) {
	l := &d.git
	l.once.Do(func() {
		if d.cfg.GitStore.Dir != "" {
			l.g, l.err = NewGitStore(d.cfg.GitStore, d.store, d.log)
		}
	})
	return l.g, l.err
}

// repoLock is a held lock of a tree's repository.
type repoLock struct {
	dir string // the repository
	f   *os.File
}

func (l *repoLock) release() { _ = l.f.Close() } // closing drops the flock

// lock locks tree's repository, shared or exclusive (then without
// waiting: errLockBusy). It answers nil and no error when the repository
// does not exist.
func (g *GitStore) lock(tree uuid.UUID, exclusive bool) (*repoLock, error) {
	name := repoName(tree)
	for range 3 {
		d, err := beneath.OpenDir(g.cfg.Dir, name)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("fleet git store: %w", err)
		}
		f, err := openLockFile(d, lockName)
		_ = d.Close()
		if errors.Is(err, fs.ErrNotExist) {
			continue // renamed away meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("fleet git store: the lock of %s: %w", name, err)
		}
		if g.beforeLock != nil {
			g.beforeLock(tree)
		}
		if err := lockFile(f, exclusive); err != nil {
			_ = f.Close()
			return nil, err
		}
		path := filepath.Join(g.cfg.Dir, name, lockName)
		if held, err := f.Stat(); err == nil {
			if now, err := os.Lstat(path); err == nil && os.SameFile(held, now) {
				return &repoLock{dir: filepath.Join(g.cfg.Dir, name), f: f}, nil
			}
		}
		_ = f.Close() // locked as it was renamed away: look again
	}
	return nil, fmt.Errorf("fleet git store: the repository of tree %s kept moving while it was locked", tree)
}

// open locks tree's repository shared for a use, making it first when
// create is set; without create, nil and no error when it does not exist.
func (g *GitStore) open(ctx context.Context, tree uuid.UUID, create bool) (*repoLock, error) {
	for range 3 {
		l, err := g.lock(tree, false)
		if err != nil || l != nil || !create {
			return l, err
		}
		if err := g.create(ctx, tree); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("fleet git store: the repository of tree %s was removed as it was made, three times", tree)
}

// ErrRepoBusy: a removal found the repository in use (a push, fetch or
// refs holds it); the next sweep looks again.
var ErrRepoBusy = errors.New("fleet git store: the repository is in use; the next sweep removes it")

// Remove removes tree's repository, true when it did; false and no error
// when there was none, ErrRepoBusy when it is in use. It does not look at
// the tree's tasks: Release and Prune do.
func (g *GitStore) Remove(tree uuid.UUID) (bool, error) {
	l, err := g.lock(tree, true)
	if errors.Is(err, errLockBusy) {
		return false, ErrRepoBusy
	}
	if err != nil || l == nil {
		return false, err
	}
	gone := l.dir + goneInfix + randHex()
	err = os.Rename(l.dir, gone)
	l.release()
	if err != nil {
		return false, fmt.Errorf("fleet git store: removing the repository of tree %s: %w", tree, err)
	}
	if err := os.RemoveAll(gone); err != nil {
		return true, fmt.Errorf("fleet git store: deleting the removed repository of tree %s (the next sweep tries again): %w", tree, err)
	}
	return true, nil
}

// liveStates are the states of a task that may still use its tree's
// repository.
var liveStates = []store.TaskState{store.TaskQueued, store.TaskRunning, store.TaskWaiting}

// Release removes the repository of tree, whose pull request concluded,
// unless a task of the tree is live (then the sweep removes it once none
// is); true when it removed it.
func (g *GitStore) Release(ctx context.Context, tree uuid.UUID) (bool, error) {
	live, err := g.st.ListTasks(ctx, store.ListTasksParams{RootID: tree, States: liveStates, Limit: 1})
	if err != nil || len(live.Tasks) > 0 {
		return false, err
	}
	return g.Remove(tree)
}

// Prune removes, as of now, the repository of every tree that no task
// can need any more (see the top of this file), and what removals and
// creations left behind; it returns how many repositories it removed and
// the errors met (the other trees are still looked at).
func (g *GitStore) Prune(ctx context.Context, now time.Time) (int, error) {
	if g.cfg.KeepAfterEnd < 0 {
		return 0, nil
	}
	entries, err := os.ReadDir(g.cfg.Dir)
	if err != nil {
		return 0, fmt.Errorf("fleet git store: %w", err)
	}
	cutoff := now.Add(-g.cfg.KeepAfterEnd)
	var errs []error
	removed := 0
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return removed, err
		}
		name := e.Name()
		if g.leftover(name, now) {
			if err := os.RemoveAll(filepath.Join(g.cfg.Dir, name)); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		tree, err := uuid.Parse(strings.TrimSuffix(name, ".git"))
		if err != nil || name != repoName(tree) {
			continue // not the store's
		}
		done, err := g.ended(ctx, tree, cutoff)
		if err == nil && done {
			var ok bool
			ok, err = g.Remove(tree)
			if ok {
				removed++
			}
		}
		if err != nil && !errors.Is(err, ErrRepoBusy) {
			errs = append(errs, err)
		}
	}
	return removed, errors.Join(errs...)
}

// leftover reports whether name, in git_store.dir, is what a removal or
// a creation left behind: a repository renamed aside, or one made aside
// more than an hour ago.
func (g *GitStore) leftover(name string, now time.Time) bool {
	if strings.Contains(name, ".git"+goneInfix) {
		return true
	}
	if !strings.Contains(name, ".git"+initInfix) {
		return false
	}
	fi, err := os.Lstat(filepath.Join(g.cfg.Dir, name))
	return err == nil && fi.ModTime().Before(now.Add(-time.Hour))
}

// ended reports whether no task of tree can need its repository: none is
// live, and its pull request concluded or its last task ended before
// cutoff (a tree not in the store: its repository last changed before
// cutoff).
func (g *GitStore) ended(ctx context.Context, tree uuid.UUID, cutoff time.Time) (bool, error) {
	tasks, err := g.st.TaskTree(ctx, store.TaskTreeParams{RootID: tree})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return false, fmt.Errorf("fleet git store: tree %s: %w", tree, err)
	}
	if len(tasks) == 0 {
		fi, err := os.Lstat(filepath.Join(g.cfg.Dir, repoName(tree)))
		return err == nil && fi.ModTime().Before(cutoff), nil
	}
	var last time.Time
	for _, t := range tasks {
		if !t.State.Terminal() {
			return false, nil
		}
		if t.FinishedAt.After(last) {
			last = t.FinishedAt
		}
	}
	if last.Before(cutoff) {
		return true, nil
	}
	o, err := taskOutcome(ctx, g.st, tree)
	return o.Outcome != "", err
}

// releaseTree releases the repository of tree, whose pull request
// concluded (concludePull): a failure, or a live task, leaves it to the
// sweep.
func (d *Dispatcher) releaseTree(ctx context.Context, tree uuid.UUID) {
	g, err := d.fleetGitStore()
	if g == nil || err != nil {
		return
	}
	removed, err := g.Release(ctx, tree)
	switch {
	case err != nil:
		d.log.Warn("releasing a concluded tree's repository in the fleet git store; the sweep tries again", "tree", tree, "err", err)
	case removed:
		d.log.Info("a concluded tree's repository was released from the fleet git store", "tree", tree)
	}
}

// pruneGitStore sweeps the fleet git store every gitStorePruneEvery (and
// once at start) until ctx ends.
func (d *Dispatcher) pruneGitStore(ctx context.Context) {
	g, err := d.fleetGitStore()
	if g == nil || err != nil || g.cfg.KeepAfterEnd < 0 {
		return
	}
	t := time.NewTicker(gitStorePruneEvery)
	defer t.Stop()
	for {
		n, err := g.Prune(ctx, time.Now())
		switch {
		case err != nil && ctx.Err() == nil:
			d.log.Warn("sweeping the fleet git store", "err", err)
		case n > 0:
			d.log.Info("fleet git store swept", "removed", n, "keep_after_end", g.cfg.KeepAfterEnd)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
