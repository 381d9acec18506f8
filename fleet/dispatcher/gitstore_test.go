package dispatcher_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/internal/gitstore"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/store"
)

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestGitStore: the workers' credential mints a token for a task's tree
// only; a token opens its tree only; a pushed bundle becomes the ref asked
// for, and a fetch thin against a commit the client has brings the rest.
func TestGitStore(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		testenv.SkipOrFatal(t, "git is not installed")
	}
	ctx := context.Background()
	st := fleettest.SQLiteStore(t)
	root, err := st.CreateTask(ctx, store.CreateTaskParams{Queue: "default", Spec: []byte(`{"prompt":"p"}`)})
	if err != nil {
		t.Fatal(err)
	}
	tree := root.Task.ID
	g, err := dispatcher.NewGitStore(dispatcher.GitStoreConfig{Dir: t.TempDir(), Key: "sixteen bytes or more", WorkerToken: "cred"}, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)

	// The credential, and a task of the tree, are required.
	for _, c := range []struct {
		cred string
		tree uuid.UUID
		want string
	}{{"wrong", tree, "401"}, {"cred", uuid.New(), "403"}} {
		bad := &gitstore.Client{URL: srv.URL, Credential: c.cred, HTTP: srv.Client()}
		if _, err := bad.Refs(ctx, c.tree, tree); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("credential %q for tree %s: %v, want %s", c.cred, c.tree, err, c.want)
		}
	}
	// A token of another tree opens nothing here.
	other := gitstore.Mint([]byte("sixteen bytes or more"), uuid.New(), time.Now(), time.Minute)
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/git/"+tree.String()+"/refs", nil)
	req.Header.Set("Authorization", "Bearer "+other)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("another tree's token: %s", resp.Status)
	}

	c := &gitstore.Client{URL: srv.URL, Credential: "cred", HTTP: srv.Client()}
	src := t.TempDir()
	gitIn(t, src, "init", "-q")
	if err := os.WriteFile(filepath.Join(src, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, src, "add", ".")
	gitIn(t, src, "commit", "-qm", "one")
	first := gitIn(t, src, "rev-parse", "HEAD")
	if err := os.WriteFile(filepath.Join(src, "b.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, src, "add", ".")
	gitIn(t, src, "commit", "-qm", "two")
	second := gitIn(t, src, "rev-parse", "HEAD")
	gitIn(t, src, "update-ref", "refs/agentfleet/out", second)
	bundle := filepath.Join(t.TempDir(), "out.bundle")
	gitIn(t, src, "bundle", "create", "-q", bundle, "refs/agentfleet/out")
	body, err := os.ReadFile(bundle)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Push(ctx, tree, tree, "nonsense", bytes.NewReader(body)); err == nil {
		t.Fatal("a ref the store does not keep was accepted")
	}
	ref := gitstore.StateRef(tree)
	if err := c.Push(ctx, tree, tree, ref, bytes.NewReader(body)); err != nil {
		t.Fatal(err)
	}
	refs, err := c.Refs(ctx, tree, tree)
	if err != nil || refs[ref] != second {
		t.Fatalf("refs %v (%v), want %s at %s", refs, err, ref, second)
	}

	// A clone holding the first commit fetches the second, thin.
	dst := t.TempDir()
	gitIn(t, dst, "init", "-q")
	gitIn(t, dst, "fetch", "-q", src, first)
	var thin bytes.Buffer
	if err := c.Fetch(ctx, tree, tree, second, first, &thin); err != nil {
		t.Fatal(err)
	}
	var whole bytes.Buffer
	if err := c.Fetch(ctx, tree, tree, second, "", &whole); err != nil {
		t.Fatal(err)
	}
	if thin.Len() >= whole.Len() {
		t.Fatalf("the thin bundle (%d bytes) is not smaller than the whole one (%d)", thin.Len(), whole.Len())
	}
	in := filepath.Join(t.TempDir(), "in.bundle")
	if err := os.WriteFile(in, thin.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dst, "bundle", "unbundle", in)
	if got := gitIn(t, dst, "show", second+":b.txt"); got != "b" {
		t.Fatalf("b.txt of the fetched commit: %q", got)
	}
	if err := c.Fetch(ctx, tree, tree, strings.Repeat("0", 40), "", &whole); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("fetching a commit the store lacks: %v", err)
	}
}

// TestTreeTokens: a token opens its tree until it expires.
func TestTreeTokens(t *testing.T) {
	t.Parallel()
	key, tree, now := []byte("k"), uuid.New(), time.Now()
	tok := gitstore.Mint(key, tree, now, time.Minute)
	if err := gitstore.Verify(key, tree, tok, now.Add(59*time.Second)); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"expired":     gitstore.Verify(key, tree, tok, now.Add(2*time.Minute)),
		"other tree":  gitstore.Verify(key, uuid.New(), tok, now),
		"other key":   gitstore.Verify([]byte("j"), tree, tok, now),
		"tampered":    gitstore.Verify(key, tree, strings.Replace(tok, ".", ".9", 1), now),
		"not a token": gitstore.Verify(key, tree, "x", now),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
