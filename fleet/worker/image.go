package worker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/agentfleet/agentfleet/fleet/internal/tasksandbox"
	"github.com/agentfleet/agentfleet/internal/bytesize"
	"github.com/agentfleet/agentfleet/internal/ociimage"
	"github.com/agentfleet/agentfleet/internal/outbound"
)

// A local task whose spec names environment.image (or that the worker's
// policy.images.default gives one) runs its commands in that image: the
// worker pulls it into its image cache (internal/ociimage) before the
// task's environment is built, holds it while the task runs, and gives
// the sandbox its root file system (tasksandbox.State.WithImage). The
// spec's image was checked against policy.images with the rest of the
// policy (checkPolicy); the default is the operator's own.
//
// An image that cannot be had fails the task: one the registry does not
// have or refuses (401, 403, 404), a bad reference or unknown credentials
// as a bad environment, a registry the outbound guard refuses as not
// allowed; anything else (the registry does not answer) hands the task
// back for another try.

// DefaultImageCacheMaxSize is image_cache.max_size's default.
const DefaultImageCacheMaxSize = "20GiB"

// ImageCacheConfig is image_cache: where environment images are unpacked,
// how large that cache may grow, and the registry credentials specs name.
type ImageCacheConfig struct {
	// Dir is the cache's directory (default $TMPDIR/agentfleet-images),
	// this worker's alone: the cache locks it (several workers on one
	// host each need their own).
	// Sandboxes of other uids read the images there: it and every
	// directory above it must be searchable (0755 or 0711) unless the
	// worker is root with mount namespaces (execenv/sandbox "Users").
	Dir string `mapstructure:"dir"`
	// MaxSize bounds the cache ("20GiB", the default): the least recently
	// used images no task holds are removed beyond it.
	MaxSize string `mapstructure:"max_size"`
	// Credentials maps the names specs give in
	// environment.image_credentials to credentials on this worker.
	Credentials map[string]RegistryCredential `mapstructure:"credentials"`
}

// RegistryCredential is what an image_credentials name resolves to: a
// username and a password (or token) read at each pull, sent only to
// Registry (and to the token service it names).
type RegistryCredential struct {
	Registry     string `mapstructure:"registry"` // host or host:port, as in references
	Username     string `mapstructure:"username"`
	PasswordFile string `mapstructure:"password_file"`
	PasswordEnv  string `mapstructure:"password_env"`
}

func (c ImageCacheConfig) dir() string {
	if c.Dir == "" {
		return filepath.Join(os.TempDir(), "agentfleet-images")
	}
	return c.Dir
}

func (c ImageCacheConfig) maxBytes() (int64, error) {
	return cacheMaxBytes("image_cache.max_size", c.MaxSize, DefaultImageCacheMaxSize)
}

// cacheMaxBytes parses a cache's max_size setting (key names it in the
// error), def when it is empty; it must be positive.
func cacheMaxBytes(key, size, def string) (int64, error) {
	s := size
	if s == "" {
		s = def
	}
	n, err := bytesize.Parse(s)
	if err == nil && n <= 0 {
		err = errors.New("must be positive")
	}
	if err != nil {
		return 0, fmt.Errorf("%s %q is not a size such as 20GiB: %v", key, size, err)
	}
	return n, nil
}

// Validate names a bad key of image_cache.
func (c ImageCacheConfig) Validate() error {
	var errs []error
	if !filepath.IsAbs(c.dir()) {
		errs = append(errs, fmt.Errorf("image_cache.dir must be an absolute path, got %q", c.Dir))
	}
	if _, err := c.maxBytes(); err != nil {
		errs = append(errs, err)
	}
	for name, cred := range c.Credentials {
		key := "image_cache.credentials." + name
		switch {
		case cred.Registry == "" || strings.ContainsAny(cred.Registry, "/@ "):
			errs = append(errs, fmt.Errorf("%s.registry %q must be the registry's host (ghcr.io, registry.example.com:5000)", key, cred.Registry))
		case (cred.PasswordFile == "") == (cred.PasswordEnv == ""):
			errs = append(errs, fmt.Errorf("%s needs exactly one of password_file and password_env", key))
		}
	}
	return errors.Join(errs...)
}

