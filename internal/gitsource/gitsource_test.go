//go:build unix

package gitsource_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/agentfleet/agentfleet/internal/gitsource"
	"github.com/agentfleet/agentfleet/internal/testenv"
)

func TestParse(t *testing.T) {
	for _, c := range []struct{ raw, scheme, host, port, path string }{
		{"https://github.com/acme/app.git", "https", "github.com", "", "/acme/app.git"},
		{"https://GitHub.com./acme/app", "https", "github.com", "", "/acme/app"},
		{"https://gitea.internal:3000/team/x", "https", "gitea.internal", "3000", "/team/x"},
		{"ssh://git@github.com/acme/app.git", "ssh", "github.com", "", "/acme/app.git"},
		{"git@github.com:acme/app.git", "ssh", "github.com", "", "/acme/app.git"},
		{"/srv/git/app.git", "file", "", "", "/srv/git/app.git"},
		{"file:///srv/git/app", "file", "", "", "/srv/git/app"},
	} {
		s, err := gitsource.Parse(c.raw)
		if err != nil || s.Scheme != c.scheme || s.Host != c.host || s.Port != c.port || s.Path != c.path {
			t.Errorf("Parse(%q) = %+v, %v; want %s %s %s %s", c.raw, s, err, c.scheme, c.host, c.port, c.path)
		}
	}
	for _, raw := range []string{
		"ext::sh -c touch% /tmp/pwned",
		"ext::sh",
		"fd::3",
		"foo::bar",
		"git://github.com/acme/app",
		"http://user@github.com/acme/app",
		"https://user@github.com/acme/app",
		"https://github.com/acme/../evil/app",
		"https://github.com/acme/app?x=1",
		"https://-oProxyCommand=x/acme",
		"ssh://-oProxyCommand=x/acme",
		"-oProxyCommand=x:acme",
		"relative/repo",
		"./repo",
		"/srv/git/../other",
		"file://otherhost/srv/x",
		"https://github.com/",
		"",
	} {
		if s, err := gitsource.Parse(raw); !errors.Is(err, gitsource.ErrRefused) {
			t.Errorf("Parse(%q) = %+v, %v; want it refused", raw, s, err)
		}
	}
}

