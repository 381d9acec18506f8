package worker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/fleet/internal/tasksandbox"
	"github.com/agentfleet/agentfleet/internal/beneath"
	"github.com/agentfleet/agentfleet/internal/dirlock"
	"github.com/agentfleet/agentfleet/internal/gitsource"
	"github.com/agentfleet/agentfleet/internal/snapcache"
)

// Repository mirrors.
//
// A local task on a repository does not clone it from its source: the
// worker keeps one bare mirror per repository URL under
// repo_cache.dir/mirrors, fetches into it (every branch and tag) when a
// task on the repository starts, and gives the task a clone of the
// mirror made with `git clone --shared`: the task's .git borrows the
// mirror's objects through objects/info/alternates (no copy, no hard
// link; the source's objects are never linked into a task's tree), and
// holds only its own new ones. The task's sandbox binds the mirror
// read-only at its own path (sandbox.OpenedDir, opened beneath the cache
// directory), so git in the task reads the borrowed objects and can
// write none of them. The clone's origin is the repository's URL, as a
// direct clone's is.
//
// The fetch runs in the worker, as a clone does when the sandbox is off
// or the repository is reached over ssh (clone.go): the source checked
// against policy.repositories first, an http(s) host pinned to the
// addresses checked, only the allowed transports, no redirects, hooks or
// submodules, and git's environment without the worker's secrets. The
// URL is given on git's command line; the mirror's configuration on disk
// names no remote and so holds no credential a URL carries. The clone of
// the mirror runs in the task's sandbox as the tree's uid (no network,
// the mirror read-only), so the task's files are its own.
//
// One fetch per mirror at a time (a mutex per mirror), and a task whose
// fetch waited behind one that began after it asked takes that one's
// result; readers (the clones) need no lock, as git updates refs atomically and only adds
// objects. The mirror never drops an object (gc.auto=0, no prune of
// objects), so a clone or a setup snapshot borrowing them stays whole;
// a branch deleted at the source is pruned as a ref only. The cache
// directory is this worker's alone (locked, internal/dirlock).

// DefaultRepoCacheMaxSize is repo_cache.max_size's default.
const DefaultRepoCacheMaxSize = "20GiB"

// RepoCacheConfig is repo_cache: where the worker keeps its repository
// mirrors and its setup snapshots (setup.go).
type RepoCacheConfig struct {
	// Dir is the cache's directory (default: workspace_root's path with
	// "-repos" added, /tmp/agentfleet-workspaces-repos), this worker's
	// alone. It must not lie under workspace_root, where tasks' own
	// directories are. Sandboxes of other uids read the mirrors and
	// snapshots there: it and every directory above it must be
	// searchable (0755 or 0711).
	Dir string `mapstructure:"dir"`
	// MaxSize bounds the setup snapshots ("20GiB", the default): the
	// least recently used ones no task is copying are removed beyond it.
	// The mirrors are not counted: they hold each repository's history
	// once.
	MaxSize string `mapstructure:"max_size"`
	// Disabled clones every task's repository from its source, as
	// before mirrors: no mirror, no snapshot; environment.setup runs for
	// every task. For a worker without disk to spare, and as the cold
	// baseline of BenchmarkRepoStart.
	Disabled bool `mapstructure:"disabled"`
}

// repoCacheDir is repo_cache.dir, or its default.
func (c Config) repoCacheDir() string {
	if c.RepoCache.Dir == "" {
		return filepath.Clean(c.WorkspaceRoot) + "-repos"
	}
	return c.RepoCache.Dir
}

// mirrorsDir is where the mirrors are: repo_cache.dir/mirrors.
func (c Config) mirrorsDir() string { return filepath.Join(c.repoCacheDir(), "mirrors") }

func (c RepoCacheConfig) maxBytes() (int64, error) {
	return cacheMaxBytes("repo_cache.max_size", c.MaxSize, DefaultRepoCacheMaxSize)
}

// Validate names a bad key of repo_cache; workspaceRoot is
// workspace_root, which the cache must not lie under.
func (c RepoCacheConfig) Validate(workspaceRoot string) error {
	if c.Dir != "" && !filepath.IsAbs(c.Dir) {
		return fmt.Errorf("repo_cache.dir must be an absolute path, got %q", c.Dir)
	}
	if c.Dir != "" && workspaceRoot != "" {
		if _, err := beneath.Rel(workspaceRoot, c.Dir); err == nil {
			return fmt.Errorf("repo_cache.dir %q must not lie under workspace_root %q: tasks' directories are there", c.Dir, workspaceRoot)
		}
	}
	_, err := c.maxBytes()
	return err
}

