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
	b := setupAPIWith(t, sqliteStore, func(c *Config) {
		c.SandboxBound = &fleet.SandboxBound{AllowHosts: []string{"github.com", "*.golang.org"}}
	})
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

// A spec whose sandbox.limits ask for more than the operator's
// sandbox_limits (the workers' defaults when it sets none) is a 400
// naming the field at submission, not a task failed by the worker.
func TestSandboxLimitsAboveTheBoundAre400(t *testing.T) {
	b := setupAPIWith(t, sqliteStore, func(c *Config) { c.SandboxLimits = fleet.SandboxLimits{Pids: 512} })
	spec := func(l fleet.SandboxLimits) fleet.TaskSpec {
		s := validSpec("p")
		s.Sandbox = fleet.SandboxSpec{Limits: l}
		return s
	}
	for _, c := range []struct {
		limits       fleet.SandboxLimits
		field, words string
	}{
		{fleet.SandboxLimits{Pids: 513}, "spec.sandbox.limits.pids", "513 is above the operator's maximum of 512 (sandbox_limits.pids)"},
		{fleet.SandboxLimits{Memory: "8GiB"}, "spec.sandbox.limits.memory", "8GiB is above the operator's maximum of 4GiB"},
		{fleet.SandboxLimits{CPUs: 4}, "spec.sandbox.limits.cpus", "4 is above the operator's maximum of 2"},
		{fleet.SandboxLimits{CPUTime: "2h"}, "spec.sandbox.limits.cpu_time", "2h is above the operator's maximum of 1h"},
	} {
		code, d, raw := b.rawCall(t, http.MethodPost, "/v1/tasks", spec(c.limits), testToken)
		if code != http.StatusBadRequest || d.Field != c.field || !strings.Contains(d.Message, c.words) {
			t.Errorf("limits %+v: %d %s, want 400 naming %s", c.limits, code, raw, c.field)
		}
	}
	within := fleet.SandboxLimits{Pids: 512, Memory: "1GiB", CPUs: 1, CPUTime: "10m"}
	if code, _, raw := b.rawCall(t, http.MethodPost, "/v1/tasks", spec(within), testToken); code != http.StatusCreated {
		t.Fatalf("limits within the bound: %d %s", code, raw)
	}
}
