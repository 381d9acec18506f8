package worker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/internal/beneath"
	"github.com/agentfleet/agentfleet/internal/snapcache"
)

// Setup once, start warm.
//
// A local task whose spec has environment.setup (fleet/spec_setup.go)
// gets its workspace one of two ways. Cold: the worker clones the
// repository from its mirror (mirror.go), builds the task's environment
// (its image, its sandbox, the network its spec and the operator's policy
// allow) and runs the setup there, in the workspace, before the agent
// starts; then it copies the workspace as the setup left it into the
// snapshot cache (repo_cache.dir/setups, internal/snapcache: a reflink
// copy where the file system has them, bounded by repo_cache.max_size
// with least-recently-used eviction). Warm: a snapshot for the task's key
// exists, and the workspace is copied from it, in the task's sandbox as
// its tree's uid; the setup does not run.
//
// The key is a hash of the repository's URL, the commit its ref names in
// the mirror after the fetch, the image's digest ("" on the worker's own
// system) and the setup's text. A new commit, another image or another
// setup is a new key, so a snapshot is never used for a tree it was not
// made from. One task per key sets up at a time: a second task on the key
// waits for the first and then starts warm; a failing setup fails its
// task (reason environment, the end of its output in the error) and the
// next task on the key tries again. A task reopened on its delivered
// branch clones cold and runs the setup without keeping a snapshot.
//
// What is snapshotted is the workspace only, .git included (whose
// alternates name the mirror, which never drops an object). Whatever the
// setup writes outside it (the sandbox's private /tmp and home, caches
// under $HOME) is lost; an image's root file system is read-only in the
// sandbox and never changes. A setup that wants a cache kept writes it
// under the workspace (GOMODCACHE=$PWD/.cache/go-mod, say). Files the
// setup made unreadable to others (mode 0600) cannot be copied into
// another tree's workspace: such a task falls back to cold.
//
// Every task on a repository says how its workspace was made: a
// WORKSPACE event (agent.EventWorkspace) whose text begins "warm" or
// "cold", and the same in the worker's log.

// setupTimeoutFloor bounds a setup when the operator's bound on commands
// is shorter (a setup is slower than a command).
const setupTimeoutFloor = 30 * time.Minute

// setupWork is how a fresh clone's workspace was made (checkoutRepo),
// and its environment.setup: restored warm, or to run. Nil for a
// workspace this run did not clone (resumed, lazy, a working_dir).
type setupWork struct {
	key    string // "" when no commit could be named: the setup runs, nothing is kept
	none   bool   // the spec has no setup
	warm   bool
	note   string // the WORKSPACE event's text
	unlock func() // the key's lock, held from the clone until the snapshot is kept
	once   sync.Once
}

// fresh reports whether this run made the workspace (checkoutRepo).
func (s *setupWork) fresh() bool { return s != nil }

// release gives the key's lock back; safe on nil and twice.
func (s *setupWork) release() {
	if s != nil && s.unlock != nil {
		s.once.Do(s.unlock)
	}
}

