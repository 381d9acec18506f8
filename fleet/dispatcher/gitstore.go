package dispatcher

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet/internal/gitstore"
	"github.com/agentfleet/agentfleet/store"
)

// gitStoreRoute is where the fleet git store is served (http.go). It
// authenticates itself (http_roles.go, selfAuthenticated): the workers'
// credential mints tree tokens, a tree token opens its tree.
const gitStoreRoute = "/git/"

// GitStoreConfig is the fleet git store (package fleet/internal/gitstore):
// a bare repository per task tree that carries a local task's files to
// the workers running its subagents, and back.
type GitStoreConfig struct {
	// Dir holds the repositories; "" serves no store (subagents of a
	// local task then run on its worker).
	Dir string `mapstructure:"dir"`
	// Key signs tree tokens; every dispatcher of a fleet has the same.
	Key string `mapstructure:"key"`
	// WorkerToken is the workers' credential (their git_store.token).
	WorkerToken string `mapstructure:"worker_token"`
	// TokenTTL is how long a tree token is good for (default
	// gitstore.DefaultTokenTTL).
	TokenTTL time.Duration `mapstructure:"token_ttl"`
	// MaxBundleBytes bounds one push (default 2 GiB).
	MaxBundleBytes int64 `mapstructure:"max_bundle_bytes"`
	// KeepAfterEnd is how long a tree's repository is kept once no task
	// of the tree is live (gitstore_lease.go): default
	// DefaultGitStoreKeep; negative keeps every repository for ever.
	KeepAfterEnd time.Duration `mapstructure:"keep_after_end"`
}

// gitStoreTimeout bounds one git command of the store.
const gitStoreTimeout = 10 * time.Minute

// GitStore serves the fleet git store (GitStoreConfig). Its routes, under
// /git/:
//
//   - POST /git/token {tree, task}, with the workers' credential as the
//     bearer token: a tree token, when task is a task of tree.
//   - GET /git/{tree}/refs: "<commit> <ref>" lines.
//   - POST /git/{tree}/push?ref=R: a bundle of refs/agentfleet/out becomes R.
//   - GET /git/{tree}/fetch?want=C[&have=H]: a bundle of C (ref
//     refs/agentfleet/out), thin against H when the store has it.
//
// The last three take the tree's token as the bearer token. A tree's
// repository is made by its first push (refs and fetch never make one:
// no refs, a 404) and removed by Release, Prune or Remove
// (gitstore_lease.go).
type GitStore struct {
	cfg GitStoreConfig
	st  store.Store
	log *slog.Logger
	// beforeLock, when set (by tests), runs between opening a
	// repository's lock file and locking it.
	beforeLock func(tree uuid.UUID)
}

// NewGitStore returns the store's handler; cfg.Dir must be set, and Key and
// WorkerToken too.
func NewGitStore(cfg GitStoreConfig, st store.Store, log *slog.Logger) (*GitStore, error) {
	switch {
	case cfg.Dir == "":
		return nil, errors.New("git_store.dir is empty: name the directory of the store's repositories")
	case len(cfg.Key) < 16:
		return nil, errors.New("git_store.key must be at least 16 bytes of secret: it signs tree tokens")
	case cfg.WorkerToken == "":
		return nil, errors.New("git_store.worker_token is empty: set the credential the workers present (their git_store.token)")
	}
	if cfg.TokenTTL <= 0 {
		cfg.TokenTTL = gitstore.DefaultTokenTTL
	}
	if cfg.MaxBundleBytes <= 0 {
		cfg.MaxBundleBytes = 2 << 30
	}
	if cfg.KeepAfterEnd == 0 {
		cfg.KeepAfterEnd = DefaultGitStoreKeep
	}
	if log == nil {
		log = slog.Default()
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, err
	}
	return &GitStore{cfg: cfg, st: st, log: log}, nil
}

// gitStore is the handler of gitStoreRoute: the store, or a 404 saying
// none is configured.
func (d *Dispatcher) gitStore() http.Handler {
	g, err := d.fleetGitStore()
	switch {
	case err != nil:
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "the fleet git store is misconfigured: "+err.Error(), http.StatusServiceUnavailable)
		})
	case g == nil:
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "this dispatcher serves no fleet git store (git_store.dir)", http.StatusNotFound)
		})
	}
	return g
}

