package snapcache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentfleet/agentfleet/internal/dirlock"
)

// Config is a cache's directory and size bound.
type Config struct {
	Dir      string // absolute; made if missing
	MaxBytes int64  // > 0
}

// Cache is a directory of snapshots; see the package doc.
type Cache struct {
	cfg  Config
	lock *os.File

	mu      sync.Mutex
	entries map[string]*entry
	making  map[string]chan struct{} // keys being made (Lock), each a 1-slot semaphore
	seq     int
}

type entry struct {
	size  int64
	used  time.Time
	holds int
}

// Snapshot is a held snapshot: Dir is its directory, to read from only,
// until Release.
type Snapshot struct {
	Dir string
	c   *Cache
	key string
	rel sync.Once
}

// Release lets the snapshot be evicted again; it is safe twice.
func (s *Snapshot) Release() {
	s.rel.Do(func() {
		s.c.mu.Lock()
		defer s.c.mu.Unlock()
		if e := s.c.entries[s.key]; e != nil {
			e.holds--
		}
	})
}

// New opens (or makes) the cache at cfg.Dir.
func New(cfg Config) (*Cache, error) {
	if !filepath.IsAbs(cfg.Dir) {
		return nil, fmt.Errorf("snapcache: the directory %q must be an absolute path", cfg.Dir)
	}
	if cfg.MaxBytes <= 0 {
		return nil, fmt.Errorf("snapcache: the size bound %d must be positive", cfg.MaxBytes)
	}
	c := &Cache{cfg: cfg, entries: map[string]*entry{}, making: map[string]chan struct{}{}}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("snapcache: %w", err)
	}
	var err error
	if c.lock, err = dirlock.Lock(cfg.Dir); err != nil {
		return nil, fmt.Errorf("snapcache: %s is in use by another process (give each worker its own directory): %w", cfg.Dir, err)
	}
	if err := c.reset(); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// reset clears tmp and reads the snapshots there are.
func (c *Cache) reset() error {
	if err := os.RemoveAll(c.path("tmp")); err != nil {
		return fmt.Errorf("snapcache: clearing %s: %w", c.path("tmp"), err)
	}
	for _, d := range []string{"tmp", "snap"} {
		if err := os.MkdirAll(c.path(d), 0o755); err != nil {
			return fmt.Errorf("snapcache: %w", err)
		}
	}
	list, err := os.ReadDir(c.path("snap"))
	if err != nil {
		return fmt.Errorf("snapcache: %w", err)
	}
	for _, d := range list {
		info, err := d.Info()
		if err != nil || !d.IsDir() || checkKey(d.Name()) != nil {
			continue
		}
		c.entries[d.Name()] = &entry{size: dirSize(c.path("snap", d.Name())), used: info.ModTime()}
	}
	return nil
}

// Close lets another Cache open the directory; c must not be used after.
func (c *Cache) Close() error { return c.lock.Close() }

func (c *Cache) path(parts ...string) string {
	return filepath.Join(append([]string{c.cfg.Dir}, parts...)...)
}

// Get holds the snapshot of key, marking it used; ok is false when there
// is none.
func (c *Cache) Get(key string) (s *Snapshot, ok bool) {
	if checkKey(key) != nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[key]
	if e == nil {
		return nil, false
	}
	e.holds++
	e.used = time.Now()
	_ = os.Chtimes(c.path("snap", key), e.used, e.used)
	return &Snapshot{Dir: c.path("snap", key), c: c, key: key}, true
}

// Put copies the directory src as key's snapshot (replacing none: a key
// that has one keeps it), then evicts down to the bound.
func (c *Cache) Put(ctx context.Context, key, src string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	c.mu.Lock()
	c.seq++
	tmp := c.path("tmp", fmt.Sprintf("%s.%d", key, c.seq))
	c.mu.Unlock()
	defer func() { _ = os.RemoveAll(tmp) }()
	if err := CopyTree(ctx, src, tmp); err != nil {
		return err
	}
	size := dirSize(tmp)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries[key] != nil {
		return nil
	}
	if err := os.Rename(tmp, c.path("snap", key)); err != nil {
		return fmt.Errorf("snapcache: %w", err)
	}
	c.entries[key] = &entry{size: size, used: time.Now()}
	c.evictLocked(key)
	return nil
}

// Lock waits until no one else makes key's snapshot and claims it;
// unlock (safe twice) gives it back.
func (c *Cache) Lock(ctx context.Context, key string) (unlock func(), err error) {
	c.mu.Lock()
	sem := c.making[key]
	if sem == nil {
		sem = make(chan struct{}, 1)
		c.making[key] = sem
	}
	c.mu.Unlock()
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	var once sync.Once
	return func() { once.Do(func() { <-sem }) }, nil
}

// Size is the apparent size of the snapshots held on disk.
func (c *Cache) Size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sizeLocked()
}

// Len is the number of snapshots.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

func (c *Cache) sizeLocked() int64 {
	var n int64
	for _, e := range c.entries {
		n += e.size
	}
	return n
}

// evictLocked removes the least recently used snapshots no one holds,
// but keep, until the cache is within its bound.
func (c *Cache) evictLocked(keep string) {
	size := c.sizeLocked()
	if size <= c.cfg.MaxBytes {
		return
	}
	var idle []string
	for k, e := range c.entries {
		if e.holds == 0 && k != keep {
			idle = append(idle, k)
		}
	}
	sort.Slice(idle, func(i, j int) bool { return c.entries[idle[i]].used.Before(c.entries[idle[j]].used) })
	for _, k := range idle {
		if size <= c.cfg.MaxBytes {
			return
		}
		if err := os.RemoveAll(c.path("snap", k)); err == nil {
			size -= c.entries[k].size
			delete(c.entries, k)
		}
	}
}

// ErrBadKey marks a key that is not a hex string of 16 to 128 digits.
var ErrBadKey = errors.New("snapcache: a key must be 16 to 128 lowercase hex digits")

func checkKey(k string) error {
	if len(k) < 16 || len(k) > 128 || strings.Trim(k, "0123456789abcdef") != "" {
		return ErrBadKey
	}
	return nil
}

// CopyTree copies the directory src to dst (which must not exist) with
// `cp -a --reflink=auto`: links stay links, modes, times and, where the
// caller may, owners are kept; data is shared where the file system can.
func CopyTree(ctx context.Context, src, dst string) error {
	cmd := exec.CommandContext(ctx, "cp", "-a", "--reflink=auto", "--", src, dst)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("snapcache: copying %s: %v: %s", src, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// dirSize is the sum of the lengths of the regular files under dir.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
