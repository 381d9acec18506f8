package snapcache_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/internal/snapcache"
)

func key(c byte) string { return strings.Repeat(string(c), 64) }

// tree makes a directory with one file of n bytes and a link.
func tree(t *testing.T, n int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "src")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "data"), make([]byte, n), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub/data", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func open(t *testing.T, dir string, max int64) *snapcache.Cache {
	t.Helper()
	c, err := snapcache.New(snapcache.Config{Dir: dir, MaxBytes: max})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestPutGet: a snapshot is a copy (links stay links, modes kept), found
// by its key and again after the cache is reopened; a second Put of a key
// keeps the first; bad keys are refused.
func TestPutGet(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "cache")
	c := open(t, dir, 1<<20)
	src := tree(t, 100)
	if err := c.Put(ctx, key('a'), src); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "sub", "data"), []byte("changed"), 0o640); err != nil {
		t.Fatal(err)
	}
	s, ok := c.Get(key('a'))
	if !ok {
		t.Fatal("no snapshot after Put")
	}
	if b, err := os.ReadFile(filepath.Join(s.Dir, "sub", "data")); err != nil || len(b) != 100 {
		t.Fatalf("the snapshot's file: %d bytes, %v; want the 100 copied before the source changed", len(b), err)
	}
	if target, err := os.Readlink(filepath.Join(s.Dir, "link")); err != nil || target != "sub/data" {
		t.Fatalf("the link: %q, %v", target, err)
	}
	if fi, err := os.Stat(filepath.Join(s.Dir, "sub", "data")); err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("the file's mode: %v %v, want 0640", fi.Mode(), err)
	}
	s.Release()
	s.Release()
	if err := c.Put(ctx, key('a'), tree(t, 5)); err != nil || c.Size() != 100 {
		t.Fatalf("a second Put of the key: %v, size %d; want the first kept (100)", err, c.Size())
	}
	if _, ok := c.Get(key('b')); ok {
		t.Fatal("a key never Put was found")
	}
	if err := c.Put(ctx, "../x", src); !errors.Is(err, snapcache.ErrBadKey) {
		t.Fatalf("Put with a bad key: %v", err)
	}
	if _, err := snapcache.New(snapcache.Config{Dir: dir, MaxBytes: 1}); err == nil {
		t.Fatal("a second cache opened the same directory")
	}
	_ = c.Close()
	c = open(t, dir, 1<<20)
	if c.Len() != 1 || c.Size() != 100 {
		t.Fatalf("reopened: %d snapshots of %d bytes, want 1 of 100", c.Len(), c.Size())
	}
}

// TestEvictsLeastRecentlyUsedButNotHeld: beyond the bound the least
// recently used snapshot goes, never one that is held.
func TestEvictsLeastRecentlyUsedButNotHeld(t *testing.T) {
	ctx := context.Background()
	c := open(t, filepath.Join(t.TempDir(), "cache"), 250)
	for _, k := range []byte{'a', 'b'} {
		if err := c.Put(ctx, key(k), tree(t, 100)); err != nil {
			t.Fatal(err)
		}
	}
	held, ok := c.Get(key('a')) // a is now the most recent, and held
	if !ok {
		t.Fatal("no a")
	}
	if err := c.Put(ctx, key('c'), tree(t, 100)); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get(key('b')); ok {
		t.Error("b, the least recently used, was kept beyond the bound")
	}
	if _, err := os.Stat(held.Dir); err != nil {
		t.Errorf("the held snapshot was removed: %v", err)
	}
	// Everything but c held: d's Put goes over the bound, removing nothing held.
	if err := c.Put(ctx, key('d'), tree(t, 100)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(held.Dir); err != nil {
		t.Errorf("the held snapshot was removed: %v", err)
	}
	held.Release()
	if c.Size() > 250 {
		t.Errorf("size %d over the bound 250 with only a held", c.Size())
	}
}

// TestLockSerialisesAKey: a second Lock of a key waits for the first's
// unlock (or its context); another key does not wait.
func TestLockSerialisesAKey(t *testing.T) {
	c := open(t, filepath.Join(t.TempDir(), "cache"), 1<<20)
	unlock, err := c.Lock(context.Background(), key('a'))
	if err != nil {
		t.Fatal(err)
	}
	other, err := c.Lock(context.Background(), key('b'))
	if err != nil {
		t.Fatal(err)
	}
	other()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Lock(ctx, key('a')); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a second Lock of a held key: %v, want it to wait until its context ends", err)
	}
	got := make(chan error, 1)
	go func() {
		u, err := c.Lock(context.Background(), key('a'))
		if err == nil {
			u()
		}
		got <- err
	}()
	unlock()
	unlock()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}
