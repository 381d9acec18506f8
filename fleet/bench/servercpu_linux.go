package bench

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// clockTicks is the unit of the times in /proc/<pid>/stat: USER_HZ, which
// Linux fixes at 100 on every architecture for what it shows user space.
const clockTicks = 100

// ServerCPU returns the CPU time, in seconds, used so far by pid and its
// children: its own, that of every child it has waited for, and that of
// every child still running (with the children each has waited for). For
// a Postgres server pid is the postmaster's (the first line of
// postmaster.pid): its backends are its children and it waits for each
// one that exits, so a backend's CPU is counted whether it is still
// connected or not.
func ServerCPU(pid int) (float64, error) {
	for {
		before, err := readStat(pid)
		if err != nil {
			return 0, err
		}
		ticks := before.own + before.waited + childrenTicks(pid)
		after, err := readStat(pid)
		if err != nil {
			return 0, err
		}
		// A child waited for between the two reads of the parent may
		// have been in neither the children nor the first read: again.
		if after.waited == before.waited {
			return float64(ticks) / clockTicks, nil
		}
	}
}

// procTimes are a process's parent and CPU ticks: its own (user and
// system) and those of the children it has waited for.
type procTimes struct {
	parent uint64
	own    uint64
	waited uint64
}

// readStat reads /proc/<pid>/stat.
func readStat(pid int) (procTimes, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procTimes{}, err
	}
	t, err := parseStat(string(b))
	if err != nil {
		return procTimes{}, fmt.Errorf("bench: /proc/%d/stat: %w", pid, err)
	}
	return t, nil
}

// parseStat reads the parent and the times of a /proc/<pid>/stat line. The
// command name, in parentheses, may hold spaces and parentheses itself, so
// the fields are counted from the last ')': state(3) ppid(4) ... utime(14)
// stime(15) cutime(16) cstime(17).
func parseStat(line string) (procTimes, error) {
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return procTimes{}, errors.New("no command name")
	}
	f := strings.Fields(line[i+1:])
	if len(f) < 15 {
		return procTimes{}, fmt.Errorf("%d fields after the command name, want at least 15", len(f))
	}
	var v [5]uint64
	for k, field := range []int{1, 11, 12, 13, 14} {
		n, err := strconv.ParseUint(f[field], 10, 64)
		if err != nil {
			return procTimes{}, fmt.Errorf("field %d is %q, not a count", field+3, f[field])
		}
		v[k] = n
	}
	return procTimes{parent: v[0], own: v[1] + v[2], waited: v[3] + v[4]}, nil
}

// childrenTicks is the CPU ticks of pid's running children, each with
// the children it has waited for.
func childrenTicks(pid int) uint64 {
	entries, _ := os.ReadDir("/proc")
	var ticks uint64
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readStat(child)
		if err == nil && st.parent == uint64(pid) {
			ticks += st.own + st.waited
		}
	}
	return ticks
}