func rules(t *testing.T, allow, local, private []string) gitsource.Rules {
	t.Helper()
	r, err := gitsource.NewRules("policy.repositories", allow, local, private)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func check(r gitsource.Rules, raw string) error {
	s, err := gitsource.Parse(raw)
	if err != nil {
		return err
	}
	return r.Check(s)
}

func TestAllowlist(t *testing.T) {
	r := rules(t, []string{"github.com/acme/", "https://gitea.internal:3000/team", "gitlab.com/group/app.git"}, nil, nil)
	for _, ok := range []string{
		"https://github.com/acme/app.git",
		"git@github.com:acme/app.git",
		"https://gitea.internal:3000/team/x",
		"https://gitlab.com/group/app",
		"https://gitlab.com/group/app.git",
	} {
		if err := check(r, ok); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{
		"https://github.com.evil.net/x",
		"https://github.com.evil.net/acme/x",
		"https://evil.net/github.com/acme/x",
		"https://github.com/acmeevil/x",
		"https://github.com/other/x",
		"https://github.com:8443/acme/x",
		"ssh://git@gitea.internal:3000/team/x", // the entry names https
		"https://gitea.internal/team/x",        // another port
		"https://gitlab.com/group/app2",
		"/srv/git/app",
	} {
		if err := check(r, bad); !errors.Is(err, gitsource.ErrRefused) {
			t.Errorf("%s: %v, want refused", bad, err)
		}
	}
	if err := check(rules(t, []string{"http://gitea.local:3000/"}, nil, nil), "http://gitea.local:3000/team/x"); err != nil {
		t.Errorf("an http host the operator names was refused: %v", err)
	}
	for _, bad := range []string{"http://github.com/acme/app", "http://gitea.local/team/x"} {
		if err := check(r, bad); !errors.Is(err, gitsource.ErrRefused) {
			t.Errorf("%s: %v, want refused (http not named)", bad, err)
		}
	}
	if err := check(gitsource.Rules{}, "https://anything.example/x/y"); err != nil {
		t.Errorf("the zero rules refuse a public https URL: %v", err)
	}
	if err := check(gitsource.Rules{}, "/srv/git/app"); !errors.Is(err, gitsource.ErrRefused) {
		t.Errorf("the zero rules admit a local path: %v", err)
	}
	for _, bad := range [][]string{{"github.com/../x"}, {"ftp://h/x"}, {"user@h/x"}} {
		if _, err := gitsource.NewRules("p", bad, nil, nil); err == nil {
			t.Errorf("NewRules(%q) accepted", bad)
		}
	}
	if _, err := gitsource.NewRules("p", nil, []string{"rel/dir"}, nil); err == nil {
		t.Error("a relative allow_local entry was accepted")
	}
}

func TestLocalLinksAreResolved(t *testing.T) {
	allowed, outside := t.TempDir(), t.TempDir()
	must(t, os.Mkdir(filepath.Join(allowed, "real"), 0o755))
	must(t, os.Symlink(outside, filepath.Join(allowed, "link")))
	r := rules(t, nil, []string{allowed}, nil)
	for _, c := range []struct {
		rel string
		ok  bool
	}{{"real", true}, {"link", false}} {
		s, err := gitsource.Parse(filepath.Join(allowed, c.rel))
		must(t, err)
		if err := r.Check(s); err != nil {
			t.Fatalf("text check of %s: %v", c.rel, err)
		}
		_, err = r.CheckLocal(s)
		if (err == nil) != c.ok {
			t.Errorf("CheckLocal(%s) = %v, want ok %v", c.rel, err, c.ok)
		}
	}
}

func TestInternalAddressesRefused(t *testing.T) {
	r := rules(t, nil, nil, []string{"10.9.0.0/16", "fd00::7"})
	for _, c := range []struct {
		raw string
		ok  bool
	}{
		{"https://127.0.0.1/x", false},
		{"https://[::1]/x", false},
		{"https://169.254.169.254/latest", false},
		{"https://10.0.0.1/x", false},
		{"https://10.9.3.4/x", true},
		{"https://[fd00::7]/x", true},
		{"https://100.64.1.1/x", false},
		{"https://[64:ff9b::7f00:1]/x", false},
		{"https://[::ffff:127.0.0.1]/x", false},
		{"https://0.0.0.0/x", false},
		{"https://8.8.8.8/x", true},
		{"https://localhost/x", false},
	} {
		s, err := gitsource.Parse(c.raw)
		must(t, err)
		_, err = r.CheckAddresses(context.Background(), fixed{}, s)
		if (err == nil) != c.ok {
			t.Errorf("CheckAddresses(%s) = %v, want ok %v", c.raw, err, c.ok)
		}
	}
}

// fixed resolves localhost as the system does, without a DNS server.
type fixed struct{}

func (fixed) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if host == "localhost" {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		testenv.SkipOrFatal(t, "git "+strings.Join(args, " ")+": "+err.Error()+": "+string(out))
	}
	return strings.TrimSpace(string(out))
}

// TestLocalCloneSharesNoObjects: a local clone copies the objects, so a
// clone that rewrites one leaves the source's as they were.
func TestLocalCloneSharesNoObjects(t *testing.T) {
	src := t.TempDir()
	git(t, src, "init", "-q", "-b", "main")
	must(t, os.WriteFile(filepath.Join(src, "README"), []byte("hello\n"), 0o644))
	git(t, src, "add", "README")
	git(t, src, "commit", "-q", "-m", "root")
	blob := git(t, src, "rev-parse", "HEAD:README")
	obj := filepath.Join(".git", "objects", blob[:2], blob[2:])

	r := rules(t, nil, []string{filepath.Dir(src)}, nil)
	s, err := gitsource.Parse(src)
	must(t, err)
	must(t, r.Check(s))
	from, err := r.CheckLocal(s)
	must(t, err)
	target := filepath.Join(t.TempDir(), "clone")
	cmd := exec.Command("git", gitsource.CloneArgs(s, from, target, nil)...)
	cmd.Env = gitsource.CloneEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("clone: %v: %s", err, out)
	}
	if n := links(t, filepath.Join(src, obj)); n != 1 {
		t.Fatalf("the source's object has %d links after the clone, want 1 (not shared)", n)
	}
	if _, err := os.Stat(filepath.Join(target, ".git", "objects", "info", "alternates")); err == nil {
		t.Fatal("the clone borrows the source's objects (objects/info/alternates)")
	}
	// The control: a plain local clone hard-links the same object.
	git(t, "", "clone", "-q", src, filepath.Join(t.TempDir(), "plain"))
	if n := links(t, filepath.Join(src, obj)); n != 2 {
		t.Fatalf("a plain local clone left %d links, want 2: the check above proves nothing here", n)
	}
}

func links(t *testing.T, name string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	must(t, syscall.Stat(name, &st))
	return uint64(st.Nlink) //nolint:unconvert // uint16 on darwin
}

