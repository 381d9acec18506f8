package sandbox

import (
	"context"
	"strconv"
	"strings"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/internal/bytesize"
)

// Exec runs a command as execenv.Local does; one that failed because it
// hit one of the environment's limits ends its stderr with a line saying
// which (LimitHit.Message), and Settings.OnLimit learns of it.
func (l *Local) Exec(ctx context.Context, req execenv.ExecRequest) (execenv.ExecResult, error) {
	var before counters
	if l.cgroup != nil {
		before = l.cgroup.counters()
	}
	res, err := l.Local.Exec(ctx, req)
	if err != nil || res.ExitCode == 0 {
		return res, err
	}
	if hit, ok := l.limitHit(before, res); ok {
		if res.Stderr != "" && !strings.HasSuffix(res.Stderr, "\n") {
			res.Stderr += "\n"
		}
		res.Stderr += hit.Message() + "\n"
		if l.onLimit != nil {
			l.onLimit(hit)
		}
	}
	return res, nil
}

// limitHit tells which limit a failed command hit: from the cgroup's
// counters where there is one, else from what the command printed
// (fork's EAGAIN, an allocation that failed) or the signal that ended it
// (SIGXCPU). The second is a guess: a command that prints such a message
// after failing for another reason is said to have hit the limit too.
func (l *Local) limitHit(before counters, res execenv.ExecResult) (LimitHit, bool) {
	out := res.Stdout + res.Stderr
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(out, s) {
				return true
			}
		}
		return false
	}
	pids := LimitHit{LimitPids, strconv.Itoa(l.limits.Pids)}
	mem := LimitHit{LimitMemory, bytesize.Format(l.limits.Memory)}
	if l.cgroup != nil {
		after := l.cgroup.counters()
		switch {
		case after.pidsMax > before.pidsMax:
			return pids, true
		case after.oomKills > before.oomKills:
			return mem, true
		}
	} else {
		switch {
		case l.limits.Pids > 0 && has("Resource temporarily unavailable", "failed to create new OS thread"):
			return pids, true
		case l.limits.Memory > 0 && has("Cannot allocate memory", "memory exhausted", "out of memory", "std::bad_alloc", "MemoryError"):
			return mem, true
		}
	}
	if l.limits.CPUTime > 0 && (res.ExitCode == 128+sigXCPU || has("CPU time limit exceeded")) {
		return LimitHit{LimitCPU, l.limits.CPUTime.String()}, true
	}
	return LimitHit{}, false
}

// sigXCPU is SIGXCPU's number on Linux (and macOS), which bubblewrap's
// exit status adds to 128.
const sigXCPU = 24
