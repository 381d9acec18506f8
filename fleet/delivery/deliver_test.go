package delivery_test

import (
	"context"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/execenv/sshtest"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/delivery"
	"github.com/agentfleet/agentfleet/store"
)

// TestDeliverRetriedSafely: delivering again (a redelivered task, in the
// same workspace or a fresh clone that redid the same work) pushes nothing
// and opens no second pull request; a fresh clone with different work
// replaces the task's own earlier commit.
func TestDeliverRetriedSafely(t *testing.T) {
	bare := newOrigin(t)
	gh := newGitHubFake(t)
	c := creds{tokens: map[string]delivery.Token{"gh": {TokenFile: tokenFile(t, "ghp_test"), Forge: "github", APIURL: gh.srv.URL}}}
	spec := fleet.Delivery{Credentials: fleet.DeliveryCredentials{Token: "gh"},
		PullRequest: &fleet.PullRequest{Repo: "octo/hello", Labels: nil}}
	st, id := taskStore(t)
	ctx := context.Background()

	dir := workspace(t, bare, map[string]string{"README": "hello, world\n"})
	first := deliverOnce(ctx, request(dir, bare, id, spec, c, st))
	if first.Error != "" || !first.Pushed || first.RequestNumber != 1 || first.Branch != "agentfleet/"+id.String() {
		t.Fatalf("first delivery %+v", first)
	}
	if got := git(t, bare, "rev-parse", "refs/heads/"+first.Branch); got != first.Commit {
		t.Fatalf("origin's branch at %s, the result says %s", got, first.Commit)
	}
	msg := git(t, bare, "log", "-1", "--format=%an <%ae>%n%B", first.Commit)
	if !strings.Contains(msg, "agentfleet <agentfleet@localhost>") || !strings.Contains(msg, "Fix the greeting") ||
		!strings.Contains(msg, "Agentfleet-Task: "+id.String()) {
		t.Errorf("commit message:\n%s", msg)
	}
	if pulls, _ := gh.created(); pulls[0]["base"] != "main" || pulls[0]["title"] != "Fix the greeting" || !strings.Contains(pulls[0]["body"].(string), id.String()) {
		t.Errorf("pull request %+v: want base main, the answer's first line as title, the task in the body", pulls[0])
	}

	again := deliverOnce(ctx, request(dir, bare, id, spec, c, st))
	redo := deliverOnce(ctx, request(workspace(t, bare, map[string]string{"README": "hello, world\n"}), bare, id, spec, c, st))
	for _, r := range []fleet.DeliveryResult{again, redo} {
		if r != first {
			t.Errorf("a repeated delivery gave %+v, want %+v", r, first)
		}
	}
	if _, posts := gh.created(); pushes(t, bare) != 1 || posts != 1 {
		t.Fatalf("%d pushes and %d pull requests created, want 1 and 1", pushes(t, bare), posts)
	}

	other := deliverOnce(ctx, request(workspace(t, bare, map[string]string{"README": "hello, there\n"}), bare, id, spec, c, st))
	if other.Error != "" || other.Commit == first.Commit || other.RequestNumber != 1 {
		t.Fatalf("delivery of different work %+v: want the task's own branch replaced, the same request", other)
	}
	if _, posts := gh.created(); pushes(t, bare) != 2 || posts != 1 {
		t.Errorf("%d pushes and %d pull requests created, want 2 and 1", pushes(t, bare), posts)
	}
}

// TestDeliverOverSSH pushes to a bare repository over a real OpenSSH sshd
// with the key an ssh_key reference names.
func TestDeliverOverSSH(t *testing.T) {
	srv := sshtest.Start(t)
	bare := newOrigin(t)
	remote := "ssh://" + srv.User + "@" + srv.Addr() + bare
	dir := workspace(t, bare, map[string]string{"new.txt": "over ssh\n"})
	st, id := taskStore(t)
	c := creds{keys: map[string]delivery.SSHKey{"deploy": {KeyFile: srv.KeyFile, KnownHostsFile: srv.KnownHostsFile,
		Scope: fleet.DeliveryScope{Branches: []string{"fix/*"}}}}} // a key that may push fix/ branches
	spec := fleet.Delivery{Remote: remote, Branch: "fix/{short_id}", Credentials: fleet.DeliveryCredentials{SSHKey: "deploy"}}
	res := deliverOnce(context.Background(), request(dir, bare, id, spec, c, st))
	if res.Error != "" || !res.Pushed || res.Branch != "fix/"+id.String()[:8] || res.Remote != remote {
		t.Fatalf("delivery %+v", res)
	}
	if got := git(t, bare, "show", res.Branch+":new.txt"); got != "over ssh" {
		t.Errorf("pushed file = %q", got)
	}
	// Without the key, sshd refuses: the error is ssh's and git's.
	spec.Credentials = fleet.DeliveryCredentials{}
	spec.Branch = "agentfleet/other"
	res = deliverOnce(context.Background(), request(dir, bare, id, spec, creds{}, st))
	if res.Pushed || !strings.Contains(res.Error, "git ls-remote") {
		t.Errorf("delivery without the key %+v, want git's refusal", res)
	}
}

