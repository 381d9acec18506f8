package tools

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/execenv"
)

func TestReadFile(t *testing.T) {
	b := setup(t)
	var lines []string
	for i := 1; i <= 12; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	b.write(t, "f.txt", []byte(strings.Join(lines, "\n")+"\n"))
	b.write(t, "crlf.txt", []byte("a\r\nb\r\n"))
	b.write(t, "empty.txt", nil)
	tests := []struct {
		name string
		args args
		want string
	}{
		{"whole file", args{"file_path": "f.txt"}, " 1 | line 1\n 2 | line 2\n"},
		{"offset and limit", args{"file_path": "f.txt", "offset": 9, "limit": 2}, " 9 | line 9\n10 | line 10\n\n[Showing lines 9-10. The file continues; call read_file with offset=11 to read more.]"},
		{"last lines", args{"file_path": filepath.Join(b.dir, "f.txt"), "offset": 11}, "11 | line 11\n12 | line 12"},
		{"crlf", args{"file_path": "crlf.txt"}, "1 | a\n2 | b"},
		{"empty", args{"file_path": "empty.txt"}, "(the file is empty)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := b.call(t, "read_file", tt.args)
			if res.IsError || !strings.Contains(res.Content, tt.want) {
				t.Fatalf("content = %q, want it to contain %q", res.Content, tt.want)
			}
		})
	}
}

func TestReadFileErrors(t *testing.T) {
	b := setup(t)
	b.write(t, "bin.dat", []byte{0x7f, 'E', 'L', 'F', 0, 0, 1, 2})
	b.write(t, "short.txt", []byte("one\ntwo\n"))
	tests := []struct {
		name string
		args args
		want string
	}{
		{"binary", args{"file_path": "bin.dat"}, "bin.dat is a binary file"},
		{"missing", args{"file_path": "nope.txt"}, "nope.txt does not exist"},
		{"directory", args{"file_path": "."}, "is a directory"},
		{"offset past end", args{"file_path": "short.txt", "offset": 5}, "offset 5 is past the end of the file, which has 2 lines"},
		{"offset zero refused by schema", args{"file_path": "short.txt", "offset": 0}, "at /offset: minimum: got 0, want 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := b.call(t, "read_file", tt.args)
			if !res.IsError || !strings.Contains(res.Content, tt.want) {
				t.Fatalf("result = %+v, want an error containing %q", res, tt.want)
			}
		})
	}
}

func TestReadFileImage(t *testing.T) {
	b := setup(t)
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	b.write(t, "pic.png", buf.Bytes())
	res := b.call(t, "read_file", args{"file_path": "pic.png"})
	if res.IsError || len(res.Images) != 1 || res.Images[0].MediaType != "image/png" || !bytes.Equal(res.Images[0].Data, buf.Bytes()) {
		t.Fatalf("result = %+v", res)
	}
	if tr := res.ToolResult(); len(tr.Images) != 1 {
		t.Fatal("image lost in ToolResult")
	}
}

func TestReadFileHugeSingleLineIsCutByCharacters(t *testing.T) {
	b := setup(t)
	b.write(t, "one-line.csv", bytes.Repeat([]byte("abcdefghij"), 1<<20)) // 10 MB, no newline
	res := b.call(t, "read_file", args{"file_path": "one-line.csv"})
	if res.IsError || !res.Truncated {
		t.Fatalf("IsError=%v Truncated=%v", res.IsError, res.Truncated)
	}
	if len(res.Content) > 51_000 || !strings.Contains(res.Content, "characters were removed from the middle") {
		t.Fatalf("content is %d bytes: %.200q", len(res.Content), res.Content)
	}
	if len(res.Full) < 10<<20 {
		t.Fatalf("Full lost output: %d bytes", len(res.Full))
	}
}

