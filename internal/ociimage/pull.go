package ociimage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// ParseRef checks that ref is an image reference (registry/name:tag or
// registry/name@sha256:...) and returns its canonical form, with the
// default registry and tag filled in.
func ParseRef(ref string) (string, error) {
	r, err := parseRef(ref)
	if err != nil {
		return "", err
	}
	return r.Name(), nil
}

// Registry is the registry host of ref ("index.docker.io" for a name
// without one), or "" when ref is not a reference.
func Registry(ref string) string {
	r, err := parseRef(ref)
	if err != nil {
		return ""
	}
	return r.Context().RegistryStr()
}

// Repository is ref's registry and repository, without tag or digest
// ("index.docker.io/library/golang" for "golang:1.22"), or "" when ref
// is not a reference.
func Repository(ref string) string {
	r, err := parseRef(ref)
	if err != nil {
		return ""
	}
	return r.Context().Name()
}

// ErrBadImage marks a failure the image itself causes, which pulling
// again would not cure: a bad reference, a layer unpacking refuses, an
// image larger than the cache.
var ErrBadImage = errors.New("a bad image")

func parseRef(ref string) (name.Reference, error) {
	r, err := name.ParseReference(ref)
	if err != nil || strings.Contains(ref, "://") {
		return nil, fmt.Errorf("ociimage: %q is not an image reference (write registry/name:tag or registry/name@sha256:<64 hex digits>): %w", ref, ErrBadImage)
	}
	return r, nil
}

// digestOf is the digest a reference names, if it names one.
func digestOf(r name.Reference) (string, bool) {
	d, ok := r.(name.Digest)
	if !ok {
		return "", false
	}
	return d.DigestStr(), true
}

// puller fetches one reference.
type puller struct {
	c    *Cache
	ref  name.Reference
	auth authn.Authenticator
}

// resolved is what a reference leads to: the image of this platform,
// and the index's digest when the reference named an index.
type resolved struct {
	digest, alias string
	img           v1.Image
}

func (c *Cache) puller(r name.Reference, auth *Auth) *puller {
	a := authn.Anonymous
	if auth != nil {
		a = authn.FromConfig(authn.AuthConfig{Username: auth.Username, Password: auth.Password})
	}
	return &puller{c: c, ref: r, auth: a}
}

func (p *puller) options(ctx context.Context) []remote.Option {
	return []remote.Option{remote.WithContext(ctx), remote.WithAuth(p.auth), remote.WithTransport(p.c.transport),
		remote.WithPlatform(v1.Platform{OS: "linux", Architecture: runtime.GOARCH}), remote.WithUserAgent("agentfleet")}
}

// resolve asks the registry for the reference's manifest (checked
// against its digest when it names one) and, for an index, this
// platform's image manifest: no blob is fetched.
func (p *puller) resolve(ctx context.Context) (resolved, error) {
	desc, err := remote.Get(p.ref, p.options(ctx)...)
	if err != nil {
		return resolved{}, fmt.Errorf("ociimage: resolving %s: %w", p.ref.Name(), err)
	}
	img, err := desc.Image()
	if err != nil {
		return resolved{}, fmt.Errorf("ociimage: %s: %w", p.ref.Name(), err)
	}
	d, err := img.Digest()
	if err != nil {
		return resolved{}, fmt.Errorf("ociimage: %s: %w", p.ref.Name(), err)
	}
	r := resolved{digest: d.String(), img: img}
	if desc.Digest != d {
		r.alias = desc.Digest.String()
	}
	return r, nil
}

// pullAndAdd fetches the blobs of r that are missing, unpacks its layers
// into a fresh root file system and adds it to the cache.
func (c *Cache) pullAndAdd(ctx context.Context, p *puller, r resolved) error {
	tmp, err := os.MkdirTemp(c.path("tmp"), "image-")
	if err != nil {
		return fmt.Errorf("ociimage: %w", err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	e, err := c.unpack(ctx, r, tmp)
	if err != nil {
		return fmt.Errorf("ociimage: pulling %s (%s): %w", p.ref.Name(), r.digest, err)
	}
	if err := c.add(e, tmp); err != nil {
		return fmt.Errorf("ociimage: adding %s to the cache: %w", r.digest, err)
	}
	return nil
}

func (c *Cache) unpack(ctx context.Context, r resolved, tmp string) (*entry, error) {
	cf, err := r.img.ConfigFile() // checked against the manifest's digest
	if err != nil {
		return nil, fmt.Errorf("reading its configuration: %w", err)
	}
	layers, err := r.img.Layers()
	if err != nil {
		return nil, err
	}
	rootDir := filepath.Join(tmp, "rootfs")
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, err
	}
	if err := os.Mkdir(rootDir, 0o755); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(rootDir)
	if err != nil {
		return nil, err
	}
	defer func() { _ = root.Close() }()
	e := &entry{Digest: r.digest, Env: cf.Config.Env, WorkingDir: cf.Config.WorkingDir, User: cf.Config.User}
	if r.alias != "" {
		e.Aliases = []string{r.alias}
	}
	for i, l := range layers {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d, err := l.Digest()
		if err != nil {
			return nil, err
		}
		blob, err := c.blob(l, d.String())
		if err != nil {
			return nil, fmt.Errorf("layer %d (%s): %w", i+1, d, err)
		}
		n, err := applyFile(root, blob, c.cfg.MaxBytes-e.Size)
		e.Size += n
		if errors.Is(err, errTooLarge) {
			return nil, fmt.Errorf("%w: its root file system is larger than the cache's bound of %d bytes: raise image_cache.max_size or name a smaller image", ErrBadImage, c.cfg.MaxBytes)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: layer %d (%s): %v", ErrBadImage, i+1, d, err)
		}
		e.Layers = append(e.Layers, d.String())
	}
	return e, nil
}

func applyFile(root *os.Root, file string, limit int64) (int64, error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	return applyLayer(root, f, limit)
}

// blob is the file of layer l's compressed blob (digest), fetched into
// blobs/ when missing and kept only once it was read whole and matched
// its digest.
func (c *Cache) blob(l v1.Layer, digest string) (string, error) {
	file := c.path("blobs", hexOf(digest))
	c.mu.Lock()
	_, ok := c.blobs[digest]
	c.mu.Unlock()
	if ok {
		if _, err := os.Stat(file); err == nil {
			return file, nil
		}
	}
	if size, err := l.Size(); err == nil && size > c.cfg.MaxBytes {
		return "", fmt.Errorf("%w: its %d bytes exceed the cache's bound of %d bytes", ErrBadImage, size, c.cfg.MaxBytes)
	}
	rc, err := l.Compressed() // checks the digest and size as it is read
	if err != nil {
		return "", err
	}
	defer func() { _ = rc.Close() }()
	f, err := os.CreateTemp(c.path("tmp"), "blob-")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.Remove(f.Name()) }()
	n, err := io.Copy(f, rc)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("fetching: %w", err)
	}
	if err := os.Rename(f.Name(), file); err != nil {
		return "", err
	}
	c.mu.Lock()
	c.blobs[digest] = n
	c.mu.Unlock()
	return file, nil
}
