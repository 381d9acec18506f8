package fleet_test

import (
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
		if got := ""; fe != nil {
			got = fe.Field
			if got != c.field {
				t.Errorf("bound %+v, spec %+v: error on %s (%v), want %q", c.bound, c.spec, got, fe, c.field)
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
