package fleet

import (
	"strings"
	"testing"
)

// A spec's sandbox.limits may only narrow the operator's: each field
// above the bound is named; zero fields of either bound nothing.
func TestSandboxLimitsWithinTheBound(t *testing.T) {
	bound := SandboxLimits{Pids: 100, Memory: "1GiB", CPUTime: "10m"}
	for _, c := range []struct {
		spec  SandboxLimits
		field string
	}{
		{SandboxLimits{}, ""},
		{SandboxLimits{Pids: 100, Memory: "512MiB", CPUs: 64, CPUTime: "10m"}, ""}, // cpus: no bound
		{SandboxLimits{Pids: 101}, "spec.sandbox.limits.pids"},
		{SandboxLimits{Memory: "2GiB"}, "spec.sandbox.limits.memory"},
		{SandboxLimits{CPUTime: "11m"}, "spec.sandbox.limits.cpu_time"},
	} {
		fe := bound.Permits(c.spec)
		switch {
		case c.field == "" && fe != nil:
			t.Errorf("%+v: %v, want it permitted", c.spec, fe)
		case c.field != "" && (fe == nil || fe.Field != c.field || !strings.Contains(fe.Reason, "above the operator's maximum")):
			t.Errorf("%+v: %v, want a refusal naming %s", c.spec, fe, c.field)
		}
	}
	if fe := DefaultSandboxLimits.Permits(SandboxLimits{CPUs: 3}); fe == nil || fe.Field != "spec.sandbox.limits.cpus" {
		t.Errorf("cpus 3 against the default bound (2): %v", fe)
	}
	if got := (SandboxLimits{Pids: 10}).WithDefaults(); got.Pids != 10 || got.Memory != "4GiB" || got.CPUs != 2 || got.CPUTime != "1h" {
		t.Errorf("defaults: %+v", got)
	}
	if err := (SandboxLimits{Memory: "lots"}).ValidateBound(); err == nil || !strings.HasPrefix(err.Error(), "sandbox_limits.memory:") {
		t.Errorf("a bad bound: %v", err)
	}
}
