package beneath_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentfleet/agentfleet/internal/beneath"
)

// tree makes root/{a/b, link -> /, a/up -> .., a/inner -> b, file}.
func tree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "a", "b"), 0o755))
	must(t, os.Symlink("/", filepath.Join(root, "link")))
	must(t, os.Symlink("..", filepath.Join(root, "a", "up")))
	must(t, os.Symlink("b", filepath.Join(root, "a", "inner")))
	must(t, os.WriteFile(filepath.Join(root, "file"), []byte("x"), 0o644))
	return root
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var cases = []struct {
	rel  string
	want error // nil: opens
}{
	{"", nil},
	{".", nil},
	{"a", nil},
	{"a/b", nil},
	{"./a//b/", nil},
	{"link", beneath.ErrSymlink},
	{"link/etc", beneath.ErrSymlink},
	{"a/up", beneath.ErrSymlink},
	{"a/inner", beneath.ErrSymlink},
	{"..", beneath.ErrEscape},
	{"a/../..", beneath.ErrEscape},
	{"a/../b", beneath.ErrEscape},
	{"/etc", beneath.ErrEscape},
}

func TestOpenDir(t *testing.T) {
	for _, mode := range beneath.Resolvers {
		t.Run(mode.Name, func(t *testing.T) {
			mode.Set(t)
			root := tree(t)
			for _, c := range cases {
				f, err := beneath.OpenDir(root, c.rel)
				if c.want == nil {
					if err != nil {
						t.Errorf("OpenDir(%q) = %v, want it opened", c.rel, err)
						continue
					}
					_ = f.Close()
					continue
				}
				if !errors.Is(err, c.want) {
					t.Errorf("OpenDir(%q) = %v, want %v", c.rel, err, c.want)
				}
				if f != nil {
					t.Errorf("OpenDir(%q) returned a file with its error", c.rel)
				}
			}
			if _, err := beneath.OpenDir(root, "file"); err == nil {
				t.Error("OpenDir of a regular file succeeded")
			}
			if _, err := beneath.OpenDir(root, "missing"); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("OpenDir of a missing directory = %v, want ErrNotExist", err)
			}
		})
	}
}

func TestMkdirAll(t *testing.T) {
	for _, mode := range beneath.Resolvers {
		t.Run(mode.Name, func(t *testing.T) {
			mode.Set(t)
			root := tree(t)
			f, err := beneath.MkdirAll(root, "a/new/deeper", 0o755)
			if err != nil {
				t.Fatalf("MkdirAll: %v", err)
			}
			_ = f.Close()
			if fi, err := os.Lstat(filepath.Join(root, "a", "new", "deeper")); err != nil || !fi.IsDir() {
				t.Fatalf("a/new/deeper was not created: %v", err)
			}
			for _, rel := range []string{"link/tmp/x", "a/up/x", "../x", "/tmp/x"} {
				if f, err := beneath.MkdirAll(root, rel, 0o755); err == nil {
					_ = f.Close()
					t.Errorf("MkdirAll(%q) succeeded, want it refused", rel)
				}
			}
		})
	}
}

// TestOpenedDirStaysPut shows why callers keep the file: a directory
// swapped for a link after it was opened does not move the opened one.
func TestOpenedDirStaysPut(t *testing.T) {
	root := tree(t)
	f, err := beneath.OpenDir(root, "a/b")
	must(t, err)
	defer func() { _ = f.Close() }()
	must(t, os.Rename(filepath.Join(root, "a", "b"), filepath.Join(root, "a", "moved")))
	must(t, os.Symlink("/", filepath.Join(root, "a", "b")))
	must(t, os.WriteFile(filepath.Join(root, "a", "moved", "marker"), nil, 0o644))
	names, err := f.Readdirnames(-1)
	must(t, err)
	if len(names) != 1 || names[0] != "marker" {
		t.Fatalf("the opened directory lists %v, want [marker]", names)
	}
}

func TestRel(t *testing.T) {
	for _, c := range []struct{ root, path, want string }{
		{"/w", "/w/a/b", "a/b"},
		{"/w", "/w", "."},
		{"/w", "a/b", "a/b"},
		{"/w/", "/w/./a/../c", "c"},
	} {
		got, err := beneath.Rel(c.root, c.path)
		if err != nil || got != c.want {
			t.Errorf("Rel(%q, %q) = %q, %v; want %q", c.root, c.path, got, err, c.want)
		}
	}
	for _, p := range []string{"/", "/wx", "/w/../etc", "/etc"} {
		if _, err := beneath.Rel("/w", p); !errors.Is(err, beneath.ErrEscape) {
			t.Errorf("Rel(/w, %q) = %v, want ErrEscape", p, err)
		}
	}
}

// TestLstat: a file, a directory and a link in an opened directory are
// told apart without following the link; a path is not one name.
func TestLstat(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "f"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "d"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("f", filepath.Join(root, "l")); err != nil {
		t.Fatal(err)
	}
	dir, err := beneath.OpenDir(root, ".")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = dir.Close() }()
	for name, want := range map[string]func(os.FileMode) bool{
		"f": os.FileMode.IsRegular,
		"d": os.FileMode.IsDir,
		"l": func(m os.FileMode) bool { return m&os.ModeSymlink != 0 },
	} {
		if m, err := beneath.Lstat(dir, name); err != nil || !want(m) {
			t.Errorf("Lstat %s: %v %v", name, m, err)
		}
	}
	for _, bad := range []string{"", "..", "d/f", "missing"} {
		if _, err := beneath.Lstat(dir, bad); err == nil {
			t.Errorf("Lstat %q: no error", bad)
		}
	}
}
