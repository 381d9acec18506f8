package dispatcher

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
)

// A spec whose sandbox is wider than the dispatcher's bound is a 400
// naming the field; one within it is accepted.
func TestSandboxWiderThanTheBoundIs400(t *testing.T) {
	b := setupAPI(t, sqliteStore)
	b.d.cfg.SandboxBound = &fleet.SandboxBound{AllowHosts: []string{"github.com", "*.golang.org"}}
	spec := func(network string, hosts ...string) fleet.TaskSpec {
		s := validSpec("p")
		s.Sandbox = fleet.SandboxSpec{Network: network, AllowHosts: hosts}
		return s
	}
	for _, c := range []struct {
		spec         fleet.TaskSpec
		field, words string
	}{
		{spec("full"), "spec.sandbox.network", `"full" is wider than the operator allows (sandbox_network: allowlist)`},
		{spec("allowlist", "proxy.golang.org", "example.com"), "spec.sandbox.allow_hosts[1]", `"example.com" is not among the hosts`},
		{spec("everything"), "spec.sandbox.network", `must be "none", "allowlist" or "full"`},
		{spec("", "github.com"), "spec.sandbox.allow_hosts", `needs sandbox.network "allowlist"`},
	} {
		code, d, raw := b.rawCall(t, http.MethodPost, "/v1/tasks", c.spec, testToken)
		if code != http.StatusBadRequest || d.Field != c.field || !strings.Contains(d.Message, c.words) {
			t.Errorf("sandbox %+v: %d %s, want 400 naming %s", c.spec.Sandbox, code, raw, c.field)
		}
	}
	if code, _, raw := b.rawCall(t, http.MethodPost, "/v1/tasks", spec("allowlist", "github.com", "proxy.golang.org"), testToken); code != http.StatusCreated {
		t.Fatalf("a sandbox within the bound: %d %s", code, raw)
	}
}
