package execenvtest

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/execenv"
)

// GrepFixture is a tree exercising ignore rules: a root and a nested
// .gitignore, hidden files (searched), .git (skipped), a binary file
// (skipped) and CRLF line endings.
var GrepFixture = map[string]string{
	".gitignore":             "ignored/\n*.log\n# comment\n!keep.log\n",
	"a.go":                   "package a\nfunc Alpha() {}\n// TODO one\n",
	"b/b.go":                 "package b\n// todo two\nfunc Beta() {}\n",
	"b/c.txt":                "TODO three\nnothing\nTODO four\n",
	"ignored/x.go":           "TODO ignored dir\n",
	"debug.log":              "TODO ignored by extension\n",
	"keep.log":               "TODO re-included\n",
	".hidden/h.go":           "TODO hidden\n",
	".git/config":            "TODO in git\n",
	"sub/.gitignore":         "skip.go\n/only_here.txt\n",
	"sub/skip.go":            "TODO skipped by nested ignore\n",
	"sub/keep.go":            "TODO kept\n",
	"sub/only_here.txt":      "TODO anchored ignore\n",
	"sub/deep/only_here.txt": "TODO not anchored here\n",
	"bin.dat":                "TODO\x00binary\n",
	"crlf.txt":               "TODO crlf\r\nplain\r\n",
}

// WriteGrepFixture writes GrepFixture through env.
func (b *bundle) writeFixture(t *testing.T) {
	t.Helper()
	b.write(t, GrepFixture)
}

func grep(t *testing.T, b *bundle, req execenv.GrepRequest) execenv.GrepResult {
	t.Helper()
	res, err := b.env.Grep(b.ctx, req)
	if err != nil {
		t.Fatalf("Grep(%+v): %v", req, err)
	}
	return res
}

func testGrepContent(t *testing.T, b *bundle) {
	b.writeFixture(t)
	got := grep(t, b, execenv.GrepRequest{Pattern: "TODO"})
	want := []execenv.GrepMatch{
		{Path: ".hidden/h.go", Line: 1, Text: "TODO hidden"},
		{Path: "a.go", Line: 3, Text: "// TODO one"},
		{Path: "b/c.txt", Line: 1, Text: "TODO three"},
		{Path: "b/c.txt", Line: 3, Text: "TODO four"},
		{Path: "crlf.txt", Line: 1, Text: "TODO crlf"},
		{Path: "keep.log", Line: 1, Text: "TODO re-included"},
		{Path: "sub/deep/only_here.txt", Line: 1, Text: "TODO not anchored here"},
		{Path: "sub/keep.go", Line: 1, Text: "TODO kept"},
	}
	if !reflect.DeepEqual(got.Matches, want) || got.Truncated {
		t.Fatalf("Grep TODO =\n%s\nwant\n%s", fmtMatches(got.Matches), fmtMatches(want))
	}
}

func fmtMatches(ms []execenv.GrepMatch) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "  %s:%d:%q\n", m.Path, m.Line, m.Text)
	}
	return b.String()
}

func testGrepModes(t *testing.T, b *bundle) {
	b.writeFixture(t)
	files := grep(t, b, execenv.GrepRequest{Pattern: "TODO", Mode: execenv.GrepFilesWithMatches})
	wantFiles := []string{".hidden/h.go", "a.go", "b/c.txt", "crlf.txt", "keep.log", "sub/deep/only_here.txt", "sub/keep.go"}
	if !reflect.DeepEqual(files.Files, wantFiles) || len(files.Matches) != 0 {
		t.Fatalf("files_with_matches = %v, want %v", files.Files, wantFiles)
	}
	counts := grep(t, b, execenv.GrepRequest{Pattern: "TODO|func", Mode: execenv.GrepCount})
	wantCounts := []execenv.GrepCountRow{
		{Path: ".hidden/h.go", Count: 1}, {Path: "a.go", Count: 2}, {Path: "b/b.go", Count: 1}, {Path: "b/c.txt", Count: 2},
		{Path: "crlf.txt", Count: 1}, {Path: "keep.log", Count: 1}, {Path: "sub/deep/only_here.txt", Count: 1}, {Path: "sub/keep.go", Count: 1},
	}
	if !reflect.DeepEqual(counts.Counts, wantCounts) {
		t.Fatalf("count = %+v, want %+v", counts.Counts, wantCounts)
	}
}

func testGrepGlobCase(t *testing.T, b *bundle) {
	b.writeFixture(t)
	got := grep(t, b, execenv.GrepRequest{Pattern: "todo", CaseInsensitive: true, Glob: "*.go", Mode: execenv.GrepFilesWithMatches})
	// As with ripgrep's --glob, a matching glob beats a .gitignore rule
	// naming the file (sub/skip.go), but ignored directories stay pruned.
	want := []string{".hidden/h.go", "a.go", "b/b.go", "sub/keep.go", "sub/skip.go"}
	if !reflect.DeepEqual(got.Files, want) {
		t.Fatalf("case-insensitive *.go = %v, want %v", got.Files, want)
	}
	got = grep(t, b, execenv.GrepRequest{Pattern: "todo", Glob: "*.go", Mode: execenv.GrepFilesWithMatches})
	if !reflect.DeepEqual(got.Files, []string{"b/b.go"}) {
		t.Fatalf("case-sensitive todo = %v, want [b/b.go]", got.Files)
	}
	got = grep(t, b, execenv.GrepRequest{Pattern: "TODO", Glob: "b/*.txt", Mode: execenv.GrepFilesWithMatches})
	if !reflect.DeepEqual(got.Files, []string{"b/c.txt"}) {
		t.Fatalf("glob with a directory = %v, want [b/c.txt]", got.Files)
	}
}

