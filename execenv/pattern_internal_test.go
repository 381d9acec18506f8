package execenv

import (
	"strings"
	"testing"
)

func TestCompileGlob(t *testing.T) {
	cases := []struct {
		pattern string
		match   []string
		noMatch []string
	}{
		{"*.go", []string{"a.go", ".x.go"}, []string{"dir/a.go", "a.gox"}},
		{"**/*.go", []string{"a.go", "d/a.go", "d/e/a.go"}, []string{"a.txt", "d/a.go/x"}},
		{"src/**", []string{"src/a", "src/b/c"}, []string{"src", "x/src/a"}},
		{"a/**/b", []string{"a/b", "a/x/b", "a/x/y/b"}, []string{"a/xb", "b"}},
		{"**", []string{"a", "a/b/c"}, nil},
		{"f?le.[ch]", []string{"file.c", "fole.h"}, []string{"file.go", "f/le.c"}},
		{"[!a]*", []string{"b", "bc"}, []string{"a", "ab"}},
		{`\*.txt`, []string{"*.txt"}, []string{"a.txt"}},
		{"日本/*.txt", []string{"日本/語.txt"}, []string{"日本語.txt"}},
		{"a+b(c).txt", []string{"a+b(c).txt"}, []string{"aab(c).txt"}},
		{"[日本]x", []string{"日x", "本x"}, []string{"語x"}},
	}
	for _, c := range cases {
		re, err := compileGlob(c.pattern)
		if err != nil {
			t.Fatalf("compileGlob(%q): %v", c.pattern, err)
		}
		for _, m := range c.match {
			if !re.MatchString(m) {
				t.Errorf("%q should match %q", c.pattern, m)
			}
		}
		for _, m := range c.noMatch {
			if re.MatchString(m) {
				t.Errorf("%q should not match %q", c.pattern, m)
			}
		}
	}
	if _, err := compileGlob("[abc"); err == nil || !strings.Contains(err.Error(), "[abc") {
		t.Fatalf("unterminated class error = %v", err)
	}
}

func TestIgnoreFile(t *testing.T) {
	f := parseIgnoreFile("/r", []byte("# comment\n\n*.log\n!keep.log\nbuild/\n/top.txt\ndocs/*.md\n**/gen/**\ntrailing \\ \n"))
	cases := []struct {
		path    string
		isDir   bool
		ignored bool
	}{
		{"/r/a.log", false, true},
		{"/r/deep/a.log", false, true},
		{"/r/keep.log", false, false},
		{"/r/build", true, true},
		{"/r/build", false, false}, // dir-only rule
		{"/r/top.txt", false, true},
		{"/r/sub/top.txt", false, false}, // anchored
		{"/r/docs/a.md", false, true},
		{"/r/docs/x/a.md", false, false},
		{"/r/x/gen/y.go", false, true},
		{"/r/trailing  ", false, true}, // "trailing \\ ": the escaped space is kept
		{"/other/a.log", false, false}, // outside the base
	}
	for _, c := range cases {
		_, ign := f.match(c.path, c.isDir)
		if ign != c.ignored {
			t.Errorf("%s (dir %v): ignored = %v, want %v", c.path, c.isDir, ign, c.ignored)
		}
	}
	stack := ignoreStack{}.push(f).push(parseIgnoreFile("/r/sub", []byte("!*.log\n")))
	if stack.ignored("/r/sub/x.log", false) {
		t.Error("a deeper .gitignore must be able to re-include")
	}
	if !stack.ignored("/r/other/x.log", false) {
		t.Error("the outer rule must still apply elsewhere")
	}
}

func TestHeadTail(t *testing.T) {
	h := newHeadTail(10)
	for _, chunk := range []string{"01234", "56789", "abcdefghij", "KLMNOPQRSTUV"} {
		h.Write([]byte(chunk))
	}
	if got := h.String(); got != "01234\n[... 22 bytes of output omitted ...]\nRSTUV" {
		t.Fatalf("String = %q", got)
	}
	if h.omitted() != 22 {
		t.Fatalf("omitted = %d", h.omitted())
	}
	small := newHeadTail(100)
	small.Write([]byte("short \xff"))
	if got := small.String(); got != "short \uFFFD" || small.omitted() != 0 {
		t.Fatalf("small = %q, omitted %d", got, small.omitted())
	}
	// Many small writes wrap the ring correctly.
	ring := newHeadTail(6)
	for _, c := range "abcdefghijklmnop" {
		ring.Write([]byte(string(c)))
	}
	if got := ring.String(); got != "abc\n[... 10 bytes of output omitted ...]\nnop" {
		t.Fatalf("ring = %q", got)
	}
}

func TestTopN(t *testing.T) {
	top := newTopN(3, func(a, b int) bool { return a < b })
	for _, v := range []int{9, 1, 8, 2, 7, 3, 6} {
		top.add(v)
	}
	if got := top.sorted(); len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 3 || !top.truncated() || top.seen != 7 {
		t.Fatalf("topN kept %v (seen %d)", got, top.seen)
	}
}
