package gitsource

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/agentfleet/agentfleet/internal/outbound"
)

// Rules are an operator's rules for clone sources, parsed once (see the
// package doc). The zero value admits any public https or ssh host and no
// local path.
type Rules struct {
	remote  []remoteEntry
	local   []string // cleaned absolute prefixes
	private []netip.Prefix
}

type remoteEntry struct {
	scheme string // "" for https and ssh; "http" must be named
	host   string
	port   string // "" for the scheme's default
	prefix []string
}

// NewRules parses the operator's lists; field names the configuration key
// they come from ("policy.repositories") in errors.
func NewRules(field string, allow, allowLocal, allowPrivate []string) (Rules, error) {
	var r Rules
	for _, a := range allow {
		e, err := parseEntry(a)
		if err != nil {
			return Rules{}, fmt.Errorf("%s.allow entry %q: %v", field, a, err)
		}
		r.remote = append(r.remote, e)
	}
	for _, l := range allowLocal {
		if !filepath.IsAbs(l) || hasDotDot(l) {
			return Rules{}, fmt.Errorf("%s.allow_local entry %q must be an absolute path without \"..\"", field, l)
		}
		r.local = append(r.local, filepath.Clean(l))
	}
	for _, p := range allowPrivate {
		pfx, err := netip.ParsePrefix(p)
		if err != nil {
			addr, aerr := netip.ParseAddr(p)
			if aerr != nil {
				return Rules{}, fmt.Errorf("%s.allow_private entry %q must be an address or a CIDR prefix (10.1.0.0/16)", field, p)
			}
			pfx = netip.PrefixFrom(addr, addr.BitLen())
		}
		r.private = append(r.private, pfx.Masked())
	}
	return r, nil
}

func parseEntry(a string) (remoteEntry, error) {
	var e remoteEntry
	raw := a
	if before, _, ok := strings.Cut(a, "://"); ok {
		e.scheme = strings.ToLower(before)
		if e.scheme != "https" && e.scheme != "ssh" && e.scheme != "http" {
			return e, fmt.Errorf("scheme %q is not https, ssh or http", e.scheme)
		}
	} else {
		raw = "x://" + a
	}
	u, err := url.Parse(raw)
	if err != nil || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return e, fmt.Errorf("want host[:port][/path/prefix], such as github.com/acme/")
	}
	e.host = strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	e.port = u.Port()
	if _, aerr := netip.ParseAddr(e.host); aerr != nil && !hostName(e.host) {
		return e, fmt.Errorf("%q is not a host name or address", u.Hostname())
	}
	if hasDotDot(u.Path) {
		return e, fmt.Errorf("the path has a \"..\" segment")
	}
	e.prefix = segments(u.Path)
	return e, nil
}

// segments splits a path into its non-empty segments, a final ".git"
// taken off.
func segments(p string) []string {
	var out []string
	for s := range strings.SplitSeq(p, "/") {
		if s != "" && s != "." {
			out = append(out, s)
		}
	}
	if n := len(out); n > 0 {
		out[n-1] = strings.TrimSuffix(out[n-1], ".git")
	}
	return out
}

// Check reports a source the rules do not admit, by its text alone (the
// dispatcher's check at submission; the worker adds CheckLocal or
// CheckAddresses).
func (r Rules) Check(s Source) error {
	if s.Local {
		for _, l := range r.local {
			if under(s.Path, l) {
				return nil
			}
		}
		if len(r.local) == 0 {
			return refused("%q is a local path, and this fleet clones no local paths (policy.repositories.allow_local); use an https or ssh URL", s.Raw)
		}
		return refused("%q is not under a directory the operator allows (policy.repositories.allow_local: %s)", s.Raw, strings.Join(r.local, ", "))
	}
	if s.Scheme == "http" && !r.namesHTTP() {
		return refused("%q uses plain http, which anyone on the way can change; use https (an operator may allow an http:// host in policy.repositories.allow)", s.Raw)
	}
	if len(r.remote) == 0 {
		return nil
	}
	for _, e := range r.remote {
		if e.matches(s) {
			return nil
		}
	}
	return refused("%q is not among the repositories the operator allows (policy.repositories.allow)", s.Raw)
}

func (r Rules) namesHTTP() bool {
	for _, e := range r.remote {
		if e.scheme == "http" {
			return true
		}
	}
	return false
}

// matches: an entry without a scheme admits https and ssh, never http.
func (e remoteEntry) matches(s Source) bool {
	scheme := e.scheme
	if scheme == "" && s.Scheme == "http" {
		return false
	}
	if scheme != "" && scheme != s.Scheme || e.host != s.Host {
		return false
	}
	port := s.Port
	if port == "" {
		port = defaultPort(s.Scheme)
	}
	want := e.port
	if want == "" {
		want = defaultPort(s.Scheme)
	}
	if port != want {
		return false
	}
	segs := segments(s.Path)
	if len(segs) < len(e.prefix) {
		return false
	}
	for i, p := range e.prefix {
		if segs[i] != p {
			return false
		}
	}
	return true
}

// under reports whether p is dir or lies beneath it (both clean).
func under(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// CheckLocal resolves the symbolic links of a local source and checks
// the real path against AllowLocal, whose entries are resolved too. It
// returns the real path, the one to clone.
func (r Rules) CheckLocal(s Source) (string, error) {
	real, err := filepath.EvalSymlinks(s.Path)
	if err != nil {
		return "", refused("%q: %v", s.Raw, err)
	}
	for _, l := range r.local {
		rl, err := filepath.EvalSymlinks(l)
		if err != nil {
			continue
		}
		if under(real, rl) {
			return real, nil
		}
	}
	return "", refused("%q resolves to %s, which is not under a directory the operator allows (policy.repositories.allow_local)", s.Raw, real)
}

// Resolver looks host names up; net.DefaultResolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// CheckAddresses resolves a remote source's host and refuses it when one
// of its addresses is not public unicast and not in AllowPrivate. It
// returns the addresses checked, for CloneArgs to pin the clone to.
func (r Rules) CheckAddresses(ctx context.Context, res Resolver, s Source) ([]netip.Addr, error) {
	if s.Local {
		return nil, nil
	}
	addrs := []netip.Addr{}
	if a, err := netip.ParseAddr(s.Host); err == nil {
		addrs = append(addrs, a)
	} else {
		if res == nil {
			res = net.DefaultResolver
		}
		found, err := res.LookupNetIP(ctx, "ip", s.Host)
		if err != nil {
			return nil, fmt.Errorf("resolving %s: %w", s.Host, err)
		}
		addrs = found
	}
	for i, a := range addrs {
		a = a.Unmap()
		addrs[i] = a
		if outbound.CheckAddr(a, r.private) != nil {
			return nil, refused("%q: %s resolves to %s, a %s address; a clone reaches only public hosts unless the operator lists the address (policy.repositories.allow_private)",
				s.Raw, s.Host, a, outbound.Special(a))
		}
	}
	return addrs, nil
}

// AllowPrivate is the AllowPrivate list parsed: the internal addresses a
// clone may reach, for the egress proxy a sandboxed clone goes through.
func (r Rules) AllowPrivate() []netip.Prefix {
	return append([]netip.Prefix(nil), r.private...)
}
