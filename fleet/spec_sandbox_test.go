package fleet_test

import (
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
)

// A bound's network defaults from its hosts, and a spec may only narrow it.
func TestSandboxBoundPermitsOnlyNarrowerSpecs(t *testing.T) {
	none, list, full := fleet.SandboxBound{}, fleet.SandboxBound{AllowHosts: []string{"*.example.com"}}, fleet.SandboxBound{Network: "full"}
	if none.Widest() != "none" || list.Widest() != "allowlist" || full.Widest() != "full" {
		t.Fatalf("widest: %s %s %s", none.Widest(), list.Widest(), full.Widest())
	}
	for _, c := range []struct {
		bound fleet.SandboxBound
		spec  fleet.SandboxSpec
		field string // "" = permitted
	}{
		{none, fleet.SandboxSpec{}, ""},
		{none, fleet.SandboxSpec{Network: "allowlist", AllowHosts: []string{"a.example.com"}}, "spec.sandbox.network"},
		{list, fleet.SandboxSpec{Network: "allowlist", AllowHosts: []string{"a.example.com"}}, ""},
		{list, fleet.SandboxSpec{Network: "allowlist", AllowHosts: []string{"example.com"}}, "spec.sandbox.allow_hosts[0]"},
		{list, fleet.SandboxSpec{Network: "full"}, "spec.sandbox.network"},
		{full, fleet.SandboxSpec{Network: "allowlist", AllowHosts: []string{"anything.org"}}, ""},
		{full, fleet.SandboxSpec{Network: "full"}, ""},
	} {
		fe := c.bound.Permits(c.spec)
		if fe != nil {
			if fe.Field != c.field {
				t.Errorf("bound %+v, spec %+v: error on %s (%v), want %q", c.bound, c.spec, fe.Field, fe, c.field)
			}
		} else if c.field != "" {
			t.Errorf("bound %+v, spec %+v permitted, want an error on %s", c.bound, c.spec, c.field)
		}
	}
	if err := (fleet.SandboxBound{Network: "some"}).Validate(); err == nil {
		t.Error("an unknown sandbox_network was accepted")
	}
	if err := (fleet.SandboxBound{AllowHosts: []string{"http://x"}}).Validate(); err == nil {
		t.Error("a bad sandbox_allow_hosts entry was accepted")
	}
}

// A spec's limits are checked on their own: the field that is wrong is
// named (whether they fit a worker is the worker's to say).
func TestSandboxLimitsAreChecked(t *testing.T) {
	for _, c := range []struct {
		limits fleet.SandboxLimits
		want   string
	}{
		{fleet.SandboxLimits{Pids: -1}, "sandbox.limits.pids"},
		{fleet.SandboxLimits{Memory: "lots"}, "sandbox.limits.memory"},
		{fleet.SandboxLimits{CPUs: -2}, "sandbox.limits.cpus"},
		{fleet.SandboxLimits{CPUTime: "10"}, "sandbox.limits.cpu_time"},
	} {
		if err := (fleet.SandboxSpec{Limits: c.limits}).Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %s", c.limits, err, c.want)
		}
	}
	if err := (fleet.SandboxSpec{Limits: fleet.SandboxLimits{Pids: 64, Memory: "512MiB", CPUs: 1, CPUTime: "10m"}}).Validate(); err != nil {
		t.Errorf("valid limits: %v", err)
	}
}
