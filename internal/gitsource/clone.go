package gitsource

import (
	"net"
	"net/netip"
	"os"
	"path"
	"slices"
	"strings"
)

// CloneArgs returns git's arguments to clone s into target: no hard
// links or shared objects (--no-local), only the https and ssh transports
// (and file for a local source, http for an http one, which Rules
// admitted; from is a local source's real path, from CheckLocal), no
// HTTP redirects, no submodules, no hooks. An http(s) clone connects
// only to addrs, the addresses CheckAddresses checked
// (http.curloptResolve), so a name that resolves elsewhere by the time
// git asks (DNS rebinding) does not move it; ssh resolves on its own.
func CloneArgs(s Source, from, target string, addrs []netip.Addr) []string {
	return append(transportArgs(s, addrs), "clone", "--no-local", "--quiet", "--", from, target)
}

// MirrorRefspecs are what a mirror fetches: every branch and tag, as the
// source names them.
var MirrorRefspecs = []string{"+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"}

// FetchArgs returns git's arguments to fetch every branch and tag of s
// into the bare repository git runs in (a worker's mirror), with
// CloneArgs's protections: the URL is given on the command line, never
// written to the mirror's configuration; branches gone from s are pruned
// (their objects stay: gc.auto=0, so clones borrowing the mirror's
// objects never lose one); no hooks, no submodules.
func FetchArgs(s Source, from string, addrs []netip.Addr) []string {
	args := transportArgs(s, addrs)
	for _, d := range SafeDirectories(s, from) { // a local source of another owner; protected config, as -c is
		args = append(args, "-c", "safe.directory="+d)
	}
	args = append(args, "-c", "gc.auto=0", "-c", "fetch.writeCommitGraph=false",
		"fetch", "--quiet", "--prune", "--no-write-fetch-head", "--", from)
	return append(args, MirrorRefspecs...)
}

// LsRemoteHeadArgs returns git's arguments to ask s which branch its HEAD
// names (`ls-remote --symref`), with FetchArgs's protections.
func LsRemoteHeadArgs(s Source, from string, addrs []netip.Addr) []string {
	return append(transportArgs(s, addrs), "ls-remote", "--symref", "--", from, "HEAD")
}

// transportArgs are the -c options every git command that reaches a
// source runs with (see CloneArgs).
func transportArgs(s Source, addrs []netip.Addr) []string {
	file, http := "never", "never"
	if s.Local {
		file = "always"
	}
	if s.Scheme == "http" {
		http = "always"
	}
	var pin []string
	if (s.Scheme == "https" || s.Scheme == "http") && len(addrs) > 0 {
		port := s.Port
		if port == "" {
			port = defaultPort(s.Scheme)
		}
		list := make([]string, len(addrs))
		for i, a := range addrs {
			list[i] = a.String()
			if a.Is6() {
				list[i] = "[" + list[i] + "]"
			}
		}
		pin = []string{"-c", "http.curloptResolve=" + s.Host + ":" + port + ":" + strings.Join(list, ",")}
	}
	return append(pin,
		"-c", "protocol.allow=never",
		"-c", "protocol.https.allow=always",
		"-c", "protocol.ssh.allow=always",
		"-c", "protocol.file.allow="+file,
		"-c", "protocol.http.allow="+http,
		"-c", "http.followRedirects=false",
		"-c", "submodule.recurse=false",
		"-c", "core.hooksPath=/dev/null",
	)
}

// SandboxCloneArgs returns git's arguments to clone s into the current
// directory, which must be empty, inside a task's sandbox: CloneArgs
// without the address pin, since git there reaches a remote host only
// through the sandbox's egress proxy, which resolves the name and checks
// every address it dials.
func SandboxCloneArgs(s Source, from string) []string {
	return CloneArgs(s, from, ".", nil)
}

// SafeDirectories are the directories git in a task's sandbox must be
// told are safe (safe.directory) before it clones the local source s
// from its real path from: inside the sandbox the source belongs to a
// user that is not git's, and git refuses such a repository as of
// dubious ownership. Git reads safe.directory from the system and global
// configuration only, not from -c, so the sandbox's private home gets a
// global configuration naming these. The sandbox (read-only source, no
// network, only the target writable), not that check, keeps a crafted
// source from reaching anything.
func SafeDirectories(s Source, from string) []string {
	if !s.Local {
		return nil
	}
	return []string{from, path.Join(from, ".git")}
}

// ProxyHost is the "host:port" of a remote source, as the egress proxy
// of a sandboxed clone is asked for it (its only allowlist entry).
func ProxyHost(s Source) string {
	port := s.Port
	if port == "" {
		port = defaultPort(s.Scheme)
	}
	return net.JoinHostPort(s.Host, port)
}

// cloneEnvKeys are the variables of the worker a clone keeps.
var cloneEnvKeys = []string{"PATH", "HOME", "USER", "LANG", "LANGUAGE", "TZ", "SSH_AUTH_SOCK",
	"GIT_SSH", "GIT_SSH_COMMAND", "SSL_CERT_FILE", "SSL_CERT_DIR", "GIT_SSL_CAINFO",
	"HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy", "TMPDIR"}

// CloneEnv is the environment a clone runs with: the worker's variables
// named in the package doc, and git's own that keep it from asking a
// person or taking a protocol from the URL.
func CloneEnv() []string {
	env := []string{"GIT_TERMINAL_PROMPT=0", "GIT_PROTOCOL_FROM_USER=0"}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "LC_") || contains(cloneEnvKeys, k) {
			env = append(env, kv)
		}
	}
	return env
}

func contains(list []string, s string) bool {
	return slices.Contains(list, s)
}