// workerRepos is the worker's repository cache, opened at the first task
// on a repository.
type workerRepos struct {
	once  sync.Once
	err   error
	lock  *os.File         // repo_cache.dir/mirrors, held while the worker lives
	snaps *snapcache.Cache // repo_cache.dir/setups

	mu      sync.Mutex
	fetches map[string]*mirrorFetch // mirror name -> its fetches

	setupRuns atomic.Int64 // setups run (setup.go), for tests and benchmarks
}

// repoCache opens the cache directories once.
func (w *Worker) repoCache() (*workerRepos, error) {
	rc := &w.repos
	rc.once.Do(func() {
		dir := w.cfg.repoCacheDir()
		max, err := w.cfg.RepoCache.maxBytes()
		if err == nil {
			err = os.MkdirAll(w.cfg.mirrorsDir(), 0o755)
		}
		if err == nil {
			if rc.lock, err = dirlock.Lock(w.cfg.mirrorsDir()); err != nil {
				err = fmt.Errorf("repo_cache.dir %s is in use by another worker (give each its own): %w", dir, err)
			}
		}
		if err == nil {
			rc.snaps, err = snapcache.New(snapcache.Config{Dir: filepath.Join(dir, "setups"), MaxBytes: max})
		}
		rc.err, rc.fetches = err, map[string]*mirrorFetch{}
	})
	return rc, rc.err
}

// mirrorFetch serialises the fetches of one mirror and remembers when
// the last good one started, so that a task whose fetch waited behind
// one that started after it asked uses that one's result instead of
// fetching again (coalesced: what it would fetch is no newer).
type mirrorFetch struct {
	mu        sync.Mutex
	lastStart time.Time // of the last fetch that succeeded; under mu
}

// fetchState is the mirror name's.
func (rc *workerRepos) fetchState(name string) *mirrorFetch {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	m := rc.fetches[name]
	if m == nil {
		m = &mirrorFetch{}
		rc.fetches[name] = m
	}
	return m
}

// mirror is a repository's mirror, fetched for a task.
type mirror struct {
	src  gitsource.Source
	root string // repo_cache.dir/mirrors
	name string // <hash>.git, beneath root
}

func (m mirror) dir() string { return filepath.Join(m.root, m.name) }

// mirrorName is the directory name of repo's mirror: a hash of its URL,
// so that two spellings of a host are two mirrors, never one mirror of
// two repositories.
func mirrorName(src gitsource.Source) string {
	sum := sha256.Sum256([]byte(src.Raw))
	return hex.EncodeToString(sum[:16]) + ".git"
}

// fetchMirror checks repo against the policy, makes its mirror when
// there is none, and fetches into it, unless a fetch that started after
// this call did so meanwhile. The mirror's HEAD follows the source's
// default branch, asked at each fetch.
func (w *Worker) fetchMirror(ctx context.Context, repo string) (mirror, error) {
	c, err := w.checkSource(ctx, repo)
	if err != nil {
		return mirror{}, err
	}
	rc, err := w.repoCache()
	if err != nil {
		return mirror{}, fmt.Errorf("%w: the repository cache: %v", errBadEnvironment, err)
	}
	m := mirror{src: c.src, root: w.cfg.mirrorsDir(), name: mirrorName(c.src)}
	asked := time.Now()
	mf := rc.fetchState(m.name)
	mf.mu.Lock()
	defer mf.mu.Unlock()
	if mf.lastStart.After(asked) {
		return m, nil
	}
	if _, err := os.Stat(filepath.Join(m.dir(), "HEAD")); err != nil {
		if err := newMirror(ctx, m.dir()); err != nil {
			return mirror{}, err
		}
	}
	start := time.Now()
	if err := git(ctx, m.dir(), gitsource.FetchArgs(c.src, c.from, c.addrs)...); err != nil {
		return mirror{}, fmt.Errorf("fetching %s into its mirror: %w", repo, err)
	}
	mf.lastStart = start
	if ref := remoteHead(ctx, m.dir(), c); ref != "" {
		_ = git(ctx, m.dir(), "symbolic-ref", "HEAD", ref)
	}
	return m, nil
}

