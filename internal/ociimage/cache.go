package ociimage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentfleet/agentfleet/internal/dirlock"
	"github.com/agentfleet/agentfleet/internal/outbound"
)

// DefaultMaxBytes bounds a cache whose Config sets no MaxBytes: 20 GiB.
const DefaultMaxBytes int64 = 20 << 30

// Config says where a Cache lives and how it reaches registries.
type Config struct {
	// Dir is the cache's directory, made if missing (mode 0755: sandboxes
	// started as other uids read the root file systems under it).
	Dir string
	// MaxBytes bounds the blobs and root file systems together; 0 means
	// DefaultMaxBytes.
	MaxBytes int64
	// AllowPrivate are the internal addresses registries may have (the
	// operator's outbound_allow_private); every other address that is not
	// public unicast is refused.
	AllowPrivate []netip.Prefix
	// Transport, when set, is used instead of outbound.Transport: tests
	// that count requests wrap the guard's.
	Transport http.RoundTripper
	// Now is the clock of the least-recently-used order; nil: time.Now.
	Now func() time.Time
}

// Auth are the credentials of a registry (a token is a password).
type Auth struct {
	Username, Password string
}

// Image is one unpacked image a task holds: its Root is read-only and
// stays until Release.
type Image struct {
	// Ref is the reference as Acquire was given it, in canonical form
	// (registry and tag filled in); Digest is the image manifest's
	// ("sha256:..."), the cache's key.
	Ref    string
	Digest string
	// Root is the root file system's directory.
	Root string
	// Env is the image's environment ("KEY=value"), such as its PATH;
	// WorkingDir and User are what its configuration says (the sandbox
	// keeps its own user and working directory).
	Env        []string
	WorkingDir string
	User       string

	release func()
	once    sync.Once
}

// Release says the task no longer uses the image: it may be evicted.
// Safe to call more than once.
func (im *Image) Release() {
	if im != nil && im.release != nil {
		im.once.Do(im.release)
	}
}

// entry is one image of the cache, as image.json keeps it.
type entry struct {
	Digest     string    `json:"digest"`
	Aliases    []string  `json:"aliases,omitempty"` // digests of indexes that resolved to it
	Layers     []string  `json:"layers"`            // blob digests, in order (blobs may be gone)
	Size       int64     `json:"size"`              // of the root file system
	Env        []string  `json:"env,omitempty"`
	WorkingDir string    `json:"working_dir,omitempty"`
	User       string    `json:"user,omitempty"`
	Used       time.Time `json:"-"` // image.json's modification time
	users      int
}

// Cache is a content-addressed cache of unpacked images; it is safe for
// concurrent use.
type Cache struct {
	cfg       Config
	transport http.RoundTripper

	lock *os.File // Dir, locked while the Cache is open

	mu       sync.Mutex
	images   map[string]*entry        // by digest
	aliases  map[string]string        // index digest -> image digest
	blobs    map[string]int64         // blob digest -> size
	inflight map[string]chan struct{} // digests being pulled
}

// New opens (or makes) the cache at cfg.Dir, removing what an earlier
// process left half done.
func New(cfg Config) (*Cache, error) {
	if !filepath.IsAbs(cfg.Dir) {
		return nil, fmt.Errorf("ociimage: the cache directory %q must be an absolute path", cfg.Dir)
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.MaxBytes < 0 {
		return nil, fmt.Errorf("ociimage: the cache's size bound %d must be positive", cfg.MaxBytes)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	c := &Cache{cfg: cfg, transport: cfg.Transport, images: map[string]*entry{}, aliases: map[string]string{},
		blobs: map[string]int64{}, inflight: map[string]chan struct{}{}}
	if c.transport == nil {
		c.transport = outbound.Transport(outbound.Policy{Allow: outbound.AnyURL(), AllowPrivate: cfg.AllowPrivate})
	}
	if err := os.MkdirAll(c.path(), 0o755); err != nil {
		return nil, fmt.Errorf("ociimage: making the cache directory: %w", err)
	}
	var err error
	if c.lock, err = dirlock.Lock(c.path()); err != nil {
		return nil, fmt.Errorf("ociimage: the cache directory %s is in use by another process or Cache (give each worker its own image_cache.dir): %w", cfg.Dir, err)
	}
	if err := os.RemoveAll(c.path("tmp")); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("ociimage: clearing %s: %w", c.path("tmp"), err)
	}
	for _, d := range []string{"tmp", "blobs", "images"} {
		if err := os.MkdirAll(c.path(d), 0o755); err != nil {
			_ = c.Close()
			return nil, fmt.Errorf("ociimage: making the cache directory: %w", err)
		}
	}
	if err := os.Chmod(c.path("blobs"), 0o700); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("ociimage: %w", err)
	}
	if err := c.load(); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// Close lets another Cache open the directory. Images still held stay
// on disk; the Cache must not be used after.
func (c *Cache) Close() error { return c.lock.Close() }

func (c *Cache) path(parts ...string) string {
	return filepath.Join(append([]string{c.cfg.Dir}, parts...)...)
}

// hexOf is the hex part of a "sha256:..." digest, the name on disk.
func hexOf(digest string) string { return strings.TrimPrefix(digest, "sha256:") }

// load reads the blobs and images on disk; an image without its
// image.json (a crash while it was being committed) is removed.
func (c *Cache) load() error {
	blobs, err := os.ReadDir(c.path("blobs"))
	if err != nil {
		return fmt.Errorf("ociimage: %w", err)
	}
	for _, b := range blobs {
		if fi, err := b.Info(); err == nil && fi.Mode().IsRegular() {
			c.blobs["sha256:"+b.Name()] = fi.Size()
		}
	}
	dirs, err := os.ReadDir(c.path("images"))
	if err != nil {
		return fmt.Errorf("ociimage: %w", err)
	}
	for _, d := range dirs {
		e, err := readEntry(c.path("images", d.Name(), "image.json"))
		if err != nil || hexOf(e.Digest) != d.Name() {
			_ = os.RemoveAll(c.path("images", d.Name()))
			continue
		}
		c.images[e.Digest] = e
		for _, a := range e.Aliases {
			c.aliases[a] = e.Digest
		}
	}
	return nil
}

func readEntry(file string) (*entry, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var e entry
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(file); err == nil {
		e.Used = fi.ModTime()
	}
	return &e, nil
}

// Size is what the cache holds now, in bytes: blobs and root file systems.
func (c *Cache) Size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sizeLocked()
}

