package execenvtest

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"io/fs"
	"path"
	"reflect"
	"testing"

	"github.com/agentfleet/agentfleet/execenv"
)

func testWriteRead(t *testing.T, b *bundle) {
	if err := b.env.WriteFile(b.ctx, "a/b/c.txt", []byte("hello\n")); err != nil {
		t.Fatalf("WriteFile with missing parents: %v", err)
	}
	abs := path.Join(b.env.WorkingDir(), "a/b/c.txt")
	got, err := b.env.ReadFile(b.ctx, abs)
	if err != nil || string(got) != "hello\n" {
		t.Fatalf("ReadFile(absolute) = %q, %v; want hello", got, err)
	}
	if err := b.env.WriteFile(b.ctx, "a/b/c.txt", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.env.ReadFile(b.ctx, "a/b/c.txt"); string(got) != "x" {
		t.Fatalf("WriteFile did not replace the content: %q", got)
	}
	fi, err := b.env.Stat(b.ctx, "a/b/c.txt")
	if err != nil || fi.IsDir || fi.Size != 1 || fi.ModTime.IsZero() {
		t.Fatalf("Stat = %+v, %v; want a 1-byte file with a mod time", fi, err)
	}
	if fi, err := b.env.Stat(b.ctx, "a"); err != nil || !fi.IsDir {
		t.Fatalf("Stat(dir) = %+v, %v", fi, err)
	}
	if ok, err := b.env.Exists(b.ctx, "a/b"); !ok || err != nil {
		t.Fatalf("Exists(a/b) = %v, %v", ok, err)
	}
}

func testUnicodeNames(t *testing.T, b *bundle) {
	name := "ünï cødé/日本語 ファイル.txt"
	content := "Grüße, 世界 🌍\n"
	b.write(t, map[string]string{name: content})
	got, err := b.env.ReadFile(b.ctx, name)
	if err != nil || string(got) != content {
		t.Fatalf("ReadFile(%q) = %q, %v", name, got, err)
	}
	entries, err := b.env.List(b.ctx, "ünï cødé", 1)
	if err != nil || len(entries) != 1 || entries[0].Name != "日本語 ファイル.txt" {
		t.Fatalf("List = %+v, %v", entries, err)
	}
	res, err := b.env.Grep(b.ctx, execenv.GrepRequest{Pattern: "世界"})
	if err != nil || len(res.Matches) != 1 || res.Matches[0].Path != name || res.Matches[0].Text != "Grüße, 世界 🌍" {
		t.Fatalf("Grep over a Unicode name = %+v, %v", res, err)
	}
}

func testBinaryAndLarge(t *testing.T, b *bundle) {
	bin := make([]byte, 256*4)
	for i := range bin {
		bin[i] = byte(i)
	}
	if err := b.env.WriteFile(b.ctx, "bin.dat", bin); err != nil {
		t.Fatal(err)
	}
	if got, err := b.env.ReadFile(b.ctx, "bin.dat"); err != nil || !bytes.Equal(got, bin) {
		t.Fatalf("binary round trip failed: %v", err)
	}
	large := bytes.Repeat([]byte("0123456789abcdef\n"), 6<<20/17) // ~6 MiB
	if err := b.env.WriteFile(b.ctx, "large.txt", large); err != nil {
		t.Fatal(err)
	}
	f, err := b.env.OpenFile(b.ctx, "large.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	n, err := io.CopyBuffer(h, f, make([]byte, 32<<10))
	if err != nil || n != int64(len(large)) || !bytes.Equal(h.Sum(nil), sha(large)) {
		t.Fatalf("OpenFile streamed %d bytes (want %d), err %v, digest match %v", n, len(large), err, bytes.Equal(h.Sum(nil), sha(large)))
	}
	if fi, err := b.env.Stat(b.ctx, "large.txt"); err != nil || fi.Size != int64(len(large)) {
		t.Fatalf("Stat(large) = %+v, %v", fi, err)
	}
}

func sha(b []byte) []byte { s := sha256.Sum256(b); return s[:] }

func testNotExist(t *testing.T, b *bundle) {
	if _, err := b.env.ReadFile(b.ctx, "missing.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile(missing) error = %v, want fs.ErrNotExist", err)
	}
	if _, err := b.env.OpenFile(b.ctx, "missing.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenFile(missing) error = %v, want fs.ErrNotExist", err)
	}
	if _, err := b.env.Stat(b.ctx, "missing/deeper"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat(missing) error = %v, want fs.ErrNotExist", err)
	}
	if ok, err := b.env.Exists(b.ctx, "missing.txt"); ok || err != nil {
		t.Errorf("Exists(missing) = %v, %v; want false, nil", ok, err)
	}
	if _, err := b.env.List(b.ctx, "missing", 1); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("List(missing) error = %v, want fs.ErrNotExist", err)
	}
	if err := b.env.Remove(b.ctx, "missing.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Remove(missing) error = %v, want fs.ErrNotExist", err)
	}
	if _, err := b.env.Grep(b.ctx, execenv.GrepRequest{Pattern: "x", Path: "missing"}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Grep(missing path) error = %v, want fs.ErrNotExist", err)
	}
}