func (g *GitStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, gitStoreRoute)
	if rest == "token" && r.Method == http.MethodPost {
		g.mint(w, r)
		return
	}
	treeText, op, _ := strings.Cut(rest, "/")
	tree, err := uuid.Parse(treeText)
	if err != nil {
		http.Error(w, "not a fleet git store route: /git/token, or /git/<tree id>/{refs,push,fetch}", http.StatusNotFound)
		return
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || gitstore.Verify([]byte(g.cfg.Key), tree, tok, time.Now()) != nil {
		http.Error(w, gitstore.ErrToken.Error(), http.StatusUnauthorized)
		return
	}
	switch {
	case op == "refs" && r.Method == http.MethodGet:
		g.refs(w, r, tree)
	case op == "push" && r.Method == http.MethodPost:
		g.push(w, r, tree)
	case op == "fetch" && r.Method == http.MethodGet:
		g.fetch(w, r, tree)
	default:
		http.Error(w, "unknown fleet git store operation: GET refs, POST push, GET fetch", http.StatusNotFound)
	}
}

// mint answers POST /git/token: the workers' credential, and a task of the
// tree named.
func (g *GitStore) mint(w http.ResponseWriter, r *http.Request) {
	cred, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if subtle.ConstantTimeCompare([]byte(cred), []byte(g.cfg.WorkerToken)) != 1 {
		http.Error(w, "the workers' git store credential is missing or wrong (worker git_store.token)", http.StatusUnauthorized)
		return
	}
	var req gitstore.TokenRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&req); err != nil {
		http.Error(w, "body: want {\"tree\": <uuid>, \"task\": <uuid>}: "+err.Error(), http.StatusBadRequest)
		return
	}
	t, err := g.st.GetTask(r.Context(), store.GetTaskParams{ID: req.Task})
	if err != nil || (t.RootID != req.Tree && t.ID != req.Tree) {
		http.Error(w, fmt.Sprintf("task %s is not a task of tree %s", req.Task, req.Tree), http.StatusForbidden)
		return
	}
	now := time.Now()
	writeJSON(w, http.StatusOK, gitstore.TokenResponse{Token: gitstore.Mint([]byte(g.cfg.Key), req.Tree, now, g.cfg.TokenTTL),
		ExpiresAt: now.Add(g.cfg.TokenTTL)})
}

// create makes tree's repository when it is missing: made aside, then
// renamed into place, so no one sees half a repository.
func (g *GitStore) create(ctx context.Context, tree uuid.UUID) error {
	dir := filepath.Join(g.cfg.Dir, repoName(tree))
	tmp := dir + initInfix + randHex()
	if _, err := git(ctx, "", nil, "init", "-q", "--bare", tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		_ = os.RemoveAll(tmp)
		if _, serr := os.Lstat(dir); serr != nil { // not another's made meanwhile
			return err
		}
	}
	return nil
}

func (g *GitStore) refs(w http.ResponseWriter, r *http.Request, tree uuid.UUID) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	l, err := g.open(r.Context(), tree, false)
	if err != nil {
		g.fail(w, err)
		return
	}
	if l == nil {
		return // nothing pushed yet, or released: no refs, and no repository made for a look
	}
	defer l.release()
	out, err := git(r.Context(), l.dir, nil, "for-each-ref", "--format=%(objectname) %(refname)", "refs/agentfleet/")
	if err != nil {
		g.fail(w, err)
		return
	}
	var b strings.Builder
	for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		if id, name, ok := strings.Cut(line, " refs/agentfleet/"); ok && gitstore.CheckRef(name) == nil {
			fmt.Fprintf(&b, "%s %s\n", id, name)
		}
	}
	_, _ = io.WriteString(w, b.String())
}

