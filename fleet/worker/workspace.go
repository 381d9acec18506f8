package worker

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/internal/beneath"
	"github.com/agentfleet/agentfleet/store"
)

// errBadEnvironment marks an environment a spec describes that can never
// be built here (a permanent failure).
var errBadEnvironment = errors.New("bad environment")

// workspace is a local directory a task runs in. A task that got a fresh
// directory owns it and cleans it up by policy; a child working in its
// parent's directory does not.
//
// file is the directory as it was opened beneath its root (package
// internal/beneath), held until the run ends (close): what the task's
// sandbox should bind, rather than dir, a name a task could swap for a
// link. It is nil while the workspace is lazy.
type workspace struct {
	dir   string
	file  *os.File
	owned bool
	lazy  bool       // not created yet: the environment creates it on first use
	extra []*os.File // directories its sandbox binds as well (worktree_git.go)

	mirror *mirror    // the mirror its clone borrows objects from (mirror.go)
	setup  *setupWork // its environment.setup, warm or still to run (setup.go)
}

// close closes the opened directory; it is safe twice and on nil.
func (ws *workspace) close() {
	if ws != nil && ws.file != nil {
		_ = ws.file.Close()
		ws.file = nil
	}
	if ws != nil {
		ws.closeExtra()
		ws.setup.release()
	}
}

// buildEnv builds and initializes the task's execution environment.
func (r *run) buildEnv(ctx context.Context) error {
	defer func() { // a setup the build did not get to is another task's to run
		if r.ws != nil {
			r.ws.setup.release()
		}
	}()
	env := r.spec.Environment
	policy, maxTimeout := r.envSettings()
	defTimeout := min(execenv.DefaultTimeout, maxTimeout) // the shell names its timeout; this is a floor for other callers
	var err error
	switch env.Kind {
	case fleet.EnvSSH:
		r.env, err = execenv.FromDescription(ctx, execenv.Description{Kind: execenv.KindSSH, Host: env.Host,
			Port: env.Port, User: env.User, KeyRef: env.KeyRef, WorkingDir: env.WorkingDir, Shared: true},
			r.w.resolver(), execenv.Rebuild{EnvPolicy: policy, DefaultTimeout: defTimeout, MaxTimeout: maxTimeout})
		if err != nil && strings.Contains(err.Error(), "resolve ssh key") {
			return fmt.Errorf("%w: %v", errBadEnvironment, err)
		}
	default:
		// A fetch, a clone or a setup can outlast stale_after: the task's
		// heartbeat runs meanwhile, so that it is not taken for orphaned.
		defer r.heartbeat(ctx)()
		// The tree's uid is held from the clone to the environment, so
		// that both run as the same one (clone.go).
		if err := r.acquireImage(ctx); err != nil {
			return err
		}
		release, herr := r.w.sandbox.Hold(r.tree().String())
		if herr != nil {
			return fmt.Errorf("%w: %v", errBadEnvironment, herr)
		}
		r.ws, err = r.w.prepareWorkspace(ctx, r.task.ID, r.tree(), r.spec, r.restoreBranch(), r.imageDigest())
		if err == nil {
			r.env, err = r.localEnv(execenv.LocalConfig{WorkingDir: r.ws.dir, WorkingDirFile: r.ws.file, Shared: env.Shared, CreateOnFirstUse: r.ws.lazy,
				EnvPolicy: policy, DefaultTimeout: defTimeout, MaxTimeout: maxTimeout})
		}
		release()
	}
	if err != nil {
		return err
	}
	if err := r.env.Initialize(ctx); err != nil {
		return err
	}
	return r.runSetup(ctx)
}

// resolver resolves the key references of SSH environments from the
// worker's configuration.
func (w *Worker) resolver() execenv.Resolver {
	return execenv.ResolverFunc(func(_ context.Context, ref string) (execenv.SSHCredentials, error) {
		k, ok := w.cfg.SSHKeys[ref]
		if !ok {
			return execenv.SSHCredentials{}, fmt.Errorf("key reference %q is not configured on worker %s (worker.ssh_keys)", ref, w.cfg.ID)
		}
		kh := k.KnownHostsFile
		if kh == "" {
			kh = w.cfg.KnownHostsFile
		}
		return execenv.SSHCredentials{KeyFile: k.KeyFile, UseAgent: k.UseAgent, KnownHostsFile: kh}, nil
	})
}

