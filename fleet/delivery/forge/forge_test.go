package forge_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentfleet/agentfleet/fleet/delivery/forge"
)

// exchange is one request a forge's documentation says an adapter sends
// (method, path with query, headers, JSON body) and the documented answer.
type exchange struct {
	method, path string // path includes the query, in its encoded form
	header       map[string]string
	body         string // JSON, compared as values; "" = no body
	status       int
	answer       string
}

// docServer answers the exchanges in order and fails the test on any
// request that is not the next one the documentation describes.
type docServer struct {
	t    *testing.T
	mu   sync.Mutex
	want []exchange
	n    int
	srv  *httptest.Server
}

func newDocServer(t *testing.T, want ...exchange) *docServer {
	d := &docServer{t: t, want: want}
	d.srv = httptest.NewServer(http.HandlerFunc(d.serve))
	t.Cleanup(func() {
		d.srv.Close()
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.n != len(d.want) {
			t.Errorf("%d of %d documented requests were made", d.n, len(d.want))
		}
	})
	return d
}

func (d *docServer) serve(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.n >= len(d.want) {
		d.t.Errorf("unexpected request %s %s", r.Method, r.URL.RequestURI())
		http.Error(w, "unexpected", http.StatusTeapot)
		return
	}
	x := d.want[d.n]
	d.n++
	if r.Method != x.method || r.URL.RequestURI() != x.path {
		d.t.Errorf("request %d = %s %s, want %s %s", d.n, r.Method, r.URL.RequestURI(), x.method, x.path)
	}
	for k, v := range x.header {
		if got := r.Header.Get(k); got != v {
			d.t.Errorf("%s %s: header %s = %q, want %q", x.method, x.path, k, got, v)
		}
	}
	if r.Header.Get("User-Agent") == "" {
		d.t.Errorf("%s %s: no User-Agent (GitHub refuses requests without one)", x.method, x.path)
	}
	raw, _ := io.ReadAll(r.Body)
	switch {
	case x.body == "" && len(raw) > 0:
		d.t.Errorf("%s %s: unexpected body %s", x.method, x.path, raw)
	case x.body != "":
		if r.Header.Get("Content-Type") != "application/json" {
			d.t.Errorf("%s %s: Content-Type %q", x.method, x.path, r.Header.Get("Content-Type"))
		}
		var got, want any
		if err := json.Unmarshal(raw, &got); err != nil {
			d.t.Errorf("%s %s: body %q is not JSON: %v", x.method, x.path, raw, err)
		}
		_ = json.Unmarshal([]byte(x.body), &want)
		if !reflect.DeepEqual(got, want) {
			d.t.Errorf("%s %s: body\n%s\nwant\n%s", x.method, x.path, raw, x.body)
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(x.status)
	_, _ = io.WriteString(w, x.answer)
}

var githubHeaders = map[string]string{"Authorization": "Bearer ghp_test", "Accept": "application/vnd.github+json",
	"X-GitHub-Api-Version": "2022-11-28"}

// TestGitHubOpensPullWithLabels follows docs.github.com/rest/pulls/pulls
// (list with head=owner:branch, create) and rest/issues/labels (add).
func TestGitHubOpensPullWithLabels(t *testing.T) {
	d := newDocServer(t,
		exchange{method: "GET", path: "/repos/octo/hello/pulls?head=octo%3Aagentfleet%2Fx&state=open", header: githubHeaders,
			status: 200, answer: `[]`},
		exchange{method: "POST", path: "/repos/octo/hello/pulls", header: githubHeaders,
			body:   `{"title":"Fix it","head":"agentfleet/x","base":"main","body":"the body","draft":true}`,
			status: 201, answer: `{"id":1,"number":1347,"state":"open","html_url":"https://github.com/octo/hello/pull/1347","draft":true}`},
		exchange{method: "POST", path: "/repos/octo/hello/issues/1347/labels", header: githubHeaders,
			body: `{"labels":["bug","bot"]}`, status: 200, answer: `[{"id":1,"name":"bug"},{"id":2,"name":"bot"}]`},
	)
	f := mustForge(t, forge.KindGitHub, d.srv.URL, "ghp_test")
	ctx := context.Background()
	if _, ok, err := f.Find(ctx, "octo/hello", "agentfleet/x"); err != nil || ok {
		t.Fatalf("Find = %v, %v; want none", ok, err)
	}
	r, err := f.Open(ctx, "octo/hello", forge.NewRequest{Head: "agentfleet/x", Base: "main", Title: "Fix it", Body: "the body",
		Labels: []string{"bug", "bot"}, Draft: true})
	if err != nil || r.Number != 1347 || r.URL != "https://github.com/octo/hello/pull/1347" {
		t.Fatalf("Open = %+v, %v", r, err)
	}
}

// TestGitHubFindsOpenPull: an open pull from the branch is found.
func TestGitHubFindsOpenPull(t *testing.T) {
	d := newDocServer(t, exchange{method: "GET", path: "/repos/octo/hello/pulls?head=octo%3Ab&state=open", header: githubHeaders,
		status: 200, answer: `[{"number":7,"html_url":"https://github.com/octo/hello/pull/7","head":{"ref":"b"}}]`})
	r, ok, err := mustForge(t, forge.KindGitHub, d.srv.URL, "ghp_test").Find(context.Background(), "octo/hello", "b")
	if err != nil || !ok || r.Number != 7 {
		t.Fatalf("Find = %+v, %v, %v", r, ok, err)
	}
}

// TestGitHubErrors: 401 and 422 come back with the status and GitHub's
// message (and its validation errors).
func TestGitHubErrors(t *testing.T) {
	d := newDocServer(t,
		exchange{method: "GET", path: "/repos/octo/hello/pulls?head=octo%3Ab&state=open", header: githubHeaders,
			status: 401, answer: `{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest","status":"401"}`},
		exchange{method: "POST", path: "/repos/octo/hello/pulls", header: githubHeaders,
			body:   `{"title":"t","head":"b","base":"nope","body":"","draft":false}`,
			status: 422, answer: `{"message":"Validation Failed","errors":[{"resource":"PullRequest","field":"base","code":"invalid"}],"documentation_url":"https://docs.github.com/rest/pulls/pulls#create-a-pull-request","status":"422"}`},
	)
	f := mustForge(t, forge.KindGitHub, d.srv.URL, "ghp_test")
	_, _, err := f.Find(context.Background(), "octo/hello", "b")
	if forge.StatusOf(err) != 401 || !strings.Contains(err.Error(), "Bad credentials") {
		t.Errorf("Find error %v, want 401 Bad credentials", err)
	}
	_, err = f.Open(context.Background(), "octo/hello", forge.NewRequest{Head: "b", Base: "nope", Title: "t"})
	if forge.StatusOf(err) != 422 || !strings.Contains(err.Error(), "Validation Failed; base invalid") {
		t.Errorf("Open error %v, want 422 naming the base", err)
	}
}

var gitlabHeaders = map[string]string{"PRIVATE-TOKEN": "glpat-test"}

// TestGitLabOpensMergeRequest follows docs.gitlab.com/api/merge_requests:
// the project by its URL-encoded path, labels comma-separated, a draft
// by its title.
func TestGitLabOpensMergeRequest(t *testing.T) {
	d := newDocServer(t,
		exchange{method: "GET", path: "/api/v4/projects/group%2Fsub%2Fproj/merge_requests?source_branch=agentfleet%2Fx&state=opened",
			header: gitlabHeaders, status: 200, answer: `[]`},
		exchange{method: "POST", path: "/api/v4/projects/group%2Fsub%2Fproj/merge_requests", header: gitlabHeaders,
			body:   `{"source_branch":"agentfleet/x","target_branch":"main","title":"Draft: Fix it","description":"the body","labels":"bug,bot"}`,
			status: 201, answer: `{"id":84,"iid":12,"project_id":3,"title":"Draft: Fix it","state":"opened","draft":true,"web_url":"https://gitlab.example/group/sub/proj/-/merge_requests/12"}`},
		exchange{method: "GET", path: "/api/v4/projects/group%2Fsub%2Fproj/merge_requests?source_branch=agentfleet%2Fx&state=opened",
			header: gitlabHeaders, status: 200, answer: `[{"id":84,"iid":12,"web_url":"https://gitlab.example/group/sub/proj/-/merge_requests/12"}]`},
		exchange{method: "POST", path: "/api/v4/projects/group%2Fsub%2Fproj/merge_requests", header: gitlabHeaders,
			body:   `{"source_branch":"b","target_branch":"main","title":"t","description":""}`,
			status: 409, answer: `{"message":["Another open merge request already exists for this source branch: !12"]}`},
	)
	f := mustForge(t, forge.KindGitLab, d.srv.URL+"/api/v4", "glpat-test")
	ctx := context.Background()
	if _, ok, err := f.Find(ctx, "group/sub/proj", "agentfleet/x"); err != nil || ok {
		t.Fatalf("Find = %v, %v; want none", ok, err)
	}
	r, err := f.Open(ctx, "group/sub/proj", forge.NewRequest{Head: "agentfleet/x", Base: "main", Title: "Fix it", Body: "the body",
		Labels: []string{"bug", "bot"}, Draft: true})
	if err != nil || r.Number != 12 || !strings.HasSuffix(r.URL, "/merge_requests/12") {
		t.Fatalf("Open = %+v, %v", r, err)
	}
	if r, ok, err := f.Find(ctx, "group/sub/proj", "agentfleet/x"); err != nil || !ok || r.Number != 12 {
		t.Fatalf("Find = %+v, %v, %v", r, ok, err)
	}
	_, err = f.Open(ctx, "group/sub/proj", forge.NewRequest{Head: "b", Base: "main", Title: "t"})
	if forge.StatusOf(err) != 409 || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("Open error %v, want GitLab's 409 message", err)
	}
}

// TestGitLabUnauthorized: GitLab's 401 body is {"message":"401 Unauthorized"}.
func TestGitLabUnauthorized(t *testing.T) {
	d := newDocServer(t, exchange{method: "GET", path: "/api/v4/projects/g%2Fp/merge_requests?source_branch=b&state=opened",
		header: gitlabHeaders, status: 401, answer: `{"message":"401 Unauthorized"}`})
	_, _, err := mustForge(t, forge.KindGitLab, d.srv.URL+"/api/v4", "glpat-test").Find(context.Background(), "g/p", "b")
	if forge.StatusOf(err) != 401 || !strings.Contains(err.Error(), "401 Unauthorized") {
		t.Errorf("error %v", err)
	}
}

var giteaHeaders = map[string]string{"Authorization": "token gt-test"}

// TestGiteaOpensPullWithLabelIDs follows Gitea's API v1: labels by id, a
// draft as a WIP: title.
func TestGiteaOpensPullWithLabelIDs(t *testing.T) {
	d := newDocServer(t,
		exchange{method: "GET", path: "/api/v1/repos/o/r/pulls?limit=50&page=1&state=open", header: giteaHeaders,
			status: 200, answer: `[{"number":3,"html_url":"http://g/o/r/pulls/3","head":{"ref":"other"}}]`},
		exchange{method: "GET", path: "/api/v1/repos/o/r/labels?limit=100", header: giteaHeaders,
			status: 200, answer: `[{"id":5,"name":"bug"},{"id":9,"name":"bot"}]`},
		exchange{method: "POST", path: "/api/v1/repos/o/r/pulls", header: giteaHeaders,
			body:   `{"head":"b","base":"main","title":"WIP: t","body":"x","labels":[9]}`,
			status: 201, answer: `{"id":40,"number":4,"html_url":"http://g/o/r/pulls/4"}`},
	)
	f := mustForge(t, forge.KindGitea, d.srv.URL+"/api/v1", "gt-test")
	if _, ok, err := f.Find(context.Background(), "o/r", "b"); err != nil || ok {
		t.Fatalf("Find = %v, %v; want none (pull 3 is another branch's)", ok, err)
	}
	r, err := f.Open(context.Background(), "o/r", forge.NewRequest{Head: "b", Base: "main", Title: "t", Body: "x", Labels: []string{"bot"}, Draft: true})
	if err != nil || r.Number != 4 {
		t.Fatalf("Open = %+v, %v", r, err)
	}
}

func TestNewRefusesUnknown(t *testing.T) {
	if _, err := forge.New("bitbucket", "http://x", "t", nil); err == nil || !strings.Contains(err.Error(), "unknown") {
		t.Errorf("New(bitbucket) = %v", err)
	}
	if _, err := forge.New(forge.KindGitea, "", "t", nil); err == nil || !strings.Contains(err.Error(), "api_url") {
		t.Errorf("New(gitea without api_url) = %v", err)
	}
}

func mustForge(t *testing.T, kind, api, token string) forge.Forge {
	t.Helper()
	f, err := forge.New(kind, api, token, forge.Client([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestDefaultClientRefusesInternalAddresses: without allow-private a
// forge on loopback is not reached, and the error says what to set.
func TestDefaultClientRefusesInternalAddresses(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	f, err := forge.New(forge.KindGitea, srv.URL+"/api/v1", "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Open(context.Background(), "o/r", forge.NewRequest{Head: "b", Base: "main", Title: "t"})
	if err == nil || !strings.Contains(err.Error(), "outbound_allow_private") || hits.Load() != 0 {
		t.Fatalf("Open against a loopback forge = %v (hits %d), want refused", err, hits.Load())
	}
}

// TestRedirectToAnotherOriginDropsTheToken: a forge API that redirects
// elsewhere does not hand the token to the other origin.
func TestRedirectToAnotherOriginDropsTheToken(t *testing.T) {
	var leaked atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Store(r.Header.Get("Authorization") + r.Header.Get("Private-Token"))
		w.WriteHeader(http.StatusNotFound)
	}))
	defer other.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer api.Close()
	for _, kind := range []string{forge.KindGitea, forge.KindGitLab} {
		leaked.Store("unset")
		f := mustForge(t, kind, api.URL+"/api", "s3cret")
		_, _ = f.Open(context.Background(), "o/r", forge.NewRequest{Head: "b", Base: "main", Title: "t"})
		if got := leaked.Load().(string); got != "" {
			t.Errorf("%s: the other origin received %q, want no token (unset: not reached)", kind, got)
		}
	}
}