// push stores the bundle of the body as the ref asked for. The bundle's
// objects are checked (transfer.fsckObjects) as a push's would be.
func (g *GitStore) push(w http.ResponseWriter, r *http.Request, tree uuid.UUID) {
	ref := r.URL.Query().Get("ref")
	if err := gitstore.CheckRef(ref); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	l, err := g.open(r.Context(), tree, true)
	if err != nil {
		g.fail(w, err)
		return
	}
	defer l.release()
	dir := l.dir
	f, err := os.CreateTemp(dir, "push-*.bundle")
	if err != nil {
		g.fail(w, err)
		return
	}
	defer func() { _ = f.Close(); _ = os.Remove(f.Name()) }()
	n, err := io.Copy(f, io.LimitReader(r.Body, g.cfg.MaxBundleBytes+1))
	if err != nil {
		http.Error(w, "reading the bundle: "+err.Error(), http.StatusBadRequest)
		return
	}
	if n > g.cfg.MaxBundleBytes {
		http.Error(w, fmt.Sprintf("the bundle is over %d bytes (git_store.max_bundle_bytes)", g.cfg.MaxBundleBytes), http.StatusRequestEntityTooLarge)
		return
	}
	if _, err := git(r.Context(), dir, nil, "-c", "transfer.fsckObjects=true", "fetch", "-q", "--no-tags", "--no-write-fetch-head",
		f.Name(), "+refs/agentfleet/out:refs/agentfleet/"+ref); err != nil {
		http.Error(w, "the bundle was refused: "+err.Error(), http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// fetch sends a bundle of want, thin against have when the store has it.
func (g *GitStore) fetch(w http.ResponseWriter, r *http.Request, tree uuid.UUID) {
	want, have := r.URL.Query().Get("want"), r.URL.Query().Get("have")
	if !gitstore.IsCommitID(want) || have != "" && !gitstore.IsCommitID(have) {
		http.Error(w, "want (and have, if given) must be full commit ids", http.StatusBadRequest)
		return
	}
	ctx := r.Context()
	l, err := g.open(ctx, tree, false)
	if err != nil {
		g.fail(w, err)
		return
	}
	if l == nil {
		http.Error(w, "the fleet git store has no repository for tree "+tree.String()+
			" (nothing pushed, or released once the tree ended): start from the task's branch or a fresh clone", http.StatusNotFound)
		return
	}
	defer l.release()
	dir := l.dir
	if _, err := git(ctx, dir, nil, "cat-file", "-e", want+"^{commit}"); err != nil {
		http.Error(w, "the fleet git store of this tree has no commit "+want, http.StatusNotFound)
		return
	}
	// A bundle names refs: want gets a ref of its own for the while.
	tmp := "refs/agentfleet-tmp/" + randHex()
	if _, err := git(ctx, dir, nil, "update-ref", tmp, want); err != nil {
		g.fail(w, err)
		return
	}
	defer func() { _, _ = git(context.WithoutCancel(ctx), dir, nil, "update-ref", "-d", tmp) }()
	args := []string{"bundle", "create", "-q", "-", tmp}
	if have != "" && have != want {
		if _, err := git(ctx, dir, nil, "cat-file", "-e", have+"^{commit}"); err == nil {
			args = append(args, "^"+have)
		}
	}
	var out bytes.Buffer
	if _, err := git(ctx, dir, &out, args...); err != nil {
		g.fail(w, err)
		return
	}
	// The bundle's ref is renamed for the client: refs/agentfleet/out.
	body := bytes.Replace(out.Bytes(), []byte(" "+tmp+"\n"), []byte(" refs/agentfleet/out\n"), 1)
	w.Header().Set("Content-Type", "application/x-git-bundle")
	_, _ = w.Write(body)
}

func (g *GitStore) fail(w http.ResponseWriter, err error) {
	g.log.Warn("fleet git store", "err", err)
	http.Error(w, "the fleet git store failed: "+err.Error(), http.StatusInternalServerError)
}

// git runs git in dir (a store repository: the dispatcher's own, so its
// config is trusted) with hooks off; stdout goes to out when set, else it
// is returned.
func git(ctx context.Context, dir string, out io.Writer, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, gitStoreTimeout)
	defer cancel()
	full := []string{"-c", "core.hooksPath=/dev/null", "-c", "gc.auto=0"}
	if dir != "" {
		full = append(full, "--git-dir="+dir)
	}
	cmd := exec.CommandContext(ctx, "git", append(full, args...)...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if out != nil {
		cmd.Stdout = out
	}
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

func randHex() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
