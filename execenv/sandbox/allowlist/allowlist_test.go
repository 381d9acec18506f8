package allowlist_test

import (
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/execenv/sandbox/allowlist"
)

func TestAllowlistMatchesNamesPortsAndWildcards(t *testing.T) {
	a, err := allowlist.Parse([]string{"Example.com", "api.test:8443", "*.pkg.dev"})
	if err != nil {
		t.Fatal(err)
	}
	for hostport, want := range map[string]bool{
		"example.com:443":     true,
		"EXAMPLE.com.:80":     true,
		"www.example.com:443": false,
		"api.test:8443":       true,
		"api.test:443":        false,
		"go.pkg.dev:443":      true,
		"a.b.pkg.dev:443":     true,
		"pkg.dev:443":         false,
		"evilpkg.dev:443":     false,
		"127.0.0.1:443":       false,
		"example.com":         false, // no port: not a CONNECT target
	} {
		if got := a.Admits(hostport); got != want {
			t.Errorf("Admits(%q) = %v, want %v", hostport, got, want)
		}
	}
	if (allowlist.List{}).Admits("example.com:443") {
		t.Error("the empty allowlist admitted a host")
	}
}

func TestBadAllowlistEntryIsNamed(t *testing.T) {
	for _, bad := range []string{"", "http://x.com", "x.com:https", "*", "a b"} {
		_, err := allowlist.Parse([]string{"ok.com", bad})
		if err == nil || !strings.Contains(err.Error(), "allow_hosts[1]") {
			t.Errorf("entry %q: got %v, want an error naming allow_hosts[1]", bad, err)
		}
	}
}

func TestCoversOnlyNarrowerEntries(t *testing.T) {
	bound, err := allowlist.Parse([]string{"github.com", "*.golang.org", "api.test:443"})
	if err != nil {
		t.Fatal(err)
	}
	for entry, want := range map[string]bool{
		"github.com":       true,
		"GitHub.com:443":   true,
		"proxy.golang.org": true,
		"*.golang.org":     true,
		"*.x.golang.org":   true,
		"golang.org":       false,
		"api.test:443":     true,
		"api.test":         false,
		"api.test:80":      false,
		"gitlab.com":       false,
	} {
		if got := bound.Covers(entry); got != want {
			t.Errorf("Covers(%q) = %v, want %v", entry, got, want)
		}
	}
}