// auth resolves the credentials named name for ref: nil for none; an
// unknown name, or credentials of another registry, are refused.
func (c ImageCacheConfig) auth(name, ref string) (*ociimage.Auth, error) {
	if name == "" {
		return nil, nil
	}
	cred, ok := c.Credentials[name]
	if !ok {
		return nil, fmt.Errorf("%w: environment.image_credentials %q is not configured on this worker (image_cache.credentials)", errBadEnvironment, name)
	}
	if reg := ociimage.Registry(ref); !strings.EqualFold(reg, cred.Registry) && ociimage.Registry(cred.Registry+"/x") != reg {
		return nil, fmt.Errorf("%w: image credentials %q are for %s, not for %s", errNotAllowed, name, cred.Registry, reg)
	}
	var secret []byte
	var err error
	if cred.PasswordFile != "" {
		secret, err = os.ReadFile(cred.PasswordFile)
	} else if v, ok := os.LookupEnv(cred.PasswordEnv); ok {
		secret = []byte(v)
	} else {
		err = fmt.Errorf("$%s is not set", cred.PasswordEnv)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: reading image credentials %q: %v", errBadEnvironment, name, err)
	}
	return &ociimage.Auth{Username: cred.Username, Password: strings.TrimSpace(string(secret))}, nil
}

// taskImage is an image a task holds (run.image).
type taskImage = ociimage.Image

// workerImages is the worker's image cache, opened at the first task
// that needs it.
type workerImages struct {
	once  sync.Once
	cache *ociimage.Cache
	err   error
}

func (w *Worker) imageCache() (*ociimage.Cache, error) {
	w.images.once.Do(func() {
		max, err := w.cfg.ImageCache.maxBytes()
		if err == nil {
			w.images.cache, err = ociimage.New(ociimage.Config{Dir: w.cfg.ImageCache.dir(), MaxBytes: max, AllowPrivate: w.cfg.allowPrivate()})
		}
		w.images.err = err
	})
	return w.images.cache, w.images.err
}

// acquireImage pulls (or finds cached) the task's image, if it has one,
// and holds it in r.image until closeEnv.
func (r *run) acquireImage(ctx context.Context) error {
	ref := r.w.cfg.Policy.Images.ImageFor(r.spec)
	if ref == "" {
		return nil
	}
	auth, err := r.w.cfg.ImageCache.auth(r.spec.Environment.ImageCredentials, ref)
	if err != nil {
		return err
	}
	cache, err := r.w.imageCache()
	if err != nil {
		return fmt.Errorf("the image cache: %w", err)
	}
	im, err := cache.Acquire(ctx, ref, auth)
	if err != nil {
		return imageError(ref, err)
	}
	r.image = im
	r.log.Info("environment image", "image", ref, "digest", im.Digest)
	return nil
}

// imageError classifies a failed pull (see the comment at the top).
func imageError(ref string, err error) error {
	var refused *outbound.RefusedError
	var terr *transport.Error
	switch {
	case errors.As(err, &refused):
		return fmt.Errorf("%w: environment.image %s: %v (outbound_allow_private admits a registry on an internal address)", errNotAllowed, ref, err)
	case errors.As(err, &terr) && (terr.StatusCode == http.StatusNotFound || terr.StatusCode == http.StatusUnauthorized || terr.StatusCode == http.StatusForbidden):
		return fmt.Errorf("%w: environment.image %s: %v", errBadEnvironment, ref, err)
	case errors.Is(err, ociimage.ErrBadImage):
		return fmt.Errorf("%w: environment.image %s: %v", errBadEnvironment, ref, err)
	}
	return fmt.Errorf("environment.image %s: %w", ref, err)
}

// imageLabel is the sandbox's label (TaskResult.Sandbox) with the task's
// image, by digest: "bwrap, network none, image ghcr.io/acme/app@sha256:...".
func (r *run) imageLabel(label string) string {
	if r.image == nil {
		return label
	}
	return label + ", image " + ociimage.Repository(r.image.Ref) + "@" + r.image.Digest
}

// sandboxState is the worker's sandbox, with the task's image if it has
// one.
func (r *run) sandboxState() tasksandbox.State {
	if r.image == nil {
		return r.w.sandbox
	}
	return r.w.sandbox.WithImage(&tasksandbox.Image{Root: r.image.Root, Env: r.image.Env})
}