// TestNoRequestToLoopback: a source on a loopback listener is refused
// before git runs, and the listener sees no request.
func TestNoRequestToLoopback(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	raw := strings.Replace(srv.URL, "http://", "https://", 1) + "/admin/repo.git"
	s, err := gitsource.Parse(raw)
	must(t, err)
	r := gitsource.Rules{}
	must(t, r.Check(s)) // any public-looking https URL passes the text check...
	if _, err := r.CheckAddresses(context.Background(), nil, s); !errors.Is(err, gitsource.ErrRefused) {
		t.Fatalf("CheckAddresses(%s) = %v, want refused", raw, err)
	}
	if err := check(r, srv.URL+"/admin/repo.git"); !errors.Is(err, gitsource.ErrRefused) {
		t.Fatalf("plain http accepted: %v", err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the loopback listener got %d requests", n)
	}
}

// TestExtTransportNeverRuns: even given to git directly, CloneArgs refuse
// the ext transport.
func TestExtTransportNeverRuns(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "pwned")
	s := gitsource.Source{Raw: "x", Scheme: "https", Host: "example.com", Path: "/x"}
	cmd := exec.Command("git", gitsource.CloneArgs(s, "ext::sh -c touch% "+marker, filepath.Join(t.TempDir(), "c"), nil)...)
	cmd.Env = gitsource.CloneEnv()
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("git cloned from ext::: %s", out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the ext:: command ran")
	}
}

func TestCloneEnvHasNoSecrets(t *testing.T) {
	t.Setenv("AWS_SECRET_ACCESS_KEY", "s3cr3t")
	t.Setenv("AGENTFLEET_DATABASE_URL", "postgres://u:pw@h/db")
	for _, kv := range gitsource.CloneEnv() {
		if strings.Contains(kv, "s3cr3t") || strings.Contains(kv, "pw@") {
			t.Fatalf("CloneEnv passes %s", kv)
		}
	}
}

// TestClonePinnedToCheckedAddresses: an https clone connects to the
// addresses CheckAddresses returned, not to whatever the name resolves to
// when git asks: here a name no DNS knows reaches the listener the check
// resolved it to (an allowed private address).
func TestClonePinnedToCheckedAddresses(t *testing.T) {
	var conns atomic.Int32
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer func() { _ = ln.Close() }()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			_ = c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	s, err := gitsource.Parse("https://repo.agentfleet.invalid:" + port + "/team/app.git")
	must(t, err)
	r := rules(t, nil, nil, []string{"127.0.0.1"})
	addrs, err := r.CheckAddresses(context.Background(), pinned{}, s)
	must(t, err)
	cmd := exec.Command("git", gitsource.CloneArgs(s, s.Raw, filepath.Join(t.TempDir(), "c"), addrs)...)
	cmd.Env = gitsource.CloneEnv()
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("the clone succeeded against a listener that speaks no TLS: %s", out)
	}
	if conns.Load() == 0 {
		t.Fatal("git did not connect to the pinned address")
	}
}

// pinned resolves repo.agentfleet.invalid to 127.0.0.1.
type pinned struct{}

func (pinned) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if host == "repo.agentfleet.invalid" {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// TestSandboxCloneArgs: a clone in a task's sandbox goes into the
// current directory and is not pinned (the egress proxy resolves and
// checks), keeps every other guard, and asks the proxy for the source's
// host:port; only a local source needs safe directories.
func TestSandboxCloneArgs(t *testing.T) {
	s, err := gitsource.Parse("https://Git.Example.com/team/app.git")
	must(t, err)
	args := strings.Join(gitsource.SandboxCloneArgs(s, s.Raw), " ")
	for _, want := range []string{"protocol.allow=never", "protocol.file.allow=never", "http.followRedirects=false",
		"core.hooksPath=/dev/null", "clone --no-local --quiet -- " + s.Raw + " ."} {
		if !strings.Contains(args, want) {
			t.Errorf("SandboxCloneArgs lack %q: %s", want, args)
		}
	}
	if strings.Contains(args, "curloptResolve") {
		t.Errorf("SandboxCloneArgs pin addresses: %s", args)
	}
	if got := gitsource.ProxyHost(s); got != "git.example.com:443" {
		t.Errorf("ProxyHost = %q, want git.example.com:443", got)
	}
	v6, err := gitsource.Parse("http://[fd00::1]:8080/app.git")
	must(t, err)
	if got := gitsource.ProxyHost(v6); got != "[fd00::1]:8080" {
		t.Errorf("ProxyHost = %q, want [fd00::1]:8080", got)
	}
	if got := gitsource.SafeDirectories(s, s.Raw); got != nil {
		t.Errorf("SafeDirectories of a remote source = %v", got)
	}
	local, err := gitsource.Parse("/srv/git/app")
	must(t, err)
	if got := strings.Join(gitsource.SafeDirectories(local, "/srv/git/app"), " "); got != "/srv/git/app /srv/git/app/.git" {
		t.Errorf("SafeDirectories = %q", got)
	}
	r := rules(t, nil, nil, []string{"10.1.0.0/16", "127.0.0.1"})
	if got := r.AllowPrivate(); len(got) != 2 || got[1] != netip.MustParsePrefix("127.0.0.1/32") {
		t.Errorf("AllowPrivate = %v", got)
	}
}
