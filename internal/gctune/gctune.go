package gctune

import (
	"bufio"
	"bytes"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// GCPercent is the collector's target when GOGC is not set.
const GCPercent = 400

// LimitFraction is the share of the cgroup's (or host's) memory used as
// the soft memory limit when GOMEMLIMIT is not set.
const LimitFraction = 0.75

// Setting is what Apply decided; zero fields mean "left as the runtime
// had it".
type Setting struct {
	GCPercent   int   // the percentage set, 0 when GOGC was set
	MemoryLimit int64 // the soft limit set in bytes, 0 when left alone
}

// Apply sets the collector's target as the package doc describes and
// returns what it set. Call it once, first thing in main.
func Apply() Setting {
	return apply(os.Getenv, memoryLimit, debug.SetGCPercent, debug.SetMemoryLimit)
}

// apply is Apply with its environment and effects passed in, for tests.
func apply(getenv func(string) string, limit func() int64, setPercent func(int) int, setLimit func(int64) int64) Setting {
	if isSet(getenv, "GOGC") {
		return Setting{}
	}
	s := Setting{GCPercent: GCPercent}
	setPercent(GCPercent)
	if !isSet(getenv, "GOMEMLIMIT") {
		if total := limit(); total > 0 {
			s.MemoryLimit = int64(float64(total) * LimitFraction)
			setLimit(s.MemoryLimit)
		}
	}
	return s
}

// isSet reports whether the environment variable key has a value.
func isSet(getenv func(string) string, key string) bool {
	return strings.TrimSpace(getenv(key)) != ""
}

// memoryLimit is the process's memory bound in bytes: the cgroup v2 or v1
// limit when there is one, else the host's total memory, else 0.
func memoryLimit() int64 {
	host := hostMemory()
	for _, path := range []string{
		"/sys/fs/cgroup/memory.max",                   // cgroup v2
		"/sys/fs/cgroup/memory/memory.limit_in_bytes", // cgroup v1
	} {
		if n := readLimit(path); n > 0 && (host == 0 || n < host) {
			return n
		}
	}
	return host
}

// readLimit reads a cgroup limit file; "max" or an unreadable file is 0.
func readLimit(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// hostMemory is MemTotal from /proc/meminfo in bytes, 0 when unknown
// (not Linux).
func hostMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}
