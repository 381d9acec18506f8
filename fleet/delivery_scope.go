package fleet

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/google/uuid"
)

// DefaultDeliveryBranches are the branches a delivery credential may push
// to when its scope names none: the fleet's own branches (the default
// branch template, DefaultBranchTemplate, is one of them), never a base
// branch such as main.
var DefaultDeliveryBranches = []string{"agentfleet/*"}

// DeliveryScope is what one delivery credential (a token, an SSH key, or
// the worker's own access for deliveries naming none) may push to: the
// operator's upper bound, checked at submission by a dispatcher that
// knows it and again by the worker before it pushes.
type DeliveryScope struct {
	// Repos are the repositories the credential may push to, each a
	// repository or a prefix of path components ("git.example.com/team"
	// covers git.example.com/team/app but not git.example.com/teamwork),
	// written as host/path or as a git URL or an absolute local path
	// (RepoKey). Empty: any repository (a token still reaches only its
	// hosts).
	Repos []string `mapstructure:"repos" json:"repos,omitempty"`
	// Branches are the branch patterns it may push to (path.Match: '*'
	// does not cross '/'). Empty: DefaultDeliveryBranches.
	Branches []string `mapstructure:"branches" json:"branches,omitempty"`
	// Tenants are the tenants whose tasks may use the credential: one
	// team's token is not another's to push with. Empty: every tenant.
	Tenants []string `mapstructure:"tenants" json:"tenants,omitempty"`
}

// PermitsTenant reports whether a task of tenant may use the credential.
func (s DeliveryScope) PermitsTenant(tenant string) bool {
	if tenant == "" {
		tenant = DefaultTenant
	}
	return len(s.Tenants) == 0 || slices.Contains(s.Tenants, tenant)
}

// Validate names a bad entry, under the configuration key key.
func (s DeliveryScope) Validate(key string) error {
	for i, r := range s.Repos {
		if scopeKey(r) == "" {
			return fmt.Errorf("%s.repos[%d] %q is not a repository: write host/path (git.example.com/team) or an absolute path", key, i, r)
		}
	}
	for i, b := range s.Branches {
		if _, err := path.Match(b, ""); err != nil || b == "" {
			return fmt.Errorf("%s.branches[%d] %q is not a branch pattern (such as agentfleet/*)", key, i, b)
		}
	}
	return nil
}

// EffectiveBranches are the branch patterns the scope allows.
func (s DeliveryScope) EffectiveBranches() []string {
	if len(s.Branches) == 0 {
		return DefaultDeliveryBranches
	}
	return s.Branches
}

// PermitsBranch reports whether branch (a name, placeholders replaced)
// matches one of the scope's patterns.
func (s DeliveryScope) PermitsBranch(branch string) bool {
	return slices.ContainsFunc(s.EffectiveBranches(), func(p string) bool {
		ok, _ := path.Match(p, branch)
		return ok
	})
}

// PermitsRepo reports whether the scope covers the repository at remote.
func (s DeliveryScope) PermitsRepo(remote string) bool {
	if len(s.Repos) == 0 {
		return true
	}
	key := RepoKey(remote)
	return key != "" && slices.ContainsFunc(s.Repos, func(r string) bool {
		p := scopeKey(r)
		return p != "" && (key == p || strings.HasPrefix(key, strings.TrimSuffix(p, "/")+"/"))
	})
}

// RepoKey names the repository at a git remote as host/path, without
// scheme, user, default port or ".git": https://u@github.com/o/r.git,
// ssh://git@github.com:22/o/r and git@github.com:o/r are all
// "github.com/o/r"; a local path (or file:// URL) is its cleaned absolute
// path. "" when remote names no repository.
func RepoKey(remote string) string {
	r := strings.TrimSpace(remote)
	if r == "" {
		return ""
	}
	var host, p string
	if u, err := url.Parse(r); err == nil && len(u.Scheme) > 1 {
		p = u.Path
		if u.Scheme != "file" {
			host = strings.ToLower(u.Hostname())
			if port := u.Port(); port != "" && !isDefaultPort(u.Scheme, port) {
				host += ":" + port
			}
			if host == "" {
				return ""
			}
		}
	} else if i := strings.IndexByte(r, ':'); i > 0 && !strings.Contains(r[:i], "/") {
		host, p = strings.ToLower(afterAt(r[:i])), r[i+1:] // scp-like: [user@]host:path
	} else if strings.HasPrefix(r, "/") {
		p = r
	} else {
		return ""
	}
	p = strings.TrimSuffix(path.Clean("/"+p), "/")
	return host + strings.TrimSuffix(p, ".git")
}

// isDefaultPort reports whether port is the default of a remote's scheme.
func isDefaultPort(scheme, port string) bool {
	switch {
	case scheme == "https":
		return port == "443"
	case scheme == "http":
		return port == "80"
	case strings.Contains(scheme, "ssh"): // ssh, git+ssh, ssh+git
		return port == "22"
	}
	return false
}

