package execenv_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agentfleet/agentfleet/internal/testenv"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/execenv/execenvtest"
)

// requireRipgrep skips (or fails under AGENTFLEET_REQUIRE_INTEGRATION=1)
// when rg is not on PATH.
func requireRipgrep(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("rg"); err != nil {
		testenv.SkipOrFatal(t, "rg (ripgrep) is not on PATH")
	}
}

// agreementFixture adds edge cases to the conformance fixture.
var agreementFixture = map[string]string{
	"deep/a/b/c/d.go":      "package d // TODO deep\n",
	"deep/.gitignore":      "*.tmp\n!important.tmp\n/a/b/skip/\n",
	"deep/x.tmp":           "TODO tmp\n",
	"deep/important.tmp":   "TODO important\n",
	"deep/a/b/skip/s.go":   "TODO skipped dir\n",
	"deep/a/b/x.tmp":       "TODO nested tmp\n",
	"utf8/ünï.txt":         "naïve TODO café\n\xff\xfe TODO after invalid bytes\n",
	"long/line.txt":        longLine(),
	"gen/out/gen.go":       "TODO generated\n",
	"gen/.gitignore":       "out/\n",
	"noeol.txt":            "first\nTODO no newline at end",
	"empty.txt":            "",
	"blank.txt":            "a\n\nb\n\r\n",
	"sp ace/with space.go": "TODO space\n",
}

func longLine() string {
	b := make([]byte, 300000)
	for i := range b {
		b[i] = 'a'
	}
	copy(b[150000:], "TODO")
	return string(b) + "\n"
}

// agreementRequests are compared between ripgrep and the Go search.
var agreementRequests = []execenv.GrepRequest{
	{Pattern: "TODO"},
	{Pattern: "TODO", MaxResults: 5},
	{Pattern: "todo", CaseInsensitive: true, MaxResults: 10000},
	{Pattern: `\bTODO\b`, Mode: execenv.GrepFilesWithMatches},
	{Pattern: "TODO|package", Mode: execenv.GrepCount},
	{Pattern: "TODO", Glob: "*.go"},
	{Pattern: "TODO", Glob: "!*.go", Mode: execenv.GrepFilesWithMatches},
	{Pattern: "TODO", Glob: "deep/**/*.tmp"},
	{Pattern: "TODO", Path: "deep"},
	{Pattern: "^$", Mode: execenv.GrepCount},
	{Pattern: "café|naïve", Mode: execenv.GrepContent},
	{Pattern: "end$"},
	{Pattern: "nomatchanywhere"},
}

func TestGrepRipgrepAndGoAgreeOnFixture(t *testing.T) {
	t.Parallel()
	requireRipgrep(t)
	dir := t.TempDir()
	for _, files := range []map[string]string{execenvtest.GrepFixture, agreementFixture} {
		for p, content := range files {
			must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
			must(t, os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644))
		}
	}
	compareGrep(t, dir, agreementRequests)
}

func TestGrepRipgrepAndGoAgreeOnGoSource(t *testing.T) {
	t.Parallel()
	requireRipgrep(t)
	root := filepath.Join(goroot(t), "src", "net")
	if _, err := os.Stat(root); err != nil {
		testenv.SkipOrFatal(t, fmt.Sprintf("Go source tree not available: %v", err))
	}
	compareGrep(t, root, []execenv.GrepRequest{
		{Pattern: `func \(\w+ \*?\w+\) Close\(`, MaxResults: 100000},
		{Pattern: "(?i)deadline", Mode: execenv.GrepCount, MaxResults: 100000},
		{Pattern: "TODO", Glob: "*_test.go", Mode: execenv.GrepFilesWithMatches, MaxResults: 100000},
		{Pattern: "http"},
	})
}

// compareGrep runs each request with ripgrep and with the Go search on dir.
func compareGrep(t *testing.T, dir string, reqs []execenv.GrepRequest) {
	t.Helper()
	rg := newLocal(t, execenv.LocalConfig{WorkingDir: dir})
	gosearch := newLocal(t, execenv.LocalConfig{WorkingDir: dir, NoRipgrep: true})
	if !rg.UsesRipgrep() || gosearch.UsesRipgrep() {
		t.Fatal("the two environments do not use the two searches")
	}
	ctx := context.Background()
	for _, req := range reqs {
		a, errA := rg.Grep(ctx, req)
		b, errB := gosearch.Grep(ctx, req)
		if errA != nil || errB != nil {
			t.Fatalf("%+v: rg error %v, Go error %v", req, errA, errB)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%+v: results differ\nrg: %s\ngo: %s", req, summarize(a), summarize(b))
		}
		if len(a.Matches)+len(a.Files)+len(a.Counts) == 0 && req.Pattern != "nomatchanywhere" {
			t.Errorf("%+v: no results at all; the comparison proves nothing", req)
		}
	}
}

// summarize prints a result, cut to a readable length.
func summarize(r execenv.GrepResult) string {
	s := fmt.Sprintf("%+v", r)
	if len(s) > 3000 {
		s = s[:3000] + "..."
	}
	return s
}
