package sandbox

import (
	"errors"
	"fmt"
	"time"

	"github.com/agentfleet/agentfleet/internal/bytesize"
)

// Limits bound everything the commands of one environment start. A zero
// field sets no bound. How they are enforced depends on the host (see
// "Limits" in the package doc): a cgroup v2 child per environment where
// the worker has a delegated cgroup, else resource limits (setrlimit)
// set on bubblewrap before it starts.
type Limits struct {
	// Pids bounds the processes and threads running at once.
	Pids int
	// Memory bounds memory in bytes: the cgroup's memory.max, or each
	// process's data segment (RLIMIT_DATA) without a cgroup.
	Memory int64
	// CPUs bounds CPU bandwidth in CPUs (1.5: one and a half); a cgroup
	// only.
	CPUs float64
	// CPUTime bounds the CPU time of each process (RLIMIT_CPU: SIGXCPU,
	// then SIGKILL), whether or not there is a cgroup.
	CPUTime time.Duration
}

// Limit names, as the metric's label and LimitError say them.
const (
	LimitPids   = "pids"
	LimitMemory = "memory"
	LimitCPU    = "cpu"
)

// DefaultLimits are a worker's limits when its configuration sets none:
// 4096 processes and threads (a parallel build on a large machine runs
// thousands of threads), 4 GiB, 2 CPUs and an hour of CPU per process.
var DefaultLimits = Limits{Pids: 4096, Memory: 4 << 30, CPUs: 2, CPUTime: time.Hour}

// Validate names a negative field.
func (l Limits) Validate() error {
	var errs []error
	if l.Pids < 0 {
		errs = append(errs, fmt.Errorf("pids must be >= 0 (0: no bound), got %d", l.Pids))
	}
	if l.Memory < 0 {
		errs = append(errs, fmt.Errorf("memory must be >= 0 (0: no bound), got %d", l.Memory))
	}
	if l.CPUs < 0 {
		errs = append(errs, fmt.Errorf("cpus must be >= 0 (0: no bound), got %g", l.CPUs))
	}
	if l.CPUTime < 0 || l.CPUTime > 0 && l.CPUTime < time.Second {
		errs = append(errs, fmt.Errorf("cpu_time must be 0 (no bound) or at least 1s, got %s", l.CPUTime))
	}
	return errors.Join(errs...)
}

// Within returns l narrowed by spec: each field of spec that is set must
// be at most l's (a spec may only narrow the operator's limits) and
// replaces it. The error names the first field that is wider.
func (l Limits) Within(spec Limits) (Limits, error) {
	out := l
	if spec.Pids > 0 {
		if l.Pids > 0 && spec.Pids > l.Pids {
			return l, fmt.Errorf("sandbox.limits.pids %d is more than this worker allows (%d)", spec.Pids, l.Pids)
		}
		out.Pids = spec.Pids
	}
	if spec.Memory > 0 {
		if l.Memory > 0 && spec.Memory > l.Memory {
			return l, fmt.Errorf("sandbox.limits.memory %s is more than this worker allows (%s)", bytesize.Format(spec.Memory), bytesize.Format(l.Memory))
		}
		out.Memory = spec.Memory
	}
	if spec.CPUs > 0 {
		if l.CPUs > 0 && spec.CPUs > l.CPUs {
			return l, fmt.Errorf("sandbox.limits.cpus %g is more than this worker allows (%g)", spec.CPUs, l.CPUs)
		}
		out.CPUs = spec.CPUs
	}
	if spec.CPUTime > 0 {
		if l.CPUTime > 0 && spec.CPUTime > l.CPUTime {
			return l, fmt.Errorf("sandbox.limits.cpu_time %s is more than this worker allows (%s)", spec.CPUTime, l.CPUTime)
		}
		out.CPUTime = spec.CPUTime
	}
	return out, nil
}

// LimitHit is what a command that hit one of its environment's limits
// ends its output with, and what a HitRecorder learns.
type LimitHit struct {
	Limit string // LimitPids, LimitMemory or LimitCPU
	Value string // the bound, as configured ("512", "4GiB", "1h0m0s")
}

// Message is the line a command's output ends with.
func (h LimitHit) Message() string {
	what := map[string]string{LimitPids: "process limit", LimitMemory: "memory limit", LimitCPU: "CPU limit"}[h.Limit]
	return fmt.Sprintf("agentfleet: the command hit the task's %s (%s)", what, h.Value)
}