// afterAt is what follows the last '@' of s (the host of user@host).
func afterAt(s string) string { return s[strings.LastIndexByte(s, '@')+1:] }

// scopeKey is RepoKey of a scope's repos entry, which may also be written
// host[:port]/path without a scheme (a port only when it is not the
// default of the remote's scheme).
func scopeKey(entry string) string {
	e := strings.TrimSuffix(strings.TrimSpace(entry), "/*")
	switch {
	case e == "":
		return ""
	case strings.Contains(e, "://"), strings.HasPrefix(e, "/"), strings.Contains(e, "@"):
		return RepoKey(e) // a URL, a local path, or scp-like git@host:path
	}
	return RepoKey("https://" + e)
}

// DeliveryScopes are the scopes of the credentials a dispatcher or a
// worker knows: Default for deliveries naming no credentials (the
// worker's own git access), and each token's and SSH key's by reference
// (a reference not listed has the zero scope: any repository, the
// default branches).
type DeliveryScopes struct {
	Default DeliveryScope
	Tokens  map[string]DeliveryScope
	SSHKeys map[string]DeliveryScope
}

// Validate names a bad scope by its dispatcher configuration key.
func (sc DeliveryScopes) Validate() error {
	if err := sc.Default.Validate("delivery"); err != nil { // its keys are delivery_repos, delivery_branches
		return errors.New(strings.Replace(err.Error(), "delivery.", "delivery_", 1))
	}
	for ref, s := range sc.Tokens {
		if err := s.Validate("delivery_token_scopes." + ref); err != nil {
			return err
		}
	}
	for ref, s := range sc.SSHKeys {
		if err := s.Validate("delivery_ssh_key_scopes." + ref); err != nil {
			return err
		}
	}
	return nil
}

// Check refuses a delivery of task, of tenant, whose branch or repository
// (its remote, else repo, the task's environment.repo) is outside the
// scope of a credential it names (of Default when it names none), or that
// names a credential its tenant may not use, naming the field, the
// credential and what it allows. At submission task is uuid.Nil: a
// pattern such as agentfleet/* matches every task's id.
func (sc DeliveryScopes) Check(d Delivery, repo string, task uuid.UUID, tenant string) *FieldError {
	remote := d.Remote
	if remote == "" {
		remote = repo
	}
	type named struct {
		what, field string
		scope       DeliveryScope
	}
	var scopes []named
	if ref := d.Credentials.Token; ref != "" {
		scopes = append(scopes, named{fmt.Sprintf("token %q", ref), "delivery.credentials.token", sc.Tokens[ref]})
	}
	if ref := d.Credentials.SSHKey; ref != "" {
		scopes = append(scopes, named{fmt.Sprintf("ssh_key %q", ref), "delivery.credentials.ssh_key", sc.SSHKeys[ref]})
	}
	if len(scopes) == 0 {
		scopes = append(scopes, named{"a delivery without credentials", "delivery.credentials", sc.Default})
	}
	branch := d.BranchName(task)
	for _, n := range scopes {
		field := "delivery.remote"
		if d.Remote == "" {
			field = "environment.repo"
		}
		switch {
		case !n.scope.PermitsTenant(tenant):
			return fieldErr(n.field, "%s may not be used by a task of tenant %q (its tenants: %s)", n.what, tenant, strings.Join(n.scope.Tenants, ", "))
		case !n.scope.PermitsBranch(branch):
			return fieldErr("delivery.branch", "%q is not a branch %s may push to (allowed: %s); leave it empty for %s",
				branch, n.what, strings.Join(n.scope.EffectiveBranches(), ", "), DefaultBranchTemplate)
		case !n.scope.PermitsRepo(remote):
			return fieldErr(field, "%q is not a repository %s may push to (allowed: %s)", remote, n.what, strings.Join(n.scope.Repos, ", "))
		case d.PullRequest != nil && d.PullRequest.Repo != "" && len(n.scope.Repos) > 0 &&
			!n.scope.PermitsRepo(prRepoURL(remote, d.PullRequest.Repo)):
			return fieldErr("delivery.pull_request.repo", "%q is not a repository %s may open requests on (allowed: %s)",
				d.PullRequest.Repo, n.what, strings.Join(n.scope.Repos, ", "))
		}
	}
	return nil
}

// prRepoURL is the URL of a forge repository "owner/name" on the host of
// remote ("" when remote has no host: a local path).
func prRepoURL(remote, repo string) string {
	key := RepoKey(remote)
	host, _, ok := strings.Cut(key, "/")
	if !ok || host == "" {
		return ""
	}
	return "https://" + host + "/" + strings.Trim(repo, "/")
}