func testList(t *testing.T, b *bundle) {
	b.write(t, map[string]string{"z.txt": "zz", "pkg/a.go": "a", "pkg/sub/deep.go": "d", "b.txt": "b"})
	got, err := b.env.List(b.ctx, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []execenv.DirEntry{{Name: "b.txt", Size: 1}, {Name: "pkg", IsDir: true}, {Name: "z.txt", Size: 2}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("List depth 1 = %+v, want %+v", got, want)
	}
	got, err = b.env.List(b.ctx, ".", 2)
	if err != nil {
		t.Fatal(err)
	}
	names := entryNames(got)
	if want := []string{"b.txt", "pkg", "pkg/a.go", "pkg/sub", "z.txt"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("List depth 2 = %v, want %v", names, want)
	}
	got, _ = b.env.List(b.ctx, "pkg", 5)
	if want := []string{"a.go", "sub", "sub/deep.go"}; !reflect.DeepEqual(entryNames(got), want) {
		t.Fatalf("List(pkg, 5) = %v, want %v", entryNames(got), want)
	}
}

func entryNames(es []execenv.DirEntry) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.Name)
	}
	return out
}

func testRemoveRename(t *testing.T, b *bundle) {
	b.write(t, map[string]string{"old.txt": "1", "dst/exists.txt": "old", "dir/f": "f"})
	if err := b.env.Rename(b.ctx, "old.txt", "new/place/moved.txt"); err != nil {
		t.Fatalf("Rename into missing parents: %v", err)
	}
	if ok, _ := b.env.Exists(b.ctx, "old.txt"); ok {
		t.Fatal("source still exists after Rename")
	}
	if got, _ := b.env.ReadFile(b.ctx, "new/place/moved.txt"); string(got) != "1" {
		t.Fatalf("moved content = %q", got)
	}
	if err := b.env.Rename(b.ctx, "new/place/moved.txt", "dst/exists.txt"); err != nil {
		t.Fatalf("Rename over an existing file: %v", err)
	}
	if got, _ := b.env.ReadFile(b.ctx, "dst/exists.txt"); string(got) != "1" {
		t.Fatalf("replaced content = %q", got)
	}
	if err := b.env.Remove(b.ctx, "dir"); err == nil {
		t.Fatal("Remove of a non-empty directory succeeded")
	}
	if err := b.env.Remove(b.ctx, "dir/f"); err != nil {
		t.Fatal(err)
	}
	if err := b.env.Remove(b.ctx, "dir"); err != nil {
		t.Fatalf("Remove(empty dir): %v", err)
	}
	if ok, _ := b.env.Exists(b.ctx, "dir"); ok {
		t.Fatal("dir still exists")
	}
}
