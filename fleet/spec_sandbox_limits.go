package fleet

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentfleet/agentfleet/internal/bytesize"
)

// DefaultSandboxLimits are a worker's sandbox_limits when its
// configuration sets none (execenv/sandbox.DefaultLimits), and so the
// dispatcher's bound of a spec's sandbox.limits when its own
// sandbox_limits sets none: 4096 processes and threads, 4 GiB, 2 CPUs,
// an hour of CPU per process.
var DefaultSandboxLimits = SandboxLimits{Pids: 4096, Memory: "4GiB", CPUs: 2, CPUTime: "1h"}

// ValidateBound names a bad key of l as an operator's sandbox_limits.
func (l SandboxLimits) ValidateBound() error {
	if fe := l.check(); fe != nil {
		return fmt.Errorf("sandbox_limits.%s: %s", strings.TrimPrefix(fe.Field, "spec.sandbox.limits."), fe.Reason)
	}
	return nil
}

// WithDefaults is l with each zero field DefaultSandboxLimits'.
func (l SandboxLimits) WithDefaults() SandboxLimits {
	d := DefaultSandboxLimits
	if l.Pids == 0 {
		l.Pids = d.Pids
	}
	if l.Memory == "" {
		l.Memory = d.Memory
	}
	if l.CPUs == 0 {
		l.CPUs = d.CPUs
	}
	if l.CPUTime == "" {
		l.CPUTime = d.CPUTime
	}
	return l
}

// Permits reports, as a *FieldError naming spec.sandbox.limits.<field>, a
// spec's limit above bound's (an operator's sandbox_limits, which
// ValidateBound checked): a spec may only narrow the workers' limits. A
// field of either that is zero sets or asks no bound.
func (bound SandboxLimits) Permits(spec SandboxLimits) *FieldError {
	if spec.Pids > 0 && bound.Pids > 0 && spec.Pids > bound.Pids {
		return fieldErr("sandbox.limits.pids", "%d is above the operator's maximum of %d (sandbox_limits.pids)", spec.Pids, bound.Pids)
	}
	sm, _ := bytesize.Parse(spec.Memory)
	if bm, _ := bytesize.Parse(bound.Memory); sm > 0 && bm > 0 && sm > bm {
		return fieldErr("sandbox.limits.memory", "%s is above the operator's maximum of %s (sandbox_limits.memory)", spec.Memory, bound.Memory)
	}
	if spec.CPUs > 0 && bound.CPUs > 0 && spec.CPUs > bound.CPUs {
		return fieldErr("sandbox.limits.cpus", "%g is above the operator's maximum of %g (sandbox_limits.cpus)", spec.CPUs, bound.CPUs)
	}
	st, _ := time.ParseDuration(spec.CPUTime)
	if bt, _ := time.ParseDuration(bound.CPUTime); spec.CPUTime != "" && bound.CPUTime != "" && st > bt {
		return fieldErr("sandbox.limits.cpu_time", "%s is above the operator's maximum of %s (sandbox_limits.cpu_time)", spec.CPUTime, bound.CPUTime)
	}
	return nil
}
