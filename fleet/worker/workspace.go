package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/store"
)

// errBadEnvironment marks an environment a spec describes that can never
// be built here (a permanent failure).
var errBadEnvironment = errors.New("bad environment")

// workspace is a local directory a task runs in. A task that got a fresh
// directory owns it and cleans it up by policy; a child working in its
// parent's directory does not.
type workspace struct {
	dir   string
	owned bool
	lazy  bool // not created yet: the environment creates it on first use
}

// buildEnv builds and initializes the task's execution environment.
func (r *run) buildEnv(ctx context.Context) error {
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
		r.ws, err = r.w.prepareWorkspace(ctx, r.task.ID, env)
		if err != nil {
			return err
		}
		r.env, err = r.localEnv(execenv.LocalConfig{WorkingDir: r.ws.dir, Shared: env.Shared, CreateOnFirstUse: r.ws.lazy,
			EnvPolicy: policy, DefaultTimeout: defTimeout, MaxTimeout: maxTimeout})
	}
	if err != nil {
		return err
	}
	return r.env.Initialize(ctx)
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

// prepareWorkspace returns the directory a local task works in: the given
// working_dir (a parent's workspace, which must be under the workspace root
// unless shared), or a fresh <root>/<task-id>, cloned from the spec's
// repository at its ref. A resumed task finds its directory as it left it.
//
// A fresh directory without a repository is not created here: it is lazy,
// and the task's environment creates it on first use (CreateOnFirstUse in
// execenv), so a task that never touches its workspace, such as one that
// only asks the model, costs no mkdir, and its cleanup removes nothing.
// A resumed task needs no check either: its directory, if it made one, is
// used as it is. A working_dir and a clone are created here, as before.
func (w *Worker) prepareWorkspace(ctx context.Context, id uuid.UUID, env fleet.Environment) (*workspace, error) {
	if env.WorkingDir != "" {
		dir := filepath.Clean(env.WorkingDir)
		if !env.Shared && !within(w.cfg.WorkspaceRoot, dir) {
			return nil, fmt.Errorf("%w: working_dir %q is outside this worker's workspace root %s: it is another worker's "+
				"(the files of a worker that is gone are lost with it); spawn the subagent again to work here", errBadEnvironment, dir, w.cfg.WorkspaceRoot)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		return &workspace{dir: dir}, nil
	}
	ws := &workspace{dir: filepath.Join(w.cfg.WorkspaceRoot, id.String()), owned: true}
	if env.Repo == "" {
		ws.lazy = true
		return ws, nil
	}
	if _, err := os.Stat(ws.dir); err == nil {
		return ws, nil // resumed
	}
	if err := os.MkdirAll(w.cfg.WorkspaceRoot, 0o755); err != nil {
		return nil, err
	}
	tmp := ws.dir + ".clone"
	_ = os.RemoveAll(tmp)
	if err := git(ctx, "", "clone", "--quiet", "--", env.Repo, tmp); err != nil {
		return nil, fmt.Errorf("cloning %s: %w", env.Repo, err)
	}
	if env.Ref != "" {
		if err := git(ctx, tmp, "checkout", "--quiet", "--detach", env.Ref); err != nil {
			_ = os.RemoveAll(tmp)
			return nil, fmt.Errorf("%w: checking out %q of %s: %v", errBadEnvironment, env.Ref, env.Repo, err)
		}
	}
	return ws, os.Rename(tmp, ws.dir)
}

func within(root, dir string) bool {
	rel, err := filepath.Rel(root, dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

func git(ctx context.Context, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return nil
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
	}
}