func TestWriteFile(t *testing.T) {
	b := setup(t)
	res := b.call(t, "write_file", args{"file_path": "deep/er/new.txt", "content": "héllo\n"})
	if res.IsError || res.Content != "Created deep/er/new.txt (7 bytes)." {
		t.Fatalf("result = %+v", res)
	}
	res = b.call(t, "write_file", args{"file_path": "deep/er/new.txt", "content": "x"})
	if res.Content != "Overwrote deep/er/new.txt (1 bytes)." || b.read(t, "deep/er/new.txt") != "x" {
		t.Fatalf("result = %+v", res)
	}
}

func TestEditFile(t *testing.T) {
	b := setup(t)
	b.write(t, "main.go", []byte("package main\n\nfunc main() {\n\tprintln(“hi”)\n}\n"))
	res := b.call(t, "edit_file", args{"file_path": "main.go", "old_string": "package main", "new_string": "package app"})
	if res.IsError || res.Content != "Edited main.go: replaced 1 occurrence." {
		t.Fatalf("exact edit: %+v", res)
	}
	res = b.call(t, "edit_file", args{"file_path": "main.go", "old_string": `println("hi")`, "new_string": `println("bye")`})
	if res.IsError || !strings.Contains(res.Content, "did not match exactly") {
		t.Fatalf("tolerant edit: %+v", res)
	}
	if got := b.read(t, "main.go"); got != "package app\n\nfunc main() {\n\tprintln(\"bye\")\n}\n" {
		t.Fatalf("file = %q", got)
	}
	res = b.call(t, "edit_file", args{"file_path": "new/file.txt", "old_string": "", "new_string": "fresh"})
	if res.IsError || b.read(t, "new/file.txt") != "fresh" {
		t.Fatalf("create by edit: %+v", res)
	}
	for _, bad := range []struct {
		a    args
		want string
	}{
		{args{"file_path": "main.go", "old_string": "x", "new_string": "x"}, "identical"},
		{args{"file_path": "gone.go", "old_string": "x", "new_string": "y"}, "gone.go does not exist"},
		{args{"file_path": "main.go", "old_string": "", "new_string": "y"}, "already has content"},
		{args{"file_path": "main.go", "old_string": "}", "new_string": "]"}, ""},
	} {
		res := b.call(t, "edit_file", bad.a)
		if bad.want == "" {
			continue
		}
		if !res.IsError || !strings.Contains(res.Content, bad.want) {
			t.Errorf("%v: %+v, want error containing %q", bad.a, res, bad.want)
		}
	}
}

func TestListDir(t *testing.T) {
	b := setup(t)
	b.write(t, "a/b/c.txt", []byte("123"))
	b.write(t, "a/d.txt", make([]byte, 2048))
	b.write(t, "z.txt", nil)
	res := b.call(t, "list_dir", args{"depth": 3})
	want := b.dir + "/\n  a/\n    b/\n      c.txt (3 B)\n    d.txt (2.0 KB)\n  z.txt (0 B)"
	if res.IsError || res.Content != want {
		t.Fatalf("got %q\nwant %q", res.Content, want)
	}
	res = b.call(t, "list_dir", args{"path": "a", "depth": 1})
	if res.Content != "a/\n  b/\n  d.txt (2.0 KB)" {
		t.Fatalf("depth 1: %q", res.Content)
	}
	if res := b.call(t, "list_dir", args{"path": "z.txt"}); !res.IsError || !strings.Contains(res.Content, "is a file") {
		t.Fatalf("file: %+v", res)
	}
}

