package gctune

import (
	"testing"

	"github.com/agentfleet/agentfleet/internal/testenv"
)

type effects struct {
	percent int
	limit   int64
}

func run(env map[string]string, total int64) (Setting, effects) {
	var e effects
	s := apply(func(k string) string { return env[k] },
		func() int64 { return total },
		func(p int) int { e.percent = p; return 100 },
		func(l int64) int64 { e.limit = l; return 0 })
	return s, e
}

func TestDefaultSetsPercentAndLimit(t *testing.T) {
	s, e := run(nil, 8<<30)
	if e.percent != GCPercent || s.GCPercent != GCPercent {
		t.Fatalf("percent: set %d, reported %d, want %d", e.percent, s.GCPercent, GCPercent)
	}
	want := int64(float64(8<<30) * LimitFraction)
	if e.limit != want || s.MemoryLimit != want {
		t.Fatalf("limit: set %d, reported %d, want %d", e.limit, s.MemoryLimit, want)
	}
}

func TestOperatorGOGCWins(t *testing.T) {
	for _, v := range []string{"100", "off"} {
		s, e := run(map[string]string{"GOGC": v}, 8<<30)
		if e != (effects{}) || s != (Setting{}) {
			t.Fatalf("GOGC=%s: changed %+v, reported %+v; want nothing touched", v, e, s)
		}
	}
}

func TestOperatorGOMEMLIMITKept(t *testing.T) {
	s, e := run(map[string]string{"GOMEMLIMIT": "1GiB"}, 8<<30)
	if e.percent != GCPercent || e.limit != 0 || s.MemoryLimit != 0 {
		t.Fatalf("GOMEMLIMIT set: effects %+v, setting %+v; want the percent only", e, s)
	}
}

func TestUnknownMemorySetsNoLimit(t *testing.T) {
	_, e := run(nil, 0)
	if e.percent != GCPercent || e.limit != 0 {
		t.Fatalf("effects %+v, want percent %d and no limit", e, GCPercent)
	}
}

func TestMemoryLimitReadsThisMachine(t *testing.T) {
	if hostMemory() <= 0 {
		testenv.SkipOrFatal(t, "no /proc/meminfo on this system: the host's memory is unknown")
	}
	if n := memoryLimit(); n <= 0 || n > hostMemory() {
		t.Fatalf("memoryLimit() = %d, want in (0, host %d]", n, hostMemory())
	}
}
