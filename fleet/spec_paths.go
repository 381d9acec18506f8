package fleet

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/internal/beneath"
	"github.com/agentfleet/agentfleet/internal/gitsource"
)

// The directories and repositories a local spec may name are the
// operator's to allow (Policy.SharedRoots, Policy.Repositories): the
// dispatcher checks a submission against its policy (a 400 naming
// environment.working_dir, environment.shared or environment.repo), and a
// worker checks the spec again against its own before the task runs.
//
// A submitted spec's working_dir must lie under one of the shared roots,
// and shared needs one: without shared roots no submission names a
// directory of its own. A subagent's working_dir is set by its parent's
// worker, inside the parent's workspace; a child that is not shared is
// left to that worker, which resolves the directory under its workspace
// root (fleet/worker, internal/beneath).

// Repositories are the operator's rules for environment.repo (see
// internal/gitsource for their exact meaning).
type Repositories struct {
	// Allow lists the remote repositories a spec may clone, each
	// "host[:port][/path/prefix]" with an optional "https://" or "ssh://";
	// empty admits any public https or ssh host.
	Allow []string `mapstructure:"allow"`
	// AllowLocal lists the local directories (absolute) whose repositories
	// may be cloned; empty admits no local path.
	AllowLocal []string `mapstructure:"allow_local"`
	// AllowPrivate lists the internal addresses or CIDR prefixes a clone
	// may reach; every other address that is not public is refused.
	AllowPrivate []string `mapstructure:"allow_private"`
}

// Rules parses the repositories' rules.
func (r Repositories) Rules() (gitsource.Rules, error) {
	return gitsource.NewRules("repositories", r.Allow, r.AllowLocal, r.AllowPrivate)
}

// validatePaths reports a shared root or repository rule that is not
// valid, naming its configuration key.
func (p Policy) validatePaths() error {
	for _, r := range p.SharedRoots {
		if !filepath.IsAbs(r) || filepath.Clean(r) == "/" {
			return fmt.Errorf("shared_roots entry %q must be an absolute directory other than /", r)
		}
	}
	_, err := p.Repositories.Rules()
	return err
}

// SharedRoot returns the shared root dir lies under and dir relative to
// it (beneath.Rel), or ok false when none holds it.
func (p Policy) SharedRoot(dir string) (root, rel string, ok bool) {
	for _, r := range p.SharedRoots {
		if rel, err := beneath.Rel(r, dir); err == nil {
			return filepath.Clean(r), rel, true
		}
	}
	return "", "", false
}

// checkEnvironment checks a local spec's working_dir, shared and repo
// against the policy.
func (p Policy) checkEnvironment(s TaskSpec) *FieldError {
	e := s.Environment
	if e.Kind != EnvLocal && e.Kind != "" {
		return nil
	}
	child := s.ParentID != uuid.Nil
	roots := strings.Join(p.SharedRoots, ", ")
	switch {
	case e.Shared && len(p.SharedRoots) == 0:
		return fieldErr("environment.shared", "needs shared roots, and the operator configured none (policy.shared_roots); leave shared out to get a fresh workspace")
	case e.WorkingDir != "" && (!child || e.Shared):
		if _, _, ok := p.SharedRoot(e.WorkingDir); ok {
			break
		}
		if len(p.SharedRoots) == 0 {
			return fieldErr("environment.working_dir", "%q: this fleet gives every task a fresh workspace and allows no working_dir of a spec's own (no policy.shared_roots); leave working_dir out, or clone with environment.repo", e.WorkingDir)
		}
		return fieldErr("environment.working_dir", "%q is not under a shared root the operator allows (%s)", e.WorkingDir, roots)
	}
	if e.Repo == "" {
		return nil
	}
	rules, err := p.Repositories.Rules()
	if err == nil {
		var src gitsource.Source
		if src, err = gitsource.Parse(e.Repo); err == nil {
			err = rules.Check(src)
		}
	}
	if err != nil {
		return fieldErr("environment.repo", "%s", strings.TrimPrefix(err.Error(), gitsource.ErrRefused.Error()+": "))
	}
	return nil
}

// checkRepoText refuses a repository no rule could admit (a transport
// other than https, ssh or a local path; see gitsource.Parse).
func checkRepoText(repo string) *FieldError {
	if repo == "" {
		return nil
	}
	if _, err := gitsource.Parse(repo); err != nil {
		if errors.Is(err, gitsource.ErrRefused) {
			return fieldErr("environment.repo", "%s", strings.TrimPrefix(err.Error(), gitsource.ErrRefused.Error()+": "))
		}
		return fieldErr("environment.repo", "%v", err)
	}
	return nil
}
