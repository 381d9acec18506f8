package gitsource

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// ErrRefused marks a source that is malformed or that the rules do not
// admit; the error says which and what to do.
var ErrRefused = errors.New("repository refused")

// Source is a parsed clone source.
type Source struct {
	Raw    string // as the spec names it
	Local  bool   // a local path or file:// URL
	Scheme string // "https", "ssh" or "file"
	Host   string // remote: lower case, no port, no brackets, no trailing dot
	Port   string // remote: "" for the scheme's default
	// Path is the repository's path: the URL's path ("/acme/app.git"; an
	// scp-like address's path gets a leading "/"), or the cleaned
	// absolute local path.
	Path string
}

func refused(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, a...))
}

// Parse reads raw as a clone source; see the package doc for what it
// refuses.
func Parse(raw string) (Source, error) {
	s := Source{Raw: raw}
	switch {
	case raw == "":
		return s, refused("the repository is empty")
	case strings.HasPrefix(raw, "-"):
		return s, refused("%q starts with '-'", raw)
	case helperTransport(raw):
		return s, refused("%q names a remote helper transport (\"name::address\", such as ext:: or fd::); use an https or ssh URL", raw)
	case strings.ContainsAny(raw, "\x00\n\r\t "):
		return s, refused("%q has a space or control character", raw)
	case strings.Contains(raw, "://"):
		return parseURL(raw)
	case scpLike(raw):
		return parseSCP(raw)
	case !strings.HasPrefix(raw, "/"):
		return s, refused("%q is neither a URL nor an absolute path; use an https:// or ssh:// URL", raw)
	}
	return local(raw, raw)
}

// helperTransport reports git's "<transport>::<address>" syntax: a name
// of letters, digits, '+', '-' or '.', then "::", before any '/'.
func helperTransport(raw string) bool {
	i := strings.Index(raw, "::")
	if i <= 0 || strings.Contains(raw[:i], "/") {
		return false
	}
	return strings.IndexFunc(raw[:i], func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')
	}) < 0
}

// scpLike reports git's "[user@]host:path" form: a ':' before any '/'.
func scpLike(raw string) bool {
	c := strings.Index(raw, ":")
	s := strings.Index(raw, "/")
	return c > 0 && (s < 0 || c < s)
}

func parseURL(raw string) (Source, error) {
	s := Source{Raw: raw}
	u, err := url.Parse(raw)
	if err != nil {
		return s, refused("%q is not a valid URL: %v", raw, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		s.Scheme = "https"
		if u.User != nil {
			return s, refused("%q carries user information; configure git credentials on the workers instead", raw)
		}
	case "ssh", "git+ssh", "ssh+git":
		s.Scheme = "ssh"
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return s, refused("%q names a host in a file:// URL", raw)
		}
		return local(raw, u.Path)
	case "http": // admitted only by a rule naming http:// (Rules.Check)
		s.Scheme = "http"
		if u.User != nil {
			return s, refused("%q carries user information; configure git credentials on the workers instead", raw)
		}
	case "git":
		return s, refused("%q uses the git:// protocol, which has no transport security; use https or ssh", raw)
	default:
		return s, refused("%q uses the %q transport; use an https:// or ssh:// URL", raw, u.Scheme)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return s, refused("%q has a query or fragment; name the repository only", raw)
	}
	if err := s.setHost(u.Hostname(), u.Port()); err != nil {
		return s, err
	}
	return s, s.setPath(u.Path)
}

func parseSCP(raw string) (Source, error) {
	s := Source{Raw: raw, Scheme: "ssh"}
	c := strings.Index(raw, ":")
	host, p := raw[:c], raw[c+1:]
	if at := strings.LastIndex(host, "@"); at >= 0 {
		host = host[at+1:]
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if err := s.setHost(host, ""); err != nil {
		return s, err
	}
	return s, s.setPath("/" + strings.TrimPrefix(p, "/"))
}

func local(raw, p string) (Source, error) {
	s := Source{Raw: raw, Local: true, Scheme: "file"}
	if !strings.HasPrefix(p, "/") {
		return s, refused("%q is not an absolute path", raw)
	}
	if hasDotDot(p) {
		return s, refused("%q has a \"..\" segment; name the repository's own path", raw)
	}
	s.Path = filepath.Clean(p)
	return s, nil
}

func (s *Source) setHost(host, port string) error {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "" {
		return refused("%q has no host", s.Raw)
	}
	if _, err := netip.ParseAddr(h); err != nil && !hostName(h) {
		return refused("%q: %q is not a host name or address", s.Raw, host)
	}
	s.Host, s.Port = h, port
	return nil
}

// hostName reports a DNS name of letters, digits, '-' and '.', whose
// labels do not start with '-'.
func hostName(h string) bool {
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || strings.HasPrefix(label, "-") {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}

func (s *Source) setPath(p string) error {
	if hasDotDot(p) {
		return refused("%q has a \"..\" segment in its path", s.Raw)
	}
	s.Path = path.Clean("/" + p)
	if s.Path == "/" {
		return refused("%q names no repository path", s.Raw)
	}
	return nil
}

func hasDotDot(p string) bool {
	return slices.Contains(strings.Split(p, "/"), "..")
}

// defaultPort is the port a scheme uses when a URL names none.
func defaultPort(scheme string) string {
	switch scheme {
	case "ssh":
		return "22"
	case "http":
		return "80"
	}
	return "443"
}