func (c *Cache) sizeLocked() int64 {
	var n int64
	for _, s := range c.blobs {
		n += s
	}
	for _, e := range c.images {
		n += e.Size
	}
	return n
}

// Cached reports whether the image of digest is unpacked in the cache.
func (c *Cache) Cached(digest string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.images[digest]
	return ok
}

// Acquire returns the image ref names, unpacked, held until its Release:
// from the cache when it is there, else pulled with auth (nil:
// anonymous) and unpacked first.
func (c *Cache) Acquire(ctx context.Context, ref string, auth *Auth) (*Image, error) {
	r, err := parseRef(ref)
	if err != nil {
		return nil, err
	}
	if d, ok := digestOf(r); ok {
		if im := c.hold(d); im != nil {
			im.Ref = r.Name()
			return im, nil
		}
	}
	p := c.puller(r, auth)
	desc, err := p.resolve(ctx)
	if err != nil {
		return nil, err
	}
	for {
		if im := c.hold(desc.digest); im != nil {
			im.Ref = r.Name()
			return im, nil
		}
		wait, mine := c.startPull(desc.digest)
		if !mine {
			select {
			case <-wait:
				continue // pulled (or failed) by another: look again
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		err = c.pullAndAdd(ctx, p, desc)
		c.endPull(desc.digest)
		if err != nil {
			return nil, err
		}
	}
}

// hold marks the image of digest (an image's or an alias) used and
// returns it, or nil when it is not cached.
func (c *Cache) hold(digest string) *Image {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.aliases[digest]; ok {
		digest = d
	}
	e, ok := c.images[digest]
	if !ok {
		return nil
	}
	e.users++
	e.Used = c.cfg.Now()
	_ = os.Chtimes(c.path("images", hexOf(digest), "image.json"), e.Used, e.Used)
	return &Image{Digest: e.Digest, Root: c.path("images", hexOf(e.Digest), "rootfs"), Env: e.Env,
		WorkingDir: e.WorkingDir, User: e.User, release: func() { c.release(e) }}
}

func (c *Cache) release(e *entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.users--
	c.evictLocked("")
}

// startPull registers a pull of digest: mine says the caller pulls it;
// otherwise wait is closed when the other pull ends.
func (c *Cache) startPull(digest string) (wait chan struct{}, mine bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w, ok := c.inflight[digest]; ok {
		return w, false
	}
	c.inflight[digest] = make(chan struct{})
	return nil, true
}

func (c *Cache) endPull(digest string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	close(c.inflight[digest])
	delete(c.inflight, digest)
}

// add commits e (unpacked in tmpDir) as images/<hex> and evicts what the
// bound asks, never e itself.
func (c *Cache) add(e *entry, tmpDir string) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmpDir, "image.json"), b, 0o644); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := os.Rename(tmpDir, c.path("images", hexOf(e.Digest))); err != nil {
		return err
	}
	e.Used = c.cfg.Now()
	c.images[e.Digest] = e
	for _, a := range e.Aliases {
		c.aliases[a] = e.Digest
	}
	c.evictLocked(e.Digest)
	return nil
}

// evictLocked brings the cache within its bound: first the blobs go (a
// download cache only: the root file systems are what tasks use), unless
// a pull is under way, then the least recently used images no task holds
// (never keep).
func (c *Cache) evictLocked(keep string) {
	if c.sizeLocked() <= c.cfg.MaxBytes {
		return
	}
	if len(c.inflight) == 0 { // a pull may be about to use any blob
		for d := range c.blobs {
			if err := os.Remove(c.path("blobs", hexOf(d))); err == nil || errors.Is(err, os.ErrNotExist) {
				delete(c.blobs, d)
			}
		}
	}
	var idle []*entry
	for _, e := range c.images {
		if e.users == 0 && e.Digest != keep {
			idle = append(idle, e)
		}
	}
	sort.Slice(idle, func(i, j int) bool { return idle[i].Used.Before(idle[j].Used) })
	for _, e := range idle {
		if c.sizeLocked() <= c.cfg.MaxBytes {
			return
		}
		if err := os.RemoveAll(c.path("images", hexOf(e.Digest))); err != nil {
			continue
		}
		delete(c.images, e.Digest)
		for _, a := range e.Aliases {
			delete(c.aliases, a)
		}
	}
}
