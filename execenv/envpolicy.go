package execenv

import (
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
)

// EnvPolicy decides which variables of the base environment (the worker's
// own for Local, the login environment of the remote user for SSH) a command
// sees. Variables set in ExecRequest.Env are always added on top.
type EnvPolicy string

const (
	// EnvInheritAll passes the base environment through, minus secrets (the
	// default; the zero value means this).
	EnvInheritAll EnvPolicy = "inherit-all"
	// EnvCoreOnly passes only core variables (see IsCoreEnvName).
	EnvCoreOnly EnvPolicy = "core-only"
	// EnvNone starts from an empty environment.
	EnvNone EnvPolicy = "none"
)

// orDefault maps the zero value to EnvInheritAll.
func (p EnvPolicy) orDefault() EnvPolicy {
	if p == "" {
		return EnvInheritAll
	}
	return p
}

// validate reports an unknown policy, naming the config field.
func (p EnvPolicy) validate(field string) error {
	switch p.orDefault() {
	case EnvInheritAll, EnvCoreOnly, EnvNone:
		return nil
	}
	return fmt.Errorf("%s must be %q, %q or %q, got %q", field, EnvInheritAll, EnvCoreOnly, EnvNone, string(p))
}

// secretSuffixes are the name endings (compared upper-cased) that mark a
// variable as a secret.
var secretSuffixes = []string{"_API_KEY", "_SECRET", "_TOKEN", "_PASSWORD", "_CREDENTIAL"}

// IsSecretEnvName reports whether a variable name looks like a secret:
// it ends, in any case, with _API_KEY, _SECRET, _TOKEN, _PASSWORD or _CREDENTIAL.
func IsSecretEnvName(name string) bool {
	up := strings.ToUpper(name)
	for _, s := range secretSuffixes {
		if strings.HasSuffix(up, s) {
			return true
		}
	}
	return false
}

// coreEnvNames are kept by EnvCoreOnly, with every name starting LC_ or XDG_.
var coreEnvNames = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TMPDIR", "TZ",
	"GOPATH", "GOROOT", "GOCACHE", "GOMODCACHE", "GOBIN", "GOPROXY", "GOFLAGS", "GOTOOLCHAIN",
	"CARGO_HOME", "RUSTUP_HOME", "NVM_DIR", "NODE_PATH", "JAVA_HOME", "PYENV_ROOT",
	"VIRTUAL_ENV", "CONDA_PREFIX", "GEM_HOME", "GEM_PATH", "SSL_CERT_FILE", "SSL_CERT_DIR",
}

// corePrefixes are name prefixes EnvCoreOnly keeps.
var corePrefixes = []string{"LC_", "XDG_"}

// IsCoreEnvName reports whether EnvCoreOnly keeps a variable: PATH, HOME,
// USER, SHELL, LANG, LC_*, TERM, TMPDIR, toolchain locations (GOPATH, GOROOT,
// CARGO_HOME, NVM_DIR, JAVA_HOME, PYENV_ROOT, ...) and XDG_* directories.
func IsCoreEnvName(name string) bool {
	if slices.Contains(coreEnvNames, name) {
		return true
	}
	for _, p := range corePrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// FilterEnv applies a policy to environ ("NAME=value" entries) and returns
// the entries a command may see. Secrets are dropped unless keepSecrets;
// EnvCoreOnly keeps core names only, and not those whose value holds a
// URL with a password (a GOPROXY of https://user:pass@host); EnvNone
// returns an empty, non-nil slice.
func FilterEnv(environ []string, policy EnvPolicy, keepSecrets bool) []string {
	out := make([]string, 0, len(environ))
	if policy.orDefault() == EnvNone {
		return out
	}
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if name == "" || !keepEnvName(name, policy, keepSecrets) ||
			policy.orDefault() == EnvCoreOnly && hasURLPassword(value) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// keepEnvName is the per-name decision of FilterEnv.
func keepEnvName(name string, policy EnvPolicy, keepSecrets bool) bool {
	switch policy.orDefault() {
	case EnvNone:
		return false
	case EnvCoreOnly:
		return IsCoreEnvName(name) && !IsSecretEnvName(name)
	}
	return keepSecrets || !IsSecretEnvName(name)
}

// hasURLPassword reports whether value holds a URL with a password.
func hasURLPassword(value string) bool { return len(URLPasswords(value)) > 0 }

// URLPasswords returns the passwords in the user information of the URLs
// value holds (lists such as GOPROXY's, split on ',', '|' and spaces, are
// looked at item by item); nil when it holds none.
func URLPasswords(value string) []string {
	var out []string
	for _, item := range strings.FieldsFunc(value, func(r rune) bool { return r == ',' || r == '|' || r == ' ' }) {
		if u, err := url.Parse(item); err == nil && u.User != nil {
			if p, ok := u.User.Password(); ok {
				out = append(out, p)
			}
		}
	}
	return out
}

// mergeEnv appends the request's variables, replacing earlier entries of the
// same name so that the request wins.
func mergeEnv(base []string, extra map[string]string) []string {
	if len(extra) == 0 {
		return base
	}
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if _, ok := extra[name]; !ok {
			out = append(out, kv)
		}
	}
	for _, k := range sortedKeys(extra) {
		out = append(out, k+"="+extra[k])
	}
	return out
}

// sortedKeys returns m's keys in order, so generated scripts are stable.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
