package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readsBundle runs calls with one session's Reads.
func readsBundle(t *testing.T) (*bundle, func(name string, a args) Result) {
	b := setup(t)
	opts := ExecOptions{Reads: NewReads()}
	return b, func(name string, a args) Result { return b.callOpts(t, name, a, opts) }
}

func wantStale(t *testing.T, r Result, path string) {
	t.Helper()
	if !r.IsError || !strings.Contains(r.Content, path) || !strings.Contains(r.Content, "read the file again") {
		t.Fatalf("want a refusal naming %s and asking for a new read, got %+v", path, r)
	}
}

func TestReadBeforeWrite(t *testing.T) {
	t.Run("edit of a file changed since it was read is refused", func(t *testing.T) {
		b, call := readsBundle(t)
		b.write(t, "a.txt", []byte("one\ntwo\n"))
		if r := call("read_file", args{"file_path": "a.txt"}); r.IsError {
			t.Fatal(r.Content)
		}
		b.write(t, "a.txt", []byte("one\nTWO\n")) // a command changes it, same size
		r := call("edit_file", args{"file_path": "a.txt", "old_string": "one", "new_string": "uno"})
		wantStale(t, r, "a.txt")
		if got := b.read(t, "a.txt"); got != "one\nTWO\n" {
			t.Fatalf("the refused edit changed the file: %q", got)
		}
		if r := call("read_file", args{"file_path": "a.txt"}); r.IsError {
			t.Fatal(r.Content)
		}
		if r := call("edit_file", args{"file_path": "a.txt", "old_string": "one", "new_string": "uno"}); r.IsError {
			t.Fatalf("edit after a new read: %s", r.Content)
		}
		// The session's own write counts as seen: a second edit needs no read.
		if r := call("edit_file", args{"file_path": "a.txt", "old_string": "TWO", "new_string": "dos"}); r.IsError {
			t.Fatalf("second edit: %s", r.Content)
		}
		if got := b.read(t, "a.txt"); got != "uno\ndos\n" {
			t.Fatalf("file = %q", got)
		}
	})
	t.Run("overwrite of an existing file never read is refused, new files are exempt", func(t *testing.T) {
		b, call := readsBundle(t)
		b.write(t, "old.txt", []byte("keep me"))
		wantStale(t, call("write_file", args{"file_path": "old.txt", "content": "x"}), "old.txt")
		if r := call("write_file", args{"file_path": "new/new.txt", "content": "fresh"}); r.IsError {
			t.Fatalf("new file: %s", r.Content)
		}
		if r := call("write_file", args{"file_path": "new/new.txt", "content": "again"}); r.IsError {
			t.Fatalf("overwrite of a file the session wrote: %s", r.Content)
		}
		call("read_file", args{"file_path": "old.txt", "limit": 1})
		if r := call("write_file", args{"file_path": "old.txt", "content": "x"}); r.IsError {
			t.Fatalf("overwrite after a read: %s", r.Content)
		}
	})
	t.Run("write over a file changed since it was read is refused", func(t *testing.T) {
		b, call := readsBundle(t)
		b.write(t, "w.txt", []byte("v1"))
		call("read_file", args{"file_path": "w.txt"})
		b.write(t, "w.txt", []byte("v2 longer"))
		wantStale(t, call("write_file", args{"file_path": "w.txt", "content": "mine"}), "w.txt")
	})
	t.Run("a touch that keeps the content is not a change", func(t *testing.T) {
		b, call := readsBundle(t)
		p := b.write(t, "t.txt", []byte("same"))
		call("read_file", args{"file_path": "t.txt"})
		later := mustStat(t, p).ModTime().Add(5e9)
		if err := os.Chtimes(p, later, later); err != nil {
			t.Fatal(err)
		}
		if r := call("write_file", args{"file_path": filepath.Join(b.dir, "t.txt"), "content": "new"}); r.IsError {
			t.Fatalf("touched file (absolute path): %s", r.Content)
		}
	})
	t.Run("apply_patch of a file changed since it was read changes nothing", func(t *testing.T) {
		b, call := readsBundle(t)
		b.write(t, "p.txt", []byte("a\nb\n"))
		b.write(t, "q.txt", []byte("x\n"))
		call("read_many_files", args{"paths": []string{"p.txt", "q.txt"}})
		b.write(t, "q.txt", []byte("y\n"))
		patch := "*** Begin Patch\n*** Update File: p.txt\n@@\n a\n-b\n+B\n*** Update File: q.txt\n@@\n-y\n+z\n*** End Patch"
		wantStale(t, call("apply_patch", args{"patch": patch}), "q.txt")
		if got := b.read(t, "p.txt"); got != "a\nb\n" {
			t.Fatalf("refused patch changed p.txt: %q", got)
		}
		call("read_file", args{"file_path": "q.txt"})
		if r := call("apply_patch", args{"patch": patch}); r.IsError {
			t.Fatalf("patch after a new read: %s", r.Content)
		}
	})
	t.Run("without Reads nothing is checked", func(t *testing.T) {
		b := setup(t)
		b.write(t, "free.txt", []byte("x"))
		if r := b.call(t, "write_file", args{"file_path": "free.txt", "content": "y"}); r.IsError {
			t.Fatal(r.Content)
		}
	})
}

func mustStat(t *testing.T, p string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}
