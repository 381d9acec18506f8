package worker

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/internal/bytesize"
)

// SandboxIsolation is the part of Config that keeps tasks apart from
// the host and from each other (see fleet/internal/tasksandbox, "Users
// and limits", and docs/operations.md); its keys sit at the top level.
type SandboxIsolation struct {
	// SandboxUIDRange is "first-last", the uids a root worker gives its
	// task trees outside the sandbox (default "200000-265535"): uids no
	// account of the host has, and not in /etc/subuid. Ignored when the
	// worker is not root.
	SandboxUIDRange string `mapstructure:"sandbox_uid_range"`
	// SandboxLimits bound everything one task's commands start; a spec's
	// sandbox.limits may only narrow them.
	SandboxLimits SandboxLimitsConfig `mapstructure:"sandbox_limits"`
}

// SandboxLimitsConfig is sandbox_limits: a zero field means its default
// (sandbox.DefaultLimits: pids 4096, memory 4GiB, cpus 2, cpu_time 1h).
type SandboxLimitsConfig struct {
	// Pids bounds processes and threads at once.
	Pids int `mapstructure:"pids"`
	// Memory is a size such as "4GiB" (cgroup memory.max, or each
	// process's RLIMIT_DATA without a cgroup).
	Memory string `mapstructure:"memory"`
	// CPUs bounds CPU bandwidth (cgroup cpu.max; not enforced without
	// a delegated cgroup v2).
	CPUs float64 `mapstructure:"cpus"`
	// CPUTime bounds each process's CPU time (RLIMIT_CPU).
	CPUTime time.Duration `mapstructure:"cpu_time"`
}

// limits are c's limits with the defaults; the error names the key.
func (c SandboxLimitsConfig) limits() (sandbox.Limits, error) {
	mem, err := bytesize.Parse(c.Memory)
	if err != nil {
		return sandbox.Limits{}, fmt.Errorf("sandbox_limits.memory: %w", err)
	}
	d := sandbox.DefaultLimits
	l := sandbox.Limits{Pids: c.Pids, Memory: mem, CPUs: c.CPUs, CPUTime: c.CPUTime}
	setZero(&l.Pids, d.Pids)
	setZero(&l.Memory, d.Memory)
	setZero(&l.CPUs, d.CPUs)
	setZero(&l.CPUTime, d.CPUTime)
	return l, nil // tasksandbox.Operator.Validate checks the values
}

// validate names a bad key of the isolation settings that the sandbox
// operator's Validate does not see (the memory size as written).
func (s SandboxIsolation) validate() error {
	_, err := s.SandboxLimits.limits()
	return err
}

// newLimitHits is agentfleet_worker_sandbox_limit_hits_total: commands
// that hit a task's limit, by limit (pids, memory, cpu).
func newLimitHits(labels prometheus.Labels) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "agentfleet", Subsystem: "worker", Name: "sandbox_limit_hits_total",
		Help: "Commands of local tasks that failed at one of their sandbox's limits, by limit (pids, memory, cpu).", ConstLabels: labels},
		[]string{"limit"})
}