func TestReadManyFiles(t *testing.T) {
	b := setup(t)
	b.write(t, "docs/a.md", []byte("alpha\n"))
	b.write(t, "docs/b.md", []byte("beta\n"))
	b.write(t, "bin.dat", []byte{0, 1, 2})
	res := b.call(t, "read_many_files", args{"paths": []string{"docs/*.md", "bin.dat", "docs/a.md", "missing/*.txt"}})
	if res.IsError {
		t.Fatal(res.Content)
	}
	for _, w := range []string{"--- docs/a.md ---\n1 | alpha", "--- docs/b.md ---\n1 | beta", "--- bin.dat ---\n[not read: bin.dat is a binary file", `[no files matched "missing/*.txt"]`} {
		if !strings.Contains(res.Content, w) {
			t.Errorf("content %q lacks %q", res.Content, w)
		}
	}
	if strings.Count(res.Content, "--- docs/a.md ---") != 1 {
		t.Error("docs/a.md read twice")
	}
	res = b.call(t, "read_many_files", args{"paths": []string{"docs/*.md"}, "exclude": []string{"b.*"}})
	if strings.Contains(res.Content, "docs/b.md") || !strings.Contains(res.Content, "docs/a.md") {
		t.Errorf("exclude ignored: %q", res.Content)
	}
	if res := b.call(t, "read_many_files", args{"paths": []string{"none/*.go"}}); !res.IsError {
		t.Fatalf("nothing matched should be an error: %+v", res)
	}
}

func TestGlob(t *testing.T) {
	b := setup(t)
	b.write(t, "x/one.go", nil)
	b.write(t, "x/y/two.go", nil)
	b.write(t, "three.txt", nil)
	res := b.call(t, "glob", args{"pattern": "**/*.go"})
	got := strings.Split(res.Content, "\n")
	if res.IsError || len(got) != 2 {
		t.Fatalf("result = %+v", res)
	}
	if res := b.call(t, "glob", args{"pattern": "*.rs"}); res.Content != "No files matched." {
		t.Fatalf("no match: %+v", res)
	}
}

func TestGrep(t *testing.T) {
	b := setup(t)
	b.write(t, "a.go", []byte("package a\nfunc Foo() {}\nfunc foo() {}\n"))
	b.write(t, "b.txt", []byte("Foo here\n"))
	tests := []struct {
		name string
		args args
		want string
	}{
		{"content", args{"pattern": "Foo", "glob_filter": "*.go"}, "a.go:2:func Foo() {}"},
		{"case insensitive count", args{"pattern": "foo", "case_insensitive": true, "output_mode": "count"}, "a.go:2\nb.txt:1"},
		{"files", args{"pattern": "Foo", "output_mode": "files_with_matches"}, "a.go\nb.txt"},
		{"no match", args{"pattern": "zzz"}, "No matches found."},
		{"limited", args{"pattern": "o", "max_results": 1}, "[Results stopped at 1;"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := b.call(t, "grep", tt.args)
			if res.IsError || !strings.Contains(res.Content, tt.want) {
				t.Fatalf("content = %q, want %q", res.Content, tt.want)
			}
		})
	}
	res := b.call(t, "grep", args{"pattern": "func (s *Server"})
	if !res.IsError || !strings.Contains(res.Content, "is not a valid regular expression: missing closing ): `func (s *Server`") {
		t.Fatalf("bad regex: %+v", res)
	}
	if res := b.call(t, "grep", args{"pattern": "x", "output_mode": "lines"}); !res.IsError || !strings.Contains(res.Content, "at /output_mode") {
		t.Fatalf("bad mode: %+v", res)
	}
}

func TestSymlinkedDirUnaffected(t *testing.T) {
	// A relative path resolves against the environment's working directory,
	// not the process's.
	b := setup(t)
	b.write(t, "rel.txt", []byte("x\n"))
	wd, _ := os.Getwd()
	if _, err := os.Stat(filepath.Join(wd, "rel.txt")); err == nil {
		t.Fatal("rel.txt exists in the package directory, so this test cannot tell the two apart; remove it")
	}
	if res := b.call(t, "read_file", args{"file_path": "rel.txt"}); res.IsError {
		t.Fatal(res.Content)
	}
}

func TestFormatGlobReportsCut(t *testing.T) {
	got := FormatGlob(execenv.GlobResult{Paths: []string{"a", "b"}, Truncated: true, Total: 1_000_000})
	if got != "a\nb\n[Showing the 2 most recently modified of 1000000 matching files; use a narrower pattern or path to see others.]" {
		t.Fatalf("got %q", got)
	}
}
