package fleet

import (
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// ImagePolicy is the operator's bound on environment.image (policy.images):
// which registries and repositories a spec may name, and the image of a
// local task that names none. The zero value allows no image: tasks run on
// the worker's own system directories, as without images.
type ImagePolicy struct {
	// Allow are the images a spec may name. Each entry is a registry
	// ("ghcr.io", "127.0.0.1:5000": any repository there), a repository or
	// a prefix of one on whole path components ("golang" is Docker Hub's
	// library/golang; "ghcr.io/acme" covers ghcr.io/acme/app, not
	// ghcr.io/acme-evil), or one image by tag or digest ("golang:1.22",
	// "ghcr.io/acme/app@sha256:...").
	Allow []string `mapstructure:"allow" json:"allow,omitempty"`
	// Default is the image of a local task whose spec names none (the
	// dispatcher writes it into the spec at submission; a worker applies
	// its own to a spec that still has none). "" leaves such tasks on the
	// worker's system directories. The default need not be in Allow.
	Default string `mapstructure:"default" json:"default,omitempty"`
}

// imageRule is one Allow entry, parsed.
type imageRule struct {
	registry string // the whole registry
	repo     string // a repository prefix
	ref      string // one reference (tag or digest)
}

// rules parses Allow, naming a bad entry under key.
func (p ImagePolicy) rules(key string) ([]imageRule, error) {
	out := make([]imageRule, 0, len(p.Allow))
	for i, a := range p.Allow {
		r, ok := parseImageRule(a)
		if !ok {
			return nil, fmt.Errorf("%s.allow[%d] %q is not a registry (ghcr.io), repository (ghcr.io/acme/app) or image (golang:1.22)", key, i, a)
		}
		out = append(out, r)
	}
	return out, nil
}

func parseImageRule(a string) (imageRule, bool) {
	a = strings.TrimSuffix(a, "/")
	if a == "" || strings.Contains(a, "://") {
		return imageRule{}, false
	}
	if host, _, _ := strings.Cut(a, ":"); !strings.ContainsAny(a, "/@") && (strings.Contains(host, ".") || host == "localhost") &&
		(host == a || isHostPort(a)) {
		if reg, err := name.NewRegistry(a); err == nil {
			return imageRule{registry: reg.Name()}, true
		}
	}
	if strings.Contains(a, "@") || strings.Contains(a[strings.LastIndex(a, "/")+1:], ":") { // a tag or digest
		if ref, err := name.ParseReference(a); err == nil {
			return imageRule{ref: ref.Name()}, true
		}
		return imageRule{}, false
	}
	if repo, err := name.NewRepository(a); err == nil {
		return imageRule{repo: repo.Name()}, true
	}
	return imageRule{}, false
}

// isHostPort reports whether a is host:port with a numeric port.
func isHostPort(a string) bool {
	_, port, ok := strings.Cut(a, ":")
	return ok && port != "" && strings.Trim(port, "0123456789") == ""
}

// Validate names a bad entry under key ("policy.images").
func (p ImagePolicy) Validate(key string) error {
	if _, err := p.rules(key); err != nil {
		return err
	}
	if p.Default != "" {
		if _, err := name.ParseReference(p.Default); err != nil || strings.Contains(p.Default, "://") {
			return fmt.Errorf("%s.default %q is not an image reference: write registry/name:tag or registry/name@sha256:<64 hex digits>", key, p.Default)
		}
	}
	return nil
}

// Permits reports whether the policy allows the image ref: it is the
// default, or an Allow entry covers it.
func (p ImagePolicy) Permits(ref string) bool {
	r, err := name.ParseReference(ref)
	if err != nil || strings.Contains(ref, "://") {
		return false
	}
	if p.Default != "" {
		if d, err := name.ParseReference(p.Default); err == nil && d.Name() == r.Name() {
			return true
		}
	}
	rules, err := p.rules("policy.images")
	if err != nil {
		return false
	}
	repo := r.Context()
	return slices.ContainsFunc(rules, func(rule imageRule) bool {
		switch {
		case rule.registry != "":
			return repo.RegistryStr() == rule.registry
		case rule.repo != "":
			return repo.Name() == rule.repo || strings.HasPrefix(repo.Name(), rule.repo+"/")
		}
		return r.Name() == rule.ref
	})
}

// ImageFor is the image a task with spec s runs in: its own, else the
// default ("" on the host's system directories).
func (p ImagePolicy) ImageFor(s TaskSpec) string {
	if s.Environment.Image != "" || (s.Environment.Kind != EnvLocal && s.Environment.Kind != "") {
		return s.Environment.Image
	}
	return p.Default
}

// checkImage checks environment.image and image_credentials on their own.
func (e Environment) checkImage() *FieldError {
	switch {
	case e.Image == "" && e.ImageCredentials != "":
		return fieldErr("environment.image_credentials", "needs environment.image")
	case e.Image == "":
		return nil
	case e.Kind != EnvLocal && e.Kind != "":
		return fieldErr("environment.image", "needs a local environment; an ssh environment runs on its host's own system")
	case len(e.Image) > maxPathBytes:
		return fieldErr("environment.image", "is longer than %d bytes", maxPathBytes)
	case len(e.ImageCredentials) > MaxNameBytes || strings.ContainsAny(e.ImageCredentials, " \n:"):
		return fieldErr("environment.image_credentials", "must be the name of registry credentials configured on the workers (image_cache.credentials), never the credentials themselves")
	}
	if _, err := name.ParseReference(e.Image); err != nil || strings.Contains(e.Image, "://") {
		return fieldErr("environment.image", "%q is not an image reference: write registry/name:tag or registry/name@sha256:<64 hex digits>", e.Image)
	}
	return nil
}

// checkImage checks a spec's image against the policy.
func (p Policy) checkImage(s TaskSpec) *FieldError {
	img := s.Environment.Image
	if img == "" || p.Images.Permits(img) {
		return nil
	}
	if len(p.Images.Allow) == 0 {
		return fieldErr("environment.image", "%q: the operator allows no environment images (policy.images.allow is empty); leave image out", img)
	}
	return fieldErr("environment.image", "%q is outside the images the operator allows (%s)", img, strings.Join(p.Images.Allow, ", "))
}