// newMirror makes an empty bare repository at dir, whole or not at all.
func newMirror(ctx context.Context, dir string) error {
	tmp := dir + ".new"
	_ = os.RemoveAll(tmp)
	if err := git(ctx, "", "init", "--bare", "--quiet", tmp); err != nil {
		return fmt.Errorf("making a mirror: %w", err)
	}
	if err := git(ctx, tmp, "config", "gc.auto", "0"); err != nil {
		return fmt.Errorf("making a mirror: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("making a mirror: %w", err)
	}
	return nil
}

// remoteHead is the branch the source's HEAD names ("refs/heads/main"),
// or "" when it cannot be had (the mirror's HEAD then stays as it was).
func remoteHead(ctx context.Context, dir string, c checkedSource) string {
	cmd := exec.CommandContext(ctx, "git", gitsource.LsRemoteHeadArgs(c.src, c.from, c.addrs)...)
	cmd.Dir, cmd.Env = dir, gitsource.CloneEnv()
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	for line := range strings.SplitSeq(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "ref: "); ok {
			if ref, _, ok := strings.Cut(rest, "\t"); ok && strings.HasPrefix(ref, "refs/heads/") {
				return ref
			}
		}
	}
	return ""
}

// commitOf is the commit ref names in the mirror ("" for its HEAD), or
// "" when it names none there.
func (m mirror) commitOf(ctx context.Context, ref string) string {
	if ref == "" {
		ref = "HEAD"
	}
	cmd := exec.CommandContext(ctx, "git", "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	cmd.Dir, cmd.Env = m.dir(), gitsource.CloneEnv()
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// open opens the mirror beneath its root, no link followed, for a
// task's sandbox to bind read-only.
func (m mirror) open() (*os.File, error) {
	return beneath.OpenDir(m.root, m.name)
}

// cloneMirror makes the task's checkout of refs (the first that exists)
// in name beneath root (which does not exist yet) from the mirror m: in
// a sandbox of tree's when local tasks run in one, else in the worker.
func (w *Worker) cloneMirror(ctx context.Context, m mirror, refs []string, tree, root, name string) error {
	args := [][]string{
		{"-c", "core.hooksPath=/dev/null", "-c", "protocol.allow=never", "-c", "protocol.file.allow=always",
			"clone", "--shared", "--quiet", "--", m.dir(), "."},
		{"remote", "set-url", "origin", m.src.Raw},
	}
	checkout := func(ref string) []string {
		return []string{"-c", "core.hooksPath=/dev/null", "checkout", "--quiet", "--detach", ref}
	}
	mf, err := m.open()
	if err != nil {
		return fmt.Errorf("%w: the mirror of %s: %v", errBadEnvironment, m.src.Raw, err)
	}
	defer func() { _ = mf.Close() }()
	ro := []sandbox.OpenedDir{{File: mf, At: m.dir()}}
	done, err := w.inTreeSandbox(ctx, "cloning "+m.src.Raw+" from its mirror", ro, tree, root, name, func(env execenv.Environment) error {
		if err := sandboxGit(ctx, env, []string{"config", "--global", "--add", "safe.directory", m.dir()}); err != nil {
			return err
		}
		for _, a := range args {
			if err := sandboxGit(ctx, env, a); err != nil {
				return err
			}
		}
		return checkoutFirst(refs, m.src.Raw, func(ref string) error { return sandboxGit(ctx, env, checkout(ref)) })
	})
	if done || err != nil {
		return err
	}
	dir := filepath.Join(root, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	for _, a := range args {
		if err := git(ctx, dir, a...); err != nil {
			return fmt.Errorf("cloning %s from its mirror: %w", m.src.Raw, err)
		}
	}
	return checkoutFirst(refs, m.src.Raw, func(ref string) error { return git(ctx, dir, checkout(ref)...) })
}

// inTreeSandbox runs do in a sandbox of tree's whose workspace is name
// beneath root (made here), reading ro, without network; done is false
// when the sandbox is off (nothing was run, name is not made).
func (w *Worker) inTreeSandbox(ctx context.Context, what string, ro []sandbox.OpenedDir, tree, root, name string, do func(execenv.Environment) error) (done bool, err error) {
	set := sandbox.Settings{Network: sandbox.NetworkNone, ReadOnlyDirs: ro, Logger: w.log.With("work", what)}
	return w.gitSandbox(ctx, what, set, tree, root, name, func(env execenv.Environment) error {
		if err := do(env); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	})
}

// gitSandbox runs do in a sandbox of tree's with set (git's prompts
// off) whose workspace is name beneath root (made here); done is false
// when the sandbox is off (nothing was run, name is not made). what
// prefixes the sandbox's own errors; do's are returned as they are.
func (w *Worker) gitSandbox(ctx context.Context, what string, set sandbox.Settings, tree, root, name string, do func(execenv.Environment) error) (done bool, err error) {
	f, err := beneath.MkdirAll(root, name, 0o755)
	if err != nil {
		return false, dirRefused(filepath.Join(root, name), err)
	}
	defer func() { _ = f.Close() }()
	set.Env = []string{"GIT_TERMINAL_PROMPT=0", "GIT_PROTOCOL_FROM_USER=0"}
	cfg := execenv.LocalConfig{WorkingDir: filepath.Join(root, name), WorkingDirFile: f, DefaultTimeout: cloneTimeout, MaxTimeout: cloneTimeout}
	env, ok, err := w.sandbox.Confine(cfg, set, tree)
	var refused *tasksandbox.RefusedError
	switch {
	case errors.As(err, &refused):
		return true, fmt.Errorf("%w: %s: %s", errNotAllowed, what, refused.Reason)
	case err != nil:
		return true, fmt.Errorf("%s: %w", what, err)
	case !ok:
		return false, os.Remove(filepath.Join(root, name)) // the worker's git makes it again
	}
	defer func() { _ = env.Cleanup(context.WithoutCancel(ctx)) }()
	return true, do(env)
}

// mirrorDirs is the mirror the task's clone borrows objects from, opened
// to be bound read-only in its sandbox (kept open with the workspace);
// none for a task without one. A task resumed in its directory, and a
// subagent working in its parent's (or in a worktree of it), find the
// mirror by the record the worker wrote when it cloned that workspace
// (recordMirror), never by what the workspace's own .git says, which the
// task may have rewritten.
func (r *run) mirrorDirs() []sandbox.OpenedDir {
	if r.ws == nil {
		return nil
	}
	if r.ws.mirror == nil {
		r.ws.mirror = r.w.recordedMirror(r.ws.dir)
	}
	if r.ws.mirror == nil {
		return nil
	}
	f, err := r.ws.mirror.open()
	if err != nil {
		r.log.Warn("the repository mirror cannot be opened; git in the task will miss its objects", "err", err)
		return nil
	}
	r.ws.extra = append(r.ws.extra, f)
	return []sandbox.OpenedDir{{File: f, At: r.ws.mirror.dir()}}
}

// The record of which mirror a workspace's clone borrows from:
// repo_cache.dir/owners/<task-id>, holding the mirror's name, written
// when the worker clones <workspace root>/<task-id> and removed with it.

func (w *Worker) ownerRecord(id string) string {
	return filepath.Join(w.cfg.repoCacheDir(), "owners", id)
}

// recordMirror notes that workspace id's clone borrows m's objects.
func (w *Worker) recordMirror(id string, m mirror) error {
	if err := os.MkdirAll(filepath.Dir(w.ownerRecord(id)), 0o700); err != nil {
		return err
	}
	return os.WriteFile(w.ownerRecord(id), []byte(m.name), 0o600)
}

// forgetMirror removes workspace id's record.
func (w *Worker) forgetMirror(id string) { _ = os.Remove(w.ownerRecord(id)) }

// recordedMirror is the mirror the workspace at dir (or the one it lies
// in, under the workspace root) was cloned from, or nil.
func (w *Worker) recordedMirror(dir string) *mirror {
	rel, err := beneath.Rel(w.cfg.WorkspaceRoot, dir)
	if err != nil || rel == "." {
		return nil
	}
	id, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	if _, err := uuid.Parse(id); err != nil {
		return nil
	}
	b, err := os.ReadFile(w.ownerRecord(id))
	name := string(b)
	if err != nil || !strings.HasSuffix(name, ".git") || len(name) != 36 || strings.Trim(strings.TrimSuffix(name, ".git"), "0123456789abcdef") != "" {
		return nil
	}
	return &mirror{root: w.cfg.mirrorsDir(), name: name}
}