// prepareWorkspace returns the directory a local task works in: the
// spec's working_dir, or a fresh <root>/<task-id>, cloned from the
// worker's mirror of the spec's repository at its ref (mirror.go; inside
// a sandbox as tree's uid, tree being the root task's id), or copied from
// the snapshot its environment.setup left for the same repository,
// commit and image (setup.go; image is the image's digest). A resumed
// task finds its directory as it left it.
//
// A working_dir is trusted only once resolved: it must lie under one of
// the worker's shared roots (policy.shared_roots) or, for a subagent
// working in its parent's workspace, under the workspace root; it is then
// created and opened beneath that root with internal/beneath, so a link
// in any component (a task's `ln -s / esc`, then working_dir "esc") is
// refused, not followed.
//
// A fresh directory without a repository is not created here: it is lazy,
// and the task's environment creates it on first use (CreateOnFirstUse in
// execenv), so a task that never touches its workspace, such as one that
// only asks the model, costs no mkdir, and its cleanup removes nothing.
// A resumed task needs no check either: its directory, if it made one, is
// used as it is. A working_dir and a clone are created here, as before.
//
// restore, when not "", is a branch of the repository to check out rather
// than the spec's ref when the remote has it: the delivered branch of a
// task that runs again (reopen.go).
func (w *Worker) prepareWorkspace(ctx context.Context, id, tree uuid.UUID, spec fleet.TaskSpec, restore, image string) (*workspace, error) {
	env := spec.Environment
	if env.WorkingDir != "" {
		root, rel, err := w.workingDirRoot(env, spec.ParentID != uuid.Nil)
		if err != nil {
			return nil, err
		}
		f, err := beneath.MkdirAll(root, rel, 0o755)
		if err != nil {
			return nil, dirRefused(env.WorkingDir, err)
		}
		return &workspace{dir: filepath.Join(root, rel), file: f}, nil
	}
	if err := w.endings.wait(ctx, id); err != nil { // a run of it ending here removes this directory
		return nil, err
	}
	root := w.cfg.WorkspaceRoot
	ws := &workspace{dir: filepath.Join(root, id.String()), owned: true}
	if env.Repo == "" {
		ws.lazy = true
		return ws, nil
	}
	f, err := beneath.OpenDir(root, id.String())
	switch {
	case err == nil:
		ws.file = f
		return ws, nil // resumed
	case !errors.Is(err, fs.ErrNotExist):
		return nil, dirRefused(ws.dir, err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	tmp := ws.dir + ".clone"
	_ = os.RemoveAll(tmp)
	refs := []string{env.Ref}
	if restore != "" {
		refs = []string{"refs/remotes/origin/" + restore, env.Ref}
	}
	if err := w.checkoutRepo(ctx, ws, spec, refs, image, tree.String(), root, filepath.Base(tmp)); err != nil {
		ws.setup.release()
		_ = os.RemoveAll(tmp)
		return nil, err
	}
	if err := os.Rename(tmp, ws.dir); err != nil {
		return nil, err
	}
	if ws.file, err = beneath.OpenDir(root, id.String()); err != nil {
		return nil, dirRefused(ws.dir, err)
	}
	return ws, nil
}

// workingDirRoot returns the root a working_dir is resolved beneath and
// the directory relative to it: the shared root it lies under, or, for a
// subagent's directory that is not shared, this worker's workspace root.
func (w *Worker) workingDirRoot(env fleet.Environment, child bool) (root, rel string, err error) {
	if root, rel, ok := w.cfg.Policy.SharedRoot(env.WorkingDir); ok {
		return root, rel, nil
	}
	if !child || env.Shared {
		return "", "", fmt.Errorf("%w: working_dir %q is not under a shared root of worker %s (policy.shared_roots: %s)",
			errNotAllowed, env.WorkingDir, w.cfg.ID, strings.Join(w.cfg.Policy.SharedRoots, ", "))
	}
	rel, err = beneath.Rel(w.cfg.WorkspaceRoot, env.WorkingDir)
	if err != nil {
		return "", "", fmt.Errorf("%w: working_dir %q is outside this worker's workspace root %s: it is another worker's "+
			"(the files of a worker that is gone are lost with it); spawn the subagent again to work here", errBadEnvironment, env.WorkingDir, w.cfg.WorkspaceRoot)
	}
	return w.cfg.WorkspaceRoot, rel, nil
}

// dirRefused says why a task's directory could not be opened: a link or
// an escape is refused for good (not allowed), anything else is a bad
// environment.
func dirRefused(dir string, err error) error {
	if errors.Is(err, beneath.ErrSymlink) || errors.Is(err, beneath.ErrEscape) {
		return fmt.Errorf("%w: working directory %s: %v", errNotAllowed, dir, err)
	}
	return fmt.Errorf("%w: working directory %s: %v", errBadEnvironment, dir, err)
}

// diffCommand prints the workspace's changes against HEAD, new files
// included, when the working directory is in a git repository.
const diffCommand = `git rev-parse --is-inside-work-tree >/dev/null 2>&1 || exit 3; git add --all --intent-to-add . >/dev/null 2>&1; git -c core.pager=cat diff --no-color HEAD`

// writeDiff stores the `git diff` of a git workspace as the task's "diff"
// artifact. Non-git workspaces have none.
func (r *run) writeDiff(ctx context.Context) {
	if r.env == nil || !execenv.MayBeGitRepo(ctx, r.env) {
		return
	}
	res, err := r.env.Exec(ctx, execenv.ExecRequest{Command: diffCommand, Timeout: time.Minute})
	if err != nil || res.ExitCode != 0 || res.Stdout == "" {
		return
	}
	_, err = r.w.st.PutArtifact(ctx, store.PutArtifactParams{TaskID: r.task.ID, Kind: "diff",
		ContentType: "text/x-diff; charset=utf-8", Content: []byte(res.Stdout)})
	if err != nil {
		r.log.Warn("storing the workspace diff", "err", err)
	}
}

// cleanupWorkspace deletes an owned workspace when its task succeeded (or
// failed with KeepFailed < 0); failed ones are swept after KeepFailed. A
// lazy workspace nothing created costs RemoveAll two failed lookups.
func (r *run) cleanupWorkspace(succeeded bool) {
	if r.ws == nil || !r.ws.owned {
		return
	}
	if succeeded || r.w.cfg.KeepFailed < 0 {
		r.closeEnv()
		if err := os.RemoveAll(r.ws.dir); err != nil {
			r.log.Warn("removing the workspace", "dir", r.ws.dir, "err", err)
		}
		r.w.forgetMirror(filepath.Base(r.ws.dir))
	}
}

// sweepWorkspaces removes, at start and then hourly until ctx ends,
// workspaces older than KeepFailed whose task has ended (or is unknown).
func (w *Worker) sweepWorkspaces(ctx context.Context) {
	for {
		w.sweepOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Hour):
		}
	}
}

func (w *Worker) sweepOnce(ctx context.Context) {
	entries, err := os.ReadDir(w.cfg.WorkspaceRoot)
	if err != nil {
		return
	}
	cutoff := time.Now().Add(-max(w.cfg.KeepFailed, 0))
	for _, e := range entries {
		id, err := uuid.Parse(e.Name())
		info, ierr := e.Info()
		if err != nil || ierr != nil || !e.IsDir() || info.ModTime().After(cutoff) {
			continue
		}
		t, err := w.st.GetTask(ctx, store.GetTaskParams{ID: id})
		if err == nil && !t.State.Terminal() || err != nil && !errors.Is(err, store.ErrNotFound) {
			continue
		}
		_ = os.RemoveAll(filepath.Join(w.cfg.WorkspaceRoot, e.Name()))
		w.forgetMirror(e.Name())
	}
}
