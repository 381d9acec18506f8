package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/internal/testenv"
)

// The cgroup's events files are read by key.
func TestEventCount(t *testing.T) {
	file := filepath.Join(t.TempDir(), "memory.events")
	if err := os.WriteFile(file, []byte("low 0\nhigh 0\nmax 7\noom 2\noom_kill 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := eventCount(file, "oom_kill"); got != 1 {
		t.Errorf("oom_kill = %d, want 1", got)
	}
	if got := eventCount(file, "max"); got != 7 {
		t.Errorf("max = %d, want 7", got)
	}
	if got := eventCount(filepath.Join(t.TempDir(), "missing"), "max"); got != 0 {
		t.Errorf("a missing file counts %d", got)
	}
}

// Without a cgroup the limits are prlimit's; with one, only the CPU
// time is; a worker that is not root adds its user's processes.
func TestRlimitArgs(t *testing.T) {
	if _, err := prlimitPath(); err != nil {
		testenv.SkipOrFatal(t, err.Error())
	}
	l := Limits{Pids: 64, Memory: 256 << 20, CPUTime: time.Minute}
	args, err := rlimitArgs(l, false, true)
	want := "--nproc=64:64 --data=268435456:268435456 --cpu=60:60 --"
	if err != nil || strings.Join(args[1:], " ") != want {
		t.Fatalf("no cgroup: %q, %v; want prlimit %s", args, err, want)
	}
	if args, _ := rlimitArgs(l, true, true); strings.Join(args[1:], " ") != "--cpu=60:60 --" {
		t.Fatalf("with a cgroup: %q; want only the CPU time", args)
	}
	if args, _ := rlimitArgs(Limits{}, false, true); args != nil {
		t.Fatalf("no limits: %q; want no prlimit", args)
	}
	args, _ = rlimitArgs(Limits{Pids: 64}, false, false)
	if args[1] == "--nproc=64:64" || !strings.HasPrefix(args[1], "--nproc=") {
		t.Fatalf("not root: %q; want 64 more than this user's processes", args)
	}
}

// Where there is a delegated cgroup v2, a child gets the bounds.
func TestCgroupChild(t *testing.T) {
	p, err := delegated()
	if err != nil {
		// A machine property CI does not have either: see
		// TestLimitsUseACgroupWhereDelegated.
		t.Skipf("no delegated cgroup v2 here: %v", err)
	}
	c, err := p.child(Limits{Pids: 64, Memory: 256 << 20, CPUs: 1.5})
	if err != nil {
		t.Fatal(err)
	}
	defer c.remove()
	for file, want := range map[string]string{"pids.max": "64", "memory.max": "268435456"} {
		if got := readString(filepath.Join(c.dir, file)); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	if p.cpu && readString(filepath.Join(c.dir, "cpu.max")) != "150000 100000" {
		t.Errorf("cpu.max = %q", readString(filepath.Join(c.dir, "cpu.max")))
	}
}

// The filter assembles for both architectures the worker ships for,
// skipping the calls one of them lacks (arm64 has no iopl).
func TestSeccompForBothArchitectures(t *testing.T) {
	for _, a := range []string{"x86_64", "aarch64"} {
		prog, err := buildSeccomp(a)
		if err != nil || len(prog) == 0 || len(prog)%8 != 0 {
			t.Errorf("%s: %d bytes, %v", a, len(prog), err)
		}
	}
}