// setupKey is the snapshot key of a setup (see the comment at the top).
func setupKey(repo, commit, image, setup string) string {
	h := sha256.New()
	for _, part := range []string{"agentfleet-setup-v1", repo, commit, image, setup} {
		fmt.Fprintf(h, "%d:%s\n", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// imageDigest is the digest of the task's image, "" without one.
func (r *run) imageDigest() string {
	if r.image == nil {
		return ""
	}
	return r.image.Digest
}

// checkoutRepo makes the task's checkout in name beneath root: fetched
// into the mirror, then copied from a setup snapshot (warm) or cloned
// from the mirror (cold), and records which mirror it borrows from.
func (w *Worker) checkoutRepo(ctx context.Context, ws *workspace, spec fleet.TaskSpec, refs []string, image, tree, root, name string) error {
	env := spec.Environment
	if w.cfg.RepoCache.Disabled {
		ws.setup = &setupWork{note: "cold: cloned from the source (repo_cache.disabled)", none: env.Setup == ""}
		if !ws.setup.none {
			ws.setup.note += "; setup ran"
		}
		return w.cloneAt(ctx, env.Repo, refs, tree, root, name)
	}
	m, err := w.fetchMirror(ctx, env.Repo)
	if err != nil {
		return err
	}
	ws.mirror = &m
	if err := w.recordMirror(filepath.Base(ws.dir), m); err != nil {
		return fmt.Errorf("recording the workspace's mirror: %w", err)
	}
	if env.Setup == "" {
		ws.setup = &setupWork{note: "cold: cloned from the mirror", none: true}
		return w.cloneMirror(ctx, m, refs, tree, root, name)
	}
	ws.setup = &setupWork{note: "cold: cloned from the mirror; setup ran"}
	commit := ""
	if len(refs) == 1 {
		commit = m.commitOf(ctx, refs[0])
	}
	if commit == "" {
		ws.setup.note = "cold: cloned from the mirror; setup ran, no snapshot kept (no commit to key it by)"
		return w.cloneMirror(ctx, m, refs, tree, root, name)
	}
	rc, _ := w.repoCache() // fetchMirror opened it
	key := setupKey(m.src.Raw, commit, image, env.Setup)
	ws.setup.key = key
	if w.startWarm(ctx, rc.snaps, ws.setup, commit, tree, root, name) {
		return nil
	}
	// No snapshot: take the key, so that a task on it arriving now waits
	// for this one's setup, and look again (one may have been kept since).
	if ws.setup.unlock, err = rc.snaps.Lock(ctx, key); err != nil {
		return err
	}
	if w.startWarm(ctx, rc.snaps, ws.setup, commit, tree, root, name) {
		ws.setup.release()
		return nil
	}
	return w.cloneMirror(ctx, m, refs, tree, root, name)
}

// startWarm copies the snapshot of s.key, if there is one, into name
// beneath root, and reports whether it did; a copy that fails is logged
// and undone, and the task starts cold.
func (w *Worker) startWarm(ctx context.Context, snaps *snapcache.Cache, s *setupWork, commit, tree, root, name string) bool {
	snap, ok := snaps.Get(s.key)
	if !ok {
		return false
	}
	err := w.restoreSnapshot(ctx, snap, tree, root, name)
	snap.Release()
	if err != nil {
		w.log.Warn("the setup snapshot could not be copied; the task starts cold", "key", s.key[:12], "err", err)
		_ = os.RemoveAll(filepath.Join(root, name))
		return false
	}
	s.warm, s.note = true, fmt.Sprintf("warm: from the setup snapshot %s of commit %s", s.key[:12], commit[:min(12, len(commit))])
	return true
}

// restoreSnapshot copies snap into name beneath root: in a sandbox of
// tree's (the snapshot read-only, no network) so that the files are the
// tree's uid's, or in the worker when the sandbox is off.
func (w *Worker) restoreSnapshot(ctx context.Context, snap *snapcache.Snapshot, tree, root, name string) error {
	sf, err := beneath.OpenDir(filepath.Dir(snap.Dir), filepath.Base(snap.Dir))
	if err != nil {
		return err
	}
	defer func() { _ = sf.Close() }()
	ro := []sandbox.OpenedDir{{File: sf, At: snap.Dir}}
	copyIn := "exec cp -R --preserve=mode,timestamps,links --reflink=auto -- '" + strings.ReplaceAll(snap.Dir, "'", `'\''`) + "'/. ."
	done, err := w.inTreeSandbox(ctx, "restoring a setup snapshot", ro, tree, root, name, func(env execenv.Environment) error {
		res, err := env.Exec(ctx, execenv.ExecRequest{Command: copyIn})
		switch {
		case err != nil:
			return err
		case res.ExitCode != 0:
			return fmt.Errorf("cp: exit status %d: %s", res.ExitCode, tail(res.Stderr, 500))
		}
		return nil
	})
	if done || err != nil {
		return err
	}
	return snapcache.CopyTree(ctx, snap.Dir, filepath.Join(root, name))
}

// runSetup runs the workspace's setup when it is cold, in the task's
// environment, and keeps the snapshot; a warm workspace runs nothing.
func (r *run) runSetup(ctx context.Context) error {
	if r.ws == nil || r.ws.setup == nil || r.ws.setup.warm || r.ws.setup.none {
		return nil
	}
	s := r.ws.setup
	defer s.release()
	cmd, err := r.setupCommand()
	if err != nil {
		return err
	}
	_, maxTimeout := r.envSettings()
	start := time.Now()
	res, err := r.env.Exec(ctx, execenv.ExecRequest{Command: cmd, Timeout: max(maxTimeout, setupTimeoutFloor)})
	switch {
	case err != nil:
		return fmt.Errorf("environment.setup: %w", err)
	case res.Canceled:
		return fmt.Errorf("environment.setup: %w", context.Cause(ctx))
	case res.TimedOut:
		return fmt.Errorf("%w: environment.setup timed out after %s: %s", errBadEnvironment, time.Since(start).Round(time.Second), tail(res.Stdout+res.Stderr, 2000))
	case res.ExitCode != 0:
		return fmt.Errorf("%w: environment.setup failed with exit status %d: %s", errBadEnvironment, res.ExitCode, tail(res.Stdout+res.Stderr, 2000))
	}
	took := time.Since(start).Round(time.Millisecond)
	s.note += fmt.Sprintf(" (%s)", took)
	r.w.repos.setupRuns.Add(1)
	if s.key == "" {
		return nil
	}
	rc, err := r.w.repoCache()
	if err == nil {
		err = rc.snaps.Put(ctx, s.key, r.ws.dir)
	}
	if err != nil {
		r.log.Warn("keeping the setup snapshot", "err", err)
		s.note += "; the snapshot could not be kept"
		return nil
	}
	s.note += "; snapshot " + s.key[:12] + " kept"
	return nil
}

// setupCommand is the shell command of the spec's setup: the command as
// written, or `sh <file>` for a file of the repository, which must be a
// regular file reached beneath the workspace without a link.
func (r *run) setupCommand() (string, error) {
	env := r.spec.Environment
	file := env.SetupFile()
	if file == "" {
		return env.Setup, nil
	}
	dir, base := filepath.Split(file)
	d, err := beneath.OpenDir(r.ws.dir, filepath.Clean("./"+dir))
	if err == nil {
		var mode os.FileMode
		mode, err = beneath.Lstat(d, base)
		if err == nil && !mode.IsRegular() {
			err = errors.New("not a regular file (a link or a directory)")
		}
		_ = d.Close()
	}
	if err != nil {
		return "", fmt.Errorf("%w: environment.setup %q: %v", errBadEnvironment, env.Setup, err)
	}
	return "exec sh ./'" + strings.ReplaceAll(file, "'", `'\''`) + "'", nil
}

// notifyWorkspace reports how the task's workspace was made (a WORKSPACE
// event), for a task on a repository in a workspace of its own.
func (r *run) notifyWorkspace() {
	if r.ws == nil || !r.ws.setup.fresh() {
		return
	}
	note := r.ws.setup.note
	r.log.Info("workspace", "start", note)
	r.notify(agent.EventWorkspace, note)
}

// tail is the last n bytes of s, trimmed.
func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = "..." + s[len(s)-n:]
	}
	return s
}
