package fleet

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentfleet/agentfleet/execenv/sandbox/allowlist"
	"github.com/agentfleet/agentfleet/internal/bytesize"
)

// Sandbox networks, narrowest first.
const (
	SandboxNetworkNone      = "none"      // a loopback of the sandbox's own (the default)
	SandboxNetworkAllowlist = "allowlist" // the allow_hosts, through the worker's egress proxy
	SandboxNetworkFull      = "full"      // the worker's network
)

// SandboxSpec narrows the OS sandbox a local task's commands run in
// (bubblewrap on the worker; see execenv/sandbox). It may only ask for
// what the operator allows (SandboxBound): the dispatcher checks its own
// bound at submission, and each worker checks its own before it runs the
// task, failing the task with the reason when the spec is wider. SSH
// environments are not sandboxed.
type SandboxSpec struct {
	// Network is "none" (the default), "allowlist" or "full".
	Network string `json:"network,omitempty"`
	// AllowHosts are the hosts an allowlist admits: "host", "host:port"
	// or "*.domain".
	AllowHosts []string `json:"allow_hosts,omitempty"`
	// Limits narrow the worker's limits on what the task's commands
	// start; each field set must be at most the worker's (a worker
	// refuses a task asking for more).
	Limits SandboxLimits `json:"limits,omitzero"`
}

// SandboxLimits bound everything a task's commands start (see
// execenv/sandbox.Limits); zero fields leave the worker's limits.
type SandboxLimits struct {
	// Pids bounds processes and threads running at once.
	Pids int `json:"pids,omitempty" mapstructure:"pids"`
	// Memory bounds memory: "512MiB", "2GiB" (internal/bytesize).
	Memory string `json:"memory,omitempty" mapstructure:"memory"`
	// CPUs bounds CPU bandwidth, in CPUs (where the worker has cgroups).
	CPUs float64 `json:"cpus,omitempty" mapstructure:"cpus"`
	// CPUTime bounds each process's CPU time: "10m".
	CPUTime string `json:"cpu_time,omitempty" mapstructure:"cpu_time"`
}

// check names a field of l that is not valid.
func (l SandboxLimits) check() *FieldError {
	if l.Pids < 0 {
		return fieldErr("sandbox.limits.pids", "must be >= 0, got %d", l.Pids)
	}
	if _, err := bytesize.Parse(l.Memory); err != nil {
		return fieldErr("sandbox.limits.memory", "%v", err)
	}
	if l.CPUs < 0 {
		return fieldErr("sandbox.limits.cpus", "must be >= 0, got %g", l.CPUs)
	}
	if l.CPUTime != "" {
		if d, err := time.ParseDuration(l.CPUTime); err != nil || d < time.Second {
			return fieldErr("sandbox.limits.cpu_time", "%q must be a duration of at least 1s, such as \"10m\"", l.CPUTime)
		}
	}
	return nil
}

// network is s.Network with its default.
func (s SandboxSpec) network() string {
	if s.Network == "" {
		return SandboxNetworkNone
	}
	return s.Network
}

// rank orders networks from narrowest (0) to widest (2); -1 is unknown.
func rank(network string) int {
	switch network {
	case SandboxNetworkNone:
		return 0
	case SandboxNetworkAllowlist:
		return 1
	case SandboxNetworkFull:
		return 2
	}
	return -1
}

// check reports a spec that is not valid on its own.
func (s SandboxSpec) check() *FieldError {
	if rank(s.network()) < 0 {
		return fieldErr("sandbox.network", "must be %q, %q or %q, got %q", SandboxNetworkNone, SandboxNetworkAllowlist, SandboxNetworkFull, s.Network)
	}
	if len(s.AllowHosts) > 0 && s.network() != SandboxNetworkAllowlist {
		return fieldErr("sandbox.allow_hosts", "needs sandbox.network %q, got %q", SandboxNetworkAllowlist, s.network())
	}
	for i, h := range s.AllowHosts {
		if err := allowlist.Check([]string{h}); err != nil {
			return fieldErr(fmt.Sprintf("sandbox.allow_hosts[%d]", i), "%q: want a host name, host:port or *.domain", h)
		}
	}
	return s.Limits.check()
}

// SandboxBound is an operator's upper bound on the sandboxes of tasks: the
// widest network a task may ask for and the hosts an allowlist may name.
// Network "" means "allowlist" when AllowHosts is set, else "none".
type SandboxBound struct {
	Network    string   `mapstructure:"sandbox_network"`
	AllowHosts []string `mapstructure:"sandbox_allow_hosts"`
}

// Widest is the bound's network with its default.
func (b SandboxBound) Widest() string {
	switch {
	case b.Network != "":
		return b.Network
	case len(b.AllowHosts) > 0:
		return SandboxNetworkAllowlist
	}
	return SandboxNetworkNone
}

// Validate names a bad key of the bound.
func (b SandboxBound) Validate() error {
	if rank(b.Widest()) < 0 {
		return fmt.Errorf("sandbox_network must be %q, %q or %q, got %q", SandboxNetworkNone, SandboxNetworkAllowlist, SandboxNetworkFull, b.Network)
	}
	if err := allowlist.Check(b.AllowHosts); err != nil {
		return fmt.Errorf("sandbox_%w", err)
	}
	return nil
}

// Permits reports, as a *FieldError naming the field, a spec that asks
// for more than b allows: a wider network, or an allowlist entry b does
// not cover (any entry is covered when b allows the full network).
func (b SandboxBound) Permits(s SandboxSpec) *FieldError {
	widest := b.Widest()
	if rank(s.network()) > rank(widest) {
		return fieldErr("sandbox.network", "%q is wider than the operator allows (sandbox_network: %s)", s.network(), widest)
	}
	if widest == SandboxNetworkFull {
		return nil
	}
	allow, _ := allowlist.Parse(b.AllowHosts)
	for i, h := range s.AllowHosts {
		if !allow.Covers(h) {
			return fieldErr(fmt.Sprintf("sandbox.allow_hosts[%d]", i), "%q is not among the hosts the operator allows (sandbox_allow_hosts: %s)",
				h, strings.Join(b.AllowHosts, ", "))
		}
	}
	return nil
}

// Validate reports, as a *FieldError, a sandbox spec that is not valid on
// its own (TaskSpec.Validate checks it too).
func (s SandboxSpec) Validate() error {
	if fe := s.check(); fe != nil {
		return fe
	}
	return nil
}
