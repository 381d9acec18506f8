package forge_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet/delivery/forge"
)

func mustFollower(t *testing.T, kind, api, token string) forge.Follower {
	t.Helper()
	f, err := forge.NewFollower(kind, api, token, forge.Client([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestGitHubFollows follows docs.github.com/rest: a pull's state (merged
// wins over closed, a null mergeable is still being computed), a
// review's comments with their lines, an Actions job's log, a
// collaborator's permission (404: not one).
func TestGitHubFollows(t *testing.T) {
	d := newDocServer(t,
		exchange{method: "GET", path: "/repos/octo/hello/pulls/7", header: githubHeaders, status: 200,
			answer: `{"number":7,"state":"closed","merged":true,"mergeable":null,"base":{"ref":"main"},"head":{"ref":"agentfleet/x","sha":"abc"}}`},
		exchange{method: "GET", path: "/repos/octo/hello/pulls/8", header: githubHeaders, status: 200,
			answer: `{"number":8,"state":"open","merged":false,"mergeable":false,"base":{"ref":"main"},"head":{"ref":"agentfleet/y","sha":"def"}}`},
		exchange{method: "GET", path: "/repos/octo/hello/pulls/7/reviews/80/comments?per_page=100", header: githubHeaders, status: 200,
			answer: `[{"id":10,"path":"greet.go","line":12,"original_line":11,"body":"say hello"},{"id":11,"path":"old.go","line":null,"original_line":3,"body":"gone"}]`},
		exchange{method: "GET", path: "/repos/octo/hello/actions/jobs/399444496/logs", header: githubHeaders, status: 200,
			answer: "step 1\n--- FAIL: TestGreeting\n"},
		exchange{method: "GET", path: "/repos/octo/hello/issues/3/comments?per_page=100", header: githubHeaders, status: 200,
			answer: `[{"id":1,"body":"It also says go away on Sundays.","user":{"login":"alice"}}]`},
		exchange{method: "GET", path: "/repos/octo/hello/collaborators/alice/permission", header: githubHeaders, status: 200,
			answer: `{"permission":"write","role_name":"write","user":{"login":"alice"}}`},
		exchange{method: "GET", path: "/repos/octo/hello/collaborators/mallory/permission", header: githubHeaders, status: 404,
			answer: `{"message":"Not Found"}`},
	)
	f := mustFollower(t, forge.KindGitHub, d.srv.URL, "ghp_test")
	ctx := context.Background()
	if p, err := f.Pull(ctx, "octo/hello", 7); err != nil || p.State != forge.PullMerged || p.Base != "main" || p.HeadSHA != "abc" || p.Checking {
		t.Errorf("pull 7 = %+v, %v", p, err)
	}
	if p, err := f.Pull(ctx, "octo/hello", 8); err != nil || p.State != forge.PullOpen || !p.Conflict {
		t.Errorf("pull 8 = %+v, %v, want open in conflict", p, err)
	}
	cs, err := f.ReviewComments(ctx, "octo/hello", 7, 80)
	want := []forge.ReviewComment{{Path: "greet.go", Line: 12, Body: "say hello"}, {Path: "old.go", Line: 3, Body: "gone"}}
	if err != nil || !reflect.DeepEqual(cs, want) {
		t.Errorf("review comments %+v, %v", cs, err)
	}
	if log, err := f.JobLog(ctx, "octo/hello", forge.LogRef{Job: 399444496}); err != nil || log != "step 1\n--- FAIL: TestGreeting\n" {
		t.Errorf("job log %q, %v", log, err)
	}
	if _, err := f.JobLog(ctx, "octo/hello", forge.LogRef{URL: "https://ci.example/1"}); !errors.Is(err, forge.ErrNoLog) {
		t.Errorf("a status's log: %v, want ErrNoLog", err)
	}
	if cs, err := f.IssueComments(ctx, "octo/hello", 3); err != nil || !reflect.DeepEqual(cs, []forge.Comment{{Author: "alice", Body: "It also says go away on Sundays."}}) {
		t.Errorf("issue comments %+v, %v", cs, err)
	}
	if ok, err := f.MayTrigger(ctx, "octo/hello", "alice"); !ok || err != nil {
		t.Errorf("alice may trigger: %v, %v", ok, err)
	}
	if ok, err := f.MayTrigger(ctx, "octo/hello", "mallory"); ok || err != nil {
		t.Errorf("mallory may trigger: %v, %v", ok, err)
	}
}

// TestGitLabFollows follows docs.gitlab.com/api: a merge request's
// detailed_merge_status, its unresolved diff notes, a job's trace, a
// member's access level (Reporter, 20, does not push).
func TestGitLabFollows(t *testing.T) {
	d := newDocServer(t,
		exchange{method: "GET", path: "/api/v4/projects/g%2Fp/merge_requests/12", header: gitlabHeaders, status: 200,
			answer: `{"id":84,"iid":12,"state":"opened","target_branch":"main","source_branch":"agentfleet/x","sha":"abc","has_conflicts":true,"detailed_merge_status":"conflict"}`},
		exchange{method: "GET", path: "/api/v4/projects/g%2Fp/merge_requests/12/notes?per_page=100&sort=asc", header: gitlabHeaders, status: 200,
			answer: `[{"id":1,"type":null,"body":"looks odd","resolvable":false},
			{"id":2,"type":"DiffNote","body":"use a constant","resolvable":true,"resolved":false,"position":{"base_sha":"a","head_sha":"b","position_type":"text","new_path":"main.go","new_line":18,"old_path":"main.go","old_line":null}},
			{"id":3,"type":"DiffNote","body":"done already","resolvable":true,"resolved":true,"position":{"new_path":"x.go","new_line":1}}]`},
		exchange{method: "GET", path: "/api/v4/projects/g%2Fp/jobs/8/trace", header: gitlabHeaders, status: 200, answer: "$ make test\nFAIL\n"},
		exchange{method: "GET", path: "/api/v4/projects/g%2Fp/issues/23/notes?per_page=100&sort=asc", header: gitlabHeaders, status: 200,
			answer: `[{"id":1,"body":"added ~1 label","system":true,"author":{"username":"dev"}},{"id":2,"body":"Sundays too.","system":false,"author":{"username":"rep"}}]`},
		exchange{method: "GET", path: "/api/v4/projects/g%2Fp/members/all/5", header: gitlabHeaders, status: 200,
			answer: `{"id":5,"username":"rep","access_level":20}`},
		exchange{method: "GET", path: "/api/v4/projects/g%2Fp/members/all/6", header: gitlabHeaders, status: 200,
			answer: `{"id":6,"username":"dev","access_level":30}`},
	)
	f := mustFollower(t, forge.KindGitLab, d.srv.URL+"/api/v4", "glpat-test")
	ctx := context.Background()
	if p, err := f.Pull(ctx, "g/p", 12); err != nil || p.State != forge.PullOpen || !p.Conflict || p.Base != "main" {
		t.Errorf("merge request = %+v, %v", p, err)
	}
	cs, err := f.ReviewComments(ctx, "g/p", 12, 0)
	if err != nil || !reflect.DeepEqual(cs, []forge.ReviewComment{{Path: "main.go", Line: 18, Body: "use a constant"}}) {
		t.Errorf("notes %+v, %v", cs, err)
	}
	if log, err := f.JobLog(ctx, "g/p", forge.LogRef{Job: 8}); err != nil || log != "$ make test\nFAIL\n" {
		t.Errorf("trace %q, %v", log, err)
	}
	if cs, err := f.IssueComments(ctx, "g/p", 23); err != nil || !reflect.DeepEqual(cs, []forge.Comment{{Author: "rep", Body: "Sundays too."}}) {
		t.Errorf("issue notes %+v, %v", cs, err)
	}
	if ok, _ := f.MayTrigger(ctx, "g/p", "5"); ok {
		t.Error("a Reporter may trigger")
	}
	if ok, err := f.MayTrigger(ctx, "g/p", "6"); !ok || err != nil {
		t.Errorf("a Developer may not trigger: %v", err)
	}
}

// A CI log of 48 MB is read for its last megabyte without holding the
// whole of it: the reading allocates a fraction of the body (io.ReadAll,
// used before, allocated more than the body).
func TestALongLogIsReadInBoundedMemory(t *testing.T) {
	big := bytes.Repeat([]byte("build output line\n"), 48<<20/18)
	copy(big[len(big)-6:], "FAIL\n\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(big) }))
	defer srv.Close()
	f := mustFollower(t, forge.KindGitHub, srv.URL, "ghp_test")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	log, err := f.JobLog(context.Background(), "octo/hello", forge.LogRef{Job: 1})
	runtime.ReadMemStats(&after)
	if err != nil || len(log) != 1<<20 || !strings.HasSuffix(log, "FAIL\n\n") {
		t.Fatalf("log of %d bytes ending %q, %v; want the last MiB", len(log), log[max(0, len(log)-8):], err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(len(big))/3 {
		t.Fatalf("reading a log of %d MB allocated %d MB", len(big)>>20, alloc>>20)
	}
}
