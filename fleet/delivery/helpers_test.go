package delivery_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/delivery"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/store"
)

// created is the creation time the tests give their tasks.
var created = time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)

// git runs git in dir with a test identity and fails the test on error.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=test", "-c", "user.email=test@example.invalid",
		"-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// newOrigin makes a bare repository whose main branch has one commit, with
// a post-receive hook that counts pushes into <bare>/pushes.
func newOrigin(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	bare := filepath.Join(root, "origin.git")
	git(t, root, "init", "--quiet", "--bare", bare)
	git(t, bare, "symbolic-ref", "HEAD", "refs/heads/main")
	hook := "#!/bin/sh\necho push >> \"$(pwd)/pushes\"\n"
	if err := os.WriteFile(filepath.Join(bare, "hooks", "post-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	seed := filepath.Join(root, "seed")
	git(t, root, "init", "--quiet", seed)
	if err := os.WriteFile(filepath.Join(seed, "README"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, seed, "add", "README")
	git(t, seed, "commit", "--quiet", "-m", "first")
	git(t, seed, "push", "--quiet", bare, "HEAD:refs/heads/main")
	_ = os.Remove(filepath.Join(bare, "pushes"))
	return bare
}

// pushes counts the pushes a bare repository received.
func pushes(t testing.TB, bare string) int {
	b, err := os.ReadFile(filepath.Join(bare, "pushes"))
	if os.IsNotExist(err) {
		return 0
	} else if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "push")
}

// workspace clones url into a fresh directory and writes files there, as
// an agent would.
func workspace(t testing.TB, url string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ws")
	git(t, "", "clone", "--quiet", url, dir)
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// creds is a worker's configuration of references.
type creds struct {
	keys   map[string]delivery.SSHKey
	tokens map[string]delivery.Token
}

func (c creds) SSHKey(ref string) (delivery.SSHKey, bool) { k, ok := c.keys[ref]; return k, ok }
func (c creds) Token(ref string) (delivery.Token, bool)   { k, ok := c.tokens[ref]; return k, ok }

// tokenFile writes a token and returns its file.
func tokenFile(t testing.TB, token string) string {
	p := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(p, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// taskStore is a SQLite store with one task, for the artifacts.
func taskStore(t testing.TB) (store.Store, uuid.UUID) {
	st := fleettest.SQLiteStore(t)
	res, err := st.CreateTask(context.Background(), store.CreateTaskParams{Spec: json.RawMessage(`{"prompt":"p"}`)})
	if err != nil {
		t.Fatal(err)
	}
	return st, res.Task.ID
}

// deliverOnce delivers and returns the result, whether or not an error
// was temporary.
func deliverOnce(ctx context.Context, req delivery.Request) fleet.DeliveryResult {
	res, _ := delivery.Deliver(ctx, req)
	return res
}

func request(dir, repo string, id uuid.UUID, spec fleet.Delivery, c delivery.Credentials, st delivery.Artifacts) delivery.Request {
	return delivery.Request{Dir: dir, TaskID: id, Created: created, Spec: spec, Repo: repo, Answer: "Fix the greeting\n\nIt said hello.",
		Creds: c, Store: st, AllowPrivate: loopback}
}

// loopback lets the tests' forges on 127.0.0.1 be reached.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// githubFake is a stateful GitHub pulls API: it lists what it opened and
// counts the pulls created; it refuses requests without the bearer token
// and answers Status instead when set.
type githubFake struct {
	t      testing.TB
	mu     sync.Mutex
	pulls  []map[string]any
	posts  int
	status int // when non-zero, every POST /pulls answers it
	// unavailable is how many POST /pulls answer 503 first.
	unavailable int
	srv         *httptest.Server
}

func newGitHubFake(t testing.TB) *githubFake {
	g := &githubFake{t: t}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.srv.Close)
	return g
}

// created returns the pulls opened and how many creations were asked for.
func (g *githubFake) created() ([]map[string]any, int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]map[string]any(nil), g.pulls...), g.posts
}

func (g *githubFake) serve(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Authorization") != "Bearer ghp_test" {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"message":"Bad credentials"}`))
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/repos/octo/hello/pulls":
		var open []map[string]any
		for _, p := range g.pulls {
			if "octo:"+p["head"].(string) == r.URL.Query().Get("head") {
				open = append(open, p)
			}
		}
		_ = json.NewEncoder(w).Encode(append([]map[string]any{}, open...))
	case r.Method == http.MethodPost && r.URL.Path == "/repos/octo/hello/pulls":
		g.posts++
		if g.unavailable > 0 {
			g.unavailable--
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"message":"Service Unavailable"}`))
			return
		}
		if g.status != 0 {
			w.WriteHeader(g.status)
			_, _ = w.Write([]byte(`{"message":"Validation Failed","errors":[{"resource":"PullRequest","code":"custom","message":"No commits between main and the branch"}]}`))
			return
		}
		var in map[string]any
		_ = json.NewDecoder(r.Body).Decode(&in)
		n := len(g.pulls) + 1
		p := map[string]any{"number": n, "html_url": g.srv.URL + "/octo/hello/pull/" + string(rune('0'+n)), "head": in["head"],
			"base": in["base"], "title": in["title"], "body": in["body"]}
		g.pulls = append(g.pulls, p)
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(p)
	default:
		g.t.Errorf("github fake: unexpected %s %s", r.Method, r.URL)
		w.WriteHeader(http.StatusNotFound)
	}
}
