package pathmatch

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
		re, err := CompileGlob(c.pattern)
		if err != nil {
			t.Fatalf("CompileGlob(%q): %v", c.pattern, err)
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
	if _, err := CompileGlob("[abc"); err == nil || !strings.Contains(err.Error(), "[abc") {
		t.Fatalf("unterminated class error = %v", err)
	}
}

func TestIgnoreFile(t *testing.T) {
	f := ParseIgnoreFile("/r", []byte("# comment\n\n*.log\n!keep.log\nbuild/\n/top.txt\ndocs/*.md\n**/gen/**\ntrailing \\ \n"))
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
		_, ign := f.Match(c.path, c.isDir)
		if ign != c.ignored {
			t.Errorf("%s (dir %v): ignored = %v, want %v", c.path, c.isDir, ign, c.ignored)
		}
	}
	stack := IgnoreStack{}.Push(f).Push(ParseIgnoreFile("/r/sub", []byte("!*.log\n")))
	if stack.Ignored("/r/sub/x.log", false) {
		t.Error("a deeper .gitignore must be able to re-include")
	}
	if !stack.Ignored("/r/other/x.log", false) {
		t.Error("the outer rule must still apply elsewhere")
	}
}