// TestDeliverOverSmartHTTP pushes over smart HTTP served by git
// http-backend (CGI) that wants the token in basic auth.
func TestDeliverOverSmartHTTP(t *testing.T) {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bare := newOrigin(t)
	git(t, bare, "config", "http.receivepack", "true")
	backend := &cgi.Handler{Path: gitPath, Args: []string{"http-backend"}, Root: "/git",
		Env: []string{"GIT_PROJECT_ROOT=" + filepath.Dir(bare), "GIT_HTTP_EXPORT_ALL=1"}}
	var sawToken atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || user != "x-access-token" || pass != "s3cret" {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		sawToken.Store(true)
		backend.ServeHTTP(w, r)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	remote := srv.URL + "/git/origin.git"
	dir := workspace(t, bare, map[string]string{"new.txt": "over http\n"})
	st, id := taskStore(t)
	c := creds{tokens: map[string]delivery.Token{
		"forge":     {TokenFile: tokenFile(t, "s3cret"), Forge: "gitea", APIURL: "http://" + host + "/api/v1"},
		"elsewhere": {TokenFile: tokenFile(t, "s3cret"), Forge: "gitea", APIURL: "http://forge.invalid/api/v1"}}}
	spec := fleet.Delivery{Remote: remote, Credentials: fleet.DeliveryCredentials{Token: "forge"}}
	res := deliverOnce(context.Background(), request(dir, bare, id, spec, c, st))
	if res.Error != "" || !res.Pushed || !sawToken.Load() {
		t.Fatalf("delivery %+v (token seen: %v)", res, sawToken.Load())
	}
	if got := git(t, bare, "show", res.Branch+":new.txt"); got != "over http" {
		t.Errorf("pushed file = %q", got)
	}
	// A token is never sent to a host its configuration does not list.
	spec.Credentials.Token, spec.Branch = "elsewhere", "agentfleet/x"
	res = deliverOnce(context.Background(), request(dir, bare, id, spec, c, st))
	if res.Pushed || !strings.Contains(res.Error, `token "elsewhere" may not be sent to `+host) {
		t.Errorf("delivery with a token for another host %+v", res)
	}
	// Without a token the server refuses, and git says so.
	spec.Credentials.Token = ""
	res = deliverOnce(context.Background(), request(dir, bare, id, spec, c, st))
	if res.Pushed || !strings.Contains(res.Error, "Authentication failed") && !strings.Contains(res.Error, "could not read Username") {
		t.Errorf("delivery without a token %+v, want git's authentication error", res)
	}
}

// TestPushRejected: the branch holds someone else's commit; the push is
// refused as not a fast-forward, with git's message, and the commit is
// kept as an artifact.
func TestPushRejected(t *testing.T) {
	bare := newOrigin(t)
	theirs := workspace(t, bare, map[string]string{"theirs.txt": "theirs\n"})
	git(t, theirs, "add", ".")
	git(t, theirs, "commit", "--quiet", "-m", "someone else")
	git(t, theirs, "push", "--quiet", "origin", "HEAD:refs/heads/agentfleet/taken")
	st, id := taskStore(t)
	dir := workspace(t, bare, map[string]string{"mine.txt": "mine\n"})
	res := deliverOnce(context.Background(), request(dir, bare, id, fleet.Delivery{Branch: "agentfleet/taken"}, creds{}, st))
	if res.Pushed || res.Commit == "" || !strings.Contains(res.Error, "rejected") {
		t.Fatalf("delivery %+v, want git's rejection", res)
	}
	a, err := st.GetArtifact(context.Background(), store.GetArtifactParams{TaskID: id, Kind: delivery.ArtifactKind})
	if err != nil || !strings.Contains(string(a.Content), "mine.txt") || !strings.Contains(string(a.Content), "Subject: [PATCH] Fix the greeting") {
		t.Errorf("commit artifact %q, %v", a.Content, err)
	}
}

// TestForgeRefuses: the push succeeds, the forge answers 422; the error is
// the forge's and the branch stays pushed.
func TestForgeRefuses(t *testing.T) {
	bare := newOrigin(t)
	gh := newGitHubFake(t)
	gh.status = 422
	c := creds{tokens: map[string]delivery.Token{
		"gh":  {TokenFile: tokenFile(t, "ghp_test"), Forge: "github", APIURL: gh.srv.URL},
		"bad": {TokenFile: tokenFile(t, "wrong"), Forge: "github", APIURL: gh.srv.URL}}}
	st, id := taskStore(t)
	spec := fleet.Delivery{Credentials: fleet.DeliveryCredentials{Token: "gh"}, PullRequest: &fleet.PullRequest{Repo: "octo/hello"}}
	res, temporary := delivery.Deliver(context.Background(), request(workspace(t, bare, map[string]string{"a": "b"}), bare, id, spec, c, st))
	if !res.Pushed || res.RequestURL != "" || !strings.Contains(res.Error, "422") || !strings.Contains(res.Error, "No commits between") || temporary {
		t.Errorf("delivery %+v (temporary %v), want pushed and the forge's 422, for good", res, temporary)
	}
	spec.Credentials.Token, spec.Branch = "bad", "agentfleet/other"
	res = deliverOnce(context.Background(), request(workspace(t, bare, map[string]string{"a": "c"}), bare, id, spec, c, st))
	if !res.Pushed || !strings.Contains(res.Error, "401") || !strings.Contains(res.Error, "Bad credentials") {
		t.Errorf("delivery %+v, want the forge's 401", res)
	}
}

// TestDeliverNothingOrUnknown: no changes deliver nothing; an unknown
// reference is named.
func TestDeliverNothingOrUnknown(t *testing.T) {
	bare := newOrigin(t)
	st, id := taskStore(t)
	res := deliverOnce(context.Background(), request(workspace(t, bare, nil), bare, id, fleet.Delivery{}, creds{}, st))
	if res.Error != "" || res.Pushed || res.Skipped == "" {
		t.Errorf("delivery without changes %+v", res)
	}
	spec := fleet.Delivery{Credentials: fleet.DeliveryCredentials{Token: "nope"}}
	err := delivery.CheckCredentials(spec, creds{})
	if err == nil || !strings.Contains(err.Error(), `delivery.credentials.token "nope" is not configured`) {
		t.Errorf("CheckCredentials = %v", err)
	}
	res = deliverOnce(context.Background(), request(workspace(t, bare, map[string]string{"a": "b"}), bare, uuid.New(), spec, creds{}, st))
	if res.Pushed || !strings.Contains(res.Error, "not configured") {
		t.Errorf("delivery with an unknown reference %+v", res)
	}
}

// TestDeliverIgnoresWorkspaceGitConfig: what the agent writes into the
// workspace's .git (a config that runs programs, hooks) never runs on the
// worker during a delivery.
func TestDeliverIgnoresWorkspaceGitConfig(t *testing.T) {
	bare := newOrigin(t)
	dir := workspace(t, bare, map[string]string{"README": "changed\n"})
	marker := filepath.Join(t.TempDir(), "ran")
	run := "touch " + marker + "; false"
	git(t, dir, "config", "core.fsmonitor", run)
	git(t, dir, "config", "core.sshCommand", run)
	git(t, dir, "config", "filter.evil.clean", run)
	if err := os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte("* filter=evil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, hook := range []string{"pre-push", "pre-commit", "post-commit", "reference-transaction"} {
		if err := os.WriteFile(filepath.Join(dir, ".git", "hooks", hook), []byte("#!/bin/sh\n"+run+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	st, id := taskStore(t)
	res := deliverOnce(context.Background(), request(dir, bare, id, fleet.Delivery{}, creds{}, st))
	if res.Error != "" || !res.Pushed {
		t.Fatalf("delivery %+v", res)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a program from the workspace's .git ran during the delivery")
	}
	if got := git(t, bare, "show", res.Branch+":README"); got != "changed" {
		t.Errorf("pushed README = %q", got)
	}
}