func testGrepMax(t *testing.T, b *bundle) {
	b.writeFixture(t)
	got := grep(t, b, execenv.GrepRequest{Pattern: "TODO", MaxResults: 3})
	want := []execenv.GrepMatch{
		{Path: ".hidden/h.go", Line: 1, Text: "TODO hidden"},
		{Path: "a.go", Line: 3, Text: "// TODO one"},
		{Path: "b/c.txt", Line: 1, Text: "TODO three"},
	}
	if !reflect.DeepEqual(got.Matches, want) || !got.Truncated {
		t.Fatalf("MaxResults 3 = %s truncated=%v", fmtMatches(got.Matches), got.Truncated)
	}
	files := grep(t, b, execenv.GrepRequest{Pattern: "TODO", MaxResults: 2, Mode: execenv.GrepFilesWithMatches})
	if len(files.Files) != 2 || !files.Truncated {
		t.Fatalf("files MaxResults 2 = %+v", files)
	}
}

func testGrepPath(t *testing.T, b *bundle) {
	b.writeFixture(t)
	got := grep(t, b, execenv.GrepRequest{Pattern: "TODO", Path: "b"})
	if len(got.Matches) != 2 || got.Matches[0].Path != "c.txt" {
		t.Fatalf("Grep in b: %s (paths must be relative to the search root)", fmtMatches(got.Matches))
	}
	got = grep(t, b, execenv.GrepRequest{Pattern: "TODO", Path: "b/c.txt"})
	if len(got.Matches) != 2 || got.Matches[1] != (execenv.GrepMatch{Path: "b/c.txt", Line: 3, Text: "TODO four"}) {
		t.Fatalf("Grep of one file: %s (path must be as given)", fmtMatches(got.Matches))
	}
	got = grep(t, b, execenv.GrepRequest{Pattern: "TODO", Path: "ignored/x.go"})
	if len(got.Matches) != 1 {
		t.Fatalf("a file named explicitly is searched even when ignored: %s", fmtMatches(got.Matches))
	}
}

func testGrepBadRegex(t *testing.T, b *bundle) {
	b.writeFixture(t)
	_, err := b.env.Grep(b.ctx, execenv.GrepRequest{Pattern: "func(("})
	if err == nil || !strings.Contains(err.Error(), `"func(("`) {
		t.Fatalf("bad regex error = %v, want one naming the pattern", err)
	}
	_, err = b.env.Grep(b.ctx, execenv.GrepRequest{Pattern: "x", Mode: "lines"})
	if err == nil || !strings.Contains(err.Error(), "lines") {
		t.Fatalf("bad mode error = %v", err)
	}
}

func testGlobNewest(t *testing.T, b *bundle) {
	b.writeFixture(t)
	b.sh(t, "touch -d @1000000000 a.go && touch -d @1100000000 b/b.go && touch -d @1200000000 sub/keep.go && touch -d @1200000000 .hidden/h.go")
	got, err := b.env.Glob(b.ctx, execenv.GlobRequest{Pattern: "**/*.go"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".hidden/h.go", "sub/keep.go", "b/b.go", "a.go"}
	if !reflect.DeepEqual(got.Paths, want) || got.Total != 4 || got.Truncated {
		t.Fatalf("Glob **/*.go = %+v, want %v (newest first, ties by path; ignored files skipped)", got, want)
	}
	got, _ = b.env.Glob(b.ctx, execenv.GlobRequest{Pattern: "*.go"})
	if !reflect.DeepEqual(got.Paths, []string{"a.go"}) {
		t.Fatalf("Glob *.go = %v, want only the top level", got.Paths)
	}
	got, _ = b.env.Glob(b.ctx, execenv.GlobRequest{Pattern: "*.txt", Path: "b"})
	if !reflect.DeepEqual(got.Paths, []string{"c.txt"}) {
		t.Fatalf("Glob in b = %v", got.Paths)
	}
	got, _ = b.env.Glob(b.ctx, execenv.GlobRequest{Pattern: "sub/**/only_here.txt"})
	if !reflect.DeepEqual(got.Paths, []string{"sub/deep/only_here.txt"}) {
		t.Fatalf("Glob sub/**/only_here.txt = %v", got.Paths)
	}
	if _, err := b.env.Glob(b.ctx, execenv.GlobRequest{Pattern: "[abc"}); err == nil {
		t.Fatal("invalid glob accepted")
	}
}

func testGlobMany(t *testing.T, b *bundle) {
	b.sh(t, "mkdir -p many/a many/b && for i in $(seq 1 150); do : > many/a/f$i.txt; : > many/b/g$i.txt; done; touch -d @2000000000 many/b/g7.txt")
	got, err := b.env.Glob(b.ctx, execenv.GlobRequest{Pattern: "many/**/*.txt", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Paths) != 10 || got.Total != 300 || !got.Truncated {
		t.Fatalf("bounded glob: %d paths, total %d, truncated %v; want 10, 300, true", len(got.Paths), got.Total, got.Truncated)
	}
	if got.Paths[0] != "many/b/g7.txt" {
		t.Fatalf("newest file first: got %q", got.Paths[0])
	}
}
